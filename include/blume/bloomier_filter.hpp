// The Bloomier filter (Chazelle, Kilian, Rubinfeld & Tal 2004), built the way xor filters are: a static
// map from keys to small values. Every slot holds a word of f + v bits (an f-bit fingerprint check and a
// v-bit value); a key's three slots, in the binary fuse layout, XOR to fp(key)·2^v + value(key). A stored
// key always gets its value back; an absent key gets "absent" unless its three slots happen to XOR to its
// fingerprint, which happens with probability 2^−f.
//
// Thread safety: const calls may run concurrently; nothing changes after construction.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <optional>
#include <ranges>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "blume/detail/peeling.hpp"
#include "blume/error.hpp"
#include "blume/hash.hpp"
#include "blume/plan.hpp"
#include "blume/storage.hpp"
#include "blume/xor_filter.hpp"

namespace blume {

template <hasher Hasher = xxh3_hasher>
class bloomier_filter {
 public:
  using hasher_type = Hasher;
  static constexpr std::uint32_t max_value_bits = 32;
  static constexpr std::uint32_t max_check_bits = 32;
  static constexpr std::uint32_t max_attempts = 64;

  /// A map of keys[i] → values[i] (same length); values must fit in `value_bits` (1 … 32) bits, and an
  /// absent key is reported absent except with probability 2^−check_bits (1 … 32). A key given twice
  /// with the same value is stored once; with different values it is an invalid_argument naming both
  /// indexes, as is a value that does not fit (naming its index).
  template <std::ranges::input_range Keys, std::ranges::input_range Values>
  static bloomier_filter build(const Keys& keys, const Values& values, std::uint32_t value_bits,
                               std::uint32_t check_bits = 8, std::uint64_t seed = Hasher::default_seed) {
    if (value_bits == 0 || value_bits > max_value_bits)
      throw invalid_argument("Bloomier filter: value bits must be in [1, 32], got " + std::to_string(value_bits));
    if (check_bits == 0 || check_bits > max_check_bits)
      throw invalid_argument("Bloomier filter: check bits must be in [1, 32], got " + std::to_string(check_bits));
    const Hasher hasher(seed);
    struct entry {
      std::uint64_t low;
      std::uint64_t value;
      std::uint64_t index;
    };
    std::vector<entry> entries;
    auto v = std::ranges::begin(values);
    const auto v_end = std::ranges::end(values);
    std::uint64_t index = 0;
    for (auto&& k : keys) {
      if (v == v_end) throw invalid_argument("Bloomier filter: fewer values than keys");
      const auto value = static_cast<std::uint64_t>(*v);
      if (value >> value_bits != 0)
        throw invalid_argument("Bloomier filter: the value of key " + std::to_string(index) + " (" + std::to_string(value) +
                               ") does not fit in " + std::to_string(value_bits) + " bits");
      entries.push_back({hash_key(hasher, k).low, value, index});
      ++v;
      ++index;
    }
    if (v != v_end) throw invalid_argument("Bloomier filter: more values than keys");

    for (std::uint32_t attempt = 1; attempt <= max_attempts; ++attempt) {
      const std::uint64_t s = detail::seeded_hash(seed, 0x9e3779b97f4a7c15ULL * attempt);
      std::vector<std::pair<std::uint64_t, std::size_t>> by_hash(entries.size());
      for (std::size_t i = 0; i < entries.size(); ++i) by_hash[i] = {detail::seeded_hash(entries[i].low, s), i};
      std::sort(by_hash.begin(), by_hash.end());
      std::vector<std::uint64_t> hashes;
      std::vector<std::uint64_t> words;  // value per distinct hash
      hashes.reserve(by_hash.size());
      bool collided = false;
      for (std::size_t i = 0; i < by_hash.size(); ++i) {
        const entry& e = entries[by_hash[i].second];
        if (!hashes.empty() && hashes.back() == by_hash[i].first) {
          const entry& first = entries[by_hash[i - 1].second];
          if (first.low == e.low && first.value != e.value)
            throw invalid_argument("Bloomier filter: keys " + std::to_string(first.index) + " and " +
                                   std::to_string(e.index) + " are the same key with different values");
          if (first.low != e.low) collided = true;  // distinct keys, one 64-bit hash: try another seed
          continue;
        }
        hashes.push_back(by_hash[i].first);
        words.push_back(e.value);
      }
      if (collided) continue;
      const fuse_geometry g = fuse_geometry::for_keys(hashes.size());
      bloomier_filter f(g, s, Hasher(seed), value_bits, check_bits, hashes.size());
      if (hashes.empty()) return f;
      const auto order = detail::peel(hashes, g.slots, [&](std::uint64_t x) { return g.positions(x); });
      if (order.empty()) continue;
      for (std::size_t i = order.size(); i-- > 0;) {
        const std::uint64_t h = order[i].hash;
        const auto at = std::lower_bound(hashes.begin(), hashes.end(), h) - hashes.begin();
        std::uint64_t word = f.word_of(h, words[static_cast<std::size_t>(at)]);
        for (const std::uint64_t q : g.positions(h))
          if (q != order[i].slot) word ^= f.get(q);
        f.put(order[i].slot, word);
      }
      return f;
    }
    throw invalid_argument("Bloomier filter: construction did not succeed with " + std::to_string(max_attempts) + " seeds");
  }

  /// The key's value, or nothing when it is absent (a false "present" with probability 2^−check_bits).
  template <key K>
  std::optional<std::uint32_t> find(const K& k) const noexcept {
    if (keys_ == 0) return std::nullopt;
    const std::uint64_t h = detail::seeded_hash(hash_key(hasher_, k).low, construction_seed_);
    std::uint64_t word = 0;
    for (const std::uint64_t q : geometry_.positions(h)) word ^= get(q);
    if ((word >> value_bits_) != check_of(h)) return std::nullopt;
    return static_cast<std::uint32_t>(word & value_mask());
  }
  template <key K>
  bool contains(const K& k) const noexcept {
    return find(k).has_value();
  }

  std::uint64_t inserted() const noexcept { return keys_; }
  std::uint32_t value_bits() const noexcept { return value_bits_; }
  std::uint32_t check_bits() const noexcept { return check_bits_; }
  double predicted_fpr() const noexcept { return keys_ == 0 ? 0.0 : std::ldexp(1.0, -static_cast<int>(check_bits_)); }
  std::size_t size_in_bytes() const noexcept { return storage_.size() + sizeof(*this); }
  double bits_per_key() const noexcept {
    return keys_ == 0 ? 0.0 : static_cast<double>(geometry_.slots * width()) / static_cast<double>(keys_);
  }

 private:
  bloomier_filter(const fuse_geometry& g, std::uint64_t construction_seed, const Hasher& h, std::uint32_t value_bits,
                  std::uint32_t check_bits, std::uint64_t keys)
      : geometry_(g), construction_seed_(construction_seed), hasher_(h), value_bits_(value_bits),
        check_bits_(check_bits), keys_(keys),
        storage_(byte_storage::allocate((g.slots * (value_bits + check_bits) + 7) / 8 + 8)) {}

  std::uint32_t width() const noexcept { return value_bits_ + check_bits_; }
  std::uint64_t value_mask() const noexcept { return (std::uint64_t{1} << value_bits_) - 1; }
  std::uint64_t check_of(std::uint64_t h) const noexcept {
    const std::uint64_t x = h ^ (h >> 32);
    return check_bits_ == 64 ? x : x & ((std::uint64_t{1} << check_bits_) - 1);
  }
  std::uint64_t word_of(std::uint64_t h, std::uint64_t value) const noexcept { return (check_of(h) << value_bits_) | value; }

  // Slot s occupies bits [s·w, s·w + w) of the storage read as a little-endian bit string; w ≤ 64, so a
  // slot spans at most 9 bytes: two 64-bit loads when it straddles.
  std::uint64_t get(std::uint64_t slot) const noexcept {
    const std::uint64_t bit = slot * width();
    std::uint64_t lo = 0, hi = 0;
    std::memcpy(&lo, storage_.data() + bit / 8, 8);
    const unsigned shift = bit % 8;
    std::uint64_t v = lo >> shift;
    if (shift + width() > 64) {
      std::memcpy(&hi, storage_.data() + bit / 8 + 8, 1);
      v |= hi << (64 - shift);
    }
    return width() == 64 ? v : v & ((std::uint64_t{1} << width()) - 1);
  }
  void put(std::uint64_t slot, std::uint64_t value) noexcept {
    for (std::uint32_t b = 0; b < width(); ++b) {
      const std::uint64_t bit = slot * width() + b;
      auto& byte = storage_.data()[bit / 8];
      const auto mask = static_cast<std::byte>(1u << (bit % 8));
      byte = ((value >> b) & 1) ? (byte | mask) : (byte & ~mask);
    }
  }

  fuse_geometry geometry_;
  std::uint64_t construction_seed_;
  Hasher hasher_;
  std::uint32_t value_bits_;
  std::uint32_t check_bits_;
  std::uint64_t keys_;
  byte_storage storage_;
};

}  // namespace blume
