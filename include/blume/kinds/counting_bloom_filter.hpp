// SPDX-License-Identifier: Apache-2.0
// The counting Bloom filter (Fan, Cao, Almeida & Broder 2000): each bit of the classic filter becomes a
// small counter, so keys can be erased. Counters saturate: one that reaches its maximum stays there on
// insert and on erase, because after overflowing it no longer knows its true value, and decrementing it
// could later produce a false negative. With 4-bit counters an overflow needs 16 keys on one counter,
// which at the optimal fill happens with probability about 1.37e-15 × m (Fan et al.).
//
// Erase only keys that were inserted. A key a lookup answers "no" for is refused and nothing changes, but
// a false positive cannot be told from a key inserted: it is erased, and each of its k counters that held
// exactly one key drops to zero, so that key answers "no" from then on (a false negative). Near capacity
// a counter a lookup passes holds one key with probability λe^−λ / (1 − e^−λ) (λ = kn/m ≈ ln 2), so one
// such erase damages about 0.69·k keys. At 100,000 keys planned for 1% (k = 7), erasing 100,000 keys never
// inserted erased about 970 false positives, each damaging 4.7 inserted keys: 4,500 of them (4.5%) then
// answered "no" (tests/erase_test.cpp holds this to the model).
#pragma once

#include <algorithm>
#include <cstdint>

#include "blume/detail/counter_array.hpp"
#include "blume/kinds/basic_bloom_filter.hpp"

namespace blume {

/// m counters of W bits (W = 2, 4 or 8) packed into 64-bit words, probed exactly like the classic filter.
/// In the file header, `bits` is the number of counters and the layout field is W.
template <unsigned W>
class counting_layout : public detail::counter_array<W> {
  static_assert(W == 2 || W == 4 || W == 8, "counters are 2, 4 or 8 bits wide");
  using base = detail::counter_array<W>;

 public:
  using base::counter;
  using base::saturated;
  using typename base::word_type;
  static constexpr filter_kind kind{5};
  static constexpr std::string_view name = "counting";
  static constexpr std::uint32_t block_bits = W;  // the header's layout parameter: the counter width
  static constexpr size_unit unit{"counters", "counter", W};

  // The classic filter's geometry and model, in counters.
  static double model_fpr(double n, double m, double k) noexcept { return math::bloom_fpr(n, m, k); }
  static double estimate_items(double set, double m, double k) noexcept { return math::classic_items(set, m, k); }
  static filter_plan plan(std::uint64_t items, double fpr) { return detail::plan_classic<counting_layout>(items, fpr); }
  static filter_plan plan_for_bits(std::uint64_t items, std::uint64_t bits) {
    return detail::plan_classic_for_bits<counting_layout>(items, bits);
  }

  counting_layout(std::uint64_t counters, std::uint32_t hashes) : base(name, counters, hashes) {}

  /// Increments every probed counter that is below its maximum. Returns true if one was zero.
  template <bool Atomic>
  bool insert(word_type* words, digest d) const noexcept {
    bool fresh = false;
    this->positions(d, [&](std::uint64_t i) {
      fresh |= base::template update<Atomic>(words, i, increment) == 0;
      return true;
    });
    return fresh;
  }

  bool contains(const word_type* words, digest d) const noexcept {
    return this->positions(d, [&](std::uint64_t i) { return counter(words, i) != 0; });
  }

  /// Removes one occurrence of the key. Refused (false, nothing changed) when one of its counters is zero:
  /// the key was never inserted. Saturated counters are left alone; a counter that a repeated probe of the
  /// same key already brought to zero is not decremented again.
  bool erase(word_type* words, digest d) const noexcept {
    if (!contains(words, d)) return false;
    this->positions(d, [&](std::uint64_t i) {
      base::template update<false>(words, i, decrement);
      return true;
    });
    return true;
  }

  /// The smallest of the key's counters: an upper bound on how often it was inserted (exact unless other
  /// keys share all its counters or a counter saturated).
  std::uint64_t count(const word_type* words, digest d) const noexcept {
    std::uint64_t smallest = saturated;
    this->positions(d, [&](std::uint64_t i) {
      smallest = std::min(smallest, counter(words, i));
      return smallest != 0;
    });
    return smallest;
  }

  /// Intersection: the smaller counter.
  static word_type intersect_word(word_type a, word_type b) noexcept {
    word_type out = 0;
    for (unsigned lane = 0; lane < base::per_word; ++lane) {
      const unsigned shift = lane * W;
      out |= std::min((a >> shift) & saturated, (b >> shift) & saturated) << shift;
    }
    return out;
  }

 private:
  static constexpr std::uint64_t increment(std::uint64_t c) noexcept { return c == saturated ? c : c + 1; }
  static constexpr std::uint64_t decrement(std::uint64_t c) noexcept { return c == saturated || c == 0 ? c : c - 1; }
};

/// A Bloom filter that can erase: 4-bit counters by default. Memory is W × the classic filter's.
template <unsigned CounterBits = 4, hasher Hasher = xxh3_hasher>
using counting_bloom_filter = basic_bloom_filter<counting_layout<CounterBits>, Hasher>;

static_assert(serializable_filter<counting_bloom_filter<>>);
static_assert(can_erase<counting_bloom_filter<>> && can_count<counting_bloom_filter<>>);

}  // namespace blume
