// SPDX-License-Identifier: Apache-2.0
// Decentralised aggregation with Bloom filters of memberships, after DIAS, the Dynamic Intelligent Aggregation
// Service (Pournaras, Warnier & Brazier, "A generic and adaptive aggregation service for large-scale
// decentralized networks", Complex Adaptive Systems Modeling 1:19, 2013, and its reference prototype).
//
// Every peer holds a value, which may change (each change is a new version of the peer's state), and plays two
// roles. As a disseminator it pushes its current state to peers it samples; as an aggregator it keeps SUM, the
// sum of squares, COUNT, MIN and MAX of the states it has counted, one per peer, so AVERAGE and the deviation
// follow. No peer keeps the list of what it counted: four Bloom filters of memberships stand for it.
//  * AMD (disseminator): the aggregators that acknowledged counting some state of this peer.
//  * AMS (disseminator, counting): pairs (aggregator, version): which of its versions each aggregator counts now.
//  * DMA (aggregator): the disseminators it has counted some state of.
//  * SMA (aggregator, counting): pairs (disseminator, version) it counts now.
// A push from disseminator i to aggregator j carries i's current state, whether AMD holds j, and the versions v
// with (j, v) in AMS, each with its value. j decides:
//  * first: AMD or DMA says no (certain, a Bloom filter's "no"): j has never counted i; it adds the state;
//  * replace: both say yes and exactly one of the offered versions is in SMA, an older one: j removes that value
//    and adds the new; the same version: already counted, nothing changes (MIN and MAX are refreshed);
//  * unsuccessful: both say yes and no offered version, or several, pass SMA: j changes nothing.
// Then i records what j acknowledged (AMD, and in AMS the version j now counts instead of the old). A value is
// added only when the two sides certainly never met, or in place of exactly one older value both sides confirm,
// so no value is counted twice. The price of the filters' false positives is values never counted. When AMD
// answers yes falsely for a pair that never met, i takes j for outdated (or, when AMS answers yes falsely too,
// for up to date) and pushes to it only once no peer it never reached is sampled (or, for up to date, when its
// sample offers nothing better). If j's DMA, fuller by then, answers yes falsely as well, every push is
// unsuccessful, and j's COUNT and SUM fall short by i's value for good. expected_shortfall gives the model of
// that bias.
//
// MIN and MAX cannot be undone by subtraction: when a replaced value was the extreme, the extreme is taken from
// the new value and rebuilt by later pushes (every push of an up-to-date state refreshes it), as DIAS does.
// A peer that leaves hands its disseminator on (DIAS's later carrier design): leave() makes a last version with no
// value, which aggregators that count the peer take as a replacement by nothing.
//
// Thread safety: none; a peer is one agent's state, changed by its own exchanges.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "blume/error.hpp"
#include "blume/kinds/bloom_filter.hpp"
#include "blume/kinds/counting_bloom_filter.hpp"
#include "blume/plan.hpp"

namespace blume::aggregation {

/// The aggregates of the states counted: SUM, the sum of squares and COUNT (so AVERAGE and the deviation), and
/// MIN and MAX.
struct summary {
  double sum = 0, sum_squares = 0;
  std::int64_t count = 0;
  double min = std::numeric_limits<double>::infinity(), max = -std::numeric_limits<double>::infinity();

  void add(double v) noexcept {
    sum += v;
    sum_squares += v * v;
    ++count;
    refresh(v);
  }
  /// Removes a counted value. MIN and MAX are not subtractable: an extreme that leaves is dropped, and later
  /// values rebuild it (see the header comment).
  void remove(double v) noexcept {
    sum -= v;
    sum_squares -= v * v;
    --count;
    if (count == 0 || v <= min) min = std::numeric_limits<double>::infinity();
    if (count == 0 || v >= max) max = -std::numeric_limits<double>::infinity();
  }
  void refresh(double v) noexcept {
    min = std::min(min, v);
    max = std::max(max, v);
  }
  double average() const noexcept { return count > 0 ? sum / static_cast<double>(count) : 0.0; }
  double deviation() const noexcept {
    if (count <= 0) return 0.0;
    const double mean = average();
    return std::sqrt(std::max(0.0, sum_squares / static_cast<double>(count) - mean * mean));
  }
};

/// A membership: a peer and a version of its state, the key of AMS and SMA (16 bytes, hashed as they are).
struct membership {
  std::uint64_t peer = 0, version = 0;
  friend std::string_view blume_key_bytes(const membership& m) noexcept {
    return {reinterpret_cast<const char*>(&m), sizeof m};
  }
};
static_assert(sizeof(membership) == 16);

/// How large each peer's filters are: for `peers` memberships at rate `fpr` (every peer ends up counting every
/// other, so each filter holds about `peers` entries at the end).
struct dias_geometry {
  std::uint64_t peers = 1000;
  double fpr = 0.01;
};

/// One version of a disseminator's state: its value, or none when the peer has left.
struct state_version {
  std::uint64_t version = 0;
  double value = 0;
  bool present = true;
};

/// What a push carries from disseminator `from` to aggregator `to`.
struct dias_report {
  std::uint64_t from = 0, to = 0;
  state_version current;
  bool aggregator_known = false;          // AMD holds `to`
  std::vector<state_version> candidates;  // versions v with (to, v) in AMS
};

enum class dias_outcome : std::uint8_t { first, replaced, already_counted, unsuccessful };

/// The aggregator's answer: what it did, and (when acknowledged) the version it now counts instead of which.
struct dias_reply {
  std::uint64_t from = 0, to = 0;  // from the aggregator to the disseminator
  dias_outcome outcome = dias_outcome::unsuccessful;
  std::uint64_t counted = 0;             // the version it counts now
  std::optional<std::uint64_t> dropped;  // the version it stopped counting
  bool acknowledged() const noexcept { return outcome != dias_outcome::unsuccessful; }
};

/// Which push a disseminator owes a peer, by its own filters: never acknowledged (unexploited), counting an older
/// version (outdated), or up to date (exploited: no push needed).
enum class neighbour_class : std::uint8_t { unexploited, outdated, exploited };

class dias_peer {
 public:
  using id_filter = bloom_filter<>;
  using membership_filter = counting_bloom_filter<>;

  /// Peer `id` with `value`, its filters sized by `g`; it counts its own state from the start.
  dias_peer(std::uint64_t id, double value, const dias_geometry& g)
      : id_(id), amd_(g.peers, g.fpr), ams_(g.peers, g.fpr), dma_(g.peers, g.fpr), sma_(g.peers, g.fpr),
        history_{{0, value, true}} {
    amd_.insert(id_);
    ams_.insert(membership{id_, 0});
    dma_.insert(id_);
    sma_.insert(membership{id_, 0});
    aggregate_.add(value);
  }

  std::uint64_t id() const noexcept { return id_; }
  const state_version& current() const noexcept { return history_.back(); }
  const summary& aggregate() const noexcept { return aggregate_; }
  bool has_left() const noexcept { return !current().present; }

  /// A new value: a new version, replacing the old one in this peer's own aggregate at once; other
  /// aggregators replace it at their next exchange with this peer.
  void change(double value) { next_version({0, value, true}); }
  /// The peer leaves: a last version without a value, which aggregators that count it take as the removal of
  /// its value. The disseminator lives on (carried by another peer) to spread it.
  void leave() { next_version({0, 0, false}); }

  neighbour_class classify(std::uint64_t aggregator) const noexcept {
    if (!amd_.contains(aggregator)) return neighbour_class::unexploited;
    return ams_.contains(membership{aggregator, current().version}) ? neighbour_class::exploited
                                                                    : neighbour_class::outdated;
  }

  /// Whom to push to among peers a sampling service offered (this peer left out): the first never acknowledged,
  /// else the first counting an older version (DIAS's exploitation strategy), else the first of them, whose
  /// answer (already counted) refreshes its MIN and MAX. Nothing when none was offered.
  std::optional<std::uint64_t> choose(std::span<const std::uint64_t> sampled) const noexcept {
    std::optional<std::uint64_t> outdated, any;
    for (const std::uint64_t j : sampled) {
      if (j == id_) continue;
      const neighbour_class c = classify(j);
      if (c == neighbour_class::unexploited) return j;
      if (c == neighbour_class::outdated && !outdated) outdated = j;
      if (!any) any = j;
    }
    return outdated ? outdated : any;
  }

  /// The push to `aggregator`: the current state, whether AMD holds it, and the versions AMS says it counts.
  dias_report report_to(std::uint64_t aggregator) const {
    dias_report r;
    r.from = id_;
    r.to = aggregator;
    r.current = current();
    r.aggregator_known = amd_.contains(aggregator);
    if (r.aggregator_known)
      for (const state_version& v : history_)
        if (ams_.contains(membership{aggregator, v.version})) r.candidates.push_back(v);
    return r;
  }

  /// The aggregator's side of a push: decides, updates DMA, SMA and the aggregate, and answers.
  dias_reply receive(const dias_report& r) {
    dias_reply reply;
    reply.from = id_;
    reply.to = r.from;
    reply.counted = r.current.version;
    if (!r.aggregator_known || !dma_.contains(r.from)) {
      dma_.insert(r.from);
      sma_.insert(membership{r.from, r.current.version});
      if (r.current.present) aggregate_.add(r.current.value);
      reply.outcome = dias_outcome::first;
      return reply;
    }
    const state_version* counted = nullptr;
    std::size_t confirmed = 0;
    for (const state_version& v : r.candidates) {
      if (!sma_.contains(membership{r.from, v.version})) continue;  // AMS's false positive, cancelled by SMA
      counted = &v;
      ++confirmed;
    }
    if (confirmed != 1) {
      reply.outcome = dias_outcome::unsuccessful;
      return reply;
    }
    if (counted->version == r.current.version) {
      if (r.current.present) aggregate_.refresh(r.current.value);
      reply.outcome = dias_outcome::already_counted;
      return reply;
    }
    sma_.erase(membership{r.from, counted->version});
    if (counted->present) remove_counted(counted->value);
    sma_.insert(membership{r.from, r.current.version});
    if (r.current.present) aggregate_.add(r.current.value);
    reply.outcome = dias_outcome::replaced;
    reply.dropped = counted->version;
    return reply;
  }

  /// The disseminator's side of the answer: AMD and AMS learn what the aggregator counts now. An aggregator
  /// that already counted the current version is recorded only where AMS lacked it (a pair AMS lost to the
  /// erasure of another pair's false positive), so that no pair is counted twice in AMS.
  void acknowledge(const dias_reply& reply) {
    if (!reply.acknowledged()) return;
    amd_.insert(reply.from);
    if (reply.dropped) ams_.erase(membership{reply.from, *reply.dropped});
    const membership now{reply.from, reply.counted};
    if (reply.outcome != dias_outcome::already_counted || !ams_.contains(now)) ams_.insert(now);
  }

  /// The bytes of the four filters (the state a peer keeps besides its history and aggregate).
  std::size_t filter_bytes() const noexcept {
    return amd_.size_in_bytes() + ams_.size_in_bytes() + dma_.size_in_bytes() + sma_.size_in_bytes();
  }
  /// The filters' rates now (AMD's and DMA's, the pair whose joint false positive loses a value).
  double amd_fpr() const noexcept { return amd_.predicted_fpr(); }
  double dma_fpr() const noexcept { return dma_.predicted_fpr(); }

 private:
  void next_version(state_version s) {
    if (has_left()) throw invalid_argument("dias peer " + std::to_string(id_) + " has left");
    const state_version old = current();
    s.version = old.version + 1;
    history_.push_back(s);
    // Its own aggregator replaces at once, and its disseminator records that it does.
    sma_.erase(membership{id_, old.version});
    if (old.present) aggregate_.remove(old.value);
    sma_.insert(membership{id_, s.version});
    if (s.present) aggregate_.add(s.value);
    ams_.erase(membership{id_, old.version});
    ams_.insert(membership{id_, s.version});
  }

  // A removal that drops MIN or MAX takes this peer's own value back at once: no push ever brings it, since a
  // peer does not push to itself.
  void remove_counted(double value) noexcept {
    aggregate_.remove(value);
    if (current().present) aggregate_.refresh(current().value);
  }

  std::uint64_t id_;
  id_filter amd_;
  membership_filter ams_;
  id_filter dma_;
  membership_filter sma_;
  std::vector<state_version> history_;
  summary aggregate_;
};

/// The model of the filters' bias: the expected share of the (disseminator, aggregator) pairs never counted, for
/// filters of `bits` bits and `hashes` probes planned for `peers` entries, when a disseminator chooses among
/// `sampled` peers a push. A mean-field account of one disseminator over time (pushes per peer, in units of N):
/// with its filters holding a share F of the peers (rate f(F) = math::bloom_fpr(F·peers, …)), a peer it never
/// reached turns falsely known in AMD with the rise of f, becoming outdated, or up to date when AMS answers
/// yes falsely too (rate f). A push goes to a peer never reached when one is sampled (1 − (1 − x)^s), else to an
/// outdated one, else to the first sampled, which is a falsely up-to-date one with its share of the peers. Such a
/// deferred push is lost for good when the aggregator's DMA, holding about F too, answers yes falsely (f(F)); lost
/// pairs stay outdated and keep drawing pushes. The pushes per round cancel out. It takes every filter of a kind
/// to fill alike and false positives to be independent across filters. But all peers' filters share one seed,
/// so a peer falsely known in many AMDs is deferred by many, and its DMA fills more slowly. Measured losses are
/// therefore within about ±15% of the model, varying with the peers' ids (at 20%: 1.1% at 200 peers, 1.4% at 300,
/// 1.21% at 1000; the model says 1.31%). The counting AMS is planned at the same rate as AMD.
inline double expected_shortfall(double peers, double bits, double hashes, double sampled = 15) noexcept {
  const auto rate = [&](double fill) { return math::bloom_fpr(fill * peers, bits, hashes); };
  double fill = 0, unreached = 1, outdated = 0, outdated_lost = 0, deferred = 0, deferred_lost = 0;
  constexpr double step = 1e-3;
  for (double t = 0; t < 60 && unreached + outdated + deferred > 1e-12; t += step) {
    const double f = rate(fill);
    const double none_unreached = std::pow(1 - unreached, sampled);
    const double neither = std::pow(std::max(0.0, 1 - unreached - outdated - outdated_lost), sampled);
    const double all_outdated = outdated + outdated_lost;
    const double reached = (1 - none_unreached) * step;
    const double to_outdated = all_outdated > 0 ? (none_unreached - neither) * step * outdated / all_outdated : 0;
    const double to_deferred = neither * step * deferred;
    const double counted = reached + (to_outdated + to_deferred) * (1 - f);
    // Peers not reached yet that AMD now holds falsely, and outdated ones that AMS now holds falsely.
    const double turned = f < 1 ? (rate(fill + counted) - f) / (1 - f) : 0;
    const double known = unreached * turned, stale = outdated * turned;
    unreached = std::max(0.0, unreached - reached - known);
    outdated += known * (1 - f) - to_outdated - stale;
    deferred += known * f + stale - to_deferred;
    outdated_lost += to_outdated * f;
    deferred_lost += to_deferred * f;
    fill += counted;
  }
  return outdated_lost + deferred_lost;
}

}  // namespace blume::aggregation
