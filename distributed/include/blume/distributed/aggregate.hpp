// SPDX-License-Identifier: Apache-2.0
// Decentralised aggregation over MPI: N simulated peers (aggregation/dias.hpp) spread over the ranks in blocks,
// gossiping in rounds. In a round every peer's disseminator (and the disseminators that peers which left hand
// on: their carriers push for them) samples peers uniformly among those still present, pushes to the ones it
// chooses, and applies the answers; pushes and answers between peers of different ranks travel by MPI
// (all_to_all, one exchange each way a round). No rank computes an aggregate for another: every peer's
// aggregate is its own, and measure() only compares them with the exact values, for the report.
//
// Every rank applies the same schedule (changes, departures) and draws the same seeded samples for its own peers,
// so a run is reproducible for a given number of ranks.
#pragma once

#include <mpi.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <random>
#include <span>
#include <vector>

#include "blume/aggregation/dias.hpp"
#include "blume/distributed/exchange.hpp"
#include "blume/error.hpp"

namespace blume::distributed {

struct gossip_options {
  std::uint64_t peers = 1000;
  std::uint32_t pushes = 4;    // pushes per disseminator per round (to distinct peers)
  std::uint32_t sampled = 15;  // peers the sampling service offers per push
  aggregation::dias_geometry filters{};
  std::uint64_t seed = 1;
};

/// One aggregate's error over the peers present: the mean and the largest relative error |a − e| / |e|.
struct aggregate_error {
  double mean = 0, max = 0;
};

/// What a round measured, the same on every rank.
struct round_report {
  std::uint64_t round = 0;
  aggregate_error sum, count, average, min, max;
  double bytes_per_peer = 0;    // both directions, over the peers present
  std::uint64_t outcomes[4]{};  // first, replaced, already counted, unsuccessful
  bool exact = false;           // every aggregate of every peer present is exact
};

class gossip_aggregation {
 public:
  /// Collective. Peer i starts with value_of(i).
  template <class ValueOf>
  gossip_aggregation(MPI_Comm comm, const gossip_options& o, ValueOf&& value_of)
      : comm_(comm), where_(place::of(comm)), options_(o), rng_(o.seed * 0x9e3779b97f4a7c15ULL + where_.rank) {
    check_same(comm, o.peers, "the number of peers");
    check_same(comm, o.seed, "the seed");
    if (o.peers < 2) throw invalid_argument("gossip aggregation needs at least 2 peers");
    if (o.pushes == 0 || o.sampled == 0) throw invalid_argument("gossip aggregation: pushes and samples must be >= 1");
    block_ = (o.peers + static_cast<std::uint64_t>(where_.ranks) - 1) / static_cast<std::uint64_t>(where_.ranks);
    first_ = std::min(o.peers, block_ * static_cast<std::uint64_t>(where_.rank));
    last_ = std::min(o.peers, first_ + block_);
    for (std::uint64_t i = first_; i < last_; ++i) peers_.emplace_back(i, value_of(i), o.filters);
    present_.assign(o.peers, 1);
    present_ids_.resize(o.peers);
    for (std::uint64_t i = 0; i < o.peers; ++i) present_ids_[i] = i;
  }

  /// Changes peer i's value (every rank calls it alike; the owner applies it).
  void change(std::uint64_t i, double value) {
    if (owns(i)) local(i).change(value);
  }
  /// Peer i leaves (every rank calls it alike): its aggregator stops, its disseminator is carried on.
  void leave(std::uint64_t i) {
    if (present_[i] == 0) return;
    present_[i] = 0;
    std::erase(present_ids_, i);
    if (owns(i)) local(i).leave();
  }
  std::uint64_t present() const noexcept { return present_ids_.size(); }

  /// One round of gossip; collective. Returns the round's measurements.
  round_report round() {
    std::vector<std::vector<std::uint64_t>> out(static_cast<std::size_t>(where_.ranks));
    std::vector<std::uint64_t> sampled(options_.sampled), chosen;
    std::uint64_t words = 0;
    for (aggregation::dias_peer& d : peers_) {
      chosen.clear();
      for (std::uint32_t p = 0; p < options_.pushes; ++p) {
        for (std::uint64_t& s : sampled) s = present_ids_[rng_() % present_ids_.size()];
        // One push per aggregator a round: a second one, sent before the first's answer, would find the
        // disseminator's filters as they were and be counted again.
        std::erase_if(sampled,
                      [&](std::uint64_t s) { return std::find(chosen.begin(), chosen.end(), s) != chosen.end(); });
        const auto target = d.choose(sampled);
        sampled.resize(options_.sampled);
        if (!target) continue;
        chosen.push_back(*target);
        encode(d.report_to(*target), out[owner(*target)]);
      }
    }
    for (const auto& v : out) words += v.size();
    const received reports = all_to_all(comm_, out);
    for (auto& v : out) v.clear();
    round_report r;
    for (int p = 0; p < where_.ranks; ++p) {
      const auto in = reports.from(p);
      for (std::size_t at = 0; at < in.size();) {
        const aggregation::dias_report report = decode_report(in, at);
        const aggregation::dias_reply reply = local(report.to).receive(report);
        ++r.outcomes[static_cast<int>(reply.outcome)];
        encode(reply, out[owner(reply.to)]);
      }
    }
    for (const auto& v : out) words += v.size();
    const received replies = all_to_all(comm_, out);
    for (int p = 0; p < where_.ranks; ++p) {
      const auto in = replies.from(p);
      for (std::size_t at = 0; at + reply_words <= in.size(); at += reply_words) {
        const aggregation::dias_reply reply = decode_reply(in.subspan(at, reply_words));
        local(reply.to).acknowledge(reply);
      }
    }
    r.round = ++rounds_;
    MPI_Allreduce(MPI_IN_PLACE, &words, 1, MPI_UINT64_T, MPI_SUM, comm_);
    MPI_Allreduce(MPI_IN_PLACE, r.outcomes, 4, MPI_UINT64_T, MPI_SUM, comm_);
    r.bytes_per_peer = 8.0 * static_cast<double>(words) / static_cast<double>(present());
    measure(r);
    return r;
  }

  /// The exact aggregates of the peers present; collective.
  aggregation::summary exact() const {
    double local_sum[3] = {0, 0, 0}, local_min = INFINITY, local_max = -INFINITY;
    for (const aggregation::dias_peer& p : peers_) {
      if (p.has_left()) continue;
      const double v = p.current().value;
      local_sum[0] += v;
      local_sum[1] += v * v;
      local_sum[2] += 1;
      local_min = std::min(local_min, v);
      local_max = std::max(local_max, v);
    }
    MPI_Allreduce(MPI_IN_PLACE, local_sum, 3, MPI_DOUBLE, MPI_SUM, comm_);
    MPI_Allreduce(MPI_IN_PLACE, &local_min, 1, MPI_DOUBLE, MPI_MIN, comm_);
    MPI_Allreduce(MPI_IN_PLACE, &local_max, 1, MPI_DOUBLE, MPI_MAX, comm_);
    aggregation::summary s;
    s.sum = local_sum[0];
    s.sum_squares = local_sum[1];
    s.count = static_cast<std::int64_t>(local_sum[2]);
    s.min = local_min;
    s.max = local_max;
    return s;
  }

  /// This rank's peers (their aggregates, filters and states).
  std::span<const aggregation::dias_peer> local_peers() const noexcept { return peers_; }

 private:
  static constexpr std::size_t reply_words = 6;

  bool owns(std::uint64_t i) const noexcept { return i >= first_ && i < last_; }
  int owner(std::uint64_t i) const noexcept { return static_cast<int>(i / block_); }
  aggregation::dias_peer& local(std::uint64_t i) { return peers_[static_cast<std::size_t>(i - first_)]; }

  static void encode(const aggregation::state_version& s, std::vector<std::uint64_t>& out) {
    out.push_back(s.version);
    out.push_back(std::bit_cast<std::uint64_t>(s.value));
    out.push_back(s.present ? 1 : 0);
  }
  static aggregation::state_version decode_state(std::span<const std::uint64_t> in, std::size_t& at) {
    aggregation::state_version s;
    s.version = in[at];
    s.value = std::bit_cast<double>(in[at + 1]);
    s.present = in[at + 2] != 0;
    at += 3;
    return s;
  }
  // A report: from, to, whether AMD holds `to`, the number of candidates, the current state, the candidates.
  static void encode(const aggregation::dias_report& r, std::vector<std::uint64_t>& out) {
    out.push_back(r.from);
    out.push_back(r.to);
    out.push_back(r.aggregator_known ? 1 : 0);
    out.push_back(r.candidates.size());
    encode(r.current, out);
    for (const auto& c : r.candidates) encode(c, out);
  }
  static aggregation::dias_report decode_report(std::span<const std::uint64_t> in, std::size_t& at) {
    aggregation::dias_report r;
    r.from = in[at];
    r.to = in[at + 1];
    r.aggregator_known = in[at + 2] != 0;
    const std::uint64_t candidates = in[at + 3];
    at += 4;
    r.current = decode_state(in, at);
    for (std::uint64_t c = 0; c < candidates; ++c) r.candidates.push_back(decode_state(in, at));
    return r;
  }
  static void encode(const aggregation::dias_reply& r, std::vector<std::uint64_t>& out) {
    out.push_back(r.from);
    out.push_back(r.to);
    out.push_back(static_cast<std::uint64_t>(r.outcome));
    out.push_back(r.counted);
    out.push_back(r.dropped ? 1 : 0);
    out.push_back(r.dropped.value_or(0));
  }
  static aggregation::dias_reply decode_reply(std::span<const std::uint64_t> in) {
    aggregation::dias_reply r;
    r.from = in[0];
    r.to = in[1];
    r.outcome = static_cast<aggregation::dias_outcome>(in[2]);
    r.counted = in[3];
    if (in[4] != 0) r.dropped = in[5];
    return r;
  }

  void measure(round_report& r) const {
    const aggregation::summary e = exact();
    const auto relative = [](double a, double b) {
      if (a == b) return 0.0;
      return std::abs(a - b) / std::max(std::abs(b), 1e-300);
    };
    // Sums then maxima of the five errors over the peers present.
    double sums[5] = {}, maxima[5] = {};
    std::uint64_t counted = 0, inexact = 0;
    for (const aggregation::dias_peer& p : peers_) {
      if (p.has_left()) continue;
      const aggregation::summary& a = p.aggregate();
      const double errors[5] = {relative(a.sum, e.sum),
                                relative(static_cast<double>(a.count), static_cast<double>(e.count)),
                                relative(a.average(), e.average()), relative(a.min, e.min), relative(a.max, e.max)};
      for (int k = 0; k < 5; ++k) {
        sums[k] += errors[k];
        maxima[k] = std::max(maxima[k], errors[k]);
      }
      inexact += a.count != e.count || errors[0] > 1e-9 || a.min != e.min || a.max != e.max ? 1 : 0;
      ++counted;
    }
    MPI_Allreduce(MPI_IN_PLACE, sums, 5, MPI_DOUBLE, MPI_SUM, comm_);
    MPI_Allreduce(MPI_IN_PLACE, maxima, 5, MPI_DOUBLE, MPI_MAX, comm_);
    MPI_Allreduce(MPI_IN_PLACE, &counted, 1, MPI_UINT64_T, MPI_SUM, comm_);
    MPI_Allreduce(MPI_IN_PLACE, &inexact, 1, MPI_UINT64_T, MPI_SUM, comm_);
    aggregate_error* fields[5] = {&r.sum, &r.count, &r.average, &r.min, &r.max};
    for (int k = 0; k < 5; ++k)
      *fields[k] = {sums[k] / static_cast<double>(std::max<std::uint64_t>(counted, 1)), maxima[k]};
    r.exact = inexact == 0;
  }

  MPI_Comm comm_;
  place where_;
  gossip_options options_;
  std::mt19937_64 rng_;
  std::uint64_t block_ = 1, first_ = 0, last_ = 0, rounds_ = 0;
  std::vector<aggregation::dias_peer> peers_;
  std::vector<std::uint8_t> present_;
  std::vector<std::uint64_t> present_ids_;
};

}  // namespace blume::distributed
