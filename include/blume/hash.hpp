// Hashing: a key is hashed exactly once into a 128-bit digest; every probe, block choice and fingerprint
// of every filter derives from that digest. The hash function is a policy (see `hasher` below) so a filter
// can be built on another function (for example MurmurHash64A for RedisBloom data) without touching it.
#pragma once

#include <bit>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <type_traits>

#include "blume/error.hpp"

// xxHash 0.8.1 (Debian 12's) reads input through a packed struct when GCC targets ARM, a strict-aliasing
// hazard once inlined: GCC 12 at -O3 for aarch64 then hashes integer keys from garbage (-1 and the
// enumerators of one enum all got the same digest), warning "maybe uninitialized". memcpy reads are the
// default on x86 anyway, and as fast.
#ifndef XXH_FORCE_MEMORY_ACCESS
#define XXH_FORCE_MEMORY_ACCESS 0
#endif
#define XXH_INLINE_ALL
#include <xxhash.h>

namespace blume {

static_assert(std::endian::native == std::endian::little,
              "blume's storage and file format assume a little-endian host");

/// The 128-bit result of hashing one key. `low` and `high` are independent 64-bit halves.
struct digest {
  std::uint64_t low = 0;
  std::uint64_t high = 0;
  friend constexpr bool operator==(const digest&, const digest&) = default;
};

/// Identifies the hash function in serialized filters, so a file is never read with the wrong one.
enum class hash_id : std::uint16_t {
  xxh3_128 = 1,
  murmur64a_pair = 2,  // RedisBloom's Bloom hash (redisbloom.hpp)
  murmur64a = 3,       // RedisBloom's cuckoo hash (redisbloom.hpp)
  xxh3_mx128 = 4,      // strings as xxh3_128; integer keys through mx128 (below). New filters' default.
};

/// How tools name a hash id.
constexpr std::string_view hash_name(hash_id id) noexcept {
  switch (id) {
    case hash_id::xxh3_128: return "xxh3-128";
    case hash_id::xxh3_mx128: return "xxh3-128, integers mx128";
    case hash_id::murmur64a_pair:
    case hash_id::murmur64a: return "murmur64a";
  }
  return "unknown";
}

/// A hasher maps bytes to a digest under a 64-bit seed fixed at construction. `id()` names the function
/// in files; two hashers are equal when they compute the same digests. A hasher may also offer
/// `integer(std::uint64_t)`, the digest of an integer key (hash_key uses it), and, to read files of
/// several ids, a constructor `H(seed, id)` with `static bool reads(hash_id)`.
template <class H>
concept hasher = std::copy_constructible<H> && std::equality_comparable<H> &&
                 requires(const H& h, const void* data, std::size_t len) {
                   { h(data, len) } -> std::same_as<digest>;
                   { h.seed() } -> std::same_as<std::uint64_t>;
                   { h.id() } -> std::same_as<hash_id>;
                   requires std::constructible_from<H, std::uint64_t>;
                 };

namespace detail {
constexpr std::uint64_t splitmix64(std::uint64_t x) noexcept {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}
}  // namespace detail

__extension__ typedef unsigned __int128 uint128_t;

/// mx128: the digest of a 64-bit integer key in two 64×64→128-bit multiplies and one 64-bit one. One multiply (Boost.Bloom's
/// mulx mix) is not enough for us: the low bits of a product see only the low bits of the key (multiples
/// of 2^32 would all share a block's lanes), and sequential keys give block indices spread more evenly
/// than random ones, so the measured rate falls below the Poisson model the planner promises. The second
/// multiply takes both halves of the first as factors, so every key bit reaches every output bit;
/// `low` is the middle 64 bits of that product, its best-mixed ones, and `high` its two halves folded
/// and finalised by one more (64-bit) multiply.
/// The three keys come from the seed once, at construction (docs/format.md, "Hashing").
struct mx128_keys {
  std::uint64_t k0, k1, k2;
  explicit constexpr mx128_keys(std::uint64_t seed) noexcept
      : k0(detail::splitmix64(seed)), k1(detail::splitmix64(seed + 0x9e3779b97f4a7c15ULL)),
        k2(detail::splitmix64(seed + 2 * 0x9e3779b97f4a7c15ULL)) {}

  constexpr digest operator()(std::uint64_t v) const noexcept {
    const uint128_t p = static_cast<uint128_t>(v ^ k0) * 0x9e3779b97f4a7c15ULL;
    const uint128_t q =
        static_cast<uint128_t>(static_cast<std::uint64_t>(p) ^ k1) * (static_cast<std::uint64_t>(p >> 64) ^ k2);
    const auto lo = static_cast<std::uint64_t>(q), hi = static_cast<std::uint64_t>(q >> 64);
    // The folded halves share bits with the middle ones; a finaliser decorrelates them (block choice and
    // in-block bits come from different halves, and blocked filters measured 22σ above the model without it).
    std::uint64_t fold = lo ^ hi;
    fold ^= fold >> 32;
    fold *= 0xd6e8feb86659fd93ULL;
    return {(lo >> 32) | (hi << 32), fold ^ (fold >> 32)};
  }
};

/// XXH3-128 with a seed: fast on short keys and of high statistical quality, so the two 64-bit halves
/// can serve as the two independent hashes of double hashing (Kirsch–Mitzenmacher 2006). Integer keys
/// go through mx128 under hash_id::xxh3_mx128 (the default for new filters: a quarter of XXH3's work on
/// 8 bytes), and through XXH3 as 8 bytes under hash_id::xxh3_128, the id of files written before it.
class xxh3_hasher {
 public:
  static constexpr std::uint64_t default_seed = 0x626c756d65ULL;  // "blume"

  static constexpr bool reads(hash_id id) noexcept { return id == hash_id::xxh3_128 || id == hash_id::xxh3_mx128; }

  explicit constexpr xxh3_hasher(std::uint64_t seed = default_seed, hash_id id = hash_id::xxh3_mx128)
      : seed_(seed), mx_(seed), integers_by_mx_(id == hash_id::xxh3_mx128) {
    if (!reads(id))
      throw invalid_argument("xxh3_hasher computes hash ids 1 and 4, not " + std::to_string(static_cast<int>(id)));
  }

  digest operator()(const void* data, std::size_t len) const noexcept {
    const XXH128_hash_t h = XXH3_128bits_withSeed(data, len, seed_);
    return {h.low64, h.high64};
  }
  digest integer(std::uint64_t v) const noexcept { return integers_by_mx_ ? mx_(v) : (*this)(&v, sizeof v); }

  std::uint64_t seed() const noexcept { return seed_; }
  hash_id id() const noexcept { return integers_by_mx_ ? hash_id::xxh3_mx128 : hash_id::xxh3_128; }
  friend bool operator==(const xxh3_hasher& a, const xxh3_hasher& b) noexcept {
    return a.seed_ == b.seed_ && a.integers_by_mx_ == b.integers_by_mx_;
  }

 private:
  std::uint64_t seed_;
  mx128_keys mx_;
  bool integers_by_mx_;
};
static_assert(hasher<xxh3_hasher>);

/// Whether a filter over H can read a file whose header names hash function `id`.
template <hasher H>
bool hasher_reads(hash_id id) {
  if constexpr (requires {
                  { H::reads(id) } -> std::same_as<bool>;
                })
    return H::reads(id);
  else return H(std::uint64_t{0}).id() == id;
}

/// The hasher a file names by seed and id; the caller has checked hasher_reads<H>(id).
template <hasher H>
H hasher_for(std::uint64_t seed, hash_id id) {
  if constexpr (std::constructible_from<H, std::uint64_t, hash_id>) return H(seed, id);
  else return H(seed);
}

// ---------------------------------------------------------------------------------------------------------
// Keys. What can be inserted and looked up:
//  * anything convertible to std::string_view (std::string, const char*, string literals): its bytes;
//  * every integer and enum type: its value widened to 64 bits (sign-extended for signed types), so 5, 5u
//    and 5ll are the same key (and -1 equals UINT64_MAX); the hasher's `integer()` digests that value
//    where it has one, and otherwise its 8 little-endian bytes are hashed;
//  * a user type T, in one of two ways:
//      - a function `blume_key_bytes(const T&)`, found by argument-dependent lookup, returning something
//        convertible to std::string_view (the bytes that identify the key), or
//      - a specialisation `template <> struct blume::key_hash<T>` with
//        `template <hasher H> digest operator()(const H&, const T&) const` for full control.
// ---------------------------------------------------------------------------------------------------------

template <class T>
struct key_hash;  // primary template left undefined: specialise it for your type, or use blume_key_bytes

namespace detail {
template <class T>
concept string_like = std::convertible_to<const T&, std::string_view>;
template <class T>
concept integer_like = !string_like<T> && (std::integral<T> || std::is_enum_v<T>);
template <class T>
struct widened {
  using type = std::conditional_t<std::is_signed_v<T>, std::int64_t, std::uint64_t>;
};
template <class T>
  requires std::is_enum_v<T>
struct widened<T> : widened<std::underlying_type_t<T>> {};
template <class T>
concept has_key_bytes = requires(const T& v) {
  { blume_key_bytes(v) } -> std::convertible_to<std::string_view>;
};
template <class T>
concept has_key_hash_specialisation = requires(const xxh3_hasher& h, const T& v) {
  { key_hash<T>{}(h, v) } -> std::same_as<digest>;
};
}  // namespace detail

/// A type the filters accept as a key.
template <class T>
concept key = detail::string_like<T> || detail::integer_like<T> || detail::has_key_bytes<T> ||
              detail::has_key_hash_specialisation<T>;

/// Hash one key with hasher `h`. The single entry point every filter uses.
template <hasher H, key K>
inline digest hash_key(const H& h, const K& k) noexcept {
  if constexpr (detail::string_like<K>) {
    const std::string_view s = k;
    return h(s.data(), s.size());
  } else if constexpr (detail::integer_like<K>) {
    const std::uint64_t v = static_cast<std::uint64_t>(static_cast<typename detail::widened<K>::type>(k));
    if constexpr (requires { h.integer(v); }) return h.integer(v);
    else return h(&v, sizeof v);
  } else if constexpr (detail::has_key_bytes<K>) {
    const std::string_view s = blume_key_bytes(k);
    return h(s.data(), s.size());
  } else {
    return key_hash<K>{}(h, k);
  }
}

/// A multiply–xorshift finaliser: every input bit reaches the high bits of the result, which is what
/// reduce() consumes. Used where a probe sequence is built by additions, which only move low bits.
constexpr std::uint64_t mix(std::uint64_t x) noexcept {
  x ^= x >> 32;
  x *= 0xd6e8feb86659fd93ULL;
  return x ^ (x >> 32);
}

/// Lemire's multiply-high range reduction: maps a uniform 64-bit x to [0, n) without a division,
/// for any n (not only powers of two). Uses the high bits of x, so callers feed it well-mixed values.

constexpr std::uint64_t reduce(std::uint64_t x, std::uint64_t n) noexcept {
  return static_cast<std::uint64_t>((static_cast<uint128_t>(x) * n) >> 64);
}

}  // namespace blume
