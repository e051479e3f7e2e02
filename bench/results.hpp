// SPDX-License-Identifier: Apache-2.0
// What a benchmark run produces: per-repetition samples, and per-contestant summaries (min/median/max).
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "blume/kind.hpp"

namespace blume::bench {

/// The timed figures, each in nanoseconds per key.
enum metric : std::size_t {
  insert,            // construction + one insert() per key
  insert_bulk,       // construction + insert_many over all keys (ours only)
  positive,          // one contains() per present key
  positive_batched,  // count_contained over the present probes (ours only)
  negative,          // one contains() per absent key
  negative_batched,  // count_contained over the absent probes (ours only)
  erase_keys,        // one erase() per present key, after the lookups (only where erase exists, family runs)
  limit_single,      // the limit probe over the contestant's bytes: one random 32-byte load per key (ours only)
  limit_batched,     // the same loads, prefetched 32 at a time
  metric_count
};

inline constexpr double not_applicable = std::numeric_limits<double>::quiet_NaN();

/// One repetition of one contestant.
struct sample {
  std::array<double, metric_count> ns_per_key;  // not_applicable where the contestant has no such call
  std::uint64_t bytes = 0;
  std::uint64_t positive_hits = 0;    // must equal the number of positive probes: no false negatives
  std::uint64_t negative_hits = 0;    // false positives
  std::uint64_t false_negatives = 0;  // present probes answered "absent" (kinds that may miss by design)
  double predicted_fpr = 0;
  std::string details;            // the kind's geometry, in words (family kinds)
  unsigned fingerprint_bits = 0;  // fingerprint tables (cuckoo)
  double load_factor = std::numeric_limits<double>::quiet_NaN();
  std::vector<std::string> problems;  // correctness failures seen while measuring
};

struct spread {
  double min = not_applicable, median = not_applicable, max = not_applicable;
  bool applicable() const noexcept { return !std::isnan(median); }
};

inline spread summarise(std::vector<double> values) {
  std::erase_if(values, [](double v) { return std::isnan(v); });
  if (values.empty()) return {};
  std::sort(values.begin(), values.end());
  const std::size_t mid = values.size() / 2;
  const double median = values.size() % 2 ? values[mid] : (values[mid - 1] + values[mid]) / 2;
  return {values.front(), median, values.back()};
}

/// One contestant in one configuration, over all repetitions.
struct contestant_result {
  std::string name;
  bool ours = false;
  filter_kind kind{};  // ours: which kind
  std::uint64_t bytes = 0;
  double bits_per_key = 0;
  double measured_fpr = 0;
  double predicted_fpr = 0;
  bool false_negatives_by_design = false;  // kinds that forget (stable, aging): misses are measured, not a failure
  double false_negative_rate = 0;          // over the present probes
  std::string details;
  unsigned fingerprint_bits = 0;
  double load_factor = std::numeric_limits<double>::quiet_NaN();
  std::array<spread, metric_count> ns;
  std::vector<std::string> problems;
};

/// One configuration: n keys of one type, every selected contestant.
struct config_result {
  std::uint64_t items = 0;
  std::string_view key_description;
  std::string_view key_short_name;  // "int" or "email"
  std::uint64_t positive_probes = 0;
  std::uint64_t negative_probes = 0;
  int reps = 0;
  bool keys_are_views = false;  // hash sets hold std::string_view into one arena
  std::vector<contestant_result> rows;

  /// A baseline's row, by name.
  const contestant_result* find(std::string_view name) const {
    for (const auto& r : rows)
      if (!r.ours && r.name == name) return &r;
    return nullptr;
  }
  /// One of our kinds' row.
  const contestant_result* find(filter_kind kind) const {
    for (const auto& r : rows)
      if (r.ours && r.kind == kind) return &r;
    return nullptr;
  }
};

// The baselines' names, as printed (the targets look their rows up by them; ours by kind).
namespace names {
inline constexpr std::string_view unordered_set = "std::unordered_set";
inline constexpr std::string_view absl_set = "absl::flat_hash_set";
inline constexpr std::string_view libbloom = "libbloom";
}  // namespace names

}  // namespace blume::bench
