// SPDX-License-Identifier: Apache-2.0
// Filters as fingerprints: the subset screen (is_subset_of), the Tanimoto coefficient of two bit sets and
// its collision correction (estimate_jaccard), on filters the size of chemical fingerprints (2048 bits).
#include <cmath>
#include <cstdint>
#include <random>
#include <type_traits>
#include <vector>

#include "test_support.hpp"

namespace {

using blume_test::absent_key;
using blume_test::pattern_key;

constexpr std::uint64_t fingerprint_bits = 2048;

template <class F>
class Fingerprints : public ::testing::Test {
 protected:
  /// A fingerprint of about `bits` bits and `hashes` probes, as near as the layout allows: split-block's k is
  /// fixed at 8 (so it gets 4× the bits, to hold as many features), partitioned's m is a multiple of k,
  /// blocked's of its 512-bit block (as 2048 is).
  static F fingerprint(std::uint32_t hashes = 3, std::uint64_t bits = fingerprint_bits) {
    if constexpr (std::is_same_v<F, blume::split_block_bloom_filter<>>) {
      return F::with_geometry(4 * bits, 8);
    } else if constexpr (std::is_same_v<F, blume::partitioned_bloom_filter<>>) {
      return F::with_geometry(bits - bits % hashes, hashes);
    } else {
      return F::with_geometry(bits, hashes);
    }
  }
};
TYPED_TEST_SUITE(Fingerprints, blume_test::filter_types, blume_test::kind_names);

// A counting layout's words are counters, not bits: the set relations are for the plain bit arrays.
static_assert(!blume::plain_bit_layout<blume::counting_bloom_filter<>::layout_type>);

TYPED_TEST(Fingerprints, AFilterOfASubsetIsAlwaysASubset) {
  if constexpr (blume::plain_bit_layout<typename TypeParam::layout_type>) {
    std::mt19937_64 rng(7);
    for (int pattern = 0; pattern < blume_test::key_patterns; ++pattern) {
      for (int trial = 0; trial < 200; ++trial) {
        TypeParam molecule = this->fingerprint(), query = this->fingerprint();
        const std::uint64_t base = rng() >> 20, n = 50 + rng() % 400;
        for (std::uint64_t i = 0; i < n; ++i) {
          molecule.insert(pattern_key(pattern, base + i));
          if (rng() % 7 == 0) query.insert(pattern_key(pattern, base + i));
        }
        ASSERT_TRUE(blume::is_subset_of(query, molecule)) << blume_test::pattern_names[pattern] << " " << trial;
        ASSERT_TRUE(blume::is_subset_of(query, query));
      }
    }
  }
}

TYPED_TEST(Fingerprints, TanimotoIsTheBitsOfTheIntersectionOverTheBitsOfTheUnion) {
  if constexpr (blume::plain_bit_layout<typename TypeParam::layout_type>) {
    TypeParam a = this->fingerprint(), b = this->fingerprint();
    for (std::uint64_t i = 0; i < 300; ++i) a.insert(absent_key(i));
    for (std::uint64_t i = 200; i < 450; ++i) b.insert(absent_key(i));
    TypeParam both = a, either = a;
    both.intersect(b);
    either.merge(b);
    EXPECT_DOUBLE_EQ(blume::tanimoto(a, b), static_cast<double>(both.set_bits()) / either.set_bits());
    EXPECT_DOUBLE_EQ(blume::tanimoto(a, a), 1.0);
    EXPECT_DOUBLE_EQ(blume::tanimoto(b, a), blume::tanimoto(a, b));
    // Two empty fingerprints are identical, as RDKit's TanimotoSimilarity answers.
    EXPECT_DOUBLE_EQ(blume::tanimoto(this->fingerprint(), this->fingerprint()), 1.0);
    EXPECT_DOUBLE_EQ(blume::tanimoto(a, this->fingerprint()), 0.0);
  }
}

TYPED_TEST(Fingerprints, SetRelationsRejectFiltersOfAnotherGeometry) {
  if constexpr (blume::plain_bit_layout<typename TypeParam::layout_type>) {
    const TypeParam a = this->fingerprint(3), b = this->fingerprint(3, 2 * fingerprint_bits);
    const TypeParam c = TypeParam::with_geometry(a.bits(), a.hashes(), 99);
    EXPECT_THROW((void)blume::is_subset_of(a, b), blume::incompatible_filters);
    EXPECT_THROW((void)blume::tanimoto(a, c), blume::incompatible_filters);
  }
}

/// C(x, b) / C(m, b): the chance that b distinct positions all fall among x set ones of m, which is what a
/// query of b bits passes the screen of a filter with x bits set with, when positions are uniform.
double pass_probability(std::uint64_t x, std::uint64_t b, std::uint64_t m) {
  double p = 1.0;
  for (std::uint64_t i = 0; i < b; ++i) p *= static_cast<double>(x - std::min(x, i)) / static_cast<double>(m - i);
  return p;
}

// The classic layout's positions are uniform over the array, so a query that shares no key with a filter
// passes its screen with probability C(X, B)/C(m, B) for X bits set in the filter and B in the query.
TEST(FingerprintScreen, UnrelatedQueriesPassAtTheModelsRate) {
  using F = blume::bloom_filter<>;
  std::mt19937_64 rng(11);
  double passed = 0, predicted = 0, trials = 0;
  for (int db = 0; db < 200; ++db) {
    F molecule = F::with_geometry(fingerprint_bits, 2);
    const int pattern = db % blume_test::key_patterns;
    for (std::uint64_t i = 0; i < 400; ++i) molecule.insert(pattern_key(pattern, (std::uint64_t{1} << 40) * db + i));
    for (int q = 0; q < 1000; ++q) {
      F query = F::with_geometry(fingerprint_bits, 2);
      for (int i = 0; i < 4; ++i) query.insert(absent_key(rng()));
      passed += blume::is_subset_of(query, molecule) ? 1 : 0;
      predicted += pass_probability(molecule.set_bits(), query.set_bits(), fingerprint_bits);
      ++trials;
    }
  }
  EXPECT_GT(passed, 0);
  EXPECT_TRUE(blume_test::within_binomial_999(passed, trials, predicted / trials)) << predicted;
}

// Shared bits by collision inflate the Tanimoto coefficient of fingerprints of many features; turning bit
// counts back into feature counts (estimate_jaccard) removes most of that bias.
TYPED_TEST(Fingerprints, TheCorrectedSimilarityIsCloserToTheTrueJaccardThanTanimoto) {
  if constexpr (blume::plain_bit_layout<typename TypeParam::layout_type>) {
    std::mt19937_64 rng(3);
    double tanimoto_error = 0, corrected_error = 0, tanimoto_bias = 0, corrected_bias = 0;
    constexpr int pairs = 400;
    for (int pair = 0; pair < pairs; ++pair) {
      TypeParam a = this->fingerprint(2), b = this->fingerprint(2);
      const std::uint64_t na = 100 + rng() % 300, nb = 100 + rng() % 300, shared = rng() % (std::min(na, nb) + 1);
      const std::uint64_t base = rng();
      for (std::uint64_t i = 0; i < na; ++i) a.insert(absent_key(base + i));
      for (std::uint64_t i = 0; i < nb; ++i) b.insert(absent_key(base + na - shared + i));
      const double jaccard = static_cast<double>(shared) / static_cast<double>(na + nb - shared);
      const double t = blume::tanimoto(a, b), c = blume::estimate_jaccard(a, b);
      tanimoto_error += std::abs(t - jaccard);
      corrected_error += std::abs(c - jaccard);
      tanimoto_bias += t - jaccard;
      corrected_bias += c - jaccard;
    }
    EXPECT_LT(corrected_error, 0.6 * tanimoto_error) << corrected_error / pairs << " vs " << tanimoto_error / pairs;
    EXPECT_LT(std::abs(corrected_bias) / pairs, 0.02);
    EXPECT_GT(tanimoto_bias / pairs, 0.02);
  }
}

}  // namespace
