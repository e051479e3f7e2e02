// A cuckoo filter's tables, apart from the filter: how slots are packed and buckets tested. Nothing here
// knows about sub-filters, growth or relocation (cuckoo_filter.hpp); the lookup paths take the hashing
// policy as a parameter.
//
// Fingerprints are packed tightly: slot s of a table occupies bits [s·f, s·f + f) of the table read as a
// little-endian bit string, so 12-bit fingerprints take 12 bits, and bucket i is slots [i·b, i·b + b). A
// slot is read with one unaligned 64-bit load at byte ⌊s·f/8⌋; every table ends with at least 8 zero
// bytes of slack for that load (cuckoo_geometry::table_bytes).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>

#include "blume/hash.hpp"

namespace blume::detail {

/// One sub-filter: `bytes` bytes at `offset` in the filter's storage number `storage` (tables reassembled
/// from one payload share it; a grown table has its own). An index, not a pointer, so a copy of the
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

  static constexpr std::uint32_t npos = std::numeric_limits<std::uint32_t>::max();

  // One unaligned little-endian load at byte ⌊s·f/8⌋ holds slot s (f ≤ 16, shift ≤ 7), and the table's
  // slack makes that load safe for the last slot.
  std::uint32_t get(const std::byte* base, std::uint64_t slot) const noexcept {
    const std::uint64_t bit = slot * fingerprint_bits;
    std::uint64_t w;
    std::memcpy(&w, base + bit / 8, sizeof w);
    return static_cast<std::uint32_t>((w >> (bit % 8)) & ((std::uint64_t{1} << fingerprint_bits) - 1));
  }
  void put(std::byte* base, std::uint64_t slot, std::uint32_t value) const noexcept {
    const std::uint64_t bit = slot * fingerprint_bits;
    const unsigned shift = static_cast<unsigned>(bit % 8);
    const std::uint64_t mask = ((std::uint64_t{1} << fingerprint_bits) - 1) << shift;
    std::uint64_t w;
    std::memcpy(&w, base + bit / 8, sizeof w);
    w = (w & ~mask) | (std::uint64_t{value} << shift);
    std::memcpy(base + bit / 8, &w, sizeof w);
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
/// bucket (the next bucket's, or slack), but highs marks the bucket's lanes only, and a subtraction's
/// low bits do not depend on its high bits, so they cannot change the answer.
template <class Bucket>
bool cuckoo_bucket_holds(const Bucket& bucket, const std::byte* at, std::uint64_t pattern) noexcept {
  std::uint64_t w;
  std::memcpy(&w, at, sizeof w);
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
template <class Hashing, class Bucket>
struct cuckoo_lookup_path {
  const std::byte* base;
  std::uint64_t buckets;
  Bucket bucket;

  cuckoo_probe probe_of(const digest& d) const noexcept {
    const std::uint64_t fp = Hashing::fingerprint(d, bucket.fingerprint_bits);
    const std::uint64_t i1 = Hashing::primary(d, buckets);
    const std::uint64_t i2 = Hashing::alternate_first(i1, fp, buckets);
    return {base + i1 * bucket.bytes, base + i2 * bucket.bytes, bucket.lane_lows * fp};
  }
  bool hits(const cuckoo_probe& p) const noexcept {
    // Both tests always run (| not ||): a negative lookup needs both, and no branch sits between the loads.
    return cuckoo_bucket_holds(bucket, p.first, p.pattern) | cuckoo_bucket_holds(bucket, p.second, p.pattern);
  }
};

}  // namespace blume::detail
