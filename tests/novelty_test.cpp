// SPDX-License-Identifier: Apache-2.0
// The fruit fly's novelty filter: FlyHash's tags (pinned, invariant to shifts and scales of the input), the
// paper's rules held exactly (an exact repeat reads δ; the lazy recovery equals the step-by-step rule over a
// random history; a seen input's novelty rises back as 1 − (1 − δ)(1 − ε)^t), distance sensitivity (novelty
// after one observation is the share of the tag a perturbed input does not share, and grows with the
// perturbation), unseen inputs against the model, and the file's checks.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "blume/io/format.hpp"
#include "blume/kinds/novelty_filter.hpp"
#include "forge.hpp"
#include "test_support.hpp"

namespace {

using blume::novelty_filter;
using blume::novelty_geometry;
using blume::novelty_rules;

std::vector<double> random_input(std::mt19937_64& rng, std::uint32_t dim) {
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<double> x(dim);
  for (double& v : x) v = u(rng);
  return x;
}

std::vector<double> perturbed(const std::vector<double>& x, double sigma, std::mt19937_64& rng) {
  std::normal_distribution<double> noise(0, sigma);
  std::vector<double> y = x;
  for (double& v : y) v += noise(rng);
  return y;
}

std::size_t shared(const std::vector<std::uint32_t>& a, const std::vector<std::uint32_t>& b) {
  std::vector<std::uint32_t> both;
  std::set_intersection(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(both));
  return both.size();
}

// ---- FlyHash ------------------------------------------------------------------------------------------

TEST(FlyHash, UnitsSampleDistinctInputsAndTagsAreTheLargestSums) {
  const blume::detail::flyhash h(50, 2000, 6, 100, 7);
  std::vector<std::uint32_t> hits(50);
  for (std::uint32_t u = 0; u < h.units(); ++u) {
    const auto in = h.inputs_of(u);
    ASSERT_EQ(in.size(), 6u);
    for (std::size_t j = 0; j < in.size(); ++j) {
      ASSERT_LT(in[j], 50u);
      if (j > 0) {
        ASSERT_LT(in[j - 1], in[j]);
      }
      ++hits[in[j]];
    }
  }
  // 12,000 draws over 50 inputs: 240 each on average; a binomial spread of ±15 per input, checked at ±5σ.
  for (const std::uint32_t n : hits) EXPECT_NEAR(n, 240, 75);

  std::mt19937_64 rng(1);
  const auto x = random_input(rng, 50);
  const auto tag = h.tag(x);
  ASSERT_EQ(tag.size(), 100u);
  ASSERT_TRUE(std::is_sorted(tag.begin(), tag.end()));
  std::vector<double> sums(h.units());
  for (std::uint32_t u = 0; u < h.units(); ++u)
    for (const std::uint32_t i : h.inputs_of(u)) sums[u] += x[i];
  double least_in = 1e300, most_out = -1e300;
  for (std::uint32_t u = 0; u < h.units(); ++u) {
    if (std::binary_search(tag.begin(), tag.end(), u)) {
      least_in = std::min(least_in, sums[u]);
    } else {
      most_out = std::max(most_out, sums[u]);
    }
  }
  EXPECT_GE(least_in, most_out);
}

TEST(FlyHash, ShiftingOrScalingAnInputKeepsItsTag) {
  const blume::detail::flyhash h(20, 500, 4, 25, 3);
  std::mt19937_64 rng(2);
  for (int t = 0; t < 50; ++t) {
    // Multiples of 2^-10 below 1: their sums, shifted by 1/4 or scaled by 4, are exact, so the tag must not move.
    std::vector<double> x(20);
    for (double& v : x) v = static_cast<double>(rng() % 1024) / 1024;
    auto shifted = x, scaled = x;
    for (double& v : shifted) v += 0.25;
    for (double& v : scaled) v *= 4;
    EXPECT_EQ(h.tag(shifted), h.tag(x));
    EXPECT_EQ(h.tag(scaled), h.tag(x));
  }
}

// The projection is not stored in files: a reader draws it again from the seed, so the draw is part of the
// format (docs/format.md, "novelty"). These values pin it.
TEST(FlyHash, TheDrawIsPinned) {
  const blume::detail::flyhash h(50, 2000, 6, 100, blume::flyhash_projection::default_seed);
  const auto first = h.inputs_of(0), last = h.inputs_of(1999);
  EXPECT_EQ(std::vector<std::uint32_t>(first.begin(), first.end()),
            (std::vector<std::uint32_t>{4, 12, 15, 24, 29, 41}));
  EXPECT_EQ(std::vector<std::uint32_t>(last.begin(), last.end()), (std::vector<std::uint32_t>{8, 17, 29, 38, 39, 41}));
  std::vector<double> ramp(50);
  for (std::size_t i = 0; i < ramp.size(); ++i) ramp[i] = static_cast<double>((i * 37) % 50);
  const auto tag = h.tag(ramp);
  EXPECT_EQ(std::vector<std::uint32_t>(tag.begin(), tag.begin() + 8),
            (std::vector<std::uint32_t>{9, 32, 35, 71, 134, 165, 188, 189}));
}

// ---- the paper's rules ----------------------------------------------------------------------------------

TEST(NoveltyRules, AnExactRepeatReadsTheDepressionAndANewInputReadsOne) {
  novelty_filter f(novelty_geometry{50}, novelty_rules{0.4, 0.01});
  std::mt19937_64 rng(3);
  const auto x = random_input(rng, 50);
  EXPECT_EQ(f.novelty(x), 1.0);
  EXPECT_EQ(f.observe(x), 1.0);
  // The mean of k weights of 0.4 each, summed in double: 0.4 within a few ulps.
  EXPECT_NEAR(f.novelty(x), 0.4, 1e-14);
  EXPECT_EQ(f.clock(), 1u);
  EXPECT_EQ(f.observed(), 1u);
  EXPECT_NEAR(f.observe(x), 0.4, 1e-14);
  EXPECT_NEAR(f.novelty(x), 0.16, 1e-15);

  novelty_filter binary(novelty_geometry{50}, novelty_rules{0, 0});
  binary.observe(x);
  EXPECT_EQ(binary.novelty(x), 0.0);
  binary.elapse(1000000);
  EXPECT_EQ(binary.novelty(x), 0.0);  // no recovery: the binary filter never forgets
}

// Time sensitivity: a seen input's novelty rises back as 1 − (1 − δ)(1 − ε)^t after t further steps.
TEST(NoveltyRules, ASeenInputRecoversAsTheRuleSays) {
  for (const novelty_rules r : {novelty_rules{0.4, 0.01}, novelty_rules{0, 0.05}, novelty_rules{0.9, 0.001}}) {
    novelty_filter f(novelty_geometry{50}, r);
    std::mt19937_64 rng(4);
    const auto x = random_input(rng, 50);
    f.observe(x);
    std::uint64_t t = 0;
    for (const std::uint64_t step : {1, 9, 90, 900, 9000}) {
      f.elapse(step);
      t += step;
      const double rule = 1 - (1 - r.depression) * std::pow(1 - r.recovery, static_cast<double>(t));
      EXPECT_NEAR(f.novelty(x), rule, 1e-12) << "after " << t << " steps, δ " << r.depression << ", ε " << r.recovery;
    }
  }
}

// The lazy recovery is the paper's eager rule: a direct simulation that depresses the tag and recovers every
// other unit at each observation, and recovers every unit at each elapsed step, holds the same weights.
TEST(NoveltyRules, LazyRecoveryEqualsTheStepByStepRule) {
  const novelty_rules r{0.3, 0.02};
  novelty_filter f(novelty_geometry{16, 300, 4, 15}, r, 11);
  std::vector<double> w(300, 1.0);
  std::mt19937_64 rng(5);
  std::vector<double> past;
  for (int step = 0; step < 400; ++step) {
    if (step % 7 == 3) {
      f.elapse(3);
      for (int i = 0; i < 3; ++i)
        for (double& v : w) v += r.recovery * (1 - v);
      continue;
    }
    // Inputs repeat and come near earlier ones, so units are hit again while they recover.
    auto x = random_input(rng, 16);
    if (step % 3 == 0 && !past.empty()) x = perturbed(past, 0.05, rng);
    past = x;
    const auto tag = f.tag(x);
    double expected = 0;
    for (const std::uint32_t u : tag) expected += w[u];
    expected /= static_cast<double>(tag.size());
    ASSERT_NEAR(f.observe(x), expected, 1e-12) << "step " << step;
    for (std::uint32_t u = 0; u < 300; ++u) {
      if (std::binary_search(tag.begin(), tag.end(), u)) w[u] *= r.depression;
      else w[u] += r.recovery * (1 - w[u]);
    }
  }
  for (std::uint32_t u = 0; u < 300; ++u) ASSERT_NEAR(f.weight(u), w[u], 1e-12) << "unit " << u;
}

// Distance sensitivity. After one observation of x (binary rule), a perturbed x' reads exactly the share of
// its tag that x's tag lacks, and the mean over 200 perturbations grows with the perturbation's size.
// Measured (d = 50, m = 2000, s = 6, k = 100, inputs uniform in [0, 1), Gaussian noise of deviation σ on each
// value): σ = 0.01 → 0.031, 0.03 → 0.087, 0.1 → 0.28, 0.3 → 0.61, 1 → 0.87.
TEST(NoveltyDistance, APerturbedInputReadsTheShareOfItsTagNotShared) {
  std::mt19937_64 rng(6);
  double previous = -1;
  for (const double sigma : {0.0, 0.01, 0.03, 0.1, 0.3, 1.0}) {
    double sum = 0;
    const int trials = 200;
    for (int t = 0; t < trials; ++t) {
      novelty_filter f(novelty_geometry{50}, novelty_rules{0, 0}, 100 + t);
      const auto x = random_input(rng, 50);
      f.observe(x);
      const auto y = perturbed(x, sigma, rng);
      const double v = f.novelty(y);
      ASSERT_NEAR(v, 1 - static_cast<double>(shared(f.tag(x), f.tag(y))) / f.tag_size(), 1e-14);
      sum += v;
    }
    const double mean = sum / trials;
    RecordProperty("sigma_" + std::to_string(sigma), std::to_string(mean));
    if (sigma == 0) {
      EXPECT_EQ(mean, 0.0);
    } else if (sigma == 0.01) {
      EXPECT_LT(mean, 0.2);
    } else if (sigma == 1.0) {
      EXPECT_GT(mean, 0.8);
    }
    EXPECT_GT(mean, previous) << "σ " << sigma;
    previous = mean;
  }
}

// Unseen inputs. After n unrelated observations an unseen input's mean novelty is the model's
// (1 − (1 − δ)k/m)^n, and every exact repeat reads below every unseen input while the filter is not full.
TEST(NoveltyUnseen, UnseenInputsReadTheModelAndRepeatsReadLow) {
  std::mt19937_64 rng(7);
  novelty_filter f(novelty_geometry{50, 4000, 6, 40}, novelty_rules{0.4, 0});
  std::vector<std::vector<double>> seen;
  for (int i = 0; i < 100; ++i) {
    seen.push_back(random_input(rng, 50));
    f.observe(seen.back());
  }
  double sum = 0, lowest_unseen = 1;
  const int probes = 2000;
  for (int i = 0; i < probes; ++i) {
    const double v = f.novelty(random_input(rng, 50));
    sum += v;
    lowest_unseen = std::min(lowest_unseen, v);
  }
  // (1 − 0.6·0.01)^100 ≈ 0.548; measured 0.554. Seen inputs read at most 0.30, unseen at least 0.32.
  const double model = f.expected_novelty(100);
  EXPECT_NEAR(sum / probes, model, 0.05) << "model " << model;
  double highest_seen = 0;
  for (const auto& x : seen) highest_seen = std::max(highest_seen, f.novelty(x));
  EXPECT_LT(highest_seen, lowest_unseen);
  RecordProperty("mean_unseen", std::to_string(sum / probes));
  RecordProperty("model", std::to_string(model));
}

TEST(NoveltyUnseen, TheBinaryRulesFalseSeenRateHoldsToItsModel) {
  // Binary rule, random inputs: an unseen input reads 0 with probability (1 − (1 − k/m)^n)^k, a mean over
  // filters (projections and histories), so the measurement is too: 40 seeds, each with its own history.
  std::mt19937_64 rng(8);
  const int filters = 40, probes = static_cast<int>(blume_test::scaled(5000, 10, 1000));
  int zero = 0;
  for (int s = 0; s < filters; ++s) {
    novelty_filter f(novelty_geometry{50, 1000, 6, 4}, novelty_rules{0, 0}, 1000 + static_cast<std::uint64_t>(s));
    for (int i = 0; i < 300; ++i) f.observe(random_input(rng, 50));
    for (int i = 0; i < probes; ++i) zero += f.novelty(random_input(rng, 50)) == 0 ? 1 : 0;
  }
  const double model = novelty_filter::model_fpr(300, 1000, 4), n = static_cast<double>(filters) * probes;
  EXPECT_TRUE(blume_test::within_binomial_999(zero, static_cast<std::uint64_t>(n), model, 0.05))
      << static_cast<double>(zero) / n << " against the model's " << model;
}

// ---- parameters, inputs and files -------------------------------------------------------------------------

TEST(NoveltyErrors, BadParametersAndInputsAreRefusedByName) {
  using blume_test::mentions;
  const auto refused = [](novelty_geometry g, novelty_rules r = {}) {
    return blume_test::message_of<blume::invalid_argument>([&] { novelty_filter f(g, r); });
  };
  EXPECT_TRUE(mentions(refused({0}), "dim"));
  EXPECT_TRUE(mentions(refused({10, 0}), "units"));
  EXPECT_TRUE(mentions(refused({4, 100, 6}), "samples"));
  EXPECT_TRUE(mentions(refused({10, 100, 6, 101}), "tag"));
  EXPECT_TRUE(mentions(refused({10}, {1.0, 0}), "depression"));
  EXPECT_TRUE(mentions(refused({10}, {0.5, 1.5}), "recovery"));
  EXPECT_TRUE(mentions(refused({10}, {std::nan(""), 0}), "depression"));
  novelty_filter f(novelty_geometry{10});
  EXPECT_EQ(f.tag_size(), 100u);  // 5% of 2000
  EXPECT_TRUE(mentions(blume_test::message_of<blume::invalid_argument>([&] { f.observe(std::vector<double>(9)); }),
                       "9 values"));
  std::vector<double> bad(10, 1.0);
  bad[3] = std::nan("");
  EXPECT_TRUE(mentions(blume_test::message_of<blume::invalid_argument>([&] { (void)f.novelty(bad); }), "value 3"));
  bad[3] = INFINITY;
  EXPECT_THROW(f.observe(bad), blume::invalid_argument);
  EXPECT_EQ(f.observed(), 0u);
  std::vector<double> rows(25, 0.5), out(2);
  EXPECT_THROW(f.observe_many(rows, out), blume::invalid_argument);  // 25 values are not rows of 10
  EXPECT_EQ(f.observed(), 0u);
}

TEST(NoveltyBatches, ManyAtOnceEqualsOneByOne) {
  std::mt19937_64 rng(9);
  std::vector<double> rows;
  for (int i = 0; i < 40; ++i) {
    const auto x = random_input(rng, 12);
    rows.insert(rows.end(), x.begin(), x.end());
  }
  novelty_filter a(novelty_geometry{12, 400}), b(novelty_geometry{12, 400});
  std::vector<double> out(40), scores(40);
  a.observe_many(rows, out);
  for (int i = 0; i < 40; ++i) EXPECT_EQ(b.observe(std::span<const double>(rows).subspan(i * 12, 12)), out[i]);
  EXPECT_EQ(a, b);
  a.novelty_many(rows, scores);
  for (int i = 0; i < 40; ++i) EXPECT_EQ(b.novelty(std::span<const double>(rows).subspan(i * 12, 12)), scores[i]);
}

TEST(NoveltyFormat, RoundTripsAndReadsAsBefore) {
  std::mt19937_64 rng(10);
  novelty_filter f(novelty_geometry{20, 300, 5, 12}, novelty_rules{0.25, 0.03}, 99);
  for (int i = 0; i < 30; ++i) f.observe(random_input(rng, 20));
  f.elapse(17);
  const auto bytes = blume::to_bytes(f);
  const auto g = blume::from_bytes<novelty_filter>(bytes);
  EXPECT_EQ(g, f);
  EXPECT_EQ(g.clock(), 47u);
  EXPECT_EQ(g.observed(), 30u);
  EXPECT_EQ(g.rules().depression, 0.25);
  EXPECT_EQ(g.rules().recovery, 0.03);
  for (int i = 0; i < 50; ++i) {
    const auto x = random_input(rng, 20);
    EXPECT_EQ(g.novelty(x), f.novelty(x));
  }
}

TEST(NoveltyFormat, DamagedFilesAreRefused) {
  novelty_filter f(novelty_geometry{8, 64, 3, 4}, novelty_rules{0.5, 0.1});
  std::mt19937_64 rng(11);
  for (int i = 0; i < 5; ++i) f.observe(random_input(rng, 8));
  const auto good = blume::to_bytes(f);
  auto forged = [&](auto damage) {
    auto bytes = good;
    damage(bytes);
    blume_test::fix_checksums(bytes);
    return blume_test::message_of<blume::format_error>([&] { (void)blume::from_bytes<novelty_filter>(bytes); });
  };
  using blume::detail::write_le;
  const auto cell = [](std::vector<std::byte>& b, std::size_t u, std::size_t field) {
    return b.data() + blume::header_size + 16 * u + 8 * field;
  };
  EXPECT_TRUE(blume_test::mentions(forged([&](auto& b) { write_le<std::uint64_t>(cell(b, 3, 0), 0x3ff0000000000001); }),
                                   "outside [0, 1]"));
  EXPECT_TRUE(blume_test::mentions(forged([&](auto& b) { write_le<std::uint64_t>(cell(b, 3, 0), 0x7ff8000000000000); }),
                                   "outside [0, 1]"));
  EXPECT_TRUE(blume_test::mentions(forged([&](auto& b) { write_le<std::uint64_t>(cell(b, 5, 1), 6); }),
                                   "after the clock"));
  // The clock (extra[1]) below the observations.
  EXPECT_TRUE(blume_test::mentions(
      forged([&](auto& b) { write_le<std::uint64_t>(b.data() + blume::detail::off_reserved + 8, 4); }), "clock"));
  // Samples beyond 32 (layout), or beyond the dimension (extra[0]): refused before any projection is drawn.
  EXPECT_TRUE(blume_test::mentions(
      forged([&](auto& b) { write_le<std::uint32_t>(b.data() + blume::detail::off_block_bits, 33); }), "samples"));
  EXPECT_TRUE(blume_test::mentions(
      forged([&](auto& b) { write_le<std::uint64_t>(b.data() + blume::detail::off_reserved, 2); }), "samples"));
  // A depression of 1 (extra[2]).
  EXPECT_TRUE(blume_test::mentions(forged([&](auto& b) {
                                     write_le<std::uint64_t>(b.data() + blume::detail::off_reserved + 16,
                                                             0x3ff0000000000000);
                                   }),
                                   "depression"));
}

}  // namespace
