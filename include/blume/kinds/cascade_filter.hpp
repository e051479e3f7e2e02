// SPDX-License-Identifier: Apache-2.0
// A filter cascade (Larisch et al., "CRLite", IEEE S&P 2017): exact membership on a finite universe. Given
// the included set R and the excluded set S (disjoint, together every key that will ever be asked), level
// 1 is a Bloom filter of R; the keys of S it wrongly admits form the set level 2 holds; the keys of R that
// level 2 admits form level 3's, and so on until a level admits none of the other set. A key of R ∪ S is
// then in R exactly when the first level that rejects it is even-numbered (or no level rejects it and
// the cascade has an odd number of levels). Keys outside R ∪ S get no guarantee.
//
// Level 1 is sized at rate |R|·√p / |S| (clamped to [1e-9, p]) and the deeper levels at p = ½, CRLite's
// choice, which keeps the total near |R|·log2(1/ε)·1.44 bits plus a geometric tail. A key is hashed once;
// each level probes with that digest remixed for the level (the seed stored per level is not used for
// probing), so a key's false positives at different levels are independent.
//
// Thread safety: const calls may run concurrently; nothing changes after construction.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <ranges>
#include <string>
#include <vector>

#include "blume/detail/key_interface.hpp"
#include "blume/error.hpp"
#include "blume/hash.hpp"
#include "blume/io/parameters.hpp"
#include "blume/io/serialization.hpp"
#include "blume/kind.hpp"
#include "blume/kinds/bloom_filter.hpp"

namespace blume {

class cascade_filter : public detail::key_interface<cascade_filter> {
  using key_calls = detail::key_interface<cascade_filter>;

 public:
  using key_calls::contains;
  using key_calls::hash;
  static constexpr filter_kind kind{17};
  static constexpr std::string_view name = "cascade";
  static constexpr kind_input input = kind_input::included_and_excluded;
  static constexpr bool is_static = true;
  static constexpr std::string_view plan_refusal =
      "a cascade's size depends on both sets: plan it with plan_cascade(included, excluded)";
  static constexpr std::string_view merge_refusal = "they are static: build one from the union of the sets instead";

  // The planner's model: exact on the universe it was built for; m = the levels' bits.
  static std::uint64_t plan_bytes(std::uint64_t bits) noexcept { return (bits + 7) / 8; }
  static double model_fpr(double /*n*/, double /*m*/, double /*k*/) noexcept { return 0.0; }
  /// See detail::plan_cascade.
  static filter_plan plan(std::uint64_t included, std::uint64_t excluded) {
    return detail::plan_cascade<cascade_filter, classic_layout>(included, excluded);
  }
  using hasher_type = xxh3_hasher;
  /// Most levels: the sets shrink by about half a level, so 64 levels cover any set that fits in memory.
  static constexpr std::size_t max_levels = 64;

  /// The cascade for included keys R and excluded keys S. A key in both is an invalid_argument naming its
  /// index in S. Duplicates within R or within S are fine.
  template <std::ranges::input_range Included, std::ranges::input_range Excluded>
  static cascade_filter build(const Included& included, const Excluded& excluded,
                              std::uint64_t seed = xxh3_hasher::default_seed) {
    const xxh3_hasher h(seed);
    std::vector<digest> r, s;
    for (auto&& k : included) r.push_back(hash_key(h, k));
    for (auto&& k : excluded) s.push_back(hash_key(h, k));
    const auto less = [](const digest& a, const digest& b) { return a.low != b.low ? a.low < b.low : a.high < b.high; };
    std::vector<digest> sorted_r = r;
    std::sort(sorted_r.begin(), sorted_r.end(), less);
    for (std::size_t i = 0; i < s.size(); ++i)
      if (std::binary_search(sorted_r.begin(), sorted_r.end(), s[i], less))
        throw invalid_argument("cascade filter: excluded key " + std::to_string(i) + " is also an included key");
    sorted_r.erase(std::unique(sorted_r.begin(), sorted_r.end()), sorted_r.end());
    std::sort(s.begin(), s.end(), less);
    s.erase(std::unique(s.begin(), s.end()), s.end());

    cascade_filter c;
    c.included_ = sorted_r.size();
    c.excluded_ = s.size();
    std::vector<digest> in = std::move(sorted_r), out = std::move(s);
    for (std::size_t level = 0; !in.empty(); ++level) {
      if (level == max_levels) throw invalid_argument("cascade filter: more than 64 levels needed");
      const double rate = level == 0 ? math::cascade_first_level_rate(in.size(), out.size()) : 0.5;
      bloom_filter<> f(in.size(), rate, seed + level + 1);
      for (const digest& d : in) f.insert(rehash(d, level));
      std::vector<digest> admitted;  // keys of the other set this level wrongly admits
      for (const digest& d : out)
        if (f.contains(rehash(d, level))) admitted.push_back(d);
      c.levels_.push_back(std::move(f));
      out = std::move(in);
      in = std::move(admitted);
    }
    c.seed_ = seed;
    c.index_levels();
    return c;
  }

  /// Whether the key is in R, exact for every key of R ∪ S.
  bool contains(const digest& d) const noexcept {
    for (std::size_t level = 0; level < levels_.size(); ++level)
      if (!levels_[level].contains(rehash(d, level))) return level % 2 == 1;
    return levels_.size() % 2 == 1;
  }

  /// How many of `keys` are reported present.
  std::size_t level_count() const noexcept { return levels_.size(); }
  const bloom_filter<>& level(std::size_t i) const noexcept { return levels_[i]; }
  std::uint64_t included() const noexcept { return included_; }
  std::uint64_t excluded() const noexcept { return excluded_; }
  std::size_t size_in_bytes() const noexcept {
    std::size_t n = sizeof(*this);
    for (const auto& l : levels_) n += l.size_in_bytes();
    return n;
  }
  std::uint64_t seed() const noexcept { return seed_; }
  xxh3_hasher hasher() const noexcept { return xxh3_hasher(seed_); }
  std::uint64_t inserted() const noexcept { return included_; }
  double estimated_count() const noexcept { return static_cast<double>(included_); }
  /// Exact on R ∪ S; outside it a key passes every level with about the first level's rate times ½ per
  /// further pair of levels, which callers that ask only about their universe never see.
  double predicted_fpr() const noexcept { return 0.0; }

  friend bool operator==(const cascade_filter& a, const cascade_filter& b) noexcept {
    return a.included_ == b.included_ && a.excluded_ == b.excluded_ && a.seed_ == b.seed_ && a.levels_ == b.levels_;
  }

  // ---- serialization hooks (format.hpp) --------------------------------------------------------------
  // bits = Σ levels' storage bits (each level's bits rounded up to 64), hashes = level count; extra =
  // {|S|, 0, 0, 0, 0, 0}; inserted = |R|. Payload: per level three u64 (bits, hashes, keys inserted),
  // then each level's bit array in order. Level i hashes with seed + i + 1, as built.

  filter_parameters parameters() const noexcept {
    filter_parameters p;
    for (const auto& l : levels_) p.primary += l.storage().size() * 8;
    p.secondary = static_cast<std::uint32_t>(levels_.size());
    p.extra = {excluded_, 0, 0, 0, 0, 0};
    return p;
  }
  template <class Fn>
  void for_each_payload_segment(Fn&& fn) const {
    fn(std::as_bytes(std::span<const std::uint64_t>(table_)));
    for (const auto& l : levels_) l.for_each_payload_segment(fn);
  }
  static std::uint64_t payload_size(const filter_parameters& p) {
    if (p.secondary > max_levels)
      throw invalid_argument("cascade of " + std::to_string(p.secondary) + " levels exceeds " +
                             std::to_string(max_levels));
    if (p.layout != 0) throw invalid_argument("layout " + std::to_string(p.layout) + " is not 0");
    for (std::size_t i = 1; i < p.extra.size(); ++i)
      if (p.extra[i] != 0) throw invalid_argument("reserved header bytes are not zero");
    if (p.primary % 64 != 0 || p.primary > max_filter_bits * max_levels)
      throw invalid_argument("storage bits " + std::to_string(p.primary) +
                             " are not whole words of a possible cascade");
    if ((p.secondary == 0) != (p.primary == 0)) throw invalid_argument("storage bits do not match the level count");
    return 24 * static_cast<std::uint64_t>(p.secondary) + p.primary / 8;
  }
  static cascade_filter from_payload(const filter_parameters& p, std::uint64_t seed, std::uint64_t inserted,
                                     byte_storage payload) {
    const std::size_t count = p.secondary;
    std::vector<std::uint64_t> table(3 * count);
    if (count != 0) std::memcpy(table.data(), payload.data(), table.size() * 8);
    // The table must account for exactly the header's storage before any level is allocated.
    std::uint64_t storage_bits = 0;
    for (std::size_t i = 0; i < count; ++i) {
      const std::uint64_t bits = table[3 * i], hashes = table[3 * i + 1];
      if (bits == 0 || bits > max_filter_bits || hashes == 0 || hashes > max_hashes)
        throw format_error("cascade level " + std::to_string(i) + " has " + std::to_string(bits) + " bits and " +
                           std::to_string(hashes) + " hashes");
      storage_bits += (bits + 63) / 64 * 64;
    }
    if (storage_bits != p.primary)
      throw format_error("cascade levels hold " + std::to_string(storage_bits) + " bits but the header says " +
                         std::to_string(p.primary));
    cascade_filter c;
    c.included_ = inserted;
    c.excluded_ = p.extra[0];
    c.seed_ = seed;
    const std::byte* at = payload.data() + table.size() * 8;
    for (std::size_t i = 0; i < count; ++i) {
      filter_parameters lp;
      lp.primary = table[3 * i];
      lp.secondary = static_cast<std::uint32_t>(table[3 * i + 1]);
      const std::uint64_t size = (lp.primary + 63) / 64 * 8;
      byte_storage part = byte_storage::allocate(size);
      std::memcpy(part.data(), at, size);
      at += size;
      c.levels_.push_back(bloom_filter<>::from_payload(lp, seed + i + 1, table[3 * i + 2], std::move(part)));
    }
    c.table_ = std::move(table);
    return c;
  }

  /// Bits of all levels' arrays per included key.
  double bits_per_included_key() const noexcept {
    std::uint64_t bits = 0;
    for (const auto& l : levels_) bits += l.storage().size() * 8;
    return included_ == 0 ? 0.0 : static_cast<double>(bits) / static_cast<double>(included_);
  }

 private:
  /// A level's own view of a key: the digest remixed with the level, so levels' false positives are
  /// independent even for keys whose digests collide in one level's probes.
  static digest rehash(const digest& d, std::size_t level) noexcept {
    return {mix(d.low + 0x9e3779b97f4a7c15ULL * (level + 1)), mix(d.high ^ (0xc2b2ae3d27d4eb4fULL * (level + 1)))};
  }

  /// The payload's level table, kept because the writer holds spans of the payload until it is written.
  void index_levels() {
    table_.clear();
    for (const auto& l : levels_) table_.insert(table_.end(), {l.bits(), l.hashes(), l.inserted()});
  }

  std::vector<bloom_filter<>> levels_;
  std::vector<std::uint64_t> table_;  // per level: bits, hashes, keys inserted
  std::uint64_t included_ = 0, excluded_ = 0, seed_ = 0;
};

/// The expected shape of cascade_filter::build for `included` and `excluded` distinct keys.
inline filter_plan plan_cascade(std::uint64_t included, std::uint64_t excluded) {
  return cascade_filter::plan(included, excluded);
}

static_assert(serializable_filter<cascade_filter>);

}  // namespace blume
