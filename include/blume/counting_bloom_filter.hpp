// The counting Bloom filter (Fan, Cao, Almeida & Broder 2000): each bit of the classic filter becomes a
// small counter, so keys can be erased. Counters saturate: one that reaches its maximum stays there on
// insert and on erase, because after overflowing it no longer knows its true value, and decrementing it
// could later produce a false negative. With 4-bit counters an overflow needs 16 keys on one counter,
// which at the optimal fill happens with probability about 1.37e-15 × m (Fan et al.).
#pragma once

#include <cstdint>
#include <string>

#include "blume/basic_bloom_filter.hpp"
#include "blume/detail/geometry.hpp"
#include "blume/detail/packed_cells.hpp"
#include "blume/detail/probe_ops.hpp"

namespace blume {

/// m counters of W bits (W = 2, 4 or 8) packed into 64-bit words, probed exactly like the classic filter.
/// In the file header, `bits` is the number of counters and the layout field is W.
template <unsigned W>
class counting_layout {
  static_assert(W == 2 || W == 4 || W == 8, "counters are 2, 4 or 8 bits wide");

 public:
  using word_type = std::uint64_t;
  static constexpr filter_kind kind{5};
  static constexpr std::string_view name = "counting";
  static constexpr std::uint32_t block_bits = W;  // the header's layout parameter: the counter width

  // The classic filter's geometry and model, in counters.
  static std::uint64_t plan_bytes(std::uint64_t counters) noexcept { return detail::word_bytes(counters * W); }
  static double model_fpr(double n, double m, double k) noexcept { return math::bloom_fpr(n, m, k); }
  static double estimate_items(double set, double m, double k) noexcept { return math::classic_items(set, m, k); }
  static filter_plan plan(std::uint64_t items, double fpr) { return detail::plan_classic<counting_layout>(items, fpr); }
  static filter_plan plan_for_bits(std::uint64_t items, std::uint64_t bits) {
    return detail::plan_classic_for_bits<counting_layout>(items, bits);
  }
  static constexpr std::uint64_t saturated = detail::packed_cells<W>::max_value;
  static constexpr unsigned per_word = detail::packed_cells<W>::per_word;

  counting_layout(std::uint64_t counters, std::uint32_t hashes) : counters_(counters), hashes_(hashes) {
    detail::check_geometry(name, counters, hashes, 1);
    if (counters > max_filter_bits / W)
      throw invalid_argument("counting filter: " + std::to_string(counters) + " counters of " + std::to_string(W) +
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

  /// Increments every probed counter that is below its maximum. Returns true if one was zero.
  template <bool Atomic>
  bool insert(word_type* words, digest d) const noexcept {
    bool fresh = false;
    probes(d, [&](std::uint64_t i) {
      fresh |= add<Atomic>(words, i, +1) == 0;
      return true;
    });
    return fresh;
  }

  bool contains(const word_type* words, digest d) const noexcept {
    return probes(d, [&](std::uint64_t i) { return counter(words, i) != 0; });
  }

  /// Removes one occurrence of the key. Refused (false, nothing changed) when one of its counters is zero:
  /// the key was never inserted. Saturated counters are left alone; a counter that a repeated probe of the
  /// same key already brought to zero is not decremented again.
  bool erase(word_type* words, digest d) const noexcept {
    if (!contains(words, d)) return false;
    probes(d, [&](std::uint64_t i) {
      add<false>(words, i, -1);
      return true;
    });
    return true;
  }

  /// The smallest of the key's counters: an upper bound on how often it was inserted (exact unless other
  /// keys share all its counters or a counter saturated).
  std::uint64_t count(const word_type* words, digest d) const noexcept {
    std::uint64_t smallest = saturated;
    probes(d, [&](std::uint64_t i) {
      smallest = std::min(smallest, counter(words, i));
      return smallest != 0;
    });
    return smallest;
  }

  void prefetch(const word_type* words, digest d) const noexcept {
    int left = 2;
    probes(d, [&](std::uint64_t i) {
      detail::prefetch_read(words + i / per_word);
      return --left > 0;
    });
  }
  void prefetch_for_write(word_type* words, digest d) const noexcept {
    probes(d, [&](std::uint64_t i) {
      detail::prefetch_write(words + i / per_word);
      return true;
    });
  }

  /// Non-zero counters in a word (what the fill-based estimates count).
  static std::uint64_t occupied(word_type w) noexcept { return cells::nonzero(w); }
  /// Union: counters add, saturating.
  static word_type merge_word(word_type a, word_type b) noexcept {
    word_type out = 0;
    for (unsigned lane = 0; lane < per_word; ++lane) {
      const unsigned shift = lane * W;
      const word_type sum = std::min(((a >> shift) & saturated) + ((b >> shift) & saturated), saturated);
      out |= sum << shift;
    }
    return out;
  }
  /// Intersection: the smaller counter.
  static word_type intersect_word(word_type a, word_type b) noexcept {
    word_type out = 0;
    for (unsigned lane = 0; lane < per_word; ++lane) {
      const unsigned shift = lane * W;
      out |= std::min((a >> shift) & saturated, (b >> shift) & saturated) << shift;
    }
    return out;
  }

 private:
  using cells = detail::packed_cells<W>;

  template <class Fn>
  bool probes(digest d, Fn&& fn) const noexcept {
    return detail::double_hashing_probes(d, hashes_, counters_, fn);
  }

  /// Adds +1 or −1 to counter i unless it is saturated (or, for −1, already zero). Returns the old value.
  template <bool Atomic>
  static std::uint64_t add(word_type* words, std::uint64_t i, int delta) noexcept {
    word_type& word = words[i / per_word];
    const unsigned shift = static_cast<unsigned>(i % per_word * W);
    auto next = [&](word_type w, std::uint64_t& old) {
      old = (w >> shift) & saturated;
      if (old == saturated || (delta < 0 && old == 0)) return w;
      return delta > 0 ? w + (word_type{1} << shift) : w - (word_type{1} << shift);
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

/// A Bloom filter that can erase: 4-bit counters by default. Memory is W × the classic filter's.
template <unsigned CounterBits = 4, hasher Hasher = xxh3_hasher>
using counting_bloom_filter = basic_bloom_filter<counting_layout<CounterBits>, Hasher>;

static_assert(serializable_filter<counting_bloom_filter<>>);
static_assert(can_erase<counting_bloom_filter<>> && can_count<counting_bloom_filter<>>);

}  // namespace blume
