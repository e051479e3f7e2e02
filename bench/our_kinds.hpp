// SPDX-License-Identifier: Apache-2.0
// blume's own contestants, read off the one list of kinds (blume/kinds.hpp): every kind built from one key
// set, or taking keys with values one at a time, is a contestant under its own name (F::name, what --kinds
// takes), and what the benchmark does with it follows from what the kind declares and offers (kind.hpp),
// not from a list of names here. Static kinds with inputs of their own (a Bloomier map, a cascade) have no
// place in a benchmark of one key set and are left out.
#pragma once

#include <cmath>
#include <concepts>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "blume/kinds.hpp"

namespace blume::bench {

/// The false-positive rate every contestant is sized for.
inline constexpr double target_fpr = 0.01;

/// What the benchmark does differently for one kind where nothing the kind declares can say it. The
/// default, for every kind: built for target_fpr, and part of its group's preset run (--family, --static).
template <class F>
struct kind_setup {
  static constexpr double fpr = target_fpr;
  static constexpr bool in_presets = true;
  static constexpr std::string_view note = "";
};

/// The Golomb-coded set's rates are powers of two, and its static-filter targets are stated at 2^-8 (1%
/// would round to 2^-7).
template <>
struct kind_setup<golomb_coded_set<>> {
  static constexpr double fpr = 0x1p-8;
  static constexpr bool in_presets = true;
  static constexpr std::string_view note = "";
};

/// The benchmark's contestants: kinds built from one key set, and kinds that take keys with values one at a
/// time (spatial, compact), given values 1 … valued_sets in turn (four equal sets for a spatial filter).
template <class F>
concept benchmarked_kind = F::input == kind_input::keys || (!F::is_static && takes_valued_inserts<F>);
inline constexpr std::uint64_t valued_sets = 4;

/// Kinds built on lattice cells, which come in two layouts (classic and blocked): the benchmark runs both.
template <class F>
concept has_cell_layouts = requires(const F& f) {
  { f.layout() } -> std::same_as<cell_layout>;
};

/// "The rest of the family": kinds with a capability the plain Bloom kinds lack and the family run
/// measures: erase (timed), refusing keys when full (refusals are failures), forgetting by design (its
/// false negatives are a measured rate, not failures). A run with one of them in it is a family run.
template <class F>
concept family_kind = benchmarked_kind<F> && !F::is_static && (can_erase<F> || may_be_full<F> || forgets_v<F>);

/// Calls fn(std::type_identity<F>{}) for every benchmarked kind F, in the list's (id) order.
template <class Fn>
constexpr void for_each_benchmarked_kind(Fn&& fn) {
  for_each_kind([&](auto type) {
    if constexpr (benchmarked_kind<typename decltype(type)::type>) fn(type);
  });
}

/// A rate as the report prints it: "2^-8" for a power of two, else a percentage ("1%").
inline std::string rate_text(double fpr) {
  int exponent = 0;
  if (std::frexp(fpr, &exponent) == 0.5) return "2^" + std::to_string(exponent - 1);
  char text[32];
  std::snprintf(text, sizeof text, "%g%%", fpr * 100);
  return text;
}

/// The contestant's row name: the kind's name, followed by its rate where that is not target_fpr.
template <class F>
std::string label() {
  std::string out(F::name);
  if constexpr (kind_setup<F>::fpr != target_fpr) out += " (" + rate_text(kind_setup<F>::fpr) + ")";
  return out;
}

/// What the driver and the report ask of a kind at run time (options, help, report text).
struct kind_facts {
  filter_kind kind{};
  std::string_view name;   // F::name: the word in --kinds
  std::string label;       // the row name
  bool is_static = false;  // F::is_static
  bool family = false;     // family_kind<F>
  bool forgets = false;    // forgets_v<F>
  bool can_erase = false;  // can_erase<F>
  bool in_presets = true;  // kind_setup<F>::in_presets
  std::string_view note;   // kind_setup<F>::note, for --help
};

template <class F>
kind_facts facts_of() {
  return {.kind = F::kind,
          .name = F::name,
          .label = label<F>(),
          .is_static = F::is_static,
          .family = family_kind<F>,
          .forgets = forgets_v<F>,
          .can_erase = can_erase<F>,
          .in_presets = kind_setup<F>::in_presets,
          .note = kind_setup<F>::note};
}

/// Every benchmarked kind, in id order.
inline std::vector<kind_facts> benchmarked_kinds() {
  std::vector<kind_facts> out;
  for_each_benchmarked_kind([&](auto type) { out.push_back(facts_of<typename decltype(type)::type>()); });
  return out;
}

/// The names of the benchmarked kinds `keep` selects, in id order.
template <class Keep>
std::vector<std::string> kind_names(Keep keep) {
  std::vector<std::string> out;
  for (const kind_facts& k : benchmarked_kinds())
    if (keep(k)) out.emplace_back(k.name);
  return out;
}

inline std::string join(const std::vector<std::string>& words, std::string_view separator = ", ") {
  std::string out;
  for (const auto& w : words) out += (out.empty() ? "" : std::string(separator)) + w;
  return out;
}

// The preset runs. They name the Bloom kinds the targets are stated against; the kinds under test in the
// family and static runs are every kind of the group (kind_setup can leave one out).

/// The default run: the plain Bloom kinds, which the main targets are about.
inline std::vector<std::string> core_kinds() {
  return {std::string(bloom_filter<>::name), std::string(partitioned_bloom_filter<>::name),
          std::string(blocked_bloom_filter<>::name), std::string(split_block_bloom_filter<>::name)};
}
/// --family: the Bloom kinds the family targets compare with, then every family kind.
inline std::vector<std::string> family_preset() {
  std::vector<std::string> out = {std::string(bloom_filter<>::name), std::string(blocked_bloom_filter<>::name),
                                  std::string(split_block_bloom_filter<>::name)};
  for (auto& k : kind_names([](const kind_facts& k) { return k.family && k.in_presets; })) out.push_back(std::move(k));
  return out;
}
/// --static: the blocked Bloom kinds the static targets compare with, then every static kind.
inline std::vector<std::string> static_preset() {
  std::vector<std::string> out = {std::string(blocked_bloom_filter<>::name),
                                  std::string(split_block_bloom_filter<>::name)};
  for (auto& k : kind_names([](const kind_facts& k) { return k.is_static && k.in_presets; }))
    out.push_back(std::move(k));
  return out;
}

/// The row name of a kind known by its id (the targets name the kinds they are about).
inline std::string label_of(filter_kind kind) {
  std::string out(kind_name(kind));
  visit_kind(kind, [&](auto type) { out = label<typename decltype(type)::type>(); });
  return out;
}

}  // namespace blume::bench
