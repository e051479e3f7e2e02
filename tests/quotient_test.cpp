// SPDX-License-Identifier: Apache-2.0
// The quotient filter: membership, multiset insert and erase against a model, runs pushed into the overflow
// blocks, long runs past saturated offsets, resize, merge, the false-positive rate, the full filter, planning,
// and the file format's checks (the rank-and-select layout, and the first layout read and converted).
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "test_support.hpp"

namespace {

using blume_test::absent_key;
using blume_test::mentions;
using blume_test::message_of;
using blume_test::present_key;
using quotient = blume::quotient_filter<>;

/// An odd slot count large enough for long runs and clusters (a tenth in the slow builds: still over 100'000).
constexpr std::uint64_t large_odd_slots = blume_test::slow_build ? 100'003 : 1'000'003;

std::uint64_t fingerprint_of(const quotient& f, std::uint64_t key) { return f.fingerprint(f.hash(key)); }
std::uint64_t quotient_of(const quotient& f, std::uint64_t key) { return fingerprint_of(f, key) >> f.remainder_bits(); }
std::uint64_t key_with_quotient(const quotient& f, std::uint64_t q) {
  std::uint64_t key = 0;
  while (quotient_of(f, present_key(key)) != q) ++key;
  return present_key(key);
}

/// Serialized bytes with the payload bit `bit` set to `value` and the payload checksum recomputed, so only
/// the table's own validation stands between them and a filter.
std::vector<std::byte> with_payload_bit(std::vector<std::byte> bytes, std::uint64_t bit, bool value) {
  std::byte& b = bytes[blume::header_size + bit / 8];
  const auto mask = static_cast<std::byte>(1u << (bit % 8));
  b = value ? (b | mask) : (b & ~mask);
  blume::file_header h = blume::decode_header(bytes);
  h.payload_checksum = XXH64(bytes.data() + blume::header_size, bytes.size() - blume::header_size, 0);
  const auto header = blume::encode_header(h);
  std::copy(header.begin(), header.end(), bytes.begin());
  return bytes;
}

/// A filter that passed validation must also work: lookups, inserts and erases end and keep it valid.
void exercise(quotient f) {
  for (std::uint64_t i = 0; i < 20; ++i) (void)f.contains(absent_key(i));
  for (std::uint64_t i = 0; i < 5; ++i) {
    if (!f.insert(present_key(i))) break;
    ASSERT_TRUE(f.contains(present_key(i)));
  }
  for (std::uint64_t i = 0; i < 5; ++i) (void)f.erase(present_key(i));
  (void)blume::from_bytes<quotient>(blume::to_bytes(f));
}

// ---- membership ----------------------------------------------------------------------------------------

TEST(QuotientFilter, InsertedKeysAreFound) {
  quotient f(100'000, 0.01);
  for (std::uint64_t i = 0; i < 100'000; ++i) ASSERT_TRUE(f.insert(present_key(i)));
  for (std::uint64_t i = 0; i < 100'000; ++i) ASSERT_TRUE(f.contains(present_key(i))) << i;
  EXPECT_EQ(f.size(), 100'000u);
  EXPECT_EQ(f.estimated_count(), 100'000.0);
}

TEST(QuotientFilter, AnEmptyFilterContainsNothing) {
  const quotient f = quotient::with_slots(1024, 8);
  for (std::uint64_t i = 0; i < 1000; ++i) ASSERT_FALSE(f.contains(present_key(i)));
  EXPECT_EQ(f.predicted_fpr(), 0.0);
}

TEST(QuotientFilter, NoFalseNegativesWhenRunsArePushedPastTheLastQuotient) {
  quotient f = quotient::with_slots(64, 10);
  std::vector<std::uint64_t> tail;  // keys whose canonical slot is one of the last four of 64
  for (std::uint64_t i = 0; tail.size() < 40; ++i)
    if (quotient_of(f, present_key(i)) >= 60) tail.push_back(present_key(i));
  for (std::uint64_t k : tail) ASSERT_TRUE(f.insert(k));
  // 40 remainders for 4 slots: they must have gone on into the overflow block.
  for (std::uint64_t k : tail) ASSERT_TRUE(f.contains(k));
  for (std::uint64_t i = 0; i < 20; ++i) ASSERT_TRUE(f.insert(present_key(1000 + i)));
  for (std::uint64_t k : tail) ASSERT_TRUE(f.contains(k));
  for (std::uint64_t i = 0; i < 20; ++i) ASSERT_TRUE(f.contains(present_key(1000 + i)));
  for (std::uint64_t k : tail) ASSERT_TRUE(f.erase(k));
  for (std::uint64_t i = 0; i < 20; ++i) ASSERT_TRUE(f.contains(present_key(1000 + i)));
  EXPECT_EQ(f.size(), 20u);
}

TEST(QuotientFilter, NoFalseNegativesAtMaximumLoadWithLongClusters) {
  quotient f = quotient::with_slots(16384, 7);
  std::uint64_t stored = 0;
  while (f.insert(present_key(stored))) ++stored;
  EXPECT_EQ(stored, f.capacity());
  EXPECT_NEAR(f.load_factor(), 0.95, 0.001);
  for (std::uint64_t i = 0; i < stored; ++i) ASSERT_TRUE(f.contains(present_key(i))) << i;
}

TEST(QuotientFilter, DuplicatesAreStoredAsCopies) {
  quotient f = quotient::with_slots(1024, 8);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(f.insert("thrice"));
  EXPECT_EQ(f.count("thrice"), 3u);
  EXPECT_EQ(f.size(), 3u);
  EXPECT_TRUE(f.erase("thrice"));
  EXPECT_EQ(f.count("thrice"), 2u);
  EXPECT_TRUE(f.contains("thrice"));
  EXPECT_TRUE(f.erase("thrice"));
  EXPECT_TRUE(f.erase("thrice"));
  EXPECT_FALSE(f.contains("thrice"));
  EXPECT_FALSE(f.erase("thrice"));
}

TEST(QuotientFilter, EraseOfAnAbsentFingerprintIsRefusedAndChangesNothing) {
  quotient f = quotient::with_slots(4096, 16);
  for (std::uint64_t i = 0; i < 3000; ++i) f.insert(present_key(i));
  const quotient before = f;
  std::uint64_t refused = 0;
  for (std::uint64_t i = 0; i < 3000; ++i) {
    if (f.contains(absent_key(i))) continue;  // a false positive would be erased: skip it
    EXPECT_FALSE(f.erase(absent_key(i)));
    ++refused;
  }
  EXPECT_GT(refused, 2900u);
  EXPECT_TRUE(f == before);
}

TEST(QuotientFilter, ErasingEverythingLeavesAnEmptyTable) {
  quotient f = quotient::with_slots(4096, 9);
  const quotient empty = f;
  for (std::uint64_t i = 0; i < 3800; ++i) ASSERT_TRUE(f.insert(present_key(i)));
  for (std::uint64_t i = 0; i < 3800; ++i) ASSERT_TRUE(f.erase(present_key(3799 - i)));
  EXPECT_TRUE(f == empty) << "every metadata bit must be cleared again";
}

TEST(QuotientFilter, TheTableDependsOnlyOnTheStoredFingerprints) {
  quotient forward = quotient::with_slots(2048, 8), backward = quotient::with_slots(2048, 8);
  for (std::uint64_t i = 0; i < 1900; ++i) forward.insert(present_key(i));
  for (std::uint64_t i = 0; i < 1900; ++i) backward.insert(present_key(1899 - i));
  EXPECT_TRUE(forward == backward);
}

// Random inserts and erases at high load against a multiset of fingerprints: counts agree after every step,
// and at checkpoints the stored fingerprints are exactly the model's and the table passes the file
// format's full validation (the table invariants).
// Keys come from `pool` (by default 2s keys).
void check_against_model(std::uint64_t slots, std::uint32_t r, std::uint64_t seed, int steps,
                         std::vector<std::uint64_t> pool = {}) {
  quotient f = quotient::with_slots(slots, r, seed);
  std::unordered_multiset<std::uint64_t> model;
  std::mt19937_64 rng(seed);
  if (pool.empty())
    for (std::uint64_t i = 0; i < f.slots() * 2; ++i) pool.push_back(present_key(i));
  const std::uint64_t low = f.capacity() * 8 / 10;
  for (int step = 0; step < steps; ++step) {
    const std::uint64_t key = pool[rng() % pool.size()];
    const std::uint64_t fp = fingerprint_of(f, key);
    const bool grow = model.size() < low || rng() % 2 == 0;
    if (grow) {
      const bool stored = f.insert(key);
      ASSERT_EQ(stored, model.size() < f.capacity()) << "step " << step;
      if (stored) model.insert(fp);
    } else {
      const bool present = model.count(fp) != 0;
      ASSERT_EQ(f.erase(key), present) << "step " << step;
      if (present) model.erase(model.find(fp));
    }
    ASSERT_EQ(f.count(key), model.count(fp)) << "step " << step;
    ASSERT_EQ(f.size(), model.size());
    if (step % 500 == 0 || step == steps - 1) {
      std::vector<std::uint64_t> expected(model.begin(), model.end());
      std::sort(expected.begin(), expected.end());
      ASSERT_EQ(f.sorted_fingerprints(), expected) << "step " << step;
      ASSERT_NO_THROW((void)blume::from_bytes<quotient>(blume::to_bytes(f))) << "step " << step;
    }
  }
  for (const std::uint64_t key : pool) ASSERT_EQ(f.count(key), model.count(fingerprint_of(f, key)));
}

TEST(QuotientFilter, RandomInsertsAndErasesMatchAMultisetModelAtHighLoad) {
  for (std::uint64_t seed : {1u, 2u, 3u}) check_against_model(1024, 6, seed, 20'000);
}
TEST(QuotientFilter, RandomInsertsAndErasesMatchTheModelInATinyTableThatAlwaysWraps) {
  for (std::uint64_t seed : {4u, 5u, 6u, 7u}) check_against_model(8, 2, seed, 5'000);
}
TEST(QuotientFilter, RandomInsertsAndErasesMatchTheModelWithOneBitRemainders) {
  check_against_model(256, 1, 8, 10'000);
}
TEST(QuotientFilter, RandomInsertsAndErasesMatchTheModelWithRunsLongerThanTheOffsetsCanCount) {
  // Six keys in the first quarter, about 260 copies each: runs of hundreds of slots push the later ones
  // across many blocks, whose offsets pass 255 (saturated: recomputed on every lookup and erase).
  for (std::uint64_t seed : {21u, 22u}) {
    const quotient shape = quotient::with_slots(2048, 8, seed);
    std::vector<std::uint64_t> pool;
    for (std::uint64_t i = 0; pool.size() < 6; ++i)
      if (quotient_of(shape, present_key(i)) < 512) pool.push_back(present_key(i));
    check_against_model(2048, 8, seed, 12'000, pool);
  }
}

TEST(QuotientFilter, ARunPushedPastTheOverflowBlocksIsRefusedAndChangesNothing) {
  quotient f = quotient::with_slots(1024, 8);
  const std::uint64_t last = key_with_quotient(f, 1023);
  for (std::uint64_t i = 0; i < 100; ++i) ASSERT_TRUE(f.insert(present_key(i)));
  std::uint64_t copies = 0;
  while (f.insert(last)) ++copies;
  EXPECT_LT(f.size(), f.capacity()) << "refused before the filter is full";
  EXPECT_GE(copies, 256u) << "slot 1023 and the 256 overflow slots, less any that runs before it took";
  EXPECT_LE(copies, 257u);
  const quotient before = f;
  EXPECT_FALSE(f.insert(last));
  EXPECT_TRUE(f == before);
  for (std::uint64_t i = 0; i < 100; ++i) ASSERT_TRUE(f.contains(present_key(i)));
  EXPECT_EQ(f.count(last), copies + f.count(last) - copies);
  for (std::uint64_t i = 0; i < copies; ++i) ASSERT_TRUE(f.erase(last));
  EXPECT_NO_THROW((void)blume::from_bytes<quotient>(blume::to_bytes(f)));
}

// ---- any slot count ------------------------------------------------------------------------------------

TEST(QuotientFilter, TheFingerprintIsLemiresReductionOverSlotsTimesTwoToTheR) {
  for (std::uint64_t slots : {7u, 1000u, 1'000'003u}) {
    for (std::uint32_t r : {1u, 8u, 20u}) {
      const quotient f = quotient::with_slots(slots, r);
      for (std::uint64_t i = 0; i < 1000; ++i) {
        const blume::digest d = f.hash(present_key(i));
        ASSERT_EQ(f.fingerprint(d), blume::reduce(d.low, slots << r)) << slots << " " << r;
      }
    }
  }
}

TEST(QuotientFilter, PowerOfTwoSlotCountsTakeTheTopBitsOfTheDigest) {
  const quotient f = quotient::with_slots(4096, 9);
  for (std::uint64_t i = 0; i < 1000; ++i)
    ASSERT_EQ(fingerprint_of(f, present_key(i)), f.hash(present_key(i)).low >> (64 - 21));
}

TEST(QuotientFilter, TheFingerprintRangeMayReachTwoToTheSixtyFour) {
  EXPECT_NO_THROW(quotient::check_geometry(std::uint64_t{1} << 32, 32));
  EXPECT_NO_THROW(quotient::check_geometry((std::uint64_t{1} << 33) - 1, 31));
  EXPECT_THROW(quotient::check_geometry((std::uint64_t{1} << 33) + 1, 31), blume::invalid_argument);
}

TEST(QuotientFilter, TheFingerprintIsTheProductsHighBitsUpToARangeOfTwoToTheSixtyFour) {
  // ⌊low·s / 2^(64−r)⌋ in 128 bits, the definition, against the one multiply-high the filter takes; at
  // s·2^r = 2^64 (a 17 GiB table, so checked here without one) the range wraps to 0 and F = low.
  std::mt19937_64 rng(3);
  const std::pair<std::uint64_t, std::uint32_t> geometries[] = {{2, 1},
                                                                {7, 8},
                                                                {1'000'003, 20},
                                                                {std::uint64_t{1} << 32, 32},
                                                                {(std::uint64_t{1} << 33) - 1, 31},
                                                                {std::uint64_t{1} << 40, 24},
                                                                {3, 32}};
  for (const auto& [s, r] : geometries) {
    for (int i = 0; i < 10'000; ++i) {
      const std::uint64_t low = i < 2 ? (i == 0 ? 0 : ~std::uint64_t{0}) : rng();
      const auto expected = static_cast<std::uint64_t>((static_cast<blume::uint128_t>(low) * s) >> (64 - r));
      ASSERT_EQ(blume::detail::quotient_fingerprint(low, s << r), expected) << s << " " << r << " " << low;
    }
  }
}

TEST(QuotientFilter, RandomInsertsAndErasesMatchTheModelWithOddSlotCounts) {
  for (std::uint64_t seed : {11u, 12u}) check_against_model(7, 3, seed, 5'000);
  check_against_model(1000, 5, 13, 20'000);
  check_against_model(1001, 1, 14, 10'000);
}

TEST(QuotientFilter, RunsPushedPastTheEndOfOddSlotCountsSpillIntoTheOverflowBlocks) {
  for (std::uint64_t slots : {std::uint64_t{7}, std::uint64_t{1000}, large_odd_slots}) {
    quotient f = quotient::with_slots(slots, 8);
    const quotient empty = f;
    const std::uint64_t last = slots < 100 ? 2 : 4, wanted = std::min<std::uint64_t>(f.capacity(), 40);
    std::vector<std::uint64_t> tail;  // keys whose canonical slot is one of the last few
    for (std::uint64_t i = 0; tail.size() < wanted; ++i)
      if (quotient_of(f, present_key(i)) >= slots - last) tail.push_back(present_key(i));
    for (std::uint64_t k : tail) ASSERT_TRUE(f.insert(k)) << slots;
    for (std::uint64_t k : tail) ASSERT_TRUE(f.contains(k)) << slots;
    std::vector<std::uint64_t> expected;
    for (std::uint64_t k : tail) expected.push_back(fingerprint_of(f, k));
    std::sort(expected.begin(), expected.end());
    EXPECT_EQ(f.sorted_fingerprints(), expected) << slots;
    EXPECT_TRUE(blume::from_bytes<quotient>(blume::to_bytes(f)) == f) << slots;
    for (std::uint64_t k : tail) ASSERT_TRUE(f.erase(k)) << slots;
    EXPECT_TRUE(f == empty) << slots;
  }
}

TEST(QuotientFilter, ResizeOfOddSlotCountsKeepsEveryKeyAndItsFingerprint) {
  for (std::uint64_t slots : {std::uint64_t{7}, std::uint64_t{1000}, large_odd_slots}) {
    quotient f = quotient::with_slots(slots, 10);
    const std::uint64_t n = slots < 100'000 ? f.capacity() : slots * 85 / 100;
    std::vector<std::uint64_t> before;
    for (std::uint64_t i = 0; i < n; ++i) {
      ASSERT_TRUE(f.insert(present_key(i)));
      before.push_back(fingerprint_of(f, present_key(i)));
    }
    const std::vector<std::uint64_t> stored = f.sorted_fingerprints();
    f.resize();
    EXPECT_EQ(f.slots(), 2 * slots);
    EXPECT_EQ(f.remainder_bits(), 9u);
    EXPECT_EQ(f.sorted_fingerprints(), stored) << "the same fingerprints, split one bit further left";
    for (std::uint64_t i = 0; i < n; ++i) {
      ASSERT_EQ(fingerprint_of(f, present_key(i)), before[i]) << "a key keeps its fingerprint: " << i;
      ASSERT_TRUE(f.contains(present_key(i))) << i;
    }
    quotient direct = quotient::with_slots(2 * slots, 9);
    for (std::uint64_t i = 0; i < n; ++i) direct.insert(present_key(i));
    EXPECT_TRUE(f == direct) << slots;
    for (std::uint64_t i = n; i < 2 * n; ++i) ASSERT_TRUE(f.insert(present_key(i)));
    for (std::uint64_t i = 0; i < 2 * n; ++i) ASSERT_TRUE(f.contains(present_key(i))) << i;
    EXPECT_NO_THROW((void)blume::from_bytes<quotient>(blume::to_bytes(f)));
  }
}

TEST(QuotientFilter, MergeOfOddSlotCountsIsTheUnionAndResizesWhenFull) {
  for (std::uint64_t slots : {std::uint64_t{7}, std::uint64_t{1000}, large_odd_slots}) {
    const std::uint64_t m = quotient::with_slots(slots, 12).capacity() * 45 / 100;
    quotient a = quotient::with_slots(slots, 12), b = quotient::with_slots(slots, 12), both = a;
    for (std::uint64_t i = 0; i < m; ++i) a.insert(present_key(i));
    for (std::uint64_t i = m / 2; i < m / 2 + m; ++i) b.insert(present_key(i));
    for (std::uint64_t i = 0; i < m; ++i) both.insert(present_key(i));
    for (std::uint64_t i = m / 2; i < m / 2 + m; ++i) both.insert(present_key(i));
    quotient merged = a;
    merged.merge(b);
    EXPECT_TRUE(merged == both) << slots;
    // Twice as many again does not fit: the union is built in 2s slots of 11 bits.
    quotient c = quotient::with_slots(slots, 12);
    for (std::uint64_t i = 10 * m; i < 12 * m; ++i) c.insert(present_key(i));
    if (c.size() + merged.size() <= merged.capacity()) continue;  // too small to overflow (s = 7)
    merged.merge(c);
    EXPECT_EQ(merged.slots(), 2 * slots);
    EXPECT_EQ(merged.remainder_bits(), 11u);
    for (std::uint64_t i = 0; i < m / 2 + m; ++i) ASSERT_TRUE(merged.contains(present_key(i))) << i;
    for (std::uint64_t i = 10 * m; i < 12 * m; ++i) ASSERT_TRUE(merged.contains(present_key(i))) << i;
    EXPECT_NO_THROW((void)blume::from_bytes<quotient>(blume::to_bytes(merged)));
  }
}

TEST(QuotientFilter, TheSmallestTableHasTwoSlotsAndHoldsOneFingerprint) {
  quotient f = quotient::with_slots(2, 4);
  EXPECT_EQ(f.capacity(), 1u);
  ASSERT_TRUE(f.insert(present_key(0)));
  EXPECT_FALSE(f.insert(present_key(1)));
  EXPECT_TRUE(f.contains(present_key(0)));
  EXPECT_TRUE(blume::from_bytes<quotient>(blume::to_bytes(f)) == f);
  f.resize();
  EXPECT_EQ(f.slots(), 4u);
  EXPECT_TRUE(f.contains(present_key(0)));
}

TEST(QuotientFormat, OddSlotCountsRoundTrip) {
  const std::uint64_t n = large_odd_slots * 9 / 10;
  quotient f = quotient::with_slots(large_odd_slots, 7, 99);
  ASSERT_EQ(f.insert_many(blume_test::present_keys(n)), n);
  const auto bytes = blume::to_bytes(f);
  EXPECT_EQ(blume::decode_header(bytes).primary, large_odd_slots);
  EXPECT_EQ(bytes.size(), blume::header_size + ((large_odd_slots + 63) / 64 + 4) * (8 * 7 + 17));
  const quotient g = blume::from_bytes<quotient>(bytes);
  EXPECT_TRUE(g == f);
  for (std::uint64_t i = 0; i < n; ++i) ASSERT_TRUE(g.contains(present_key(i)));
}

// ---- the full filter -----------------------------------------------------------------------------------

TEST(QuotientFilter, AFullFilterRefusesInsertsWithoutCorruptingState) {
  quotient f = quotient::with_slots(64, 8);
  std::uint64_t stored = 0;
  while (f.insert(present_key(stored))) ++stored;
  EXPECT_EQ(stored, 60u);  // 95% of 64 slots, rounded down
  EXPECT_EQ(f.capacity(), 60u);
  const quotient full = f;
  for (std::uint64_t i = 0; i < 100; ++i) EXPECT_FALSE(f.insert(absent_key(i)));
  EXPECT_FALSE(f.insert(present_key(0)));  // a copy needs a slot too
  EXPECT_TRUE(f == full);
  for (std::uint64_t i = 0; i < stored; ++i) ASSERT_TRUE(f.contains(present_key(i)));
  EXPECT_NO_THROW((void)blume::from_bytes<quotient>(blume::to_bytes(f)));
  ASSERT_TRUE(f.erase(present_key(0)));
  EXPECT_TRUE(f.insert(absent_key(0))) << "erasing one makes room for one";
}

TEST(QuotientFilter, InsertManyReportsHowManyFitted) {
  quotient f = quotient::with_slots(64, 8);
  EXPECT_EQ(f.insert_many(blume_test::present_keys(100)), 60u);
  EXPECT_EQ(f.size(), 60u);
}

// ---- bulk calls ----------------------------------------------------------------------------------------

TEST(QuotientFilter, BulkCallsAgreeWithSingleCalls) {
  quotient single(20'000, 0.01), bulk(20'000, 0.01);
  const auto keys = blume_test::present_keys(20'000);
  for (std::uint64_t k : keys) single.insert(k);
  EXPECT_EQ(bulk.insert_many(keys), keys.size());
  EXPECT_TRUE(single == bulk);
  std::vector<std::uint64_t> probes = blume_test::absent_keys(20'000);
  probes.insert(probes.end(), keys.begin(), keys.begin() + 5000);
  std::vector<bool> answers;
  const std::size_t hits = bulk.contains_many(probes, std::back_inserter(answers));
  ASSERT_EQ(answers.size(), probes.size());
  std::size_t expected_hits = 0;
  for (std::size_t i = 0; i < probes.size(); ++i) {
    ASSERT_EQ(answers[i], single.contains(probes[i])) << i;
    expected_hits += answers[i];
  }
  EXPECT_EQ(hits, expected_hits);
  EXPECT_EQ(bulk.count_contained(probes), expected_hits);
  std::vector<blume::digest> digests;
  for (std::uint64_t k : probes) digests.push_back(bulk.hash(k));
  EXPECT_EQ(bulk.count_contained(digests), expected_hits);
}

TEST(QuotientFilter, ClearEmptiesTheFilter) {
  quotient f(1000, 0.01);
  const quotient empty = f;
  for (std::uint64_t i = 0; i < 1000; ++i) f.insert(present_key(i));
  f.clear();
  EXPECT_TRUE(f == empty);
  EXPECT_EQ(f.size(), 0u);
  EXPECT_FALSE(f.contains(present_key(0)));
}

// ---- resize and merge ----------------------------------------------------------------------------------

TEST(QuotientFilter, ResizeDoublesTheSlotsAndKeepsEveryKey) {
  quotient f = quotient::with_slots(4096, 10);
  const std::uint64_t n = f.capacity();
  for (std::uint64_t i = 0; i < n; ++i) ASSERT_TRUE(f.insert(present_key(i)));
  const double rate_before = f.predicted_fpr();
  f.resize();
  EXPECT_EQ(f.slots(), 8192u);
  EXPECT_EQ(f.remainder_bits(), 9u);
  EXPECT_EQ(f.size(), n);
  EXPECT_NEAR(f.load_factor(), 0.475, 0.001);
  EXPECT_NEAR(f.predicted_fpr(), rate_before, 1e-12) << "the fingerprint range s·2^r is unchanged";
  for (std::uint64_t i = 0; i < n; ++i) ASSERT_TRUE(f.contains(present_key(i))) << i;
  for (std::uint64_t i = n; i < 2 * n; ++i) ASSERT_TRUE(f.insert(present_key(i)));
  for (std::uint64_t i = 0; i < 2 * n; ++i) ASSERT_TRUE(f.contains(present_key(i))) << i;
}

TEST(QuotientFilter, AResizedFilterEqualsOneFilledAtTheNewGeometry) {
  quotient resized = quotient::with_slots(512, 7), direct = quotient::with_slots(1024, 6);
  for (std::uint64_t i = 0; i < 480; ++i) {
    resized.insert(present_key(i));
    direct.insert(present_key(i));
  }
  resized.resize();
  EXPECT_TRUE(resized == direct);
}

TEST(QuotientFilter, ResizeWithAOneBitRemainderIsRefused) {
  quotient f = quotient::with_slots(256, 1);
  f.insert(1);
  const std::string message = message_of<blume::invalid_argument>([&] { f.resize(); });
  EXPECT_TRUE(mentions(message, "1 bit"));
  EXPECT_TRUE(f.contains(1));
}

TEST(QuotientFilter, MergeHoldsTheKeysOfBothAndAddsCopies) {
  quotient a = quotient::with_slots(4096, 8), b = quotient::with_slots(4096, 8);
  for (std::uint64_t i = 0; i < 1500; ++i) a.insert(present_key(i));
  for (std::uint64_t i = 1000; i < 2500; ++i) b.insert(present_key(i));
  a.merge(b);
  EXPECT_EQ(a.size(), 3000u);
  for (std::uint64_t i = 0; i < 2500; ++i) ASSERT_TRUE(a.contains(present_key(i))) << i;
  for (std::uint64_t i = 1000; i < 1500; ++i) ASSERT_GE(a.count(present_key(i)), 2u);
  quotient both = quotient::with_slots(4096, 8);
  for (std::uint64_t i = 0; i < 1500; ++i) both.insert(present_key(i));
  for (std::uint64_t i = 1000; i < 2500; ++i) both.insert(present_key(i));
  EXPECT_TRUE(a == both);
  for (std::uint64_t i = 0; i < 1500; ++i) ASSERT_TRUE(a.erase(present_key(i)));
  for (std::uint64_t i = 1000; i < 2500; ++i) ASSERT_TRUE(a.contains(present_key(i))) << "b's keys survive";
}

TEST(QuotientFilter, MergeThatDoesNotFitResizesFirst) {
  quotient a = quotient::with_slots(256, 10), b = quotient::with_slots(256, 10);
  for (std::uint64_t i = 0; i < 200; ++i) a.insert(present_key(i));
  for (std::uint64_t i = 200; i < 400; ++i) b.insert(present_key(i));
  a.merge(b);
  EXPECT_EQ(a.slots(), 512u);
  EXPECT_EQ(a.remainder_bits(), 9u);
  for (std::uint64_t i = 0; i < 400; ++i) ASSERT_TRUE(a.contains(present_key(i))) << i;
}

TEST(QuotientFilter, MergeRefusesFiltersOfOtherGeometryOrSeedNamingTheDifference) {
  quotient a = quotient::with_slots(1024, 8);
  a.insert(1);
  const quotient before = a;
  EXPECT_TRUE(mentions(message_of<blume::incompatible_filters>([&] { a.merge(quotient::with_slots(2048, 8)); }),
                       "slot counts differ (1024 vs 2048)"));
  EXPECT_TRUE(mentions(message_of<blume::incompatible_filters>([&] { a.merge(quotient::with_slots(1025, 8)); }),
                       "slot counts differ (1024 vs 1025)"));
  EXPECT_TRUE(mentions(message_of<blume::incompatible_filters>([&] { a.merge(quotient::with_slots(1024, 7)); }),
                       "remainder bits differ (8 vs 7)"));
  EXPECT_TRUE(mentions(message_of<blume::incompatible_filters>([&] { a.merge(quotient::with_slots(1024, 8, 99)); }),
                       "seeds differ"));
  EXPECT_TRUE(a == before);
}

// ---- the false-positive rate ---------------------------------------------------------------------------

void check_measured_rate(std::uint64_t full_slots, std::uint32_t r) {
  // The slow builds take a tenth of the slots, keys and probes: the same load, and the bound follows the probes.
  const std::uint64_t slots = blume_test::scaled(full_slots), keys = blume_test::scaled(1'000'000);
  quotient f = quotient::with_slots(slots, r);
  ASSERT_EQ(f.insert_many(blume_test::present_keys(keys)), keys);
  const double predicted = f.predicted_fpr();
  EXPECT_NEAR(predicted, -std::expm1(-(static_cast<double>(keys) / static_cast<double>(slots)) / std::exp2(r)), 1e-15);
  const double probes = static_cast<double>(keys);
  const double measured = static_cast<double>(f.count_contained(blume_test::absent_key_view(keys))) / probes;
  EXPECT_NEAR(measured, predicted, blume_test::fpr_tolerance(predicted, probes)) << "r = " << r;
}

TEST(QuotientFilterRate, MeasuredRateMatchesThePredictionAtOneMillionKeysWithSixBitRemainders) {
  check_measured_rate(1 << 21, 6);
}
TEST(QuotientFilterRate, MeasuredRateMatchesThePredictionAtOneMillionKeysWithTenBitRemainders) {
  check_measured_rate(1 << 21, 10);
}
TEST(QuotientFilterRate, MeasuredRateMatchesThePredictionAtNinetyPercentLoadWithAnOddSlotCount) {
  check_measured_rate(1'111'111, 7);
}

TEST(QuotientFilterRate, PredictionIsAtMostLoadTimesTwoToTheMinusR) {
  quotient f = quotient::with_slots(4096, 5);
  for (std::uint64_t i = 0; i < 3000; ++i) f.insert(present_key(i));
  EXPECT_LE(f.predicted_fpr(), f.load_factor() / 32);
  EXPECT_GT(f.predicted_fpr(), 0.98 * f.load_factor() / 32);
}

// ---- planning ------------------------------------------------------------------------------------------

TEST(QuotientPlan, PlanUsesItemsOverTheDesignLoadSlotsAndTheFewestRemainderBits) {
  for (std::uint64_t items : {1'000'000u, 10'000'000u, 12'345u}) {
    for (double target : {0.1, 0.01, 0.002, 0.001, 1e-6}) {
      const blume::filter_plan p = blume::plan_for(items, target, blume::quotient_filter<>::kind);
      const quotient f(p);
      const double n = static_cast<double>(items);
      EXPECT_EQ(f.slots(), 64 * static_cast<std::uint64_t>(std::ceil(n / blume::quotient_plan_load / 64))) << items;
      EXPECT_EQ(p.hashes, f.remainder_bits());
      EXPECT_EQ(p.bits, f.table_bits());
      EXPECT_EQ(p.bytes, f.storage().size());
      EXPECT_LE(p.predicted_fpr, target);
      EXPECT_GT(f.predicted_fpr_at(n) * 2, target) << "one remainder bit fewer would miss the target";
      EXPECT_GE(f.capacity(), items);
      // r + 2.125 bits a slot, slots rounded up to whole blocks, and 4 overflow blocks.
      const double blocks = std::ceil(n / blume::quotient_plan_load / 64) + 4;
      EXPECT_DOUBLE_EQ(p.bits_per_key(), blocks * (64 * p.hashes + 136) / n) << items << " " << target;
      if (items >= 1'000'000) {
        EXPECT_NEAR(p.bits_per_key(), (p.hashes + 2.125) / blume::quotient_plan_load, 0.01) << items << " " << target;
      }
    }
  }
}

TEST(QuotientPlan, PlansAreNoLongerRoundedToPowersOfTwo) {
  // 10M keys at 1%: 2^24 slots (load 0.6) took 20 bits per key; ⌈10^7/0.9⌉ slots in 173,612 blocks of 64
  // slots of 7 + 2.125 bits, and 4 overflow blocks, take 10.14.
  const blume::filter_plan p = blume::plan_for(10'000'000, 0.01, blume::quotient_filter<>::kind);
  EXPECT_EQ(p.hashes, 7u);
  EXPECT_EQ(p.bits, (173'612u + 4) * 584u);
  EXPECT_LT(p.bits_per_key(), 10.15);
  // At the rate of a cuckoo filter with 12-bit fingerprints (0.19%, 12.63 bits per key), within 1.2×.
  EXPECT_LT(blume::plan_for(10'000'000, 0.0019, blume::quotient_filter<>::kind).bits_per_key(), 1.2 * 12.63);
}

TEST(QuotientPlan, TinyPlansTakeOneBlockOfSlots) {
  const quotient f(1, 0.01);
  EXPECT_EQ(f.slots(), 64u);
  EXPECT_EQ(f.capacity(), 60u);
}

TEST(QuotientPlan, RatesBeyondThirtyTwoRemainderBitsLowerTheLoadInstead) {
  const blume::filter_plan p = blume::plan_for(1000, 1e-12, blume::quotient_filter<>::kind);
  EXPECT_EQ(p.hashes, 32u);
  EXPECT_LE(p.predicted_fpr, 1e-12);
  const std::uint64_t slots = (p.bits / (64 * 32 + 136) - 4) * 64;
  EXPECT_GT(slots, 1112u);
  EXPECT_GT(blume::math::quotient_fpr(1000, static_cast<double>(slots - 64), 32), 1e-12) << "the fewest blocks";
}

TEST(QuotientPlan, PlanForBitsUsesTheBudgetWithAnySlotCount) {
  const blume::filter_plan forward = blume::plan_for(1'000'000, 0.01, blume::quotient_filter<>::kind);
  const blume::filter_plan inverse = blume::plan_for_bits(1'000'000, forward.bits, blume::quotient_filter<>::kind);
  EXPECT_EQ(inverse.bits, forward.bits);
  EXPECT_EQ(inverse.hashes, forward.hashes);
  const blume::filter_plan roomier =
      blume::plan_for_bits(1'000'000, forward.bits + 1000, blume::quotient_filter<>::kind);
  EXPECT_LT(roomier.predicted_fpr, forward.predicted_fpr) << "one more block of slots lowers the rate";
  EXPECT_LE(roomier.bits, forward.bits + 1000);
}

TEST(QuotientPlan, AFilterAtItsPlannedCapacityMeetsItsTarget) {
  quotient f(200'000, 0.02);
  ASSERT_EQ(f.insert_many(blume_test::present_keys(200'000)), 200'000u);
  const double measured = static_cast<double>(f.count_contained(blume_test::absent_key_view(500'000))) / 500'000;
  EXPECT_LE(measured, 0.02);
}

// ---- bad parameters ------------------------------------------------------------------------------------

TEST(QuotientInput, BadGeometriesAreRejectedNamingTheValue) {
  EXPECT_TRUE(mentions(message_of<blume::invalid_argument>([] { quotient::with_slots(1, 8); }),
                       "slot count must be at least 2, got 1"));
  EXPECT_TRUE(mentions(message_of<blume::invalid_argument>([] { quotient::with_slots(0, 8); }), "got 0"));
  EXPECT_TRUE(mentions(message_of<blume::invalid_argument>([] { quotient::with_slots(256, 0); }),
                       "remainder bits must be at least 1, got 0"));
  EXPECT_TRUE(mentions(message_of<blume::invalid_argument>([] { quotient::with_slots(256, 33); }), "got 33"));
  // s·2^r must fit in 64 bits: 2^32 + 1 slots of 35 bits are within 2^40 bits, but not with r = 32.
  EXPECT_TRUE(mentions(
      message_of<blume::invalid_argument>([] { quotient::with_slots((std::uint64_t{1} << 32) + 1, 32); }), "2^64"));
  EXPECT_TRUE(mentions(message_of<blume::invalid_argument>([] { quotient::with_slots(std::uint64_t{1} << 38, 26); }),
                       "2^40"));
  EXPECT_TRUE(mentions(message_of<blume::invalid_argument>([] { quotient::with_slots(~std::uint64_t{0}, 1); }),
                       "2^40"));
}

TEST(QuotientInput, TheLargestTableWithinTheBitLimitIsAcceptedAndOneSlotMoreIsNot) {
  // Whole blocks of slots: s a multiple of 64 takes s/64 blocks of quotients, s + 1 one more.
  for (const std::uint32_t r : {1u, 7u, 8u, 13u, 24u}) {
    const std::uint64_t blocks = blume::max_filter_bits / blume::quotient_block_bits(r);
    const std::uint64_t s = (blocks - blume::quotient_overflow_blocks) * blume::quotient_block_slots;
    EXPECT_NO_THROW(quotient::check_geometry(s, r)) << "r = " << r;
    EXPECT_THROW(quotient::check_geometry(s + 1, r), blume::invalid_argument) << "r = " << r;
  }
  const blume::filter_plan largest =
      blume::plan_for_bits(10'000'000'000ull, blume::max_filter_bits, blume::quotient_filter<>::kind);
  const std::uint64_t s =
      (largest.bits / blume::quotient_block_bits(largest.hashes) - blume::quotient_overflow_blocks) *
      blume::quotient_block_slots;
  EXPECT_NO_THROW(quotient::check_geometry(s, largest.hashes));
}

TEST(QuotientInput, ZeroCapacityAndRatesOutsideZeroToOneAreRejected) {
  EXPECT_TRUE(mentions(message_of<blume::invalid_argument>([] { quotient(0, 0.01); }), "got 0"));
  for (double fpr : {0.0, 1.0, 1.5, -0.25})
    EXPECT_TRUE(blume_test::mentions_number(message_of<blume::invalid_argument>([&] { quotient(1000, fpr); }), fpr));
}

// ---- file format ---------------------------------------------------------------------------------------

quotient sample_filter() {
  quotient f = quotient::with_slots(128, 5, 1234);
  for (std::uint64_t i = 0; i < 110; ++i) f.insert(present_key(i % 90));  // some copies, long clusters
  return f;
}

TEST(QuotientFormat, RoundTripsThroughBytesFilesAndMappings) {
  const quotient f = sample_filter();
  const auto bytes = blume::to_bytes(f);
  const blume::file_header h = blume::decode_header(bytes);
  EXPECT_EQ(h.kind, blume::quotient_filter<>::kind);
  EXPECT_EQ(h.primary, 128u);
  EXPECT_EQ(h.secondary, 5u);
  EXPECT_EQ(h.layout, 1u) << "the rank-and-select layout";
  EXPECT_EQ(h.inserted, 110u);
  EXPECT_TRUE(blume::from_bytes<quotient>(bytes) == f);
  blume_test::temp_dir dir;
  blume::save(f, dir / "q.blume");
  EXPECT_TRUE(blume::load<quotient>(dir / "q.blume") == f);
  quotient mapped = blume::map_file<quotient>(dir / "q.blume");
  EXPECT_TRUE(mapped.is_mapped());
  EXPECT_TRUE(mapped == f);
  for (std::uint64_t i = 0; i < 90; ++i) ASSERT_TRUE(mapped.contains(present_key(i)));
  EXPECT_TRUE(mapped.erase(present_key(0)));  // changes stay in memory
  EXPECT_TRUE(blume::load<quotient>(dir / "q.blume") == f);
}

TEST(QuotientFormat, EveryFlippedHeaderByteIsRejected) {
  const auto bytes = blume::to_bytes(sample_filter());
  for (std::size_t i = 0; i < blume::header_size; ++i) {
    auto damaged = bytes;
    damaged[i] ^= std::byte{0x5a};
    EXPECT_THROW((void)blume::from_bytes<quotient>(damaged), blume::format_error) << "byte " << i;
  }
}

TEST(QuotientFormat, EveryTruncationIsRejected) {
  const auto bytes = blume::to_bytes(sample_filter());
  blume_test::temp_dir dir;
  for (std::size_t length = 0; length < bytes.size(); ++length) {
    const std::vector<std::byte> cut(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(length));
    EXPECT_THROW((void)blume::from_bytes<quotient>(cut), blume::format_error) << length;
    blume_test::write_file_bytes(dir / "cut", cut);
    EXPECT_THROW((void)blume::load<quotient>(dir / "cut"), blume::format_error) << length;
  }
}

// An empty table of 64 slots of 4 bits: block 0 is 32 bytes of remainders (slot j at bits 4j), occupieds at
// byte 32, runends at byte 40, the offset at byte 48; 49 bytes a block.
constexpr std::uint64_t occupied_bit(std::uint64_t j) { return 32 * 8 + j; }
constexpr std::uint64_t runend_bit(std::uint64_t j) { return 40 * 8 + j; }
constexpr std::uint64_t offset_bit(std::uint64_t block, unsigned bit) { return (block * 49 + 48) * 8 + bit; }

std::string rejection_of(const std::vector<std::byte>& bytes) {
  return message_of<blume::format_error>([&] { (void)blume::from_bytes<quotient>(bytes); });
}

TEST(QuotientFormat, AnOccupiedQuotientWithoutARunEndIsRejected) {
  const auto bytes = with_payload_bit(blume::to_bytes(quotient::with_slots(64, 4)), occupied_bit(10), true);
  EXPECT_TRUE(mentions(rejection_of(bytes), "has no end")) << rejection_of(bytes);
}

TEST(QuotientFormat, ARunEndWithoutAnOccupiedQuotientIsRejected) {
  const auto bytes = with_payload_bit(blume::to_bytes(quotient::with_slots(64, 4)), runend_bit(10), true);
  EXPECT_TRUE(mentions(rejection_of(bytes), "no occupied quotient")) << rejection_of(bytes);
}

TEST(QuotientFormat, ARunEndingBeforeItsQuotientIsRejected) {
  auto bytes = with_payload_bit(blume::to_bytes(quotient::with_slots(64, 4)), occupied_bit(12), true);
  bytes = with_payload_bit(bytes, runend_bit(11), true);
  EXPECT_TRUE(mentions(rejection_of(bytes), "ends before it starts")) << rejection_of(bytes);
}

TEST(QuotientFormat, AQuotientPastTheSlotsIsRejected) {
  auto bytes = with_payload_bit(blume::to_bytes(quotient::with_slots(60, 4)), occupied_bit(61), true);
  bytes = with_payload_bit(bytes, runend_bit(61), true);
  EXPECT_TRUE(mentions(rejection_of(bytes), "past the 60 slots")) << rejection_of(bytes);
}

TEST(QuotientFormat, ARemainderInAnEmptySlotIsRejected) {
  const auto bytes = with_payload_bit(blume::to_bytes(quotient::with_slots(64, 4)), 5 * 4 + 2, true);
  EXPECT_TRUE(mentions(rejection_of(bytes), "empty slot holds a remainder")) << rejection_of(bytes);
}

TEST(QuotientFormat, RemaindersOutOfOrderAreRejected) {
  quotient f = quotient::with_slots(64, 4);
  std::uint64_t key = 0;
  while (quotient_of(f, present_key(key)) != 10 || (fingerprint_of(f, present_key(key)) & 15) == 15) ++key;
  f.insert(present_key(key));
  f.insert(present_key(key));  // slots 10 and 11: two copies
  auto bytes = blume::to_bytes(f);
  for (unsigned bit = 0; bit < 4; ++bit) bytes = with_payload_bit(bytes, 10 * 4 + bit, true);  // slot 10 := 15
  EXPECT_TRUE(mentions(rejection_of(bytes), "out of order")) << rejection_of(bytes);
}

TEST(QuotientFormat, AnOffsetThatDisagreesWithTheRunsIsRejected) {
  quotient f = quotient::with_slots(128, 4);
  const std::uint64_t key = key_with_quotient(f, 63);
  f.insert(key);
  f.insert(key);  // slots 63 and 64: block 1 starts with one slot of quotient 63's run
  const auto bytes = blume::to_bytes(f);
  EXPECT_TRUE(blume::from_bytes<quotient>(bytes) == f);
  const auto zero = with_payload_bit(bytes, offset_bit(1, 0), false);
  EXPECT_TRUE(mentions(rejection_of(zero), "offset 0 where its runs give 1")) << rejection_of(zero);
  const auto two = with_payload_bit(bytes, offset_bit(2, 0), true);
  EXPECT_TRUE(mentions(rejection_of(two), "offset 1 where its runs give 0")) << rejection_of(two);
}

// ---- the first layout (layout 0), read and converted --------------------------------------------------

/// A file of the first layout: s slots of r + 3 bits (is_occupied, is_continuation, is_shifted, remainder),
/// `slots` giving the values of the slots that are not empty.
std::vector<std::byte> layout0_bytes(std::uint64_t s, std::uint32_t r,
                                     const std::vector<std::pair<std::uint64_t, std::uint64_t>>& slots,
                                     std::uint64_t inserted) {
  auto bytes = blume::to_bytes(quotient::with_slots(s, r));
  bytes.resize(blume::header_size + (s * (r + 3) + 63) / 64 * 8);
  std::fill(bytes.begin() + blume::header_size, bytes.end(), std::byte{0});
  for (const auto& [slot, value] : slots)
    for (std::uint32_t bit = 0; bit < r + 3; ++bit)
      if (value >> bit & 1) {
        const std::uint64_t at = slot * (r + 3) + bit;
        bytes[blume::header_size + at / 8] |= static_cast<std::byte>(1u << (at % 8));
      }
  blume::file_header h = blume::decode_header(bytes);
  h.layout = 0;
  h.inserted = inserted;
  h.payload_size = bytes.size() - blume::header_size;
  h.payload_checksum = XXH64(bytes.data() + blume::header_size, bytes.size() - blume::header_size, 0);
  const auto header = blume::encode_header(h);
  std::copy(header.begin(), header.end(), bytes.begin());
  return bytes;
}

TEST(QuotientFormat, AFirstLayoutTableIsConvertedOnLoadWrappedRunsIncluded) {
  // Quotient 5 holds remainder 7; quotient 63 holds 3 and 9, the second wrapped into slot 0 (shifted,
  // a continuation).
  constexpr std::uint64_t occupied = 1, continuation = 2, shifted = 4;
  const auto bytes =
      layout0_bytes(64, 4, {{5, 7 << 3 | occupied}, {63, 3 << 3 | occupied}, {0, 9 << 3 | continuation | shifted}}, 3);
  const quotient f = blume::from_bytes<quotient>(bytes);
  EXPECT_FALSE(f.is_mapped());
  EXPECT_EQ(f.sorted_fingerprints(), (std::vector<std::uint64_t>{5 << 4 | 7, 63 << 4 | 3, 63 << 4 | 9}));
  EXPECT_EQ(f.size(), 3u);
  EXPECT_EQ(blume::decode_header(blume::to_bytes(f)).layout, 1u) << "written back in the current layout";
  EXPECT_TRUE(blume::from_bytes<quotient>(blume::to_bytes(f)) == f);
  blume_test::temp_dir dir;
  blume_test::write_file_bytes(dir / "old.blume", bytes);
  EXPECT_TRUE(blume::map_file<quotient>(dir / "old.blume") == f) << "a mapping of the first layout converts too";
}

TEST(QuotientFormat, FirstLayoutTablesAreStillChecked) {
  constexpr std::uint64_t occupied = 1, continuation = 2, shifted = 4;
  EXPECT_TRUE(mentions(rejection_of(layout0_bytes(64, 4, {{10, continuation}}, 0)), "continuation"));
  EXPECT_TRUE(mentions(rejection_of(layout0_bytes(64, 4, {{10, 1 << 3 | occupied | shifted}}, 1)), "shifted"));
  EXPECT_TRUE(mentions(rejection_of(layout0_bytes(64, 4, {{10, 1 << 3 | occupied}, {11, 2 << 3 | shifted}}, 2)),
                       "no occupied quotient"));
  EXPECT_TRUE(mentions(rejection_of(layout0_bytes(
                           64, 4, {{10, 1 << 3 | occupied}, {11, 2 << 3 | occupied | continuation | shifted}}, 2)),
                       "has no run"));
  EXPECT_TRUE(mentions(rejection_of(layout0_bytes(64, 4, {{10, 1 << 3 | occupied}}, 2)), "announces 2"));
}

TEST(QuotientFormat, AWrongFingerprintCountIsRejected) {
  auto bytes = blume::to_bytes(sample_filter());
  blume::file_header h = blume::decode_header(bytes);
  h.inserted += 1;
  const auto header = blume::encode_header(h);
  std::copy(header.begin(), header.end(), bytes.begin());
  EXPECT_TRUE(mentions(message_of<blume::format_error>([&] { (void)blume::from_bytes<quotient>(bytes); }), "111"));
}

TEST(QuotientFormat, InvalidHeaderParametersAreRejected) {
  const auto bytes = blume::to_bytes(sample_filter());
  for (auto change : {+[](blume::file_header& h) { h.layout = 7; }, +[](blume::file_header& h) { h.secondary = 0; },
                      +[](blume::file_header& h) { h.primary = 100; }, +[](blume::file_header& h) { h.primary = 1; },
                      +[](blume::file_header& h) { h.primary = 0; }, +[](blume::file_header& h) { h.secondary = 33; },
                      +[](blume::file_header& h) { h.extra[2] = 1; }}) {
    auto damaged = bytes;
    blume::file_header h = blume::decode_header(damaged);
    change(h);
    const auto header = blume::encode_header(h);
    std::copy(header.begin(), header.end(), damaged.begin());
    EXPECT_THROW((void)blume::from_bytes<quotient>(damaged), blume::format_error);
  }
}

TEST(QuotientFormat, EverySingleBitFlipOfAPayloadIsRejectedOrValid) {
  const auto bytes = blume::to_bytes(sample_filter());
  std::uint64_t accepted = 0, rejected = 0;
  for (std::uint64_t bit = 0; bit < (bytes.size() - blume::header_size) * 8; ++bit) {
    const auto damaged =
        with_payload_bit(bytes, bit, !((static_cast<unsigned>(bytes[blume::header_size + bit / 8]) >> (bit % 8)) & 1));
    try {
      exercise(blume::from_bytes<quotient>(damaged));
      ++accepted;
    } catch (const blume::format_error&) {
      ++rejected;
    }
  }
  EXPECT_GT(rejected, 0u);
  EXPECT_GT(accepted, 0u) << "a flipped remainder bit in a run's last slot is still a valid table";
}

TEST(QuotientFormat, RandomPayloadsWithAValidChecksumAreRejectedOrValid) {
  const auto bytes = blume::to_bytes(quotient::with_slots(32, 3));  // 5 blocks of 41 bytes
  std::mt19937_64 rng(42);
  std::uint64_t accepted = 0;
  for (int trial = 0; trial < static_cast<int>(blume_test::scaled(5'000, 5)); ++trial) {
    auto garbage = bytes;
    const int density = trial % 8;  // bits set with probability 2^−(density + 1): sparse tables can pass
    // Block 0 (the 32 quotients, remainders and metadata) is random, so sparse tables can pass; the rest is
    // zero but for the offset of block 1, which runs spilling out of block 0 need.
    for (std::size_t i = blume::header_size; i < blume::header_size + 41; ++i) {
      std::uint64_t x = rng();
      for (int d = 0; d < density; ++d) x &= rng();
      garbage[i] = static_cast<std::byte>(x);
    }
    garbage[blume::header_size + 41 + 40] = static_cast<std::byte>(rng() % 4);
    blume::file_header h = blume::decode_header(garbage);
    h.payload_checksum = XXH64(garbage.data() + blume::header_size, garbage.size() - blume::header_size, 0);
    for (std::uint64_t n = 0; n <= 31; ++n) {  // the count must match too: try each
      h.inserted = n;
      const auto header = blume::encode_header(h);
      std::copy(header.begin(), header.end(), garbage.begin());
      try {
        exercise(blume::from_bytes<quotient>(garbage));
        ++accepted;
        break;
      } catch (const blume::format_error&) {
      }
    }
  }
  EXPECT_GT(accepted, 0u);
}

}  // namespace
