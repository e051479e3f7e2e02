// SPDX-License-Identifier: Apache-2.0
// Static filters of fingerprints XORed over three slots: the xor filter (Graf & Lemire, "Xor Filters:
// Faster and Smaller Than Bloom and Cuckoo Filters", JEA 2020) and the binary fuse filter (Graf & Lemire,
// "Binary Fuse Filters: Fast and Smaller Than Xor Filters", JEA 2022). Built once from the whole key set,
// they answer "maybe" for a key when fp(key) = B[h0] ⊕ B[h1] ⊕ B[h2]; an absent key matches with
// probability 2^−f for f-bit fingerprints, and a present key always does.
//
//   xor filter     c = 1.23·n + 32 slots in three equal blocks, one position per block: 1.23·f bits/key.
//   binary fuse    slots in segments of L = 2^⌊ln n / ln 3.33 + 2.25⌋ (at most 2^18); a key's three
//                  positions lie in three consecutive segments; c ≈ max(1.125, 0.875 + 0.25·ln 10^6 / ln n)·n
//                  slots: 1.125·f bits/key for large n, and the three reads are close together.
//
// A key's 64-bit hash is seeded_hash(digest.low, s) for a construction seed s stored with the filter; a
// construction that does not peel tries the next seed (each succeeds with probability well above ½).
// Duplicates are fine: two keys with the same 64-bit hash share positions and fingerprint, so keeping one
// loses neither. They are not removed up front (sorting costs more than most builds' single attempt);
// equal keys never peel, so after a first failed attempt the keys are deduplicated, once.
//
// Thread safety: const calls may run concurrently. There is nothing to modify after construction.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <ranges>
#include <span>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "blume/build_stats.hpp"
#include "blume/detail/bits.hpp"
#include "blume/detail/key_interface.hpp"
#include "blume/detail/peeling.hpp"
#include "blume/detail/pipeline.hpp"
#include "blume/error.hpp"
#include "blume/hash.hpp"
#include "blume/io/parameters.hpp"
#include "blume/io/serialization.hpp"
#include "blume/kind.hpp"
#include "blume/plan.hpp"
#include "blume/storage.hpp"

namespace blume {

/// Slot geometry of the xor filter: three equal blocks, one position in each (plan.hpp: math::xor_slots).
struct xor_geometry {
  std::uint64_t slots = 0, block = 0;

  static xor_geometry for_keys(std::uint64_t n) noexcept {
    xor_geometry g;
    g.slots = math::xor_slots(n);
    g.block = g.slots / 3;
    return g;
  }
  std::array<std::uint64_t, 3> positions(std::uint64_t h) const noexcept {
    return {reduce(h, block), block + reduce(std::rotl(h, 21), block), 2 * block + reduce(std::rotl(h, 42), block)};
  }
  std::uint64_t layout() const noexcept { return 0; }
  std::uint64_t segments() const noexcept { return 0; }
};

/// Slot geometry of the binary fuse filter (plan.hpp: math::fuse_shape_for): positions h0 in the first
/// segment_count segments, h1 and h2 in the next two segments, each moved within its segment by
/// other bits of the hash.
struct fuse_geometry {
  std::uint64_t slots = 0, segment_length = 4, segment_count = 1;

  static fuse_geometry for_keys(std::uint64_t n) noexcept {
    const math::fuse_shape shape = math::fuse_shape_for(n);
    return from(shape.segment_length, shape.segment_count);
  }
  static fuse_geometry from(std::uint64_t segment_length, std::uint64_t segment_count) noexcept {
    fuse_geometry g;
    g.segment_length = segment_length;
    g.segment_count = segment_count;
    g.slots = (segment_count + 2) * segment_length;
    return g;
  }
  std::array<std::uint64_t, 3> positions(std::uint64_t h) const noexcept {
    const std::uint64_t mask = segment_length - 1;
    const std::uint64_t h0 = reduce(h, segment_count * segment_length);
    const std::uint64_t h1 = (h0 + segment_length) ^ ((h >> 18) & mask);
    const std::uint64_t h2 = (h0 + 2 * segment_length) ^ (h & mask);
    return {h0, h1, h2};
  }
  std::uint64_t layout() const noexcept { return segment_length; }
  std::uint64_t segments() const noexcept { return segment_count; }
};

template <class Geometry, class Fingerprint, hasher Hasher>
class basic_xor_filter : public detail::key_interface<basic_xor_filter<Geometry, Fingerprint, Hasher>> {
  static_assert(std::is_same_v<Fingerprint, std::uint8_t> || std::is_same_v<Fingerprint, std::uint16_t>);
  using key_calls = detail::key_interface<basic_xor_filter>;

 public:
  using key_calls::contains;
  using key_calls::hash;
  using hasher_type = Hasher;
  using fingerprint_type = Fingerprint;
  static constexpr bool fuse = std::is_same_v<Geometry, fuse_geometry>;
  static constexpr std::uint32_t fingerprint_bits = 8 * sizeof(Fingerprint);
  static constexpr filter_kind kind{fuse ? (fingerprint_bits == 8 ? 13 : 14) : (fingerprint_bits == 8 ? 11 : 12)};
  static constexpr std::string_view name = fuse ? (fingerprint_bits == 8 ? "fuse8" : "fuse16")
                                                : (fingerprint_bits == 8 ? "xor8" : "xor16");
  static constexpr kind_input input = kind_input::keys;
  static constexpr bool is_static = true;
  /// No merge(): a static filter holds no keys to add to; build one from the union of the key sets.
  static constexpr std::string_view merge_refusal = "they are static: build one from the union of the key sets instead";

  // The planner's model: m = slots·f bits, k = f; an absent key matches a random f-bit fingerprint.
  static std::uint64_t plan_bytes(std::uint64_t bits) noexcept { return bits / 8; }
  static double model_fpr(double /*n*/, double /*m*/, double k) noexcept {
    return std::ldexp(1.0, -static_cast<int>(k));
  }
  static filter_plan plan(std::uint64_t items, double fpr) {
    constexpr std::string_view wider = fingerprint_bits == 16 ? "" : fuse ? "fuse16" : "xor16";
    return detail::plan_static<basic_xor_filter>(items, fpr, fingerprint_bits, fuse, wider);
  }
  static filter_plan plan_for_bits(std::uint64_t items, std::uint64_t bits) {
    return detail::plan_static_for_bits<basic_xor_filter>(items, bits, fingerprint_bits, fuse);
  }
  static constexpr std::size_t batch_size = detail::pipeline_batch;
  /// Seeds tried before construction gives up (each fails with probability well below ½).
  static constexpr std::uint32_t max_attempts = 64;

  /// Builds the filter of `keys` (any range of keys, duplicates allowed). Deterministic for a given seed.
  template <std::ranges::input_range R>
  static basic_xor_filter build(const R& keys, std::uint64_t seed = Hasher::default_seed,
                                build_stats* stats = nullptr) {
    const Hasher h(seed);
    std::vector<std::uint64_t> lows;
    if constexpr (std::ranges::sized_range<R>) lows.reserve(std::ranges::size(keys));
    for (auto&& k : keys) lows.push_back(hash_key(h, k).low);
    return build_from_hashes(std::move(lows), seed, stats);
  }

  /// The static kinds' common builder (kinds.hpp): from the keys' digest lows, at the default seed; the
  /// rate is the fingerprint's, whatever `fpr` asks (plan() refuses a target it cannot meet).
  static basic_xor_filter from_digest_lows(std::vector<std::uint64_t> lows, double /*fpr*/, build_stats* stats) {
    return build_from_hashes(std::move(lows), Hasher::default_seed, stats);
  }

  /// Builds from the low halves of the keys' digests (what build() computes), consumed.
  static basic_xor_filter build_from_hashes(std::vector<std::uint64_t> lows, std::uint64_t seed,
                                            build_stats* stats = nullptr) {
    build_stats local;
    build_stats& s = stats != nullptr ? *stats : local;
    s = {};
    const std::uint64_t given = lows.size();
    std::uint64_t attempt_seed = seed;
    std::vector<std::uint64_t> hashes(lows.size());
    bool unique = false;  // whether lows has been deduplicated
    for (std::uint32_t attempt = 1; attempt <= max_attempts; ++attempt) {
      attempt_seed = attempt_seed_of(seed, attempt);
      const Geometry g = Geometry::for_keys(lows.size());
      detail::peel_split split;
      if constexpr (fuse) {
        // Keys of segment s use segments s … s + 2, so those below mid − 2 and those from mid on touch
        // disjoint slots.
        const std::vector<std::size_t> starts = detail::seed_and_group(lows, attempt_seed, g.segment_count, hashes);
        const std::uint64_t mid = g.segment_count / 2;
        if (lows.size() >= (std::size_t{1} << 22) && mid >= 3)
          split = {starts[mid - 2], starts[mid], mid * g.segment_length};
      } else {
        hashes.resize(lows.size());
        for (std::size_t i = 0; i < lows.size(); ++i) hashes[i] = detail::seeded_hash(lows[i], attempt_seed);
      }
      s.attempts = attempt;
      s.keys = lows.size();
      s.duplicates = given - lows.size();
      // The key hashes twice (digests and seeded), the peeling state (a hash and a count per slot), and the
      // queue and the order (32-bit slot indexes up to 2^32 slots).
      const std::uint64_t index_bytes = g.slots <= 0xffffffffULL ? 4 : 8;
      s.peak_bytes = std::max<std::uint64_t>(s.peak_bytes, (lows.capacity() + hashes.capacity()) * 8 +
                                                               g.slots * (9 + index_bytes) + lows.size() * index_bytes);
      if (lows.empty()) return basic_xor_filter(g, attempt_seed, Hasher(seed), 0);
      basic_xor_filter f(g, attempt_seed, Hasher(seed), lows.size());
      Fingerprint* b = f.slots();
      const bool peeled = detail::peel<(fuse ? detail::peel_order::depth_first : detail::peel_order::breadth_first)>(
          hashes, g.slots, [&](std::uint64_t x) { return g.positions(x); },
          [&](std::uint64_t h, std::uint64_t own) {
            Fingerprint v = fingerprint_of(h);
            for (const std::uint64_t q : g.positions(h))
              if (q != own) v ^= b[q];
            b[own] = v;
          },
          [&](std::uint64_t h) {
            for (const std::uint64_t q : g.positions(h)) detail::prefetch_write(b + q);
          },
          split);
      if (peeled) return f;
      // Equal keys never peel: after the first failure, drop them (and count them) once. A failure without
      // duplicates is just an unlucky seed.
      if (!unique) {
        detail::sort_unique(lows);
        unique = true;
      }
    }
    throw invalid_argument(std::string(name) + " filter: construction did not succeed with " +
                           std::to_string(max_attempts) + " seeds");
  }

  // ---- lookups ---------------------------------------------------------------------------------------

  bool contains(const digest& d) const noexcept {
    if (keys_ == 0) return false;
    const std::uint64_t h = detail::seeded_hash(d.low, construction_seed_);
    const auto p = geometry_.positions(h);
    const Fingerprint* b = slots();
    return static_cast<Fingerprint>(b[p[0]] ^ b[p[1]] ^ b[p[2]]) == fingerprint_of(h);
  }
  /// Writes one bool per key to `out`; returns how many answered true. Hashes a batch and prefetches the
  /// three slots of each key before reading any.
  template <std::ranges::input_range R, class Out>
    requires std::output_iterator<Out, bool>
  std::size_t contains_many(const R& keys, Out out) const {
    std::size_t hits = 0;
    pipelined(keys, [&](std::span<const probe> batch) {
      for (const probe& q : batch) {
        const bool hit = answer(q);
        hits += hit;
        *out = hit;
        ++out;
      }
    });
    return hits;
  }
  template <std::ranges::input_range R>
  std::size_t count_contained(const R& keys) const {
    std::size_t hits = 0;
    pipelined(keys, [&](std::span<const probe> batch) {
      // A local sum: `hits` lives in memory that the compiler must assume aliased, and adding to it there
      // would chain every key's answer through a store and a load.
      std::size_t batch_hits = 0;
      for (const probe& q : batch) batch_hits += answer(q);
      hits += batch_hits;
    });
    return hits;
  }

  // ---- properties ------------------------------------------------------------------------------------

  /// Distinct keys stored (exact).
  std::uint64_t inserted() const noexcept { return keys_; }
  double estimated_count() const noexcept { return static_cast<double>(keys_); }
  /// 2^−f: an absent key's fingerprint equals a uniformly random f-bit value.
  double predicted_fpr() const noexcept {
    return keys_ == 0 ? 0.0 : std::ldexp(1.0, -static_cast<int>(fingerprint_bits));
  }
  std::uint64_t slot_count() const noexcept { return geometry_.slots; }
  const Geometry& geometry() const noexcept { return geometry_; }
  std::uint64_t seed() const noexcept { return hasher_.seed(); }
  const Hasher& hasher() const noexcept { return hasher_; }
  std::uint64_t construction_seed() const noexcept { return construction_seed_; }
  std::size_t size_in_bytes() const noexcept { return storage_.size() + sizeof(*this); }
  double bits_per_key() const noexcept {
    return keys_ == 0 ? 0.0 : static_cast<double>(geometry_.slots * fingerprint_bits) / static_cast<double>(keys_);
  }

  friend bool operator==(const basic_xor_filter& a, const basic_xor_filter& b) noexcept {
    return a.keys_ == b.keys_ && a.construction_seed_ == b.construction_seed_ && a.seed() == b.seed() &&
           a.storage_.size() == b.storage_.size() &&
           std::memcmp(a.storage_.data(), b.storage_.data(), a.storage_.size()) == 0;
  }

  // ---- serialization hooks (format.hpp) --------------------------------------------------------------
  // bits = slots·f, hashes = f, layout = segment length (fuse) or 0 (xor);
  // extra = {construction seed, segment count (fuse) or 0, 0, 0, 0, 0}; inserted = keys.
  // Payload: the slots, f/8 bytes each, little-endian.

  filter_parameters parameters() const noexcept {
    filter_parameters p;
    p.primary = geometry_.slots * fingerprint_bits;
    p.secondary = fingerprint_bits;
    p.layout = static_cast<std::uint32_t>(geometry_.layout());
    p.extra = {construction_seed_, geometry_.segments(), 0, 0, 0, 0};
    return p;
  }
  template <class Fn>
  void for_each_payload_segment(Fn&& fn) const {
    fn(std::span<const std::byte>(storage_.data(), storage_.size()));
  }
  static std::uint64_t payload_size(const filter_parameters& p) { return geometry_of(p).slots * sizeof(Fingerprint); }
  static basic_xor_filter from_payload(const filter_parameters& p, std::uint64_t seed, std::uint64_t inserted,
                                       byte_storage payload) {
    Geometry g;
    try {
      g = geometry_of(p);
    } catch (const invalid_argument& e) {
      throw format_error(std::string("invalid parameters: ") + e.what());
    }
    if (payload.size() != g.slots * sizeof(Fingerprint))
      throw format_error("payload holds " + std::to_string(payload.size()) + " bytes but the parameters need " +
                         std::to_string(g.slots * sizeof(Fingerprint)));
    if (inserted > g.slots) throw format_error("more keys (" + std::to_string(inserted) + ") than slots");
    return basic_xor_filter(g, p.extra[0], Hasher(seed), inserted, std::move(payload));
  }

 private:
  struct probe {
    const Fingerprint* a;
    const Fingerprint* b;
    const Fingerprint* c;
    Fingerprint fp;
  };

  basic_xor_filter(const Geometry& g, std::uint64_t construction_seed, const Hasher& h, std::uint64_t keys)
      : basic_xor_filter(g, construction_seed, h, keys, byte_storage::allocate(g.slots * sizeof(Fingerprint))) {}
  basic_xor_filter(const Geometry& g, std::uint64_t construction_seed, const Hasher& h, std::uint64_t keys,
                   byte_storage storage)
      : geometry_(g), construction_seed_(construction_seed), hasher_(h), keys_(keys), storage_(std::move(storage)) {}

  /// The seed of attempt i, from the filter's seed: a fixed sequence, so construction is deterministic.
  static std::uint64_t attempt_seed_of(std::uint64_t seed, std::uint32_t attempt) noexcept {
    return detail::seeded_hash(seed, 0x9e3779b97f4a7c15ULL * attempt);
  }
  static Fingerprint fingerprint_of(std::uint64_t h) noexcept { return static_cast<Fingerprint>(h ^ (h >> 32)); }

  static Geometry geometry_of(const filter_parameters& p) {
    if (p.secondary != fingerprint_bits)
      throw invalid_argument("fingerprint bits " + std::to_string(p.secondary) + " do not match a " +
                             std::string(name) + " filter");
    if (p.primary == 0 || p.primary % fingerprint_bits != 0 || p.primary > max_filter_bits)
      throw invalid_argument("slot bits " + std::to_string(p.primary) + " are not a whole number of slots within 2^40");
    for (std::size_t i = 2; i < p.extra.size(); ++i)
      if (p.extra[i] != 0) throw invalid_argument("reserved header bytes are not zero");
    const std::uint64_t slots = p.primary / fingerprint_bits;
    if constexpr (fuse) {
      const std::uint64_t L = p.layout;
      if (L < 4 || L > (1u << 18) || !std::has_single_bit(L))
        throw invalid_argument("segment length " + std::to_string(L) + " is not a power of two in [4, 2^18]");
      if (p.extra[1] == 0 || p.extra[1] > max_filter_bits || (p.extra[1] + 2) * L != slots)
        throw invalid_argument("segment count " + std::to_string(p.extra[1]) + " does not match the slots");
      return fuse_geometry::from(L, p.extra[1]);
    } else {
      if (p.layout != 0 || p.extra[1] != 0) throw invalid_argument("an xor filter has no segments");
      if (slots % 3 != 0 || slots < 33)
        throw invalid_argument("slot count " + std::to_string(slots) + " is not 3 blocks");
      xor_geometry g;
      g.slots = slots;
      g.block = slots / 3;
      return g;
    }
  }

  Fingerprint* slots() noexcept { return reinterpret_cast<Fingerprint*>(storage_.data()); }
  const Fingerprint* slots() const noexcept { return reinterpret_cast<const Fingerprint*>(storage_.data()); }

  /// An empty filter's probes read a zero slot three times and expect 1: no, without a test per key.
  static bool answer(const probe& q) noexcept { return static_cast<Fingerprint>(*q.a ^ *q.b ^ *q.c) == q.fp; }
  static constexpr Fingerprint empty_slot = 0;
  template <class R, class Use>
  void pipelined(const R& items, Use&& use) const {
    const Fingerprint* b = slots();
    const Geometry g = geometry_;
    const std::uint64_t s = construction_seed_;
    const bool empty = keys_ == 0;
    detail::pipelined_probes<probe>(
        items, [h = hasher_](const auto& k) { return hash_key(h, k); },
        [=](const digest& d) {
          const std::uint64_t x = detail::seeded_hash(d.low, s);
          if (empty) return probe{&empty_slot, &empty_slot, &empty_slot, 1};
          const auto p = g.positions(x);
          detail::prefetch_read(b + p[0]);
          detail::prefetch_read(b + p[1]);
          detail::prefetch_read(b + p[2]);
          return probe{b + p[0], b + p[1], b + p[2], fingerprint_of(x)};
        },
        use);
  }

  Geometry geometry_;
  std::uint64_t construction_seed_ = 0;
  Hasher hasher_;
  std::uint64_t keys_ = 0;
  byte_storage storage_;
};

template <hasher Hasher = xxh3_hasher>
using xor8_filter = basic_xor_filter<xor_geometry, std::uint8_t, Hasher>;
template <hasher Hasher = xxh3_hasher>
using xor16_filter = basic_xor_filter<xor_geometry, std::uint16_t, Hasher>;
template <hasher Hasher = xxh3_hasher>
using fuse8_filter = basic_xor_filter<fuse_geometry, std::uint8_t, Hasher>;
template <hasher Hasher = xxh3_hasher>
using fuse16_filter = basic_xor_filter<fuse_geometry, std::uint16_t, Hasher>;

static_assert(serializable_filter<xor8_filter<>> && serializable_filter<fuse16_filter<>>);
static_assert(!can_merge<xor8_filter<>> && !takes_inserts<xor8_filter<>>);

}  // namespace blume
