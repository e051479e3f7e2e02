// SPDX-License-Identifier: Apache-2.0
// Small helpers shared by the filter layouts: plain or atomic bit setting, relaxed loads, prefetching.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace blume::detail {

/// OR `mask` into `word`; with Atomic, as a relaxed atomic read-modify-write so several threads may insert
/// at once (each bit only ever goes from 0 to 1, so no ordering beyond atomicity is needed).
template <bool Atomic, class Word>
inline void set_mask(Word& word, Word mask) noexcept {
  if constexpr (Atomic) {
    std::atomic_ref<Word>(word).fetch_or(mask, std::memory_order_relaxed);
  } else {
    word |= mask;
  }
}

/// A relaxed atomic load: compiles to a plain load on x86, and keeps lookups well-defined while other
/// threads insert concurrently.
template <class Word>
inline Word load_relaxed(const Word& word) noexcept {
  return __atomic_load_n(&word, __ATOMIC_RELAXED);
}

// GCC counts __builtin_prefetch as free of side effects, so a loop whose only work is prefetching (the
// probes of a classic filter, the sub-filters of a cuckoo filter) is deleted whole as an empty finite
// loop at -O2. An asm volatile statement cannot be deleted.
inline void prefetch_read(const void* p) noexcept {
#if defined(__x86_64__)
  asm volatile("prefetcht0 %0" : : "m"(*static_cast<const char*>(p)));
#else
  __builtin_prefetch(p, 0, 3);
#endif
}
inline void prefetch_write(const void* p) noexcept {
#if defined(__x86_64__)
  asm volatile("prefetchw %0" : : "m"(*static_cast<const char*>(p)));
#else
  __builtin_prefetch(p, 1, 3);
#endif
}

/// A little-endian u64 at an unaligned address of a file's bytes (the host is little-endian: hash.hpp).
inline std::uint64_t read_u64(const std::byte* p) noexcept {
  std::uint64_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

}  // namespace blume::detail
