// SPDX-License-Identifier: Apache-2.0
// The cuckoo filter: membership without false negatives, relocation that never loses a key, erase and
// count of copies, growth by sub-filters, rates against the model at 1M keys, planning, and the file format
// (round trips and hostile files).
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <functional>
#include <vector>

#include "forge.hpp"
#include "test_support.hpp"

namespace {

using blume::cuckoo_geometry;
using blume_test::absent_key;
using blume_test::mentions;
using blume_test::mentions_number;
using blume_test::message_of;
using blume_test::present_key;
using cuckoo = blume::cuckoo_filter<>;

cuckoo_geometry geometry(std::uint64_t buckets, std::uint32_t bucket_size, std::uint32_t fingerprint_bits,
                         std::uint32_t expansion = 0, std::uint32_t max_filters = 32) {
  cuckoo_geometry g;
  g.buckets = buckets;
  g.bucket_size = bucket_size;
  g.fingerprint_bits = fingerprint_bits;
  g.expansion = expansion;
  g.max_filters = max_filters;
  return g;
}

// The policy concept refuses what the filter cannot use: a member that may throw where the filter is
// noexcept, or a flag that is not a constant.
struct throwing_victim : blume::cuckoo_hashing {
  static std::uint32_t victim(std::uint64_t walk, std::uint32_t k, std::uint32_t b);
};
struct runtime_flag : blume::cuckoo_hashing {
  static inline bool counts_coinciding_buckets_twice = false;
};
static_assert(!blume::cuckoo_hashing_policy<throwing_victim>);
static_assert(!blume::cuckoo_hashing_policy<runtime_flag>);
static_assert(!blume::cuckoo_hashing_policy<blume::murmur64a_hasher>);

/// Inserts present_key(0), present_key(1), ... until an insert fails; returns how many succeeded.
std::uint64_t fill_until_first_failure(cuckoo& f) {
  std::uint64_t i = 0;
  while (f.insert(present_key(i))) ++i;
  return i;
}

/// Rewrites the header of serialized bytes (recomputing the header checksum, and the payload checksum).
void rewrite_header(std::vector<std::byte>& bytes, const std::function<void(blume::file_header&)>& edit) {
  blume::file_header h = blume::decode_header(bytes);
  edit(h);
  h.payload_checksum = XXH64(bytes.data() + blume::header_size, bytes.size() - blume::header_size, 0);
  const auto header = blume::encode_header(h);
  std::copy(header.begin(), header.end(), bytes.begin());
}

// ---- membership ----------------------------------------------------------------------------------------

TEST(CuckooFilter, NoFalseNegativesAtPlannedCapacity) {
  cuckoo f(100'000, 0.001);
  for (std::uint64_t i = 0; i < 100'000; ++i) ASSERT_TRUE(f.insert(present_key(i))) << i;
  for (std::uint64_t i = 0; i < 100'000; ++i) ASSERT_TRUE(f.contains(present_key(i))) << i;
  EXPECT_EQ(f.estimated_count(), 100'000.0);
}

TEST(CuckooFilter, StringAndIntegerKeysAreFound) {
  cuckoo f(1000, 0.01);
  f.insert("alice");
  f.insert(std::string("bob"));
  f.insert(42);
  EXPECT_TRUE(f.contains("alice"));
  EXPECT_TRUE(f.contains(std::string_view("bob")));
  EXPECT_TRUE(f.contains(42u));  // integers are keys by value, whatever their type
  EXPECT_FALSE(f.contains("carol"));
}

TEST(CuckooFilter, AnEmptyFilterContainsNothing) {
  const cuckoo f(1000, 0.01);
  for (std::uint64_t i = 0; i < 10'000; ++i) ASSERT_FALSE(f.contains(present_key(i)));
  EXPECT_EQ(f.predicted_fpr(), 0.0);
  EXPECT_EQ(f.load_factor(), 0.0);
}

// ---- relocation and fullness ---------------------------------------------------------------------------

TEST(CuckooFilter, AFailedInsertLosesNoKeyAndLeavesTheTableUnchanged) {
  cuckoo f(geometry(1009, 4, 12));  // a prime bucket count: no power-of-two assumption anywhere
  std::vector<std::uint64_t> stored;
  std::uint64_t failures = 0;
  for (std::uint64_t i = 0; failures < 50; ++i) {
    const auto before = blume::to_bytes(f);
    if (f.insert(present_key(i))) {
      stored.push_back(present_key(i));
    } else {
      ++failures;
      ASSERT_TRUE(blume::to_bytes(f) == before) << "failed insert " << failures << " changed the filter";
    }
  }
  EXPECT_EQ(f.estimated_count(), static_cast<double>(stored.size()));
  for (const std::uint64_t k : stored) ASSERT_TRUE(f.contains(k)) << "a failed insert lost key " << k;
}

TEST(CuckooFilter, LoadBeforeTheFirstFailureIsAtLeastNinetyPercentWithFourSlotBuckets) {
  for (const std::uint32_t f_bits : {8u, 12u, 16u}) {
    for (const std::uint64_t buckets : {1000u, 4099u, 50'000u}) {
      cuckoo f(geometry(buckets, 4, f_bits));
      const std::uint64_t stored = fill_until_first_failure(f);
      EXPECT_GE(static_cast<double>(stored) / static_cast<double>(f.capacity()), 0.9)
          << "f=" << f_bits << " buckets=" << buckets;
      EXPECT_DOUBLE_EQ(f.load_factor(), static_cast<double>(stored) / static_cast<double>(f.capacity()));
    }
  }
}

TEST(CuckooFilter, WithoutRelocationsInsertsFailMuchEarlier) {
  cuckoo_geometry g = geometry(4099, 4, 12);
  g.max_kicks = 0;
  cuckoo no_kicks(g);
  cuckoo kicks(geometry(4099, 4, 12));
  EXPECT_LT(fill_until_first_failure(no_kicks) + 2000, fill_until_first_failure(kicks));
}

TEST(CuckooFilter, OneSlotBucketsWork) {
  cuckoo f(geometry(3001, 1, 16));
  const std::uint64_t stored = fill_until_first_failure(f);
  EXPECT_GT(stored, 3001u / 3);  // b = 1 reaches about 50% load (Fan et al.)
  for (std::uint64_t i = 0; i < stored; ++i) ASSERT_TRUE(f.contains(present_key(i)));
}

// ---- duplicates, erase and count -----------------------------------------------------------------------

TEST(CuckooFilter, AKeyFitsTwiceTheBucketSizeTimesThenInsertFailsGracefully) {
  for (const std::uint32_t b : {2u, 4u}) {
    cuckoo f(geometry(1000, b, 12));
    for (std::uint32_t i = 0; i < 2 * b; ++i) ASSERT_TRUE(f.insert("hot")) << "copy " << i;
    const auto before = blume::to_bytes(f);
    EXPECT_FALSE(f.insert("hot"));
    EXPECT_TRUE(blume::to_bytes(f) == before);
    EXPECT_EQ(f.count("hot"), 2u * b);
    EXPECT_TRUE(f.insert("cold")) << "other keys still fit";
  }
}

TEST(CuckooFilter, CountIsTheNumberOfStoredCopies) {
  cuckoo f(10'000, 0.001);
  for (int i = 0; i < 3; ++i) f.insert("thrice");
  f.insert("once");
  EXPECT_EQ(f.count("thrice"), 3u);
  EXPECT_EQ(f.count("once"), 1u);
  EXPECT_EQ(f.count("never"), 0u);
  EXPECT_EQ(f.estimated_count(), 4.0);
}

TEST(CuckooFilter, EraseRemovesOneCopy) {
  cuckoo f(10'000, 0.001);
  f.insert("twice");
  f.insert("twice");
  EXPECT_TRUE(f.erase("twice"));
  EXPECT_EQ(f.count("twice"), 1u);
  EXPECT_TRUE(f.contains("twice"));
  EXPECT_TRUE(f.erase("twice"));
  EXPECT_FALSE(f.contains("twice"));
  EXPECT_FALSE(f.erase("twice"));
  EXPECT_EQ(f.estimated_count(), 0.0);
}

TEST(CuckooFilter, EraseOfAnAbsentKeyIsRefusedAndChangesNothing) {
  cuckoo f(10'000, 0.001);
  for (std::uint64_t i = 0; i < 5000; ++i) f.insert(present_key(i));
  const auto before = blume::to_bytes(f);
  std::uint64_t refused = 0;
  for (std::uint64_t i = 0; i < 5000; ++i) {
    if (f.contains(absent_key(i))) continue;  // a false positive would be erased: skip those
    ASSERT_FALSE(f.erase(absent_key(i)));
    ++refused;
  }
  EXPECT_GT(refused, 4900u);
  EXPECT_TRUE(blume::to_bytes(f) == before);
}

TEST(CuckooFilter, EraseNeverRemovesAnotherPresentKey) {
  cuckoo f(20'000, 0.001);
  for (std::uint64_t i = 0; i < 19'000; ++i) ASSERT_TRUE(f.insert(present_key(i)));
  for (std::uint64_t i = 0; i < 19'000; i += 2) ASSERT_TRUE(f.erase(present_key(i)));
  for (std::uint64_t i = 1; i < 19'000; i += 2) ASSERT_TRUE(f.contains(present_key(i))) << i;
  EXPECT_EQ(f.estimated_count(), 9500.0);
}

TEST(CuckooFilter, ErasingEverythingRestoresTheEmptyTable) {
  cuckoo f(10'000, 0.01);
  const auto empty = blume::to_bytes(f);
  for (std::uint64_t i = 0; i < 10'000; ++i) ASSERT_TRUE(f.insert(present_key(i)));
  for (std::uint64_t i = 0; i < 10'000; ++i) ASSERT_TRUE(f.erase(present_key(i)));
  EXPECT_TRUE(blume::to_bytes(f) == empty);
}

// ---- growth --------------------------------------------------------------------------------------------

TEST(CuckooFilter, GrowthBySubFiltersKeepsEveryKey) {
  cuckoo f(geometry(64, 4, 12, /*expansion=*/2, /*max_filters=*/8));
  for (std::uint64_t i = 0; i < 5000; ++i) ASSERT_TRUE(f.insert(present_key(i))) << i;
  EXPECT_GT(f.sub_filters(), 1u);
  for (std::uint64_t i = 0; i < 5000; ++i) ASSERT_TRUE(f.contains(present_key(i))) << i;
  EXPECT_EQ(f.estimated_count(), 5000.0);
  std::uint64_t slots = 0, buckets = 64;
  for (std::size_t i = 0; i < f.sub_filters(); ++i, buckets *= 2) slots += buckets * 4;
  EXPECT_EQ(f.capacity(), slots) << "sub-filter i has buckets·expansion^i buckets";
}

TEST(CuckooFilter, ANonGrowingFilterKeepsOneSubFilter) {
  cuckoo f(geometry(64, 4, 12));
  fill_until_first_failure(f);
  EXPECT_EQ(f.sub_filters(), 1u);
}

TEST(CuckooFilter, GrowthStopsAtTheMaximumNumberOfSubFilters) {
  cuckoo f(geometry(16, 4, 12, /*expansion=*/1, /*max_filters=*/3));
  const std::uint64_t stored = fill_until_first_failure(f);
  EXPECT_EQ(f.sub_filters(), 3u);
  EXPECT_GE(stored, static_cast<std::uint64_t>(0.8 * 3 * 64));
  const auto before = blume::to_bytes(f);
  EXPECT_FALSE(f.insert(present_key(stored)));
  EXPECT_TRUE(blume::to_bytes(f) == before);
  for (std::uint64_t i = 0; i < stored; ++i) ASSERT_TRUE(f.contains(present_key(i)));
}

TEST(CuckooFilter, EraseAndCountScanEverySubFilter) {
  cuckoo f(geometry(8, 2, 12, /*expansion=*/1, /*max_filters=*/16));
  for (int i = 0; i < 12; ++i) ASSERT_TRUE(f.insert("many"));  // 2b = 4 copies per sub-filter
  EXPECT_GE(f.sub_filters(), 3u);
  EXPECT_EQ(f.count("many"), 12u);
  for (int i = 0; i < 12; ++i) ASSERT_TRUE(f.erase("many")) << i;
  EXPECT_FALSE(f.contains("many"));
}

TEST(CuckooFilter, EraseOfInsertedKeysNeverCausesAFalseNegativeAcrossSubFilters) {
  // Keys that collide (same fingerprint and bucket pair) in one sub-filter while their copies sit in
  // different sub-filters: erase must leave every remaining key visible, whatever copy it removes.
  for (const std::uint32_t expansion : {1u, 2u, 3u}) {
    cuckoo f(geometry(20, 4, 8, expansion, /*max_filters=*/12));  // 8-bit fingerprints: many collisions
    const std::uint64_t keys = expansion == 1 ? 800 : 6000;       // 12 sub-filters of 80 slots, or more
    for (std::uint64_t i = 0; i < keys; ++i) ASSERT_TRUE(f.insert(present_key(i)));
    ASSERT_GT(f.sub_filters(), 3u);
    for (std::uint64_t i = 0; i < keys; i += 2) ASSERT_TRUE(f.erase(present_key(i))) << i;
    for (std::uint64_t i = 1; i < keys; i += 2)
      ASSERT_TRUE(f.contains(present_key(i))) << "expansion " << expansion << " key " << i;
  }
}

TEST(CuckooFilter, ClearEmptiesAndDropsGrownSubFilters) {
  cuckoo f(geometry(16, 4, 8, /*expansion=*/2));
  const cuckoo fresh = f;
  for (std::uint64_t i = 0; i < 500; ++i) f.insert(present_key(i));
  ASSERT_GT(f.sub_filters(), 1u);
  f.clear();
  EXPECT_EQ(f.sub_filters(), 1u);
  EXPECT_EQ(f.estimated_count(), 0.0);
  EXPECT_TRUE(f == fresh);
  EXPECT_TRUE(f.insert("again"));
}

// ---- bulk calls ----------------------------------------------------------------------------------------

TEST(CuckooFilter, BulkCallsAgreeWithSingleKeyCalls) {
  cuckoo bulk(geometry(700, 4, 8, /*expansion=*/2));  // grows during insert_many
  cuckoo single = bulk;
  const auto keys = blume_test::present_keys(5000);
  EXPECT_EQ(bulk.insert_many(keys), 5000u);
  for (const std::uint64_t k : keys) single.insert(k);
  EXPECT_TRUE(bulk == single);
  std::vector<std::uint64_t> probes = blume_test::absent_keys(20'000);
  probes.insert(probes.end(), keys.begin(), keys.end());
  std::vector<bool> answers;
  const std::size_t hits = bulk.contains_many(probes, std::back_inserter(answers));
  std::size_t expected = 0;
  for (std::size_t i = 0; i < probes.size(); ++i) {
    ASSERT_EQ(answers[i], bulk.contains(probes[i])) << i;
    expected += answers[i];
  }
  EXPECT_EQ(hits, expected);
  EXPECT_EQ(bulk.count_contained(probes), expected);
  std::vector<blume::digest> digests;
  for (const std::uint64_t k : probes) digests.push_back(bulk.hash(k));
  EXPECT_EQ(bulk.count_contained(digests), expected);
}

// contains() has a short path for one table with whole-byte buckets of at most 64 bits (compile-time
// geometry for b = 4 with f = 8, 12, 16; run-time for others such as 2 × 16 or 8 × 8) and a general one
// (other buckets, grown filters). count() always reads slot by slot, so each path must agree with it,
// key by key, one at a time and in bulk.
TEST(CuckooFilter, EveryLookupPathAgreesWithSlotBySlotCount) {
  struct shape {
    std::uint32_t bucket_size, fingerprint_bits, expansion;
  };
  for (const shape s : {shape{4, 8, 0}, shape{4, 12, 0}, shape{4, 16, 0}, shape{2, 16, 0}, shape{8, 8, 0},
                        shape{3, 12, 0}, shape{1, 12, 0}, shape{4, 12, 2}}) {
    SCOPED_TRACE("b = " + std::to_string(s.bucket_size) + ", f = " + std::to_string(s.fingerprint_bits) +
                 ", expansion " + std::to_string(s.expansion));
    cuckoo f(geometry(301, s.bucket_size, s.fingerprint_bits, s.expansion));
    const auto keys = blume_test::present_keys(s.expansion != 0 ? 3000 : 250 * s.bucket_size);
    f.insert_many(keys);
    if (s.expansion != 0) {
      ASSERT_GT(f.sub_filters(), 1u);
    }
    std::vector<std::uint64_t> probes = blume_test::absent_keys(30'000);
    probes.insert(probes.end(), keys.begin(), keys.end());
    std::size_t expected = 0, false_positives = 0;
    for (const std::uint64_t k : probes) {
      const bool hit = f.count(k) > 0;
      ASSERT_EQ(f.contains(k), hit) << k;
      expected += hit;
    }
    for (std::size_t i = 0; i < 30'000; ++i) false_positives += f.contains(probes[i]);
    // The absent probes do meet stored fingerprints (expected ≥ 50 for f ≤ 12; a handful for f = 16).
    if (s.fingerprint_bits <= 12) {
      EXPECT_GT(false_positives, 0u);
    }
    EXPECT_EQ(f.count_contained(probes), expected);
  }
}

TEST(CuckooFilter, InsertManyReportsHowManyWereStored) {
  cuckoo f(geometry(100, 4, 12));
  const std::size_t stored = f.insert_many(blume_test::present_keys(1000));
  EXPECT_LE(stored, 400u);
  EXPECT_GE(stored, 360u);
  EXPECT_EQ(f.estimated_count(), static_cast<double>(stored));
}

// ---- rates and memory ----------------------------------------------------------------------------------

TEST(CuckooFilter, PredictedFprIsTheModelAtTheCurrentLoad) {
  cuckoo f(geometry(10'000, 4, 8));
  for (std::uint64_t i = 0; i < 20'000; ++i) f.insert(present_key(i));
  const double load = 20'000.0 / 40'000.0;
  EXPECT_DOUBLE_EQ(f.load_factor(), load);
  EXPECT_NEAR(f.predicted_fpr(), 1 - std::pow(1 - 1.0 / 255, 2 * 4 * load), 1e-12);
}

struct rate_case {
  std::uint32_t fingerprint_bits;
  std::uint64_t probes;
};

TEST(CuckooFilter, MeasuredFprMatchesThePredictionAtOneMillionKeys) {
  constexpr std::uint64_t n = blume_test::scaled(1'000'000);
  for (const rate_case c : {rate_case{8, blume_test::scaled(1'000'000)}, rate_case{12, blume_test::scaled(2'000'000)},
                            rate_case{16, blume_test::scaled(4'000'000)}}) {
    const std::uint64_t buckets = (n * 100 + 379) / 380;  // ⌈n / (4 · 0.95)⌉, as plan_for sizes it
    cuckoo f(geometry(buckets, 4, c.fingerprint_bits));
    ASSERT_EQ(f.insert_many(blume_test::present_keys(n)), n) << "f=" << c.fingerprint_bits;
    const double measured =
        static_cast<double>(f.count_contained(blume_test::absent_key_view(c.probes))) / static_cast<double>(c.probes);
    const double predicted = f.predicted_fpr();
    const double bits_per_key = static_cast<double>(blume::to_bytes(f).size() - blume::header_size) * 8 / n;
    std::printf("f=%u: measured FPR %.6g, predicted %.6g, %.3f bits/key, load %.4f\n", c.fingerprint_bits, measured,
                predicted, bits_per_key, f.load_factor());
    EXPECT_NEAR(measured, predicted, blume_test::fpr_tolerance(predicted, static_cast<double>(c.probes)))
        << "f=" << c.fingerprint_bits;
    EXPECT_NEAR(bits_per_key, c.fingerprint_bits / 0.95, 0.01) << "fingerprints are packed tightly";
  }
}

TEST(CuckooFilter, TwelveBitFingerprintsTakeTwelveBits) {
  const cuckoo f(geometry(1000, 4, 12));
  EXPECT_EQ(blume::to_bytes(f).size() - blume::header_size, (1000u * 4 * 12 + 64 + 511) / 512 * 64);
  EXPECT_LT(f.size_in_bytes(), 1000u * 4 * 12 / 8 + 512);
}

TEST(CuckooFilter, ExpressesRedisBloomsGeometry) {
  // CF.RESERVE key 1024 BUCKETSIZE 2 MAXITERATIONS 20 EXPANSION 1: 8-bit fingerprints, 512 buckets.
  cuckoo_geometry g = geometry(512, 2, 8, /*expansion=*/1);
  g.max_kicks = 20;
  cuckoo f(g);
  for (std::uint64_t i = 0; i < 3000; ++i) ASSERT_TRUE(f.insert(present_key(i)));
  EXPECT_GT(f.sub_filters(), 1u);
  const cuckoo loaded = blume::from_bytes<cuckoo>(blume::to_bytes(f));
  EXPECT_EQ(loaded.geometry(), g);
  for (std::uint64_t i = 0; i < 3000; ++i) ASSERT_TRUE(loaded.contains(present_key(i)));
}

// ---- planning ------------------------------------------------------------------------------------------

TEST(CuckooPlan, ChoosesTheSmallestFingerprintThatMeetsTheTarget) {
  EXPECT_EQ(blume::plan_for(1'000'000, 0.03, blume::cuckoo_filter<>::kind).hashes, 8u);
  EXPECT_EQ(blume::plan_for(1'000'000, 0.01, blume::cuckoo_filter<>::kind).hashes, 12u);
  EXPECT_EQ(blume::plan_for(1'000'000, 0.001, blume::cuckoo_filter<>::kind).hashes, 16u);
  for (const double target : {0.03, 0.01, 0.002, 0.001, 0.0002}) {
    const blume::filter_plan p = blume::plan_for(1'000'000, target, blume::cuckoo_filter<>::kind);
    EXPECT_LE(p.predicted_fpr, target) << target;
    EXPECT_EQ(p.bits % (4 * p.hashes), 0u);
    const std::uint64_t buckets = p.bits / (4 * p.hashes);
    EXPECT_LE(1'000'000.0 / (4.0 * static_cast<double>(buckets)), 0.95) << "design load";
    EXPECT_GT(1'000'000.0 / (4.0 * static_cast<double>(buckets - 1)), 0.95) << "no bucket to spare";
  }
}

TEST(CuckooPlan, RefusesRatesSixteenBitFingerprintsCannotReach) {
  const std::string message =
      message_of<blume::invalid_argument>([] { blume::plan_for(1000, 1e-5, blume::cuckoo_filter<>::kind); });
  EXPECT_TRUE(mentions_number(message, 1e-5));
}

TEST(CuckooPlan, AFilterBuiltFromAPlanHasItsGeometry) {
  const blume::filter_plan p = blume::plan_for(50'000, 0.01, blume::cuckoo_filter<>::kind);
  const cuckoo f(p);
  EXPECT_EQ(f.fingerprint_bits(), p.hashes);
  EXPECT_EQ(f.bucket_size(), 4u);
  EXPECT_EQ(f.buckets() * 4 * f.fingerprint_bits(), p.bits);
  EXPECT_EQ(blume::to_bytes(f).size() - blume::header_size, p.bytes);
}

TEST(CuckooPlan, PlanForBitsUsesTheWidestFingerprintThatFits) {
  const blume::filter_plan p = blume::plan_for_bits(1'000'000, 14'000'000, blume::cuckoo_filter<>::kind);
  EXPECT_EQ(p.hashes, 12u);  // 16-bit slots for 1M keys at 95% need 16.8M bits
  EXPECT_LE(p.bits, 14'000'000u);
  EXPECT_THROW(blume::plan_for_bits(1'000'000, 8'000'000, blume::cuckoo_filter<>::kind), blume::invalid_argument);
}

// ---- bad parameters ------------------------------------------------------------------------------------

TEST(CuckooInput, FingerprintWidthsOtherThanEightTwelveOrSixteenAreRejected) {
  for (const std::uint32_t f : {0u, 4u, 10u, 32u}) {
    const std::string message = message_of<blume::invalid_argument>([&] { cuckoo c(geometry(100, 4, f)); });
    EXPECT_TRUE(mentions(message, "fingerprint"));
    EXPECT_TRUE(mentions_number(message, f)) << message;
  }
}

TEST(CuckooInput, BucketSizesOutsideOneTo255AreRejected) {
  for (const std::uint32_t b : {0u, 256u}) {
    const std::string message = message_of<blume::invalid_argument>([&] { cuckoo c(geometry(100, b, 12)); });
    EXPECT_TRUE(mentions(message, "bucket size"));
    EXPECT_TRUE(mentions_number(message, b)) << message;
  }
  EXPECT_NO_THROW(cuckoo(geometry(10, 255, 16)));
}

TEST(CuckooInput, ZeroCapacityIsRejected) {
  EXPECT_TRUE(mentions(message_of<blume::invalid_argument>([] { cuckoo c(0, 0.01); }), "capacity"));
  EXPECT_TRUE(mentions(message_of<blume::invalid_argument>([] { cuckoo c(geometry(0, 4, 12)); }), "bucket count"));
}

TEST(CuckooInput, RatesOutsideZeroToOneAreRejectedNamingTheRate) {
  for (const double fpr : {0.0, -0.5, 1.0, 1.5}) {
    const std::string message = message_of<blume::invalid_argument>([&] { cuckoo c(1000, fpr); });
    EXPECT_TRUE(mentions_number(message, fpr)) << message;
  }
}

TEST(CuckooInput, OversizedTablesAreRefusedBeforeAllocating) {
  const std::string message =
      message_of<blume::invalid_argument>([] { cuckoo c(geometry(std::uint64_t{1} << 40, 4, 16)); });
  EXPECT_TRUE(mentions(message, "2^40"));
}

TEST(CuckooInput, ANonCuckooPlanIsRejected) {
  EXPECT_THROW(cuckoo(blume::plan_for(1000, 0.01)), blume::invalid_argument);
}

// ---- combining -----------------------------------------------------------------------------------------

TEST(CuckooFilter, HasNoMergeBecauseItIsUnsound) {
  static_assert(!blume::can_merge<cuckoo>);
  EXPECT_TRUE(mentions(std::string(cuckoo::merge_refusal), "not sound"));
}

TEST(CuckooFilter, CheckCompatibleNamesTheDifference) {
  const cuckoo a(geometry(100, 4, 12)), b(geometry(100, 4, 16)), c(geometry(100, 4, 12), 7);
  EXPECT_NO_THROW(a.check_compatible(cuckoo(geometry(100, 4, 12))));
  EXPECT_TRUE(mentions(message_of<blume::incompatible_filters>([&] { a.check_compatible(b); }), "fingerprint bits"));
  EXPECT_TRUE(mentions(message_of<blume::incompatible_filters>([&] { a.check_compatible(c); }), "seeds"));
}

// ---- file format ---------------------------------------------------------------------------------------

cuckoo grown_filter() {
  cuckoo f(geometry(40, 4, 12, /*expansion=*/2, /*max_filters=*/6), 99);
  for (std::uint64_t i = 0; i < 600; ++i) EXPECT_TRUE(f.insert(present_key(i)));
  EXPECT_GT(f.sub_filters(), 2u);
  return f;
}

TEST(CuckooFormat, HeaderRecordsTheGeometry) {
  const cuckoo f = grown_filter();
  const blume::file_header h = blume::decode_header(blume::to_bytes(f));
  EXPECT_EQ(h.kind, blume::cuckoo_filter<>::kind);
  EXPECT_EQ(h.primary, 40u);
  EXPECT_EQ(h.secondary, 12u);
  EXPECT_EQ(h.layout, 4u);
  EXPECT_EQ(h.seed, 99u);
  EXPECT_EQ(h.inserted, 600u);
  EXPECT_EQ(h.extra[0], 2u);
  EXPECT_EQ(h.extra[1], 500u);
  EXPECT_EQ(h.extra[2], f.sub_filters());
  EXPECT_EQ(h.extra[3], 6u);
}

void expect_same_filter(const cuckoo& loaded, const cuckoo& original) {
  EXPECT_TRUE(loaded == original);
  EXPECT_EQ(loaded.estimated_count(), original.estimated_count());
  EXPECT_EQ(loaded.sub_filters(), original.sub_filters());
  EXPECT_EQ(loaded.seed(), original.seed());
  EXPECT_DOUBLE_EQ(loaded.predicted_fpr(), original.predicted_fpr());
  for (std::uint64_t i = 0; i < 600; ++i) ASSERT_TRUE(loaded.contains(present_key(i)));
}

TEST(CuckooFormat, RoundTripsThroughBytes) {
  const cuckoo f = grown_filter();
  expect_same_filter(blume::from_bytes<cuckoo>(blume::to_bytes(f)), f);
}

TEST(CuckooFormat, RoundTripsThroughAFile) {
  blume_test::temp_dir dir;
  const cuckoo f = grown_filter();
  blume::save(f, dir / "f.blume");
  expect_same_filter(blume::load<cuckoo>(dir / "f.blume"), f);
}

TEST(CuckooFormat, AMappedFilterAnswersAndKeepsWorkingWithoutTouchingTheFile) {
  blume_test::temp_dir dir;
  const cuckoo f = grown_filter();
  blume::save(f, dir / "f.blume");
  const auto on_disk = blume_test::read_file_bytes(dir / "f.blume");
  for (const blume::verify level : {blume::verify::full, blume::verify::header_only}) {
    cuckoo mapped = blume::map_file<cuckoo>(dir / "f.blume", level);
    expect_same_filter(mapped, f);
    for (std::uint64_t i = 600; i < 3000; ++i) ASSERT_TRUE(mapped.insert(present_key(i)));  // grows past the file
    for (std::uint64_t i = 0; i < 600; i += 2) ASSERT_TRUE(mapped.erase(present_key(i)));
    for (std::uint64_t i = 1; i < 3000; i += (i < 600 ? 2 : 1)) ASSERT_TRUE(mapped.contains(present_key(i)));
    mapped.clear();
    EXPECT_FALSE(mapped.contains(present_key(1)));
  }
  EXPECT_TRUE(blume_test::read_file_bytes(dir / "f.blume") == on_disk);
}

TEST(CuckooFormat, EveryCorruptHeaderByteIsRejected) {
  const auto good = blume::to_bytes(grown_filter());
  for (std::size_t i = 0; i < blume::header_size; ++i) {
    auto bytes = good;
    bytes[i] ^= std::byte{0x5a};
    EXPECT_THROW(blume::from_bytes<cuckoo>(bytes), blume::format_error) << "byte " << i;
  }
}

TEST(CuckooFormat, EveryTruncationIsRejected) {
  blume_test::temp_dir dir;
  const auto good = blume::to_bytes(cuckoo(geometry(8, 4, 12, 2)));
  for (std::size_t length = 0; length < good.size(); ++length) {
    const std::vector<std::byte> cut(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(length));
    EXPECT_THROW(blume::from_bytes<cuckoo>(cut), blume::format_error) << length;
    blume_test::write_file_bytes(dir / "cut.blume", cut);
    EXPECT_THROW(blume::load<cuckoo>(dir / "cut.blume"), blume::format_error) << length;
    EXPECT_THROW(blume::map_file<cuckoo>(dir / "cut.blume"), blume::format_error) << length;
  }
}

TEST(CuckooFormat, CorruptSlotsGiveAFormatErrorOrAWorkingFilter) {
  cuckoo f(geometry(24, 4, 12, /*expansion=*/2, /*max_filters=*/3));
  for (std::uint64_t i = 0; i < 150; ++i) f.insert(present_key(i));
  ASSERT_GT(f.sub_filters(), 1u);
  const auto good = blume::to_bytes(f);
  std::size_t rejected = 0, accepted = 0;
  for (std::size_t i = blume::header_size; i < good.size(); ++i) {
    for (const std::byte flip : {std::byte{0x01}, std::byte{0xff}}) {
      auto bytes = good;
      bytes[i] ^= flip;
      rewrite_header(bytes, [](blume::file_header&) {});  // a forger who fixes the checksum
      try {
        cuckoo damaged = blume::from_bytes<cuckoo>(bytes);
        ++accepted;
        for (std::uint64_t k = 0; k < 200; ++k) {
          damaged.contains(present_key(k));
          damaged.count(present_key(k));
          damaged.insert(absent_key(k));
          damaged.erase(present_key(k));
        }
      } catch (const blume::format_error&) {
        ++rejected;
      }
    }
  }
  EXPECT_GT(rejected, 0u) << "changed fingerprint counts and padding bits are caught";
  EXPECT_GT(accepted, 0u) << "a slot rewritten to another fingerprint is indistinguishable from a valid one";
}

TEST(CuckooFormat, PaddingBitsMustBeZero) {
  auto bytes = blume::to_bytes(cuckoo(geometry(10, 4, 12)));  // 480 bits of slots in a 128-byte table
  bytes[blume::header_size + 100] = std::byte{1};
  rewrite_header(bytes, [](blume::file_header&) {});
  EXPECT_TRUE(mentions(message_of<blume::format_error>([&] { blume::from_bytes<cuckoo>(bytes); }), "padding"));
}

TEST(CuckooFormat, TheStoredCountMustMatchTheTables) {
  cuckoo f(geometry(10, 4, 12));
  f.insert("x");
  auto bytes = blume::to_bytes(f);
  rewrite_header(bytes, [](blume::file_header& h) { h.inserted = 2; });
  EXPECT_TRUE(mentions(message_of<blume::format_error>([&] { blume::from_bytes<cuckoo>(bytes); }), "2"));
}

TEST(CuckooFormat, HostileParametersAreRejected) {
  const auto good = blume::to_bytes(grown_filter());
  const std::vector<std::function<void(blume::file_header&)>> edits = {
      [](blume::file_header& h) { h.primary = 0; },
      [](blume::file_header& h) { h.primary = std::uint64_t{1} << 60; },
      [](blume::file_header& h) { h.secondary = 10; },
      [](blume::file_header& h) { h.layout = 0; },
      [](blume::file_header& h) { h.layout = 256; },
      [](blume::file_header& h) { h.extra[0] = 0; },  // more than one sub-filter without growth
      [](blume::file_header& h) { h.extra[0] = std::uint64_t{1} << 40; },
      [](blume::file_header& h) { h.extra[1] = 70'000; },
      [](blume::file_header& h) { h.extra[2] = 0; },
      [](blume::file_header& h) { h.extra[2] = 7; },               // beyond max sub-filters (6)
      [](blume::file_header& h) { h.extra[2] = h.extra[2] + 1; },  // payload too short for one more
      [](blume::file_header& h) { h.extra[3] = 65'537; },          // beyond cuckoo_max_filters
      [](blume::file_header& h) { h.extra[4] = 1; },
      [](blume::file_header& h) { h.extra[5] = 1; },
  };
  for (std::size_t i = 0; i < edits.size(); ++i) {
    auto bytes = good;
    rewrite_header(bytes, edits[i]);
    EXPECT_THROW(blume::from_bytes<cuckoo>(bytes), blume::format_error) << "edit " << i;
  }
}

TEST(CuckooFormat, AFileOfAnotherKindIsRefused) {
  const auto bytes = blume::to_bytes(blume::bloom_filter<>(1000, 0.01));
  EXPECT_TRUE(mentions(message_of<blume::format_error>([&] { blume::from_bytes<cuckoo>(bytes); }), "bloom"));
}

// Issue 11: opening took time quadratic in the sub-filter count (each sub-filter's size was found by
// multiplying up from the first), and this 4 MiB file of 65,536 one-bucket sub-filters took 7.5 s.
TEST(CuckooFormat, AFileOfManySubFiltersOpensInLinearTime) {
  const cuckoo_geometry g = geometry(1, 4, 8, 1, blume::cuckoo_max_filters);
  const std::uint64_t count = blume::cuckoo_max_filters;
  blume::file_header h;
  h.kind = blume::cuckoo_filter<>::kind;
  h.hash = cuckoo::hasher_type::id;
  h.seed = cuckoo::hasher_type::default_seed;
  h.primary = g.buckets;
  h.secondary = g.fingerprint_bits;
  h.layout = g.bucket_size;
  h.extra = {g.expansion, g.max_kicks, count, g.max_filters, 0, 0};
  h.payload_size = count * g.table_bytes(g.buckets);
  ASSERT_EQ(h.payload_size, 4u << 20);
  std::vector<std::byte> bytes(blume::header_size + h.payload_size);
  const auto header = blume::encode_header(h);
  std::copy(header.begin(), header.end(), bytes.begin());
  blume_test::fix_checksums(bytes);

  const auto started = std::chrono::steady_clock::now();
  const cuckoo f = blume::from_bytes<cuckoo>(bytes);
  const auto took = std::chrono::steady_clock::now() - started;
  std::printf("opened %zu sub-filters in %.1f ms\n", f.sub_filters(),
              std::chrono::duration<double, std::milli>(took).count());
  EXPECT_EQ(f.sub_filters(), count);
  EXPECT_LT(took, std::chrono::seconds(1));
}

}  // namespace
