// SPDX-License-Identifier: Apache-2.0
// The one list of kinds. Every dispatch over kinds (names, ids, the static ones, the variant of any kind,
// planning by kind, the tool's choices, the benchmark's contestants, the typed tests) is derived from
// filter_types below; a kind describes itself in its own header (kind.hpp says what it declares), so
// adding one is its header plus a line here (ARCHITECTURE.md, "Adding a kind").
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>

#include "blume/error.hpp"
#include "blume/io/serialization.hpp"
#include "blume/kind.hpp"
#include "blume/kinds/aging_bloom_filter.hpp"
#include "blume/kinds/attenuated_bloom_filter.hpp"
#include "blume/kinds/blocked_bloom_filter.hpp"
#include "blume/kinds/bloom_filter.hpp"
#include "blume/kinds/bloomier_filter.hpp"
#include "blume/kinds/cascade_filter.hpp"
#include "blume/kinds/compact_approximator.hpp"
#include "blume/kinds/compaction_filter.hpp"
#include "blume/kinds/counting_bloom_filter.hpp"
#include "blume/kinds/cuckoo_filter.hpp"
#include "blume/kinds/dleft_counting_filter.hpp"
#include "blume/kinds/egh_filter.hpp"
#include "blume/kinds/golomb_coded_set.hpp"
#include "blume/kinds/invertible_bloom_filter.hpp"
#include "blume/kinds/layered_bloom_filter.hpp"
#include "blume/kinds/novelty_filter.hpp"
#include "blume/kinds/partitioned_bloom_filter.hpp"
#include "blume/kinds/quotient_filter.hpp"
#include "blume/kinds/scalable_bloom_filter.hpp"
#include "blume/kinds/spatial_bloom_filter.hpp"
#include "blume/kinds/split_block_bloom_filter.hpp"
#include "blume/kinds/stable_bloom_filter.hpp"
#include "blume/kinds/variable_increment_counting_filter.hpp"
#include "blume/kinds/xor_filter.hpp"
#include "blume/plan.hpp"

namespace blume {

template <class... F>
struct kind_list {};

/// Every kind blume stores in files, as its default instantiation (XXH3 hashing; 4-bit counters for
/// counting, 2-bit cells for stable, split-block buffers for aging, 8-bit cells for spatial, blocked layers
/// for layered and attenuated, the max lattice of 32-bit values for compact, 4-bit counters and increments 4 … 7 for vi-counting,
/// 16-byte cells for iblt, 4 subtables of 8-cell buckets with 4-bit counters for dleft), in id order.
using filter_types =
    kind_list<bloom_filter<>, partitioned_bloom_filter<>, blocked_bloom_filter<>, split_block_bloom_filter<>,
              counting_bloom_filter<>, cuckoo_filter<>, quotient_filter<>, scalable_bloom_filter<>,
              stable_bloom_filter<>, aging_bloom_filter<>, xor8_filter<>, xor16_filter<>, fuse8_filter<>,
              fuse16_filter<>, golomb_coded_set<>, bloomier_filter<>, cascade_filter, spatial_bloom_filter<>,
              layered_bloom_filter<>, attenuated_bloom_filter<>, compact_approximator<>,
              variable_increment_counting_filter<>, invertible_bloom_filter<>, dleft_counting_filter<>, egh_filter,
              compaction_filter<>, novelty_filter>;

/// Types files hold beside the kinds' default instantiations: a kind's earlier default hasher, which its
/// files of that time were written with (split-block hashed with XXH3-128 up to 0.1.0). any_filter opens and
/// saves them as they were written; the kinds, their names and plans are filter_types' alone.
using earlier_hash_types = kind_list<split_block_bloom_filter<xxh3_hasher>>;

namespace detail {

template <class List>
struct kinds_of;
template <class... F>
struct kinds_of<kind_list<F...>> {
  static constexpr std::size_t size = sizeof...(F);
  using variant = std::variant<F...>;
  template <template <class...> class T>
  using apply = T<F...>;
  template <class Fn>
  static constexpr void each(Fn&& fn) {
    (fn(std::type_identity<F>{}), ...);
  }
  template <class Fn>
  static constexpr bool any(Fn&& fn) {
    return (fn(std::type_identity<F>{}) || ...);
  }
  static_assert((described_kind<F> && ...), "every kind describes itself (kind.hpp)");
  static_assert((serializable_filter<F> && ...), "every kind is stored in files (serialization.hpp)");
};

using registry = kinds_of<filter_types>;

template <class A, class B>
struct joined;
template <class... F, class... G>
struct joined<kind_list<F...>, kind_list<G...>> {
  using type = kind_list<F..., G...>;
};
/// Every type a file can be opened as: the kinds' defaults, then their earlier hashers.
using stored_types = kinds_of<typename joined<filter_types, earlier_hash_types>::type>;

}  // namespace detail

/// The number of kinds.
inline constexpr std::size_t kind_count = detail::registry::size;

/// Calls fn(std::type_identity<F>{}) for each kind F, in list order.
template <class Fn>
constexpr void for_each_kind(Fn&& fn) {
  detail::registry::each(fn);
}

/// Calls fn(std::type_identity<F>{}) for the kind F whose id is `kind`; false when no kind has that id.
template <class Fn>
constexpr bool visit_kind(filter_kind kind, Fn&& fn) {
  return detail::registry::any([&](auto type) {
    if (decltype(type)::type::kind != kind) return false;
    fn(type);
    return true;
  });
}

namespace detail {

template <class Keep>
constexpr std::size_t count_kinds(Keep keep) {
  std::size_t n = 0;
  for_each_kind([&](auto type) { n += keep(type) ? 1 : 0; });
  return n;
}
template <std::size_t N, class Keep>
constexpr std::array<filter_kind, N> collect_kinds(Keep keep) {
  std::array<filter_kind, N> out{};
  std::size_t i = 0;
  for_each_kind([&](auto type) {
    if (keep(type)) out[i++] = decltype(type)::type::kind;
  });
  return out;
}
inline constexpr auto one_key_set = [](auto type) { return decltype(type)::type::input == kind_input::keys; };
inline constexpr auto own_inputs = [](auto type) { return decltype(type)::type::input != kind_input::keys; };

}  // namespace detail

/// The kinds built from one key set, in id order: what the tool's build, plan and bench cover.
inline constexpr auto all_kinds = detail::collect_kinds<detail::count_kinds(detail::one_key_set)>(detail::one_key_set);
/// Kinds with inputs of their own (keys with values; included and excluded keys).
inline constexpr auto map_kinds = detail::collect_kinds<detail::count_kinds(detail::own_inputs)>(detail::own_inputs);

constexpr bool is_known(filter_kind k) noexcept {
  return visit_kind(k, [](auto) {});
}

/// The kind's name ("split-block"), or "unknown".
constexpr std::string_view kind_name(filter_kind k) noexcept {
  std::string_view name = "unknown";
  visit_kind(k, [&](auto type) { name = decltype(type)::type::name; });
  return name;
}

/// What kind `k`'s plans and headers count: bits for most, counters for a counting filter, cells for a spatial
/// one (a plan's `bits` times the unit's width is its size in bits).
constexpr size_unit size_unit_of(filter_kind k) noexcept {
  size_unit unit;
  visit_kind(k, [&](auto type) { unit = size_unit_of<typename decltype(type)::type>(); });
  return unit;
}

constexpr std::optional<filter_kind> parse_kind(std::string_view name) noexcept {
  std::optional<filter_kind> found;
  for_each_kind([&](auto type) {
    if (decltype(type)::type::name == name) found = decltype(type)::type::kind;
  });
  return found;
}

/// Static kinds are built once from the whole key set and take no inserts afterwards.
constexpr bool is_static(filter_kind k) noexcept {
  bool result = false;
  visit_kind(k, [&](auto type) { result = decltype(type)::type::is_static; });
  return result;
}

constexpr kind_input input_of(filter_kind k) noexcept {
  kind_input result = kind_input::keys;
  visit_kind(k, [&](auto type) { result = decltype(type)::type::input; });
  return result;
}

namespace detail {
constexpr bool kinds_are_distinct() {
  bool distinct = true;
  for_each_kind([&](auto a) {
    for_each_kind([&](auto b) {
      using A = typename decltype(a)::type;
      using B = typename decltype(b)::type;
      if constexpr (!std::is_same_v<A, B>) distinct = distinct && A::kind != B::kind && A::name != B::name;
    });
  });
  return distinct;
}
static_assert(kinds_are_distinct(), "two kinds share a file id or a name");
}  // namespace detail

namespace detail {
[[noreturn]] inline void unknown_kind(filter_kind kind) {
  throw invalid_argument("unknown filter kind " + std::to_string(static_cast<int>(kind)));
}
}  // namespace detail

/// The geometry for `items` keys at false-positive rate `fpr`: the kind's own planner (F::plan, in its
/// header; the math in plan.hpp). Throws invalid_argument for items == 0, fpr outside (0, 1) or NaN, a
/// size beyond max_filter_bits, or a kind a key count and a rate cannot size (bloomier, cascade, spatial:
/// their plan_refusal says what does).
inline filter_plan plan_for(std::uint64_t items, double fpr, filter_kind kind = bloom_filter<>::kind) {
  filter_plan plan;
  const bool known = visit_kind(kind, [&](auto type) {
    using F = typename decltype(type)::type;
    // A kind that a key count and a rate cannot size says so (cascade's plan takes two set sizes, which a
    // count and a rate would convert to).
    if constexpr (requires { F::plan_refusal; }) {
      throw invalid_argument(std::string(F::plan_refusal));
    } else {
      plan = F::plan(items, fpr);
    }
  });
  if (!known) detail::unknown_kind(kind);
  return plan;
}

/// The inverse question: the best false-positive rate `items` keys get in a budget of `bits` bits (rounded
/// down to the kind's granularity; counters for the counting kind), with the k that minimises it.
inline filter_plan plan_for_bits(std::uint64_t items, std::uint64_t bits, filter_kind kind = bloom_filter<>::kind) {
  filter_plan plan;
  const bool known = visit_kind(kind, [&](auto type) {
    using F = typename decltype(type)::type;
    if constexpr (requires { F::plan_for_bits(items, bits); }) {
      plan = F::plan_for_bits(items, bits);
    } else {
      throw invalid_argument("plan_for_bits does not support the '" + std::string(F::name) + "' kind");
    }
  });
  if (!known) detail::unknown_kind(kind);
  return plan;
}

/// The largest plan size (`filter_plan::bits`, in the kind's own unit: bits, counters or cells) whose
/// memory (the kind's plan_bytes) fits in `bytes`: what a memory budget buys, for plan_for_bits.
inline std::uint64_t plan_units_in(std::uint64_t bytes, filter_kind kind) {
  std::uint64_t units = 0;
  if (!visit_kind(kind, [&](auto type) {
        using F = typename decltype(type)::type;
        const auto over = [&](std::uint64_t x) { return F::plan_bytes(x) > bytes; };
        units = detail::smallest_satisfying(1, max_filter_bits, over) - 1;
      }))
    detail::unknown_kind(kind);
  return units;
}

/// The false-positive rate of a kind's model with m bits and k probes holding n items (what m and k mean
/// is the kind's: see its plan_bytes and model_fpr).
inline double model_fpr(filter_kind kind, double n, double m, double k) {
  double rate = 1.0;
  if (!visit_kind(kind, [&](auto type) { rate = decltype(type)::type::model_fpr(n, m, k); }))
    detail::unknown_kind(kind);
  return rate;
}

}  // namespace blume
