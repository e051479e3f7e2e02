// SPDX-License-Identifier: Apache-2.0
// The Bloomier filter (Chazelle, Kilian, Rubinfeld & Tal 2004), built the way xor filters are: a static
// map from keys to small values. Every slot holds a word of f + v bits (an f-bit fingerprint check and a
// v-bit value); a key's three slots, in the binary fuse layout, XOR to fp(key)·2^v + value(key). A stored
// key always gets its value back; an absent key gets "absent" unless its three slots happen to XOR to its
// fingerprint, which happens with probability 2^−f.
//
// Thread safety: const calls may run concurrently; nothing changes after construction.
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>
#include <ranges>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "blume/detail/key_interface.hpp"
#include "blume/detail/peeling.hpp"
#include "blume/error.hpp"
#include "blume/hash.hpp"
#include "blume/io/parameters.hpp"
#include "blume/io/serialization.hpp"
#include "blume/kind.hpp"
#include "blume/kinds/xor_filter.hpp"
#include "blume/plan.hpp"
#include "blume/storage.hpp"

namespace blume {

template <hasher Hasher = xxh3_hasher>
class bloomier_filter : public detail::key_interface<bloomier_filter<Hasher>> {
  using key_calls = detail::key_interface<bloomier_filter>;

 public:
  using key_calls::contains;
  using key_calls::find;
  using key_calls::hash;
  using hasher_type = Hasher;
  static constexpr filter_kind kind{16};
  static constexpr std::string_view name = "bloomier";
  static constexpr kind_input input = kind_input::keys_with_values;
  static constexpr bool is_static = true;
  /// Why plan(items, fpr) alone cannot size it.
  static constexpr std::string_view plan_refusal =
      "a bloomier map's size depends on its values' width: plan it with plan_bloomier(items, fpr, value_bits)";
  static constexpr std::string_view merge_refusal = "they are static: build one from the union of the maps instead";

  // The planner's model: m = slots·(f + v) bits, k = f check bits; an absent key passes the check with
  // probability 2^−f.
  static std::uint64_t plan_bytes(std::uint64_t bits) noexcept { return (bits + 7) / 8; }
  static double model_fpr(double /*n*/, double /*m*/, double k) noexcept {
    return std::ldexp(1.0, -static_cast<int>(k));
  }
  /// See detail::plan_bloomier.
  static filter_plan plan(std::uint64_t items, double fpr, std::uint32_t value_bits) {
    return detail::plan_bloomier<bloomier_filter>(items, fpr, value_bits);
  }
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
        throw invalid_argument("Bloomier filter: the value of key " + std::to_string(index) + " (" +
                               std::to_string(value) + ") does not fit in " + std::to_string(value_bits) + " bits");
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
      // The hashes are sorted, so a key's value is found by binary search rather than carried along.
      const bool peeled = detail::peel<detail::peel_order::depth_first>(
          hashes, g.slots, [&](std::uint64_t x) { return g.positions(x); },
          [&](std::uint64_t h, std::uint64_t own) {
            const auto at = std::lower_bound(hashes.begin(), hashes.end(), h) - hashes.begin();
            std::uint64_t word = f.word_of(h, words[static_cast<std::size_t>(at)]);
            for (const std::uint64_t q : g.positions(h))
              if (q != own) word ^= f.get(q);
            f.put(own, word);
          },
          [](std::uint64_t) {});
      if (!peeled) continue;
      return f;
    }
    throw invalid_argument("Bloomier filter: construction did not succeed with " + std::to_string(max_attempts) +
                           " seeds");
  }

  /// A map of the pairs keys[i] → values[i] whose absent keys pass at most at `fpr`: check bits
  /// ⌈log2(1/fpr)⌉ (clamped to [1, 32]); values `value_bits` wide, by default the widest value's width.
  template <std::ranges::input_range Keys, std::ranges::input_range Values>
  static bloomier_filter from_pairs(const Keys& keys, const Values& values, double fpr,
                                    std::optional<std::uint32_t> value_bits = std::nullopt) {
    if (!(fpr > 0.0 && fpr < 1.0))
      throw invalid_argument("false-positive rate must be in (0, 1), got " + detail::format_number(fpr));
    std::uint64_t widest = 0;
    for (auto&& v : values) widest = std::max(widest, static_cast<std::uint64_t>(v));
    const std::uint32_t width =
        value_bits.value_or(std::max<std::uint32_t>(1, static_cast<std::uint32_t>(std::bit_width(widest))));
    const auto check_bits = static_cast<std::uint32_t>(std::clamp(std::ceil(-std::log2(fpr)), 1.0, 32.0));
    return build(keys, values, width, check_bits);
  }

  /// The key's value, or nothing when it is absent (a false "present" with probability 2^−check_bits).
  std::optional<std::uint32_t> find(const digest& d) const noexcept {
    if (keys_ == 0) return std::nullopt;
    const std::uint64_t h = detail::seeded_hash(d.low, construction_seed_);
    std::uint64_t word = 0;
    for (const std::uint64_t q : geometry_.positions(h)) word ^= get(q);
    if ((word >> value_bits_) != check_of(h)) return std::nullopt;
    return static_cast<std::uint32_t>(word & value_mask());
  }
  bool contains(const digest& d) const noexcept { return find(d).has_value(); }
  std::uint64_t inserted() const noexcept { return keys_; }
  std::uint32_t value_bits() const noexcept { return value_bits_; }
  std::uint32_t check_bits() const noexcept { return check_bits_; }
  double predicted_fpr() const noexcept { return keys_ == 0 ? 0.0 : std::ldexp(1.0, -static_cast<int>(check_bits_)); }
  std::size_t size_in_bytes() const noexcept { return storage_.size() + sizeof(*this); }
  std::uint64_t seed() const noexcept { return hasher_.seed(); }
  const Hasher& hasher() const noexcept { return hasher_; }
  double estimated_count() const noexcept { return static_cast<double>(keys_); }

  friend bool operator==(const bloomier_filter& a, const bloomier_filter& b) noexcept {
    return a.keys_ == b.keys_ && a.construction_seed_ == b.construction_seed_ && a.seed() == b.seed() &&
           a.value_bits_ == b.value_bits_ && a.check_bits_ == b.check_bits_ && a.storage_.size() == b.storage_.size() &&
           std::memcmp(a.storage_.data(), b.storage_.data(), a.storage_.size()) == 0;
  }

  // ---- serialization hooks (format.hpp) --------------------------------------------------------------
  // bits = slots·(f + v), hashes = f (check bits), layout = v (value bits); extra = {construction seed,
  // segment length, segment count, 0, 0, 0}; inserted = keys. Payload: the slots as a little-endian bit
  // string, then zero bits up to a byte and 8 zero bytes of slack.

  filter_parameters parameters() const noexcept {
    filter_parameters p;
    p.primary = geometry_.slots * width();
    p.secondary = check_bits_;
    p.layout = value_bits_;
    p.extra = {construction_seed_, geometry_.segment_length, geometry_.segment_count, 0, 0, 0};
    return p;
  }
  template <class Fn>
  void for_each_payload_segment(Fn&& fn) const {
    fn(std::span<const std::byte>(storage_.data(), storage_.size()));
  }
  static std::uint64_t payload_size(const filter_parameters& p) {
    return (geometry_of(p).slots * (p.secondary + p.layout) + 7) / 8 + 8;
  }
  static bloomier_filter from_payload(const filter_parameters& p, std::uint64_t seed, std::uint64_t inserted,
                                      byte_storage payload) {
    fuse_geometry g;
    try {
      g = geometry_of(p);
    } catch (const invalid_argument& e) {
      throw format_error(std::string("invalid parameters: ") + e.what());
    }
    const std::uint64_t used = g.slots * (p.secondary + p.layout);
    if (payload.size() != (used + 7) / 8 + 8) throw format_error("payload size does not match the parameters");
    if (inserted > g.slots) throw format_error("more keys than slots");
    for (std::uint64_t bit = used; bit < payload.size() * 8; ++bit)
      if ((static_cast<unsigned>(payload.data()[bit / 8]) >> (bit % 8)) & 1u)
        throw format_error("padding bits past bit " + std::to_string(used) + " are set");
    return bloomier_filter(g, p.extra[0], Hasher(seed), p.layout, p.secondary, inserted, std::move(payload));
  }
  double bits_per_key() const noexcept {
    return keys_ == 0 ? 0.0 : static_cast<double>(geometry_.slots * width()) / static_cast<double>(keys_);
  }

 private:
  bloomier_filter(const fuse_geometry& g, std::uint64_t construction_seed, const Hasher& h, std::uint32_t value_bits,
                  std::uint32_t check_bits, std::uint64_t keys)
      : bloomier_filter(g, construction_seed, h, value_bits, check_bits, keys,
                        byte_storage::allocate((g.slots * (value_bits + check_bits) + 7) / 8 + 8)) {}
  bloomier_filter(const fuse_geometry& g, std::uint64_t construction_seed, const Hasher& h, std::uint32_t value_bits,
                  std::uint32_t check_bits, std::uint64_t keys, byte_storage storage)
      : geometry_(g), construction_seed_(construction_seed), hasher_(h), value_bits_(value_bits),
        check_bits_(check_bits), keys_(keys), storage_(std::move(storage)) {}

  static fuse_geometry geometry_of(const filter_parameters& p) {
    if (p.layout == 0 || p.layout > max_value_bits)
      throw invalid_argument("value bits " + std::to_string(p.layout) + " are outside [1, 32]");
    if (p.secondary == 0 || p.secondary > max_check_bits)
      throw invalid_argument("check bits " + std::to_string(p.secondary) + " are outside [1, 32]");
    for (std::size_t i = 3; i < p.extra.size(); ++i)
      if (p.extra[i] != 0) throw invalid_argument("reserved header bytes are not zero");
    const std::uint64_t length = p.extra[1], count = p.extra[2];
    if (length < 4 || length > (1u << 18) || !std::has_single_bit(length))
      throw invalid_argument("segment length " + std::to_string(length) + " is not a power of two in [4, 2^18]");
    if (count == 0 || count > max_filter_bits / length) throw invalid_argument("bad segment count");
    const fuse_geometry g = fuse_geometry::from(length, count);
    if (g.slots > max_filter_bits / (p.secondary + p.layout) || p.primary != g.slots * (p.secondary + p.layout))
      throw invalid_argument("bits do not match the slots");
    return g;
  }

  std::uint32_t width() const noexcept { return value_bits_ + check_bits_; }
  std::uint64_t value_mask() const noexcept { return (std::uint64_t{1} << value_bits_) - 1; }
  std::uint64_t check_of(std::uint64_t h) const noexcept {
    const std::uint64_t x = h ^ (h >> 32);
    return check_bits_ == 64 ? x : x & ((std::uint64_t{1} << check_bits_) - 1);
  }
  std::uint64_t word_of(std::uint64_t h, std::uint64_t value) const noexcept {
    return (check_of(h) << value_bits_) | value;
  }

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

/// A Bloomier map of `items` keys to `value_bits`-bit values, absent keys reported at most at `fpr`.
inline filter_plan plan_bloomier(std::uint64_t items, double fpr, std::uint32_t value_bits) {
  return bloomier_filter<>::plan(items, fpr, value_bits);
}

static_assert(serializable_filter<bloomier_filter<>>);

}  // namespace blume
