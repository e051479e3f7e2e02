// SPDX-License-Identifier: Apache-2.0
// Software pipelining for bulk calls, shared by every filter that can prefetch: items are turned into
// digests batch_size at a time and each digest's memory is prefetched as soon as it is known; batch i is
// used only after batch i+1 has been hashed and prefetched, so every prefetch has a whole batch of work to
// complete behind it and batch_size cache misses are in flight at once.
#pragma once

#include <cstddef>
#include <ranges>
#include <span>
#include <type_traits>

#include "blume/hash.hpp"

namespace blume::detail {

inline constexpr std::size_t pipeline_batch = 32;

/// `items` may hold keys or digests; `hash(key)` turns a key into its digest. `prepare(digest)` starts the
/// digest's memory accesses (prefetches) and returns what `use` needs later: a Probe, so work done to find
/// the addresses (fingerprints, bucket indexes) is done once, not again when the batch is used.
template <class Probe, class R, class Hash, class Prepare, class Use>
void pipelined_probes(const R& items, Hash hash, Prepare prepare, Use&& use) {
  // hash and prepare are taken by value and the loop is written out (no fill lambda capturing the
  // iterator by reference): stores into the buffers could otherwise alias them, and the compiler would
  // reload their state from memory for every item.
  Probe buffers[2][pipeline_batch];
  auto it = std::ranges::begin(items);
  const auto end = std::ranges::end(items);
  std::size_t previous = 0;  // probes waiting in buffers[slot ^ 1]
  for (int slot = 0;; slot ^= 1) {
    std::size_t n = 0;
    for (; n < pipeline_batch && it != end; ++it) {
      if constexpr (std::is_same_v<std::remove_cvref_t<decltype(*it)>, digest>) {
        buffers[slot][n++] = prepare(*it);
      } else {
        buffers[slot][n++] = prepare(hash(*it));
      }
    }
    if (previous != 0) use(std::span<const Probe>(buffers[slot ^ 1], previous));
    if (n == 0) return;
    previous = n;
  }
}

/// pipelined_probes where the probe is the digest itself and `prefetch(digest)` starts its accesses.
template <class R, class Hash, class Prefetch, class Use>
void pipelined(const R& items, Hash&& hash, Prefetch&& prefetch, Use&& use) {
  pipelined_probes<digest>(
      items, hash,
      [&](const digest& d) {
        prefetch(d);
        return d;
      },
      use);
}

}  // namespace blume::detail
