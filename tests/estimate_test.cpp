// SPDX-License-Identifier: Apache-2.0
// Estimates read from a filter's fill: distinct items, union, intersection and Jaccard index, checked
// against the true sizes of the sets inserted.
#include <cmath>
#include <limits>

#include "test_support.hpp"

namespace {

using blume_test::present_keys;

constexpr std::uint64_t capacity = 1'000'000;

template <class F>
class Estimates : public ::testing::Test {
 protected:
  /// A filter planned for 1M keys at 1% holding present keys [first, first + count).
  static F filter_of(std::uint64_t first, std::uint64_t count, std::uint64_t seed = 5) {
    F f(capacity, 0.01, seed);
    f.insert_many(present_keys(count, first));
    return f;
  }
};
TYPED_TEST_SUITE(Estimates, blume_test::filter_types, blume_test::kind_names);

// ---- distinct items ------------------------------------------------------------------------------------

TYPED_TEST(Estimates, EstimatedCountIsWithinTwoPercentAtHalfCapacity) {
  const TypeParam f = this->filter_of(0, capacity / 2);
  EXPECT_NEAR(f.estimated_count(), capacity / 2, 0.02 * capacity / 2);
}

TYPED_TEST(Estimates, EstimatedCountIsWithinTwoPercentAtFullCapacity) {
  const TypeParam f = this->filter_of(0, capacity);
  EXPECT_NEAR(f.estimated_count(), capacity, 0.02 * capacity);
}

TYPED_TEST(Estimates, EstimatedCountIgnoresDuplicates) {
  TypeParam once = this->filter_of(0, capacity / 2);
  TypeParam twice = once;
  twice.insert_many(present_keys(capacity / 2));  // every key a second time
  EXPECT_EQ(twice.inserted(), capacity);
  EXPECT_EQ(twice.estimated_count(), once.estimated_count());
  EXPECT_NEAR(twice.estimated_count(), capacity / 2, 0.02 * capacity / 2);
}

TYPED_TEST(Estimates, EstimatedCountOfAnEmptyFilterIsZero) {
  const TypeParam f(capacity, 0.01);
  EXPECT_EQ(f.estimated_count(), 0.0);
  EXPECT_EQ(f.predicted_fpr(), 0.0);
}

TYPED_TEST(Estimates, EstimatedCountOfAFullFilterIsInfinite) {
  auto f = blume_test::small_filter<TypeParam>();
  f.insert_many(present_keys(1'000'000));  // far more than enough to set every bit of a few thousand
  ASSERT_EQ(f.set_bits(), f.bits());
  EXPECT_EQ(f.estimated_count(), std::numeric_limits<double>::infinity());
  EXPECT_EQ(f.predicted_fpr(), 1.0);
  EXPECT_EQ(f.predicted_fpr_at(std::numeric_limits<double>::infinity()), 1.0);
}

TYPED_TEST(Estimates, PredictedFprFollowsTheEstimatedCount) {
  const TypeParam f = this->filter_of(0, capacity / 4);
  if constexpr (TypeParam::rate_from_cells) {
    // Read off the cells instead (stuck counters after erases): the model's rate while nothing was erased.
    EXPECT_NEAR(f.predicted_fpr(), f.predicted_fpr_at(f.estimated_count()),
                0.05 * f.predicted_fpr_at(f.estimated_count()));
  } else {
    EXPECT_DOUBLE_EQ(f.predicted_fpr(), f.predicted_fpr_at(f.estimated_count()));
  }
  EXPECT_NEAR(f.predicted_fpr(), f.predicted_fpr_at(capacity / 4), 0.05 * f.predicted_fpr_at(capacity / 4));
  EXPECT_LT(f.predicted_fpr(), f.predicted_fpr_at(capacity));
}

TYPED_TEST(Estimates, EstimatedCountGrowsWithDistinctKeys) {
  TypeParam f(capacity, 0.01);
  double previous = 0.0;
  for (std::uint64_t step = 0; step < 10; ++step) {
    f.insert_many(present_keys(10'000, step * 10'000));
    EXPECT_GT(f.estimated_count(), previous) << step;
    previous = f.estimated_count();
  }
}

// ---- union, intersection, Jaccard ----------------------------------------------------------------------
// A = [0, 600k), B = [400k, 1M): |A ∪ B| = 1M, |A ∩ B| = 200k, Jaccard 0.2.

TYPED_TEST(Estimates, UnionOfOverlappingSetsIsWithinThreePercent) {
  const TypeParam a = this->filter_of(0, 600'000), b = this->filter_of(400'000, 600'000);
  EXPECT_NEAR(blume::estimate_union(a, b), 1'000'000, 30'000);
}

TYPED_TEST(Estimates, IntersectionOfOverlappingSetsIsWithinFivePercentOfTheUnion) {
  const TypeParam a = this->filter_of(0, 600'000), b = this->filter_of(400'000, 600'000);
  EXPECT_NEAR(blume::estimate_intersection(a, b), 200'000, 50'000);
}

TYPED_TEST(Estimates, JaccardOfOverlappingSetsIsWithinFivePercentagePoints) {
  const TypeParam a = this->filter_of(0, 600'000), b = this->filter_of(400'000, 600'000);
  EXPECT_NEAR(blume::estimate_jaccard(a, b), 0.2, 0.05);
}

TYPED_TEST(Estimates, UnionIsTheEstimateOfTheMergedFilter) {
  const TypeParam a = this->filter_of(0, 60'000), b = this->filter_of(40'000, 60'000);
  TypeParam merged = a;
  merged.merge(b);
  EXPECT_DOUBLE_EQ(blume::estimate_union(a, b), merged.estimated_count());
}

TYPED_TEST(Estimates, IntersectionOfDisjointSetsIsNearZero) {
  const TypeParam a = this->filter_of(0, 100'000), b = this->filter_of(100'000, 100'000);
  EXPECT_LT(blume::estimate_intersection(a, b), 0.02 * 200'000);
  EXPECT_GE(blume::estimate_intersection(a, b), 0.0);
}

TYPED_TEST(Estimates, JaccardOfAFilterWithItselfIsOne) {
  const TypeParam a = this->filter_of(0, 50'000);
  EXPECT_DOUBLE_EQ(blume::estimate_jaccard(a, a), 1.0);
  EXPECT_DOUBLE_EQ(blume::estimate_intersection(a, a), a.estimated_count());
}

TYPED_TEST(Estimates, JaccardOfEmptyFiltersIsZero) {
  const TypeParam a(capacity, 0.01), b(capacity, 0.01);
  EXPECT_EQ(blume::estimate_jaccard(a, b), 0.0);
  EXPECT_EQ(blume::estimate_union(a, b), 0.0);
}

TYPED_TEST(Estimates, SetEstimatesRejectIncompatibleFilters) {
  const TypeParam a(1000, 0.01, 1), b(1000, 0.01, 2), c(2000, 0.01, 1);
  EXPECT_THROW(blume::estimate_union(a, b), blume::incompatible_filters);
  EXPECT_THROW(blume::estimate_intersection(a, b), blume::incompatible_filters);
  EXPECT_THROW(blume::estimate_jaccard(a, c), blume::incompatible_filters);
}

}  // namespace
