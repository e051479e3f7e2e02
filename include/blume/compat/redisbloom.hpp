// SPDX-License-Identifier: Apache-2.0
// RedisBloom compatibility: the hashes, probe positions and geometry that RedisBloom (2.x and 8.x) uses
// for its BF.* and CF.* filters, expressed as policies for blume's own scalable_bloom_filter and
// cuckoo_filter, so data written by RedisBloom answers identically in blume and the other way round.
// Bloom filters (RedisBloom's deps/bloom/bloom.c and src/sb.c, the same in 2.8 and 8.x):
//
//   hash      a = MurmurHash64A(item, seed 0xc6a4a7935bd1e995), b = MurmurHash64A(item, seed a), once per
//             item for every layer (RedisBloom's FORCE64 mode, which every filter it creates uses)
//   probe i   (a + i·b) mod M in wrapping 64-bit arithmetic, i = 0 … k − 1, where M = bits (NOROUND layers,
//             all that RedisBloom creates) or 2^n2 (power-of-two layers of very old versions)
//   bit x     byte x / 8, bit x mod 8 (LSB first): the same bytes as blume's little-endian 64-bit words
//   layer     for capacity n and rate ε: bpe = |ln ε| / ln²2, bits = ⌊n·bpe⌋ (at least 1) rounded up to a
//             multiple of 64, k = ⌈ln 2 · bpe⌉ (with ln 2 and ln²2 as the decimal constants RedisBloom
//             uses, so the doubles agree bit for bit)
//   chain     layer 0 gets (C, ε/2), or (C, ε) when non-scaling; layer i + 1 gets (n_i · g, ε_i / 2) with
//             integer growth g. A new layer is added when the newest holds n_i items.
//
// Cuckoo filters (src/cuckoo.c):
//   hash      h = MurmurHash64A(item, seed 0); fingerprint fp = h mod 255 + 1 (8 bits, 0 = empty)
//   buckets   sub-filter j has n·e^j buckets of b one-byte slots, n and e powers of two (CF.RESERVE rounds
//             capacity / b and the expansion up); the key's buckets there are h mod n_j and
//             (h ⊕ fp·0x5bd1e995) mod n_j, so a bucket's pair is i ⊕ (fp·0x5bd1e995 mod n_j)
//   insert    the first empty slot of the two buckets in each sub-filter, newest first; else evict from
//             the newest one starting at bucket h mod n, victim slots 0, 1, 2, … round robin, undone
//             in full on failure; then grow (unless e = 0) and place in the new sub-filter
//   count     the fingerprint's copies in both buckets of every sub-filter (a bucket that is its own pair
//             counts twice)
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>

#include "blume/detail/probe_ops.hpp"
#include "blume/error.hpp"
#include "blume/hash.hpp"
#include "blume/kinds/basic_bloom_filter.hpp"
#include "blume/kinds/bloom_filter.hpp"
#include "blume/kinds/cuckoo_filter.hpp"
#include "blume/kinds/cuckoo_geometry.hpp"
#include "blume/kinds/scalable_bloom_filter.hpp"
#include "blume/plan.hpp"

namespace blume {

/// MurmurHash64A (Austin Appleby, public domain) with little-endian 8-byte reads, as RedisBloom hashes
/// items for both its Bloom and cuckoo filters.
inline std::uint64_t murmur64a(const void* data, std::size_t len, std::uint64_t seed) noexcept {
  constexpr std::uint64_t m = 0xc6a4a7935bd1e995ULL;
  constexpr int r = 47;
  const auto* p = static_cast<const unsigned char*>(data);
  std::uint64_t h = seed ^ (len * m);
  const std::size_t blocks = len / 8;
  for (std::size_t i = 0; i < blocks; ++i, p += 8) {
    std::uint64_t k = 0;
    for (int j = 7; j >= 0; --j) k = (k << 8) | p[j];
    k *= m;
    k ^= k >> r;
    k *= m;
    h ^= k;
    h *= m;
  }
  if (const std::size_t tail = len & 7; tail != 0) {
    for (std::size_t j = tail; j-- > 0;) h ^= std::uint64_t{p[j]} << (8 * j);
    h *= m;
  }
  h ^= h >> r;
  h *= m;
  h ^= h >> r;
  return h;
}

/// RedisBloom's Bloom hash: digest.low = a = MurmurHash64A(key, seed), digest.high = b =
/// MurmurHash64A(key, a). The seed RedisBloom uses is the default.
class murmur64a_pair_hasher {
 public:
  static constexpr hash_id id = hash_id::murmur64a_pair;
  static constexpr std::uint64_t default_seed = 0xc6a4a7935bd1e995ULL;

  explicit constexpr murmur64a_pair_hasher(std::uint64_t seed = default_seed) noexcept : seed_(seed) {}
  digest operator()(const void* data, std::size_t len) const noexcept {
    const std::uint64_t a = murmur64a(data, len, seed_);
    return {a, murmur64a(data, len, a)};
  }
  std::uint64_t seed() const noexcept { return seed_; }

 private:
  std::uint64_t seed_;
};
static_assert(hasher<murmur64a_pair_hasher>);

/// Most probes a RedisBloom layer may have. k = ⌈ln 2 · bpe⌉ grows with log(1/ε); the smallest positive
/// double gives k ≈ 517, and every layer of a chain tightens ε by half (about one more probe per layer).
inline constexpr std::uint32_t redisbloom_max_hashes = 4096;

/// A RedisBloom Bloom layer's probe positions (see the top of this file). `n2` is 0 for the layers every
/// current RedisBloom creates (positions mod bits); n2 > 0 marks an old power-of-two layer (mod 2^n2).
/// bpe (bits per entry) is carried along only so a layer round-trips RedisBloom's formats bit for bit.
class redisbloom_layout : public detail::flat_probe_ops<redisbloom_layout> {
 public:
  // Stored as the classic kind (with RedisBloom's hash id), whose model it follows.
  static constexpr filter_kind kind = classic_layout::kind;
  static constexpr std::string_view name = classic_layout::name;
  static constexpr std::uint32_t block_bits = 0;

  static std::uint64_t plan_bytes(std::uint64_t bits) noexcept { return detail::word_bytes(bits); }
  static double model_fpr(double n, double m, double k) noexcept { return math::bloom_fpr(n, m, k); }
  static double estimate_items(double set, double m, double k) noexcept { return math::classic_items(set, m, k); }

  redisbloom_layout(std::uint64_t bits, std::uint32_t hashes, std::uint32_t n2 = 0, double bpe = 0)
      : bits_(bits), hashes_(hashes), n2_(n2), bpe_(bpe), modulus_(n2 == 0 ? bits : std::uint64_t{1} << n2) {
    detail::check_geometry(name, bits, hashes, 64, redisbloom_max_hashes);
    if (n2 > 63 || (n2 != 0 && bits < modulus_))
      throw invalid_argument("RedisBloom layer: power-of-two exponent " + std::to_string(n2) + " does not fit " +
                             std::to_string(bits) + " bits");
  }

  std::uint64_t bits() const noexcept { return bits_; }
  std::uint32_t hashes() const noexcept { return hashes_; }
  std::uint32_t n2() const noexcept { return n2_; }
  double bits_per_entry() const noexcept { return bpe_; }

  template <class Fn>
  bool for_each_probe(digest d, Fn&& fn) const noexcept {
    for (std::uint32_t i = 0; i < hashes_; ++i)
      if (!fn((d.low + std::uint64_t{i} * d.high) % modulus_)) return false;
    return true;
  }

 private:
  std::uint64_t bits_;
  std::uint32_t hashes_;
  std::uint32_t n2_;
  double bpe_;
  std::uint64_t modulus_;
};

/// One layer of a RedisBloom-compatible chain.
using redisbloom_bloom_layer = basic_bloom_filter<redisbloom_layout, murmur64a_pair_hasher>;

/// RedisBloom's layer geometry for `capacity` items at rate `fpr` (bloom_init with NOROUND): refuses what
/// RedisBloom would refuse (capacity 0, rate outside (0, 1)) and layers beyond max_filter_bits.
inline redisbloom_layout redisbloom_layer_geometry(std::uint64_t capacity, double fpr) {
  if (capacity == 0) throw invalid_argument("RedisBloom layer: capacity must be at least 1, got 0");
  if (!(fpr > 0 && fpr < 1))
    throw invalid_argument("RedisBloom layer: error rate must be in (0, 1), got " + detail::format_number(fpr));
  constexpr double ln2 = 0.693147180559945;
  constexpr double ln2_squared = 0.480453013918201;
  const double bpe = std::fabs(std::log(fpr) / ln2_squared);
  const double wanted = static_cast<double>(capacity) * bpe;
  if (!(wanted < static_cast<double>(max_filter_bits)))
    throw invalid_argument("RedisBloom layer: " + std::to_string(capacity) + " items at rate " +
                           detail::format_number(fpr) + " need more than 2^40 bits");
  std::uint64_t bits = static_cast<std::uint64_t>(wanted);
  if (bits == 0) bits = 1;
  bits = (bits + 63) / 64 * 64;
  const double k = std::ceil(ln2 * bpe);
  if (!(k <= redisbloom_max_hashes))
    throw invalid_argument("RedisBloom layer: rate " + detail::format_number(fpr) + " needs more than " +
                           std::to_string(redisbloom_max_hashes) + " hashes");
  return redisbloom_layout(bits, static_cast<std::uint32_t>(k), 0, bpe);
}

/// The chain policy for scalable_bloom_filter: RedisBloom's per-layer capacity, rate and geometry.
/// Growth is an integer (RedisBloom multiplies capacities in integers) and the tightening ratio 0.5.
struct redisbloom_layer_plan {
  // RedisBloom takes any rate in (0, 1). Its k is not capped at 64 (redisbloom_max_hashes), so a key costs
  // 1.44·log2(1/ε) bits, at most about 1550 for a double: tiny rates stay proportionate, unlike under
  // blume's planners (min_fpr).
  static constexpr double min_fpr = std::numeric_limits<double>::denorm_min();
  layer_spec spec(std::uint64_t capacity, double fpr, const scalable_options& o, std::size_t index,
                  const layer_spec& previous) const {
    if (index == 0) return {capacity, o.scaling ? fpr * o.tightening : fpr};
    const auto growth = static_cast<std::uint64_t>(o.growth);
    if (growth != 0 && previous.capacity > UINT64_MAX / growth)
      throw invalid_argument("RedisBloom chain: the next layer's capacity overflows");
    return {previous.capacity * growth, previous.fpr * o.tightening};
  }
  redisbloom_layout layout(const layer_spec& s) const { return redisbloom_layer_geometry(s.capacity, s.fpr); }
};

/// A RedisBloom-compatible scalable Bloom filter: what BF.RESERVE creates. Its options must have an
/// integer growth ≥ 1 and tightening 0.5 (redisbloom_options gives them).
using redisbloom_bloom_chain = scalable_bloom_filter<redisbloom_bloom_layer, redisbloom_layer_plan>;

/// RedisBloom's chain options: growth (EXPANSION, an integer ≥ 1 when scaling), non-scaling or not;
/// tightening 0.5. Non-scaling chains still record their growth (RedisBloom keeps it, and SCANDUMP shows it).
inline scalable_options redisbloom_options(std::uint32_t growth, bool scaling) {
  scalable_options o;
  o.growth = static_cast<double>(growth);
  o.tightening = 0.5;
  o.scaling = scaling;
  o.max_layers = scalable_max_layers;
  return o;
}

/// The false-positive rate of a chain reserved for `capacity` items at `fpr` after `items` counted adds
/// (BF.CARD): RedisBloom fills each layer to its capacity before it adds the next (sb.c), and an absent key is
/// a false positive when any layer says maybe, so the chain passes a key with the product of its layers'
/// passes. Each layer's rate is the classic approximation at its fill.
inline double redisbloom_chain_fpr(std::uint64_t capacity, double fpr, std::uint32_t growth, bool scaling,
                                   std::uint64_t items) {
  const scalable_options o = redisbloom_options(growth, scaling);
  const redisbloom_layer_plan plan;
  layer_spec spec = plan.spec(capacity, fpr, o, 0, {});
  double pass = 1;
  for (std::size_t index = 1;; ++index) {
    const redisbloom_layout g = plan.layout(spec);
    const std::uint64_t here = scaling ? std::min(items, spec.capacity) : items;
    pass *= 1 - math::bloom_fpr(static_cast<double>(here), static_cast<double>(g.bits()), g.hashes());
    items -= here;
    if (items == 0 || !scaling || growth == 0) break;
    spec = plan.spec(capacity, fpr, o, index, spec);
  }
  return 1 - pass;
}

// ---- cuckoo filters ----------------------------------------------------------------------------------

/// RedisBloom's cuckoo hash: digest.low = MurmurHash64A(key, seed 0); digest.high is unused (0).
class murmur64a_hasher {
 public:
  static constexpr hash_id id = hash_id::murmur64a;
  static constexpr std::uint64_t default_seed = 0;

  explicit constexpr murmur64a_hasher(std::uint64_t seed = default_seed) noexcept : seed_(seed) {}
  digest operator()(const void* data, std::size_t len) const noexcept { return {murmur64a(data, len, seed_), 0}; }
  std::uint64_t seed() const noexcept { return seed_; }

 private:
  std::uint64_t seed_;
};
static_assert(hasher<murmur64a_hasher>);

/// cuckoo_filter's hashing policy for RedisBloom's CF filters (see the top of this file).
struct redisbloom_cuckoo_hashing {
  static constexpr bool counts_coinciding_buckets_twice = true;
  // Tables of exactly their slots, as RedisBloom's: a server's allocator rounds a block up to a size
  // class, and 2^k bytes plus slack would be 1.25·2^k, which CF.INFO's Size and MEMORY USAGE (RedisBloom's
  // numbers) would not show. Bucket tests then bound their loads at a table's end.
  static constexpr bool exact_tables = true;
  static constexpr std::uint64_t alternate_multiplier = 0x5bd1e995;

  static void validate(const cuckoo_geometry& g) {
    if (g.fingerprint_bits != 8)
      throw invalid_argument("RedisBloom cuckoo filter: fingerprints are 8 bits, got " +
                             std::to_string(g.fingerprint_bits));
    if (!std::has_single_bit(g.buckets))
      throw invalid_argument("RedisBloom cuckoo filter: bucket count " + std::to_string(g.buckets) +
                             " is not a power of two");
    if (g.expansion != 0 && !std::has_single_bit(g.expansion))
      throw invalid_argument("RedisBloom cuckoo filter: expansion " + std::to_string(g.expansion) +
                             " is not a power of two");
  }
  static std::uint64_t fingerprint(const digest& d, std::uint64_t /*f*/) noexcept { return d.low % 255 + 1; }
  static std::uint64_t primary(const digest& d, std::uint64_t n) noexcept { return d.low & (n - 1); }
  static std::uint64_t alternate_first(std::uint64_t i, std::uint64_t fp, std::uint64_t n) noexcept {
    return (i ^ (fp * alternate_multiplier)) & (n - 1);
  }
  static std::uint64_t alternate(std::uint64_t i, std::uint64_t fp, std::uint64_t n, std::uint64_t e,
                                 std::uint32_t level) noexcept {
    for (std::uint32_t j = 0; j < level; ++j) n *= e;
    return alternate_first(i, fp, n);
  }
  static std::uint64_t project(std::uint64_t i, std::uint64_t n, std::uint64_t e, std::uint32_t /*from*/,
                               std::uint32_t to) noexcept {
    for (std::uint32_t j = 0; j < to; ++j) n *= e;
    return i & (n - 1);
  }
  static std::uint64_t walk(const digest&) noexcept { return 0; }
  static bool starts_at_alternate(std::uint64_t) noexcept { return false; }
  static std::uint32_t victim(std::uint64_t /*walk*/, std::uint32_t k, std::uint32_t b) noexcept { return k % b; }
};
static_assert(cuckoo_hashing_policy<redisbloom_cuckoo_hashing>);

/// A RedisBloom-compatible cuckoo filter: what CF.RESERVE creates.
using redisbloom_cuckoo_filter = cuckoo_filter<murmur64a_hasher, redisbloom_cuckoo_hashing>;

/// The smallest power of two ≥ x (0 stays 0), as RedisBloom rounds bucket counts and expansions.
constexpr std::uint64_t redisbloom_next_pow2(std::uint64_t x) noexcept { return x == 0 ? 0 : std::bit_ceil(x); }

/// RedisBloom's geometry for CF.RESERVE key capacity BUCKETSIZE b MAXITERATIONS m EXPANSION e:
/// bit_ceil(capacity / b) buckets (at least 1), expansion rounded up to a power of two, 8-bit
/// fingerprints, and no limit of blume's own on the number of sub-filters (RedisBloom checks its
/// cf-max-expansions before each insert).
inline cuckoo_geometry redisbloom_cuckoo_geometry(std::uint64_t capacity, std::uint32_t bucket_size,
                                                  std::uint32_t max_iterations, std::uint32_t expansion) {
  if (bucket_size == 0) throw invalid_argument("RedisBloom cuckoo filter: bucket size must be at least 1, got 0");
  cuckoo_geometry g;
  g.buckets = std::max<std::uint64_t>(redisbloom_next_pow2(capacity / bucket_size), 1);
  g.bucket_size = bucket_size;
  g.fingerprint_bits = 8;
  g.expansion = static_cast<std::uint32_t>(redisbloom_next_pow2(expansion));
  g.max_kicks = max_iterations;
  g.max_filters = cuckoo_max_filters;
  g.validate();
  redisbloom_cuckoo_hashing::validate(g);
  return g;
}

}  // namespace blume
