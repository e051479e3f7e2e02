// SPDX-License-Identifier: Apache-2.0
// The Bloomier filter (a static key → value map) and the filter cascade (exact on a finite universe).
#include <gtest/gtest.h>

#include <xxhash.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <vector>

#include "blume/io/format.hpp"
#include "blume/kinds/bloomier_filter.hpp"
#include "blume/kinds/cascade_filter.hpp"
#include "test_support.hpp"

namespace {

using blume_test::absent_keys;
using blume_test::mentions;
using blume_test::message_of;
using blume_test::present_keys;

/// A forger's edit: change the header and payload, then make both checksums agree again, so only the
/// readers' validation of the parameters stands between the bytes and the filter.
void forge(std::vector<std::byte>& bytes, const std::function<void(blume::file_header&, std::byte*)>& edit) {
  blume::file_header h = blume::decode_header(bytes);
  edit(h, bytes.data() + blume::header_size);
  h.payload_checksum = XXH64(bytes.data() + blume::header_size, bytes.size() - blume::header_size, 0);
  const auto header = blume::encode_header(h);
  std::copy(header.begin(), header.end(), bytes.begin());
}

std::uint64_t u64_at(const std::byte* p) {
  std::uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}
void put_u64(std::byte* p, std::uint64_t v) { std::memcpy(p, &v, 8); }

blume::bloomier_filter<> small_map(std::uint64_t count, std::uint32_t bits) {
  const auto keys = present_keys(count);
  std::vector<std::uint64_t> values(keys.size());
  for (std::size_t i = 0; i < keys.size(); ++i) values[i] = (i * 2654435761u) & ((std::uint64_t{1} << bits) - 1);
  return blume::bloomier_filter<>::build(keys, values, bits);
}

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
  const auto keys = present_keys(blume_test::scaled(300'000));
  const std::vector<std::uint64_t> values(keys.size(), 5);
  for (std::uint32_t check : {8u, 12u}) {
    const auto map = blume::bloomier_filter<>::build(keys, values, 4, check);
    const auto probes = absent_keys(blume_test::scaled(1'000'000));
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
  const std::string message = message_of<blume::invalid_argument>([&] {
    blume::bloomier_filter<>::build(keys, std::vector<std::uint64_t>{10, 20, 30, 21}, 8);
  });
  EXPECT_TRUE(mentions(message, "1") && mentions(message, "3")) << message;
}

TEST(BloomierFilter, ValuesWiderThanDeclaredAreRefusedNamingTheKeysIndex) {
  const std::vector<std::uint64_t> keys = {1, 2, 3};
  const std::string message = message_of<blume::invalid_argument>([&] {
    blume::bloomier_filter<>::build(keys, std::vector<std::uint64_t>{1, 300, 2}, 8);
  });
  EXPECT_TRUE(mentions(message, "key 1")) << message;
  EXPECT_THROW(blume::bloomier_filter<>::build(keys, std::vector<std::uint64_t>{1, 2}, 8), blume::invalid_argument);
  EXPECT_THROW(blume::bloomier_filter<>::build(keys, std::vector<std::uint64_t>{1, 2, 3}, 0), blume::invalid_argument);
  EXPECT_THROW(blume::bloomier_filter<>::build(keys, std::vector<std::uint64_t>{1, 2, 3}, 33), blume::invalid_argument);
}

TEST(BloomierFilter, AnEmptyMapFindsNothing) {
  const auto map = blume::bloomier_filter<>::build(std::vector<std::uint64_t>{}, std::vector<std::uint64_t>{}, 8);
  EXPECT_FALSE(map.find(std::uint64_t{1}).has_value());
  const auto back = blume::from_bytes<blume::bloomier_filter<>>(blume::to_bytes(map));
  EXPECT_TRUE(back == map);
  EXPECT_FALSE(back.find(std::uint64_t{1}).has_value());
}

TEST(CascadeFilter, IsExactOnTheWholeUniverse) {
  for (auto [full_nr, full_ns] :
       {std::pair<std::size_t, std::size_t>{10'000, 1'000'000}, {200'000, 200'000}, {50'000, 0}, {0, 5'000}}) {
    const std::size_t nr = blume_test::scaled(full_nr), ns = blume_test::scaled(full_ns);
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
  const auto revoked = present_keys(blume_test::scaled(20'000));
  const auto valid = absent_keys(blume_test::scaled(2'000'000));  // the same ratio in the slow builds
  const auto c = blume::cascade_filter::build(revoked, valid);
  EXPECT_LT(c.bits_per_included_key(),
            1.44 * std::log2(static_cast<double>(valid.size()) / static_cast<double>(revoked.size()) * std::sqrt(2.0)) +
                6);
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

// ---- files ----------------------------------------------------------------------------------------------

TEST(BloomierFilter, FileRoundTripsAndMappingKeepEveryValue) {
  const auto keys = present_keys(30'000);
  const auto map = small_map(30'000, 11);
  const auto bytes = blume::to_bytes(map);
  const auto back = blume::from_bytes<blume::bloomier_filter<>>(bytes);
  EXPECT_TRUE(back == map);
  const blume_test::temp_dir dir;
  blume::save(map, dir / "m.blume");
  const auto mapped = blume::map_file<blume::bloomier_filter<>>(dir / "m.blume");
  for (std::size_t i = 0; i < keys.size(); ++i) ASSERT_EQ(mapped.find(keys[i]), map.find(keys[i])) << i;
  EXPECT_EQ(blume::decode_header(bytes).kind, blume::bloomier_filter<>::kind);
  EXPECT_THROW(blume::from_bytes<blume::cascade_filter>(bytes), blume::format_error);  // a map is not a cascade
}

TEST(BloomierFilter, TruncatedCorruptAndForgedFilesAreRejected) {
  const auto bytes = blume::to_bytes(small_map(3000, 8));
  for (std::size_t cut = 0; cut < bytes.size(); cut += 61)
    EXPECT_THROW(blume::from_bytes<blume::bloomier_filter<>>(std::span(bytes).first(cut)), blume::format_error) << cut;
  auto flipped = bytes;
  flipped[blume::header_size + 5] ^= std::byte{4};
  EXPECT_THROW(blume::from_bytes<blume::bloomier_filter<>>(flipped), blume::format_error);

  const std::vector<std::function<void(blume::file_header&, std::byte*)>> forgeries = {
      [](blume::file_header& h, std::byte*) { h.layout = 33; },                           // value bits
      [](blume::file_header& h, std::byte*) { h.secondary = 0; },                         // check bits
      [](blume::file_header& h, std::byte*) { h.extra[1] = 3; },                          // segment length
      [](blume::file_header& h, std::byte*) { h.extra[2] = 1ull << 50; },                 // segment count
      [](blume::file_header& h, std::byte*) { h.primary += 8; },                          // slots disagree
      [](blume::file_header& h, std::byte*) { h.inserted = 1ull << 40; },                 // more keys than slots
      [](blume::file_header& h, std::byte*) { h.extra[4] = 1; },                          // reserved
      [](blume::file_header& h, std::byte* p) { p[h.payload_size - 1] = std::byte{1}; },  // padding bit
  };
  for (std::size_t i = 0; i < forgeries.size(); ++i) {
    auto bad = bytes;
    forge(bad, forgeries[i]);
    EXPECT_THROW(blume::from_bytes<blume::bloomier_filter<>>(bad), blume::format_error) << i;
  }
}

TEST(CascadeFilter, FileRoundTripsAndMappingStayExact) {
  const auto r = present_keys(5'000);
  const auto s = absent_keys(200'000);
  const auto c = blume::cascade_filter::build(r, s, 77);
  const auto bytes = blume::to_bytes(c);
  const auto back = blume::from_bytes<blume::cascade_filter>(bytes);
  EXPECT_TRUE(back == c);
  EXPECT_EQ(back.level_count(), c.level_count());
  EXPECT_EQ(back.included(), 5'000u);
  EXPECT_EQ(back.excluded(), 200'000u);
  const blume_test::temp_dir dir;
  blume::save(c, dir / "c.blume");
  const auto mapped = blume::map_file<blume::cascade_filter>(dir / "c.blume");
  for (const auto k : r) ASSERT_TRUE(mapped.contains(k));
  for (const auto k : s) ASSERT_FALSE(mapped.contains(k));
}

TEST(CascadeFilter, AnEmptyCascadeRoundTripsAndAnswersNo) {
  const auto c = blume::cascade_filter::build(std::vector<std::uint64_t>{}, absent_keys(10));
  EXPECT_EQ(c.level_count(), 0u);
  const auto back = blume::from_bytes<blume::cascade_filter>(blume::to_bytes(c));
  EXPECT_FALSE(back.contains(absent_keys(1)[0]));
}

TEST(CascadeFilter, TruncatedCorruptAndForgedFilesAreRejected) {
  const auto c = blume::cascade_filter::build(present_keys(2'000), absent_keys(20'000));
  ASSERT_GE(c.level_count(), 2u);
  const auto bytes = blume::to_bytes(c);
  for (std::size_t cut = 0; cut < bytes.size(); cut += 53)
    EXPECT_THROW(blume::from_bytes<blume::cascade_filter>(std::span(bytes).first(cut)), blume::format_error) << cut;

  const std::byte* table = bytes.data() + blume::header_size;
  const std::uint64_t level0_bits = u64_at(table);
  const std::vector<std::function<void(blume::file_header&, std::byte*)>> forgeries = {
      [](blume::file_header& h, std::byte*) { h.secondary = 65; },  // too many levels
      [](blume::file_header& h, std::byte*) { h.primary += 1; },    // not whole words
      [](blume::file_header& h, std::byte*) { h.layout = 1; },
      [](blume::file_header& h, std::byte*) { h.extra[3] = 9; },                 // reserved
      [](blume::file_header&, std::byte* p) { put_u64(p, 0); },                  // a level of no bits
      [](blume::file_header&, std::byte* p) { put_u64(p + 8, 65); },             // too many hashes
      [=](blume::file_header&, std::byte* p) { put_u64(p, level0_bits + 64); },  // levels disagree with header
      [=](blume::file_header&, std::byte* p) {                                   // hostile size, no allocation
        put_u64(p, std::uint64_t{1} << 40);
      },
  };
  for (std::size_t i = 0; i < forgeries.size(); ++i) {
    auto bad = bytes;
    forge(bad, forgeries[i]);
    EXPECT_THROW(blume::from_bytes<blume::cascade_filter>(bad), blume::format_error) << i;
  }
}

// ---- planning ------------------------------------------------------------------------------------------

TEST(BloomierPlan, IsTheBuiltMapsSizeAndRate) {
  const auto keys = present_keys(100'000);
  std::vector<std::uint32_t> values(keys.size());
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<std::uint32_t>(i % 1024);
  const blume::filter_plan plan = blume::plan_bloomier(keys.size(), 0.004, 10);
  EXPECT_EQ(plan.hashes, 8u) << "⌈log2(1/0.004)⌉ check bits";
  EXPECT_EQ(plan.predicted_fpr, std::ldexp(1.0, -8));
  const auto map = blume::bloomier_filter<>::build(keys, values, 10, plan.hashes);
  EXPECT_EQ(map.parameters().primary, plan.bits);
  // 1.125 to 1.25 slots per key of f + v bits (the binary fuse layout needs more at small n).
  EXPECT_GT(plan.bits_per_key(), 18 * 1.125);
  EXPECT_LT(plan.bits_per_key(), 18 * 1.25);
  EXPECT_TRUE(mentions(message_of<blume::invalid_argument>([] {
                         blume::plan_for(1000, 0.01, blume::bloomier_filter<>::kind);
                       }),
                       "plan_bloomier"));
  EXPECT_THROW(blume::plan_bloomier(1000, 0.01, 0), blume::invalid_argument);
  EXPECT_THROW(blume::plan_bloomier(1000, 0.01, 33), blume::invalid_argument);
  EXPECT_THROW(blume::plan_bloomier(1000, 1.5, 8), blume::invalid_argument);
}

TEST(CascadePlan, PredictsTheBuiltCascadesSize) {
  for (const auto& [r, s] : {std::pair{10'000u, 100'000u}, std::pair{50'000u, 50'000u}, std::pair{1'000u, 300'000u}}) {
    SCOPED_TRACE(std::to_string(r) + " included, " + std::to_string(s) + " excluded");
    const auto included = present_keys(r);
    const auto excluded = absent_keys(s);
    const blume::cascade_filter c = blume::cascade_filter::build(included, excluded);
    const blume::filter_plan plan = blume::plan_cascade(r, s);
    EXPECT_EQ(plan.predicted_fpr, 0.0) << "exact on the universe";
    EXPECT_NEAR(static_cast<double>(plan.bits), static_cast<double>(c.parameters().primary),
                0.1 * static_cast<double>(c.parameters().primary));
    // The deepest levels hold a handful of keys each, so their number follows the real false positives.
    EXPECT_NEAR(static_cast<double>(plan.hashes), static_cast<double>(c.level_count()),
                std::max(3.0, 0.2 * static_cast<double>(c.level_count())))
        << "levels";
    EXPECT_NEAR(static_cast<double>(plan.bytes), static_cast<double>(blume::to_bytes(c).size() - blume::header_size),
                0.1 * static_cast<double>(plan.bytes));
  }
  EXPECT_EQ(blume::plan_cascade(1000, 0).hashes, 1u) << "nothing to exclude: one level";
  EXPECT_TRUE(mentions(message_of<blume::invalid_argument>([] {
                         blume::plan_for(1000, 0.01, blume::cascade_filter::kind);
                       }),
                       "plan_cascade"));
  EXPECT_THROW(blume::plan_cascade(0, 10), blume::invalid_argument);
}

}  // namespace
