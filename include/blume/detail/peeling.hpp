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
#include <cstddef>
#include <cstdint>
#include <span>
#include <thread>
#include <vector>

#include "blume/detail/bits.hpp"
#include "blume/storage.hpp"

namespace blume::detail {

/// One peeled key: its hash and the slot that is its own (written last to first).
struct peeled {
  std::uint64_t hash;
  std::uint64_t slot;
};

/// Peels the hypergraph of `hashes` (distinct) over `slots` slots, where positions(h) gives a key's
/// three distinct slots. Returns the peeling order, or an empty vector when the graph does not peel (the
/// caller retries with another seed). Hashes sorted by their first slot make the counting pass walk the
/// arrays nearly in order, which matters at 100M keys.
template <class Positions>
std::vector<peeled> peel(std::span<const std::uint64_t> hashes, std::uint64_t slots, Positions&& positions) {
  // byte_storage: zeroed, and backed by 2 MiB pages when large (a gigabyte at 100M keys: 4 KiB pages would
  // add a TLB miss to most accesses).
  byte_storage hash_storage = byte_storage::allocate(slots * sizeof(std::uint64_t));
  byte_storage count_storage = byte_storage::allocate(slots);
  auto* xor_hash = reinterpret_cast<std::uint64_t*>(hash_storage.data());
  auto* count = reinterpret_cast<std::uint8_t*>(count_storage.data());  // 4·count + XOR of position indexes
  for (const std::uint64_t h : hashes) {
    const std::array<std::uint64_t, 3> p = positions(h);
    for (std::uint8_t j = 0; j < 3; ++j) {
      if (count[p[j]] >= 0xfc) return {};  // 63 keys in one slot: give up on this seed
      count[p[j]] = static_cast<std::uint8_t>((count[p[j]] + 4) ^ j);
      xor_hash[p[j]] ^= h;
    }
  }
  std::vector<std::uint64_t> queue;
  queue.reserve(slots / 2);
  for (std::uint64_t i = 0; i < slots; ++i)
    if ((count[i] >> 2) == 1) queue.push_back(i);
  std::vector<peeled> order;
  order.reserve(hashes.size());
  // First in, first out, with the slots of the keys a few places ahead prefetched: each step's reads
  // then overlap later ones (last in, first out would make every step wait on the one before).
  constexpr std::size_t ahead = 16;
  for (std::size_t head = 0; head < queue.size(); ++head) {
    if (head + 2 * ahead < queue.size()) {
      const std::uint64_t far = queue[head + 2 * ahead];
      prefetch_write(xor_hash + far);
      prefetch_write(count + far);
    }
    if (head + ahead < queue.size()) {
      for (const std::uint64_t x : positions(xor_hash[queue[head + ahead]])) {
        prefetch_write(xor_hash + x);
        prefetch_write(count + x);
      }
    }
    const std::uint64_t i = queue[head];
    if ((count[i] >> 2) != 1) continue;  // another removal emptied it meanwhile
    const std::uint64_t h = xor_hash[i];
    const std::uint8_t own = count[i] & 3;
    order.push_back({h, i});
    const std::array<std::uint64_t, 3> p = positions(h);
    for (std::uint8_t j = 0; j < 3; ++j) {
      const std::uint64_t s = p[j];
      count[s] = static_cast<std::uint8_t>((count[s] - 4) ^ j);
      xor_hash[s] ^= h;
      if (j != own && (count[s] >> 2) == 1) queue.push_back(s);
    }
  }
  if (order.size() != hashes.size()) return {};
  return order;
}

/// Sorts 64-bit hashes and removes duplicates, in place: one radix pass on the top 16 bits spreads them
/// into 65536 buckets of about n/65536 each (uniform hashes), which are then sorted where they lie in
/// cache, on two threads when there are many.
inline void sort_unique(std::vector<std::uint64_t>& v) {
  constexpr unsigned bits = 16;
  std::vector<std::size_t> start((std::size_t{1} << bits) + 1, 0);
  for (const std::uint64_t x : v) ++start[(x >> (64 - bits)) + 1];
  for (std::size_t i = 1; i < start.size(); ++i) start[i] += start[i - 1];
  std::vector<std::uint64_t> sorted(v.size());
  {
    std::vector<std::size_t> next(start.begin(), start.end() - 1);
    for (const std::uint64_t x : v) sorted[next[x >> (64 - bits)]++] = x;
  }
  const auto sort_buckets = [&](std::size_t from, std::size_t to) {
    for (std::size_t b = from; b < to; ++b) std::sort(sorted.begin() + static_cast<std::ptrdiff_t>(start[b]),
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

/// A 64-bit hash of a key digest under construction seed `seed` (a new seed for every retry): the
/// murmur3 finaliser of the digest's low half plus the seed.
constexpr std::uint64_t seeded_hash(std::uint64_t digest_low, std::uint64_t seed) noexcept {
  std::uint64_t h = digest_low + seed;
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdULL;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ULL;
  h ^= h >> 33;
  return h;
}

}  // namespace blume::detail
