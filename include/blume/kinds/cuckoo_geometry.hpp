// SPDX-License-Identifier: Apache-2.0
// The shape of a cuckoo filter (cuckoo_geometry) and how the filter derives a key's fingerprint and
// buckets from its digest: a hashing policy, checked by the cuckoo_hashing_policy concept. blume's own
// policy, cuckoo_hashing, is below; redisbloom.hpp has RedisBloom's. cuckoo_filter.hpp is the filter.
//
// cuckoo_hashing's derivation from the key's one digest d (see hash.hpp):
//   fingerprint  fp = reduce(d.high, 2^f − 1) + 1            uniform in [1, 2^f − 1]; 0 marks an empty slot
//   primary      i1 = reduce(d.low, n)                        n = buckets of the sub-filter looked at
//   alternate    i2 = (H(fp) − i1) mod n,  H(fp) = reduce(fp·φ mod 2^64, n)
// Fan et al. use i2 = i1 ⊕ hash(fp), which is an involution only when n is a power of two, so their
// tables are rounded up to one (up to 2× the memory). (H − i) mod n is an involution for every n:
// H − (H − i) = i. The other bucket of a fingerprint is therefore found from either of its buckets and
// the fingerprint alone, which is all relocation needs, and the table can have exactly as many buckets as
// the plan asks for. H depends on fp only, as partial-key cuckoo hashing requires. It is Fibonacci
// hashing: fp·φ mod 2^64 (φ = 2^64/golden ratio, odd) spreads the 2^f − 1 possible offsets evenly over the
// whole table (by the three-distance theorem, consecutive fingerprints land about 0.38·n apart), at the
// cost of one multiply on the path of every lookup's second load.
//
// Chained sub-filters (expansion e > 0, see cuckoo_filter.hpp) need one more property, or erase could
// create false negatives: if keys a and b share a fingerprint and a bucket pair in sub-filter j while a's
// copy sits in an older sub-filter k, erasing a (newest first) removes b's copy from j, and b must then
// still see a's copy in k. So bucket pairs nest: a bucket of sub-filter j (n·e^j buckets) is read as
// mixed-radix digits (q; r_1 … r_j) with q < n and r < e; the primary is reduce(d.low, n·e^j), whose
// leading digits are the primary of every smaller sub-filter (⌊⌊x·n·e/2^64⌋/e⌋ = ⌊x·n/2^64⌋), and the
// alternate maps q ↦ (H(fp) − q) mod n and each r ↦ (G(fp) − r) mod e, still an involution. Equal pairs
// in sub-filter j then mean equal pairs in every older (smaller) one, and the erased key's own copy
// stands in for the one removed. With e = 1 all sub-filters have the same buckets and pairs; a single
// table needs none of this (two keys with one fingerprint sharing one bucket share both, since
// i2 = H(fp) − i1).
#pragma once

#include <algorithm>
#include <concepts>
#include <cstdint>
#include <string>
#include <type_traits>

#include "blume/error.hpp"
#include "blume/hash.hpp"
#include "blume/plan.hpp"

namespace blume {

/// Bounds of the cuckoo geometry. The kick and expansion limits are RedisBloom's (CF.RESERVE accepts
/// MAXITERATIONS 1..65535 and EXPANSION 0..32768), so every RedisBloom geometry can be expressed.
inline constexpr std::uint32_t cuckoo_max_bucket_size = 255;
inline constexpr std::uint32_t cuckoo_max_kicks = 65535;
inline constexpr std::uint32_t cuckoo_max_expansion = 32768;
inline constexpr std::uint32_t cuckoo_max_filters = 65536;  // RedisBloom's cf-max-expansions range

/// The shape of a cuckoo filter. Defaults: b = 4 (95% load reachable, Fan et al. §5), 500 relocations
/// (the reference implementation's kMaxCuckooCount), no growth.
struct cuckoo_geometry {
  std::uint64_t buckets = 1;                               // of the first sub-filter; any count ≥ 1
  std::uint32_t bucket_size = cuckoo_default_bucket_size;  // slots per bucket, 1..255
  std::uint32_t fingerprint_bits = 12;                     // 8, 12 or 16
  std::uint32_t expansion = 0;                             // 0: never grow; else sub-filter i has buckets·e^i
  std::uint32_t max_kicks = 500;                           // relocations tried before an insert gives up
  std::uint32_t max_filters = 32;                          // sub-filters at most (with expansion > 0)

  /// The geometry of a cuckoo plan (cuckoo_filter<>::plan(items, fpr)): bits = buckets·b·f and hashes = f,
  /// with the planning bucket size b = cuckoo_default_bucket_size.
  static cuckoo_geometry from_plan(const filter_plan& plan) {
    cuckoo_geometry g;
    g.fingerprint_bits = plan.hashes;
    g.bucket_size = cuckoo_default_bucket_size;
    const std::uint64_t bucket_bits = std::uint64_t{g.bucket_size} * std::max<std::uint32_t>(plan.hashes, 1);
    if (plan.bits % bucket_bits != 0)
      throw invalid_argument("cuckoo plan: " + std::to_string(plan.bits) + " bits is not a whole number of " +
                             std::to_string(bucket_bits) + "-bit buckets");
    g.buckets = plan.bits / bucket_bits;
    return g;
  }

  /// Throws invalid_argument naming the first bad value.
  void validate() const {
    if (fingerprint_bits != 8 && fingerprint_bits != 12 && fingerprint_bits != 16)
      throw invalid_argument("cuckoo filter: fingerprint bits must be 8, 12 or 16, got " +
                             std::to_string(fingerprint_bits));
    if (bucket_size == 0 || bucket_size > cuckoo_max_bucket_size)
      throw invalid_argument("cuckoo filter: bucket size must be in [1, 255], got " + std::to_string(bucket_size));
    if (buckets == 0) throw invalid_argument("cuckoo filter: bucket count must be at least 1, got 0");
    if (buckets > max_buckets())
      throw invalid_argument("cuckoo filter: " + std::to_string(buckets) + " buckets of " +
                             std::to_string(bucket_size) + " " + std::to_string(fingerprint_bits) +
                             "-bit slots exceed the maximum of 2^40 bits");
    if (max_kicks > cuckoo_max_kicks)
      throw invalid_argument("cuckoo filter: max kicks must be in [0, 65535], got " + std::to_string(max_kicks));
    if (expansion > cuckoo_max_expansion)
      throw invalid_argument("cuckoo filter: expansion must be in [0, 32768], got " + std::to_string(expansion));
    if (max_filters == 0 || max_filters > cuckoo_max_filters)
      throw invalid_argument("cuckoo filter: max sub-filters must be in [1, " + std::to_string(cuckoo_max_filters) +
                             "], got " + std::to_string(max_filters));
  }

  /// Most buckets one sub-filter may have: its slots must fit in max_filter_bits.
  std::uint64_t max_buckets() const noexcept {
    return max_filter_bits / (std::uint64_t{bucket_size} * fingerprint_bits);
  }

  /// Bytes of the table of a sub-filter with `n` buckets: the packed slots, at least 8 bytes of slack for
  /// the unaligned slot loads, rounded up to 64 bytes so every sub-filter starts on a cache line.
  std::uint64_t table_bytes(std::uint64_t n) const noexcept {
    const std::uint64_t slot_bits = n * bucket_size * fingerprint_bits;
    return (slot_bits + 64 + 511) / 512 * 64;
  }
  /// Bytes of a table made in memory by a policy with exact_tables: the packed slots rounded up to 64
  /// bytes, without table_bytes' slack (its slot and bucket loads stay within the table), so a table of
  /// 2^k bytes of slots is a block of 2^k. At least 64, so there are 8 bytes to load.
  std::uint64_t memory_bytes(std::uint64_t n) const noexcept {
    const std::uint64_t slot_bits = n * bucket_size * fingerprint_bits;
    return slot_bits == 0 ? 64 : (slot_bits + 511) / 512 * 64;
  }

  /// Buckets of sub-filter i (buckets·expansion^i), or 0 if that exceeds max_buckets(). Constant time for
  /// expansion 0 or 1, and at most 40 steps otherwise (n at least doubles up to 2^40): a file may hold
  /// 65,536 sub-filters, and a loop of i steps per sub-filter made opening one quadratic.
  std::uint64_t buckets_of(std::uint32_t i) const noexcept {
    if (i == 0) return buckets;
    if (expansion <= 1) return expansion == 0 ? 0 : buckets;
    return next_buckets(buckets, i);
  }
  /// Buckets of the sub-filter `steps` after one of `n` buckets, or 0 if beyond max_buckets(): what a
  /// walk over the sub-filters in order uses, one step at a time.
  std::uint64_t next_buckets(std::uint64_t n, std::uint32_t steps = 1) const noexcept {
    if (expansion == 1) return n;
    for (std::uint32_t j = 0; j < steps; ++j) {
      if (expansion == 0 || n == 0 || n > max_buckets() / expansion) return 0;
      n *= expansion;
    }
    return n;
  }

  friend constexpr bool operator==(const cuckoo_geometry&, const cuckoo_geometry&) = default;
};

/// Everything cuckoo_filter calls on its hashing policy. The members are static so that the filter's
/// lookup paths, which are copied into registers, need no policy object; all but validate() are called
/// from noexcept members of the filter, so they must not throw. What the compiler cannot check, and the
/// filter relies on: fingerprint() is never 0 (an empty slot) and fits f bits; primary() < n and
/// victim() < b; alternate(·, fp, …) is an involution on a sub-filter's buckets (relocation finds a
/// fingerprint's other bucket from either one, and undoes a failed walk by running it backwards); and
/// project() maps a bucket to the one of an older sub-filter whose pair holds the same keys' fingerprints.
template <class H>
concept cuckoo_hashing_policy =
    requires(const digest& d, const cuckoo_geometry& g, std::uint64_t x, std::uint32_t level, std::uint32_t k) {
      typename std::bool_constant<H::counts_coinciding_buckets_twice>;
      typename std::bool_constant<H::exact_tables>;
      H::validate(g);
      { H::fingerprint(d, x) } noexcept -> std::same_as<std::uint64_t>;
      { H::primary(d, x) } noexcept -> std::same_as<std::uint64_t>;
      { H::alternate_first(x, x, x) } noexcept -> std::same_as<std::uint64_t>;
      { H::alternate(x, x, x, x, level) } noexcept -> std::same_as<std::uint64_t>;
      { H::project(x, x, x, level, level) } noexcept -> std::same_as<std::uint64_t>;
      { H::walk(d) } noexcept -> std::same_as<std::uint64_t>;
      { H::starts_at_alternate(x) } noexcept -> std::same_as<bool>;
      { H::victim(x, k, k) } noexcept -> std::same_as<std::uint32_t>;
    };

/// blume's own hashing policy, described at the top of this file, for any bucket count. RedisBloom's
/// (redisbloom.hpp: power-of-two tables, XOR alternates) lets the same filter code read and write
/// RedisBloom's CF data.
struct cuckoo_hashing {
  /// count() of a key whose two buckets coincide: count that bucket once (blume) or twice (RedisBloom).
  static constexpr bool counts_coinciding_buckets_twice = false;
  /// Tables made in memory keep table_bytes' slack, so bucket tests need not stay within a table.
  static constexpr bool exact_tables = false;

  /// Constraints on the geometry beyond cuckoo_geometry::validate() (none here).
  static void validate(const cuckoo_geometry&) {}

  /// reduce(d.high, 2^f − 1) + 1 without a multiply: x·(2^f − 1) = x·2^f − x, whose high 64 bits are
  /// x >> (64 − f) less the borrow out of the low half, (x << f) − x, which occurs when x << f < x.
  static std::uint64_t fingerprint(const digest& d, std::uint64_t f) noexcept {
    const std::uint64_t x = d.high;
    return (x >> (64 - f)) - static_cast<std::uint64_t>((x << f) < x) + 1;
  }
  /// The key's bucket in a sub-filter of n buckets.
  static std::uint64_t primary(const digest& d, std::uint64_t n) noexcept { return reduce(d.low, n); }
  /// (H(fp) − q) mod n for q < n: the other bucket in sub-filter 0 (n buckets), and the leading digit's
  /// part of alternate() in the others. Without a branch: which way it goes is a coin flip, and a
  /// mispredicted branch here stalls the load of the second bucket, which is what lookups wait for.
  static std::uint64_t alternate_first(std::uint64_t q, std::uint64_t fp, std::uint64_t n) noexcept {
    const std::uint64_t h = reduce(fp * 0x9e3779b97f4a7c15ULL, n);
    return h - q + (n & (std::uint64_t{0} - static_cast<std::uint64_t>(h < q)));
  }
  /// The other bucket of fingerprint fp in bucket i of sub-filter `level` (n·e^level buckets): digit by
  /// digit in the mixed radix of a grown sub-filter. An involution in i for every n and e.
  static std::uint64_t alternate(std::uint64_t i, std::uint64_t fp, std::uint64_t n, std::uint64_t e,
                                 std::uint32_t level) noexcept {
    if (level == 0 || e <= 1) return alternate_first(i, fp, n);
    const std::uint64_t g = reduce(mix(fp * 0x9e3779b97f4a7c15ULL), e);
    std::uint64_t low = 0, scale = 1;
    for (std::uint32_t j = 0; j < level; ++j) {
      const std::uint64_t r = i % e;
      i /= e;
      low += (g >= r ? g - r : g + e - r) * scale;
      scale *= e;
    }
    return alternate_first(i, fp, n) * scale + low;
  }
  /// Bucket i of sub-filter `from` as a bucket of the older sub-filter `to`: its leading digits (the
  /// bucket pair there holds the same keys' fingerprints).
  static std::uint64_t project(std::uint64_t i, std::uint64_t /*n*/, std::uint64_t e, std::uint32_t from,
                               std::uint32_t to) noexcept {
    if (e <= 1) return i;
    for (std::uint32_t j = to; j < from; ++j) i /= e;
    return i;
  }
  /// A relocation walk's seed; whether it starts at the key's alternate bucket; the slot step k evicts.
  /// Pseudo-random (a fixed victim can cycle between two buckets; Fan et al. pick at random) yet
  /// recomputable from the key's digest and k, so a failed walk can be undone without recording it.
  static std::uint64_t walk(const digest& d) noexcept { return d.low ^ mix(d.high); }
  static bool starts_at_alternate(std::uint64_t walk) noexcept { return (walk & 1) != 0; }
  static std::uint32_t victim(std::uint64_t walk, std::uint32_t k, std::uint32_t b) noexcept {
    return static_cast<std::uint32_t>(reduce(mix(walk + k * 0x9e3779b97f4a7c15ULL), b));
  }
};

static_assert(cuckoo_hashing_policy<cuckoo_hashing>);

}  // namespace blume
