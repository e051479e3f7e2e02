// SPDX-License-Identifier: Apache-2.0
// The d-left counting filter: no false negatives through any sequence of inserts and erases of inserted
// keys, growth that keeps every key and its fingerprint, its rate held to the fingerprint-range model at
// 1M keys, and the target: at most 0.6× the memory of counting_bloom_filter<4> at an equal or
// lower measured rate.
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <random>
#include <vector>

#include "forge.hpp"
#include "test_support.hpp"

namespace {

using blume::dleft_counting_filter;
using blume::dleft_geometry;
using blume_test::absent_key;
using blume_test::present_key;
using dleft = dleft_counting_filter<>;

dleft_geometry small(std::uint64_t buckets, std::uint32_t remainder_bits) {
  dleft_geometry g;
  g.buckets = buckets;
  g.remainder_bits = remainder_bits;
  return g;
}

TEST(DLeft, InsertsErasesAndCounts) {
  dleft f(1000, 0.01);
  EXPECT_FALSE(f.contains(std::string_view("k")));
  EXPECT_TRUE(f.insert(std::string_view("k")));
  EXPECT_TRUE(f.insert(std::string_view("k")));
  EXPECT_EQ(f.size(), 1u) << "a second insert raises the counter, it takes no second cell";
  EXPECT_EQ(f.count(std::string_view("k")), 2u);
  EXPECT_TRUE(f.erase(std::string_view("k")));
  EXPECT_TRUE(f.contains(std::string_view("k")));
  EXPECT_TRUE(f.erase(std::string_view("k")));
  EXPECT_FALSE(f.contains(std::string_view("k")));
  EXPECT_EQ(f.size(), 0u);
  EXPECT_FALSE(f.erase(std::string_view("k"))) << "a key no longer present is refused";
}

TEST(DLeft, ErasingANeverInsertedKeyIsRefusedAndChangesNothing) {
  dleft f(10'000, 0.001);
  for (int i = 0; i < 5000; ++i) f.insert(present_key(i));
  const dleft before = f;
  int refused = 0;
  for (int i = 0; i < 5000; ++i) refused += !f.erase(absent_key(i));
  // Only a false positive (rate ≈ 0.05% here) can be taken for a stored key.
  EXPECT_GE(refused, 4990);
  if (refused == 5000) {
    EXPECT_TRUE(f == before);
  }
}

// Random inserts and erases of inserted keys, with repeats, checked against a multiset: every key still
// inserted is found, and its count is at least its multiplicity (counters of 4 bits do not saturate here).
TEST(DLeft, RandomInsertsAndErasesNeverLoseAKey) {
  dleft f(20'000, 0.01);
  std::mt19937_64 rng(5);
  std::vector<int> times(30'000, 0);
  for (int step = 0; step < 200'000; ++step) {
    const std::size_t i = rng() % times.size();
    if (times[i] > 0 && rng() % 3 == 0) {
      ASSERT_TRUE(f.erase(present_key(i))) << "step " << step;
      --times[i];
    } else {
      ASSERT_TRUE(f.insert(present_key(i)));
      ++times[i];
    }
    if (step % 20'000 == 0 || step == 199'999)
      for (std::size_t j = 0; j < times.size(); ++j)
        if (times[j] > 0) {
          ASSERT_TRUE(f.contains(present_key(j))) << "key " << j << " at step " << step;
          ASSERT_GE(f.count(present_key(j)), static_cast<std::uint64_t>(std::min(times[j], 15)));
        }
  }
}

TEST(DLeft, CountersSaturateAndAreNeverLoweredAgain) {
  dleft f(small(16, 10));
  for (int i = 0; i < 20; ++i) f.insert(std::string_view("hot"));
  EXPECT_EQ(f.count(std::string_view("hot")), 15u);
  for (int i = 0; i < 40; ++i) EXPECT_TRUE(f.erase(std::string_view("hot")));
  EXPECT_TRUE(f.contains(std::string_view("hot"))) << "a saturated counter no longer knows its count";
}

TEST(DLeft, NewFingerprintsGoToTheLeastLoadedBucketLeftmostOnTies) {
  dleft f(small(64, 12));
  // The first key lands in subtable 0 (all four candidates empty: the leftmost).
  const blume::digest d = f.hash(std::string_view("first"));
  f.insert(d);
  const std::uint64_t h = f.fingerprint(d);
  EXPECT_EQ(f.bucket_load(0, h >> 12), 1u);
  // Many keys: subtables fill from the left, and no bucket is more than a few above the mean.
  dleft g(small(1024, 12));
  for (int i = 0; i < 4 * 1024 * 6; ++i) ASSERT_TRUE(g.insert(present_key(i)));
  std::uint64_t per_table[4] = {};
  std::uint32_t fullest = 0;
  for (std::uint32_t t = 0; t < 4; ++t)
    for (std::uint64_t b = 0; b < 1024; ++b) {
      per_table[t] += g.bucket_load(t, b);
      fullest = std::max(fullest, g.bucket_load(t, b));
    }
  EXPECT_GE(per_table[0], per_table[3]) << "ties go left";
  EXPECT_LE(fullest, 8u);
  EXPECT_EQ(g.geometry().buckets, 1024u) << "load 0.75 fits without growing";
}

TEST(DLeft, GrowthKeepsEveryKeyItsFingerprintAndItsCount) {
  dleft f(small(8, 12));  // 256 cells
  std::vector<blume::digest> digests;
  for (int i = 0; i < 2000; ++i) {
    digests.push_back(f.hash(present_key(i)));
    ASSERT_TRUE(f.insert(digests.back()));
    if (i % 7 == 0) f.insert(digests.back());
  }
  EXPECT_GE(f.geometry().buckets, 64u);
  EXPECT_EQ(f.geometry().buckets * (std::uint64_t{1} << f.geometry().remainder_bits), 8u << 12)
      << "growth keeps the fingerprint range";
  dleft fresh(small(8, 12));
  for (int i = 0; i < 2000; ++i) {
    EXPECT_TRUE(f.contains(digests[i]));
    EXPECT_EQ(f.fingerprint(digests[i]), fresh.fingerprint(digests[i]));
    EXPECT_GE(f.count(digests[i]), i % 7 == 0 ? 2u : 1u);
  }
}

TEST(DLeft, GrowthIsRefusedAtAOneBitRemainderAndInsertThenReportsFull) {
  dleft f(small(1, 2));  // 32 cells, range 4: at most 4 distinct fingerprints
  std::size_t stored = 0;
  for (int i = 0; i < 200; ++i) stored += f.insert(present_key(i));
  EXPECT_EQ(stored, 200u) << "four fingerprints, counted: every insert finds its own";
  EXPECT_FALSE(f.can_grow() && f.geometry().remainder_bits == 1);
  dleft g(small(1, 1));
  EXPECT_FALSE(g.grow());
}

TEST(DLeft, BulkCallsAgreeWithSingleCallsAcrossGrowth) {
  std::vector<std::uint64_t> keys;
  for (int i = 0; i < 20'000; ++i) keys.push_back(present_key(i));
  dleft one(small(16, 14)), bulk(small(16, 14));
  for (const auto& k : keys) one.insert(k);
  EXPECT_EQ(bulk.insert_many(keys), keys.size());
  EXPECT_TRUE(one == bulk);
  std::vector<std::uint64_t> probes;
  for (int i = 0; i < 5000; ++i) probes.push_back(i % 2 ? present_key(i) : absent_key(i));
  std::vector<bool> answers;
  const std::size_t hits = bulk.contains_many(probes, std::back_inserter(answers));
  EXPECT_EQ(hits, bulk.count_contained(probes));
  for (std::size_t i = 0; i < probes.size(); ++i) EXPECT_EQ(answers[i], one.contains(probes[i]));
}

TEST(DLeft, MergeAddsCountsAndAcceptsAGrownPartner) {
  dleft a(small(64, 12)), b(small(64, 12));
  for (int i = 0; i < 1000; ++i) a.insert(present_key(i));
  for (int i = 500; i < 4000; ++i) b.insert(present_key(i));  // b grows
  ASSERT_GT(b.geometry().buckets, 64u);
  a.merge(b);
  for (int i = 0; i < 4000; ++i) ASSERT_TRUE(a.contains(present_key(i)));
  EXPECT_GE(a.count(present_key(700)), 2u);
  dleft other_seed(small(64, 12), 99);
  EXPECT_THROW(a.merge(other_seed), blume::incompatible_filters);
  dleft other_range(small(64, 11));
  EXPECT_THROW(a.merge(other_range), blume::incompatible_filters);
}

TEST(DLeft, IntersectKeepsTheCommonKeysWithTheSmallerCount) {
  dleft a(small(256, 12)), b(small(256, 12));
  for (int i = 0; i < 3000; ++i) a.insert(present_key(i));
  for (int i = 2000; i < 5000; ++i) b.insert(present_key(i));
  a.insert(present_key(2500));
  a.intersect(b);
  for (int i = 2000; i < 3000; ++i) ASSERT_TRUE(a.contains(present_key(i)));
  int kept = 0;
  for (int i = 0; i < 2000; ++i) kept += a.contains(present_key(i));
  EXPECT_LE(kept, 20) << "keys of one side only survive only as false positives of the other";
  EXPECT_EQ(a.count(present_key(2500)), 1u);
}

TEST(DLeft, BadGeometryIsRefusedBeforeAllocating) {
  EXPECT_THROW(dleft(small(0, 12)), blume::invalid_argument);
  EXPECT_THROW(dleft(small(16, 0)), blume::invalid_argument);
  EXPECT_THROW(dleft(small(16, 29)), blume::invalid_argument);
  EXPECT_THROW(dleft(small(std::uint64_t{1} << 40, 12)), blume::invalid_argument);
  EXPECT_THROW(dleft(10, 0.0), blume::invalid_argument);
  EXPECT_THROW(dleft(10, 1.0), blume::invalid_argument);
}

TEST(DLeftFormat, RoundTripsThroughBytes) {
  dleft f(5000, 0.01);
  for (int i = 0; i < 5000; ++i) f.insert(present_key(i));
  const auto bytes = blume::to_bytes(f);
  const auto g = blume::from_bytes<dleft>(bytes);
  EXPECT_TRUE(f == g);
  EXPECT_TRUE(g.contains(present_key(17)));
}

// Hostile payloads with valid checksums: each damage that could make a lookup miss a stored key, or the
// count of stored cells lie, is refused with format_error naming it.
TEST(DLeftFormat, DamagedTablesAreRefused) {
  dleft f(small(4, 12));
  f.insert(std::string_view("a"));
  f.insert(std::string_view("b"));
  const auto good = blume::to_bytes(f);
  auto forged = [&](auto damage) {
    auto bytes = good;
    damage(std::span<std::byte>(bytes).subspan(blume::header_size));
    blume_test::fix_checksums(bytes);
    return blume_test::message_of<blume::format_error>([&] { (void)blume::from_bytes<dleft>(bytes); });
  };
  // The cell of "a" sits first in its bucket; find a bucket with exactly one occupied cell to work on.
  std::size_t one = 0;
  for (std::uint32_t t = 0; t < 4; ++t)
    for (std::uint64_t b = 0; b < 4; ++b)
      if (f.bucket_load(t, b) == 1) one = (t * 4 + b) * 16;
  EXPECT_TRUE(blume_test::mentions(forged([&](std::span<std::byte> p) {
                                     p[one + 4] = std::byte{0x11};  // cell 2 occupied after the empty cell 1
                                   }),
                                   "after an empty cell"));
  EXPECT_TRUE(blume_test::mentions(forged([&](std::span<std::byte> p) { p[one] &= std::byte{0xf0}; }), "zero count"));
  EXPECT_TRUE(blume_test::mentions(forged([&](std::span<std::byte> p) { p[p.size() - 3] = std::byte{1}; }),
                                   "8 bytes after the buckets"));
  auto wrong_count = good;
  blume::detail::write_le<std::uint64_t>(wrong_count.data() + blume::detail::off_inserted, 3);
  blume_test::fix_checksums(wrong_count);
  EXPECT_TRUE(blume_test::mentions(blume_test::message_of<blume::format_error>([&] {
                                     (void)blume::from_bytes<dleft>(wrong_count);
                                   }),
                                   "counts 3 stored"));
  auto huge = good;
  blume::detail::write_le<std::uint64_t>(huge.data() + blume::detail::off_bits, std::uint64_t{1} << 40);
  blume_test::fix_checksums(huge);
  EXPECT_THROW((void)blume::from_bytes<dleft>(huge), blume::format_error) << "refused before allocating";
}

// The model: an absent key is a false positive when its fingerprint is among the n stored,
// 1 − (1 − 1/(B·2^r))^n, held to measurement at 1M keys for two remainder widths.
void rate_matches_model(std::uint32_t remainder_bits) {
  constexpr std::uint64_t n = blume_test::scaled(1'000'000);
  dleft_geometry g;
  g.remainder_bits = remainder_bits;
  g.buckets = n / (4 * 8 * 3 / 4) + 1;
  dleft f(g);
  for (std::uint64_t i = 0; i < n; ++i) ASSERT_TRUE(f.insert(present_key(i)));
  ASSERT_EQ(f.geometry().buckets, g.buckets) << "no growth at the design load";
  constexpr std::uint64_t trials = blume_test::scaled(2'000'000);
  std::uint64_t hits = 0;
  for (std::uint64_t i = 0; i < trials; ++i) hits += f.contains(absent_key(i));
  EXPECT_TRUE(blume_test::within_binomial_999(static_cast<double>(hits), trials, f.predicted_fpr()));
}
TEST(DLeftRate, MeasuredRateMatchesTheModelAtOneMillionKeysWithEightBitRemainders) { rate_matches_model(8); }
TEST(DLeftRate, MeasuredRateMatchesTheModelAtOneMillionKeysWithTwelveBitRemainders) { rate_matches_model(12); }

// The target at 1%: memory at most 0.6× the counting filter's, and a measured rate no higher.
TEST(DLeftRate, HalfTheCountingFiltersMemoryAtALowerRate) {
  constexpr std::uint64_t n = blume_test::scaled(1'000'000);
  dleft d(n, 0.01);
  blume::counting_bloom_filter<4> c(n, 0.01);
  for (std::uint64_t i = 0; i < n; ++i) {
    d.insert(present_key(i));
    c.insert(present_key(i));
  }
  EXPECT_LE(static_cast<double>(d.storage().size()), 0.6 * static_cast<double>(c.size_in_bytes()));
  constexpr std::uint64_t trials = blume_test::scaled(1'000'000);
  std::uint64_t dh = 0, ch = 0;
  for (std::uint64_t i = 0; i < trials; ++i) {
    dh += d.contains(absent_key(i));
    ch += c.contains(absent_key(i));
  }
  EXPECT_LE(dh, ch);
  EXPECT_TRUE(blume_test::within_binomial_999(static_cast<double>(dh), trials, d.predicted_fpr()));
}

TEST(DLeftPlan, PlansTheDesignLoadAndTheFewestBitsThatReachTheRate) {
  const blume::filter_plan p = dleft::plan(10'000'000, 0.01);
  EXPECT_EQ(p.hashes, 12u) << "24/2^12 = 0.59% at load 0.75; 11 bits would need a lower load and more memory";
  EXPECT_NEAR(p.bits_per_key(), 21.33, 0.01);
  EXPECT_LE(p.predicted_fpr, 0.01);
  const blume::filter_plan budget = dleft::plan_for_bits(10'000'000, p.bits);
  EXPECT_EQ(budget.bits, p.bits);
  EXPECT_EQ(budget.hashes, p.hashes);
  EXPECT_THROW(dleft::plan_for_bits(10'000'000, 1000), blume::invalid_argument);
}

}  // namespace
