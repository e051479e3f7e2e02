// SPDX-License-Identifier: Apache-2.0
// Hash compaction: no false negatives through displacement and twins, a table that depends only on its set,
// the rate it prints and the omissions it expects held to measurement for every signature width and key
// pattern, refusal when full, planning against a classic filter, and the file format's checks.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <vector>

#include "forge.hpp"
#include "test_support.hpp"

namespace {

using blume::insert_result;
using blume_test::absent_key;
using blume_test::message_of;
using blume_test::present_key;
using compaction = blume::compaction_filter<>;

/// Serialized bytes with the payload changed by `edit` and the checksum recomputed, so only the table's own
/// checks stand between them and a filter.
template <class Edit>
std::vector<std::byte> with_payload(std::vector<std::byte> bytes, Edit edit) {
  edit(bytes.data() + blume::header_size, bytes.size() - blume::header_size);
  blume::file_header h = blume::decode_header(bytes);
  h.payload_checksum = XXH64(bytes.data() + blume::header_size, bytes.size() - blume::header_size, 0);
  const auto header = blume::encode_header(h);
  std::copy(header.begin(), header.end(), bytes.begin());
  return bytes;
}

// ---- membership ----------------------------------------------------------------------------------------

// Filled to its limit with small signatures (so that displacements and twins are frequent), every key that
// was ever answered "added" or "present" is found.
TEST(CompactionFilter, EveryKeyTakenIsFoundThroughDisplacementsAndTwins) {
  for (const std::uint32_t b : {1u, 3u, 8u, 17u, 32u}) {
    auto f = compaction::with_slots(100'003, b);
    std::vector<std::uint64_t> taken;
    for (std::uint64_t i = 0;; ++i) {
      const insert_result r = f.try_insert(present_key(i));
      if (r == insert_result::full) break;
      taken.push_back(i);
    }
    EXPECT_EQ(f.occupied(), f.capacity()) << b;
    EXPECT_LE(f.occupied(), f.inserted());
    for (const std::uint64_t i : taken) ASSERT_TRUE(f.contains(present_key(i))) << "b = " << b << ", key " << i;
    // Full: a new key is refused and changes nothing, a key it holds is still "present".
    const auto before = blume::to_bytes(f);
    std::uint64_t refused = 0;
    for (std::uint64_t i = 0; i < 1000; ++i) {
      const insert_result r = f.try_insert(absent_key(i));
      refused += r == insert_result::full;
      if (!f.contains(absent_key(i))) {
        EXPECT_EQ(r, insert_result::full);
      }
    }
    EXPECT_GT(refused, 0u);
    EXPECT_EQ(blume::to_bytes(f), before);
    EXPECT_EQ(f.try_insert(present_key(taken.front())), insert_result::present);
  }
}

TEST(CompactionFilter, TryInsertSaysAddedThenPresent) {
  compaction f(10'000, 0.001);
  EXPECT_EQ(f.try_insert("state"), insert_result::added);
  EXPECT_EQ(f.try_insert("state"), insert_result::present);
  EXPECT_TRUE(f.contains("state"));
  EXPECT_EQ(f.inserted(), 1u);
  EXPECT_EQ(f.occupied(), 1u);
  f.clear();
  EXPECT_FALSE(f.contains("state"));
  EXPECT_EQ(f.inserted(), 0u);
}

// Ordered hashing stores a set the same way whatever the order of its inserts.
TEST(CompactionFilter, TheTableDependsOnlyOnTheSet) {
  std::vector<std::uint64_t> keys = blume_test::present_keys(9000);
  auto a = compaction::with_slots(10'007, 6);
  for (const auto k : keys) a.insert(k);
  std::mt19937_64 rng(7);
  std::shuffle(keys.begin(), keys.end(), rng);
  auto b = compaction::with_slots(10'007, 6);
  for (const auto k : keys) b.insert(k);
  for (std::uint64_t i = 0; i < a.slots(); ++i) ASSERT_EQ(a.cell(i), b.cell(i)) << i;
}

// ---- the model ------------------------------------------------------------------------------------------

// The rate it prints is the rate a key never inserted meets, and the keys it answered "present" while
// filling (omissions) are the number it expects, for every signature width from 1 to 16 bits, five key
// patterns and loads from 25% to 95%.
TEST(CompactionModel, TheRateItPrintsAndTheOmissionsItExpectsAreMeasured) {
  const std::uint64_t slots = blume_test::slow_build ? 100'003 : 1'000'003;
  const std::uint64_t probes = blume_test::scaled(1'000'000);
  for (const std::uint32_t b : {1u, 4u, 6u, 8u, 12u, 16u}) {
    for (int pattern = 0; pattern < blume_test::key_patterns; ++pattern) {
      auto f = compaction::with_slots(slots, b);
      std::uint64_t next = 0, omitted = 0;
      for (const double load : {0.25, 0.5, 0.75, 0.9, 0.95}) {
        while (f.load_factor() < load) {
          const insert_result r = f.try_insert(blume_test::pattern_key(pattern, next));
          if (r == insert_result::full) break;
          omitted += r == insert_result::present;
          ++next;
        }
        std::uint64_t hits = 0;
        for (std::uint64_t i = 0; i < probes; ++i)
          hits +=
              f.contains(blume_test::pattern_key(pattern, (std::uint64_t{1} << 28) + i));  // past every key inserted
        const std::string where = std::string(blume_test::pattern_names[pattern]) + ", b = " + std::to_string(b) +
                                  ", load " + std::to_string(f.load_factor());
        EXPECT_TRUE(blume_test::within_binomial_999(static_cast<double>(hits), static_cast<double>(probes),
                                                    f.predicted_fpr(), 0.02))
            << where;
        // Omissions are (nearly) Poisson with the expected count as mean: 3.29 σ plus 4% for the model.
        const double expected = f.expected_omissions();
        EXPECT_LE(std::abs(static_cast<double>(omitted) - expected), 3.29 * std::sqrt(expected) + 0.04 * expected + 2)
            << where << ": " << omitted << " omitted, " << expected << " expected";
      }
    }
  }
}

TEST(CompactionModel, OneSignatureIsABitArrayOfOneHash) {
  for (const double a : {0.1, 0.5, 0.9}) EXPECT_NEAR(blume::math::compaction_fpr(a, 1), a, 1e-9);
}

TEST(CompactionModel, TheClosedFormMeetsTheWalkWhereTheyMeet) {
  // Above 4095 signatures the model switches from walking every signature to its closed form.
  for (const double x : {0.25, 0.5, 0.9}) {
    const auto walked = blume::math::compaction_after(x, 4095);
    const auto closed = blume::math::compaction_after(x, 4097);
    EXPECT_NEAR(walked.fpr * 4095, closed.fpr * 4097, 5e-3 * walked.fpr * 4095) << x;
  }
}

// ---- planning ---------------------------------------------------------------------------------------------

TEST(CompactionPlan, MeetsTheTargetWithPrimeSlotsAndBeatsAClassicFilterBelowOnePercent) {
  for (const double fpr : {0.1, 0.01, 0.001, 0.0001}) {
    const auto p = compaction::plan(1'000'000, fpr);
    EXPECT_LE(p.predicted_fpr, fpr);
    EXPECT_TRUE(blume::detail::is_prime(p.bits / p.hashes));
    const compaction f(p);
    EXPECT_EQ(f.bits(), p.bits);
    if (fpr <= 0.001) {
      EXPECT_LT(p.bits, blume::bloom_filter<>::plan(1'000'000, fpr).bits) << fpr;
    }
  }
  const auto budget = compaction::plan_for_bits(1'000'000, 12'000'000);
  EXPECT_LE(budget.bits, 12'000'000u);
  EXPECT_LT(budget.predicted_fpr, 0.003);
  EXPECT_THROW(compaction::plan_for_bits(1'000'000, 400'000), blume::invalid_argument);
}

TEST(CompactionPlan, RefusesBadGeometry) {
  EXPECT_THROW(compaction::with_slots(100'000, 8), blume::invalid_argument);  // not a prime
  EXPECT_TRUE(blume_test::mentions(
      message_of<blume::invalid_argument>([] { (void)compaction::with_slots(100'000, 8); }), "100003"));
  EXPECT_THROW(compaction::with_slots(100'003, 0), blume::invalid_argument);
  EXPECT_THROW(compaction::with_slots(100'003, 33), blume::invalid_argument);
  EXPECT_THROW(compaction::with_slots(blume::detail::prime_at_least(std::uint64_t{1} << 36), 32),
               blume::invalid_argument);
}

// ---- files ------------------------------------------------------------------------------------------------

TEST(CompactionFile, RoundTripsAndRefusesWhatNoInsertWrites) {
  compaction f(50'000, 0.01);
  for (std::uint64_t i = 0; i < 50'000; ++i) f.insert(present_key(i));
  const auto bytes = blume::to_bytes(f);
  const auto g = blume::from_bytes<compaction>(bytes);
  EXPECT_EQ(g, f);
  EXPECT_EQ(g.occupied(), f.occupied());
  for (std::uint64_t i = 0; i < 50'000; ++i) ASSERT_TRUE(g.contains(present_key(i)));

  const std::uint64_t used_bits = f.slots() * f.signature_bits();
  if (used_bits % 64 != 0) {
    const auto past_end =
        with_payload(bytes, [&](std::byte* p, std::size_t) { p[used_bits / 8] |= static_cast<std::byte>(0x80); });
    EXPECT_THROW((void)blume::from_bytes<compaction>(past_end), blume::format_error);
  }
  // Every slot used: a walk could never end.
  const auto full = with_payload(bytes, [&](std::byte* p, std::size_t n) {
    std::fill(p, p + n, std::byte{0xff});
    if (used_bits % 64 != 0) {
      std::uint64_t last = ~std::uint64_t{0} >> (64 - used_bits % 64);
      std::memcpy(p + n - 8, &last, 8);
    }
  });
  EXPECT_THROW((void)blume::from_bytes<compaction>(full), blume::format_error);
}

// A file may announce any count of keys: at 2^64 − 1, an insert keeps the count there instead of wrapping
// it below the signatures the table holds, which the file's next reader would refuse (found by fuzz.file).
TEST(CompactionFile, AnAnnouncedCountAtItsLimitStaysThere) {
  compaction f(1'000, 0.01);
  for (std::uint64_t i = 0; i < 100; ++i) f.insert(present_key(i));
  auto bytes = blume::to_bytes(f);
  blume::detail::write_le<std::uint64_t>(bytes.data() + blume::detail::off_inserted, ~std::uint64_t{0});
  blume_test::fix_checksums(bytes);
  auto g = blume::from_bytes<compaction>(bytes);
  for (std::uint64_t i = 100; i < 200; ++i) g.insert(present_key(i));
  EXPECT_EQ(g.inserted(), ~std::uint64_t{0});
  const auto back = blume::from_bytes<compaction>(blume::to_bytes(g));
  for (std::uint64_t i = 0; i < 200; ++i) ASSERT_TRUE(back.contains(present_key(i)));
}

// A forged table whose walk runs past the probe limit: the lookup answers "maybe" at once and the insert
// is refused without changing a byte.
TEST(CompactionFile, AForgedLongWalkCannotStallOrLoseKeys) {
  auto f = compaction::with_slots(1'000'003, 8);
  const blume::digest d = f.hash(std::string_view("probe"));
  const std::uint64_t c = f.signature(d), step = f.step_of(c);
  ASSERT_LT(c, 255u);
  const std::uint64_t empty = f.slots() - f.capacity();
  // Every slot holds 255 but 5% of them (one byte a slot at b = 8), placed on this walk past the limit, which are empty.
  auto bytes = with_payload(blume::to_bytes(f), [&](std::byte* p, std::size_t n) {
    std::memset(p, 0xff, f.slots());
    std::memset(p + f.slots(), 0, n - f.slots());
    std::uint64_t j = f.start(d);
    for (std::uint64_t i = 0; i < blume::compaction_probe_limit + empty + 2; ++i) {
      if (i >= blume::compaction_probe_limit + 2) p[j] = std::byte{0};
      j = (j + step) % f.slots();
    }
  });
  blume::file_header h = blume::decode_header(bytes);
  h.inserted = f.slots() - empty;
  const auto header = blume::encode_header(h);
  std::copy(header.begin(), header.end(), bytes.begin());
  auto forged = blume::from_bytes<compaction>(bytes);
  EXPECT_TRUE(forged.contains(d));
  EXPECT_EQ(forged.try_insert(d), insert_result::full);
  EXPECT_EQ(blume::to_bytes(forged), bytes);
}

}  // namespace
