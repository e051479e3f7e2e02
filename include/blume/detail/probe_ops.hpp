// SPDX-License-Identifier: Apache-2.0
// insert/contains/prefetch for layouts whose probes are independent bit positions in one flat array
// (classic and partitioned). The layout supplies for_each_probe(digest, fn): call fn(bit position) for
// each probe while fn returns true, and return whether all did.
#pragma once

#include <cstdint>
#include <utility>

#include "blume/detail/bits.hpp"
#include "blume/hash.hpp"

namespace blume::detail {

/// The classic probe sequence (see classic_layout): fn(position in [0, cells)) for each of k probes while
/// fn returns true; returns whether all did.
template <class Fn>
inline bool double_hashing_probes(digest d, std::uint32_t k, std::uint64_t cells, Fn&& fn) noexcept {
  std::uint64_t a = d.low;
  std::uint64_t b = d.high;
  for (std::uint32_t i = 0; i < k; ++i) {
    if (!fn(reduce(mix(a), cells))) return false;
    a += b;
    b += i;
  }
  return true;
}

/// The probe offsets of a key inside its block of 2^Bits slots: consecutive Bits-bit fields of x_0 = d.low,
/// ⌊64/Bits⌋ from each 64-bit value, then of x_{t+1} = remix(x_t) for the next ones (a multiply–xorshift
/// round: x ← (x ⊕ x≫32)·φ, then x ⊕ x≫29). The fields of one value are independent and uniform, which is
/// what math::blocked_fpr assumes. fn(offset) for each of the k probes; up to one value's worth of probes
/// is unrolled, so a lookup of the common k is a few dozen straight-line instructions.
template <unsigned Bits, unsigned K, class Fn>
[[gnu::always_inline]] inline void block_fields(std::uint64_t fields, Fn& fn) noexcept {
  [&]<unsigned... I>(std::integer_sequence<unsigned, I...>) {
    (fn(static_cast<unsigned>((fields >> (Bits * I)) & ((std::uint64_t{1} << Bits) - 1))), ...);
  }(std::make_integer_sequence<unsigned, K>{});
}
template <unsigned Bits, class Fn>
[[gnu::always_inline]] inline void block_offsets(std::uint64_t low, std::uint32_t k, Fn&& fn) noexcept {
  static_assert(Bits >= 3 && Bits <= 9);
  constexpr unsigned per_value = 64 / Bits;
  switch (k) {  // a case for each k up to 10 that one value holds
    case 1: return block_fields<Bits, 1>(low, fn);
    case 2: return block_fields<Bits, 2>(low, fn);
    case 3: return block_fields<Bits, 3>(low, fn);
    case 4: return block_fields<Bits, 4>(low, fn);
    case 5: return block_fields<Bits, 5>(low, fn);
    case 6: return block_fields<Bits, 6>(low, fn);
    case 7: return block_fields<Bits, 7>(low, fn);
    case 8:
      if constexpr (per_value >= 8) return block_fields<Bits, 8>(low, fn);
      break;
    case 9:
      if constexpr (per_value >= 9) return block_fields<Bits, 9>(low, fn);
      break;
    case 10:
      if constexpr (per_value >= 10) return block_fields<Bits, 10>(low, fn);
      break;
    default: break;
  }
  std::uint64_t source = low;
  for (std::uint32_t done = 0; done < k; done += per_value) {
    std::uint64_t fields = source;
    for (std::uint32_t i = done; i < k && i < done + per_value; ++i, fields >>= Bits)
      fn(static_cast<unsigned>(fields & ((std::uint64_t{1} << Bits) - 1)));
    source = (source ^ (source >> 32)) * 0x9e3779b97f4a7c15ULL;
    source ^= source >> 29;
  }
}

/// block_offsets as a loop: the same offsets in the same order, in a few instructions whatever k is, for
/// callers whose lookup must stay small enough to inline (the lattice cells: GCC would not inline theirs
/// around the unrolled form). The blocked Bloom filter keeps the unrolled form: on the loop, its lookups of
/// 100k keys in cache took 1.4× the time batched and 1.2× one by one (k = 7).
template <unsigned Bits, class Fn>
inline void block_offsets_loop(std::uint64_t low, std::uint32_t k, Fn&& fn) noexcept {
  constexpr unsigned per_value = 64 / Bits;
  std::uint64_t source = low, fields = low;
  for (std::uint32_t i = 0, left = per_value; i < k; ++i, --left, fields >>= Bits) {
    if (left == 0) {
      source = (source ^ (source >> 32)) * 0x9e3779b97f4a7c15ULL;
      source ^= source >> 29;
      fields = source;
      left = per_value;
    }
    fn(static_cast<unsigned>(fields & ((std::uint64_t{1} << Bits) - 1)));
  }
}

template <class Layout>
class flat_probe_ops {
 public:
  using word_type = std::uint64_t;

  template <bool Atomic>
  bool insert(word_type* words, digest d) const noexcept {
    word_type fresh = 0;
    self().for_each_probe(d, [&](std::uint64_t pos) {
      const word_type mask = word_type{1} << (pos & 63);
      fresh |= ~load_relaxed(words[pos >> 6]) & mask;
      set_mask<Atomic>(words[pos >> 6], mask);
      return true;
    });
    return fresh != 0;
  }

  /// insert<false> that answers how many bits it turned from 0 to 1, so a caller can keep a layer's
  /// fill up to date without reading the array. Each probe tests its bit before setting it, so two probes
  /// on one bit count it once.
  std::uint32_t insert_counting(word_type* words, digest d) const noexcept {
    std::uint32_t fresh = 0;
    self().for_each_probe(d, [&](std::uint64_t pos) {
      const word_type mask = word_type{1} << (pos & 63);
      word_type& w = words[pos >> 6];
      fresh += (w & mask) == 0;
      w |= mask;
      return true;
    });
    return fresh;
  }

  bool contains(const word_type* words, digest d) const noexcept {
    // Early exit: an absent key usually fails within the first two probes, saving their cache misses.
    return self().for_each_probe(d,
                                 [&](std::uint64_t pos) { return (load_relaxed(words[pos >> 6]) >> (pos & 63)) & 1; });
  }

  /// Only the first two probes: an absent key is usually rejected by them, and prefetching all k lines of
  /// a whole batch would ask for more misses than the core can keep in flight.
  void prefetch(const word_type* words, digest d) const noexcept {
    int left = 2;
    self().for_each_probe(d, [&](std::uint64_t pos) {
      prefetch_read(words + (pos >> 6));
      return --left > 0;
    });
  }
  void prefetch_for_write(word_type* words, digest d) const noexcept {
    self().for_each_probe(d, [&](std::uint64_t pos) {
      prefetch_write(words + (pos >> 6));
      return true;
    });
  }

  std::size_t storage_bytes() const noexcept { return static_cast<std::size_t>((self().bits() + 63) / 64 * 8); }

 private:
  const Layout& self() const noexcept { return static_cast<const Layout&>(*this); }
};

}  // namespace blume::detail
