// SPDX-License-Identifier: Apache-2.0
// The stable Bloom filter: its false-positive rate converges to the paper's formula on an endless stream;
// false negatives exist by design and fall with recency.
#include <gtest/gtest.h>

#include <cmath>

#include "blume/kinds/stable_bloom_filter.hpp"
#include "test_support.hpp"

namespace {

using blume_test::absent_key;
using blume_test::mentions;
using blume_test::present_key;
using stable = blume::stable_bloom_filter<>;

TEST(StableFilter, ZeroFractionFormulaMatchesTheDerivation) {
  // m = 1000, k = 3, P = 10, Max = 3: a = 0.003, b = 0.997·0.01; z = (b/(a+b))^3.
  const double a = 3.0 / 1000, b = (1 - 3.0 / 1000) * 10 / 1000;
  EXPECT_NEAR(blume::math::stable_zero_fraction(1000, 3, 10, 3), std::pow(b / (a + b), 3), 1e-12);
  EXPECT_NEAR(blume::math::stable_fpr(1000, 3, 10, 3), std::pow(1 - std::pow(b / (a + b), 3), 3), 1e-12);
}

TEST(StableFilter, DecrementsForARateInvertTheFormula) {
  const double p = blume::math::stable_decrements_for(1e6, 4, 3, 0.01);
  EXPECT_NEAR(blume::math::stable_fpr(1e6, 4, p, 3), 0.01, 1e-9);
}

TEST(StableFilter, MeasuredRateConvergesToTheStableRateOnAnEndlessStream) {
  // The slow builds scale the capacity, the stream and the probes alike: the stream is still ten capacities.
  const std::uint64_t capacity = blume_test::scaled(200'000), stream = 10 * capacity;
  stable f = stable::for_rate(capacity, 4, 0.02, 11);
  for (std::uint64_t i = 0; i < stream; ++i) f.insert(present_key(i));  // far past convergence
  EXPECT_NEAR(f.zero_fraction(), f.stable_zero_fraction(), 0.01);
  const std::uint64_t probes = 5 * capacity;
  const double measured = static_cast<double>(f.count_contained(blume_test::absent_key_view(probes))) / probes;
  EXPECT_NEAR(measured, f.stable_fpr(), blume_test::fpr_tolerance(f.stable_fpr(), probes, 0.05));
  // and it stays there: another long stretch of the stream changes nothing
  for (std::uint64_t i = stream; i < stream + stream / 2; ++i) f.insert(present_key(i));
  const double later = static_cast<double>(f.count_contained(blume_test::absent_key_view(probes, probes))) / probes;
  EXPECT_NEAR(later, f.stable_fpr(), blume_test::fpr_tolerance(f.stable_fpr(), probes, 0.05));
}

TEST(StableFilter, RecentKeysAreFoundAndOldOnesFade) {
  stable f = stable::for_rate(200'000, 4, 0.02, 12);
  const std::uint64_t n = 1'000'000;
  for (std::uint64_t i = 0; i < n; ++i) f.insert(present_key(i));
  auto miss_rate = [&](std::uint64_t first, std::uint64_t count) {
    std::uint64_t missed = 0;
    for (std::uint64_t i = first; i < first + count; ++i) missed += !f.contains(present_key(i));
    return static_cast<double>(missed) / static_cast<double>(count);
  };
  const double newest = miss_rate(n - 1000, 1000);     // the last 1000 keys
  const double older = miss_rate(n - 60'000, 10'000);  // 50k–60k keys ago
  const double oldest = miss_rate(0, 10'000);          // a million keys ago
  EXPECT_LT(newest, 0.001);
  EXPECT_GT(oldest, 0.9);
  EXPECT_LT(newest, older);
  EXPECT_LT(older, oldest);
}

TEST(StableFilter, MeasuredRecallByAgeMatchesTheModel) {
  // After convergence, keys of each age (inserts since their own) are found at the model's rate.
  stable f = stable::for_rate(200'000, 4, 0.02, 13);
  const std::uint64_t warmup = 1'000'000, stream = 400'000;
  for (std::uint64_t i = 0; i < warmup + stream; ++i) f.insert(present_key(i));
  for (const std::uint64_t age : {1'000u, 20'000u, 50'000u, 100'000u, 200'000u}) {
    const std::uint64_t probes = 20'000, newest = warmup + stream - age;
    std::uint64_t found = 0;
    for (std::uint64_t j = 0; j < probes; ++j) found += f.contains(present_key(newest - j));
    // Probes span ages age … age + probes: compare with the model averaged over that span.
    double model = 0;
    for (std::uint64_t s = 0; s < 64; ++s) model += f.recall_after(age + (2 * s + 1) * probes / 128) / 64;
    const double measured = static_cast<double>(found) / probes;
    EXPECT_NEAR(measured, model, 0.02 + 4 * std::sqrt(model * (1 - model) / probes)) << "age " << age;
    std::printf("age %llu: measured recall %.4f, model %.4f\n", static_cast<unsigned long long>(age), measured, model);
  }
  EXPECT_DOUBLE_EQ(f.recall_after(0), 1.0);
  // A key old enough is as good as absent: found only at the stable false-positive rate.
  EXPECT_NEAR(f.recall_after(10'000'000), f.stable_fpr(), 1e-3);
}

TEST(StableFilter, InsertReportsWhetherTheKeyWasSeen) {
  stable f(10'000, 3, 5);
  EXPECT_TRUE(f.insert("first"));
  EXPECT_FALSE(f.insert("first"));
  EXPECT_TRUE(f.contains("first"));
}

TEST(StableFilter, BadParametersAreRejectedNamingTheValue) {
  EXPECT_TRUE(blume_test::mentions_number(blume_test::message_of<blume::invalid_argument>([] { stable(1000, 3, 0); }),
                                          0));
  EXPECT_TRUE(blume_test::mentions(blume_test::message_of<blume::invalid_argument>([] { stable(1000, 3, 5000); }),
                                   "5000"));
  EXPECT_THROW(stable(0, 3, 1), blume::invalid_argument);
  EXPECT_THROW(stable(1000, 0, 1), blume::invalid_argument);
  EXPECT_THROW(stable::for_rate(1000, 3, 1.5), blume::invalid_argument);
}

TEST(StableFilter, MaxOutsideTheCellWidthIsRejectedNamingTheValue) {
  EXPECT_TRUE(blume_test::mentions(blume_test::message_of<blume::invalid_argument>([] { stable(1000, 3, 5, 1, 0); }),
                                   "got 0"));
  EXPECT_TRUE(blume_test::mentions(blume_test::message_of<blume::invalid_argument>([] { stable(1000, 3, 5, 1, 4); }),
                                   "got 4"));
}

TEST(StableFilter, SmallerMaxFadesKeysSooner) {
  stable three = stable(100'000, 3, 10, 5, 3), one = stable(100'000, 3, 10, 5, 1);
  for (std::uint64_t i = 0; i < 200'000; ++i) {
    three.insert(present_key(i));
    one.insert(present_key(i));
  }
  EXPECT_GT(one.zero_fraction(), three.zero_fraction());
  EXPECT_NEAR(one.zero_fraction(), one.stable_zero_fraction(), 0.01);
  EXPECT_NEAR(three.zero_fraction(), three.stable_zero_fraction(), 0.01);
}

TEST(StableFilter, HasNoMergeAndSaysWhy) {
  static_assert(!blume::can_merge<stable>, "a union of decayed states means nothing");
  EXPECT_TRUE(mentions(std::string(stable::merge_refusal), "decay"));
}

TEST(StableFilter, RoundTripsAndKeepsDecayingTheSameWay) {
  stable f = stable::for_rate(10'000, 3, 0.05, 3);
  for (std::uint64_t i = 0; i < 20'000; ++i) f.insert(present_key(i));
  stable copy = blume::from_bytes<stable>(blume::to_bytes(f));
  EXPECT_TRUE(copy == f);
  for (std::uint64_t i = 20'000; i < 21'000; ++i) {
    f.insert(present_key(i));
    copy.insert(present_key(i));
  }
  EXPECT_TRUE(copy == f) << "the random decrements continue from the saved state";
  const blume_test::temp_dir dir;
  blume::save(f, dir / "s.blume");
  EXPECT_TRUE(blume::map_file<stable>(dir / "s.blume") == f);
}

TEST(StableFilter, DamagedFilesAreRejected) {
  const auto bytes = blume::to_bytes(stable(1000, 3, 5));
  for (std::size_t i = 0; i < blume::header_size; ++i) {
    auto damaged = bytes;
    damaged[i] ^= std::byte{0x04};
    EXPECT_THROW(blume::from_bytes<stable>(damaged), blume::format_error) << i;
  }
  for (std::size_t n = 0; n < bytes.size(); n += 7)
    EXPECT_THROW(blume::from_bytes<stable>(std::span(bytes.data(), n)), blume::format_error) << n;
  EXPECT_THROW(blume::from_bytes<blume::stable_bloom_filter<4>>(bytes), blume::format_error);
}

}  // namespace
