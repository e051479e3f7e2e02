// SPDX-License-Identifier: Apache-2.0
// A cuckoo filter's tables, apart from the filter: how slots are packed and buckets tested. Nothing here
// knows about sub-filters, growth or relocation (cuckoo_filter.hpp); the lookup paths take the hashing
// policy as a parameter.
//
// Fingerprints are packed tightly: slot s of a table occupies bits [s·f, s·f + f) of the table read as a
// little-endian bit string, so 12-bit fingerprints take 12 bits, and bucket i is slots [i·b, i·b + b). A
// slot is read with one unaligned 64-bit load at byte ⌊s·f/8⌋, moved back to the table's last 8 bytes
// near its end. A file's table ends with at least 8 zero bytes of slack (cuckoo_geometry::table_bytes),
// and so does a table made in memory unless the hashing policy asks for exact_tables (RedisBloom's: a
// table of 2^k bytes must be a block of 2^k, not 2^k + 64, which an allocator rounds up to its next size
// class, 1.25·2^k; cuckoo_geometry::memory_bytes).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>

#include "blume/hash.hpp"

namespace blume::detail {

/// One sub-filter: `bytes` bytes at `offset` in the filter's storage number `storage` (tables reassembled
/// from one payload share it, with the file's padding; a made or grown table has its own, without). An index, not a pointer, so a copy of the
/// filter, which copies the storages, needs no fixing up.
struct cuckoo_table {
  std::size_t storage = 0;
  std::size_t offset = 0;
  std::uint64_t buckets = 0;
  std::uint64_t bytes = 0;
  std::uint64_t stored = 0;
  std::uint32_t level = 0;  // j: this is the j-th sub-filter, of n·e^j buckets
};

/// The slots of a table with buckets of b slots of f bits, at `base`. Built from the filter's geometry at
/// each use rather than kept beside it, so f and b have one source.
struct cuckoo_slots {
  std::uint32_t fingerprint_bits;
  std::uint32_t bucket_size;
  std::uint64_t last_load;  // the table's bytes − 8: the last byte an 8-byte access may start at

  static constexpr std::uint32_t npos = std::numeric_limits<std::uint32_t>::max();

  // One unaligned little-endian load holds slot s (f ≤ 16): at byte ⌊s·f/8⌋ with a shift ≤ 7, or for the
  // last slots at last_load with a shift ≤ 63, which still reaches past the slot's last bit.
  struct access {
    std::uint64_t at;
    unsigned shift;
  };
  access locate(std::uint64_t slot) const noexcept {
    const std::uint64_t bit = slot * fingerprint_bits;
    const std::uint64_t at = bit / 8;
    if (at <= last_load) [[likely]]
      return {at, static_cast<unsigned>(bit % 8)};
    return {last_load, static_cast<unsigned>(bit % 8 + (at - last_load) * 8)};
  }
  std::uint32_t get(const std::byte* base, std::uint64_t slot) const noexcept {
    const access a = locate(slot);
    std::uint64_t w;
    std::memcpy(&w, base + a.at, sizeof w);
    return static_cast<std::uint32_t>((w >> a.shift) & ((std::uint64_t{1} << fingerprint_bits) - 1));
  }
  void put(std::byte* base, std::uint64_t slot, std::uint32_t value) const noexcept {
    const access a = locate(slot);
    const std::uint64_t mask = ((std::uint64_t{1} << fingerprint_bits) - 1) << a.shift;
    std::uint64_t w;
    std::memcpy(&w, base + a.at, sizeof w);
    w = (w & ~mask) | (std::uint64_t{value} << a.shift);
    std::memcpy(base + a.at, &w, sizeof w);
  }

  /// The first slot of `bucket` holding `fp` (0 finds an empty slot), or npos.
  std::uint32_t find(const std::byte* base, std::uint64_t bucket, std::uint32_t fp) const noexcept {
    const std::uint64_t first = bucket * bucket_size;
    for (std::uint32_t j = 0; j < bucket_size; ++j)
      if (get(base, first + j) == fp) return j;
    return npos;
  }
  std::uint64_t count_in(const std::byte* base, std::uint64_t bucket, std::uint32_t fp) const noexcept {
    const std::uint64_t first = bucket * bucket_size;
    std::uint64_t n = 0;
    for (std::uint32_t j = 0; j < bucket_size; ++j) n += get(base, first + j) == fp;
    return n;
  }
  /// Stores fp in the first empty slot of `bucket`; false if it has none.
  bool place(std::byte* base, std::uint64_t bucket, std::uint32_t fp) const noexcept {
    const std::uint32_t slot = find(base, bucket, 0);
    if (slot == npos) return false;
    put(base, bucket * bucket_size + slot, fp);
    return true;
  }
  std::uint64_t count_nonempty(const std::byte* base, std::uint64_t buckets) const noexcept {
    std::uint64_t n = 0;
    const std::uint64_t slots = buckets * bucket_size;
    for (std::uint64_t s = 0; s < slots; ++s) n += get(base, s) != 0;
    return n;
  }
  /// Whether every bit of the table's `bytes` past its last slot is zero, as in a table read from a file.
  bool padding_is_clear(const std::byte* base, std::uint64_t buckets, std::uint64_t bytes) const noexcept {
    const std::uint64_t used_bits = buckets * bucket_size * fingerprint_bits;
    for (std::uint64_t byte = used_bits / 8; byte < bytes; ++byte) {
      const unsigned allowed = byte == used_bits / 8 ? (1u << (used_bits % 8)) - 1 : 0u;
      if ((static_cast<unsigned>(base[byte]) & ~allowed) != 0) return false;
    }
    return true;
  }
};

// ---- the one-load bucket test ------------------------------------------------------------------------
// When a bucket is whole bytes and at most 64 bits (b·f ≤ 64 with b·f a multiple of 8, as for the default
// b = 4 with f = 8, 12 or 16), one load compares all its slots at once. Lookups spend most of their
// instructions on bucket tests, and fewer instructions per lookup let more lookups' cache misses overlap.

/// Whether buckets of b slots of f bits can be tested with one load.
constexpr bool cuckoo_one_load_bucket(std::uint32_t b, std::uint32_t f) noexcept {
  const std::uint32_t width = f * b;
  return width <= 64 && width % 8 == 0;
}
/// A 1 in the lowest bit of each of the b lanes of f bits: multiplied by fp, fp in every lane.
constexpr std::uint64_t cuckoo_lane_lows(std::uint32_t b, std::uint32_t f) noexcept {
  std::uint64_t lows = 0;
  for (std::uint32_t j = 0; j < b; ++j) lows |= std::uint64_t{1} << (j * f);
  return lows;
}

/// Bucket geometry known only at run time (any b·f ≤ 64 that is whole bytes).
struct cuckoo_runtime_bucket {
  std::uint64_t fingerprint_bits, bytes, lane_lows, lane_highs;
};
/// b slots of f bits, fixed at compile time, so scaling a bucket index to bytes and the lane masks need
/// no multiply.
template <std::uint32_t F, std::uint32_t B>
struct cuckoo_fixed_bucket {
  static constexpr std::uint64_t fingerprint_bits = F, bytes = F * B / 8;
  static constexpr std::uint64_t lane_lows = cuckoo_lane_lows(B, F);
  static constexpr std::uint64_t lane_highs = lane_lows << (F - 1);
};

/// Whether the bucket at `at` has a lane equal to `pattern`'s: XOR, then the classic "some lane is
/// zero" test (x − lows) & ~x & highs, exact as a yes/no answer. The load also reads bits past the
/// bucket (the next bucket's), but highs marks the bucket's lanes only, and a subtraction's low bits do
/// not depend on its high bits, so they cannot change the answer. In a table without slack (Bounded), a
/// bucket in the last 7 bytes is loaded from `last` (the table's last 8 bytes) and shifted down, zeros
/// filling the bits above it.
template <bool Bounded, class Bucket>
bool cuckoo_bucket_holds(const Bucket& bucket, const std::byte* at, [[maybe_unused]] const std::byte* last,
                         std::uint64_t pattern) noexcept {
  std::uint64_t w;
  if constexpr (Bounded) {
    const std::byte* from = at <= last ? at : last;
    std::memcpy(&w, from, sizeof w);
    w >>= static_cast<unsigned>(at - from) * 8;
  } else {
    std::memcpy(&w, at, sizeof w);
  }
  const std::uint64_t x = w ^ pattern;
  return ((x - bucket.lane_lows) & ~x & bucket.lane_highs) != 0;
}

/// A lookup's two bucket addresses and its fingerprint pattern, computed once while the buckets are
/// prefetched, so the second pass of a batch only loads and tests.
struct cuckoo_probe {
  const std::byte* first;
  const std::byte* second;
  std::uint64_t pattern;  // fp in every lane
};

/// Lookups in one table with the one-load bucket test. A value holding its constants, so the batched
/// loops keep them in registers (stores into the probe buffers could otherwise alias the filter's
/// members). Only the first sub-filter's buckets: alternate_first() is the alternate there.
template <class Hashing, class Bucket, bool Bounded = Hashing::exact_tables>
struct cuckoo_lookup_path {
  const std::byte* base;
  std::uint64_t buckets;
  Bucket bucket;
  const std::byte* last;  // the table's last 8 bytes (used when Bounded)

  cuckoo_probe probe_of(const digest& d) const noexcept {
    const std::uint64_t fp = Hashing::fingerprint(d, bucket.fingerprint_bits);
    const std::uint64_t i1 = Hashing::primary(d, buckets);
    const std::uint64_t i2 = Hashing::alternate_first(i1, fp, buckets);
    return {base + i1 * bucket.bytes, base + i2 * bucket.bytes, bucket.lane_lows * fp};
  }
  bool hits(const cuckoo_probe& p) const noexcept {
    // Both tests always run (| not ||): a negative lookup needs both, and no branch sits between the loads.
    return cuckoo_bucket_holds<Bounded>(bucket, p.first, last, p.pattern) |
           cuckoo_bucket_holds<Bounded>(bucket, p.second, last, p.pattern);
  }
};

}  // namespace blume::detail
