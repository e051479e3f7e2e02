// SPDX-License-Identifier: Apache-2.0
// Planning math: the formulas against independent computations, the planner against the formulas and the
// worked examples, and the planner's refusal of bad input.
#include <cmath>
#include <limits>
#include <vector>

#include "test_support.hpp"

namespace {

namespace math = blume::math;
using blume::filter_kind;
using blume::plan_for;
using blume::plan_for_bits;
using blume_test::mentions;
using blume_test::mentions_number;
using blume_test::message_of;

double poisson_pmf(double lambda, int j) { return std::exp(-lambda + j * std::log(lambda) - std::lgamma(j + 1.0)); }

/// The blocked filter's rate computed another way than plan.hpp does: track the exact distribution of the
/// number of set bits in one block of B bits as probes are thrown into it (the occupancy distribution),
/// take E[(X/B)^k] (a lookup's k independent probes all hit set bits) at t = jk probes, and average over
/// j ~ Poisson(nB/m) keys in the block.
double blocked_fpr_by_occupancy(double n, double m, int k, int block_bits) {
  const double lambda = n * block_bits / m;
  const int j_max = static_cast<int>(lambda + 15 * std::sqrt(lambda) + 30);
  std::vector<double> occupancy(block_bits + 1, 0.0), next(block_bits + 1);
  occupancy[0] = 1.0;
  int probes = 0;
  double rate = 0.0;
  for (int j = 0; j <= j_max; ++j) {
    for (; probes < j * k; ++probes) {
      std::fill(next.begin(), next.end(), 0.0);
      for (int x = 0; x <= block_bits; ++x) {
        next[x] += occupancy[x] * x / block_bits;
        if (x < block_bits) next[x + 1] += occupancy[x] * (block_bits - x) / block_bits;
      }
      occupancy.swap(next);
    }
    double all_hit = 0.0;
    for (int x = 0; x <= block_bits; ++x) all_hit += occupancy[x] * std::pow(static_cast<double>(x) / block_bits, k);
    rate += poisson_pmf(lambda, j) * all_hit;
  }
  return rate;
}

/// The split-block rate computed directly: with j keys in a block each 32-bit word has each bit zero with
/// probability (31/32)^j independently of the other words, and a lookup tests one bit per word.
double split_block_fpr_direct(double n, double m) {
  const double lambda = n * 256 / m;
  double rate = 0.0;
  for (int j = 0; j < static_cast<int>(lambda + 15 * std::sqrt(lambda) + 30); ++j)
    rate += poisson_pmf(lambda, j) * std::pow(1.0 - std::pow(31.0 / 32.0, j), 8);
  return rate;
}

// ---- formulas ------------------------------------------------------------------------------------------

TEST(PlanMath, OptimalBitsForOneHundredMillionKeysAtOnePercent) {
  EXPECT_NEAR(math::optimal_bits(1e8, 0.01), 958'505'837.5, 1.0);
}

TEST(PlanMath, OptimalBitsPerKeyIsLog2OfInverseRateOverLn2) {
  for (double fpr : {0.5, 0.1, 0.01, 1e-3, 1e-6, 1e-12}) {
    const double per_key = math::optimal_bits(1.0, fpr);
    EXPECT_NEAR(per_key / std::log2(1.0 / fpr), 1.0 / std::numbers::ln2, 1e-12) << fpr;
    EXPECT_NEAR(math::optimal_bits(1000.0, fpr), 1000.0 * per_key, 1e-6 * per_key) << fpr;
  }
}

TEST(PlanMath, OptimalHashCountIsMOverNTimesLn2Rounded) {
  EXPECT_EQ(math::optimal_hash_count(958'505'838, 1e8), 7u);
  EXPECT_EQ(math::optimal_hash_count(10, 1), 7u);     // 6.93
  EXPECT_EQ(math::optimal_hash_count(4.8, 1), 3u);    // 3.33
  EXPECT_EQ(math::optimal_hash_count(14.4, 1), 10u);  // 9.98
  EXPECT_NEAR(math::optimal_hashes(10, 1), 10 * std::numbers::ln2, 1e-12);
}

TEST(PlanMath, OptimalHashCountIsClampedToOneAndMaxHashes) {
  EXPECT_EQ(math::optimal_hash_count(1, 1000), 1u);
  EXPECT_EQ(math::optimal_hash_count(1e6, 1), blume::max_hashes);
}

TEST(PlanMath, BloomFprIsTheClassicApproximation) {
  for (double n : {1.0, 100.0, 1e6}) {
    for (double bits_per_key : {2.0, 9.6, 30.0}) {
      for (double k : {1.0, 3.0, 7.0, 20.0}) {
        const double m = n * bits_per_key;
        const double expected = std::pow(1.0 - std::exp(-k * n / m), k);
        EXPECT_NEAR(math::bloom_fpr(n, m, k), expected, 1e-12 * expected) << n << " " << m << " " << k;
      }
    }
  }
  EXPECT_EQ(math::bloom_fpr(0, 1000, 7), 0.0);
}

TEST(PlanMath, BloomFprIsSmallestAtTheOptimalHashCount) {
  const double n = 1e6, m = 1e7;  // optimal k = 6.93
  EXPECT_LT(math::bloom_fpr(n, m, 7), math::bloom_fpr(n, m, 6));
  EXPECT_LT(math::bloom_fpr(n, m, 7), math::bloom_fpr(n, m, 8));
}

TEST(PlanMath, GoelGuptaBoundIsTheirFormula) {
  const double n = 100, m = 1000, k = 7;
  const double expected = std::pow(1.0 - std::exp(-k * (n + 0.5) / (m - 1)), k);
  EXPECT_NEAR(math::goel_gupta_bound(n, m, k), expected, 1e-12 * expected);
}

TEST(PlanMath, GoelGuptaBoundIsAtLeastTheClassicApproximation) {
  for (double m : {10.0, 100.0, 1000.0, 1e6}) {
    for (double n : {1.0, m / 20, m / 10, m / 4}) {
      for (double k : {1.0, 2.0, 5.0, 7.0, 12.0}) {
        EXPECT_GE(math::goel_gupta_bound(n, m, k), math::bloom_fpr(n, m, k)) << n << " " << m << " " << k;
      }
    }
  }
}

TEST(PlanMath, GoelGuptaBoundMeetsTheApproximationForLargeFilters) {
  const double n = 1e7, m = 9.6e7, k = 7;
  EXPECT_NEAR(math::goel_gupta_bound(n, m, k) / math::bloom_fpr(n, m, k), 1.0, 1e-6);
}

TEST(PlanMath, PartitionedFprIsTheSliceFormula) {
  for (double n : {100.0, 1e6}) {
    for (double k : {1.0, 4.0, 7.0, 10.0}) {
      const double m = 10 * n;
      const double slice = m / k;
      const double expected = std::pow(1.0 - std::pow(1.0 - 1.0 / slice, n), k);
      EXPECT_NEAR(math::partitioned_fpr(n, m, k), expected, 1e-9 * expected) << n << " " << k;
    }
  }
  EXPECT_EQ(math::partitioned_fpr(0, 1000, 4), 0.0);
}

TEST(PlanMath, PartitionedFprIsSlightlyAboveClassic) {
  for (double k : {2.0, 7.0, 10.0}) {
    const double n = 1e6, m = 1e7;
    EXPECT_GT(math::partitioned_fpr(n, m, k), math::bloom_fpr(n, m, k)) << k;
    EXPECT_LT(math::partitioned_fpr(n, m, k), 1.01 * math::bloom_fpr(n, m, k)) << k;
  }
}

TEST(PlanMath, BlockedFprMatchesTheOccupancyDistribution) {
  struct geometry {
    double n;
    double bits_per_key;
    int k;
  };
  for (const geometry g : {geometry{1e6, 4.9, 3}, geometry{1e6, 9.9, 6}, geometry{1e6, 15.5, 9},
                           geometry{1e6, 12.0, 10}, geometry{5e4, 20.0, 14}}) {
    const double m = std::ceil(g.n * g.bits_per_key / 512) * 512;
    const double expected = blocked_fpr_by_occupancy(g.n, m, g.k, 512);
    EXPECT_NEAR(math::blocked_fpr(g.n, m, g.k, 512), expected, 1e-8 * expected)
        << "n=" << g.n << " bits/key=" << g.bits_per_key << " k=" << g.k;
  }
  EXPECT_EQ(math::blocked_fpr(0, 512 * 100, 7, 512), 0.0);
}

TEST(PlanMath, BlockedFprIsAboveClassicForTheSameMemory) {
  for (double k : {2.0, 6.0, 9.0, 16.0}) {
    const double n = 1e6, m = 512.0 * 20'000;
    EXPECT_GT(math::blocked_fpr(n, m, k, 512), math::bloom_fpr(n, m, k)) << k;
  }
}

TEST(PlanMath, BlockedFprFallsAsBitsGrowForEveryHashCount) {
  for (int k = 1; k <= 32; ++k) {
    double previous = 1.0;
    for (double bits_per_key = 2; bits_per_key <= 200; bits_per_key *= 1.1) {
      const double m = std::ceil(1e6 * bits_per_key / 512) * 512;
      const double rate = math::blocked_fpr(1e6, m, k, 512);
      ASSERT_GT(rate, 0.0) << "k=" << k << " bits/key=" << bits_per_key;
      ASSERT_LE(rate, previous) << "k=" << k << " bits/key=" << bits_per_key;
      previous = rate;
    }
  }
}

TEST(PlanMath, SplitBlockFprIsThePoissonAverageOverWordFills) {
  for (double bits_per_key : {6.0, 10.5, 17.0, 30.0}) {
    const double n = 1e6, m = std::ceil(n * bits_per_key / 256) * 256;
    const double expected = split_block_fpr_direct(n, m);
    EXPECT_NEAR(math::split_block_fpr(n, m), expected, 1e-9 * expected) << bits_per_key;
  }
  EXPECT_EQ(math::split_block_fpr(0, 256 * 100), 0.0);
}

TEST(PlanMath, KindFprUsesEachKindsModel) {
  const double n = 1e5, m = 256.0 * 4000, k = 8;
  EXPECT_EQ(blume::model_fpr(blume::bloom_filter<>::kind, n, m, k), math::bloom_fpr(n, m, k));
  EXPECT_EQ(blume::model_fpr(blume::partitioned_bloom_filter<>::kind, n, m, k), math::partitioned_fpr(n, m, k));
  EXPECT_EQ(blume::model_fpr(blume::blocked_bloom_filter<>::kind, n, m, k), math::blocked_fpr(n, m, k, 512));
  EXPECT_EQ(blume::model_fpr(blume::split_block_bloom_filter<>::kind, n, m, k), math::split_block_fpr(n, m));
}

TEST(PlanMath, EstimateItemsInvertsEachKindsExpectedFill) {
  const double n = 123'456, m = 512.0 * 2400, k = 8;
  const double lambda_512 = n * 512 / m, lambda_256 = n * 256 / m;
  const double bloom_fill = m * -std::expm1(-k * n / m);
  const double partitioned_fill = m * (1 - std::pow(1 - k / m, n));
  const double blocked_fill = m * -std::expm1(-lambda_512 * (1 - std::pow(1 - 1.0 / 512, k)));
  const double split_fill = m * -std::expm1(-lambda_256 / 32);
  EXPECT_NEAR(blume::classic_layout::estimate_items(bloom_fill, m, k), n, 1e-6 * n);
  EXPECT_NEAR(blume::partitioned_layout::estimate_items(partitioned_fill, m, k), n, 1e-6 * n);
  EXPECT_NEAR(blume::blocked_layout::estimate_items(blocked_fill, m, k), n, 1e-6 * n);
  EXPECT_NEAR(blume::split_block_layout::estimate_items(split_fill, m, k), n, 1e-6 * n);
}

// Every estimator of a fill, through every kind that has one (the Bloom layouts).
template <class Each>
void for_each_estimator(Each each) {
  blume::for_each_kind([&](auto type) {
    using F = typename decltype(type)::type;
    if constexpr (requires { F::layout_type::estimate_items(0.0, 1.0, 1.0); })
      each(F::name, [](double x, double m, double k) { return F::layout_type::estimate_items(x, m, k); });
  });
}

TEST(PlanMath, EstimateItemsOfAnEmptyFilterIsZero) {
  for_each_estimator([](std::string_view name, auto estimate) { EXPECT_EQ(estimate(0, 512 * 10, 8), 0.0) << name; });
}

TEST(PlanMath, EstimateItemsOfAFullFilterIsInfinite) {
  for_each_estimator([](std::string_view name, auto estimate) {
    EXPECT_EQ(estimate(5120, 5120, 8), std::numeric_limits<double>::infinity()) << name;
  });
}

// ---- the planner ---------------------------------------------------------------------------------------

TEST(Planner, ClassicPlanForOneHundredMillionKeysAtOnePercent) {
  const blume::filter_plan p = plan_for(100'000'000, 0.01);
  EXPECT_EQ(p.kind, blume::bloom_filter<>::kind);
  EXPECT_EQ(p.items, 100'000'000u);
  EXPECT_NEAR(static_cast<double>(p.bits), 958'505'838.0, 1.0);
  EXPECT_EQ(p.hashes, 7u);
  const double mib = static_cast<double>(p.bytes) / (1 << 20);
  EXPECT_NEAR(mib, 114.26, 0.01);
  EXPECT_LE(mib, 114.3);
  EXPECT_NEAR(p.bits_per_key(), 9.585, 0.001);
  // k is rounded from 6.64 to 7: (1 − e^{−7/9.585})^7 = 1.00392%.
  EXPECT_NEAR(p.predicted_fpr, 0.0100392, 0.0000001);
}

TEST(Planner, ClassicPlanBytesHoldTheBitsInWholeWords) {
  const blume::filter_plan p = plan_for(1000, 0.01);
  EXPECT_EQ(p.bytes % 8, 0u);
  EXPECT_GE(p.bytes * 8, p.bits);
  EXPECT_LT(p.bytes * 8, p.bits + 64);
}

TEST(Planner, ClassicPlanPredictsCloseToTheTarget) {
  for (double target : {0.1, 0.01, 0.001, 1e-6}) {
    const blume::filter_plan p = plan_for(1'000'000, target);
    EXPECT_NEAR(p.predicted_fpr, target, 0.01 * target) << target;
  }
}

TEST(Planner, PredictedFprIsTheKindsModelAtCapacity) {
  for (filter_kind kind : blume::all_kinds) {
    const blume::filter_plan p = plan_for(250'000, 0.005, kind);
    EXPECT_EQ(p.kind, kind);
    EXPECT_EQ(p.items, 250'000u);
    EXPECT_DOUBLE_EQ(p.predicted_fpr, blume::model_fpr(kind, 250'000, static_cast<double>(p.bits), p.hashes));
  }
}

TEST(Planner, PartitionedPlanUsesTheSmallestSliceThatMeetsTheTarget) {
  for (double target : {0.1, 0.01, 0.001, 1e-5}) {
    const double n = 1'000'000;
    const blume::filter_plan p = plan_for(1'000'000, target, blume::partitioned_bloom_filter<>::kind);
    EXPECT_EQ(p.bits % p.hashes, 0u) << target;
    EXPECT_LE(p.predicted_fpr, target) << target;
    const double one_bit_smaller_slices = static_cast<double>(p.bits - p.hashes);
    EXPECT_GT(math::partitioned_fpr(n, one_bit_smaller_slices, p.hashes), target) << target;
    EXPECT_GT(plan_for_bits(1'000'000, p.bits * 98 / 100, blume::partitioned_bloom_filter<>::kind).predicted_fpr,
              target)
        << target;
  }
}

TEST(Planner, BlockedPlanMeetsTheTargetWithinTwoPercentOfTheLeastMemory) {
  for (double target : {0.1, 0.01, 0.001, 1e-5}) {
    const blume::filter_plan p = plan_for(1'000'000, target, blume::blocked_bloom_filter<>::kind);
    EXPECT_EQ(p.bits % 512, 0u) << target;
    EXPECT_EQ(p.bytes, p.bits / 8) << target;
    EXPECT_LE(p.predicted_fpr, target) << target;
    // No hash count reaches the target with 2% less memory.
    EXPECT_GT(plan_for_bits(1'000'000, p.bits * 98 / 100, blume::blocked_bloom_filter<>::kind).predicted_fpr, target)
        << target;
  }
}

TEST(Planner, SplitBlockPlanMeetsTheTargetWithinTwoPercentOfTheLeastMemory) {
  for (double target : {0.1, 0.01, 0.001, 1e-5}) {
    const blume::filter_plan p = plan_for(1'000'000, target, blume::split_block_bloom_filter<>::kind);
    EXPECT_EQ(p.bits % 256, 0u) << target;
    EXPECT_EQ(p.hashes, 8u) << target;
    EXPECT_LE(p.predicted_fpr, target) << target;
    EXPECT_GT(plan_for_bits(1'000'000, p.bits * 98 / 100, blume::split_block_bloom_filter<>::kind).predicted_fpr,
              target)
        << target;
  }
}

TEST(Planner, ClassicSizingLeavesABlockedFilterAboveTheTarget) {
  // Why the blocked kinds need their own model: the textbook m and k, rounded up to whole blocks.
  for (double target : {0.1, 0.01, 0.001}) {
    const double n = 1'000'000;
    const blume::filter_plan classic = plan_for(1'000'000, target);
    const double blocked_bits = std::ceil(static_cast<double>(classic.bits) / 512) * 512;
    const double split_bits = std::ceil(static_cast<double>(classic.bits) / 256) * 256;
    EXPECT_GT(math::blocked_fpr(n, blocked_bits, classic.hashes, 512), target) << target;
    EXPECT_GT(math::split_block_fpr(n, split_bits), target) << target;
  }
}

TEST(Planner, BlockedKindsNeedMoreMemoryThanClassic) {
  for (double target : {0.1, 0.01, 0.001}) {
    const auto classic = plan_for(1'000'000, target).bits;
    EXPECT_GT(plan_for(1'000'000, target, blume::blocked_bloom_filter<>::kind).bits, classic) << target;
    EXPECT_GT(plan_for(1'000'000, target, blume::split_block_bloom_filter<>::kind).bits, classic) << target;
  }
}

TEST(Planner, PlanForBitsInvertsTheClassicPlan) {
  for (double target : {0.1, 0.01, 0.001}) {
    const blume::filter_plan forward = plan_for(1'000'000, target);
    const blume::filter_plan inverse = plan_for_bits(1'000'000, forward.bits);
    EXPECT_EQ(inverse.bits, forward.bits) << target;
    EXPECT_EQ(inverse.hashes, forward.hashes) << target;
    EXPECT_DOUBLE_EQ(inverse.predicted_fpr, forward.predicted_fpr) << target;
  }
}

TEST(Planner, PlanForBitsDoesAtLeastAsWellAsPlanForInTheSameMemory) {
  for (filter_kind kind : blume::all_kinds) {
    for (double target : {0.1, 0.01, 0.001}) {
      // A static kind's rate is fixed by its fingerprints (2^-8 for xor8, fuse8): it refuses lower targets.
      if (blume::is_static(kind) &&
          target < blume::model_fpr(kind, 1, 1,
                                    kind == blume::xor8_filter<>::kind || kind == blume::fuse8_filter<>::kind ? 8 : 16))
        continue;
      const blume::filter_plan forward = plan_for(1'000'000, target, kind);
      const blume::filter_plan inverse = plan_for_bits(1'000'000, forward.bits, kind);
      EXPECT_EQ(inverse.kind, kind);
      EXPECT_LE(inverse.bits, forward.bits) << blume::kind_name(kind) << " " << target;
      EXPECT_LE(inverse.predicted_fpr, forward.predicted_fpr * (1 + 1e-12)) << blume::kind_name(kind) << " " << target;
    }
  }
}

TEST(Planner, PlanForBitsRoundsDownToTheKindsGranularity) {
  EXPECT_EQ(plan_for_bits(1000, 10'000, blume::blocked_bloom_filter<>::kind).bits, 512u * 19);
  EXPECT_EQ(plan_for_bits(1000, 10'000, blume::split_block_bloom_filter<>::kind).bits, 256u * 39);
  const blume::filter_plan partitioned = plan_for_bits(1000, 10'001, blume::partitioned_bloom_filter<>::kind);
  EXPECT_EQ(partitioned.bits % partitioned.hashes, 0u);
  EXPECT_LE(partitioned.bits, 10'001u);
}

TEST(Planner, PlanForBitsNeverExceedsTheBudget) {
  // "The best rate in a budget of `bits` bits, rounded down to the kind's granularity": a plan may use
  // less than the budget, or refuse a budget too small for the kind, but never use more.
  for (filter_kind kind : blume::all_kinds) {
    for (std::uint64_t budget : {1u, 100u, 300u, 600u, 1000u, 10'000u}) {
      try {
        const blume::filter_plan p = plan_for_bits(100, budget, kind);
        EXPECT_LE(p.bits, budget) << blume::kind_name(kind) << " budget " << budget;
      } catch (const blume::invalid_argument&) {
        // refusing a budget below one block is acceptable
      }
    }
  }
}

TEST(Planner, PlanForBitsGivesLowerRatesForLargerBudgets) {
  for (filter_kind kind : blume::all_kinds) {
    double previous = 1.0;
    for (std::uint64_t bits = 4'000'000; bits <= 20'000'000; bits += 2'000'000) {
      double rate = 1.0;
      try {
        rate = plan_for_bits(1'000'000, bits, kind).predicted_fpr;
      } catch (const blume::invalid_argument&) {
        // A cuckoo filter needs at least 8 bits per slot at 95% load (8.4M bits for 10^6 keys) and a quotient
        // filter slots of at least 4 bits at its maximum load: a kind may refuse budgets below its smallest
        // workable one, but never a budget above one it took.
        EXPECT_EQ(previous, 1.0) << blume::kind_name(kind) << " refused " << bits << " after a smaller budget";
        continue;
      }
      if (blume::is_static(kind)) {
        EXPECT_LE(rate, previous) << blume::kind_name(kind) << " " << bits;  // fixed by the fingerprint width
      } else {
        EXPECT_LT(rate, previous) << blume::kind_name(kind) << " " << bits;
      }
      previous = rate;
    }
  }
}

TEST(Planner, SizesCountTheKindsOwnUnitsAndTheirBitsFillTheMemory) {
  // A spatial filter of 8,865,953 cells is 70,927,624 bits (8.46 MiB), not 8,865,953 bits.
  EXPECT_EQ(blume::size_unit_of<blume::spatial_bloom_filter<>>().name, "cells");
  EXPECT_EQ(blume::size_unit_of<blume::spatial_bloom_filter<>>().bits, 8u);
  EXPECT_EQ(blume::size_unit_of<blume::spatial_bloom_filter<std::uint16_t>>().bits, 16u);
  EXPECT_EQ(blume::size_unit_of<blume::compact_approximator<>>().bits, 32u);
  EXPECT_EQ(blume::size_unit_of<blume::counting_bloom_filter<>>().name, "counters");
  EXPECT_EQ(blume::size_unit_of<blume::counting_bloom_filter<>>().bits, 4u);
  EXPECT_EQ(blume::size_unit_of<blume::variable_increment_counting_filter<>>().name, "counters");
  EXPECT_EQ(blume::size_unit_of<blume::stable_bloom_filter<>>().bits, 2u);
  EXPECT_EQ(blume::size_unit_of<blume::invertible_bloom_filter<>>().bits, 128u);
  EXPECT_EQ(blume::size_unit_of<blume::bloom_filter<>>().name, "bits");
  EXPECT_EQ(blume::size_unit_of<blume::layered_bloom_filter<>>().bits, 1u);
  // Every kind: its plan's units, at their width, are the memory the plan takes, give or take a table's slack.
  blume::for_each_kind([](auto type) {
    using F = typename decltype(type)::type;
    if constexpr (F::input != blume::kind_input::included_and_excluded) {  // a cascade's plan takes two sets
      if constexpr (requires { F::plan(std::uint64_t{1}, 0.5); }) {
        const blume::filter_plan p = F::plan(1'000'000, 0.01);
        const std::uint64_t bits = p.bits * blume::size_unit_of<F>().bits;
        EXPECT_LE(bits, 8 * p.bytes) << F::name;
        EXPECT_LT(8 * p.bytes - bits, 1024u) << F::name;
      }
    }
  });
  const std::vector<std::uint64_t> sets{250'000, 250'000, 250'000, 250'000};
  const blume::filter_plan spatial = blume::spatial_bloom_filter<>::plan(sets, 0.01);
  EXPECT_EQ(spatial.bytes, (spatial.bits + 7) / 8 * 8);  // a byte per 8-bit cell, in whole words
}

TEST(Planner, KindNamesRoundTrip) {
  for (filter_kind kind : blume::all_kinds) EXPECT_EQ(blume::parse_kind(blume::kind_name(kind)), kind);
  EXPECT_EQ(blume::kind_name(blume::split_block_bloom_filter<>::kind), "split-block");
  EXPECT_FALSE(blume::parse_kind("no-such-kind").has_value());
}

// ---- bad input -----------------------------------------------------------------------------------------

TEST(PlanInput, ZeroCapacityIsRejected) {
  for (filter_kind kind : blume::all_kinds) {
    const std::string message = message_of<blume::invalid_argument>([&] { plan_for(0, 0.01, kind); });
    EXPECT_TRUE(mentions(message, "capacity"));
    EXPECT_TRUE(mentions_number(message, 0));
  }
}

TEST(PlanInput, RatesOutsideZeroToOneAreRejectedNamingTheRate) {
  for (double fpr : {0.0, -0.5, 1.0, 1.5, -3.25}) {
    for (filter_kind kind : blume::all_kinds) {
      const std::string message = message_of<blume::invalid_argument>([&] { plan_for(1000, fpr, kind); });
      EXPECT_TRUE(mentions_number(message, fpr)) << fpr;
    }
  }
}

TEST(PlanInput, NanRateIsRejected) {
  for (filter_kind kind : blume::all_kinds) {
    const std::string message =
        message_of<blume::invalid_argument>([&] { plan_for(1000, std::numeric_limits<double>::quiet_NaN(), kind); });
    EXPECT_TRUE(mentions(message, "nan"));
  }
}

TEST(PlanInput, RequestsBeyondTheMaximumSizeAreRejected) {
  for (filter_kind kind : blume::all_kinds) {
    const std::string message =
        message_of<blume::invalid_argument>([&] { plan_for(1'000'000'000'000'000'000ULL, 1e-9, kind); });
    EXPECT_TRUE(mentions(message, "1000000000000000000"));
    EXPECT_TRUE(mentions(message, "2^40"));
  }
}

TEST(PlanInput, BlockedRequestsJustBeyondTheMaximumAreRejected) {
  // The classic size fits in 2^40 bits but the blocked kinds need more than that.
  const std::uint64_t items = static_cast<std::uint64_t>(0.95 * blume::max_filter_bits / math::optimal_bits(1, 0.001));
  ASSERT_LE(math::optimal_bits(static_cast<double>(items), 0.001), static_cast<double>(blume::max_filter_bits));
  EXPECT_THROW(plan_for(items, 0.001, blume::blocked_bloom_filter<>::kind), blume::invalid_argument);
  EXPECT_THROW(plan_for(items, 0.001, blume::split_block_bloom_filter<>::kind), blume::invalid_argument);
}

TEST(PlanInput, ErrorMessagesShowSmallRatesFaithfully) {
  // std::to_string prints six decimals, so 1e-9 would read "0.000000": the message must show the value.
  const std::string oversized =
      message_of<blume::invalid_argument>([] { plan_for(1'000'000'000'000'000'000ULL, 1e-9); });
  EXPECT_TRUE(mentions_number(oversized, 1e-9));
  const std::string tiny_negative = message_of<blume::invalid_argument>([] { plan_for(1000, -1e-9); });
  EXPECT_TRUE(mentions_number(tiny_negative, -1e-9));
}

TEST(PlanInput, PlanForBitsRejectsZeroItems) {
  const std::string message = message_of<blume::invalid_argument>([] { plan_for_bits(0, 1000); });
  EXPECT_TRUE(mentions(message, "capacity"));
}

TEST(PlanInput, PlanForBitsRejectsBudgetsOfZeroOrBeyondTheMaximum) {
  for (filter_kind kind : blume::all_kinds) {
    EXPECT_TRUE(mentions_number(message_of<blume::invalid_argument>([&] { plan_for_bits(1000, 0, kind); }), 0));
    EXPECT_TRUE(mentions(message_of<blume::invalid_argument>([&] {
                           plan_for_bits(1000, blume::max_filter_bits + 1, kind);
                         }),
                         std::to_string(blume::max_filter_bits + 1)));
  }
}

}  // namespace
