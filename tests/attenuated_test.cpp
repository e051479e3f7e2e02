// SPDX-License-Identifier: Apache-2.0
// The attenuated Bloom filter: levels filled by absorbing neighbours, nearest(), files, each level's rate
// against its model, and greedy routing on a random network against BFS and the misroute bound.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <queue>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "blume/io/format.hpp"
#include "blume/kinds/attenuated_bloom_filter.hpp"
#include "test_support.hpp"

namespace {

using blume::attenuated_bloom_filter;
using filter = attenuated_bloom_filter<>;
using namespace std::string_view_literals;

// Large enough that a handful of keys gives no false positive in these small tests (rate ~1e-9 per level).
filter node(std::uint32_t depth = 4) { return filter(1000, 1e-6, depth); }

TEST(Attenuated, DescribesItself) {
  EXPECT_EQ(filter::kind, blume::filter_kind{20});
  EXPECT_EQ(filter::name, "attenuated");
  EXPECT_EQ(blume::parse_kind("attenuated"), filter::kind);
  EXPECT_FALSE(blume::is_static(filter::kind));
  const filter f(1000, 0.01);
  EXPECT_EQ(f.depth(), blume::attenuated_default_depth);
  const blume::filter_plan p = filter::plan(1000, 0.01);
  EXPECT_EQ(p.bits, f.bits() * f.depth());
  EXPECT_EQ(p.hashes, f.hashes());
  EXPECT_DOUBLE_EQ(p.predicted_fpr, blume::blocked_bloom_filter<>::plan(1000, 0.01).predicted_fpr);
}

TEST(Attenuated, InsertFillsLevelZeroOnly) {
  filter f = node();
  f.insert("printer"sv);
  EXPECT_TRUE(f.contains("printer"sv));
  EXPECT_EQ(f.nearest("printer"sv), 0u);
  EXPECT_EQ(f.find("printer"sv), 0u);
  for (std::uint32_t i = 1; i < f.depth(); ++i) EXPECT_EQ(f.level(i).set_bits(), 0u) << i;
  EXPECT_EQ(f.nearest("scanner"sv), std::nullopt);
  EXPECT_EQ(f.inserted(), 1u);
}

TEST(Attenuated, AbsorbShiftsANeighboursLevelsOneDeeper) {
  filter a = node(), b = node(), c = node();
  a.insert("a"sv);
  b.insert("b"sv);
  c.insert("c"sv);
  b.absorb(a);  // b: b at 0, a at 1
  c.absorb(b);  // c: c at 0, b at 1, a at 2
  EXPECT_EQ(b.nearest("a"sv), 1u);
  EXPECT_EQ(c.nearest("c"sv), 0u);
  EXPECT_EQ(c.nearest("b"sv), 1u);
  EXPECT_EQ(c.nearest("a"sv), 2u);
  // Only level 0 answers contains(): c does not offer a or b itself.
  EXPECT_FALSE(c.contains("a"sv));
  EXPECT_FALSE(c.contains("b"sv));
  // A neighbour two hops away at once.
  filter d = node();
  d.absorb(a, 2);
  EXPECT_EQ(d.nearest("a"sv), 2u);
}

TEST(Attenuated, WhatLiesPastTheDeepestLevelIsDropped) {
  // A line n0 - n1 - n2 - n3 of depth 3: n0's key reaches n2 at level 2 and falls off before n3.
  std::vector<filter> line;
  for (int i = 0; i < 4; ++i) line.push_back(node(3));
  line[0].insert("far"sv);
  for (int i = 1; i < 4; ++i) line[i].absorb(line[i - 1]);
  EXPECT_EQ(line[1].nearest("far"sv), 1u);
  EXPECT_EQ(line[2].nearest("far"sv), 2u);
  EXPECT_EQ(line[3].nearest("far"sv), std::nullopt);
}

TEST(Attenuated, TheNearestProviderWins) {
  filter near = node(), far = node(), here = node();
  near.insert("svc"sv);
  far.insert("svc"sv);
  filter relay = node();
  relay.absorb(far);
  here.absorb(relay);  // svc at level 2 through relay
  here.absorb(near);   // and at level 1 directly
  EXPECT_EQ(here.nearest("svc"sv), 1u);
}

TEST(Attenuated, AbsorbingItselfReadsEachLevelBeforeItChanges) {
  filter f = node();
  f.insert("x"sv);
  f.absorb(f);  // as a copy of itself would be: x one hop away, not two or three
  EXPECT_TRUE(f.level(0).contains("x"sv));
  EXPECT_TRUE(f.level(1).contains("x"sv));
  EXPECT_FALSE(f.level(2).contains("x"sv));
  EXPECT_FALSE(f.level(3).contains("x"sv));
}

TEST(Attenuated, MergeJoinsLevelByLevel) {
  filter a = node(), b = node(), n = node();
  n.insert("n"sv);
  a.insert("a"sv);
  b.insert("b"sv);
  b.absorb(n);
  a.merge(b);
  EXPECT_EQ(a.nearest("a"sv), 0u);
  EXPECT_EQ(a.nearest("b"sv), 0u);
  EXPECT_EQ(a.nearest("n"sv), 1u);
  EXPECT_EQ(a.inserted(), 2u);
}

TEST(Attenuated, IncompatibleFiltersAreRefused) {
  filter a = node();
  EXPECT_THROW(a.absorb(node(3)), blume::incompatible_filters);
  EXPECT_THROW(a.absorb(filter(2000, 1e-6)), blume::incompatible_filters);
  EXPECT_THROW(a.absorb(filter(1000, 1e-6, 4, 7)), blume::incompatible_filters);
  EXPECT_THROW(a.merge(node(5)), blume::incompatible_filters);
  EXPECT_THROW(a.absorb(node(), 0), blume::invalid_argument);
  // Every level of a neighbour this far away would fall past the last: refused, not silently dropped.
  const filter before = a;
  EXPECT_THROW(a.absorb(node(), a.depth()), blume::invalid_argument);
  EXPECT_THROW(a.absorb(node(), 64), blume::invalid_argument);
  EXPECT_TRUE(a == before);
}

TEST(Attenuated, BadParametersAreRefusedBeforeAllocating) {
  EXPECT_THROW(filter(1000, 0.01, 0), blume::invalid_argument);
  EXPECT_THROW(filter(1000, 0.01, blume::attenuated_max_depth + 1), blume::invalid_argument);
  EXPECT_THROW(filter(0, 0.01), blume::invalid_argument);
  EXPECT_THROW(filter(1000, 1.5), blume::invalid_argument);
  // One level fits in 2^40 bits, 64 of them do not.
  EXPECT_THROW(filter::with_geometry(blume::max_filter_bits / 32, 4, 64), blume::invalid_argument);
  EXPECT_THROW(filter(1000, 0.01).level(4), blume::invalid_argument);
}

TEST(Attenuated, PlanForBitsStaysWithinTheBudget) {
  const blume::filter_plan p = filter::plan_for_bits(1000, 40'000);
  EXPECT_LE(p.bits, 40'000u);
  EXPECT_EQ(p.bits % (512 * 4), 0u);
  EXPECT_THROW(filter::plan_for_bits(1000, 1000), blume::invalid_argument);  // under one block per level
}

TEST(Attenuated, FilesKeepEveryLevel) {
  filter a(5000, 0.01, 5), b(5000, 0.01, 5);
  for (std::uint64_t i = 0; i < 3000; ++i) a.insert(blume_test::present_key(i));
  for (std::uint64_t i = 3000; i < 6000; ++i) b.insert(blume_test::present_key(i));
  a.absorb(b, 2);
  const std::vector<std::byte> bytes = blume::to_bytes(a, {5000, 0.01});
  const filter back = blume::from_bytes<filter>(bytes);
  EXPECT_TRUE(back == a);
  EXPECT_EQ(back.depth(), 5u);
  EXPECT_EQ(back.inserted(), 3000u);
  EXPECT_EQ(back.nearest(blume_test::present_key(4000)), a.nearest(blume_test::present_key(4000)));
  const blume::file_header h = blume::decode_header(bytes);
  EXPECT_EQ(h.primary, a.bits());
  EXPECT_EQ(h.secondary, a.hashes());
  EXPECT_EQ(h.layout, 3u);  // the blocked kind's id
  EXPECT_EQ(h.extra[0], 5u);

  blume_test::temp_dir dir;
  blume::save(a, dir / "a.blume");
  EXPECT_TRUE(blume::load<filter>(dir / "a.blume") == a);
  EXPECT_TRUE(blume::map_file<filter>(dir / "a.blume") == a);
}

TEST(Attenuated, DamagedHeadersAreFormatErrors) {
  const filter f(1000, 0.01);
  const std::vector<std::byte> good = blume::to_bytes(f);
  const auto forged = [&](auto edit) {
    std::vector<std::byte> bytes = good;
    blume::file_header h = blume::decode_header(bytes);
    edit(h);
    const auto encoded = blume::encode_header(h);
    std::copy(encoded.begin(), encoded.end(), bytes.begin());
    return bytes;
  };
  for (std::uint64_t depth : {std::uint64_t{0}, std::uint64_t{65}, std::uint64_t{1} << 40}) {
    const auto bytes = forged([&](blume::file_header& h) { h.extra[0] = depth; });
    EXPECT_THROW(blume::from_bytes<filter>(bytes), blume::format_error) << depth;
  }
  EXPECT_THROW(blume::from_bytes<filter>(forged([](blume::file_header& h) { h.extra[3] = 1; })), blume::format_error);
  EXPECT_THROW(blume::from_bytes<filter>(forged([](blume::file_header& h) { h.layout = 1; })), blume::format_error);
  EXPECT_THROW(blume::from_bytes<filter>(forged([](blume::file_header& h) { h.extra[0] = 3; })), blume::format_error);
}

TEST(Attenuated, EachLevelsRateMatchesItsModelAtOneMillionKeys) {
  constexpr std::uint64_t n = blume_test::scaled(1'000'000), probes = blume_test::scaled(2'000'000);
  filter a(n, 0.01), b(n, 0.01), c(n, 0.01);
  for (std::uint64_t i = 0; i < n; ++i) {
    a.insert(blume_test::present_key(i));
    b.insert(blume_test::present_key(n + i));
    c.insert(blume_test::present_key(2 * n + i));
  }
  a.absorb(b);     // b's keys at level 1
  a.absorb(c, 2);  // c's at level 2
  for (std::uint32_t level = 0; level < 3; ++level) {
    std::uint64_t hits = 0;
    for (std::uint64_t i = 0; i < probes; ++i) hits += a.level(level).contains(blume_test::absent_key(i));
    const double measured = static_cast<double>(hits) / probes, model = a.level_fpr(level);
    std::printf("level %u: measured FPR %.5f%%, model %.5f%% (99.9%% interval ±%.5f%%)\n", level, 100 * measured,
                100 * model, 100 * blume_test::binomial_999_slack(model, probes));
    EXPECT_NEAR(measured, model, blume_test::binomial_999_slack(model, probes)) << level;
    EXPECT_LE(model, 0.01) << level;
  }
  EXPECT_EQ(a.level(3).set_bits(), 0u);  // c's level 1 was empty
  // Every stored key is found by its own level at the latest.
  for (std::uint64_t i = 0; i < n; i += 997) {
    EXPECT_EQ(a.nearest(blume_test::present_key(i)), 0u);
    EXPECT_LE(a.nearest(blume_test::present_key(n + i)).value_or(99), 1u);
    EXPECT_LE(a.nearest(blume_test::present_key(2 * n + i)).value_or(99), 2u);
  }
}

// ---- routing on a random network ------------------------------------------------------------------------

struct network {
  std::vector<std::vector<std::uint32_t>> adjacent;    // sorted: ties go to the lowest id
  std::vector<std::vector<std::uint32_t>> offered_by;  // service → nodes offering it
  std::vector<filter> filters;
};

/// A random connected graph (a random tree plus as many random extra edges: average degree about 4), each
/// node offering a few services, and each node's filter after depth − 1 synchronous rounds of absorption.
network build_network(std::uint32_t nodes, std::uint32_t services, std::uint32_t per_node, std::uint32_t depth,
                      std::uint64_t capacity, double fpr, std::mt19937_64& rng) {
  network net;
  std::set<std::pair<std::uint32_t, std::uint32_t>> edges;
  const auto pick = [&](std::uint32_t below) { return static_cast<std::uint32_t>(rng() % below); };
  for (std::uint32_t v = 1; v < nodes; ++v) edges.insert({pick(v), v});
  while (edges.size() < 2 * (nodes - 1)) {
    std::uint32_t u = pick(nodes), v = pick(nodes);
    if (u == v) continue;
    edges.insert({std::min(u, v), std::max(u, v)});
  }
  net.adjacent.resize(nodes);
  for (const auto& [u, v] : edges) {
    net.adjacent[u].push_back(v);
    net.adjacent[v].push_back(u);
  }
  for (auto& a : net.adjacent) std::sort(a.begin(), a.end());

  net.offered_by.resize(services);
  std::vector<filter> local;
  for (std::uint32_t v = 0; v < nodes; ++v) {
    local.emplace_back(capacity, fpr, depth);
    std::set<std::uint32_t> mine;
    while (mine.size() < per_node) mine.insert(pick(services));
    for (std::uint32_t s : mine) {
      local.back().insert(std::uint64_t{s});
      net.offered_by[s].push_back(v);
    }
  }
  // Round r sets level r from the neighbours' level r − 1 of round r − 1 (and the levels below again).
  net.filters = local;
  for (std::uint32_t round = 1; round < depth; ++round) {
    std::vector<filter> next = local;
    for (std::uint32_t v = 0; v < nodes; ++v)
      for (std::uint32_t u : net.adjacent[v]) next[v].absorb(net.filters[u]);
    net.filters = std::move(next);
  }
  return net;
}

TEST(AttenuatedRouting, GreedyRoutesAreShortestWithinTheModelsBound) {
  constexpr std::uint32_t nodes = 2000, services = 2000, per_node = 2, depth = 4, starts_per_service = 8;
  constexpr std::uint64_t capacity = 40;
  constexpr double fpr = 0.05;
  std::mt19937_64 rng(20020412);
  const network net = build_network(nodes, services, per_node, depth, capacity, fpr, rng);

  double deepest = 0;
  for (const filter& f : net.filters) deepest = std::max(deepest, f.level_estimated_count(depth - 1));
  // fpr_below[v][d]: Σ_{j<d} of node v's level rates (for one absent key).
  std::vector<std::vector<double>> below(nodes, std::vector<double>(depth + 1, 0.0));
  for (std::uint32_t v = 0; v < nodes; ++v)
    for (std::uint32_t d = 0; d <= depth; ++d) below[v][d] = net.filters[v].fpr_below(d);

  std::uint64_t queries = 0, shortest = 0, failed = 0;
  double bound_sum = 0;
  constexpr std::uint32_t unreachable = UINT32_MAX;
  for (std::uint32_t s = 0; s < services; ++s) {
    if (net.offered_by[s].empty()) continue;
    // Distances to the nearest provider (multi-source BFS).
    std::vector<std::uint32_t> dist(nodes, unreachable);
    std::queue<std::uint32_t> frontier;
    for (std::uint32_t p : net.offered_by[s]) {
      dist[p] = 0;
      frontier.push(p);
    }
    while (!frontier.empty()) {
      const std::uint32_t v = frontier.front();
      frontier.pop();
      for (std::uint32_t u : net.adjacent[v])
        if (dist[u] == unreachable) {
          dist[u] = dist[v] + 1;
          frontier.push(u);
        }
    }
    std::vector<std::uint32_t> candidates;
    for (std::uint32_t v = 0; v < nodes; ++v)
      if (dist[v] >= 1 && dist[v] <= depth - 1) candidates.push_back(v);
    if (candidates.empty()) continue;
    const blume::digest key = net.filters[0].hash(std::uint64_t{s});
    for (std::uint32_t t = 0; t < starts_per_service; ++t) {
      const std::uint32_t start = candidates[rng() % candidates.size()];
      // The greedy walk.
      std::uint32_t at = start, hops = 0;
      bool arrived = false;
      while (hops <= 2 * depth) {
        if (net.filters[at].contains(key)) {
          arrived = dist[at] == 0;
          break;
        }
        std::optional<std::uint32_t> best_level;
        std::uint32_t best = 0;
        for (std::uint32_t u : net.adjacent[at]) {
          const auto level = net.filters[u].nearest(key);
          if (level && (!best_level || *level < *best_level)) {
            best_level = level;
            best = u;
          }
        }
        if (!best_level) break;
        at = best;
        ++hops;
      }
      const bool is_shortest = arrived && hops == dist[start];
      ++queries;
      shortest += is_shortest;
      failed += !is_shortest;
      // The bound: the union over every node of every shortest route of its step bound.
      double bound = 0;
      std::vector<std::uint32_t> layer{start};
      std::vector<bool> seen(nodes, false);
      seen[start] = true;
      while (!layer.empty() && dist[layer[0]] >= 1) {
        std::vector<std::uint32_t> closer;
        for (std::uint32_t v : layer) {
          const std::uint32_t d = dist[v];
          bound += net.filters[v].level_fpr(0);
          for (std::uint32_t u : net.adjacent[v]) {
            if (dist[u] >= d) {
              bound += below[u][d];
            } else if (!seen[u]) {
              seen[u] = true;
              closer.push_back(u);
            }
          }
        }
        layer = std::move(closer);
      }
      bound_sum += std::min(1.0, bound);
    }
  }
  const double q = static_cast<double>(queries);
  const double failure = static_cast<double>(failed) / q, bound = bound_sum / q;
  std::printf(
      "%llu queries on %u nodes (depth %u, %llu-key levels at %.0f%%, deepest level holds up to %.0f keys): "
      "%.2f%% shortest, failure rate %.3f%%, model bound %.3f%% (+%.3f%% binomial slack)\n",
      static_cast<unsigned long long>(queries), nodes, depth, static_cast<unsigned long long>(capacity), 100 * fpr,
      deepest, 100.0 * static_cast<double>(shortest) / q, 100 * failure, 100 * bound,
      100 * blume_test::binomial_999_slack(bound, q));
  ASSERT_GE(queries, 10'000u);
  EXPECT_GE(static_cast<double>(shortest) / q, 0.90);
  EXPECT_LE(failure, bound + blume_test::binomial_999_slack(bound, q));
}

}  // namespace
