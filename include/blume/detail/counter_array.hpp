// SPDX-License-Identifier: Apache-2.0
// What the two counter layouts (counting_layout, variable_increment_layout) share: m counters of W bits
// packed into 64-bit words and probed by double hashing like the classic filter's bits. The layouts differ
// only in what an insert adds and what a lookup accepts, so this holds the geometry, counter access, the
// prefetches, the fill count and the saturating union, and each layout keeps its own rule.
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>

#include "blume/detail/geometry.hpp"
#include "blume/detail/packed_cells.hpp"
#include "blume/detail/probe_ops.hpp"
#include "blume/error.hpp"
#include "blume/hash.hpp"
#include "blume/plan.hpp"

namespace blume::detail {

template <unsigned W>
class counter_array {
  using cells = packed_cells<W>;

 public:
  using word_type = std::uint64_t;
  static constexpr std::uint64_t saturated = cells::max_value;
  static constexpr unsigned per_word = cells::per_word;

  static std::uint64_t plan_bytes(std::uint64_t counters) noexcept { return word_bytes(counters * W); }

  /// The number of counters (the m of the formulas).
  std::uint64_t bits() const noexcept { return counters_; }
  std::uint32_t hashes() const noexcept { return hashes_; }
  /// Payload bits in use; the rest of the last word is zero.
  std::uint64_t payload_bits() const noexcept { return counters_ * W; }
  std::size_t storage_bytes() const noexcept { return static_cast<std::size_t>(cells::bytes_for(counters_)); }

  static std::uint64_t counter(const word_type* words, std::uint64_t i) noexcept { return cells::get(words, i); }

  // A lookup usually stops at the first or second counter, so only two are worth fetching ahead.
  void prefetch(const word_type* words, digest d) const noexcept {
    int left = 2;
    positions(d, [&](std::uint64_t i) {
      prefetch_read(words + i / per_word);
      return --left > 0;
    });
  }
  void prefetch_for_write(word_type* words, digest d) const noexcept {
    positions(d, [&](std::uint64_t i) {
      prefetch_write(words + i / per_word);
      return true;
    });
  }

  /// Non-zero counters in a word (what the fill-based estimates count: a counter is non-zero with the
  /// classic filter's bit probability, whatever an insert adds).
  static std::uint64_t occupied(word_type w) noexcept { return cells::nonzero(w); }
  /// How many of the m counters hold each value 0 … saturated (one pass over the array).
  std::array<std::uint64_t, saturated + 1> histogram(const word_type* words) const noexcept {
    std::array<std::uint64_t, saturated + 1> h{};
    const std::uint64_t word_count = storage_bytes() / sizeof(word_type);
    for (std::uint64_t i = 0; i < word_count; ++i) {
      const word_type w = words[i];
      for (unsigned lane = 0; lane < per_word; ++lane) ++h[(w >> (lane * W)) & saturated];
    }
    h[0] -= word_count * per_word - counters_;  // the last word's lanes past the m-th counter are zero
    return h;
  }
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

 protected:
  counter_array(std::string_view name, std::uint64_t counters, std::uint32_t hashes)
      : counters_(counters), hashes_(hashes) {
    check_geometry(name, counters, hashes, 1);
    if (counters > max_filter_bits / W)
      throw invalid_argument(std::string(name) + " filter: " + std::to_string(counters) + " counters of " +
                             std::to_string(W) + " bits exceed the maximum of 2^40 bits");
  }

  /// fn(counter index) for each of the k probes while fn returns true.
  template <class Fn>
  bool positions(digest d, Fn&& fn) const noexcept {
    return double_hashing_probes(d, hashes_, counters_, fn);
  }

  /// Replaces counter i by next(old value), atomically when asked (concurrent inserts); returns the old
  /// value. next must be pure: under contention it runs again on the newer value.
  template <bool Atomic, class Next>
  static std::uint64_t update(word_type* words, std::uint64_t i, Next&& next) noexcept {
    word_type& word = words[i / per_word];
    const unsigned shift = static_cast<unsigned>(i % per_word * W);
    std::uint64_t old = 0;
    auto step = [&](word_type w) {
      old = (w >> shift) & saturated;
      return (w & ~(saturated << shift)) | (std::uint64_t{next(old)} << shift);
    };
    if constexpr (Atomic) {
      std::atomic_ref<word_type> ref(word);
      word_type w = ref.load(std::memory_order_relaxed);
      while (!ref.compare_exchange_weak(w, step(w), std::memory_order_relaxed)) {
      }
    } else {
      word = step(word);
    }
    return old;
  }

 private:
  std::uint64_t counters_;
  std::uint32_t hashes_;
};

}  // namespace blume::detail
