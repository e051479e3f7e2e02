// SPDX-License-Identifier: Apache-2.0
// Run-time choice between the AVX2 and the portable code paths. Both compute identical bits; AVX2 is used
// when the CPU has it unless switched off (for tests comparing the paths, and benchmarks).
#pragma once

#include <atomic>

// AVX2 exists only on x86, where the compiler also provides <immintrin.h> and __builtin_cpu_supports.
// Elsewhere (aarch64, ...) the AVX2 code is not compiled at all and the portable path is the only one.
#if defined(__x86_64__) || defined(__i386__)
#define BLUME_X86 1
#else
#define BLUME_X86 0
#endif

namespace blume::simd {

inline bool cpu_has_avx2() noexcept {
#if BLUME_X86
  static const bool has = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") != 0;
  }();
  return has;
#else
  return false;
#endif
}

namespace detail {
inline std::atomic<bool>& avx2_allowed() noexcept {
  static std::atomic<bool> allowed{true};
  return allowed;
}
}  // namespace detail

/// Allow or forbid the AVX2 paths for filters constructed or loaded after the call. Thread-safe.
inline void allow_avx2(bool allowed) noexcept { detail::avx2_allowed().store(allowed, std::memory_order_relaxed); }

/// Whether a filter created now would use AVX2.
inline bool avx2_enabled() noexcept { return cpu_has_avx2() && detail::avx2_allowed().load(std::memory_order_relaxed); }

}  // namespace blume::simd
