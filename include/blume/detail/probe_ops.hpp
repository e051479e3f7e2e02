// SPDX-License-Identifier: Apache-2.0
// insert/contains/prefetch for layouts whose probes are independent bit positions in one flat array
// (classic and partitioned). The layout supplies for_each_probe(digest, fn): call fn(bit position) for
// each probe while fn returns true, and return whether all did.
#pragma once

#include <cstdint>

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
