// SPDX-License-Identifier: Apache-2.0
// Hashing: a key is hashed exactly once into a 128-bit digest; every probe, block choice and fingerprint
// of every filter derives from that digest. The hash function is a policy (see `hasher` below) so a filter
// can be built on another function (for example MurmurHash64A for RedisBloom data) without touching it.
#pragma once

#include <bit>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <type_traits>

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
};

/// A hasher maps bytes to a digest under a 64-bit seed fixed at construction.
template <class H>
concept hasher = std::copy_constructible<H> && requires(const H& h, const void* data, std::size_t len) {
  { H::id } -> std::convertible_to<hash_id>;
  { h(data, len) } -> std::same_as<digest>;
  { h.seed() } -> std::same_as<std::uint64_t>;
  requires std::constructible_from<H, std::uint64_t>;
};

/// XXH3-128 with a seed: fast on short keys and of high statistical quality, so the two 64-bit halves
/// can serve as the two independent hashes of double hashing (Kirsch–Mitzenmacher 2006).
class xxh3_hasher {
 public:
  static constexpr hash_id id = hash_id::xxh3_128;
  static constexpr std::uint64_t default_seed = 0x626c756d65ULL;  // "blume"

  explicit constexpr xxh3_hasher(std::uint64_t seed = default_seed) noexcept : seed_(seed) {}

  digest operator()(const void* data, std::size_t len) const noexcept {
    const XXH128_hash_t h = XXH3_128bits_withSeed(data, len, seed_);
    return {h.low64, h.high64};
  }
  std::uint64_t seed() const noexcept { return seed_; }

 private:
  std::uint64_t seed_;
};
static_assert(hasher<xxh3_hasher>);

// ---------------------------------------------------------------------------------------------------------
// Keys. What can be inserted and looked up:
//  * anything convertible to std::string_view (std::string, const char*, string literals): its bytes;
//  * every integer and enum type: its value widened to 64 bits (sign-extended for signed types) and hashed
//    as 8 little-endian bytes, so 5, 5u and 5ll are the same key (and -1 equals UINT64_MAX);
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
    return h(&v, sizeof v);
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
__extension__ typedef unsigned __int128 uint128_t;

constexpr std::uint64_t reduce(std::uint64_t x, std::uint64_t n) noexcept {
  return static_cast<std::uint64_t>((static_cast<uint128_t>(x) * n) >> 64);
}

}  // namespace blume
