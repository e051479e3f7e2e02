// SPDX-License-Identifier: Apache-2.0
// The compact approximator: never below a key's value, on every key; the rate of answers above it held to
// the model (math::compact_overestimate) for the max lattice, bounded by it for bit sets; a lattice of the
// user's own through the concept; its file bytes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <random>
#include <vector>

#include "forge.hpp"
#include "test_support.hpp"

namespace {

using blume::bitset_lattice;
using blume::compact_approximator;
using blume::max_lattice;
using blume_test::absent_key;
using blume_test::present_key;

TEST(Compact, AnswersAnUpperBoundOfEachKeysValue) {
  compact_approximator<> f(1000, 0.01);
  EXPECT_FALSE(f.find(std::string_view("never")).has_value());
  f.insert(std::string_view("anna"), 17u);
  f.insert(std::string_view("anna"), 5u);  // the join: still 17
  f.insert(std::string_view("bob"), 3u);
  EXPECT_EQ(f.value(std::string_view("anna")), 17u);
  EXPECT_EQ(f.find(std::string_view("bob")), 3u);
  EXPECT_TRUE(f.contains(std::string_view("bob")));
  EXPECT_EQ(f.inserted(), 3u);
}

// 1M keys with values in [0, 1000) on the max lattice of 32-bit values: no answer below the value, and the
// share above it as the model predicts, key by key ((1 − e^{−k·n_{>v}/m})^k with n_{>v} the keys above v).
TEST(Compact, NeverBelowAndOverestimatesAsTheModelSays) {
  constexpr std::uint64_t n = blume_test::scaled(1'000'000);
  compact_approximator<> f(n, 0.01);
  std::mt19937_64 rng(42);
  std::vector<std::uint32_t> values(n);
  for (auto& v : values) v = static_cast<std::uint32_t>(rng() % 1000);
  for (std::uint64_t i = 0; i < n; ++i) f.insert(present_key(i), values[i]);
  std::vector<std::uint64_t> count(1000, 0), above(1000, 0);  // above[v]: keys whose value exceeds v
  for (const std::uint32_t v : values) ++count[v];
  for (std::uint64_t v = 1000, running = 0; v-- > 0;) {
    above[v] = running;
    running += count[v];
  }
  double predicted = 0;
  std::uint64_t over = 0;
  for (std::uint64_t i = 0; i < n; ++i) {
    const std::uint32_t answer = f.value(present_key(i));
    ASSERT_GE(answer, values[i]) << "key " << i << " answered below its value";
    over += answer > values[i];
    predicted += f.overestimate_probability(static_cast<double>(above[values[i]]));
  }
  predicted /= n;
  std::printf("members above their value: %.5f (model %.5f)\n", static_cast<double>(over) / n, predicted);
  EXPECT_TRUE(blume_test::within_binomial_999(static_cast<double>(over), n, predicted));

  // An absent key answers above bottom when each of its cells met a key of a value above 0.
  std::uint64_t hits = 0;
  for (std::uint64_t i = 0; i < n; ++i) hits += f.find(absent_key(i)).has_value();
  const double absent_model = f.overestimate_probability(static_cast<double>(above[0]));
  std::printf("absent keys above bottom: %.5f (model %.5f)\n", static_cast<double>(hits) / n, absent_model);
  EXPECT_TRUE(blume_test::within_binomial_999(static_cast<double>(hits), n, absent_model));
  EXPECT_LE(absent_model, 0.0101);
}

// Tags as bit sets under union and intersection: never a missing tag; extra tags at most at the model's
// bound (the cells raised by other keys can meet back at the key's own tags, so fewer).
TEST(Compact, BitSetsKeepEveryTagAndStayWithinTheBound) {
  constexpr std::uint64_t n = blume_test::scaled(1'000'000, 4);  // a quarter: still a few keys over their tags
  compact_approximator<bitset_lattice<std::uint8_t>> f(n, 0.01);
  std::mt19937_64 rng(7);
  std::vector<std::uint8_t> tags(n);
  for (auto& t : tags) t = static_cast<std::uint8_t>(1u << (rng() % 8) | 1u << (rng() % 8));
  for (std::uint64_t i = 0; i < n; ++i) f.insert(present_key(i), tags[i]);
  std::vector<std::uint64_t> of_tags(256, 0), with_tag_outside(256, 0);  // keys having a tag outside the set t
  for (const std::uint8_t u : tags) ++of_tags[u];
  for (unsigned t = 0; t < 256; ++t)
    for (unsigned u = 0; u < 256; ++u)
      if ((u & ~t) != 0) with_tag_outside[t] += of_tags[u];
  double bound = 0;
  std::uint64_t over = 0;
  for (std::uint64_t i = 0; i < n; ++i) {
    const std::uint8_t answer = f.value(present_key(i));
    ASSERT_EQ(answer & tags[i], tags[i]) << "key " << i << " lost a tag";
    over += answer != tags[i];
    bound += f.overestimate_probability(static_cast<double>(with_tag_outside[tags[i]]));
  }
  bound /= n;
  std::printf("bit sets above the key's tags: %.5f (bound %.5f)\n", static_cast<double>(over) / n, bound);
  EXPECT_GT(over, 0u);
  EXPECT_LE(static_cast<double>(over), bound * n + 3.29 * std::sqrt(bound * n) + 1);
}

// A lattice of the user's own: two 16-bit maxima in one 32-bit cell (a version and a timestamp, say),
// joined and met component by component.
struct pair_max_lattice {
  using value_type = std::uint32_t;
  static constexpr std::uint32_t id = 0x10020;
  static constexpr value_type bottom() noexcept { return 0; }
  static constexpr value_type join(value_type a, value_type b) noexcept {
    return std::max(a >> 16, b >> 16) << 16 | std::max(a & 0xffff, b & 0xffff);
  }
  static constexpr value_type meet(value_type a, value_type b) noexcept {
    return std::min(a >> 16, b >> 16) << 16 | std::min(a & 0xffff, b & 0xffff);
  }
};
static_assert(blume::lattice<pair_max_lattice>);

TEST(Compact, TakesALatticeOfTheUsersOwn) {
  compact_approximator<pair_max_lattice> f(10'000, 0.01);
  std::mt19937_64 rng(3);
  std::vector<std::uint32_t> v(10'000);
  for (auto& x : v) x = static_cast<std::uint32_t>(rng());
  for (std::uint64_t i = 0; i < v.size(); ++i) f.insert(present_key(i), v[i]);
  for (std::uint64_t i = 0; i < v.size(); ++i) {
    const std::uint32_t a = f.value(present_key(i));
    EXPECT_GE(a >> 16, v[i] >> 16);
    EXPECT_GE(a & 0xffff, v[i] & 0xffff);
  }
  const auto g = blume::from_bytes<compact_approximator<pair_max_lattice>>(blume::to_bytes(f));
  EXPECT_EQ(f, g);
}

TEST(Compact, BulkCallsAgreeWithOneByOne) {
  std::vector<std::uint64_t> keys, values;
  for (std::uint64_t i = 0; i < 20'000; ++i) {
    keys.push_back(present_key(i));
    values.push_back(i * 31);
  }
  compact_approximator<> bulk(20'000, 0.01), single(20'000, 0.01);
  bulk.insert_many(keys, values);
  for (std::size_t i = 0; i < keys.size(); ++i) single.insert(keys[i], static_cast<std::uint32_t>(values[i]));
  EXPECT_EQ(bulk, single);
  std::vector<std::uint64_t> probes = keys;
  for (std::uint64_t i = 0; i < 20'000; ++i) probes.push_back(absent_key(i));
  std::vector<std::optional<std::uint32_t>> found(probes.size());
  std::vector<std::uint32_t> bounds(probes.size());
  std::vector<char> hit(probes.size());
  const std::size_t n = bulk.find_many(probes, found.begin());
  bulk.value_many(probes, bounds.begin());
  EXPECT_EQ(bulk.contains_many(probes, hit.begin()), n);
  EXPECT_EQ(bulk.count_contained(probes), n);
  for (std::size_t i = 0; i < probes.size(); ++i) {
    EXPECT_EQ(found[i], bulk.find(probes[i]));
    EXPECT_EQ(bounds[i], bulk.value(probes[i]));
    EXPECT_EQ(hit[i] != 0, found[i].has_value());
  }
  EXPECT_THROW(bulk.insert_many(keys, std::vector<std::uint64_t>{1}), blume::invalid_argument);
}

TEST(Compact, MergeJoinsTheCells) {
  auto a = compact_approximator<max_lattice<std::uint16_t>>::with_geometry(50'000, 5);
  auto b = compact_approximator<max_lattice<std::uint16_t>>::with_geometry(50'000, 5);
  for (std::uint64_t i = 0; i < 1000; ++i) a.insert(present_key(i), static_cast<std::uint16_t>(i));
  for (std::uint64_t i = 0; i < 1000; ++i) b.insert(present_key(i), static_cast<std::uint16_t>(2000 - i));
  a.merge(b);
  for (std::uint64_t i = 0; i < 1000; ++i) EXPECT_GE(a.value(present_key(i)), std::max<std::uint64_t>(i, 2000 - i));
  EXPECT_THROW(a.merge(compact_approximator<max_lattice<std::uint16_t>>::with_geometry(50'001, 5)),
               blume::incompatible_filters);
}

TEST(Compact, RoundTripsAndRefusesAnotherLattice) {
  std::vector<std::uint64_t> keys, values;
  for (std::uint64_t i = 0; i < 3000; ++i) {
    keys.push_back(present_key(i));
    values.push_back(i * 1'000'003);
  }
  const auto f = compact_approximator<>::from_pairs(keys, values, 0.01);
  const auto bytes = blume::to_bytes(f);
  const auto g = blume::from_bytes<compact_approximator<>>(bytes);
  EXPECT_EQ(f, g);
  for (std::uint64_t i = 0; i < keys.size(); ++i) EXPECT_EQ(f.value(keys[i]), g.value(keys[i]));
  EXPECT_TRUE(blume_test::mentions(blume_test::message_of<blume::format_error>([&] {
                                     blume::from_bytes<compact_approximator<bitset_lattice<std::uint32_t>>>(bytes);
                                   }),
                                   "lattice"));
  EXPECT_THROW(compact_approximator<max_lattice<std::uint8_t>>::from_pairs(keys, values, 0.01),
               blume::invalid_argument);
  EXPECT_THROW(compact_approximator<>::with_geometry(0, 3), blume::invalid_argument);
  EXPECT_THROW(compact_approximator<>::with_geometry(100, 65), blume::invalid_argument);
}

}  // namespace
