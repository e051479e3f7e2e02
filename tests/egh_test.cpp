// SPDX-License-Identifier: Apache-2.0
// The EGH filter: no false positive inside its zone (every absent key of a 2^16 universe, for random and
// clustered sets of every size up to d; 10M absent probes in 2^32 and 2^64 universes), the rate beyond the
// zone held to its model for random, sequential, strided and negative keys, the planner's primes proved
// with exact arithmetic, and the file's checks.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "forge.hpp"
#include "test_support.hpp"

namespace {

using blume::egh_filter;
using blume::integer_universe;
using blume::plan_egh;
using blume::plan_egh_for_bits;
using blume_test::scaled;

// ---- the zone -----------------------------------------------------------------------------------------

// Every key of a 2^16 universe, against sets of every size up to d: random sets, runs of consecutive keys
// and arithmetic progressions whose step is a product of the smallest primes (the sets that collide most in
// the small segments before the permutation).
TEST(EghZone, NoKeyOfASmallUniverseIsAFalsePositive) {
  const auto u = integer_universe::of_size(1 << 16);
  std::mt19937_64 rng(16);
  std::uint64_t checked = 0;
  for (std::uint64_t d = 1; d <= 8; ++d) {
    const egh_filter empty(plan_egh(u, d));
    const std::uint64_t sets = scaled(40, 20, 2);
    for (std::uint64_t size = 1; size <= d; ++size) {
      for (std::uint64_t s = 0; s < sets + 2; ++s) {
        std::set<std::uint64_t> keys;
        if (s == sets) {
          for (std::uint64_t i = 0; i < size; ++i) keys.insert(1000 + i);  // a run
        } else if (s == sets + 1) {
          for (std::uint64_t i = 0; i < size; ++i) keys.insert(7 + i * 2310);  // step 2·3·5·7·11
        } else {
          while (keys.size() < size) keys.insert(rng() & 0xffff);
        }
        egh_filter f = empty;
        for (const std::uint64_t k : keys) f.insert(k);
        ASSERT_TRUE(f.in_zone());
        for (std::uint64_t x = 0; x < (1 << 16); ++x)
          ASSERT_EQ(f.contains(x), keys.count(x) == 1) << "key " << x << ", d " << d << ", set size " << size;
        checked += 1 << 16;
      }
    }
  }
  RecordProperty("lookups", std::to_string(checked));
}

// Large universes: a full zone of random keys, then 10M absent keys of the universe, none answered maybe.
TEST(EghZone, NoAbsentKeyOfLargeUniversesIsAFalsePositive) {
  for (const auto u : {integer_universe::of_size(std::uint64_t{1} << 32), integer_universe::all_64_bit()}) {
    for (const std::uint64_t d : {1u, 8u, 64u}) {
      egh_filter f(plan_egh(u, d));
      std::mt19937_64 rng(d);
      std::set<std::uint64_t> keys;
      while (keys.size() < d) keys.insert(rng() & u.largest);
      for (const std::uint64_t k : keys) f.insert(k);
      for (const std::uint64_t k : keys) ASSERT_TRUE(f.contains(k));
      std::uint64_t positives = 0;
      const std::uint64_t probes = scaled(10'000'000, 20);
      for (std::uint64_t i = 0; i < probes; ++i) {
        const std::uint64_t x = rng() & u.largest;
        if (keys.count(x) == 0) positives += f.contains(x);
      }
      EXPECT_EQ(positives, 0u) << "universe " << u.size_text() << ", d " << d;
    }
  }
}

// The zone belongs to the set, not to the order of inserts: inserting a key twice keeps the zone.
TEST(EghZone, AFilterPastItsZoneSaysSo) {
  egh_filter f(plan_egh(integer_universe::of_size(1000), 2));
  f.insert(1);
  f.insert(2);
  EXPECT_TRUE(f.in_zone());
  EXPECT_EQ(f.predicted_fpr(), 0.0);
  f.insert(3);
  EXPECT_FALSE(f.in_zone());
  EXPECT_GT(f.predicted_fpr(), 0.0);
}

// ---- beyond the zone ----------------------------------------------------------------------------------

// What the filter prints (the product of its segments' fill) is the rate an absent key meets, for every key
// pattern, at 2 to 100 times the zone.
TEST(EghBeyondZone, TheRateItPrintsIsTheRateMeasured) {
  const auto u = integer_universe::all_64_bit();
  const std::uint64_t d = 16;
  const auto plan = plan_egh(u, d);
  for (int pattern = 0; pattern < blume_test::key_patterns; ++pattern) {
    for (const std::uint64_t times : {2u, 10u, 40u, 60u, 100u}) {
      const std::uint64_t n = times * d;
      egh_filter f(plan);
      for (std::uint64_t i = 0; i < n; ++i) f.insert(blume_test::pattern_key(pattern, i));
      const std::uint64_t probes = scaled(2'000'000);
      std::uint64_t hits = 0;
      for (std::uint64_t i = n; i < n + probes; ++i) hits += f.contains(blume_test::pattern_key(pattern, i));
      EXPECT_TRUE(blume_test::within_binomial_999(static_cast<double>(hits), static_cast<double>(probes),
                                                  f.predicted_fpr(), 0.0))
          << blume_test::pattern_names[pattern] << ", n = " << n;
    }
  }
}

// The model before any key is inserted, ∏ (1 − (1 − 1/p)^n), against the mean over many sets (one set's
// fill strays from it by more than one set's probes can resolve), for random and sequential keys.
TEST(EghBeyondZone, TheModelIsTheMeanOverSets) {
  const auto u = integer_universe::all_64_bit();
  const std::uint64_t d = 16;
  const auto plan = plan_egh(u, d);
  for (int pattern = 0; pattern < 2; ++pattern) {
    for (const std::uint64_t times : {40u, 60u, 100u}) {
      const std::uint64_t n = times * d, sets = scaled(2000, 10, 100), probes = 1000;
      std::uint64_t hits = 0;
      for (std::uint64_t s = 0; s < sets; ++s) {
        egh_filter f(plan, s + 1);  // a new permutation per set: sequential keys make a new set each time
        const std::uint64_t base = pattern == 0 ? s * (n + probes) : 0;
        for (std::uint64_t i = 0; i < n; ++i) f.insert(blume_test::pattern_key(pattern, base + i));
        for (std::uint64_t i = n; i < n + probes; ++i) hits += f.contains(blume_test::pattern_key(pattern, base + i));
      }
      const egh_filter f(plan);
      EXPECT_TRUE(blume_test::within_binomial_999(static_cast<double>(hits), static_cast<double>(sets * probes),
                                                  f.model_fpr_at(static_cast<double>(n)), 0.0))
          << blume_test::pattern_names[pattern] << ", n = " << n;
    }
  }
}

// ---- planning -------------------------------------------------------------------------------------------

// A number as base-2^32 limbs, enough to compare products of primes with (U − 1)^d exactly.
using big = std::vector<std::uint64_t>;
big times(big a, std::uint64_t m) {  // m < 2^32
  std::uint64_t carry = 0;
  for (auto& limb : a) {
    const std::uint64_t x = limb * m + carry;
    limb = x & 0xffffffff;
    carry = x >> 32;
  }
  while (carry != 0) a.push_back(carry & 0xffffffff), carry >>= 32;
  return a;
}
bool greater(const big& a, const big& b) {
  if (a.size() != b.size()) return a.size() > b.size();
  return std::lexicographical_compare(b.rbegin(), b.rend(), a.rbegin(), a.rend());
}
big product(const std::vector<std::uint32_t>& primes) {
  big p{1};
  for (const std::uint32_t q : primes) p = times(p, q);
  return p;
}
big power(std::uint64_t x, std::uint64_t d) {  // x^d, x < 2^64: times two 32-bit halves
  big p{1};
  for (std::uint64_t i = 0; i < d; ++i) {
    big low = times(p, x & 0xffffffff), high = times(p, x >> 32);
    high.insert(high.begin(), 0);  // · 2^32
    big sum(std::max(low.size(), high.size()) + 1, 0);
    std::uint64_t carry = 0;
    for (std::size_t j = 0; j < sum.size(); ++j) {
      const std::uint64_t s = (j < low.size() ? low[j] : 0) + (j < high.size() ? high[j] : 0) + carry;
      sum[j] = s & 0xffffffff;
      carry = s >> 32;
    }
    while (sum.size() > 1 && sum.back() == 0) sum.pop_back();
    p = sum;
  }
  return p;
}

// The planner's primes pass (U − 1)^d, exactly, and no shorter prefix of them does.
TEST(EghPlan, ThePrimesProveTheZoneAndNoFewerWould) {
  for (const auto u :
       {integer_universe::of_size(2), integer_universe::of_size(1000), integer_universe::of_size(1 << 16),
        integer_universe::of_size(std::uint64_t{1} << 32), integer_universe::all_64_bit()}) {
    for (const std::uint64_t d : {1u, 2u, 3u, 8u, 50u, 200u}) {
      if (d > u.largest + 1) continue;
      const auto plan = plan_egh(u, d);
      ASSERT_FALSE(plan.primes.empty());
      EXPECT_EQ(plan.primes.front(), 2u);
      std::uint64_t sum = 0;
      for (std::size_t i = 0; i < plan.primes.size(); ++i) {
        EXPECT_TRUE(blume::detail::is_prime(plan.primes[i]));
        if (i > 0) {
          EXPECT_GT(plan.primes[i], plan.primes[i - 1]);
        }
        sum += plan.primes[i];
      }
      EXPECT_EQ(plan.bits, sum);
      const big bound = power(u.largest, d);
      EXPECT_TRUE(greater(product(plan.primes), bound)) << u.size_text() << ", d " << d;
      auto fewer = plan.primes;
      fewer.pop_back();
      // The planner keeps a slack of about 1e-9 of the bound's bits, so a prefix may pass by less than that.
      if (!fewer.empty() && greater(product(fewer), bound)) {  // NOLINT
        const double margin = std::log2(static_cast<double>(plan.primes.back()));
        EXPECT_LT(margin, 1e-6 * static_cast<double>(bound.size()) * 32 + 1) << u.size_text() << ", d " << d;
      }
    }
  }
}

TEST(EghPlan, ABudgetBuysTheLargestZoneThatFits) {
  for (const auto u : {integer_universe::of_size(1 << 16), integer_universe::all_64_bit()}) {
    for (const std::uint64_t bits : {100u, 1000u, 20000u, 1000000u}) {
      if (bits < plan_egh(u, 1).bits) {
        EXPECT_THROW((void)plan_egh_for_bits(u, bits), blume::invalid_argument);
        continue;
      }
      const auto plan = plan_egh_for_bits(u, bits);
      EXPECT_LE(plan.bits, bits);
      EXPECT_GT(plan_egh(u, plan.zone + 1).bits, bits) << u.size_text() << ", " << bits << " bits";
    }
  }
  // Tiny universes: every set of the universe is in the zone.
  EXPECT_EQ(plan_egh_for_bits(integer_universe::of_size(2), 10).zone, 2u);
}

// The comparison `blume plan` prints: a classic filter of the same memory, and the memory a classic filter
// needs to expect less than one false positive in the whole universe.
TEST(EghPlan, WhatTheZoneCosts) {
  const auto plan = plan_egh(integer_universe::of_size(std::uint64_t{1} << 32), 8);
  // 3831 bits for 8 keys: a classic filter at its best k (332) has a rate near 2^-(3831/8)·ln 2 = 2^-332.
  EXPECT_NEAR(plan.classic_fpr_log2, -3831.0 / 8 * std::log(2.0), 1.0);
  // d · log2(U − d) / ln 2 ≈ 8 · 32 / 0.693 = 369.
  EXPECT_NEAR(static_cast<double>(plan.classic_bits_for_universe), 369.3, 1.0);
  EXPECT_GT(plan.bits, plan.classic_bits_for_universe);
}

TEST(EghPlan, ImpossibleRequestsAreRefusedBeforeAllocating) {
  const auto u = integer_universe::of_size(1000);
  EXPECT_TRUE(blume_test::mentions(blume_test::message_of<blume::invalid_argument>([&] { (void)plan_egh(u, 0); }),
                                   "at least 1 key"));
  EXPECT_TRUE(blume_test::mentions(blume_test::message_of<blume::invalid_argument>([&] { (void)plan_egh(u, 1001); }),
                                   "exceeds the universe"));
  EXPECT_TRUE(blume_test::mentions(blume_test::message_of<blume::invalid_argument>([&] {
                                     (void)plan_egh(integer_universe::all_64_bit(), 1'000'000'000);
                                   }),
                                   "needs more than"));
  EXPECT_TRUE(blume_test::mentions(blume_test::message_of<blume::invalid_argument>([&] {
                                     (void)plan_egh_for_bits(integer_universe::all_64_bit(), 5);
                                   }),
                                   "cannot prove a zone of 1 key"));
  EXPECT_TRUE(blume_test::mentions(
      blume_test::message_of<blume::invalid_argument>([&] { (void)integer_universe::of_size(1); }), "at least 2"));
}

// ---- keys ---------------------------------------------------------------------------------------------------

TEST(EghKeys, KeysOutsideTheUniverseOrNotIntegersAreRefused) {
  egh_filter f(plan_egh(integer_universe::of_size(100), 3));
  EXPECT_TRUE(blume_test::mentions(blume_test::message_of<blume::invalid_argument>([&] { f.insert(100); }),
                                   "outside the universe [0, 100)"));
  EXPECT_TRUE(blume_test::mentions(
      blume_test::message_of<blume::invalid_argument>([&] { f.insert(std::string_view("apple")); }), "integer ids"));
  EXPECT_TRUE(blume_test::mentions(blume_test::message_of<blume::invalid_argument>([&] { f.insert(-1); }),
                                   "outside the universe"));
  EXPECT_EQ(f.inserted(), 0u);
  f.insert(99);
  EXPECT_TRUE(f.contains(99));
  EXPECT_FALSE(f.contains(100));
  EXPECT_FALSE(f.contains(std::string_view("apple")));
  // An integer key is its 8 little-endian bytes, as every surface passes it.
  const std::uint64_t v = 99;
  EXPECT_TRUE(f.contains(std::string_view(reinterpret_cast<const char*>(&v), 8)));
}

TEST(EghKeys, ThePermutationIsABijectionOfTheUniverse) {
  for (const std::uint64_t size : {2u, 3u, 5u, 1000u, 4096u, 4097u, 65536u}) {
    const blume::detail::universe_permutation pi(integer_universe::of_size(size), 42);
    std::vector<bool> seen(size, false);
    for (std::uint64_t x = 0; x < size; ++x) {
      const std::uint64_t y = pi(x);
      ASSERT_LT(y, size);
      ASSERT_FALSE(seen[y]) << "size " << size << ": " << y << " twice";
      seen[y] = true;
    }
  }
}

TEST(EghKeys, TheRemainderWithoutDivisionIsExact) {
  std::mt19937_64 rng(7);
  for (const std::uint32_t p : {2u, 3u, 5u, 7u, 65521u, 4294967291u, 1000003u}) {
    const blume::detail::fast_modulus mod(p);
    for (const std::uint64_t x : {std::uint64_t{0}, std::uint64_t{p} - 1, std::uint64_t{p}, ~std::uint64_t{0}})
      ASSERT_EQ(mod(x), x % p);
    for (int i = 0; i < 100000; ++i) {
      const std::uint64_t x = rng();
      ASSERT_EQ(mod(x), x % p) << x << " mod " << p;
    }
  }
}

// ---- merging and files ----------------------------------------------------------------------------------

TEST(EghFilter, MergeIsTheUnionAndNeedsTheSameGeometry) {
  const auto plan = plan_egh(integer_universe::of_size(1 << 20), 4);
  egh_filter a(plan), b(plan);
  a.insert(1);
  a.insert(2);
  b.insert(3);
  a.merge(b);
  EXPECT_TRUE(a.contains(1) && a.contains(2) && a.contains(3));
  EXPECT_EQ(a.inserted(), 3u);
  EXPECT_TRUE(a.in_zone());
  // Intersection: exact on the shared keys while both are inside their zone; past it, no longer in the zone.
  egh_filter c(plan), d(plan);
  for (const std::uint64_t k : {1u, 2u, 5u}) c.insert(k);
  for (const std::uint64_t k : {2u, 5u, 9u}) d.insert(k);
  egh_filter both = c;
  both.intersect(d);
  EXPECT_TRUE(both.in_zone());
  for (std::uint64_t x = 0; x < 100000; ++x) ASSERT_EQ(both.contains(x), x == 2 || x == 5) << x;
  egh_filter crowded(plan);
  for (std::uint64_t k = 100; k < 200; ++k) crowded.insert(k);
  both = c;
  both.intersect(crowded);
  EXPECT_FALSE(both.in_zone());
  const egh_filter other_seed(plan, 9);
  EXPECT_THROW(a.merge(other_seed), blume::incompatible_filters);
  const egh_filter other_zone(plan_egh(integer_universe::of_size(1 << 20), 5));
  EXPECT_THROW(a.merge(other_zone), blume::incompatible_filters);
}

TEST(EghFormat, RoundTripsAndAnswersAsBefore) {
  egh_filter f(plan_egh(integer_universe::of_size(std::uint64_t{1} << 40), 10), 77);
  for (std::uint64_t i = 0; i < 10; ++i) f.insert(i * 1000003);
  const auto bytes = blume::to_bytes(f);
  const auto g = blume::from_bytes<egh_filter>(bytes);
  EXPECT_EQ(g, f);
  EXPECT_EQ(g.universe().largest, (std::uint64_t{1} << 40) - 1);
  EXPECT_EQ(g.zone(), 10u);
  for (std::uint64_t x = 0; x < 100000; ++x) EXPECT_EQ(g.contains(x), f.contains(x));
}

TEST(EghFormat, DamagedFilesAreRefused) {
  egh_filter f(plan_egh(integer_universe::of_size(1 << 16), 3));
  f.insert(5);
  const auto good = blume::to_bytes(f);
  auto forged = [&](auto damage) {
    auto bytes = good;
    damage(bytes);
    blume_test::fix_checksums(bytes);
    return blume_test::message_of<blume::format_error>([&] { (void)blume::from_bytes<egh_filter>(bytes); });
  };
  const auto prime = [](std::vector<std::byte>& b, std::size_t i, std::uint32_t value) {
    blume::detail::write_le<std::uint32_t>(b.data() + blume::header_size + 4 * i, value);
  };
  EXPECT_TRUE(blume_test::mentions(forged([&](auto& b) { prime(b, 1, 4); }), "increasing primes"));
  EXPECT_TRUE(blume_test::mentions(forged([&](auto& b) { prime(b, 1, 2); }), "increasing primes"));
  // 2, 3, 5 … with the last prime swapped for a smaller one of the same sum is not possible, so a prime
  // swapped for a larger one changes the sum the header states.
  EXPECT_TRUE(blume_test::mentions(forged([&](auto& b) { prime(b, f.primes().size() - 1, 4294967291u); }),
                                   "header says"));
  // A larger zone than the primes prove.
  EXPECT_TRUE(blume_test::mentions(
      forged([&](auto& b) { blume::detail::write_le<std::uint64_t>(b.data() + blume::detail::off_reserved + 8, 4); }),
      "do not prove a zone of 4"));
  // More bits in a segment than the keys inserted could set, in a file inside its zone.
  EXPECT_TRUE(blume_test::mentions(forged([&](auto& b) {
                                     const std::size_t bits_at =
                                         blume::header_size + (4 * f.primes().size() + 7) / 8 * 8;
                                     b[bits_at + 8] = std::byte{0xff};  // bits 64 … 71: a segment of the 13th prime on
                                   }),
                                   "keys inserted"));
  // A bit past the last segment.
  ASSERT_NE(f.bits() % 64, 0u);
  EXPECT_TRUE(blume_test::mentions(forged([&](auto& b) { b[b.size() - 1] = std::byte{0x80}; }),
                                   "past the last segment"));
}

}  // namespace
