// SPDX-License-Identifier: Apache-2.0
// Benchmark keys, generated deterministically from their index so every run and every contestant sees the
// same keys: present keys are indices [0, n), absent keys are indices [n, n + probes), distinct by
// construction. Keys are generated into memory before anything is timed.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <ranges>
#include <span>
#include <string_view>
#include <vector>

#include "blume/detail/index_map_range.hpp"
#include "blume/hash.hpp"
#include "synthetic_keys.hpp"

namespace blume::bench {

using synthetic::append_email;
using synthetic::splitmix64;

/// The first `count` entries of a uniformly random permutation of [0, universe) (a partial Fisher–Yates
/// shuffle driven by splitmix64 from `seed`): a deterministic random order, without repeats.
inline std::vector<std::uint32_t> shuffled_prefix(std::uint64_t universe, std::uint64_t count, std::uint64_t seed) {
  std::vector<std::uint32_t> order(universe);
  std::iota(order.begin(), order.end(), std::uint32_t{0});
  for (std::uint64_t i = 0; i < count; ++i) {
    const std::uint64_t j = i + blume::reduce(splitmix64(seed + i), universe - i);
    std::swap(order[i], order[j]);
  }
  order.resize(count);
  order.shrink_to_fit();
  return order;
}

/// 64-bit integer keys: key i is splitmix64(i).
class int_keys {
 public:
  using key_type = std::uint64_t;
  static constexpr std::string_view description = "64-bit integer keys";
  static constexpr std::string_view short_name = "int";

  template <class IndexOf>
  static int_keys generate(std::size_t count, IndexOf index_of) {
    int_keys keys;
    keys.values_.resize(count);
    for (std::size_t j = 0; j < count; ++j) keys.values_[j] = splitmix64(index_of(j));
    return keys;
  }

  std::size_t size() const noexcept { return values_.size(); }
  key_type operator[](std::size_t i) const noexcept { return values_[i]; }
  std::span<const key_type> range() const noexcept { return values_; }
  /// Bytes a hash set holding views into this list would additionally need: none, sets hold the values.
  std::size_t arena_bytes() const noexcept { return 0; }

 private:
  std::vector<key_type> values_;
};

/// E-mail-like string keys, all bytes in one contiguous arena plus offsets (bounded memory at 100M keys);
/// everyone gets std::string_view into the arena.
class email_keys {
 public:
  using key_type = std::string_view;
  static constexpr std::string_view description = "e-mail-like string keys (20-32 bytes)";
  static constexpr std::string_view short_name = "email";

  template <class IndexOf>
  static email_keys generate(std::size_t count, IndexOf index_of) {
    email_keys keys;
    keys.bytes_.reserve(count * 32);  // an upper bound; untouched capacity is never committed
    keys.offsets_.reserve(count + 1);
    keys.offsets_.push_back(0);
    for (std::size_t j = 0; j < count; ++j) {
      append_email(index_of(j), keys.bytes_);
      keys.offsets_.push_back(keys.bytes_.size());
    }
    return keys;
  }

  std::size_t size() const noexcept { return offsets_.size() - 1; }
  key_type operator[](std::size_t i) const noexcept {
    return {bytes_.data() + offsets_[i], static_cast<std::size_t>(offsets_[i + 1] - offsets_[i])};
  }
  auto range() const noexcept {
    return blume::detail::index_map_range(0, size(), [this](std::uint64_t i) { return (*this)[i]; });
  }
  /// The key bytes that hash sets holding string_views into this list rely on.
  std::size_t arena_bytes() const noexcept { return bytes_.size(); }

 private:
  std::vector<char> bytes_;
  std::vector<std::uint64_t> offsets_;
};

/// Everything one configuration needs: what to insert and what to look up, in a random order.
template <class Keys>
struct workload {
  Keys present;          // keys [0, n) in index order: what every contestant inserts
  Keys positive_probes;  // min(n, probes) distinct present keys in a random order
  Keys negative_probes;  // keys [n, n + probes) in a random order: absent from every contestant
};

template <class Keys>
workload<Keys> make_workload(std::uint64_t items, std::uint64_t probes) {
  workload<Keys> w;
  w.present = Keys::generate(items, [](std::size_t i) { return i; });
  {
    const auto order = shuffled_prefix(items, std::min(items, probes), 0x706f736974697665ULL);  // "positive"
    w.positive_probes = Keys::generate(order.size(), [&](std::size_t j) { return order[j]; });
  }
  {
    const auto order = shuffled_prefix(probes, probes, 0x6e65676174697665ULL);  // "negative"
    w.negative_probes = Keys::generate(probes, [&](std::size_t j) { return items + order[j]; });
  }
  return w;
}

}  // namespace blume::bench
