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

/// Contestants that can delete a key (counting, cuckoo, quotient, the hash sets).
template <class C, class Keys>
concept has_erase = requires(C& c, const Keys& keys) {
  { c.erase(keys[0]) } -> std::convertible_to<bool>;
};

/// Kinds whose lookups may miss present keys by design (stable, aging): their misses are measured and
/// reported as a rate, not as a failure.
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
    s.ns_per_key[positive_batched] = ns_per_key(positives.size(), [&] { hits = c->count_contained(positives.range()); });
    keep(hits);
    if (hits != s.positive_hits) s.problems.push_back("batched positive lookups disagree with one-by-one");
  }

  s.ns_per_key[negative] = ns_per_key(negatives.size(), [&] { hits = count_one_by_one(*c, negatives); });
  keep(hits);
  s.negative_hits = hits;
  if constexpr (bulk) {
    s.ns_per_key[negative_batched] = ns_per_key(negatives.size(), [&] { hits = c->count_contained(negatives.range()); });
    keep(hits);
    if (hits != s.negative_hits) s.problems.push_back("batched negative lookups disagree with one-by-one");
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
      if (erased != n) s.problems.push_back(std::to_string(n - erased) + " of " + std::to_string(n) + " erases refused");
    }
  }
  return s;
}

/// A contestant as the driver sees it: a name, what selects it on the command line, and how to measure it.
template <class Keys>
struct contestant_entry {
  std::string_view name;
  std::string_view option;  // the word in --kinds (ours) or --baselines
  bool ours;
  sample (*measure)(const workload<Keys>&, bool with_erase);
  bool family = false;                    // one of the kinds added for issue 3 (not in the default run)
  bool false_negatives_by_design = false;  // stable, aging
};

template <class Keys>
std::vector<contestant_entry<Keys>> all_contestants() {
  using key = typename Keys::key_type;
  return {
      {names::bloom, "bloom", true, &measure_once<blume_contestant<blume::bloom_filter<>>, Keys>},
      {names::partitioned, "partitioned", true, &measure_once<blume_contestant<blume::partitioned_bloom_filter<>>, Keys>},
      {names::blocked, "blocked", true, &measure_once<blume_contestant<blume::blocked_bloom_filter<>>, Keys>},
      {names::split_block, "split-block", true, &measure_once<blume_contestant<blume::split_block_bloom_filter<>>, Keys>},
      {names::counting, "counting", true, &measure_once<family_contestant<counting_kind>, Keys>, true},
      {names::scalable, "scalable", true, &measure_once<family_contestant<scalable_kind>, Keys>, true},
      {names::cuckoo, "cuckoo", true, &measure_once<family_contestant<cuckoo_kind>, Keys>, true},
      {names::quotient, "quotient", true, &measure_once<family_contestant<quotient_kind>, Keys>, true},
      {names::stable, "stable", true, &measure_once<family_contestant<stable_kind>, Keys>, true, true},
      {names::aging, "aging", true, &measure_once<family_contestant<aging_kind>, Keys>, true, true},
      {names::xor8, "xor8", true, &measure_once<static_contestant<blume::xor8_filter<>>, Keys>},
      {names::xor16, "xor16", true, &measure_once<static_contestant<blume::xor16_filter<>>, Keys>},
      {names::fuse8, "fuse8", true, &measure_once<static_contestant<blume::fuse8_filter<>>, Keys>},
      {names::fuse16, "fuse16", true, &measure_once<static_contestant<blume::fuse16_filter<>>, Keys>},
      {names::gcs, "gcs", true, &measure_once<static_contestant<blume::golomb_coded_set<>>, Keys>},
      {names::unordered_set, "unordered_set", false, &measure_once<std_unordered_set_contestant<key>, Keys>},
      {names::absl_set, "absl", false, &measure_once<absl_flat_hash_set_contestant<key>, Keys>},
      {names::libbloom, "libbloom", false, &measure_once<libbloom_contestant, Keys>},
  };
}

}  // namespace blume::bench
