// SPDX-License-Identifier: Apache-2.0
// Storage of W-bit cells (W = 1, 2, 4 or 8) packed into 64-bit words: the counters of counting filters
// and the cells of stable filters. Knows nothing about filters.
#pragma once

#include <bit>
#include <cstdint>

#include "blume/detail/bits.hpp"

namespace blume::detail {

template <unsigned W>
struct packed_cells {
  static_assert(W == 1 || W == 2 || W == 4 || W == 8, "cells are 1, 2, 4 or 8 bits wide");
  static constexpr std::uint64_t max_value = (std::uint64_t{1} << W) - 1;
  static constexpr unsigned per_word = 64 / W;
  static constexpr std::uint64_t lane_low_bits = ~std::uint64_t{0} / max_value;  // bit 0 of every cell

  static constexpr std::uint64_t bytes_for(std::uint64_t cells) noexcept { return (cells * W + 63) / 64 * 8; }

  static std::uint64_t get(const std::uint64_t* words, std::uint64_t i) noexcept {
    return (load_relaxed(words[i / per_word]) >> (i % per_word * W)) & max_value;
  }
  static void set(std::uint64_t* words, std::uint64_t i, std::uint64_t value) noexcept {
    const unsigned shift = static_cast<unsigned>(i % per_word * W);
    std::uint64_t& w = words[i / per_word];
    w = (w & ~(max_value << shift)) | (value << shift);
  }
  /// Non-zero cells in a word.
  static std::uint64_t nonzero(std::uint64_t w) noexcept {
    for (unsigned shift = 1; shift < W; shift <<= 1) w |= w >> shift;
    return static_cast<std::uint64_t>(std::popcount(w & lane_low_bits));
  }
};

}  // namespace blume::detail
