// SPDX-License-Identifier: Apache-2.0
// Select in a 64-bit word: the portable broadword path, and pdep where the CPU has it, against a bit-by-bit
// count, for every k of many words (dense, sparse, single bits, the top bit).
#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <random>

#include "blume/detail/rank_select.hpp"

namespace {

unsigned select_by_counting(std::uint64_t w, unsigned k) {
  for (unsigned i = 0; i < 64; ++i)
    if ((w >> i & 1) && k-- == 0) return i;
  return 64;
}

TEST(RankSelect, SelectFindsTheKthSetBitOfEveryWordShape) {
  std::mt19937_64 rng(7);
  std::vector<std::uint64_t> words = {~std::uint64_t{0},  std::uint64_t{1} << 63, 1,
                                      0x8000000000000001, 0x00ff00ff00ff00ff,     0xff00000000000000};
  for (int i = 0; i < 20'000; ++i) {
    std::uint64_t w = rng();
    for (int d = 0; d < i % 6; ++d) w &= rng();  // densities 1/2 … 1/64
    if (w != 0) words.push_back(w);
  }
  for (unsigned bit = 0; bit < 64; ++bit) words.push_back(std::uint64_t{1} << bit);
  for (const std::uint64_t w : words) {
    for (unsigned k = 0; k < static_cast<unsigned>(std::popcount(w)); ++k) {
      const unsigned expected = select_by_counting(w, k);
      ASSERT_EQ(blume::detail::select64_portable(w, k), expected) << std::hex << w << " " << std::dec << k;
      ASSERT_EQ(blume::detail::select64(w, k, false), expected) << std::hex << w << " " << std::dec << k;
      ASSERT_EQ(blume::detail::select64(w, k, blume::detail::cpu_has_fast_pdep()), expected) << w << " " << k;
#if defined(__x86_64__)
      if (__builtin_cpu_supports("bmi2")) {
        ASSERT_EQ(blume::detail::select64_pdep(w, k), expected) << w << " " << k;
      }
#endif
    }
  }
}

TEST(RankSelect, ThePortableSelectIsAConstantExpression) {
  static_assert(blume::detail::select64_portable(0b1011000, 2) == 6);
  static_assert(blume::detail::select64_portable(~std::uint64_t{0}, 63) == 63);
}

}  // namespace
