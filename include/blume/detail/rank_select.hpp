// SPDX-License-Identifier: Apache-2.0
// Select in a 64-bit word: the position of its k-th set bit. Where the CPU has a fast pdep (checked at run
// time, or assumed when compiled for BMI2) one pdep deposits a single bit at that position, else a
// broadword select finds the byte by comparing the running byte counts with k, then the bit within the byte
// from a table. All give the same answer for every word and k (tests/rank_select_test.cpp).
#pragma once

#include <array>
#include <bit>
#include <cstdint>

#if defined(__BMI2__)
#include <immintrin.h>
#endif

namespace blume::detail {

/// select_in_byte[b][k]: the position of the k-th set bit of byte b (8 when it has fewer).
inline constexpr std::array<std::array<std::uint8_t, 8>, 256> select_in_byte = [] {
  std::array<std::array<std::uint8_t, 8>, 256> t{};
  for (unsigned b = 0; b < 256; ++b) {
    unsigned k = 0;
    for (auto& slot : t[b]) slot = 8;
    for (unsigned i = 0; i < 8; ++i)
      if (b >> i & 1) t[b][k++] = static_cast<std::uint8_t>(i);
  }
  return t;
}();

/// The position of the k-th set bit of w (k = 0 is the lowest), without BMI2. w must have more than k set bits.
constexpr unsigned select64_portable(std::uint64_t w, unsigned k) noexcept {
  constexpr std::uint64_t ones = 0x0101010101010101, highs = 0x8080808080808080;
  std::uint64_t s = w - ((w >> 1) & 0x5555555555555555);
  s = (s & 0x3333333333333333) + ((s >> 2) & 0x3333333333333333);
  s = (s + (s >> 4)) & 0x0f0f0f0f0f0f0f0f;
  const std::uint64_t through = s * ones;  // byte i: the set bits in bytes 0 … i (at most 64, so no carry)
  // Byte lanes where through ≤ k, by a lane-wise k + 128 − through (no lane borrows: 128 + k > through).
  const std::uint64_t at_most_k = ((k * ones) | highs) - through;
  const auto byte = static_cast<unsigned>(std::popcount(at_most_k & highs));
  const unsigned before = byte == 0 ? 0 : static_cast<unsigned>(through >> (8 * byte - 8) & 0xff);
  return 8 * byte + select_in_byte[w >> (8 * byte) & 0xff][k - before];
}

/// Whether pdep is both present and fast: BMI2, but not on AMD's family 17h (Zen 1 and 2), where pdep is
/// microcoded and takes tens to hundreds of cycles, slower than the portable select.
inline bool cpu_has_fast_pdep() noexcept {
#if defined(__x86_64__)
  static const bool fast = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("bmi2") && !__builtin_cpu_is("amdfam17h");
  }();
  return fast;
#else
  return false;
#endif
}

#if defined(__x86_64__)
/// select with pdep: deposit the single bit 1 << k at the k-th set bit of w. Written as assembly so that it
/// exists in builds for CPUs without BMI2 (the release build's x86-64-v2); call it only where
/// cpu_has_fast_pdep() (or bmi2) holds.
inline unsigned select64_pdep(std::uint64_t w, unsigned k) noexcept {
  std::uint64_t deposited;
  asm("pdep %2, %1, %0" : "=r"(deposited) : "r"(std::uint64_t{1} << k), "rm"(w));
  // Not std::countr_zero: without BMI1 it must guard against zero (GCC 12 emits a test and a branch here),
  // and the deposit is never zero.
  return static_cast<unsigned>(__builtin_ctzll(deposited));
}
#endif

/// The position of the k-th set bit of w (k = 0 is the lowest); w must have more than k set bits. `pdep`:
/// the caller's cached cpu_has_fast_pdep().
inline unsigned select64(std::uint64_t w, unsigned k, [[maybe_unused]] bool pdep) noexcept {
#if defined(__BMI2__)
  return static_cast<unsigned>(std::countr_zero(_pdep_u64(std::uint64_t{1} << k, w)));
#elif defined(__x86_64__)
  return pdep ? select64_pdep(w, k) : select64_portable(w, k);
#else
  return select64_portable(w, k);
#endif
}

}  // namespace blume::detail
