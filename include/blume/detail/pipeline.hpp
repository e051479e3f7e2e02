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

/// `items` may hold keys or digests; `hash(key)` turns a key into its digest.
template <class R, class Hash, class Prefetch, class Use>
void pipelined(const R& items, Hash&& hash, Prefetch&& prefetch, Use&& use) {
  digest buffers[2][pipeline_batch];
  std::size_t filled[2] = {0, 0};
  auto it = std::ranges::begin(items);
  const auto end = std::ranges::end(items);
  auto fill = [&](int slot) {
    std::size_t n = 0;
    for (; n < pipeline_batch && it != end; ++it) {
      digest d;
      if constexpr (std::is_same_v<std::remove_cvref_t<decltype(*it)>, digest>) {
        d = *it;
      } else {
        d = hash(*it);
      }
      prefetch(d);
      buffers[slot][n++] = d;
    }
    filled[slot] = n;
  };
  int slot = 0;
  fill(slot);
  while (filled[slot] != 0) {
    fill(slot ^ 1);
    use(std::span<const digest>(buffers[slot], filled[slot]));
    slot ^= 1;
  }
}

}  // namespace blume::detail
