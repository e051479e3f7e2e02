// SPDX-License-Identifier: Apache-2.0
// An array of m cells holding lattice values, probed k times per key: the storage and probing the compact
// approximator and the spatial filter share. Inserting joins the value into the key's k cells; a lookup
// meets them. Cells are native unsigned integers, little-endian in files (hash.hpp asserts a little-endian
// host), so a file's payload is used in place.
//
// Two layouts. Classic: the k cells anywhere in the array (the classic probe sequence), k cache misses a
// lookup. Blocked: all k cells in one 64-byte block (as the blocked Bloom filter does for bits), one miss;
// keys spread unevenly over blocks, so the same rate takes more cells (math::blocked_fpr, exact for these
// probes), more the wider the cell, since a block holds fewer of them.
#pragma once

#include <bit>
#include <cmath>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <ranges>
#include <span>
#include <string>
#include <string_view>
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

/// Where a key's k cells lie (see lattice_cells.hpp): anywhere in the array, or all in one 64-byte block.
enum class cell_layout : std::uint8_t { classic = 0, blocked = 1 };
/// The header's extra field that records the cell layout (0 classic, 1 blocked) in files of the kinds
/// built on lattice cells; earlier readers require it zero, so they refuse blocked files instead of misreading them.
inline constexpr std::size_t cell_layout_field = 5;
/// The layout a user names: "classic" or "blocked" (the tool's --cells, Python's cells=); `option` is what
/// the error calls the setting.
inline cell_layout parse_cell_layout(std::string_view name, std::string_view option = "cells") {
  if (name == "classic") return cell_layout::classic;
  if (name == "blocked") return cell_layout::blocked;
  throw invalid_argument(std::string(option) + " must be classic or blocked, got '" + std::string(name) + "'");
}

namespace detail {

template <lattice L>
class lattice_cells {
  static_assert(L::bottom() == 0,
                "bottom must be 0, what fresh (zeroed) cells hold: a lattice ordered the other way stores ~v");

 public:
  using value_type = typename L::value_type;
  /// The largest cell count: a cell array may take up to 2^40 bits.
  static constexpr std::uint64_t max_cells = max_filter_bits / (8 * sizeof(value_type));
  /// Cells in one 64-byte block of the blocked layout (64 of 8 bits … 8 of 64 bits).
  static constexpr std::uint32_t block_cells = 64 / sizeof(value_type);
  static constexpr unsigned block_offset_bits = std::countr_zero(block_cells);

  /// Bytes of `cells` cells, in whole 64-bit words (the payload's size).
  static constexpr std::uint64_t bytes_for(std::uint64_t cells) noexcept {
    return (cells * sizeof(value_type) + 7) / 8 * 8;
  }
  static void check(std::uint64_t cells, std::uint32_t hashes, cell_layout layout) {
    if (cells == 0 || cells > max_cells)
      throw invalid_argument("cells must be in [1, " + std::to_string(max_cells) + "], got " + std::to_string(cells));
    if (hashes == 0 || hashes > max_hashes)
      throw invalid_argument("hashes must be in [1, 64], got " + std::to_string(hashes));
    if (layout == cell_layout::blocked && cells % block_cells != 0)
      throw invalid_argument("blocked cells come in blocks of " + std::to_string(block_cells) + " (64 bytes), got " +
                             std::to_string(cells) + " cells");
    if (layout != cell_layout::classic && layout != cell_layout::blocked)
      throw invalid_argument("unknown cell layout " + std::to_string(static_cast<int>(layout)));
  }

  lattice_cells(std::uint64_t cells, std::uint32_t hashes, cell_layout layout = cell_layout::classic)
      : lattice_cells(cells, hashes, layout, (check(cells, hashes, layout), byte_storage::allocate(bytes_for(cells)))) {
  }
  /// Over a payload of exactly bytes_for(cells) bytes; the caller checked the geometry and the size.
  lattice_cells(std::uint64_t cells, std::uint32_t hashes, cell_layout layout, byte_storage storage) noexcept
      : cells_(cells), hashes_(hashes), layout_(layout), storage_(std::move(storage)) {}

  void join(const digest& d, value_type v) noexcept {
    if (blocked()) {
      value_type* block = block_of(d);
      block_offsets_loop<block_offset_bits>(d.low, hashes_, [&](unsigned o) { block[o] = L::join(block[o], v); });
      return;
    }
    value_type* c = data();
    double_hashing_probes(d, hashes_, cells_, [&](std::uint64_t i) {
      c[i] = L::join(c[i], v);
      return true;
    });
  }
  /// The meet of the key's k cells. Classic: stops at bottom, below which nothing can fall. Blocked: meets
  /// them all, branch-free, since they are in one cache line and a mispredicted exit costs more.
  value_type meet(const digest& d) const noexcept {
    value_type acc{};
    bool first = true;
    if (blocked()) {
      const value_type* block = block_of(d);
      block_offsets_loop<block_offset_bits>(d.low, hashes_, [&](unsigned o) {
        acc = first ? block[o] : L::meet(acc, block[o]);
        first = false;
      });
      return acc;
    }
    const value_type* c = data();
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
  cell_layout layout() const noexcept { return layout_; }
  bool blocked() const noexcept { return layout_ == cell_layout::blocked; }

  // The layout's model. With n keys inserted:
  /// the rate at which all k cells of another key were reached (its false-positive rate);
  double all_reached(double n) const noexcept {
    const double m = static_cast<double>(cells_);
    return blocked() ? math::blocked_fpr(n, m, hashes_, block_cells) : math::bloom_fpr(n, m, hashes_);
  }
  /// the expected share of cells no key reached;
  double unreached(double n) const noexcept {
    return math::unreached_share(n, static_cast<double>(cells_), hashes_, blocked() ? block_cells : 0);
  }
  /// the keys that leave `occupied` cells above bottom, inverting unreached().
  double items_from_occupied(double occupied) const noexcept {
    const double m = static_cast<double>(cells_);
    return blocked() ? math::blocked_items(occupied, m, hashes_, block_cells)
                     : math::classic_items(occupied, m, hashes_);
  }
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
    return a.cells_ == b.cells_ && a.hashes_ == b.hashes_ && a.layout_ == b.layout_ &&
           a.storage_.size() == b.storage_.size() &&
           std::memcmp(a.storage_.data(), b.storage_.data(), a.storage_.size()) == 0;
  }

 private:
  template <class Fn>
  void for_each_cell(const digest& d, Fn fn) const noexcept {
    if (blocked()) return fn(block_of(d));  // the block is one cache line
    const value_type* c = data();
    double_hashing_probes(d, hashes_, cells_, [&](std::uint64_t i) {
      fn(c + i);
      return true;
    });
  }
  const value_type* block_of(const digest& d) const noexcept {
    return data() + reduce(d.high, cells_ / block_cells) * block_cells;
  }
  value_type* block_of(const digest& d) noexcept { return data() + reduce(d.high, cells_ / block_cells) * block_cells; }
  value_type* data() noexcept { return reinterpret_cast<value_type*>(storage_.data()); }
  const value_type* data() const noexcept { return reinterpret_cast<const value_type*>(storage_.data()); }

  std::uint64_t cells_;
  std::uint32_t hashes_;
  cell_layout layout_;
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
  /// Cells in one block of the blocked layout: blocked geometries come in multiples of it.
  static constexpr std::uint32_t block_cells = cells_type::block_cells;

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

  /// Distinct keys, from the cells above bottom (the layout's estimate, inverting its expected fill).
  double estimated_count() const noexcept { return cells_.items_from_occupied(static_cast<double>(cells_.occupied())); }
  std::uint64_t cells() const noexcept { return cells_.cells(); }
  std::uint32_t hashes() const noexcept { return cells_.hashes(); }
  cell_layout layout() const noexcept { return cells_.layout(); }
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
  /// Same cells, probes, layout and seed: what merging two filters of a kind needs first.
  bool same_geometry(const lattice_filter& other) const noexcept {
    return other.cells_.cells() == cells_.cells() && other.cells_.hashes() == cells_.hashes() &&
           other.cells_.layout() == cells_.layout() && other.seed() == seed();
  }
  /// The header fields every lattice kind fills alike: primary = cells, secondary = k, layout = `id` (the
  /// cell width or lattice id), extra[cell_layout_field] = the cell layout.
  filter_parameters cell_parameters(std::uint32_t id) const noexcept {
    filter_parameters p;
    p.primary = cells_.cells();
    p.secondary = cells_.hashes();
    p.layout = id;
    p.extra[cell_layout_field] = static_cast<std::uint64_t>(cells_.layout());
    return p;
  }
  /// The cell layout a header records; invalid_argument for an unknown one.
  static cell_layout layout_of(const filter_parameters& p) {
    const std::uint64_t layout = p.extra[cell_layout_field];
    if (layout > static_cast<std::uint64_t>(cell_layout::blocked))
      throw invalid_argument("unknown cell layout " + std::to_string(layout));
    return static_cast<cell_layout>(layout);
  }
  static std::string hex(std::uint32_t x) {
    static constexpr char digits[] = "0123456789abcdef";
    std::string s;
    do {
      s.insert(s.begin(), digits[x % 16]);
      x /= 16;
    } while (x != 0);
    return s;
  }

  Hasher hasher_;
  cells_type cells_;
};

}  // namespace detail
}  // namespace blume
