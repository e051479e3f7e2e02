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

/// Contestants with a bulk path (our filters): insert_many / count_contained over a range of keys.
template <class C, class Keys>
concept has_bulk_calls = requires(C& c, const C& cc, const Keys& keys) {
  c.insert_many(keys.range());
  { cc.count_contained(keys.range()) } -> std::convertible_to<std::size_t>;
};

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

template <class C, class Keys>
sample measure_once(const workload<Keys>& w) {
  constexpr bool bulk = has_bulk_calls<C, Keys>;
  const std::size_t n = w.present.size();
  sample s;
  s.ns_per_key.fill(not_applicable);

  std::optional<C> c;
  s.ns_per_key[insert] = ns_per_key(n, [&] {
    c.emplace(n);
    for (std::size_t i = 0; i < n; ++i) c->insert(w.present[i]);
  });
  if constexpr (bulk) {
    std::optional<C> built_in_bulk;
    s.ns_per_key[insert_bulk] = ns_per_key(n, [&] {
      built_in_bulk.emplace(n);
      built_in_bulk->insert_many(w.present.range());
    });
    if (!(*built_in_bulk == *c)) s.problems.push_back("insert_many built different bits than insert");
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
  if (hits != positives.size())
    s.problems.push_back(std::to_string(positives.size() - hits) + " false negatives (one-by-one lookups)");
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
  return s;
}

/// A contestant as the driver sees it: a name, what selects it on the command line, and how to measure it.
template <class Keys>
struct contestant_entry {
  std::string_view name;
  std::string_view option;  // the word in --kinds (ours) or --baselines
  bool ours;
  sample (*measure)(const workload<Keys>&);
};

template <class Keys>
std::vector<contestant_entry<Keys>> all_contestants() {
  using key = typename Keys::key_type;
  return {
      {names::bloom, "bloom", true, &measure_once<blume_contestant<blume::bloom_filter<>>, Keys>},
      {names::partitioned, "partitioned", true, &measure_once<blume_contestant<blume::partitioned_bloom_filter<>>, Keys>},
      {names::blocked, "blocked", true, &measure_once<blume_contestant<blume::blocked_bloom_filter<>>, Keys>},
      {names::split_block, "split-block", true, &measure_once<blume_contestant<blume::split_block_bloom_filter<>>, Keys>},
      {names::unordered_set, "unordered_set", false, &measure_once<std_unordered_set_contestant<key>, Keys>},
      {names::absl_set, "absl", false, &measure_once<absl_flat_hash_set_contestant<key>, Keys>},
      {names::libbloom, "libbloom", false, &measure_once<libbloom_contestant, Keys>},
  };
}

}  // namespace blume::bench
