// SPDX-License-Identifier: Apache-2.0
// Golomb codes (Golomb 1966) over a bit stream of little-endian 64-bit words, for sorted hashes stored or
// sent as gaps: the Golomb-coded set's stream, and the packets of hashes that processing elements send
// each other. A gap g is written as q = ⌊g / M⌋ ones and a zero, then r = g mod M in truncated binary: in
// b − 1 bits when r < u = 2^b − M (b = ⌈log2 M⌉), else r + u in b bits, its top b − 1 bits first (they
// are then ≥ u, which tells the reader one more bit follows). For gaps of a geometric distribution with
// success probability p the best M is the one with (1 − p)^M ≈ ½ (Gallager & van Voorhis 1975), which
// costs about log2(e/p) bits per gap: 1.44 bits above log2(1/p).
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <span>
#include <vector>

namespace blume::detail {

/// Appends the low n bits of v (n ≤ 57, higher bits of v zero) at bit `at`, the end of `bits`.
inline void put_bits(std::vector<std::uint64_t>& bits, std::uint64_t& at, std::uint64_t v, std::uint32_t n) {
  if (n == 0) return;
  const std::uint64_t word = at / 64;
  const unsigned shift = at % 64;
  if (word >= bits.size()) bits.push_back(0);
  bits[word] |= v << shift;
  if (shift + n > 64) bits.push_back(v >> (64 - shift));
  at += n;
}

/// The 64 bits of the stream from bit `at` (zeros past its end).
inline std::uint64_t bit_window(std::span<const std::uint64_t> bits, std::uint64_t at) noexcept {
  const std::uint64_t word = at / 64;
  const unsigned shift = at % 64;
  std::uint64_t v = bits[word] >> shift;
  if (shift != 0 && word + 1 < bits.size()) v |= bits[word + 1] << (64 - shift);
  return v;
}
/// Bits [at, at + n) as a number, n ≤ 63.
inline std::uint64_t read_bits(std::span<const std::uint64_t> bits, std::uint64_t at, std::uint32_t n) noexcept {
  if (n == 0) return 0;
  return bit_window(bits, at) & ((std::uint64_t{1} << n) - 1);
}

class golomb_code {
 public:
  /// The code of parameter m ≥ 1. Every m is a code, up to 2^64 − 1: a reader takes M from its input.
  explicit golomb_code(std::uint64_t m = 1) noexcept
      : m_(std::max<std::uint64_t>(m, 1)),
        b_(static_cast<std::uint32_t>(std::bit_width(m_ - 1))),  // ⌈log2 M⌉ (0 for M = 1)
        // 2^b − M taken mod 2^64, which is exact (u < 2^63) and also holds for b = 64 (M > 2^63), where
        // the shift 1 << b would be undefined.
        u_((b_ == 64 ? 0 : std::uint64_t{1} << b_) - m_) {}

  /// The best code for gaps that are geometric with success probability p (0 < p < 1): the M with
  /// (1 − p)^M ≈ ½.
  static golomb_code for_probability(double p) noexcept {
    return golomb_code(
        std::max<std::uint64_t>(1, static_cast<std::uint64_t>(std::ceil(std::log(2 - p) / -std::log1p(-p)))));
  }

  std::uint64_t m() const noexcept { return m_; }
  /// ⌈log2 M⌉: a remainder takes b − 1 or b bits.
  std::uint32_t b() const noexcept { return b_; }
  /// 2^b − M: remainders below it take b − 1 bits.
  std::uint64_t u() const noexcept { return u_; }

  /// Appends the code of `gap` at bit `at`, the end of `bits`.
  void put(std::vector<std::uint64_t>& bits, std::uint64_t& at, std::uint64_t gap) const {
    std::uint64_t q = gap / m_;
    const std::uint64_t r = gap % m_;
    for (; q >= 56; q -= 56) put_bits(bits, at, (std::uint64_t{1} << 56) - 1, 56);
    put_bits(bits, at, (std::uint64_t{1} << q) - 1, static_cast<std::uint32_t>(q) + 1);  // q ones, a zero
    if (b_ == 0) return;
    if (r < u_) {
      put_bits(bits, at, r, b_ - 1);
    } else {
      const std::uint64_t x = r + u_;  // written top bits first: (x >> 1) then its last bit
      put_bits(bits, at, (x >> 1) | ((x & 1) << (b_ - 1)), b_);
    }
  }

  /// Decodes one gap at `at` into `gap`, advancing `at`; false if the code would run past `end` or its gap
  /// past 2^64 − 1 (a damaged or hostile stream is never read beyond it). The stream must have a word past
  /// `end`, whatever its bits: a code may begin before `end` and only be found to end after it.
  bool get(std::span<const std::uint64_t> bits, std::uint64_t& at, std::uint64_t end,
           std::uint64_t& gap) const noexcept {
    if (at >= end) return false;
    // Nearly every code (quotient and remainder: about 3 + log2 M bits) lies in one 64-bit window, read
    // once: a lookup decodes a thousand codes in a row, each waiting on the previous one's length.
    const std::uint64_t w = bit_window(bits, at);
    const auto unary = static_cast<unsigned>(std::countr_zero(~w));
    if (unary + 1 + b_ <= 64) {
      std::uint64_t x = 0;
      unsigned length = unary + 1;
      if (b_ != 0) {
        x = (w >> length) & ((std::uint64_t{1} << (b_ - 1)) - 1);
        length += b_ - 1;
        // Whether the remainder takes its last bit is a coin flip: select rather than branch.
        const bool longer = x >= u_;
        const std::uint64_t extended = ((x << 1) | ((w >> length) & 1)) - u_;
        x = longer ? extended : x;
        length += longer;
      }
      gap = unary * m_ + x;
      at += length;
      return at <= end;
    }
    std::uint64_t q = 0;
    for (;;) {  // count the ones up to the next zero, a word at a time
      if (at >= end) return false;
      const std::uint64_t chunk = ~read_bits(bits, at, 57);
      const unsigned ones = static_cast<unsigned>(std::countr_zero(chunk));
      if (ones < 57) {
        q += ones;
        at += ones + 1;
        break;
      }
      q += 57;
      at += 57;
    }
    // The run of ones may have ended up to 56 bits past `end`, inside the word of slack; the remainder
    // (up to 64 more bits) would then reach past that word, so stop before reading it.
    if (at > end) return false;
    if (b_ == 0) {
      gap = q;
      return true;
    }
    std::uint64_t x = read_bits(bits, at, b_ - 1);
    at += b_ - 1;
    if (x >= u_) {
      if (at >= end) return false;  // its last bit lies past `end`
      x = ((x << 1) | read_bits(bits, at, 1)) - u_;
      ++at;
    }
    // A run this long comes only from a hostile stream (the fast path above never overflows: there
    // unary ≤ 63 − b, so unary·M + x < 2^63).
    std::uint64_t base = 0;
    if (__builtin_mul_overflow(q, m_, &base) || __builtin_add_overflow(base, x, &gap)) return false;
    return at <= end;
  }

 private:
  std::uint64_t m_;
  std::uint32_t b_;
  std::uint64_t u_;
};

}  // namespace blume::detail
