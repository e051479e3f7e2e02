// SPDX-License-Identifier: Apache-2.0
// The invertible Bloom lookup table and the strata estimator: a decode that reports success lists exactly
// the symmetric difference, over many seeds and sizes; an overfull table says it failed and how many it
// recovered; tables of other geometries refuse to subtract; the estimator's estimates stay within the
// bounds its sizing assumes; and as a membership filter it has no false negatives and the partitioned
// model's rate at 1M keys.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <set>
#include <vector>

#include "test_support.hpp"

namespace {

using blume::iblt_listing;
using blume::invertible_bloom_filter;
using blume::strata_estimator;
using blume_test::absent_key;
using blume_test::present_key;

using table = invertible_bloom_filter<>;

std::uint64_t id_of(std::uint64_t key, const table& t) { return t.hash(key).low; }

std::vector<std::uint64_t> sorted_ids(const std::vector<std::uint64_t>& keys, const table& t) {
  std::vector<std::uint64_t> ids;
  for (const std::uint64_t k : keys) ids.push_back(id_of(k, t));
  std::sort(ids.begin(), ids.end());
  return ids;
}

TEST(Iblt, InsertsErasesAndLists) {
  table t = table::with_geometry(30, 3);
  EXPECT_FALSE(t.contains(std::string_view("k")));
  EXPECT_FALSE(t.erase(std::string_view("k"))) << "a key certainly absent is refused";
  t.insert(std::string_view("k"));
  t.insert(std::string_view("l"));
  EXPECT_TRUE(t.contains(std::string_view("k")));
  EXPECT_TRUE(t.erase(std::string_view("k")));
  EXPECT_EQ(t.inserted(), 2u);
  EXPECT_EQ(t.erased(), 1u);
  const iblt_listing l = t.decode();
  ASSERT_TRUE(l.complete);
  EXPECT_EQ(l.only_here, std::vector<std::uint64_t>{t.hash(std::string_view("l")).low});
  EXPECT_TRUE(l.only_there.empty());
}

// A: shared keys plus its own; B: the shared keys plus others. Whenever decode says complete, the lists
// are exactly A \ B and B \ A, for sizes around the planned difference and above it (where some decodes
// fail, and must say so).
TEST(Iblt, DecodesExactlyWhenItSaysSo) {
  std::mt19937_64 rng(2024);
  int complete = 0, incomplete = 0;
  for (const std::uint64_t d : {0, 1, 2, 3, 5, 10, 40, 100, 1000, 3000}) {
    for (int trial = 0; trial < (d <= 100 ? 200 : 20); ++trial) {
      const std::uint64_t seed = rng();
      const std::uint64_t planned = trial % 4 == 3 ? std::max<std::uint64_t>(d / 2, 1) : d;  // some overfull
      table a = table::for_difference(planned, seed);
      table b = a.empty_like();
      const std::uint64_t base = rng() >> 8;
      std::vector<std::uint64_t> only_a, only_b;
      for (std::uint64_t i = 0; i < 500; ++i) {
        a.insert(present_key(base + i));
        b.insert(present_key(base + i));
      }
      for (std::uint64_t i = 0; i < d; ++i) {
        const std::uint64_t key = present_key(base + 1000 + i);
        if (rng() % 2 == 0) {
          a.insert(key);
          only_a.push_back(key);
        } else {
          b.insert(key);
          only_b.push_back(key);
        }
      }
      a.subtract(b);
      const iblt_listing l = a.decode();
      if (l.complete) {
        ++complete;
        ASSERT_EQ(l.only_here, sorted_ids(only_a, a)) << "d " << d << " trial " << trial;
        ASSERT_EQ(l.only_there, sorted_ids(only_b, a)) << "d " << d << " trial " << trial;
      } else {
        ++incomplete;
        EXPECT_LT(l.recovered(), d);
        // What it did recover is true.
        const std::vector<std::uint64_t> ta = sorted_ids(only_a, a), tb = sorted_ids(only_b, a);
        for (const std::uint64_t id : l.only_here) EXPECT_TRUE(std::binary_search(ta.begin(), ta.end(), id));
        for (const std::uint64_t id : l.only_there) EXPECT_TRUE(std::binary_search(tb.begin(), tb.end(), id));
      }
    }
  }
  EXPECT_GT(complete, 1200);
  EXPECT_GT(incomplete, 0) << "tables for half the difference sometimes fail";
}

TEST(Iblt, PlannedTablesDecodeAtLeast99Percent) {
  std::mt19937_64 rng(7);
  for (const std::uint64_t d : {1, 2, 4, 10, 25, 100, 700, 1000, 5000}) {
    const int trials = static_cast<int>(blume_test::scaled(d <= 1000 ? 2000 : 200, 10, 20));
    int fails = 0;
    for (int t = 0; t < trials; ++t) {
      table f = table::for_difference(d, rng());
      for (std::uint64_t i = 0; i < d; ++i) f.insert(blume::digest{rng(), 0});
      fails += !f.decode().complete;
    }
    // 1% planned; the 99.9% binomial bound above it.
    EXPECT_TRUE(fails <= 0.01 * trials || blume_test::within_binomial_999(fails, trials, 0.01)) << "d " << d;
  }
}

TEST(Iblt, OverfullTableReportsFailureAndWhatItRecovered) {
  table t = table::with_geometry(60, 3, 1, 5);
  for (std::uint64_t i = 0; i < 200; ++i) t.insert(present_key(i));
  const iblt_listing l = t.decode();
  EXPECT_FALSE(l.complete);
  EXPECT_LT(l.recovered(), 200u);
}

TEST(Iblt, SubtractNeedsTheSameGeometryAndSeed) {
  const table a = table::with_geometry(60, 3, 1, 5);
  for (table b : {table::with_geometry(63, 3, 1, 5), table::with_geometry(60, 4, 1, 5),
                  table::with_geometry(60, 3, 2, 5), table::with_geometry(60, 3, 1, 6)}) {
    table c = a;
    EXPECT_TRUE(blume_test::mentions(blume_test::message_of<blume::incompatible_filters>([&] { c.subtract(b); }),
                                     "cannot subtract"));
    EXPECT_THROW(c.merge(b), blume::incompatible_filters);
  }
}

TEST(Iblt, InvalidGeometryIsRefusedBeforeAllocating) {
  using blume::invalid_argument;
  EXPECT_THROW(table::with_geometry(0, 3), invalid_argument);
  EXPECT_THROW(table::with_geometry(61, 3), invalid_argument);
  EXPECT_THROW(table::with_geometry(60, 1), invalid_argument);
  EXPECT_THROW(table::with_geometry(60, 17), invalid_argument);
  EXPECT_THROW(table::with_geometry(64, 4, 33), invalid_argument);
  EXPECT_THROW(table::with_geometry(table::max_cells / 4 * 4 + 4, 4), invalid_argument);
  EXPECT_THROW(table(0, 0.01), invalid_argument);
  EXPECT_THROW(table(10, 1.5), invalid_argument);
}

TEST(Iblt, MergeAddsAndSubtractTakesAway) {
  table a = table::with_geometry(300, 3), b = a.empty_like();
  for (std::uint64_t i = 0; i < 50; ++i) a.insert(present_key(i));
  for (std::uint64_t i = 50; i < 80; ++i) b.insert(present_key(i));
  table both = a;
  both.merge(b);
  for (std::uint64_t i = 0; i < 80; ++i) EXPECT_TRUE(both.contains(present_key(i)));
  both.subtract(b);
  EXPECT_EQ(both.decode().only_here, a.decode().only_here);
  EXPECT_TRUE(both.decode().only_there.empty());
}

TEST(Iblt, RoundTripsThroughBytes) {
  table t = table::with_geometry(600, 4, 2, 99);
  for (std::uint64_t i = 0; i < 100; ++i) t.insert(present_key(i));
  for (std::uint64_t i = 0; i < 10; ++i) EXPECT_TRUE(t.erase(present_key(i)));
  const table back = blume::from_bytes<table>(blume::to_bytes(t));
  EXPECT_EQ(back, t);
  EXPECT_EQ(back.erased(), 10u);
  EXPECT_EQ(back.strata(), 2u);
  EXPECT_EQ(back.decode().only_here, t.decode().only_here);
}

TEST(Iblt, NoFalseNegativesThroughInsertsAndErases) {
  table t(20'000, 0.01);
  std::mt19937_64 rng(3);
  std::vector<int> times(30'000, 0);
  for (int step = 0; step < 100'000; ++step) {
    const std::size_t i = rng() % times.size();
    if (times[i] > 0 && rng() % 3 == 0) {
      ASSERT_TRUE(t.erase(present_key(i)));
      --times[i];
    } else {
      t.insert(present_key(i));
      ++times[i];
    }
  }
  for (std::size_t j = 0; j < times.size(); ++j)
    if (times[j] > 0) {
      ASSERT_TRUE(t.contains(present_key(j))) << j;
    }
}

// The partitioned model (math::partitioned_fpr) at 1M keys, at the planned 1% and at a listing-sized table.
TEST(Iblt, FalsePositiveRateFollowsTheModelAt1M) {
  constexpr std::uint64_t n = blume_test::scaled(1'000'000), probes = blume_test::scaled(1'000'000);
  constexpr std::uint64_t cells = blume_test::slow_build ? 130'002 : 1'300'002;  // 1.3 per key, a multiple of 3
  for (const table& t : {table(n, 0.01), table::with_geometry(cells, 3)}) {
    table f = t;
    for (std::uint64_t i = 0; i < n; ++i) f.insert(present_key(i));
    const std::size_t hits = f.count_contained(blume_test::absent_key_view(probes));
    EXPECT_TRUE(blume_test::within_binomial_999(static_cast<double>(hits), probes, f.predicted_fpr()))
        << f.cells() << " cells, k " << f.hashes();
  }
  EXPECT_LE(table(n, 0.01).predicted_fpr(), 0.01);
}

TEST(Iblt, PlanListsItsEntriesBack) {
  const blume::filter_plan p = table::plan(1000, 0.5);
  EXPECT_GE(static_cast<double>(p.bits), 1.3 * 1000);
  table t(p);
  for (std::uint64_t i = 0; i < 1000; ++i) t.insert(present_key(i));
  EXPECT_TRUE(t.decode().complete);
  EXPECT_EQ(blume::plan_for(1000, 0.01, table::kind).hashes, 7u);
}

// Exact while every stratum decodes; otherwise within [0.6, 1.8]·d (measured 0.1% and 99.9% quantiles are
// about 0.67 and 1.3), and the headroom covers the low side for most sketches.
TEST(StrataEstimator, EstimatesTheDifference) {
  std::mt19937_64 rng(11);
  for (const std::uint64_t d : {0, 1, 10, 30, 1000, 20'000}) {
    int under = 0;
    const int trials = d >= 20'000 ? 20 : 100;
    for (int trial = 0; trial < trials; ++trial) {
      strata_estimator<> a(77), b(77);
      const std::uint64_t base = rng() >> 8;
      for (std::uint64_t i = 0; i < 2000; ++i) {
        a.insert(present_key(base + i));
        b.insert(present_key(base + i));
      }
      for (std::uint64_t i = 0; i < d; ++i) (i % 3 == 0 ? b : a).insert(present_key(base + 10'000 + i));
      const blume::difference_estimate e = a.estimate(b);
      if (d <= 10) {
        EXPECT_TRUE(e.exact);
      }
      if (e.exact) {
        EXPECT_EQ(e.estimate, static_cast<double>(d));
      } else {
        EXPECT_GE(e.estimate, 0.6 * static_cast<double>(d));
        EXPECT_LE(e.estimate, 1.8 * static_cast<double>(d));
      }
      under += strata_estimator<>::differences_to_plan(e) < d;
    }
    EXPECT_LE(under, trials / 20) << "d " << d;
  }
}

TEST(StrataEstimator, RefusesOtherTablesAndSeeds) {
  EXPECT_THROW(strata_estimator<>(table::with_geometry(60, 3)), blume::invalid_argument);
  const strata_estimator<> a(1), b(2);
  EXPECT_THROW((void)a.estimate(b), blume::incompatible_filters);
  const strata_estimator<> c(blume::from_bytes<table>(blume::to_bytes(a.table())));
  EXPECT_TRUE(c.estimate(a).exact);
}

}  // namespace
