// SPDX-License-Identifier: Apache-2.0
// The key overloads every filter offers, written once. A filter answers for digests (insert(const digest&),
// contains(const digest&), and where it has them erase, count, try_insert, insert_concurrent, find); this
// base gives it the same calls for keys, each hashing the key once with the filter's hasher(), and the bulk
// lookups for filters without a pipelined path of their own. A derived filter brings the key overloads
// into scope with `using` next to its digest overloads (which would otherwise hide them).
#pragma once

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <ranges>
#include <span>
#include <utility>

#include "blume/hash.hpp"

namespace blume::detail {

template <class Derived>
class key_interface {
 public:
  /// The digest every probe of `k` derives from. Hash once, then use the digest overloads to probe several
  /// filters of the same seed without hashing again.
  template <key K>
  digest hash(const K& k) const noexcept {
    return hash_key(self().hasher(), k);
  }

  // Extra arguments (an aging filter's time) go to the digest overload as they are.
  template <key K, class D = Derived, class... Args>
    requires requires(D& f, const digest& d, Args&&... args) { f.insert(d, std::forward<Args>(args)...); }
  decltype(auto) insert(const K& k, Args&&... args) {
    return self().insert(hash(k), std::forward<Args>(args)...);
  }
  template <key K, class D = Derived, class... Args>
    requires requires(const D& f, const digest& d, Args&&... args) { f.contains(d, std::forward<Args>(args)...); }
  bool contains(const K& k, Args&&... args) const noexcept {
    return self().contains(hash(k), std::forward<Args>(args)...);
  }
  template <key K, class D = Derived>
    requires requires(D& f, const digest& d) { f.insert_concurrent(d); }
  decltype(auto) insert_concurrent(const K& k) noexcept {
    return self().insert_concurrent(hash(k));
  }
  template <key K, class D = Derived>
    requires requires(D& f, const digest& d) { f.try_insert(d); }
  decltype(auto) try_insert(const K& k) {
    return self().try_insert(hash(k));
  }
  template <key K, class D = Derived>
    requires requires(D& f, const digest& d) { f.erase(d); }
  decltype(auto) erase(const K& k) {
    return self().erase(hash(k));
  }
  template <key K, class D = Derived>
    requires requires(const D& f, const digest& d) { f.count(d); }
  decltype(auto) count(const K& k) const noexcept {
    return self().count(hash(k));
  }
  template <key K, class D = Derived>
    requires requires(const D& f, const digest& d) { f.find(d); }
  decltype(auto) find(const K& k) const noexcept {
    return self().find(hash(k));
  }

  // ---- prepared hashes ---------------------------------------------------------------------------------
  // A caller that holds a uniform 64-bit hash of each key (a database's row hash, Parquet's XXH64 of a
  // value, one hash computed for several structures) passes it in place of the key; the filter's hasher
  // turns it into a digest (from_hash) and no key is hashed. The filter's rates hold only if those hashes
  // are uniform: a weak one (an identity hash of integers) breaks the model. A key inserted by its hash is
  // found only by its hash.

  template <class D = Derived>
    requires prehash_hasher<typename D::hasher_type>
  static digest digest_of_hash(std::uint64_t h) noexcept {
    return D::hasher_type::from_hash(h);
  }
  template <class D = Derived>
    requires prehash_hasher<typename D::hasher_type> && requires(D& f, const digest& d) { f.insert(d); }
  decltype(auto) insert_hash(std::uint64_t h) {
    return self().insert(digest_of_hash(h));
  }
  template <class D = Derived>
    requires prehash_hasher<typename D::hasher_type> && requires(const D& f, const digest& d) { f.contains(d); }
  bool contains_hash(std::uint64_t h) const noexcept {
    return self().contains(digest_of_hash(h));
  }
  /// insert_many of prepared hashes.
  template <std::ranges::input_range R, class D = Derived>
    requires prehash_hasher<typename D::hasher_type> && requires(D& f, const digest& d) { f.insert(d); }
  void insert_hashes(const R& hashes) {
    for_each_digest_chunk<D>(hashes, [this](std::span<const digest> digests) {
      if constexpr (requires(D& f) { f.insert_many(digests); }) {
        self().insert_many(digests);
      } else {
        for (const digest& d : digests) self().insert(d);
      }
    });
  }
  /// contains_many of prepared hashes: one bool per hash to `out`; returns how many answered true.
  template <std::ranges::input_range R, class Out, class D = Derived>
    requires prehash_hasher<typename D::hasher_type> && std::output_iterator<Out, bool>
  std::size_t contains_hashes(const R& hashes, Out out) const {
    std::size_t hits = 0;
    char answers[hash_chunk];
    for_each_digest_chunk<D>(hashes, [&](std::span<const digest> digests) {
      hits += self().contains_many(digests, answers);
      for (std::size_t i = 0; i < digests.size(); ++i) {
        *out = answers[i] != 0;
        ++out;
      }
    });
    return hits;
  }
  /// count_contained of prepared hashes.
  template <std::ranges::input_range R, class D = Derived>
    requires prehash_hasher<typename D::hasher_type>
  std::size_t count_contained_hashes(const R& hashes) const {
    std::size_t hits = 0;
    for_each_digest_chunk<D>(hashes, [&](std::span<const digest> digests) { hits += self().count_contained(digests); });
    return hits;
  }

  /// Writes one bool per key to `out`; returns how many answered true. One lookup per key: filters that
  /// can prefetch a batch (basic_bloom_filter, cuckoo, quotient, xor) define their own.
  template <std::ranges::input_range R, class Out, class... Args>
    requires std::output_iterator<Out, bool>
  std::size_t contains_many(const R& keys, Out out, const Args&... args) const {
    std::size_t hits = 0;
    for (auto&& k : keys) {
      const bool hit = self().contains(k, args...);
      hits += hit;
      *out = hit;
      ++out;
    }
    return hits;
  }
  /// How many of `keys` the filter answers true for.
  template <std::ranges::input_range R, class... Args>
  std::size_t count_contained(const R& keys, const Args&... args) const {
    std::size_t hits = 0;
    for (auto&& k : keys) hits += self().contains(k, args...);
    return hits;
  }

 private:
  // Prepared hashes reach the digest calls a chunk at a time, so the bulk calls keep their pipelining and the
  // memory stays bounded (a views::transform would need none, but clang 14 cannot compile libstdc++ 12's).
  static constexpr std::size_t hash_chunk = 1024;
  template <class D, class R, class Fn>
  static void for_each_digest_chunk(const R& hashes, Fn&& fn) {
    digest chunk[hash_chunk];
    std::size_t n = 0;
    for (const std::uint64_t h : hashes) {
      chunk[n++] = D::hasher_type::from_hash(h);
      if (n == hash_chunk) {
        fn(std::span<const digest>(chunk, n));
        n = 0;
      }
    }
    if (n != 0) fn(std::span<const digest>(chunk, n));
  }
  const Derived& self() const noexcept { return static_cast<const Derived&>(*this); }
  Derived& self() noexcept { return static_cast<Derived&>(*this); }
};

}  // namespace blume::detail
