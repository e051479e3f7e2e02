// SPDX-License-Identifier: Apache-2.0
// An array of m cells holding lattice values, probed k times per key with the classic probe sequence:
// the storage and probing the compact approximator and the spatial filter share. Inserting joins the
// value into the key's k cells; a lookup meets them. Cells are native unsigned integers, little-endian in
// files (hash.hpp asserts a little-endian host), so a file's payload is used in place.
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <ranges>
#include <span>
#include <string>
#include <utility>

#include "blume/detail/bits.hpp"
#include "blume/detail/key_interface.hpp"
#include "blume/detail/pipeline.hpp"
#include "blume/detail/probe_ops.hpp"
#include "blume/error.hpp"
#include "blume/hash.hpp"
#include "blume/io/parameters.hpp"
#include "blume/plan.hpp"
#include "blume/storage.hpp"

namespace blume {

/// A lattice of cell values: an unsigned integer type with a least element (bottom), a join (least upper
/// bound) and a meet (greatest lower bound), and the id files record it by. join and meet must be
/// associative, commutative and idempotent, with bottom the identity of join: that is what makes the
/// approximator's answer never fall below a key's value, whatever the order of inserts. Bottom is 0,
/// what fresh (zeroed) cells hold.
template <class L>
concept lattice =
    std::unsigned_integral<typename L::value_type> && requires(typename L::value_type a, typename L::value_type b) {
      { L::bottom() } -> std::same_as<typename L::value_type>;
      { L::join(a, b) } -> std::same_as<typename L::value_type>;
      { L::meet(a, b) } -> std::same_as<typename L::value_type>;
      { L::id } -> std::convertible_to<std::uint32_t>;
    };

/// Unsigned integers under max and min: an upper bound on a per-key number (a last-seen time, a
/// frequency, a version). Ids 0x108, 0x110, 0x120, 0x140 (0x100 + the width in bits).
template <std::unsigned_integral T>
struct max_lattice {
  using value_type = T;
  static constexpr std::uint32_t id = 0x100 + 8 * sizeof(T);
  static constexpr T bottom() noexcept { return 0; }
  static constexpr T join(T a, T b) noexcept { return a > b ? a : b; }
  static constexpr T meet(T a, T b) noexcept { return a < b ? a : b; }
};

/// Small sets (bit masks) under union and intersection: a superset of a key's tags. Ids 0x208, 0x210,
/// 0x220, 0x240.
template <std::unsigned_integral T>
struct bitset_lattice {
  using value_type = T;
  static constexpr std::uint32_t id = 0x200 + 8 * sizeof(T);
  static constexpr T bottom() noexcept { return 0; }
  static constexpr T join(T a, T b) noexcept { return static_cast<T>(a | b); }
  static constexpr T meet(T a, T b) noexcept { return static_cast<T>(a & b); }
};

namespace detail {

template <lattice L>
class lattice_cells {
  static_assert(L::bottom() == 0,
                "bottom must be 0, what fresh (zeroed) cells hold: a lattice ordered the other way stores ~v");

 public:
  using value_type = typename L::value_type;
  /// The largest cell count: a cell array may take up to 2^40 bits.
  static constexpr std::uint64_t max_cells = max_filter_bits / (8 * sizeof(value_type));

  /// Bytes of `cells` cells, in whole 64-bit words (the payload's size).
  static constexpr std::uint64_t bytes_for(std::uint64_t cells) noexcept {
    return (cells * sizeof(value_type) + 7) / 8 * 8;
  }
  static void check(std::uint64_t cells, std::uint32_t hashes) {
    if (cells == 0 || cells > max_cells)
      throw invalid_argument("cells must be in [1, " + std::to_string(max_cells) + "], got " + std::to_string(cells));
    if (hashes == 0 || hashes > max_hashes)
      throw invalid_argument("hashes must be in [1, 64], got " + std::to_string(hashes));
  }

  lattice_cells(std::uint64_t cells, std::uint32_t hashes)
      : lattice_cells(cells, hashes, (check(cells, hashes), byte_storage::allocate(bytes_for(cells)))) {}
  /// Over a payload of exactly bytes_for(cells) bytes; the caller checked the geometry and the size.
  lattice_cells(std::uint64_t cells, std::uint32_t hashes, byte_storage storage) noexcept
      : cells_(cells), hashes_(hashes), storage_(std::move(storage)) {}

  void join(const digest& d, value_type v) noexcept {
    value_type* c = data();
    double_hashing_probes(d, hashes_, cells_, [&](std::uint64_t i) {
      c[i] = L::join(c[i], v);
      return true;
    });
  }
  /// The meet of the key's k cells; stops at bottom, below which nothing can fall.
  value_type meet(const digest& d) const noexcept {
    const value_type* c = data();
    value_type acc{};
    bool first = true;
    double_hashing_probes(d, hashes_, cells_, [&](std::uint64_t i) {
      acc = first ? c[i] : L::meet(acc, c[i]);
      first = false;
      return acc != L::bottom();
    });
    return acc;
  }
  /// meet() for every item of `items` (keys or digests; hash(key) gives a key's digest), calling
  /// use(index, meet) in order. The cells of a batch of keys are prefetched while the batch before it is
  /// read, so a lookup's k cache misses overlap with other keys' instead of adding up.
  template <class R, class Hash, class Use>
  void meet_many(const R& items, Hash hash, Use&& use) const {
    std::size_t i = 0;
    pipelined(
        items, hash, [&](const digest& d) { for_each_cell(d, [](const value_type* c) { prefetch_read(c); }); },
        [&](std::span<const digest> batch) {
          for (const digest& d : batch) use(i++, meet(d));
        });
  }
  /// join() of values[i] into the cells of items[i], pipelined as meet_many.
  template <class R, class Hash, class Value>
  void join_many(const R& items, Hash hash, Value value_of) {
    std::size_t i = 0;
    pipelined(
        items, hash, [&](const digest& d) { for_each_cell(d, [](const value_type* c) { prefetch_write(c); }); },
        [&](std::span<const digest> batch) {
          for (const digest& d : batch) join(d, value_of(i++));
        });
  }

  /// Cell-wise join with an array of the same geometry: every key of either answers at least as before.
  void join_all(const lattice_cells& other) noexcept {
    value_type* c = data();
    const value_type* o = other.data();
    for (std::uint64_t i = 0; i < cells_; ++i) c[i] = L::join(c[i], o[i]);
  }

  std::uint64_t cells() const noexcept { return cells_; }
  std::uint32_t hashes() const noexcept { return hashes_; }
  value_type cell(std::uint64_t i) const noexcept { return data()[i]; }
  /// Cells above bottom: the fill the count estimate reads.
  std::uint64_t occupied() const noexcept {
    std::uint64_t n = 0;
    for (std::uint64_t i = 0; i < cells_; ++i) n += data()[i] != L::bottom();
    return n;
  }
  std::span<const std::byte> bytes() const noexcept { return {storage_.data(), storage_.size()}; }
  std::size_t storage_bytes() const noexcept { return storage_.size(); }

  /// Padding past the last cell must be zero, so that one set of cells has one encoding.
  static void check_payload(std::uint64_t cells, std::span<const std::byte> payload) {
    if (payload.size() != bytes_for(cells)) throw format_error("payload size does not match the cells");
    for (std::size_t i = cells * sizeof(value_type); i < payload.size(); ++i)
      if (payload[i] != std::byte{0}) throw format_error("padding past the last cell is not zero");
  }

  friend bool operator==(const lattice_cells& a, const lattice_cells& b) noexcept {
    return a.cells_ == b.cells_ && a.hashes_ == b.hashes_ && a.storage_.size() == b.storage_.size() &&
           std::memcmp(a.storage_.data(), b.storage_.data(), a.storage_.size()) == 0;
  }

 private:
  template <class Fn>
  void for_each_cell(const digest& d, Fn fn) const noexcept {
    const value_type* c = data();
    double_hashing_probes(d, hashes_, cells_, [&](std::uint64_t i) {
      fn(c + i);
      return true;
    });
  }
  value_type* data() noexcept { return reinterpret_cast<value_type*>(storage_.data()); }
  const value_type* data() const noexcept { return reinterpret_cast<const value_type*>(storage_.data()); }

  std::uint64_t cells_;
  std::uint32_t hashes_;
  byte_storage storage_;
};

/// What the spatial filter and the compact approximator share: the hasher and the cells, and the lookups
/// over them. A lookup meets the key's cells; bottom answers nothing, any other value answers itself as
/// the kind's Answer (a set number, a lattice value). Derived adds its inserts, its model and its file hooks.
template <class Derived, lattice L, class Hasher, class Answer>
class lattice_filter : public key_interface<Derived> {
  using key_calls = key_interface<Derived>;

 public:
  using key_calls::contains;
  using key_calls::find;
  using key_calls::hash;
  using key_calls::insert;
  using hasher_type = Hasher;
  using cells_type = lattice_cells<L>;
  using value_type = typename L::value_type;

  /// The key's answer, or nothing when the meet of its cells is bottom.
  std::optional<Answer> find(const digest& d) const noexcept { return answer(cells_.meet(d)); }
  bool contains(const digest& d) const noexcept { return cells_.meet(d) != L::bottom(); }

  // Bulk lookups, pipelined: the cells of a batch of keys are prefetched while the batch before it is read.

  /// Writes find() of each key to `out`; returns how many were found.
  template <std::ranges::input_range R, class Out>
  std::size_t find_many(const R& keys, Out out) const {
    std::size_t found = 0;
    cells_.meet_many(keys, hasher_fn(), [&](std::size_t, value_type v) {
      found += v != L::bottom();
      *out++ = answer(v);
    });
    return found;
  }
  template <std::ranges::input_range R, class Out>
  std::size_t contains_many(const R& keys, Out out) const {
    std::size_t hits = 0;
    cells_.meet_many(keys, hasher_fn(), [&](std::size_t, value_type v) {
      hits += v != L::bottom();
      *out++ = v != L::bottom();
    });
    return hits;
  }
  template <std::ranges::input_range R>
  std::size_t count_contained(const R& keys) const {
    std::size_t hits = 0;
    cells_.meet_many(keys, hasher_fn(), [&](std::size_t, value_type v) { hits += v != L::bottom(); });
    return hits;
  }

  /// Distinct keys, from the cells above bottom (the classic estimate).
  double estimated_count() const noexcept {
    return math::classic_items(static_cast<double>(cells_.occupied()), static_cast<double>(cells_.cells()),
                               cells_.hashes());
  }
  std::uint64_t cells() const noexcept { return cells_.cells(); }
  std::uint32_t hashes() const noexcept { return cells_.hashes(); }
  std::uint64_t seed() const noexcept { return hasher_.seed(); }
  const Hasher& hasher() const noexcept { return hasher_; }

 protected:
  lattice_filter(const Hasher& h, cells_type cells) : hasher_(h), cells_(std::move(cells)) {}

  static std::optional<Answer> answer(value_type v) noexcept {
    if (v == L::bottom()) return std::nullopt;
    return static_cast<Answer>(v);
  }
  auto hasher_fn() const noexcept {
    return [this](const auto& k) { return hash_key(hasher_, k); };
  }
  /// Same cells, probes and seed: what merging two filters of a kind needs first.
  bool same_geometry(const lattice_filter& other) const noexcept {
    return other.cells_.cells() == cells_.cells() && other.cells_.hashes() == cells_.hashes() && other.seed() == seed();
  }
  /// The header fields every lattice kind fills alike: primary = cells, secondary = k.
  filter_parameters cell_parameters() const noexcept {
    filter_parameters p;
    p.primary = cells_.cells();
    p.secondary = cells_.hashes();
    return p;
  }

  Hasher hasher_;
  cells_type cells_;
};

}  // namespace detail
}  // namespace blume
