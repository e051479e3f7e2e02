// SPDX-License-Identifier: Apache-2.0
// Decentralised aggregation (aggregation/dias.hpp), in one process: N peers gossip with peers sampled uniformly
// until every aggregate is exact (filters with a negligible rate), follow values that change and peers that leave,
// never count a value twice (COUNT never above the peers it can count, at any round, whatever the filters' rate),
// and fall short, with small filters, by the share the model of the filters' bias predicts.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "blume/aggregation/dias.hpp"
#include "test_support.hpp"

namespace {

using namespace blume::aggregation;

struct network {
  std::vector<dias_peer> peers;
  std::vector<std::uint64_t> live;  // ids of the peers that have not left
  std::mt19937_64 rng;

  network(std::uint64_t n, dias_geometry g, std::uint64_t seed) : rng(seed) {
    std::uniform_real_distribution<double> value(0, 100);
    for (std::uint64_t i = 0; i < n; ++i) {
      peers.emplace_back(i, value(rng), g);
      live.push_back(i);
    }
  }

  /// One round: every disseminator (those of peers that left too: their carriers push for them) samples 15 live
  /// peers and pushes to the one it chooses, `pushes` times.
  void round(int pushes = 4) {
    std::vector<std::uint64_t> sampled(15);
    for (dias_peer& d : peers) {
      for (int p = 0; p < pushes; ++p) {
        for (std::uint64_t& s : sampled) s = live[rng() % live.size()];
        const auto target = d.choose(sampled);
        if (!target) continue;
        const dias_reply reply = peers[*target].receive(d.report_to(*target));
        d.acknowledge(reply);
      }
    }
  }

  summary exact() const {
    summary s;
    for (const std::uint64_t i : live) s.add(peers[i].current().value);
    return s;
  }

  /// Whether every live peer's aggregate is the exact one.
  bool converged() const {
    const summary e = exact();
    for (const std::uint64_t i : live) {
      const summary& a = peers[i].aggregate();
      if (a.count != e.count || std::abs(a.sum - e.sum) > 1e-6 * std::abs(e.sum) || a.min != e.min || a.max != e.max)
        return false;
    }
    return true;
  }

  /// Rounds until converged (at most `limit`), checking at every round that no aggregate counts more values
  /// than there are peers to count.
  int run_until_converged(int limit) {
    for (int r = 1; r <= limit; ++r) {
      round();
      for (const std::uint64_t i : live) {
        EXPECT_LE(peers[i].aggregate().count, static_cast<std::int64_t>(peers.size()))
            << "peer " << i << ", round " << r;
      }
      if (converged()) return r;
    }
    return -1;
  }
};

constexpr dias_geometry exact_filters{256, 1e-9};

TEST(Dias, EveryPeerReachesTheExactAggregates) {
  network net(200, exact_filters, 1);
  const int rounds = net.run_until_converged(400);
  ASSERT_GT(rounds, 0) << "not converged";
  RecordProperty("rounds", rounds);
  const summary e = net.exact();
  for (const dias_peer& p : net.peers) {
    EXPECT_EQ(p.aggregate().count, 200);
    EXPECT_NEAR(p.aggregate().average(), e.average(), 1e-9);
    EXPECT_NEAR(p.aggregate().deviation(), e.deviation(), 1e-6);
  }
}

TEST(Dias, AggregatesFollowValuesThatChange) {
  network net(200, exact_filters, 2);
  ASSERT_GT(net.run_until_converged(400), 0);
  std::uniform_real_distribution<double> value(100, 200);  // outside the old range: MIN and MAX move too
  for (std::uint64_t i = 0; i < 200; i += 10) net.peers[i].change(value(net.rng));
  ASSERT_FALSE(net.converged());
  ASSERT_GT(net.run_until_converged(400), 0) << "the aggregates did not follow the changes";
  // Twice more: a peer whose older versions several aggregators hold.
  for (std::uint64_t i = 0; i < 200; i += 10) net.peers[i].change(value(net.rng));
  for (std::uint64_t i = 0; i < 200; i += 20) net.peers[i].change(value(net.rng));
  ASSERT_GT(net.run_until_converged(400), 0);
}

TEST(Dias, AggregatesFollowPeersThatLeave) {
  network net(200, exact_filters, 3);
  ASSERT_GT(net.run_until_converged(400), 0);
  std::vector<std::uint64_t> staying;
  for (const std::uint64_t i : net.live) {
    if (i % 10 == 3) {
      net.peers[i].leave();
    } else {
      staying.push_back(i);
    }
  }
  net.live = staying;
  ASSERT_GT(net.run_until_converged(400), 0) << "the aggregates did not drop the peers that left";
  EXPECT_EQ(net.peers[0].aggregate().count, 180);
  EXPECT_THROW(net.peers[3].change(1.0), blume::invalid_argument);
}

// Small filters: a share of values is never counted, as the model of the filters' bias predicts, and no value
// is ever counted twice (run_until_converged checks COUNT at every round).
TEST(Dias, FalsePositivesLoseValuesAsTheModelSays) {
  const std::uint64_t n = 300;
  for (const double fpr : {0.05, 0.2}) {
    network net(n, dias_geometry{n, fpr}, 4);
    net.run_until_converged(600);
    std::int64_t missing = 0;
    for (const dias_peer& p : net.peers) missing += static_cast<std::int64_t>(n) - p.aggregate().count;
    const double share = static_cast<double>(missing) / static_cast<double>(n * n);
    const auto plan = blume::bloom_filter<>::plan(n, fpr);
    const double model = expected_shortfall(static_cast<double>(n), static_cast<double>(plan.bits), plan.hashes);
    RecordProperty("fpr_" + std::to_string(fpr), std::to_string(share) + " (model " + std::to_string(model) + ")");
    // Pairs are lost independently enough for a binomial spread over n·n pairs. The model is mean-field (every
    // filter of a kind as full as the others); the spread of the fills at 300 peers loses 10–15% more (1.45%
    // against 1.31% at 20% over three seeds), so it is held to [0.8, 1.25] of the model beyond that spread.
    const double spread = 3.3 * std::sqrt(model / (n * n));
    EXPECT_GT(share, model * 0.8 - spread) << "fpr " << fpr;
    EXPECT_LT(share, model * 1.25 + spread) << "fpr " << fpr;
  }
}

TEST(Dias, SummaryKeepsSumsAndDropsALeavingExtreme) {
  summary s;
  for (const double v : {3.0, 1.0, 4.0, 1.0, 5.0}) s.add(v);
  EXPECT_EQ(s.count, 5);
  EXPECT_DOUBLE_EQ(s.average(), 14.0 / 5);
  s.remove(5.0);
  EXPECT_EQ(s.max, -INFINITY);  // rebuilt by the next values seen
  s.refresh(4.0);
  EXPECT_EQ(s.max, 4.0);
  EXPECT_EQ(s.min, 1.0);
  EXPECT_NEAR(s.deviation(), std::sqrt((9 + 1 + 16 + 1) / 4.0 - 2.25 * 2.25), 1e-12);
}

}  // namespace
