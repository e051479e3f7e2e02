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
  xxh3_64 = 4,         // xxh3_64_hasher: one 64-bit hash in both halves of the digest
  integer_key = 5,     // integer_key_hasher: no hash, an 8-byte key's own value (egh)
  flyhash = 6,         // no key is hashed: a novelty filter's projection, drawn from its seed (detail/flyhash.hpp)
};

/// The hash function's name, as the tools print it ("xxh3-64").
constexpr std::string_view hash_name(hash_id id) noexcept {
  switch (id) {
    case hash_id::xxh3_128: return "xxh3-128";
    case hash_id::murmur64a_pair: return "murmur64a-pair";
    case hash_id::murmur64a: return "murmur64a";
    case hash_id::xxh3_64: return "xxh3-64";
    case hash_id::integer_key: return "integer-key";
    case hash_id::flyhash: return "flyhash";
  }
  return "unknown";
}

/// A hasher maps bytes to a digest under a 64-bit seed fixed at construction.
template <class H>
concept hasher = std::copy_constructible<H> && requires(const H& h, const void* data, std::size_t len) {
  { H::id } -> std::convertible_to<hash_id>;
  { h(data, len) } -> std::same_as<digest>;
  { h.seed() } -> std::same_as<std::uint64_t>;
  requires std::constructible_from<H, std::uint64_t>;
};

/// A hasher that also takes a caller's prepared 64-bit hash of a key in place of the key (H::from_hash).
template <class H>
concept prehash_hasher = hasher<H> && requires(std::uint64_t h) {
  { H::from_hash(h) } -> std::same_as<digest>;
};

namespace detail {
/// The splitmix64 finaliser (Stafford's Mix13): a bijection of 64-bit values in which every input bit reaches
/// every output bit. Used where a value that is already a hash needs an independent companion, and (after
/// adding the golden-ratio step) as splitmix64's generator.
constexpr std::uint64_t splitmix64_mix(std::uint64_t x) noexcept {
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}
/// MurmurHash3's 64-bit finaliser (fmix64): another such bijection, with constants of its own.
constexpr std::uint64_t murmur3_fmix64(std::uint64_t x) noexcept {
  x = (x ^ (x >> 33)) * 0xff51afd7ed558ccdULL;
  x = (x ^ (x >> 33)) * 0xc4ceb9fe1a85ec53ULL;
  return x ^ (x >> 33);
}
}  // namespace detail

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

  /// The digest of a caller's own uniform 64-bit hash of a key (a prepared hash, in place of the key): the
  /// hash, and a bijective mix of it as the second half (distinct from the first for the kinds that probe
  /// with both, as double hashing does).
  /// (The splitmix64 finaliser, a bijection unrelated to XXH3's.)
  static constexpr digest from_hash(std::uint64_t h) noexcept { return {h, detail::splitmix64_mix(h)}; }

 private:
  std::uint64_t seed_;
};
static_assert(prehash_hasher<xxh3_hasher>);

/// XXH3-64 with a seed, for the kinds whose probes need no more than 64 bits of digest (the split-block
/// filter: its block from the high bits, its in-block key from the low 32). Both halves of the digest are
/// that one hash, so a kind that uses the halves as two independent hashes keeps xxh3_hasher. On 17 to 128
/// bytes it is half XXH3-128's multiplies. A key of exactly 8 bytes (every integer key, widened) takes
/// XXH3's own 4-to-8-byte path written out below with the seed's part computed once, at construction: the
/// value is XXH3_64bits_withSeed's, bit for bit (tests hold it to that), and a bijection of the key.
class xxh3_64_hasher {
 public:
  static constexpr hash_id id = hash_id::xxh3_64;
  /// 0, as RocksDB hashes its filters' keys: only unseeded can XXH3 fold its secret into the code's constants,
  /// about 10 fewer instructions on a 17-to-128-byte key (an e-mail address). A published default seed hides
  /// nothing from an adversary, so 0 costs no protection; another seed is still recorded in the file and used.
  static constexpr std::uint64_t default_seed = 0;

  explicit constexpr xxh3_64_hasher(std::uint64_t seed = default_seed) noexcept : seed_(seed), flip_(flip_of(seed)) {}

  digest operator()(const void* data, std::size_t len) const noexcept {
    std::uint64_t h;
    if (len == 8) {
      std::uint64_t bytes;
      std::memcpy(&bytes, data, 8);
      h = of_8_bytes(bytes);
    } else if (seed_ == 0) {
      h = XXH3_64bits(data, len);  // the same value as XXH3_64bits_withSeed(data, len, 0)
    } else {
      h = XXH3_64bits_withSeed(data, len, seed_);
    }
    return {h, h};
  }

  /// The hash of the 8 little-endian bytes of x: XXH3's rrmxmx finaliser (after Pelle Evensen's) of x, its
  /// halves swapped, xor the seeded part of XXH3's default secret.
  constexpr std::uint64_t of_8_bytes(std::uint64_t x) const noexcept {
    constexpr std::uint64_t multiplier = 0x9fb21c651e98df25ULL;
    x = std::rotl(x, 32) ^ flip_;
    x ^= std::rotl(x, 49) ^ std::rotl(x, 24);
    x *= multiplier;
    x ^= (x >> 35) + 8;
    x *= multiplier;
    return x ^ (x >> 28);
  }

  /// The digest of a caller's own uniform 64-bit hash of a key (a prepared hash, in place of the key).
  static constexpr digest from_hash(std::uint64_t h) noexcept { return {h, h}; }

  std::uint64_t seed() const noexcept { return seed_; }

 private:
  // XXH3's default secret, bytes 8–15 xor bytes 16–23 (read little-endian), less the seed with its low
  // half's bytes reversed into its high half: the constant XXH3 derives for 4-to-8-byte inputs.
  static constexpr std::uint64_t flip_of(std::uint64_t seed) noexcept {
    const std::uint64_t low = seed & 0xffffffffULL;
    const std::uint64_t reversed = ((low & 0xff) << 24) | ((low & 0xff00) << 8) | ((low >> 8) & 0xff00) | (low >> 24);
    return 0xc73ab174c5ecd5a2ULL - (seed ^ (reversed << 32));
  }

  std::uint64_t seed_;
  std::uint64_t flip_;
};
static_assert(prehash_hasher<xxh3_64_hasher>);

/// No hash at all: the value of an 8-byte key (every integer key, widened) read little-endian, for a kind
/// whose guarantee comes from deterministic functions of the key itself (egh: no false positive inside a
/// zone of a finite integer universe). A key of another length has no value: its digest says so
/// (high == not_an_integer), and such a kind refuses it. The seed is the kind's own (egh's permutation).
class integer_key_hasher {
 public:
  static constexpr hash_id id = hash_id::integer_key;
  static constexpr std::uint64_t default_seed = 0x626c756d65ULL;
  static constexpr std::uint64_t not_an_integer = 1;

  explicit constexpr integer_key_hasher(std::uint64_t seed = default_seed) noexcept : seed_(seed) {}

  digest operator()(const void* data, std::size_t len) const noexcept {
    if (len != 8) return {0, not_an_integer};
    std::uint64_t value;
    std::memcpy(&value, data, 8);
    return {value, 0};
  }
  std::uint64_t seed() const noexcept { return seed_; }

 private:
  std::uint64_t seed_;
};
static_assert(hasher<integer_key_hasher>);

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
