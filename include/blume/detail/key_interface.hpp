// SPDX-License-Identifier: Apache-2.0
// The key overloads every filter offers, written once. A filter answers for digests (insert(const digest&),
// contains(const digest&), and where it has them erase, count, try_insert, insert_concurrent, find); this
// base gives it the same calls for keys, each hashing the key once with the filter's hasher(), and the bulk
// lookups for filters without a pipelined path of their own. A derived filter brings the key overloads
// into scope with `using` next to its digest overloads (which would otherwise hide them).
#pragma once

#include <cstddef>
#include <iterator>
#include <ranges>
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
  const Derived& self() const noexcept { return static_cast<const Derived&>(*this); }
  Derived& self() noexcept { return static_cast<Derived&>(*this); }
};

}  // namespace blume::detail
