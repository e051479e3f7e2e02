// SPDX-License-Identifier: Apache-2.0
// Erasing keys that were never inserted, for every kind that erases. A key a lookup answers "no" for is
// refused and changes nothing. A false positive cannot be told from a key that was inserted, so it is
// erased, and what it takes away belonged to inserted keys, some of which then answer "no": the test
// measures how many against a model of each kind (the chance an absent key is a false positive, times the
// inserted keys one such erase damages), which is what the documentation quotes.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <vector>

#include "test_support.hpp"

namespace {

using blume_test::absent_key;
using blume_test::present_key;

template <class F>
struct erases : std::bool_constant<blume::can_erase<F>> {};
using erasing_kinds = blume_test::kinds_where<erases, blume::filter_types>::type;

/// Inserts a key; false only when a kind that can be full had no room (a Bloom kind's insert answers
/// whether the key was new instead).
template <class F>
bool stored(F& f, std::uint64_t key) {
  const bool answer = f.insert(key);
  return blume::may_be_full<F> ? answer : true;
}

template <class F>
class Erase : public ::testing::Test {};
TYPED_TEST_SUITE(Erase, erasing_kinds, blume_test::kind_names);

TYPED_TEST(Erase, AKeyALookupRefusesIsNotErasedAndChangesNothing) {
  TypeParam f(1000, 0.05);
  for (std::uint64_t i = 0; i < 1000; ++i) ASSERT_TRUE(stored(f, present_key(i))) << i;
  const auto before = blume::to_bytes(f);
  std::uint64_t refused = 0;
  for (std::uint64_t i = 0; i < 5000; ++i) {
    if (f.contains(absent_key(i))) continue;  // a false positive: nothing tells it from a key inserted
    ASSERT_FALSE(f.erase(absent_key(i))) << "absent key " << i;
    ++refused;
    // The whole file: cells, metadata and the count of keys held.
    if (i < 300) {
      ASSERT_EQ(blume::to_bytes(f), before) << "after absent key " << i;
    }
  }
  EXPECT_GT(refused, 4000u);
  EXPECT_EQ(blume::to_bytes(f), before);
  for (std::uint64_t i = 0; i < 1000; ++i) ASSERT_TRUE(f.contains(present_key(i))) << i;
}

// ---- the hazard's model ---------------------------------------------------------------------------------

/// What one erase of a false positive does to the keys inserted: how many then answer "no", as a mean and
/// a variance, while few are damaged yet. `again`: whether a key already damaged can be hit again (a
/// counter kind's key has k counters; a fingerprint kind's has one fingerprint, gone once erased).
struct damage {
  double mean, variance;
  bool again;
};

/// Counter kinds: one counter holds the increments of J ~ Poisson(λ) keys, each increment uniform over
/// `increments`, summed and capped at `saturated`. An absent key's probe with increment g passes when
/// pass(c, g); erasing it leaves after(c, g), and a key of increment h in that counter answers "no" from
/// then on when !holds(after, h). A saturated counter passes and never moves, so it damages no one. The
/// key's k probes are taken as independent, as in the rate's own model, so an erase damages k times what
/// one probe that passed does. Also returns the chance a probe passes (to the power k: the rate).
struct counter_rules {
  std::vector<std::uint64_t> increments;
  std::uint64_t saturated;
  std::function<bool(std::uint64_t, std::uint64_t)> pass;
  std::function<std::uint64_t(std::uint64_t, std::uint64_t)> after;
  std::function<bool(std::uint64_t, std::uint64_t)> holds;
};

std::pair<damage, double> counter_damage(double lambda, std::uint32_t k, const counter_rules& r) {
  double passed = 0, first = 0, second = 0;  // Σ P·[pass], Σ P·Y·[pass], Σ P·Y²·[pass]
  const double share = 1.0 / static_cast<double>(r.increments.size());
  std::vector<std::uint64_t> held;
  // Every ordered choice of increments for `left` more keys; a saturated counter stops the enumeration.
  std::function<void(unsigned, std::uint64_t, double)> keys = [&](unsigned left, std::uint64_t c, double p) {
    if (c == r.saturated) {
      passed += p;
      return;
    }
    if (left > 0) {
      for (const std::uint64_t h : r.increments) {
        held.push_back(h);
        keys(left - 1, std::min(c + h, r.saturated), p * share);
        held.pop_back();
      }
      return;
    }
    for (const std::uint64_t g : r.increments) {
      if (!r.pass(c, g)) continue;
      const std::uint64_t now = r.after(c, g);
      double hurt = 0;
      for (const std::uint64_t h : held) hurt += !r.holds(now, h);
      passed += p * share;
      first += p * share * hurt;
      second += p * share * hurt * hurt;
    }
  };
  double pj = std::exp(-lambda);
  for (unsigned j = 0; j < 40; ++j, pj *= lambda / j) keys(j, 0, pj);
  const double mean = first / passed, var = second / passed - mean * mean;
  return {{k * mean, k * var, true}, std::pow(passed, k)};
}

/// One false-positive erase of a counting filter (Fan et al.'s counters): the key's k counters are all
/// non-zero and each loses one; a counter that held exactly one key's probe (probability
/// λe^−λ / (1 − e^−λ), λ = kn/m) drops to zero and that key answers "no".
counter_rules unit_counters(std::uint64_t saturated) {
  return {{1},
          saturated,
          [](std::uint64_t c, std::uint64_t) { return c != 0; },
          [saturated](std::uint64_t c, std::uint64_t) { return c == saturated ? c : c - 1; },
          [](std::uint64_t c, std::uint64_t) { return c != 0; }};
}

template <class F>
damage damage_model(const F& f, double n) {
  if constexpr (F::kind == blume::counting_bloom_filter<>::kind) {
    const double lambda = f.hashes() * n / static_cast<double>(f.bits());
    return counter_damage(lambda, f.hashes(), unit_counters(F::layout_type::saturated)).first;
  } else if constexpr (F::kind == blume::invertible_bloom_filter<>::kind) {
    // The counting filter's rule on k subtables of cells/k: λ = n / (cells / k); counts do not saturate.
    const double lambda = f.hashes() * n / static_cast<double>(f.cells());
    return counter_damage(lambda, f.hashes(), unit_counters(UINT64_MAX)).first;
  } else if constexpr (F::kind == blume::variable_increment_counting_filter<>::kind) {
    // The paper's rule (variable_increment_counting_filter.hpp): a probe of increment g passes a counter at
    // g, at g + L or more, or saturated; the erase subtracts g (never below zero, and L for 1 … L − 1).
    constexpr unsigned L = F::layout_type::block_bits / 256;
    constexpr std::uint64_t top = F::layout_type::saturated;
    const auto may_hold = [](std::uint64_t c, std::uint64_t g) { return c == top || c == g || c >= g + L; };
    counter_rules r{{},
                    top,
                    may_hold,
                    [](std::uint64_t c, std::uint64_t g) -> std::uint64_t {
                      if (c == top) return c;
                      const std::uint64_t now = c > g ? c - g : 0;
                      return now != 0 && now < L ? L : now;
                    },
                    may_hold};
    for (unsigned g = L; g < 2 * L; ++g) r.increments.push_back(g);
    const double lambda = f.hashes() * n / static_cast<double>(f.bits());
    const auto [d, rate] = counter_damage(lambda, f.hashes(), r);
    EXPECT_NEAR(rate, F::layout_type::model_fpr(n, static_cast<double>(f.bits()), f.hashes()), 1e-9 * rate + 1e-15)
        << "the enumeration is the rate's own model";
    return d;
  } else if constexpr (F::kind == blume::cuckoo_filter<>::kind || F::kind == blume::quotient_filter<>::kind ||
                       F::kind == blume::dleft_counting_filter<>::kind) {
    // Fingerprint kinds: a false positive's fingerprint is an inserted key's, and
    // erasing it removes that one fingerprint (or lowers its counter). The key answers "no" unless its
    // fingerprint is still there through another key that shares it, about as likely as a false positive.
    const double shared = f.predicted_fpr();
    return {1.0 - shared, shared * (1.0 - shared), false};
  } else {
    static_assert(sizeof(F) == 0, "a kind that erases needs its model of the damage here");
  }
}

// n keys to capacity at 1%, then n keys never inserted erased: every kind's false-positive erases against
// its rate, and the inserted keys that then answer "no" against the model above given those erases.
TYPED_TEST(Erase, ErasingKeysNeverInsertedDamagesWhatTheModelSays) {
  constexpr std::uint64_t n = 100'000, erased = 100'000;
  TypeParam f(n, 0.01);
  for (std::uint64_t i = 0; i < n; ++i) ASSERT_TRUE(stored(f, present_key(i))) << i;
  const double rate = f.predicted_fpr();
  const damage model = damage_model(f, static_cast<double>(n));
  std::uint64_t false_positives = 0;
  for (std::uint64_t i = 0; i < erased; ++i) false_positives += f.erase(absent_key(i));
  std::uint64_t damaged = 0;
  for (std::uint64_t i = 0; i < n; ++i) damaged += !f.contains(present_key(i));
  const double fp = static_cast<double>(false_positives), hurt = static_cast<double>(damaged);
  std::printf(
      "%s: %llu keys at 1%% (rate %.4f%%), %llu never inserted erased: %llu false positives (%.3f%%), "
      "%llu inserted keys answer no (%.3f%%), %.3f per false-positive erase (model %.3f)\n",
      blume::kind_name(TypeParam::kind).data(), static_cast<unsigned long long>(n), 100 * rate,
      static_cast<unsigned long long>(erased), static_cast<unsigned long long>(false_positives), 100 * fp / erased,
      static_cast<unsigned long long>(damaged), 100 * hurt / n, hurt / fp, model.mean);
  // Each erase of a false positive empties cells, so the rate falls as the erases go on (by 7% from first
  // to last for the counting filter here): the erases are held to the mean of the rates before and after.
  EXPECT_TRUE(blume_test::within_binomial_999(fp, erased, (rate + f.predicted_fpr()) / 2));
  // The damage given those erases: a sum of independent per-erase damages of the model's mean and variance,
  // within 3.29 standard deviations and 3% for the model's approximations. Where a damaged key can be hit
  // again it counts once: on average the hits so far over n of them (2.3% for the counting filter here)
  // land on a key already damaged.
  const double hits = fp * model.mean;
  const double expected = model.again ? hits * (1 - hits / (2.0 * n)) : hits;
  const double allowed = 3.29 * std::sqrt(fp * model.variance) + 0.03 * expected + 1.0;
  EXPECT_LE(std::abs(hurt - expected), allowed) << hurt << " damaged against " << expected << " ± " << allowed;
}

// Erasing inserted keys: the rate each kind predicts afterwards is the rate measured. vi-counting's model at
// the keys left undershot by half (its counters that saturated while all the keys were in stay saturated),
// so it reads its rate off its counters.
TYPED_TEST(Erase, PredictedRateHoldsAfterErasingHalfTheKeys) {
  constexpr std::uint64_t n = 100'000, probes = 1'000'000;
  TypeParam f(n, 0.01);
  for (std::uint64_t i = 0; i < n; ++i) ASSERT_TRUE(stored(f, present_key(i))) << i;
  for (std::uint64_t i = 0; i < n; i += 2) ASSERT_TRUE(f.erase(present_key(i))) << i;
  for (std::uint64_t i = 1; i < n; i += 2) ASSERT_TRUE(f.contains(present_key(i))) << i;
  const double hits = static_cast<double>(f.count_contained(blume_test::absent_key_view(probes)));
  EXPECT_TRUE(blume_test::within_binomial_999(hits, probes, f.predicted_fpr()));
}

}  // namespace
