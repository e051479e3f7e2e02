// SPDX-License-Identifier: Apache-2.0
// The variable-increment counting Bloom filter (Rottenstreich, Kanizo & Keslassy, "The Variable-Increment
// Counting Bloom Filter", INFOCOM 2012 / IEEE/ACM ToN 2014): a counting filter whose key adds, at each of
// its k counters, an increment g drawn by a hash from D_L = [L, 2L) instead of 1. Any sum of two or more
// increments is at least 2L, so a counter c can hold the key's g only if c = g or c ≥ g + L: a lookup
// answers "no" when some counter is neither, which a plain counting filter (any c ≥ 1 passes) cannot
// see. At equal memory that lowers the false-positive rate, and keys can still be erased.
//
// Counters saturate as the counting filter's do: a counter whose sum would pass 2^W − 1 stays at 2^W − 1,
// passes every lookup, and is never decremented (after an overflow it no longer knows what it holds, and
// decrementing it could later produce a false negative). The model (math::vi_fpr) accounts for it at n
// keys inserted. Erases break that model: a counter that saturated while more keys were in stays
// saturated and passes every lookup, so after erasing half the keys the rate is about twice what the
// model gives at the keys left. predicted_fpr() therefore reads the rate off the counters themselves
// (math::vi_fpr_of_counters), which holds after any sequence of inserts and erases.
//
// Erasing a key that was never inserted: a lookup that answers "no" refuses it, and nothing changes. A false
// positive cannot be told from a key inserted, so it is erased, and subtracting its increments takes from
// other keys: a counter that held one key at that increment drops to zero, and one that held several can
// drop below what one of them needs, so those keys answer "no" from then on (a false negative). At 100,000
// keys planned for 1%, erasing 100,000 keys never inserted erased about 970 false positives, each making
// 4.6 inserted keys answer "no" on average: 4,400 of them (4.4%), as tests/erase_test.cpp's model says.
// Erase only keys that were inserted.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <string>

#include "blume/detail/counter_array.hpp"
#include "blume/kinds/basic_bloom_filter.hpp"

namespace blume {

/// m counters of W bits (4 or 8), probed like the classic filter's bits; the key's increment at probe i
/// is L + (a hash of the digest and i) mod L. In the file header, `bits` is the number of counters and the
/// layout field is W + 256·L.
template <unsigned W, unsigned L>
class variable_increment_layout : public detail::counter_array<W> {
  static_assert(W == 4 || W == 8, "counters are 4 or 8 bits wide");
  static_assert(L >= 1 && 3 * L <= (1u << W) - 1,
                "the counters must hold two increments and more: 2^W - 1 >= 3L - 1 + 1 (one increment plus L)");
  using base = detail::counter_array<W>;

 public:
  using base::counter;
  using base::saturated;
  using typename base::word_type;
  static constexpr filter_kind kind{22};
  static constexpr std::string_view name = "vi-counting";
  static constexpr std::uint32_t block_bits = W + 256 * L;  // the header's layout parameter
  static constexpr size_unit unit{"counters", "counter", W};

  // The geometry is the counting filter's, in counters; the rate is the paper's, with saturation.
  static double model_fpr(double n, double m, double k) noexcept { return math::vi_fpr(n, m, k, L, saturated); }
  /// Where k is this model's best, far from the classic m·ln 2 / k (math::vi_optimal_load).
  static double optimal_load(double m, double k) noexcept { return math::vi_optimal_load(m, k, L, saturated); }
  static double estimate_items(double set, double m, double k) noexcept { return math::classic_items(set, m, k); }
  /// The rate now, from the counters (one pass): what predicted_fpr() answers, right after erases too.
  double fpr_of_counters(const word_type* words) const noexcept {
    const auto h = this->histogram(words);
    return math::vi_fpr_of_counters(std::span<const std::uint64_t>(h), this->hashes(), L);
  }
  static filter_plan plan(std::uint64_t items, double fpr) {
    return detail::plan_by_model<variable_increment_layout>(items, fpr);
  }
  /// A budget of `counters` counters, as for the counting filter.
  static filter_plan plan_for_bits(std::uint64_t items, std::uint64_t counters) {
    return detail::plan_by_model_for_bits<variable_increment_layout>(items, counters);
  }

  variable_increment_layout(std::uint64_t counters, std::uint32_t hashes) : base(name, counters, hashes) {}

  /// Adds the key's increment to each of its counters, saturating. Returns whether a lookup answered "no"
  /// before (a zero counter is not the only sign of a new key here).
  template <bool Atomic>
  bool insert(word_type* words, digest d) const noexcept {
    const bool fresh = !contains(words, d);
    probes(d, [&](std::uint64_t i, std::uint64_t g) {
      base::template update<Atomic>(words, i, [g](std::uint64_t c) { return plus(c, g); });
      return true;
    });
    return fresh;
  }

  /// The paper's rule: every counter is saturated, equal to the key's increment there, or at least the
  /// increment plus L (room for another key's increment besides).
  bool contains(const word_type* words, digest d) const noexcept {
    return probes(d, [&](std::uint64_t i, std::uint64_t g) { return may_hold(counter(words, i), g); });
  }

  /// Removes one occurrence of the key: refused (false, nothing changed) when a lookup says the key is
  /// absent, so a key never inserted cannot be erased unless it is a false positive (the hazard every
  /// counting filter has). Saturated counters are left alone.
  bool erase(word_type* words, digest d) const noexcept {
    if (!contains(words, d)) return false;
    probes(d, [&](std::uint64_t i, std::uint64_t g) {
      base::template update<false>(words, i, [g](std::uint64_t c) { return minus(c, g); });
      return true;
    });
    return true;
  }

  /// An upper bound on how often the key was inserted: each insert added g to its counter, so no more than
  /// ⌊c / g⌋ at any unsaturated counter (0 when a lookup says absent; the saturated count when every
  /// counter saturated).
  std::uint64_t count(const word_type* words, digest d) const noexcept {
    if (!contains(words, d)) return 0;
    std::uint64_t smallest = saturated;
    probes(d, [&](std::uint64_t i, std::uint64_t g) {
      const std::uint64_t c = counter(words, i);
      if (c != saturated) smallest = std::min(smallest, c / g);
      return true;
    });
    return smallest;
  }

  /// A counter holds 0, a sum of increments (each at least L), or the saturated value: never 1 … L − 1.
  /// An insert into such a counter could land between g and g + L, and the key just inserted would be
  /// missed, so a file holding one is refused (format_error).
  void check_words(const word_type* words) const {
    for (std::uint64_t i = 0; i < this->bits(); ++i)
      if (const std::uint64_t c = counter(words, i); c != 0 && c < L)
        throw format_error("vi-counting filter: counter " + std::to_string(i) + " holds " + std::to_string(c) +
                           ", which no sum of increments of at least " + std::to_string(L) + " makes");
  }

  // No intersect_word, so no intersect(): the smaller of two counters can pass a key that one filter
  // rejects (a counter at g in one and between g and g + L in the other), and an intersection must answer
  // true only where both did.

 private:
  static constexpr bool may_hold(std::uint64_t c, std::uint64_t g) noexcept {
    return c == saturated || c == g || c >= g + L;
  }
  // A sum past the maximum saturates; a saturated counter no longer knows its value and stays.
  static constexpr std::uint64_t plus(std::uint64_t c, std::uint64_t g) noexcept {
    return c == saturated ? c : std::min(c + g, saturated);
  }
  // Only erasing a key that was never inserted (a false positive) can go below zero or leave 1 … L − 1,
  // which no sum of increments makes; L instead keeps every later insert findable (see check_words).
  static constexpr std::uint64_t minus(std::uint64_t c, std::uint64_t g) noexcept {
    if (c == saturated) return c;
    const std::uint64_t now = c > g ? c - g : 0;
    return now != 0 && now < L ? L : now;
  }

  /// fn(counter index, increment) for each of the k probes while fn returns true; the increment's hash is
  /// the high half remixed per probe, so it is independent of the position (which reduce() takes from the
  /// high bits of mix(a)).
  template <class Fn>
  bool probes(digest d, Fn&& fn) const noexcept {
    std::uint32_t probe = 0;
    return this->positions(d, [&](std::uint64_t i) {
      const std::uint64_t g = L + reduce(mix(d.high ^ (0x9e3779b97f4a7c15ULL * ++probe)), L);
      return fn(i, g);
    });
  }
};

/// A counting filter with variable increments: 4-bit counters and L = 4 by default (increments 4 … 7).
template <unsigned CounterBits = 4, unsigned L = 4, hasher Hasher = xxh3_hasher>
using variable_increment_counting_filter = basic_bloom_filter<variable_increment_layout<CounterBits, L>, Hasher>;

static_assert(serializable_filter<variable_increment_counting_filter<>>);
static_assert(can_erase<variable_increment_counting_filter<>> && can_count<variable_increment_counting_filter<>>);
static_assert(!can_intersect<variable_increment_counting_filter<>>);

}  // namespace blume
