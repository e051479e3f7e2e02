// SPDX-License-Identifier: Apache-2.0
// One repetition of one contestant on one workload: build it (timed), look up present and absent keys one
// call at a time and, where the library has a bulk path, in batches (timed), check the answers, free it.
#pragma once

#include <chrono>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "contestants.hpp"
#include "keys.hpp"
#include "limit_probe.hpp"
#include "our_kinds.hpp"
#include "results.hpp"

namespace blume::bench {

/// Contestants with a bulk path (our filters): insert_many / count_contained over a range of keys. A kind
/// may offer one without the other; each is measured where it exists.
template <class C, class Keys>
concept has_bulk_insert = requires(C& c, const Keys& keys) { c.insert_many(keys.range()); };
template <class C, class Keys>
concept has_bulk_lookup = requires(const C& cc, const Keys& keys) {
  { cc.count_contained(keys.range()) } -> std::convertible_to<std::size_t>;
};

/// Contestants that can delete a key (our kinds with erase(), the hash sets).
template <class C, class Keys>
concept has_erase = requires(C& c, const Keys& keys) {
  { c.erase(keys[0]) } -> std::convertible_to<bool>;
};

/// Kinds whose lookups may miss present keys by design (those that forget: stable, aging): their misses
/// are measured and reported as a rate, not as a failure.
template <class C>
concept misses_by_design = C::false_negatives_by_design;

/// Contestants that store std::string_view into the workload's arena rather than copies of the keys.
template <class C>
concept holds_key_views = C::holds_key_views;

/// Keeps `value` alive as far as the optimiser can tell (the lookup loops must not be deleted).
inline void keep(std::size_t value) noexcept { asm volatile("" : : "r"(value) : "memory"); }

template <class Fn>
double ns_per_key(std::size_t keys, Fn&& fn) {
  const auto start = std::chrono::steady_clock::now();
  fn();
  const auto stop = std::chrono::steady_clock::now();
  return std::chrono::duration<double, std::nano>(stop - start).count() / static_cast<double>(keys);
}

template <class C, class Keys>
std::size_t count_one_by_one(const C& contestant, const Keys& keys) {
  std::size_t hits = 0;
  for (std::size_t i = 0; i < keys.size(); ++i) hits += contestant.contains(keys[i]);
  return hits;
}

/// `with_erase`: also time erasing the n present keys (family runs; the default run measures as before).
template <class C, class Keys>
sample measure_once(const workload<Keys>& w, bool with_erase) {
  constexpr bool bulk_insert = has_bulk_insert<C, Keys>;
  constexpr bool bulk = has_bulk_lookup<C, Keys>;
  const std::size_t n = w.present.size();
  sample s;
  s.ns_per_key.fill(not_applicable);

  std::optional<C> c;
  s.ns_per_key[insert] = ns_per_key(n, [&] {
    c.emplace(n);
    for (std::size_t i = 0; i < n; ++i) c->insert(w.present[i]);
    if constexpr (requires { c->finish(); }) c->finish();  // a static filter is built from all the keys
  });
  if constexpr (bulk_insert) {
    std::optional<C> built_in_bulk;
    s.ns_per_key[insert_bulk] = ns_per_key(n, [&] {
      built_in_bulk.emplace(n);
      built_in_bulk->insert_many(w.present.range());
    });
    if constexpr (std::equality_comparable<C>)
      if (!(*built_in_bulk == *c)) s.problems.push_back("insert_many built different bits than insert");
  }
  if constexpr (requires { c->refused_inserts(); }) {
    if (const std::uint64_t refused = c->refused_inserts(); refused != 0)
      s.problems.push_back(std::to_string(refused) + " inserts refused (filter full)");
  }
  if constexpr (requires { c->details(); }) {
    s.details = c->details();
    s.fingerprint_bits = c->fingerprint_bits();
    s.load_factor = c->load_factor();
  }
  s.bytes = c->memory_bytes();
  if constexpr (holds_key_views<C>) s.bytes += w.present.arena_bytes();  // the bytes its views point into
  s.predicted_fpr = c->predicted_fpr();

  const auto& positives = w.positive_probes;
  const auto& negatives = w.negative_probes;
  std::size_t hits = 0;
  s.ns_per_key[positive] = ns_per_key(positives.size(), [&] { hits = count_one_by_one(*c, positives); });
  keep(hits);
  s.positive_hits = hits;
  if constexpr (misses_by_design<C>) {
    s.false_negatives = positives.size() - hits;
  } else if (hits != positives.size()) {
    s.problems.push_back(std::to_string(positives.size() - hits) + " false negatives (one-by-one lookups)");
  }
  if constexpr (bulk) {
    s.ns_per_key[positive_batched] =
        ns_per_key(positives.size(), [&] { hits = c->count_contained(positives.range()); });
    keep(hits);
    if (hits != s.positive_hits) s.problems.push_back("batched positive lookups disagree with one-by-one");
  }

  s.ns_per_key[negative] = ns_per_key(negatives.size(), [&] { hits = count_one_by_one(*c, negatives); });
  keep(hits);
  s.negative_hits = hits;
  if constexpr (bulk) {
    s.ns_per_key[negative_batched] =
        ns_per_key(negatives.size(), [&] { hits = c->count_contained(negatives.range()); });
    keep(hits);
    if (hits != s.negative_hits) s.problems.push_back("batched negative lookups disagree with one-by-one");
  }
  if constexpr (bulk) {
    // What the machine allows for lookups into this much memory, measured beside them.
    const limit_times limit = measure_limit(
        s.bytes, negatives.size(), [](std::size_t keys, auto&& fn) { return ns_per_key(keys, fn); },
        [](std::uint64_t v) { keep(static_cast<std::size_t>(v)); });
    s.ns_per_key[limit_single] = limit.single;
    s.ns_per_key[limit_batched] = limit.batched;
  }
  if (s.predicted_fpr == 0 && s.negative_hits != 0)
    s.problems.push_back("an exact set reported " + std::to_string(s.negative_hits) + " absent keys present");

  // Last, on the built structure: erase every present key once, in index order. Every one was inserted,
  // so every erase must succeed (a refused erase means a lost key).
  if constexpr (has_erase<C, Keys>) {
    if (with_erase) {
      std::size_t erased = 0;
      s.ns_per_key[erase_keys] = ns_per_key(n, [&] {
        for (std::size_t i = 0; i < n; ++i) erased += c->erase(w.present[i]);
      });
      keep(erased);
      if (erased != n)
        s.problems.push_back(std::to_string(n - erased) + " of " + std::to_string(n) + " erases refused");
    }
  }
  return s;
}

/// A contestant as the driver sees it: a name, what selects it on the command line, and how to measure it.
template <class Keys>
struct contestant_entry {
  std::string name;
  std::string_view option;  // the word in --kinds (ours: the kind's name) or --baselines
  bool ours;
  sample (*measure)(const workload<Keys>&, bool with_erase);
  filter_kind kind{};                      // ours: which kind
  bool false_negatives_by_design = false;  // kinds that forget (stable, aging)
};

/// Every contestant, in report order: each of our kinds built from one key set (in the list's id order),
/// then the baselines.
template <class Keys>
std::vector<contestant_entry<Keys>> all_contestants() {
  using key = typename Keys::key_type;
  std::vector<contestant_entry<Keys>> out;
  for_each_benchmarked_kind([&](auto type) {
    using F = typename decltype(type)::type;
    out.push_back({label<F>(), F::name, true, &measure_once<kind_contestant<F>, Keys>, F::kind, forgets_v<F>});
    // The kinds of lattice cells run in both layouts under their one name, blocked beside classic.
    if constexpr (has_cell_layouts<F>)
      out.push_back({label<F>() + " (blocked)", F::name, true,
                     &measure_once<kind_contestant<F, cell_layout::blocked>, Keys>, F::kind, forgets_v<F>});
  });
  out.push_back({std::string(names::unordered_set), "unordered_set", false,
                 &measure_once<std_unordered_set_contestant<key>, Keys>});
  out.push_back({std::string(names::absl_set), "absl", false, &measure_once<absl_flat_hash_set_contestant<key>, Keys>});
  out.push_back({std::string(names::libbloom), "libbloom", false, &measure_once<libbloom_contestant, Keys>});
  return out;
}

}  // namespace blume::bench
