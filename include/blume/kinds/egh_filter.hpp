// SPDX-License-Identifier: Apache-2.0
// The EGH filter (Kiss, Hosszu, Tapolcai, Rónyai & Rottenstreich, "Bloom Filter with a False Positive Free
// Zone", IEEE INFOCOM 2018), built on the Chinese-remainder construction of Eppstein, Goodrich and
// Hirschberg's non-adaptive group testing. Keys are integers of a universe [0, U), U ≤ 2^64. The filter is
// k segments of p_1 < … < p_k bits, the p_i distinct primes; key x sets bit (π(x) mod p_i) of segment i,
// where π is a seeded permutation of [0, U), and a lookup tests those k bits.
//
// The zone. While the filter holds at most d keys, no key of the universe answers "maybe" unless it was
// inserted, provided p_1 ⋯ p_k > (U − 1)^d. Proof: if y ∉ S found every bit set, give each segment i a key
// x ∈ S with π(x) ≡ π(y) (mod p_i). The primes given to one x all divide π(x) − π(y), a non-zero integer of
// absolute value at most U − 1, so their product is at most U − 1, and the product of all k primes is at
// most (U − 1)^|S| ≤ (U − 1)^d. The planner takes the smallest primes, 2, 3, 5, …, until their product
// passes (U − 1)^d: the least memory, since log p / p falls as p grows.
//
// Beyond the zone the filter is a Bloom filter of unequal segments: after n random keys segment i has a
// fraction 1 − (1 − 1/p_i)^n of its bits set, and a key absent from the set passes with probability about
// ∏ (1 − (1 − 1/p_i)^n). π changes nothing in the proof (it holds for every set) but makes sequential and
// strided keys fill the segments as random keys do, so that model holds for them too. π is a four-round
// Feistel network on the smallest even number of bits that holds U − 1, cycle-walked into [0, U).
//
// Keys are 8-byte integers (integer_key_hasher: no hash). Inserting a key outside the universe, or one that
// is not 8 bytes long (a string), is an invalid_argument; looking one up answers "no", which is exact: it
// cannot be in the set.
//
// Thread safety: const calls may run concurrently; insert, merge and intersect need exclusive access.
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "blume/detail/key_interface.hpp"
#include "blume/detail/primes.hpp"
#include "blume/error.hpp"
#include "blume/hash.hpp"
#include "blume/io/parameters.hpp"
#include "blume/io/serialization.hpp"
#include "blume/kind.hpp"
#include "blume/plan.hpp"
#include "blume/storage.hpp"

namespace blume {

/// What a zone costs: the primes of an EGH filter and a classic filter of the same memory beside it.
struct egh_plan {
  integer_universe universe;
  std::uint64_t zone = 0;                       // d: no false positive while the filter holds at most d keys
  std::vector<std::uint32_t> primes;            // the segments' sizes, increasing
  std::uint64_t bits = 0;                       // Σ primes
  std::uint64_t bytes = 0;                      // the payload: the primes, then the bit array
  double classic_fpr_log2 = 0;                  // log2 of the rate of a classic filter of `bits` bits holding d
                                                // keys at its best k (as a log: it is often below 2^-1074)
  std::uint64_t classic_bits_for_universe = 0;  // the bits a classic filter needs so that, holding d keys,
                                                // it expects fewer than one false positive in the universe
};

namespace detail {

/// log2 of (U − 1)^d, the bound the product of the primes must pass, and the slack every comparison with
/// it keeps. The sums of logarithms differ between platforms by far less than the slack (k·2^-52
/// relative), and the planner keeps twice the slack a reader asks for, so a file one machine wrote
/// proves its zone on every other.
inline double egh_zone_log2(integer_universe u, std::uint64_t zone) noexcept {
  return u.largest <= 1 ? 0.0 : static_cast<double>(zone) * std::log2(static_cast<double>(u.largest));
}
inline double egh_slack(double bound) noexcept { return 1e-9 * bound + 1e-9; }

/// Whether primes (distinct, as a reader has checked) prove a zone of d keys: Σ log2 p > log2 (U − 1)^d.
inline bool egh_zone_holds(std::span<const std::uint32_t> primes, integer_universe u, std::uint64_t zone,
                           double slack_factor = 1.0) noexcept {
  double sum = 0;
  for (const std::uint32_t p : primes) sum += std::log2(static_cast<double>(p));
  const double bound = egh_zone_log2(u, zone);
  return !primes.empty() && sum > bound + slack_factor * egh_slack(bound);
}

/// x mod p without a division (Lemire, Kaser & Kurz, "Faster remainder by direct computation", 2019):
/// with M = ⌈2^128 / p⌉, x mod p = ⌊((M·x mod 2^128) · p) / 2^128⌋, exact for every 64-bit x and p < 2^32.
struct fast_modulus {
  uint128_t magic = 0;
  std::uint64_t p = 1;
  fast_modulus() = default;
  explicit fast_modulus(std::uint32_t prime) noexcept : magic(~uint128_t{0} / prime + 1), p(prime) {}
  std::uint64_t operator()(std::uint64_t x) const noexcept {
    const uint128_t low = magic * x;
    const uint128_t below = (static_cast<uint128_t>(static_cast<std::uint64_t>(low)) * p) >> 64;
    return static_cast<std::uint64_t>((static_cast<uint128_t>(static_cast<std::uint64_t>(low >> 64)) * p + below) >>
                                      64);
  }
};

/// The seeded permutation of [0, U) the filter applies before its residues: a balanced four-round Feistel
/// network on 2h bits (2h ≥ the bits of U − 1), cycle-walked: a value at or above U is permuted again until
/// it falls below, which keeps the map a bijection of [0, U) (at most 4 steps on average, since 2^(2h) < 4U).
class universe_permutation {
 public:
  universe_permutation(integer_universe u, std::uint64_t seed) noexcept : largest_(u.largest) {
    const int width = std::max(1, static_cast<int>(std::bit_width(u.largest)));
    half_ = (width + 1) / 2;
    mask_ = half_ == 32 ? 0xffffffffULL : (std::uint64_t{1} << half_) - 1;
    std::uint64_t s = seed;
    for (auto& k : keys_) k = splitmix64_mix(s += 0x9e3779b97f4a7c15ULL);  // splitmix64's sequence from the seed
  }

  std::uint64_t operator()(std::uint64_t x) const noexcept {
    do x = round_trip(x);
    while (x > largest_);
    return x;
  }

 private:
  std::uint64_t round_trip(std::uint64_t x) const noexcept {
    std::uint64_t left = (x >> half_) & mask_, right = x & mask_;
    for (const std::uint64_t k : keys_) {
      const std::uint64_t next = left ^ (murmur3_fmix64(right ^ k) & mask_);  // every bit of right reaches the mask
      left = right;
      right = next;
    }
    return (left << half_) | right;
  }
  std::uint64_t largest_;
  int half_ = 1;
  std::uint64_t mask_ = 1;
  std::uint64_t keys_[4]{};
};

}  // namespace detail

class egh_filter : public detail::key_interface<egh_filter> {
  using key_calls = detail::key_interface<egh_filter>;

 public:
  using key_calls::contains;
  using key_calls::hash;
  using key_calls::insert;
  static constexpr filter_kind kind{25};
  static constexpr std::string_view name = "egh";
  static constexpr kind_input input = kind_input::integers;
  static constexpr bool is_static = false;
  static constexpr std::string_view plan_refusal =
      "an egh filter is planned from its universe and its zone (plan_egh(universe, zone), or plan_egh_for_bits "
      "for a memory budget), not from a key count and a rate";
  using hasher_type = integer_key_hasher;

  /// The planners' view (kind_model): m bits in k segments, the first k primes. Outside any zone: the
  /// rate of n random keys in those segments (the zone needs the universe, which m and k do not give).
  static std::uint64_t plan_bytes(std::uint64_t bits) noexcept { return (bits + 7) / 8; }
  static double model_fpr(double n, double /*m*/, double k) {
    const auto count = static_cast<std::size_t>(k);
    std::vector<std::uint32_t> primes;
    for (std::uint32_t limit = 64; primes.size() < count; limit *= 2) primes = detail::primes_below(limit);
    primes.resize(count);
    return rate_of(primes, n);
  }

  /// The rate a key absent from n random keys of the universe passes at, in segments of `primes` bits:
  /// ∏ (1 − (1 − 1/p)^n). Inside a zone the real rate is 0.
  static double rate_of(std::span<const std::uint32_t> primes, double n) noexcept {
    double rate = 1;
    for (const std::uint32_t p : primes) rate *= -std::expm1(n * std::log1p(-1.0 / p));
    return rate;
  }

  /// The least memory with a zone of `zone` keys in `u` (plan_egh), and the largest zone `bits` bits buy
  /// (plan_egh_for_bits): what surfaces call through the kind, for kind_input::integers.
  static egh_plan plan_for_zone(integer_universe u, std::uint64_t zone);
  static egh_plan plan_for_budget(integer_universe u, std::uint64_t bits);
  static egh_filter for_zone(integer_universe u, std::uint64_t zone,
                             std::uint64_t seed = integer_key_hasher::default_seed);

  /// An empty filter of plan `p` (plan_egh), its permutation seeded with `seed`.
  explicit egh_filter(const egh_plan& p, std::uint64_t seed = integer_key_hasher::default_seed)
      : egh_filter(p.universe, p.zone, p.primes, seed) {}

  /// Inserts an integer key of the universe; invalid_argument for a key outside it or not 8 bytes long.
  /// True when it set a bit.
  bool insert(const digest& d) {
    if (d.high != 0)
      throw invalid_argument("egh filter: keys are integers (8 bytes); map other keys to integer ids first");
    if (!universe_.contains(d.low))
      throw invalid_argument("egh filter: key " + std::to_string(d.low) + " is outside the universe [0, " +
                             universe_.size_text() + ")");
    const std::uint64_t y = permutation_(d.low);
    bool fresh = false;
    for (std::size_t i = 0; i < moduli_.size(); ++i) {
      const std::uint64_t bit = offsets_[i] + moduli_[i](y);
      std::uint64_t& w = words()[bit / 64];
      const std::uint64_t mask = std::uint64_t{1} << (bit % 64);
      fresh |= (w & mask) == 0;
      w |= mask;
    }
    ++inserted_;
    return fresh;
  }

  /// Whether the key may be in the set: never for a key outside the universe or not 8 bytes long.
  bool contains(const digest& d) const noexcept {
    if (d.high != 0 || !universe_.contains(d.low)) return false;
    const std::uint64_t y = permutation_(d.low);
    // The largest segments first: they are the sparsest, so an absent key usually stops at the first test.
    for (std::size_t i = moduli_.size(); i-- > 0;) {
      const std::uint64_t bit = offsets_[i] + moduli_[i](y);
      if ((words()[bit / 64] >> (bit % 64) & 1) == 0) return false;
    }
    return true;
  }

  template <std::ranges::input_range R>
  void insert_many(const R& keys) {
    for (auto&& k : keys) insert(k);
  }

  /// Union: the filter of both sets (its zone holds while the union has at most d keys).
  void merge(const egh_filter& other) {
    check_compatible(other);
    for (std::size_t i = 0; i < word_count(); ++i) words()[i] |= other.words()[i];
    inserted_ += other.inserted_;
  }
  /// Intersection of the bit arrays: it holds every key of both sets. When both filters are inside their
  /// zone it answers for exactly the keys they share (a key only in A misses a bit of B), and it is inside its
  /// zone; otherwise a key of one set can pass the other by a false positive, and the result is past its zone.
  void intersect(const egh_filter& other) {
    check_compatible(other);
    for (std::size_t i = 0; i < word_count(); ++i) words()[i] &= other.words()[i];
    inserted_ = in_zone() && other.in_zone() ? std::min(inserted_, other.inserted_)
                                             : std::max(inserted_, other.inserted_);
  }
  void clear() noexcept {
    std::fill_n(words(), word_count(), 0);
    inserted_ = 0;
  }

  integer_universe universe() const noexcept { return universe_; }
  std::uint64_t zone() const noexcept { return zone_; }
  std::span<const std::uint32_t> primes() const noexcept { return primes_; }
  std::uint64_t bits() const noexcept { return bits_; }
  std::uint32_t hashes() const noexcept { return static_cast<std::uint32_t>(primes_.size()); }
  std::uint64_t seed() const noexcept { return seed_; }
  integer_key_hasher hasher() const noexcept { return integer_key_hasher(seed_); }
  std::uint64_t inserted() const noexcept { return inserted_; }
  std::size_t size_in_bytes() const noexcept { return sizeof(*this) + storage_.size() + primes_.size() * 28; }

  /// Whether no key of the universe can be a false positive now: at most d keys were inserted.
  bool in_zone() const noexcept { return inserted_ <= zone_; }
  /// Set bits in segment i.
  std::uint64_t segment_set_bits(std::size_t i) const noexcept {
    std::uint64_t n = 0;
    for (std::uint64_t b = offsets_[i]; b < offsets_[i] + primes_[i]; ++b) n += words()[b / 64] >> (b % 64) & 1;
    return n;
  }
  std::uint64_t set_bits() const noexcept {
    std::uint64_t n = 0;
    for (std::size_t i = 0; i < word_count(); ++i) n += static_cast<std::uint64_t>(std::popcount(words()[i]));
    return n;
  }
  /// The rate now: 0 inside the zone; beyond it the product of the segments' fill, the chance that a
  /// random key of the universe finds its bit set in every segment.
  double predicted_fpr() const noexcept {
    if (in_zone()) return 0.0;
    double rate = 1;
    for (std::size_t i = 0; i < primes_.size(); ++i)
      rate *= static_cast<double>(segment_set_bits(i)) / static_cast<double>(primes_[i]);
    return rate;
  }
  /// The model's rate after n distinct random keys: 0 for n ≤ d, rate_of(primes, n) beyond.
  double model_fpr_at(double n) const noexcept { return n <= static_cast<double>(zone_) ? 0.0 : rate_of(primes_, n); }

  friend bool operator==(const egh_filter& a, const egh_filter& b) noexcept {
    return a.universe_ == b.universe_ && a.zone_ == b.zone_ && a.seed_ == b.seed_ && a.inserted_ == b.inserted_ &&
           a.primes_ == b.primes_ &&
           std::equal(a.words(), a.words() + a.word_count(), b.words(), b.words() + b.word_count());
  }

  // ---- serialization hooks (format.hpp) --------------------------------------------------------------
  // bits = Σ p_i, hashes = k, layout 0, extra = {U − 1, d, 0, 0, 0, 0}. Payload: the k primes as u32
  // (increasing), zero-padded to a multiple of 8 bytes, then ⌈bits/64⌉ u64 words; segment i is bits
  // [p_1 + … + p_(i−1), … + p_i) of the array, and bits past the last segment are zero.

  filter_parameters parameters() const noexcept {
    filter_parameters p;
    p.primary = bits_;
    p.secondary = static_cast<std::uint32_t>(primes_.size());
    p.extra = {universe_.largest, zone_, 0, 0, 0, 0};
    return p;
  }
  template <class Fn>
  void for_each_payload_segment(Fn&& fn) const {
    fn(std::span<const std::byte>(storage_.data(), storage_.size()));
  }
  static std::uint64_t payload_size(const filter_parameters& p) {
    if (p.layout != 0) throw invalid_argument("layout " + std::to_string(p.layout) + " is not 0");
    for (std::size_t i = 2; i < p.extra.size(); ++i)
      if (p.extra[i] != 0) throw invalid_argument("reserved header bytes are not zero");
    if (p.secondary == 0 || p.primary > max_filter_bits || p.primary < 2 * std::uint64_t{p.secondary})
      throw invalid_argument("egh filter of " + std::to_string(p.primary) + " bits cannot hold " +
                             std::to_string(p.secondary) + " prime segments");
    if (p.extra[0] == 0) throw invalid_argument("egh universe of 1 key");
    if (p.extra[1] == 0 || p.extra[1] - 1 > p.extra[0])
      throw invalid_argument("egh zone of " + std::to_string(p.extra[1]) + " keys in a universe of " +
                             integer_universe{p.extra[0]}.size_text());
    return primes_bytes(p.secondary) + (p.primary + 63) / 64 * 8;
  }
  static egh_filter from_payload(const filter_parameters& p, std::uint64_t seed, std::uint64_t inserted,
                                 byte_storage payload) {
    std::vector<std::uint32_t> primes(p.secondary);
    std::memcpy(primes.data(), payload.data(), primes.size() * 4);
    std::uint64_t sum = 0;
    for (std::size_t i = 0; i < primes.size(); ++i) {
      if ((i > 0 && primes[i] <= primes[i - 1]) || !detail::is_prime(primes[i]))
        throw format_error("egh segment " + std::to_string(i) + " has " + std::to_string(primes[i]) +
                           " bits: the segments must be increasing primes");
      sum += primes[i];
    }
    if (sum != p.primary)
      throw format_error("egh segments hold " + std::to_string(sum) + " bits but the header says " +
                         std::to_string(p.primary));
    const integer_universe u{p.extra[0]};
    if (!detail::egh_zone_holds(primes, u, p.extra[1]))
      throw format_error("egh primes do not prove a zone of " + std::to_string(p.extra[1]) + " keys in [0, " +
                         u.size_text() + ")");
    const std::size_t pad = primes_bytes(p.secondary);
    for (std::size_t i = primes.size() * 4; i < pad; ++i)
      if (payload.data()[i] != std::byte{0}) throw format_error("egh padding after the primes is not zero");
    if (p.primary % 64 != 0) {
      std::uint64_t last;
      std::memcpy(&last, payload.data() + payload.size() - 8, 8);
      if (last >> (p.primary % 64) != 0) throw format_error("egh bits past the last segment are set");
    }
    egh_filter f(u, p.extra[1], std::move(primes), seed, std::move(payload));
    f.inserted_ = inserted;
    // n keys set at most n bits of a segment: a file inside its zone must not show more, since lookups then
    // answer "yes" on its word.
    if (f.in_zone())
      for (std::size_t i = 0; i < f.primes_.size(); ++i)
        if (f.segment_set_bits(i) > inserted)
          throw format_error("egh segment " + std::to_string(i) + " has " + std::to_string(f.segment_set_bits(i)) +
                             " bits set, more than the " + std::to_string(inserted) + " keys inserted");
    return f;
  }

 private:
  static std::size_t primes_bytes(std::uint64_t k) noexcept { return static_cast<std::size_t>((4 * k + 7) / 8 * 8); }

  egh_filter(integer_universe u, std::uint64_t zone, std::vector<std::uint32_t> primes, std::uint64_t seed,
             byte_storage storage = {})
      : universe_(u), zone_(zone), seed_(seed), primes_(std::move(primes)), permutation_(u, seed) {
    if (primes_.empty()) throw invalid_argument("egh filter: no segments");
    bits_ = 0;
    offsets_.reserve(primes_.size());
    moduli_.reserve(primes_.size());
    for (const std::uint32_t prime : primes_) {
      offsets_.push_back(bits_);
      moduli_.emplace_back(prime);
      bits_ += prime;
    }
    if (bits_ > max_filter_bits)
      throw invalid_argument("egh filter of " + std::to_string(bits_) + " bits exceeds " +
                             std::to_string(max_filter_bits));
    if (storage.size() == 0) {
      storage_ = byte_storage::allocate(primes_bytes(primes_.size()) + (bits_ + 63) / 64 * 8);
      std::memcpy(storage_.data(), primes_.data(), primes_.size() * 4);
    } else {
      storage_ = std::move(storage);
    }
  }

  void check_compatible(const egh_filter& other) const {
    if (universe_ != other.universe_ || zone_ != other.zone_ || primes_ != other.primes_ || seed_ != other.seed_)
      throw incompatible_filters("egh filters differ in universe, zone, primes or seed");
  }

  std::size_t word_count() const noexcept { return static_cast<std::size_t>((bits_ + 63) / 64); }
  std::uint64_t* words() noexcept {
    return reinterpret_cast<std::uint64_t*>(storage_.data() + primes_bytes(primes_.size()));
  }
  const std::uint64_t* words() const noexcept {
    return reinterpret_cast<const std::uint64_t*>(storage_.data() + primes_bytes(primes_.size()));
  }

  integer_universe universe_;
  std::uint64_t zone_ = 0, seed_ = 0, inserted_ = 0, bits_ = 0;
  std::vector<std::uint32_t> primes_;
  std::vector<std::uint64_t> offsets_;
  std::vector<detail::fast_modulus> moduli_;
  detail::universe_permutation permutation_;
  byte_storage storage_;  // the payload as written: the primes, their padding, the bit array
};

/// The EGH filter with the least memory whose zone is `zone` keys of universe `u`: the smallest primes
/// whose product passes (U − 1)^zone. invalid_argument for a zone of 0, one larger than the universe, or one
/// that needs more than max_filter_bits.
inline egh_plan plan_egh(integer_universe u, std::uint64_t zone) {
  if (zone == 0) throw invalid_argument("egh filter: the zone must hold at least 1 key");
  if (zone - 1 > u.largest)
    throw invalid_argument("egh filter: a zone of " + std::to_string(zone) + " keys exceeds the universe of " +
                           u.size_text());
  const double bound = detail::egh_zone_log2(u, zone);
  const double need = bound + 2 * detail::egh_slack(bound);
  // θ(x) = Σ_{p ≤ x} ln p > 0.8·x for x ≥ 100 (Rosser & Schoenfeld), so primes below need·ln 2 / 0.8 + 100
  // suffice; the estimate of their sum, x² / (2 ln x), refuses an impossible zone before the sieve runs.
  const double limit = need * std::log(2.0) / 0.8 + 100;
  if (limit * limit / (2 * std::log(limit)) > 4.0 * static_cast<double>(max_filter_bits))
    throw invalid_argument("egh filter: a zone of " + std::to_string(zone) + " keys in a universe of " + u.size_text() +
                           " needs more than " + std::to_string(max_filter_bits) + " bits");
  const std::vector<std::uint32_t> all = detail::primes_below(static_cast<std::uint32_t>(limit) + 1);
  egh_plan plan;
  plan.universe = u;
  plan.zone = zone;
  double sum = 0;
  for (const std::uint32_t p : all) {
    plan.primes.push_back(p);
    plan.bits += p;
    sum += std::log2(static_cast<double>(p));
    if (sum > need) break;
  }
  if (plan.bits > max_filter_bits)
    throw invalid_argument("egh filter: a zone of " + std::to_string(zone) + " keys needs " +
                           std::to_string(plan.bits) + " bits, more than " + std::to_string(max_filter_bits));
  plan.bytes = (4 * plan.primes.size() + 7) / 8 * 8 + (plan.bits + 63) / 64 * 8;
  const double d = static_cast<double>(zone), m = static_cast<double>(plan.bits);
  const double k = std::max(1.0, std::round(m / d * std::log(2.0)));
  plan.classic_fpr_log2 = k * std::log2(-std::expm1(-k * d / m));
  // A classic filter at its best k holding d keys has rate 2^(−m ln2 / d): fewer than one expected false
  // positive among the U − d absent keys needs m ≥ d · log2(U − d) / ln 2.
  const double absent = std::max(1.0, u.size() - d);
  plan.classic_bits_for_universe = static_cast<std::uint64_t>(std::ceil(d * std::log2(absent) / std::log(2.0)));
  return plan;
}

/// The largest zone a budget of `bits` bits buys in universe `u`, and that zone's plan (which may use fewer
/// bits). invalid_argument when the budget cannot prove a zone of 1 key.
inline egh_plan plan_egh_for_bits(integer_universe u, std::uint64_t bits) {
  if (bits > max_filter_bits)
    throw invalid_argument("egh filter: a budget of " + std::to_string(bits) + " bits exceeds " +
                           std::to_string(max_filter_bits));
  const double limit = std::min(std::sqrt(2.0 * static_cast<double>(bits) * 40.0) + 100, 4294967295.0);
  double sum = 0;
  std::uint64_t used = 0;
  for (const std::uint32_t p : detail::primes_below(static_cast<std::uint32_t>(limit))) {
    if (used + p > bits) break;
    used += p;
    sum += std::log2(static_cast<double>(p));
  }
  const double per_key = u.largest <= 1 ? 0.0 : std::log2(static_cast<double>(u.largest));
  std::uint64_t zone = per_key == 0 ? u.largest + 1 : static_cast<std::uint64_t>(sum / per_key);
  zone = std::min(zone, u.largest == ~std::uint64_t{0} ? zone : u.largest + 1);
  // The planner's own test decides: step down until the zone's plan fits.
  while (zone > 0) {
    const double bound = detail::egh_zone_log2(u, zone);
    if (sum > bound + 2 * detail::egh_slack(bound)) break;
    --zone;
  }
  if (zone == 0)
    throw invalid_argument("egh filter: " + std::to_string(bits) +
                           " bits cannot prove a zone of 1 key in a universe of " + u.size_text() + " (it needs " +
                           std::to_string(plan_egh(u, 1).bits) + ")");
  return plan_egh(u, zone);
}

inline egh_plan egh_filter::plan_for_zone(integer_universe u, std::uint64_t zone) { return plan_egh(u, zone); }
inline egh_plan egh_filter::plan_for_budget(integer_universe u, std::uint64_t bits) {
  return plan_egh_for_bits(u, bits);
}
inline egh_filter egh_filter::for_zone(integer_universe u, std::uint64_t zone, std::uint64_t seed) {
  return egh_filter(plan_egh(u, zone), seed);
}

static_assert(serializable_filter<egh_filter>);

}  // namespace blume
