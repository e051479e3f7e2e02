// SPDX-License-Identifier: Apache-2.0
// The spatial Bloom filter: which set a key is in, the per-set error model of Calderoni, Palmieri & Maio
// (2018) held to measurement, the planner, and its file bytes.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <numeric>
#include <optional>
#include <span>
#include <vector>

#include "forge.hpp"
#include "test_support.hpp"

namespace {

using blume::spatial_bloom_filter;
using blume_test::absent_key;
using blume_test::present_key;

TEST(Spatial, AnswersTheSetAndNothingForAnEmptyFilter) {
  auto f = spatial_bloom_filter<>::with_geometry(10'000, 5, 3);
  EXPECT_FALSE(f.find(std::string_view("nowhere")).has_value());
  f.insert(std::string_view("rome"), 1);
  f.insert(std::string_view("paris"), 2);
  f.insert(std::string_view("oslo"), 3);
  EXPECT_EQ(f.find(std::string_view("rome")), 1u);
  EXPECT_EQ(f.find(std::string_view("paris")), 2u);
  EXPECT_EQ(f.find(std::string_view("oslo")), 3u);
  EXPECT_TRUE(f.contains(std::string_view("oslo")));
  EXPECT_EQ(f.set_size(2), 1u);
  EXPECT_EQ(f.inserted(), 3u);
}

TEST(Spatial, RefusesSetsOutsideItsRange) {
  auto f = spatial_bloom_filter<>::with_geometry(1000, 3, 4);
  EXPECT_THROW(f.insert(std::uint64_t{1}, 0u), blume::invalid_argument);
  EXPECT_THROW(f.insert(std::uint64_t{1}, 5u), blume::invalid_argument);
  EXPECT_THROW(spatial_bloom_filter<>::with_geometry(1000, 3, 256), blume::invalid_argument);
  EXPECT_THROW(spatial_bloom_filter<>::with_geometry(1000, 3, 0), blume::invalid_argument);
  EXPECT_NO_THROW(spatial_bloom_filter<std::uint16_t>::with_geometry(1000, 3, 256));
  const std::vector<std::uint64_t> keys{1, 2};
  EXPECT_TRUE(blume_test::mentions(blume_test::message_of<blume::invalid_argument>([&] {
                                     spatial_bloom_filter<>::from_pairs(keys, std::vector<std::uint64_t>{1, 300}, 0.01);
                                   }),
                                   "300"));
}

// The order of inserts does not matter: the cells are the paper's ascending-order construction.
TEST(Spatial, InsertOrderDoesNotChangeTheCells) {
  auto ascending = spatial_bloom_filter<>::with_geometry(5000, 4, 3);
  auto shuffled = spatial_bloom_filter<>::with_geometry(5000, 4, 3);
  for (std::uint32_t set = 1; set <= 3; ++set)
    for (std::uint64_t i = 0; i < 300; ++i) ascending.insert(present_key(set * 1000 + i), set);
  for (std::uint32_t set = 3; set >= 1; --set)
    for (std::uint64_t i = 0; i < 300; ++i) shuffled.insert(present_key(set * 1000 + i), set);
  EXPECT_EQ(ascending, shuffled);
}

// The published model at n = 1M over four sets of unequal sizes: for every set, absent keys reported as
// it, members reported as a later set (never an earlier set, never none), and the emersion.
TEST(Spatial, EverySetsRatesMatchTheModel) {
  const std::vector<std::uint64_t> sizes{blume_test::scaled(400'000), blume_test::scaled(300'000),
                                         blume_test::scaled(200'000), blume_test::scaled(100'000)};
  spatial_bloom_filter<> f(sizes, 0.01);
  const blume::filter_plan plan = blume::plan_spatial(sizes, 0.01);
  EXPECT_EQ(f.cells(), plan.bits);
  EXPECT_EQ(f.hashes(), plan.hashes);
  EXPECT_LE(plan.predicted_fpr, 0.01);
  std::uint64_t first = 0;
  for (std::uint32_t set = 1; set <= sizes.size(); ++set) {
    for (std::uint64_t i = 0; i < sizes[set - 1]; ++i) f.insert(present_key(first + i), set);
    first += sizes[set - 1];
  }
  const auto rates = f.all_set_rates();
  first = 0;
  for (std::uint32_t set = 1; set <= sizes.size(); ++set) {
    std::uint64_t later = 0;
    for (std::uint64_t i = 0; i < sizes[set - 1]; ++i) {
      const auto answer = f.find(present_key(first + i));
      ASSERT_TRUE(answer.has_value()) << "a member of set " << set << " was reported in no set";
      ASSERT_GE(*answer, set) << "a member of set " << set << " was reported as an earlier set";
      later += *answer > set;
    }
    first += sizes[set - 1];
    std::printf("set %u: misreported %.5f (model %.5f), emersion %.4f (model %.4f)\n", set,
                static_cast<double>(later) / static_cast<double>(sizes[set - 1]), rates[set - 1].misreport,
                f.emersion(set), rates[set - 1].emersion);
    EXPECT_TRUE(blume_test::within_binomial_999(static_cast<double>(later), static_cast<double>(sizes[set - 1]),
                                                rates[set - 1].misreport))
        << "set " << set;
    EXPECT_NEAR(f.emersion(set), rates[set - 1].emersion, 0.01) << "set " << set;
    EXPECT_LE(rates[set - 1].worst(), 0.01 * 1.05) << "the planned target, at the planned sizes";
  }
  constexpr std::uint64_t probes = blume_test::scaled(1'000'000);
  std::vector<std::uint64_t> reported(sizes.size() + 1, 0);
  for (std::uint64_t i = 0; i < probes; ++i) ++reported[f.find(absent_key(i)).value_or(0)];
  for (std::uint32_t set = 1; set <= sizes.size(); ++set) {
    std::printf("set %u: absent keys reported as it %.5f (model %.5f)\n", set,
                static_cast<double>(reported[set]) / probes, rates[set - 1].false_positive);
    EXPECT_TRUE(blume_test::within_binomial_999(static_cast<double>(reported[set]), probes,
                                                rates[set - 1].false_positive))
        << "set " << set;
  }
}

TEST(Spatial, ThePlannerKeepsTheWorstSetWithinTheTarget) {
  for (const double fpr : {0.1, 0.01, 0.001}) {
    const std::vector<std::uint64_t> sizes{1000, 50'000, 3000, 1};
    const blume::filter_plan p = blume::plan_spatial(sizes, fpr);
    double worst = 0;
    for (const auto& r : blume::detail::spatial_rates(sizes, static_cast<double>(p.bits), p.hashes))
      worst = std::max(worst, r.worst());
    EXPECT_LE(worst, fpr);
    EXPECT_DOUBLE_EQ(worst, p.predicted_fpr);
    // Not wasteful: 10% fewer cells miss the target.
    const auto fewer = static_cast<double>(p.bits) * 0.9;
    double worse = 0;
    for (const auto& r : blume::detail::spatial_rates(sizes, fewer, p.hashes)) worse = std::max(worse, r.worst());
    EXPECT_GT(worse, fpr);
  }
  EXPECT_THROW(blume::plan_spatial(std::vector<std::uint64_t>{}, 0.01), blume::invalid_argument);
  EXPECT_THROW(blume::plan_spatial(std::vector<std::uint64_t>{10}, 0.0), blume::invalid_argument);
  EXPECT_THROW(blume::plan_spatial(std::vector<std::uint64_t>(256, 1), 0.01), blume::invalid_argument);
  EXPECT_THROW(blume::plan_for(1000, 0.01, spatial_bloom_filter<>::kind), blume::invalid_argument);
  EXPECT_THROW(blume::plan_spatial(std::vector<std::uint64_t>{std::uint64_t{1} << 42}, 0.01), blume::invalid_argument);
}

TEST(Spatial, BulkCallsAgreeWithOneByOne) {
  std::vector<std::uint64_t> keys, sets;
  for (std::uint64_t i = 0; i < 20'000; ++i) {
    keys.push_back(present_key(i));
    sets.push_back(1 + i % 5);
  }
  auto bulk = spatial_bloom_filter<>::with_geometry(100'000, 5, 5);
  auto single = spatial_bloom_filter<>::with_geometry(100'000, 5, 5);
  bulk.insert_many(keys, sets);
  for (std::size_t i = 0; i < keys.size(); ++i) single.insert(keys[i], static_cast<std::uint32_t>(sets[i]));
  EXPECT_EQ(bulk, single);
  std::vector<std::uint64_t> probes = keys;
  for (std::uint64_t i = 0; i < 20'000; ++i) probes.push_back(absent_key(i));
  std::vector<std::optional<std::uint32_t>> found(probes.size());
  std::vector<char> hit(probes.size());
  const std::size_t n = bulk.find_many(probes, found.begin());
  EXPECT_EQ(bulk.contains_many(probes, hit.begin()), n);
  EXPECT_EQ(bulk.count_contained(probes), n);
  for (std::size_t i = 0; i < probes.size(); ++i) {
    EXPECT_EQ(found[i], bulk.find(probes[i]));
    EXPECT_EQ(hit[i] != 0, found[i].has_value());
  }
  std::vector<std::uint64_t> bad = sets;
  bad.back() = 6;
  auto untouched = spatial_bloom_filter<>::with_geometry(100'000, 5, 5);
  EXPECT_THROW(untouched.insert_many(keys, bad), blume::invalid_argument);
  EXPECT_EQ(untouched.inserted(), 0u) << "a bad set refuses the whole batch";
  EXPECT_THROW(untouched.insert_many(keys, std::vector<std::uint64_t>{1}), blume::invalid_argument);
}

TEST(Spatial, MergeIsTheUnionOfEachSet) {
  auto a = spatial_bloom_filter<>::with_geometry(20'000, 5, 2);
  auto b = spatial_bloom_filter<>::with_geometry(20'000, 5, 2);
  for (std::uint64_t i = 0; i < 500; ++i) a.insert(present_key(i), 1 + i % 2);
  for (std::uint64_t i = 500; i < 1000; ++i) b.insert(present_key(i), 1 + i % 2);
  a.merge(b);
  for (std::uint64_t i = 0; i < 1000; ++i) EXPECT_GE(a.find(present_key(i)).value_or(0), 1 + i % 2);
  EXPECT_EQ(a.inserted(), 1000u);
  EXPECT_THROW(a.merge(spatial_bloom_filter<>::with_geometry(20'000, 5, 3)), blume::incompatible_filters);
}

TEST(Spatial, RoundTripsThroughBytes) {
  std::vector<std::uint64_t> keys, sets;
  for (std::uint64_t i = 0; i < 5000; ++i) {
    keys.push_back(present_key(i));
    sets.push_back(1 + i % 7);
  }
  const auto f = spatial_bloom_filter<>::from_pairs(keys, sets, 0.01);
  const auto g = blume::from_bytes<spatial_bloom_filter<>>(blume::to_bytes(f));
  EXPECT_EQ(f, g);
  for (std::uint64_t i = 0; i < 5000; ++i) EXPECT_EQ(f.find(keys[i]), g.find(keys[i]));
  auto wide = spatial_bloom_filter<std::uint16_t>::with_geometry(4000, 4, 1000);
  wide.insert(std::string_view("k"), 999);
  const auto w = blume::from_bytes<spatial_bloom_filter<std::uint16_t>>(blume::to_bytes(wide));
  EXPECT_EQ(w.find(std::string_view("k")), 999u);
  EXPECT_THROW(blume::from_bytes<spatial_bloom_filter<>>(blume::to_bytes(wide)), blume::format_error);
}

TEST(Spatial, RefusesCellsNamingSetsItDoesNotHave) {
  auto f = spatial_bloom_filter<>::with_geometry(64, 2, 2);
  f.insert(std::string_view("k"), 2);
  std::vector<std::byte> bytes = blume::to_bytes(f);
  // The payload is the two sets' counts (16 bytes) then the cells; raise a set cell to 3.
  for (std::size_t i = blume::header_size + 16; i < bytes.size(); ++i)
    if (bytes[i] == std::byte{2}) {
      bytes[i] = std::byte{3};
      break;
    }
  blume_test::fix_checksums(bytes);
  EXPECT_TRUE(blume_test::mentions(blume_test::message_of<blume::format_error>([&] {
                                     blume::from_bytes<spatial_bloom_filter<>>(bytes);
                                   }),
                                   "holds set 3"));
}

}  // namespace
