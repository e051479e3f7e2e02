// SPDX-License-Identifier: Apache-2.0
// Static filters (xor and binary fuse, 8- and 16-bit): no false negatives, the false-positive rate 2^−f
// within statistical bounds at 1M and 10M keys, duplicates and empty sets, determinism, size, and the file
// format (round trips, corrupt and hostile files).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "blume/io/format.hpp"
#include "blume/kinds/xor_filter.hpp"
#include "test_support.hpp"

namespace {

using blume_test::absent_keys;
using blume_test::present_keys;

template <class F>
class StaticFilter : public ::testing::Test {};
/// The static kinds built from keys alone (the Golomb-coded set also takes its rate).
template <class F>
    struct built_from_keys : std::bool_constant < F::is_static&& requires(const std::vector<std::uint64_t>& k) {
  F::build(k);
} > {};
using static_types = blume_test::kinds_where<built_from_keys, blume::filter_types>::type;
TYPED_TEST_SUITE(StaticFilter, static_types);

/// |measured − 2^−f| within 5 standard deviations of a binomial with `probes` trials, plus one count.
template <class F>
void expect_rate_near_the_fingerprint_rate(const F& f, std::size_t probes) {
  const double p = std::ldexp(1.0, -static_cast<int>(F::fingerprint_bits));
  const double hits = static_cast<double>(f.count_contained(absent_keys(probes)));
  const double sigma = std::sqrt(static_cast<double>(probes) * p * (1 - p));
  EXPECT_NEAR(hits, static_cast<double>(probes) * p, 5 * sigma + 1) << blume::kind_name(F::kind);
  EXPECT_DOUBLE_EQ(f.predicted_fpr(), p);
}

TYPED_TEST(StaticFilter, NoFalseNegativesAndTheRateIsTwoToTheMinusFAtOneMillionKeys) {
  const auto keys = present_keys(blume_test::scaled(1'000'000));
  blume::build_stats stats;
  const TypeParam f = TypeParam::build(keys, TypeParam::hasher_type::default_seed, &stats);
  EXPECT_EQ(f.count_contained(keys), keys.size());
  for (std::size_t i = 0; i < keys.size(); i += 997) ASSERT_TRUE(f.contains(keys[i])) << i;
  EXPECT_EQ(f.inserted(), keys.size());
  EXPECT_EQ(stats.keys, keys.size());
  EXPECT_GE(stats.attempts, 1u);
  EXPECT_GT(stats.peak_bytes, keys.size() * 8);
  expect_rate_near_the_fingerprint_rate(f, blume_test::scaled(2'000'000));
}

TYPED_TEST(StaticFilter, SizeIsAboutTheDesignBitsPerKey) {
  const auto keys = present_keys(1'000'000);
  const TypeParam f = TypeParam::build(keys);
  const double factor = TypeParam::fuse ? 1.125 : 1.23;
  EXPECT_NEAR(f.bits_per_key(), factor * TypeParam::fingerprint_bits, 0.02 * TypeParam::fingerprint_bits);
  const blume::filter_plan plan = blume::plan_for(keys.size(), 0.5, TypeParam::kind);
  EXPECT_EQ(plan.bits, f.slot_count() * TypeParam::fingerprint_bits);
  EXPECT_EQ(plan.bytes, f.slot_count() * TypeParam::fingerprint_bits / 8);
}

TYPED_TEST(StaticFilter, DuplicatesAreDroppedAndStillFound) {
  auto keys = present_keys(50'000);
  const auto copy = keys;
  keys.insert(keys.end(), copy.begin(), copy.begin() + 20'000);
  blume::build_stats stats;
  const TypeParam f = TypeParam::build(keys, 7, &stats);
  EXPECT_EQ(stats.duplicates, 20'000u);
  EXPECT_EQ(f.inserted(), 50'000u);
  EXPECT_EQ(f.count_contained(copy), copy.size());
}

TYPED_TEST(StaticFilter, AnEmptySetAnswersNo) {
  const TypeParam f = TypeParam::build(std::vector<std::uint64_t>{});
  EXPECT_EQ(f.count_contained(absent_keys(100'000)), 0u);
  EXPECT_FALSE(f.contains(std::string_view("anything")));
  EXPECT_EQ(f.predicted_fpr(), 0.0);
  const TypeParam back = blume::from_bytes<TypeParam>(blume::to_bytes(f));
  EXPECT_FALSE(back.contains(std::string_view("anything")));
}

TYPED_TEST(StaticFilter, SmallSetsWork) {
  for (std::size_t n : {1u, 2u, 3u, 10u, 100u, 1000u}) {
    const auto keys = present_keys(n);
    const TypeParam f = TypeParam::build(keys, n);
    EXPECT_EQ(f.count_contained(keys), n) << n;
  }
}

TYPED_TEST(StaticFilter, ConstructionIsDeterministicForASeed) {
  const auto keys = present_keys(20'000);
  EXPECT_TRUE(TypeParam::build(keys, 5) == TypeParam::build(keys, 5));
  EXPECT_FALSE(TypeParam::build(keys, 5) == TypeParam::build(keys, 6));
}

TYPED_TEST(StaticFilter, BulkAndSingleLookupsAgree) {
  const auto keys = present_keys(30'000);
  const TypeParam f = TypeParam::build(keys);
  auto probes = absent_keys(30'000);
  probes.insert(probes.end(), keys.begin(), keys.end());
  std::vector<bool> answers;
  const std::size_t hits = f.contains_many(probes, std::back_inserter(answers));
  std::size_t expected = 0;
  for (std::size_t i = 0; i < probes.size(); ++i) {
    ASSERT_EQ(answers[i], f.contains(probes[i])) << i;
    expected += answers[i];
  }
  EXPECT_EQ(hits, expected);
}

TYPED_TEST(StaticFilter, FileRoundTripsAndMapping) {
  const auto keys = present_keys(40'000);
  const TypeParam f = TypeParam::build(keys);
  const auto bytes = blume::to_bytes(f);
  const TypeParam back = blume::from_bytes<TypeParam>(bytes);
  EXPECT_TRUE(back == f);
  EXPECT_EQ(back.count_contained(keys), keys.size());
  const blume_test::temp_dir dir;
  blume::save(f, dir / "f.blume");
  const TypeParam mapped = blume::map_file<TypeParam>(dir / "f.blume");
  EXPECT_EQ(mapped.count_contained(keys), keys.size());
}

TYPED_TEST(StaticFilter, CorruptAndTruncatedFilesAreRejected) {
  const auto bytes = blume::to_bytes(TypeParam::build(present_keys(5000)));
  for (std::size_t cut = 0; cut < bytes.size(); cut += 97) {
    EXPECT_THROW(blume::from_bytes<TypeParam>(std::span(bytes).first(cut)), blume::format_error) << cut;
  }
  for (std::size_t at = 0; at < blume::header_size; ++at) {
    auto bad = bytes;
    bad[at] ^= std::byte{0x10};
    EXPECT_THROW(blume::from_bytes<TypeParam>(bad), blume::format_error) << at;
  }
  auto bad = bytes;
  bad[blume::header_size + 3] ^= std::byte{1};
  EXPECT_THROW(blume::from_bytes<TypeParam>(bad), blume::format_error);  // payload checksum
}

TYPED_TEST(StaticFilter, HasNoMergeAndTakesNoInserts) {
  static_assert(!blume::can_merge<TypeParam> && !blume::takes_inserts<TypeParam>);
  EXPECT_TRUE(blume_test::mentions(std::string(TypeParam::merge_refusal), "static"));
}

TEST(StaticFilterAtTenMillion, FuseAndXorMeetTheirSizesAndRates) {
  // 1M keys in the slow builds: the size bounds also hold there (the fuse factor is 1.125 from 1M keys on)
  // and the rate's bound follows the probe count.
  const auto keys = present_keys(blume_test::scaled(10'000'000));
  const auto fuse = blume::fuse8_filter<>::build(keys);
  EXPECT_EQ(fuse.count_contained(keys), keys.size());
  EXPECT_LE(fuse.bits_per_key(), 9.1);
  expect_rate_near_the_fingerprint_rate(fuse, blume_test::scaled(4'000'000));
  const auto x = blume::xor8_filter<>::build(keys);
  EXPECT_EQ(x.count_contained(keys), keys.size());
  EXPECT_LE(x.bits_per_key(), 9.9);
  expect_rate_near_the_fingerprint_rate(x, blume_test::scaled(4'000'000));
}

TEST(StaticPlan, TheRateIsTheFingerprintsAndTargetsBelowItAreRefused) {
  const blume::filter_plan p = blume::plan_for(1'000'000, 0.01, blume::fuse8_filter<>::kind);
  EXPECT_DOUBLE_EQ(p.predicted_fpr, 1.0 / 256);
  EXPECT_EQ(p.hashes, 8u);
  EXPECT_TRUE(blume_test::mentions(blume_test::message_of<blume::invalid_argument>([] {
                                     blume::plan_for(1'000'000, 0.001, blume::fuse8_filter<>::kind);
                                   }),
                                   "fuse16"));
  EXPECT_DOUBLE_EQ(blume::plan_for(1'000'000, 0.001, blume::xor16_filter<>::kind).predicted_fpr, 1.0 / 65536);
}

TEST(StaticPlan, FuseSegmentsFollowGrafAndLemireUpToTheCacheFriendlyCap) {
  // Graf & Lemire's length below 2^15; capped at 2^15 while that leaves at most 4096 segments; longer
  // again beyond, up to their 2^18.
  EXPECT_EQ(blume::math::fuse_shape_for(1'000'000).segment_length, std::uint64_t{1} << 13);
  EXPECT_EQ(blume::math::fuse_shape_for(10'000'000).segment_length, std::uint64_t{1} << 15);
  const auto at_100m = blume::math::fuse_shape_for(100'000'000);
  EXPECT_EQ(at_100m.segment_length, std::uint64_t{1} << 15);
  EXPECT_LE(at_100m.segment_count, 4096u);
  EXPECT_GE(at_100m.slots(), 112'500'000u);
  EXPECT_EQ(blume::math::fuse_shape_for(1'000'000'000).segment_length, std::uint64_t{1} << 18);
  EXPECT_EQ(blume::math::fuse_shape_for(300'000'000).segment_length, std::uint64_t{1} << 17);
}

TEST(StaticFilterAtFiveMillion, TwoThreadConstructionDropsDuplicatesAndFindsEveryKey) {
  // Enough keys for the two-thread passes; the duplicates make the first attempt fail and be retried.
  // The slow builds take just enough distinct keys for the two threads (2^22), which the sanitizers must see.
  const std::uint64_t n = blume_test::slow_build ? (std::uint64_t{1} << 22) + 1000 : 5'000'000;
  auto keys = present_keys(n);
  keys.insert(keys.end(), keys.begin() + 1000, keys.begin() + 3000);
  blume::build_stats stats;
  const auto f = blume::fuse8_filter<>::build(keys, 11, &stats);
  EXPECT_EQ(stats.duplicates, 2000u);
  EXPECT_GE(stats.attempts, 2u);
  EXPECT_EQ(f.inserted(), n);
  EXPECT_EQ(f.count_contained(keys), keys.size());
  const auto again = blume::fuse8_filter<>::build(keys, 11);
  EXPECT_TRUE(again == f);  // deterministic for a seed, threads or not
}

}  // namespace
