// SPDX-License-Identifier: Apache-2.0
// A least-significant-digit radix sort of 64-bit words by a field of their bits, for the bulk lookups of
// sorted structures (the Golomb-coded set sorts its keys' values, each with the key's index below it).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

namespace blume::detail {

/// Sorts v[0, n) by bits [from_bit, from_bit + bits) of each word (bits ≤ 64 − from_bit), stably, in
/// passes of 11-bit digits through `spare` (room for n words); the result ends in v. The words' bits above
/// the field must be zero, as the last digit may reach past it.
inline void radix_sort_bits(std::uint64_t* v, std::uint64_t* spare, std::size_t n, unsigned from_bit, unsigned bits) {
  constexpr unsigned digit_bits = 11;
  constexpr std::size_t radix = std::size_t{1} << digit_bits;
  const unsigned passes = (bits + digit_bits - 1) / digit_bits;
  if (passes == 0 || n < 2) return;
  // Every digit's counts in one read of the words.
  std::vector<std::size_t> counts(std::size_t{passes} * radix, 0);
  for (std::size_t i = 0; i < n; ++i)
    for (unsigned p = 0; p < passes; ++p) ++counts[p * radix + ((v[i] >> (from_bit + p * digit_bits)) & (radix - 1))];
  std::uint64_t* from = v;
  std::uint64_t* to = spare;
  for (unsigned p = 0; p < passes; ++p) {
    std::size_t* next = counts.data() + std::size_t{p} * radix;
    const unsigned shift = from_bit + p * digit_bits;
    if (next[(from[0] >> shift) & (radix - 1)] == n) continue;  // one digit for all: the order stands
    std::size_t at = 0;
    for (std::size_t d = 0; d < radix; ++d) at += std::exchange(next[d], at);
    for (std::size_t i = 0; i < n; ++i) to[next[(from[i] >> shift) & (radix - 1)]++] = from[i];
    std::swap(from, to);
  }
  if (from != v) std::memcpy(v, from, n * sizeof *v);
}

}  // namespace blume::detail
