// SPDX-License-Identifier: Apache-2.0
// What a kind of filter is, as the rest of blume sees it: an id stored in file headers, a name, the
// inputs it is built from, and the capabilities detected from its members. Each kind declares these in
// its own header (see ARCHITECTURE.md, "Adding a kind"); kinds.hpp lists the kinds and derives every
// dispatch from that list.
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "blume/error.hpp"

namespace blume {

/// A kind's id in file headers. The values are part of the format and never reused; each kind's header
/// declares its own (`static constexpr filter_kind kind{N};`) and kinds.hpp checks that no two collide.
enum class filter_kind : std::uint16_t {};

/// What a kind is built from.
enum class kind_input : std::uint8_t {
  keys,                   // one key set (every kind the CLI builds from a list of keys)
  keys_with_values,       // keys mapped to small values (a Bloomier map)
  included_and_excluded,  // a set and its complement in a finite universe (a cascade)
  integers,               // integer keys of a finite universe, used as they are (egh); text keys are decimal
  vectors                 // vectors of numbers, observed and scored, not keys (novelty)
};

/// The integers [0, U) the keys of a kind of integer keys come from (kind_input::integers: egh), 2 ≤ U ≤ 2^64,
/// held as the largest key U − 1 (so that U = 2^64 fits).
struct integer_universe {
  std::uint64_t largest = ~std::uint64_t{0};

  /// [0, u); invalid_argument for u < 2.
  static integer_universe of_size(std::uint64_t u) {
    if (u < 2) throw invalid_argument("the universe needs at least 2 keys, got " + std::to_string(u));
    return {u - 1};
  }
  /// Every 64-bit integer: [0, 2^64).
  static constexpr integer_universe all_64_bit() noexcept { return {~std::uint64_t{0}}; }
  /// U, as a double (2^64 is not a uint64).
  double size() const noexcept { return static_cast<double>(largest) + 1.0; }
  /// U as decimal text ("18446744073709551616" for 2^64).
  std::string size_text() const {
    if (largest != ~std::uint64_t{0}) return std::to_string(largest + 1);
    return "18446744073709551616";
  }
  bool contains(std::uint64_t x) const noexcept { return x <= largest; }
  friend constexpr bool operator==(const integer_universe&, const integer_universe&) = default;
};

/// The description every kind gives of itself: its id, its name (the CLI's --kind, `blume info`, error
/// messages), what it is built from, and whether it is static (built once from all its keys, no inserts).
template <class F>
concept described_kind = requires {
  { F::kind } -> std::convertible_to<filter_kind>;
  { F::name } -> std::convertible_to<std::string_view>;
  { F::input } -> std::convertible_to<kind_input>;
  { F::is_static } -> std::convertible_to<bool>;
};

// Capabilities are read off the members a kind has: a kind that cannot merge has no merge(), so calling
// it does not compile, and surfaces ask these concepts instead of keeping lists of kinds.

/// Keys can be removed.
template <class F>
concept can_erase = requires(F& f, std::string_view k) {
  { f.erase(k) } -> std::same_as<bool>;
};
/// Answers whether a key may be in the set: every kind of keys. A kind of vectors (kind_input::vectors)
/// scores inputs instead (scores_vectors).
template <class F>
concept answers_keys = requires(const F& f, std::string_view k) {
  { f.contains(k) } -> std::convertible_to<bool>;
};
/// Scores how novel an input vector is, and observes inputs (the novelty filter).
template <class F>
concept scores_vectors = requires(F& f, std::span<const double> x) {
  { f.novelty(x) } -> std::convertible_to<double>;
  f.observe(x);
  f.elapse(std::uint64_t{1});
};
/// How many times a key was inserted, at most.
template <class F>
concept can_count = requires(const F& f, std::string_view k) { f.count(k); };
/// Answers a lookup with a value, or nothing (a map's value, a spatial filter's set, a compact
/// approximator's bound, an attenuated filter's nearest level).
template <class F>
concept can_find = requires(const F& f, std::string_view k) {
  { f.find(k).has_value() } -> std::same_as<bool>;
  *f.find(k);
};
/// Union with a filter of the same geometry.
template <class F>
concept can_merge = requires(F& f, const F& g) { f.merge(g); };
/// Intersection with a filter of the same geometry.
template <class F>
concept can_intersect = requires(F& f, const F& g) { f.intersect(g); };
/// Takes in what a neighbour in a network knows, `hops` hops away (an attenuated filter's levels).
template <class F>
concept can_absorb = requires(F& f, const F& g, std::uint32_t hops) { f.absorb(g, hops); };
/// Grows past its first capacity by adding layers.
template <class F>
concept can_grow = requires(const F& f) {
  { f.can_grow() } -> std::same_as<bool>;
};
/// Estimates the number of distinct keys it holds (from its fill, or exactly).
template <class F>
concept can_estimate = requires(const F& f) {
  { f.estimated_count() } -> std::convertible_to<double>;
};
/// Takes keys after it is built.
template <class F>
concept takes_inserts = requires(F& f, std::string_view k) { f.insert(k); };
/// Takes keys with values after it is built (a spatial filter's set numbers, a compact approximator's
/// values), each value at most F::max_value.
template <class F>
concept takes_valued_inserts = requires(F& f, std::string_view k) {
  { F::max_value } -> std::convertible_to<std::uint64_t>;
  f.insert(k, F::max_value);
};
/// Inserts that may run concurrently with each other and with lookups.
template <class F>
concept can_insert_concurrently = requires(F& f, std::string_view k) { f.insert_concurrent(k); };
/// A filter that may refuse keys for want of room (a full table; a chain that cannot add its next layer):
/// insert_many returns how many keys it stored, and a refused key must not be taken for stored.
template <class F>
concept may_be_full = requires(F& f, std::span<const std::string_view> keys) {
  { f.insert_many(keys) } -> std::convertible_to<std::size_t>;
};
/// A bit array whose fill the estimators read (the Bloom kinds): union, intersection and Jaccard
/// estimates between two filters of the same geometry.
template <class F>
concept bit_array_filter = requires(const F& f) {
  f.fill_ratio();
  f.set_bits();
  estimate_union(f, f);
};

/// Kinds that forget by design (stable, aging) declare `static constexpr bool forgets = true`. Their
/// "false" means "not seen recently", not "never inserted": surfaces say "absent", never "no".
template <class F>
inline constexpr bool forgets_v = requires { requires F::forgets; };

}  // namespace blume
