// SPDX-License-Identifier: Apache-2.0
// The memory limit a filter's lookups run into: a bare loop over an array of the filter's size that loads
// one random 32-byte block per key, one at a time and in prefetched batches, with no hashing and no bit
// tests. A kind's lookup time divided by it says how far the kind is from what the machine allows, with no
// other library in the build.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "blume/detail/bits.hpp"
#include "blume/hash.hpp"
#include "blume/storage.hpp"

namespace blume::bench {

struct limit_times {
  double single = 0;   // ns per key, one block after another
  double batched = 0;  // ns per key, 32 blocks prefetched a batch ahead (the filters' pipeline)
};

namespace detail_limit {

/// wyrand: one multiply per random word; the positions are computed, not read from memory, so the loop
/// loads nothing but the blocks.
inline std::uint64_t next(std::uint64_t& state) noexcept {
  state += 0xa0761d6478bd642fULL;
  const auto product = static_cast<blume::uint128_t>(state) * (state ^ 0xe7037ed1a0b428dbULL);
  return static_cast<std::uint64_t>(product) ^ static_cast<std::uint64_t>(product >> 64);
}

inline std::uint64_t load_block(const std::byte* block) noexcept {
  std::uint64_t w[4];
  std::memcpy(w, block, sizeof w);
  return w[0] ^ w[1] ^ w[2] ^ w[3];
}

}  // namespace detail_limit

/// Times `probes` random block loads over `bytes` of memory allocated as the filters allocate theirs (huge
/// pages from 2 MiB up) and written first, so every page is real. `time(keys, fn)` returns ns per key.
template <class Time, class Keep>
limit_times measure_limit(std::uint64_t bytes, std::size_t probes, Time&& time, Keep&& keep) {
  const std::uint64_t blocks = bytes / 32 > 0 ? bytes / 32 : 1;
  byte_storage memory = byte_storage::allocate(static_cast<std::size_t>(blocks * 32));
  std::memset(memory.data(), 0x5a, memory.size());
  const std::byte* base = memory.data();
  limit_times t;
  std::uint64_t sum = 0;
  t.single = time(probes, [&] {
    std::uint64_t state = 1;
    for (std::size_t i = 0; i < probes; ++i)
      sum += detail_limit::load_block(base + reduce(detail_limit::next(state), blocks) * 32);
  });
  keep(sum);
  t.batched = time(probes, [&] {
    constexpr std::size_t batch = 32;
    const std::byte* ring[2][batch];
    std::uint64_t state = 1;
    std::size_t previous = 0;
    for (std::size_t done = 0, slot = 0;; slot ^= 1) {
      std::size_t n = 0;
      for (; n < batch && done < probes; ++n, ++done) {
        ring[slot][n] = base + reduce(detail_limit::next(state), blocks) * 32;
        blume::detail::prefetch_read(ring[slot][n]);
      }
      for (std::size_t i = 0; i < previous; ++i) sum += detail_limit::load_block(ring[slot ^ 1][i]);
      if (n == 0) break;
      previous = n;
    }
  });
  keep(sum);
  return t;
}

}  // namespace blume::bench
