// The bulk lookups of filters without a batched fast path: one call per key, answers to an output
// iterator. Filters that can prefetch (basic_bloom_filter) have their own pipelined versions.
#pragma once

#include <cstddef>
#include <iterator>
#include <ranges>

namespace blume::detail {

/// Writes one bool per key to `out`; returns how many answered true. Extra arguments go to contains.
template <class Filter, std::ranges::input_range R, class Out, class... Args>
std::size_t contains_each(const Filter& filter, const R& keys, Out out, const Args&... args) {
  std::size_t hits = 0;
  for (auto&& k : keys) {
    const bool hit = filter.contains(k, args...);
    hits += hit;
    *out = hit;
    ++out;
  }
  return hits;
}

template <class Filter, std::ranges::input_range R, class... Args>
std::size_t count_each(const Filter& filter, const R& keys, const Args&... args) {
  std::size_t hits = 0;
  for (auto&& k : keys) hits += filter.contains(k, args...);
  return hits;
}

}  // namespace blume::detail
