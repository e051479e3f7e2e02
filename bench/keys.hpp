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

namespace blume::bench {

/// splitmix64's output function (Steele, Lea & Flood 2014). Every step (add, xorshift, multiply by an odd
/// constant) is a bijection on 64-bit values, so distinct indices give distinct keys.
constexpr std::uint64_t splitmix64(std::uint64_t x) noexcept {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

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

namespace detail {
inline constexpr std::array<std::string_view, 16> names = {
    "ann", "bob", "carol", "dave", "erin", "frank", "grace", "heidi",
    "ivan", "judy", "mallory", "oscar", "peggy", "trent", "victor", "walter"};
inline constexpr std::array<std::string_view, 8> domains = {
    "gmail.com", "yahoo.com", "outlook.com", "example.org", "proton.me", "mail.de", "web.de", "icloud.com"};
}  // namespace detail

/// Appends the e-mail-like key of `index` to `out` and returns its length, 20 to 32 bytes:
///   <name> "." <index in base 36> "_" <digits> "@" <domain>
/// Names hold only letters and digits only follow the '_', so the base-36 part (between the first '.' and
/// the first '_') reads back as the index: distinct indices give distinct keys. Name, domain, length and
/// digits come from splitmix64(index), so neighbouring indices look unrelated.
/// `Bytes` is std::vector<char> (the benchmark's arena) or std::string (the CLI demo).
template <class Bytes>
std::size_t append_email(std::uint64_t index, Bytes& out) {
  std::uint64_t h = splitmix64(index ^ 0x656d61696cULL);  // "email"
  const std::string_view name = detail::names[h & 15];
  const std::string_view domain = detail::domains[(h >> 4) & 7];
  const std::size_t target_length = 20 + (h >> 7) % 13;  // 20..32
  h >>= 11;

  char base36[16];
  std::size_t base36_length = 0;
  std::uint64_t v = index;
  do {
    base36[base36_length++] = "0123456789abcdefghijklmnopqrstuvwxyz"[v % 36];
    v /= 36;
  } while (v != 0);

  // Besides the digits: at most 7 + 1 + 7 + 1 + 1 + 11 = 28 bytes (for indices below 36^7 ≈ 7.8e10), so one
  // digit always fits in 32 bytes; at least 3 + 1 + 1 + 1 + 1 + 6 = 13, so 20 bytes are always reachable.
  const std::size_t fixed = name.size() + 1 + base36_length + 1 + 1 + domain.size();
  const std::size_t digits = target_length > fixed ? target_length - fixed : 1;

  const std::size_t start = out.size();
  out.insert(out.end(), name.begin(), name.end());
  out.push_back('.');
  for (std::size_t i = base36_length; i-- > 0;) out.push_back(base36[i]);
  out.push_back('_');
  for (std::size_t i = 0; i < digits; ++i, h /= 10) out.push_back(static_cast<char>('0' + h % 10));
  out.push_back('@');
  out.insert(out.end(), domain.begin(), domain.end());
  return out.size() - start;
}

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
