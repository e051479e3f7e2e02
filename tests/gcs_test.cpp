// The Golomb-coded set: no false negatives, the designed rate 2^-P, close to P + 1.5 bits per key, and
// refusals of impossible parameters.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "blume/golomb_coded_set.hpp"
#include "test_support.hpp"

namespace {

using blume_test::absent_keys;
using blume_test::present_keys;
using gcs = blume::golomb_coded_set<>;

TEST(GolombCodedSet, NoFalseNegativesAndTheDesignRate) {
  const auto keys = present_keys(1'000'000);
  for (std::uint32_t p : {6u, 8u, 12u}) {
    const gcs s = gcs::build(keys, p, 1, /*bucket_keys=*/128);
    ASSERT_EQ(s.count_contained(keys), keys.size()) << p;
    const auto probes = absent_keys(400'000);
    const double hits = static_cast<double>(s.count_contained(probes));
    const double rate = s.predicted_fpr();
    // Values that collide are stored once, so the rate is a little under 2^-P (by about 2^-P / 2).
    EXPECT_NEAR(rate, std::ldexp(1.0, -static_cast<int>(p)), 0.03 * std::ldexp(1.0, -static_cast<int>(p)));
    EXPECT_NEAR(hits, probes.size() * rate, 5 * std::sqrt(probes.size() * rate) + 1) << p;
  }
}

TEST(GolombCodedSet, AtOneIn256ItTakesAtMostNineAndAHalfBitsPerKey) {
  const auto keys = present_keys(2'000'000);
  const gcs s = gcs::build(keys, 8);
  EXPECT_LE(s.bits_per_key(), 9.5);
  EXPECT_GE(s.bits_per_key(), 9.3);  // the entropy bound: log2(e·256) = 9.44, less the collisions
  for (std::size_t i = 0; i < keys.size(); i += 4001) ASSERT_TRUE(s.contains(keys[i])) << i;
}

TEST(GolombCodedSet, EmptyAndDuplicateKeySets) {
  const gcs empty = gcs::build(std::vector<std::uint64_t>{}, 8);
  EXPECT_FALSE(empty.contains(std::uint64_t{1}));
  std::vector<std::uint64_t> keys = present_keys(10'000);
  keys.insert(keys.end(), keys.begin(), keys.begin() + 5'000);
  const gcs s = gcs::build(keys, 10, 3, 64);
  EXPECT_EQ(s.count_contained(present_keys(10'000)), 10'000u);
  EXPECT_LE(s.stored_values(), 10'000u);
}

TEST(GolombCodedSet, BadParametersAreRefused) {
  const auto keys = present_keys(10);
  EXPECT_THROW(gcs::build(keys, 0), blume::invalid_argument);
  EXPECT_THROW(gcs::build(keys, 33), blume::invalid_argument);
  EXPECT_THROW(gcs::build(keys, 8, 1, 0), blume::invalid_argument);
}

}  // namespace
