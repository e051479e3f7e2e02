// SPDX-License-Identifier: Apache-2.0
// The integer-key quality run (blume_bench --quality): every kind filled with n integer keys of one
// pattern and probed with the next keys of the same pattern, its measured false-positive rate held to the
// rate the filter predicts. Structured keys are where a cheap integer hash shows its flaws: sequential keys
// or multiples of 2^32 that share low bits, or whose block indices fall more evenly than random ones would,
// move the measured rate off the model in either direction.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "contestants.hpp"
#include "our_kinds.hpp"

namespace blume::bench {

struct key_pattern {
  const char* name;
  unsigned shift;  // key i is i << shift ...
  bool negative;   // ... or −(i + 1)
  bool random;     // ... or splitmix64(i)
  std::uint64_t key(std::uint64_t i) const noexcept {
    if (random) return splitmix64(i);
    if (negative) return ~i;  // −(i + 1) in two's complement
    return i << shift;
  }
  /// Whether keys 0 .. count − 1 are distinct.
  bool distinct_up_to(std::uint64_t count) const noexcept {
    return shift == 0 || count <= (std::uint64_t{1} << (64 - shift));
  }
};

inline const std::vector<key_pattern>& key_patterns() {
  static const std::vector<key_pattern> all = {
      {"sequential", 0, false, false},         {"multiples of 2^8", 8, false, false},
      {"multiples of 2^16", 16, false, false}, {"multiples of 2^32", 32, false, false},
      {"multiples of 2^40", 40, false, false}, {"random 64-bit", 0, false, true},
      {"small negatives", 0, true, false},
  };
  return all;
}

struct quality_row {
  std::string kind, pattern;
  double measured = 0, predicted = 0, z = 0;
  std::uint64_t false_negatives = 0;
  bool within = true;
};

template <class F>
void quality_of_kind(std::uint64_t n, std::uint64_t probes, std::vector<quality_row>& rows) {
  constexpr std::size_t chunk = 1 << 16;
  std::vector<std::uint64_t> keys;
  keys.reserve(chunk);
  for (const key_pattern& p : key_patterns()) {
    if (!p.distinct_up_to(n + probes)) continue;
    kind_contestant<F> c(n);
    const auto each_chunk = [&](std::uint64_t from, std::uint64_t to, auto&& use) {
      for (std::uint64_t at = from; at < to; at += chunk) {
        keys.clear();
        for (std::uint64_t i = at; i < std::min(to, at + chunk); ++i) keys.push_back(p.key(i));
        use();
      }
    };
    if constexpr (F::is_static) {
      each_chunk(0, n, [&] {
        for (const std::uint64_t k : keys) c.insert(k);
      });
      c.finish();
    } else {
      each_chunk(0, n, [&] { c.insert_many(keys); });
    }
    const auto hits = [&] {
      std::uint64_t h = 0;
      if constexpr (requires { c.count_contained(keys); }) {
        h = c.count_contained(keys);
      } else {
        for (const std::uint64_t k : keys) h += c.contains(k);
      }
      return h;
    };
    std::uint64_t positives = 0, found = 0;
    each_chunk(n, n + probes, [&] { positives += hits(); });
    // Every key that went in answers maybe (a sample of 1M of them, the whole set up to that).
    const std::uint64_t step = std::max<std::uint64_t>(1, n / 1'000'000), checked = (n + step - 1) / step;
    for (std::uint64_t i = 0; i < n; i += step) found += c.contains(p.key(i));
    quality_row r;
    r.kind = std::string(F::name);
    r.pattern = p.name;
    r.measured = static_cast<double>(positives) / static_cast<double>(probes);
    r.predicted = c.predicted_fpr();
    const double sigma = std::sqrt(r.predicted * (1 - r.predicted) / static_cast<double>(probes));
    r.z = sigma > 0 ? (r.measured - r.predicted) / sigma : 0;
    r.false_negatives = kind_contestant<F>::false_negatives_by_design ? 0 : checked - found;
    // 99.9% two-sided (3.29σ), widened by 1% of the rate for the models' own approximations.
    r.within = std::abs(r.measured - r.predicted) <= 3.29 * sigma + 0.01 * r.predicted && r.false_negatives == 0;
    std::fprintf(stderr, "  %-12s %-18s measured %.5f%%  predicted %.5f%%  z %+.2f%s\n", r.kind.c_str(), p.name,
                 100 * r.measured, 100 * r.predicted, r.z,
                 r.false_negatives ? "  FALSE NEGATIVES" : (r.within ? "" : "  OUTSIDE"));
    rows.push_back(std::move(r));
  }
}

/// Runs the quality table for the selected kinds; prints it as Markdown and returns whether every row holds.
template <class Selected>
bool key_quality(std::uint64_t n, std::uint64_t probes, Selected selected) {
  std::cerr << "Integer-key quality: " << n << " keys, " << probes << " absent probes per pattern\n";
  std::vector<quality_row> rows;
  for_each_benchmarked_kind([&](auto type) {
    using F = typename decltype(type)::type;
    if (!selected(std::string(F::name))) return;
    quality_of_kind<F>(n, probes, rows);
  });
  std::printf(
      "| kind | keys (n = %llu, %llu absent probes) | measured FPR | predicted | z | within 99.9%% |\n"
      "|---|---|---:|---:|---:|---|\n",
      static_cast<unsigned long long>(n), static_cast<unsigned long long>(probes));
  bool all = true;
  for (const quality_row& r : rows) {
    all = all && r.within;
    std::printf("| %s | %s | %.4f%% | %.4f%% | %+.2f | %s |\n", r.kind.c_str(), r.pattern.c_str(), 100 * r.measured,
                100 * r.predicted, r.z, r.false_negatives ? "**false negatives**" : (r.within ? "yes" : "**no**"));
  }
  return all;
}

}  // namespace blume::bench
