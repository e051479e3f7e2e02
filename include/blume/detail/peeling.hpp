// SPDX-License-Identifier: Apache-2.0
// Construction of the static filters (xor, binary fuse, Bloomier): every key hash names three slots of an
// array, and the array is filled so that the three slots of each key XOR to a value derived from it.
// That is possible when the 3-hypergraph of keys over slots can be peeled (Botelho, Pagh & Ziviani 2007;
// Graf & Lemire 2020): repeatedly take a slot that only one remaining key uses, and remove that key. The
// removal order, reversed, assigns each key's value to its free slot.
//
// Per slot we keep the XOR of the hashes of the keys that use it and count·4 + (XOR of which of the three
// positions they use it as), so a slot used by exactly one key yields that key's hash and its position
// without a list of keys (the trick of Graf & Lemire's reference code). Counts above 63 are refused (the
// construction retries with another seed), so a byte per slot is enough.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <thread>
#include <vector>

#include "blume/detail/bits.hpp"
#include "blume/hash.hpp"
#include "blume/storage.hpp"

namespace blume::detail {

/// A 64-bit hash of a key digest under construction seed `seed` (a new seed for every retry): the
/// murmur3 finaliser of the digest's low half plus the seed.
constexpr std::uint64_t seeded_hash(std::uint64_t digest_low, std::uint64_t seed) noexcept {
  return murmur3_fmix64(digest_low + seed);
}

/// How peel() walks the singleton slots.
enum class peel_order {
  // First in, first out, prefetching the slots of the keys a few places ahead: each step's reads overlap
  // later ones. For xor filters, whose three slots are anywhere in the array, so nothing is cached.
  breadth_first,
  // Last in, first out (Graf & Lemire's binary fuse construction): a key's three slots lie in three
  // consecutive segments, so the slots a removal frees are near the ones just touched, and the walk
  // stays in a window of a few segments that the cache holds. Each step waits on the one before, but on
  // a cache hit; breadth-first would sweep the whole array once per wave of the peeling.
  depth_first,
};

/// Two ranges of the keys whose slots are disjoint, so their counts can be added on two threads: keys
/// [0, first_end) use only slots below `boundary`, keys [second_begin, n) only slots from `boundary` on;
/// the keys between are added afterwards. Depth-first peeling then also runs on two threads, one per
/// side of `boundary`, each leaving aside the keys that reach across it. Empty: one thread.
struct peel_split {
  std::size_t first_end = 0, second_begin = 0;
  std::uint64_t boundary = 0;
};

/// peel() with slot indexes of type Index (32 bits halve the queue and the order when they suffice).
template <class Index, peel_order Order, class Positions, class Assign, class Prefetch>
bool peel_indexed(std::span<const std::uint64_t> hashes, std::uint64_t slots, Positions& positions, Assign& assign,
                  Prefetch& prefetch, peel_split split) {
  // byte_storage: zeroed, and backed by 2 MiB pages when large (a gigabyte at 100M keys: 4 KiB pages would
  // add a TLB miss to most accesses).
  byte_storage hash_storage = byte_storage::allocate(slots * sizeof(std::uint64_t));
  byte_storage count_storage = byte_storage::allocate(slots);
  auto* xor_hash = reinterpret_cast<std::uint64_t*>(hash_storage.data());
  auto* count = reinterpret_cast<std::uint8_t*>(count_storage.data());  // 4·count + XOR of position indexes
  const auto add = [&](std::span<const std::uint64_t> part) {
    for (const std::uint64_t h : part) {
      const std::array<std::uint64_t, 3> p = positions(h);
      for (std::uint8_t j = 0; j < 3; ++j) {
        if (count[p[j]] >= 0xfc) return false;  // 63 keys in one slot: give up on this seed
        count[p[j]] = static_cast<std::uint8_t>((count[p[j]] + 4) ^ j);
        xor_hash[p[j]] ^= h;
      }
    }
    return true;
  };
  if (split.first_end < split.second_begin && split.second_begin <= hashes.size()) {
    bool second = true;
    std::thread other([&] { second = add(hashes.subspan(split.second_begin)); });
    const bool first = add(hashes.first(split.first_end));
    other.join();
    if (!first || !second || !add(hashes.subspan(split.first_end, split.second_begin - split.first_end))) return false;
  } else if (!add(hashes)) {
    return false;
  }
  // Every slot enters the queue at most once: when the scan finds it with one key, or when its count
  // drops from two to one (counts only fall). A peeled key's own slot is left as it is, still holding the
  // key's hash, which the assignment reads back; no other key uses it, so nothing changes it later.
  std::vector<Index> queue(slots);
  std::size_t tail = 0;
  std::vector<Index> order;  // own slots, in peeling order (after the two sides' orders, when split)
  std::vector<Index> first_order, second_order;
  // Takes key h (slots p, its own the j = own one) out of its two other slots; each slot that is left
  // with one key goes on `pending` at `top`. Called from both sides' threads on disjoint slots.
  const auto release = [&](std::uint64_t h, const std::array<std::uint64_t, 3>& p, unsigned own, Index* pending,
                           std::size_t& top) {
    for (unsigned j = 0; j < 3; ++j) {
      if (j == own) continue;
      const std::uint64_t s = p[j];
      pending[top] = static_cast<Index>(s);
      top += (count[s] >> 2) == 2;
      count[s] = static_cast<std::uint8_t>((count[s] - 4) ^ j);
      xor_hash[s] ^= h;
    }
  };
  const auto remove = [&](std::uint64_t i) {
    if ((count[i] >> 2) != 1) return;  // another removal emptied it meanwhile
    const std::uint64_t h = xor_hash[i];
    order.push_back(static_cast<Index>(i));
    release(h, positions(h), count[i] & 3, queue.data(), tail);
  };
  const bool two_sides = Order == peel_order::depth_first && split.first_end < split.second_begin &&
                         split.boundary > 0 && split.boundary < slots;
  if (two_sides) {
    // Each side peels depth-first inside [lo, hi), with its part of the queue as its stack (a side's
    // slots enter it at most once), and sets aside a singleton whose key reaches across the boundary.
    // The sides touch disjoint slots, so the result is the same whatever the threads' timing. Removing
    // keys of one side never changes a slot of the other, so the sides' orders, then the order of the
    // rest, are together a valid peeling order.
    std::vector<Index> first_aside, second_aside;
    const auto peel_side = [&](std::uint64_t lo, std::uint64_t hi, std::vector<Index>& side_order,
                               std::vector<Index>& aside) {
      Index* stack = queue.data() + lo;
      std::size_t top = 0;
      for (std::uint64_t i = lo; i < hi; ++i) {
        stack[top] = static_cast<Index>(i);
        top += (count[i] >> 2) == 1;
      }
      side_order.reserve((hi - lo) * hashes.size() / slots + (hi - lo) / 64);
      while (top > 0) {
        const std::uint64_t i = stack[--top];
        if ((count[i] >> 2) != 1) continue;
        const std::uint64_t h = xor_hash[i];
        const std::array<std::uint64_t, 3> p = positions(h);
        if (p[0] < lo || p[0] >= hi || p[1] < lo || p[1] >= hi || p[2] < lo || p[2] >= hi) {
          aside.push_back(static_cast<Index>(i));
          continue;
        }
        side_order.push_back(static_cast<Index>(i));
        release(h, p, count[i] & 3, stack, top);
      }
    };
    std::thread other([&] { peel_side(split.boundary, slots, second_order, second_aside); });
    peel_side(0, split.boundary, first_order, first_aside);
    other.join();
    for (const Index i : first_aside) queue[tail++] = i;
    for (const Index i : second_aside) queue[tail++] = i;
    order.reserve(hashes.size() - first_order.size() - second_order.size());
    while (tail > 0) remove(queue[--tail]);
  } else {
    for (std::uint64_t i = 0; i < slots; ++i) {
      queue[tail] = static_cast<Index>(i);
      tail += (count[i] >> 2) == 1;
    }
    order.reserve(hashes.size());
    if constexpr (Order == peel_order::depth_first) {
      // The queue is a stack here: pushes land at `tail`, which is also where pops come from.
      while (tail > 0) remove(queue[--tail]);
    } else {
      constexpr std::size_t ahead = 16;
      for (std::size_t head = 0; head < tail; ++head) {
        if (head + 2 * ahead < tail) {
          const std::uint64_t far = queue[head + 2 * ahead];
          prefetch_write(xor_hash + far);
          prefetch_write(count + far);
        }
        if (head + ahead < tail) {
          for (const std::uint64_t x : positions(xor_hash[queue[head + ahead]])) {
            prefetch_write(xor_hash + x);
            prefetch_write(count + x);
          }
        }
        remove(queue[head]);
      }
    }
  }
  if (first_order.size() + second_order.size() + order.size() != hashes.size()) return false;
  queue = {};
  // Values are assigned in reverse peeling order: the rest first, then the two sides (on two threads:
  // each reads and writes slots of its own side only).
  const auto assign_all = [&](const std::vector<Index>& part) {
    for (std::size_t k = part.size(); k-- > 0;) {
      if (k >= 16) prefetch_read(xor_hash + part[k - 16]);
      if (k >= 8) prefetch(xor_hash[part[k - 8]]);
      assign(xor_hash[part[k]], static_cast<std::uint64_t>(part[k]));
    }
  };
  assign_all(order);
  if (!second_order.empty()) {
    std::thread other([&] { assign_all(second_order); });
    assign_all(first_order);
    other.join();
  } else {
    assign_all(first_order);
  }
  return true;
}

/// Peels the hypergraph of `hashes` over `slots` slots, where positions(h) gives a key's three distinct
/// slots. On success calls assign(hash, slot) for every key in reverse peeling order, with `slot` the
/// key's own, and returns true. Returns false when the graph does not peel: with another seed it
/// usually does, unless two hashes are equal (such a pair shares all three slots, so neither is ever a
/// slot's only key): callers deduplicate after a failure rather than before every attempt. prefetch(hash)
/// is called a few keys before assign(hash, …), to start loading what assign will read. With a split,
/// positions, assign and prefetch are also called from a second thread, for keys whose slots all lie on
/// the other side of the boundary than the first thread's.
template <peel_order Order, class Positions, class Assign, class Prefetch>
bool peel(std::span<const std::uint64_t> hashes, std::uint64_t slots, Positions&& positions, Assign&& assign,
          Prefetch&& prefetch, peel_split split = {}) {
  if (slots <= std::numeric_limits<std::uint32_t>::max())
    return peel_indexed<std::uint32_t, Order>(hashes, slots, positions, assign, prefetch, split);
  return peel_indexed<std::uint64_t, Order>(hashes, slots, positions, assign, prefetch, split);
}

/// out[i] = seeded_hash(lows[i], seed), grouped by segment reduce(hash, segments) in ascending order (a
/// counting sort, so the hash is computed twice rather than stored and moved), on two threads when there
/// are many. The counting pass of a binary fuse construction then walks its arrays as a front instead of
/// at random. Returns where each segment's hashes start (segments + 1 offsets).
inline std::vector<std::size_t> seed_and_group(std::span<const std::uint64_t> lows, std::uint64_t seed,
                                               std::uint64_t segments, std::vector<std::uint64_t>& out) {
  out.resize(lows.size());
  const bool two = lows.size() >= (std::size_t{1} << 22);
  const std::size_t half = two ? lows.size() / 2 : lows.size();
  // Per thread, per segment: first a count, then the next place to write.
  std::vector<std::size_t> first(segments + 1, 0), second(two ? segments : 0, 0);
  const auto histogram = [&](std::span<const std::uint64_t> part, std::size_t* counts) {
    for (const std::uint64_t low : part) ++counts[reduce(seeded_hash(low, seed), segments)];
  };
  const auto scatter = [&](std::span<const std::uint64_t> part, std::size_t* next) {
    for (const std::uint64_t low : part) {
      const std::uint64_t h = seeded_hash(low, seed);
      out[next[reduce(h, segments)]++] = h;
    }
  };
  const auto both = [&](auto&& step, std::size_t* a, std::size_t* b) {
    if (!two) return step(lows, a);
    std::thread other([&] { step(lows.subspan(half), b); });
    step(lows.first(half), a);
    other.join();
  };
  both(histogram, first.data(), second.data());
  std::vector<std::size_t> starts(segments + 1, 0);
  for (std::uint64_t s = 0, at = 0; s < segments; ++s) {
    starts[s] = at;
    const std::size_t a = first[s], b = two ? second[s] : 0;
    first[s] = at;
    if (two) second[s] = at + a;
    at += a + b;
  }
  starts[segments] = lows.size();
  both(scatter, first.data(), second.data());
  return starts;
}

/// Sorts 64-bit values and removes duplicates, in place: one radix pass on the top 16 bits of their range
/// spreads them into 65536 buckets of about n/65536 each (for uniform values), which are then sorted where
/// they lie in cache, on two threads when there are many.
inline void sort_unique(std::vector<std::uint64_t>& v) {
  constexpr unsigned bits = 16;
  // Distribute by the top bits of the values' actual range, not of 64 bits: a Golomb-coded set's values
  // lie in [0, n·2^P), and bucketing those by bits 48–63 would put them all in bucket 0 (one thread,
  // one std::sort of everything).
  std::uint64_t highest = 0;
  for (const std::uint64_t x : v) highest |= x;
  const unsigned shift = std::max(static_cast<unsigned>(std::bit_width(highest)), bits) - bits;
  std::vector<std::size_t> start((std::size_t{1} << bits) + 1, 0);
  for (const std::uint64_t x : v) ++start[(x >> shift) + 1];
  for (std::size_t i = 1; i < start.size(); ++i) start[i] += start[i - 1];
  std::vector<std::uint64_t> sorted(v.size());
  {
    std::vector<std::size_t> next(start.begin(), start.end() - 1);
    for (const std::uint64_t x : v) sorted[next[x >> shift]++] = x;
  }
  const auto sort_buckets = [&](std::size_t from, std::size_t to) {
    for (std::size_t b = from; b < to; ++b)
      std::sort(sorted.begin() + static_cast<std::ptrdiff_t>(start[b]),
                sorted.begin() + static_cast<std::ptrdiff_t>(start[b + 1]));
  };
  const std::size_t buckets = std::size_t{1} << bits;
  if (v.size() >= (std::size_t{1} << 22)) {
    std::thread half(sort_buckets, buckets / 2, buckets);
    sort_buckets(0, buckets / 2);
    half.join();
  } else {
    sort_buckets(0, buckets);
  }
  sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
  v.swap(sorted);
}

}  // namespace blume::detail
