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
  metric_count
};

inline constexpr double not_applicable = std::numeric_limits<double>::quiet_NaN();

/// One repetition of one contestant.
struct sample {
  std::array<double, metric_count> ns_per_key;  // not_applicable where the contestant has no such call
  std::uint64_t bytes = 0;
  std::uint64_t positive_hits = 0;  // must equal the number of positive probes: no false negatives
  std::uint64_t negative_hits = 0;  // false positives
  std::uint64_t false_negatives = 0;  // present probes answered "absent" (kinds that may miss by design)
  double predicted_fpr = 0;
  std::string details;           // the kind's geometry, in words (family kinds)
  unsigned fingerprint_bits = 0;  // fingerprint tables (cuckoo, quotient)
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
  std::uint64_t bytes = 0;
  double bits_per_key = 0;
  double measured_fpr = 0;
  double predicted_fpr = 0;
  bool false_negatives_by_design = false;  // stable, aging: misses are measured, not a failure
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

  const contestant_result* find(std::string_view name) const {
    for (const auto& r : rows)
      if (r.name == name) return &r;
    return nullptr;
  }
};

// Contestant names, as printed (the targets look rows up by them).
namespace names {
inline constexpr std::string_view bloom = "bloom_filter<>";
inline constexpr std::string_view partitioned = "partitioned_bloom_filter<>";
inline constexpr std::string_view blocked = "blocked_bloom_filter<>";
inline constexpr std::string_view split_block = "split_block_bloom_filter<>";
inline constexpr std::string_view unordered_set = "std::unordered_set";
inline constexpr std::string_view absl_set = "absl::flat_hash_set";
inline constexpr std::string_view libbloom = "libbloom";
inline constexpr std::string_view counting = "counting_bloom_filter<4>";
inline constexpr std::string_view scalable = "scalable_bloom_filter<>";
inline constexpr std::string_view cuckoo = "cuckoo_filter<>";
inline constexpr std::string_view quotient = "quotient_filter<>";
inline constexpr std::string_view stable = "stable_bloom_filter<>";
inline constexpr std::string_view aging = "aging_bloom_filter<>";
inline constexpr std::string_view xor8 = "xor8_filter<>";
inline constexpr std::string_view xor16 = "xor16_filter<>";
inline constexpr std::string_view fuse8 = "fuse8_filter<>";
inline constexpr std::string_view fuse16 = "fuse16_filter<>";
inline constexpr std::string_view gcs = "golomb_coded_set<> (2^-8)";
}  // namespace names

}  // namespace blume::bench
