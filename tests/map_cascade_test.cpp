// The Bloomier filter (a static key → value map) and the filter cascade (exact on a finite universe).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "blume/bloomier_filter.hpp"
#include "blume/cascade_filter.hpp"
#include "test_support.hpp"

namespace {

using blume_test::absent_keys;
using blume_test::mentions;
using blume_test::message_of;
using blume_test::present_keys;

TEST(BloomierFilter, EveryStoredKeyGetsItsValue) {
  for (std::uint32_t bits : {1u, 7u, 16u, 32u}) {
    const auto keys = present_keys(200'000);
    std::vector<std::uint64_t> values(keys.size());
    for (std::size_t i = 0; i < keys.size(); ++i) values[i] = (keys[i] * 0x9e3779b97f4a7c15ULL) >> (64 - bits);
    const auto map = blume::bloomier_filter<>::build(keys, values, bits);
    for (std::size_t i = 0; i < keys.size(); ++i) {
      const auto v = map.find(keys[i]);
      ASSERT_TRUE(v.has_value()) << i;
      ASSERT_EQ(*v, values[i]) << i;
    }
    EXPECT_EQ(map.inserted(), keys.size());
    EXPECT_NEAR(map.bits_per_key(), 1.125 * (bits + 8), 0.05 * (bits + 8));
  }
}

TEST(BloomierFilter, AbsentKeysAreAbsentExceptAtTheCheckRate) {
  const auto keys = present_keys(300'000);
  const std::vector<std::uint64_t> values(keys.size(), 5);
  for (std::uint32_t check : {8u, 12u}) {
    const auto map = blume::bloomier_filter<>::build(keys, values, 4, check);
    const auto probes = absent_keys(1'000'000);
    double hits = 0;
    for (const auto k : probes) hits += map.contains(k);
    const double p = std::ldexp(1.0, -static_cast<int>(check));
    EXPECT_NEAR(hits, probes.size() * p, 5 * std::sqrt(probes.size() * p) + 1) << check;
    EXPECT_DOUBLE_EQ(map.predicted_fpr(), p);
  }
}

TEST(BloomierFilter, DuplicatesAreMergedOrRefusedNamingTheKeys) {
  const std::vector<std::uint64_t> keys = {1, 2, 3, 2};
  const auto map = blume::bloomier_filter<>::build(keys, std::vector<std::uint64_t>{10, 20, 30, 20}, 8);
  EXPECT_EQ(map.inserted(), 3u);
  EXPECT_EQ(*map.find(std::uint64_t{2}), 20u);
  const std::string message = message_of<blume::invalid_argument>(
      [&] { blume::bloomier_filter<>::build(keys, std::vector<std::uint64_t>{10, 20, 30, 21}, 8); });
  EXPECT_TRUE(mentions(message, "1") && mentions(message, "3")) << message;
}

TEST(BloomierFilter, ValuesWiderThanDeclaredAreRefusedNamingTheKeysIndex) {
  const std::vector<std::uint64_t> keys = {1, 2, 3};
  const std::string message = message_of<blume::invalid_argument>(
      [&] { blume::bloomier_filter<>::build(keys, std::vector<std::uint64_t>{1, 300, 2}, 8); });
  EXPECT_TRUE(mentions(message, "key 1")) << message;
  EXPECT_THROW(blume::bloomier_filter<>::build(keys, std::vector<std::uint64_t>{1, 2}, 8), blume::invalid_argument);
  EXPECT_THROW(blume::bloomier_filter<>::build(keys, std::vector<std::uint64_t>{1, 2, 3}, 0), blume::invalid_argument);
  EXPECT_THROW(blume::bloomier_filter<>::build(keys, std::vector<std::uint64_t>{1, 2, 3}, 33), blume::invalid_argument);
}

TEST(BloomierFilter, AnEmptyMapFindsNothing) {
  const auto map = blume::bloomier_filter<>::build(std::vector<std::uint64_t>{}, std::vector<std::uint64_t>{}, 8);
  EXPECT_FALSE(map.find(std::uint64_t{1}).has_value());
}

TEST(CascadeFilter, IsExactOnTheWholeUniverse) {
  for (auto [nr, ns] : {std::pair<std::size_t, std::size_t>{10'000, 1'000'000}, {200'000, 200'000}, {50'000, 0},
                        {0, 5'000}}) {
    const auto r = present_keys(nr);
    const auto s = absent_keys(ns);
    const auto c = blume::cascade_filter::build(r, s);
    for (const auto k : r) ASSERT_TRUE(c.contains(k)) << nr << " " << ns;
    for (const auto k : s) ASSERT_FALSE(c.contains(k)) << nr << " " << ns;
    EXPECT_EQ(c.included(), nr);
    EXPECT_EQ(c.excluded(), ns);
    if (nr != 0) {
      EXPECT_GE(c.level_count(), 1u);
      EXPECT_LT(c.level_count(), 40u);
      EXPECT_GT(c.bits_per_included_key(), 1.0);
    }
  }
}

TEST(CascadeFilter, RevokedCertificatesAmongManyValidOnes) {
  // CRLite's shape: few included (revoked) among many excluded (valid); about log2 of the ratio bits per
  // revoked key plus a constant.
  const auto revoked = present_keys(20'000);
  const auto valid = absent_keys(2'000'000);
  const auto c = blume::cascade_filter::build(revoked, valid);
  EXPECT_LT(c.bits_per_included_key(), 1.44 * std::log2(2'000'000.0 / 20'000 * std::sqrt(2.0)) + 6);
  for (const auto k : revoked) ASSERT_TRUE(c.contains(k));
  std::size_t wrong = 0;
  for (const auto k : valid) wrong += c.contains(k);
  EXPECT_EQ(wrong, 0u);
}

TEST(CascadeFilter, AKeyInBothSetsIsRefusedNamingItsIndex) {
  const std::vector<std::uint64_t> r = {1, 2, 3};
  const std::vector<std::uint64_t> s = {7, 8, 2, 9};
  const std::string message = message_of<blume::invalid_argument>([&] { blume::cascade_filter::build(r, s); });
  EXPECT_TRUE(mentions(message, "excluded key 2")) << message;
}

TEST(CascadeFilter, DuplicatesWithinASetAreFine) {
  const std::vector<std::uint64_t> r = {1, 1, 2};
  const std::vector<std::uint64_t> s = {5, 5, 6};
  const auto c = blume::cascade_filter::build(r, s);
  EXPECT_TRUE(c.contains(std::uint64_t{1}) && c.contains(std::uint64_t{2}));
  EXPECT_FALSE(c.contains(std::uint64_t{5}) || c.contains(std::uint64_t{6}));
}

}  // namespace
