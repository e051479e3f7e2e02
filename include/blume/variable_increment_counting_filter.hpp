// The variable-increment counting Bloom filter (Rottenstreich, Kanizo & Keslassy, "The Variable-Increment
// Counting Bloom Filter", INFOCOM 2012 / IEEE/ACM ToN 2014): a counting filter whose key adds, at each of
// its k counters, an increment g drawn by a hash from D_L = [L, 2L) instead of 1. Any sum of two or more
// increments is at least 2L, so a counter c can hold the key's g only if c = g or c ≥ g + L: a lookup
// answers "no" when some counter is neither, which a plain counting filter (any c ≥ 1 passes) cannot
// see. At equal memory that lowers the false-positive rate, and keys can still be erased.
//
// Counters saturate as the counting filter's do: a counter whose sum would pass 2^W − 1 stays at 2^W − 1,
// passes every lookup, and is never decremented (after an overflow it no longer knows what it holds, and
// decrementing it could later produce a false negative). The model (math::vi_fpr) accounts for it.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <string>

#include "blume/basic_bloom_filter.hpp"
#include "blume/detail/geometry.hpp"
#include "blume/detail/packed_cells.hpp"
#include "blume/detail/probe_ops.hpp"

namespace blume {

/// m counters of W bits (4 or 8), probed like the classic filter's bits; the key's increment at probe i
/// is L + (a hash of the digest and i) mod L. In the file header, `bits` is the number of counters and the
/// layout field is W + 256·L.
template <unsigned W, unsigned L>
class variable_increment_layout {
  static_assert(W == 4 || W == 8, "counters are 4 or 8 bits wide");
  static_assert(L >= 1 && 3 * L <= (1u << W) - 1,
                "the counters must hold two increments and more: 2^W - 1 >= 3L - 1 + 1 (one increment plus L)");

 public:
  using word_type = std::uint64_t;
  static constexpr filter_kind kind{22};
  static constexpr std::string_view name = "vi-counting";
  static constexpr std::uint32_t block_bits = W + 256 * L;  // the header's layout parameter
  static constexpr std::uint64_t saturated = detail::packed_cells<W>::max_value;
  static constexpr unsigned per_word = detail::packed_cells<W>::per_word;

  // The geometry is the counting filter's, in counters; the rate is the paper's, with saturation.
  static std::uint64_t plan_bytes(std::uint64_t counters) noexcept { return detail::word_bytes(counters * W); }
  static double model_fpr(double n, double m, double k) noexcept { return math::vi_fpr(n, m, k, L, saturated); }
  static double estimate_items(double set, double m, double k) noexcept { return math::classic_items(set, m, k); }
  static filter_plan plan(std::uint64_t items, double fpr) {
    return detail::plan_by_model<variable_increment_layout>(items, fpr);
  }
  /// A budget of `counters` counters, as for the counting filter.
  static filter_plan plan_for_bits(std::uint64_t items, std::uint64_t counters) {
    return detail::plan_by_model_for_bits<variable_increment_layout>(items, counters);
  }

  variable_increment_layout(std::uint64_t counters, std::uint32_t hashes) : counters_(counters), hashes_(hashes) {
    detail::check_geometry(name, counters, hashes, 1);
    if (counters > max_filter_bits / W)
      throw invalid_argument("vi-counting filter: " + std::to_string(counters) + " counters of " + std::to_string(W) +
                             " bits exceed the maximum of 2^40 bits");
  }

  /// The number of counters (the m of the formulas).
  std::uint64_t bits() const noexcept { return counters_; }
  std::uint32_t hashes() const noexcept { return hashes_; }
  /// Payload bits in use; the rest of the last word is zero.
  std::uint64_t payload_bits() const noexcept { return counters_ * W; }
  std::size_t storage_bytes() const noexcept {
    return static_cast<std::size_t>(detail::packed_cells<W>::bytes_for(counters_));
  }

  static std::uint64_t counter(const word_type* words, std::uint64_t i) noexcept { return cells::get(words, i); }

  /// Adds the key's increment to each of its counters, saturating. Returns whether a lookup answered "no"
  /// before (a zero counter is not the only sign of a new key here).
  template <bool Atomic>
  bool insert(word_type* words, digest d) const noexcept {
    const bool fresh = !contains(words, d);
    probes(d, [&](std::uint64_t i, std::uint64_t g) {
      add<Atomic>(words, i, g, +1);
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
      add<false>(words, i, g, -1);
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

  void prefetch(const word_type* words, digest d) const noexcept {
    int left = 2;
    probes(d, [&](std::uint64_t i, std::uint64_t) {
      detail::prefetch_read(words + i / per_word);
      return --left > 0;
    });
  }
  void prefetch_for_write(word_type* words, digest d) const noexcept {
    probes(d, [&](std::uint64_t i, std::uint64_t) {
      detail::prefetch_write(words + i / per_word);
      return true;
    });
  }

  /// A counter holds 0, a sum of increments (each at least L), or the saturated value: never 1 … L − 1.
  /// An insert into such a counter could land between g and g + L, and the key just inserted would be
  /// missed, so a file holding one is refused (format_error).
  void check_words(const word_type* words) const {
    for (std::uint64_t i = 0; i < counters_; ++i)
      if (const std::uint64_t c = counter(words, i); c != 0 && c < L)
        throw format_error("vi-counting filter: counter " + std::to_string(i) + " holds " + std::to_string(c) +
                           ", which no sum of increments of at least " + std::to_string(L) + " makes");
  }

  /// Non-zero counters in a word (what the fill-based estimates count: a counter is non-zero with the
  /// classic filter's probability, whatever the increments).
  static std::uint64_t occupied(word_type w) noexcept { return cells::nonzero(w); }
  /// Union: counters add, saturating, as if every key of both had been inserted here.
  static word_type merge_word(word_type a, word_type b) noexcept {
    word_type out = 0;
    for (unsigned lane = 0; lane < per_word; ++lane) {
      const unsigned shift = lane * W;
      const word_type sum = std::min(((a >> shift) & saturated) + ((b >> shift) & saturated), saturated);
      out |= sum << shift;
    }
    return out;
  }
  // No intersect_word, so no intersect(): the smaller of two counters can pass a key that one filter
  // rejects (a counter at g in one and between g and g + L in the other), and an intersection must answer
  // true only where both did.

 private:
  using cells = detail::packed_cells<W>;

  static constexpr bool may_hold(std::uint64_t c, std::uint64_t g) noexcept {
    return c == saturated || c == g || c >= g + L;
  }

  /// fn(counter index, increment) for each of the k probes while fn returns true; the increment's hash is
  /// the high half remixed per probe, so it is independent of the position (which reduce() takes from the
  /// high bits of mix(a)).
  template <class Fn>
  bool probes(digest d, Fn&& fn) const noexcept {
    std::uint32_t probe = 0;
    return detail::double_hashing_probes(d, hashes_, counters_, [&](std::uint64_t i) {
      const std::uint64_t g = L + reduce(mix(d.high ^ (0x9e3779b97f4a7c15ULL * ++probe)), L);
      return fn(i, g);
    });
  }

  /// Adds or subtracts g at counter i unless it is saturated; a sum past the maximum saturates, and a
  /// difference below zero (only for a false-positive erase) stops at zero. Returns the old value.
  template <bool Atomic>
  static std::uint64_t add(word_type* words, std::uint64_t i, std::uint64_t g, int sign) noexcept {
    word_type& word = words[i / per_word];
    const unsigned shift = static_cast<unsigned>(i % per_word * W);
    auto next = [&](word_type w, std::uint64_t& old) {
      old = (w >> shift) & saturated;
      if (old == saturated) return w;
      std::uint64_t now = sign > 0 ? std::min(old + g, saturated) : (old > g ? old - g : 0);
      // Only erasing a key that was never inserted (a false positive) can leave 1 … L − 1, which no sum of
      // increments makes; L instead keeps every later insert findable (see check_words).
      if (now != 0 && now < L) now = L;
      return (w & ~(saturated << shift)) | (now << shift);
    };
    std::uint64_t old = 0;
    if constexpr (Atomic) {
      std::atomic_ref<word_type> ref(word);
      word_type w = ref.load(std::memory_order_relaxed);
      while (!ref.compare_exchange_weak(w, next(w, old), std::memory_order_relaxed)) {
      }
    } else {
      word = next(word, old);
    }
    return old;
  }

  std::uint64_t counters_;
  std::uint32_t hashes_;
};

/// A counting filter with variable increments: 4-bit counters and L = 4 by default (increments 4 … 7).
template <unsigned CounterBits = 4, unsigned L = 4, hasher Hasher = xxh3_hasher>
using variable_increment_counting_filter = basic_bloom_filter<variable_increment_layout<CounterBits, L>, Hasher>;

static_assert(serializable_filter<variable_increment_counting_filter<>>);
static_assert(can_erase<variable_increment_counting_filter<>> && can_count<variable_increment_counting_filter<>>);
static_assert(!can_intersect<variable_increment_counting_filter<>>);

}  // namespace blume
