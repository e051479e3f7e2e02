// SPDX-License-Identifier: Apache-2.0
// The spatial Bloom filter (Palmieri, Calderoni & Maio 2014): several disjoint sets in one array of cells,
// answering which set a key belongs to. Sets are numbered 1..s in priority order; inserting a key of set i
// raises its k cells to at least i, and a lookup answers the smallest of its k cells (0: no set). It is
// the compact approximator over the max lattice of set numbers: joining with max gives the same cells as
// the paper's construction, which writes the sets in ascending order, but in any order of inserts.
//
// Errors depend on the set (Calderoni, Palmieri & Maio 2018; math::spatial_*): an absent key is reported
// as set i with probability p_{≥i}^k − p_{≥i+1}^k, and a member of set i is reported as a later set when
// all its cells were overwritten, (1 − e_i)^k with e_i the set's emersion. Later sets overwrite earlier
// ones and never the reverse, so a member of the last set is always reported right and earlier sets pay:
// number the sets whose misreports cost most last.
//
// Cells are classic (a key's k cells anywhere) or blocked (all in one 64-byte block: one cache miss a
// lookup, for more cells at the same rates; lattice_cells.hpp). The planner sizes either with its model.
//
// Thread safety: const calls may run concurrently; insert and merge need exclusive access.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>
#include <ranges>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "blume/detail/key_interface.hpp"
#include "blume/detail/lattice_cells.hpp"
#include "blume/error.hpp"
#include "blume/hash.hpp"
#include "blume/io/parameters.hpp"
#include "blume/io/serialization.hpp"
#include "blume/kind.hpp"
#include "blume/plan.hpp"
#include "blume/storage.hpp"

namespace blume {

/// Cells of 8 bits hold up to 255 sets, of 16 bits up to 65535.
template <std::unsigned_integral Cell = std::uint8_t, hasher Hasher = xxh3_hasher>
  requires(sizeof(Cell) <= 2)
class spatial_bloom_filter
    : public detail::lattice_filter<spatial_bloom_filter<Cell, Hasher>, max_lattice<Cell>, Hasher, std::uint32_t> {
  using base = detail::lattice_filter<spatial_bloom_filter, max_lattice<Cell>, Hasher, std::uint32_t>;
  using base::cells_;
  using typename base::cells_type;

 public:
  // find(key): the key's set, or nothing: a member of set i answers i or, with the set's misreport rate, a
  // later set; never nothing and never an earlier set. contains(key): whether it is in some set.
  // find_many, contains_many and count_contained are pipelined.
  using base::contains;
  using base::find;
  using base::hash;
  using base::insert;
  using cell_type = Cell;
  static constexpr filter_kind kind{18};
  static constexpr std::string_view name = "spatial";
  static constexpr kind_input input = kind_input::keys_with_values;
  static constexpr bool is_static = false;
  static constexpr std::uint32_t max_sets = static_cast<Cell>(~Cell{0});
  /// The largest value insert takes: the largest set number.
  static constexpr std::uint64_t max_value = max_sets;
  static constexpr size_unit unit{"cells", "cell", 8 * sizeof(Cell)};
  static constexpr std::string_view plan_refusal =
      "a spatial filter is sized for each of its sets: plan it with plan_spatial(set_sizes, fpr)";

  // The planner's model, in cells: the rate an absent key is reported as any set is the classic rate of
  // the sets' union.
  static std::uint64_t plan_bytes(std::uint64_t cells) noexcept { return cells_type::bytes_for(cells); }
  static double model_fpr(double n, double m, double k) noexcept { return math::bloom_fpr(n, m, k); }
  /// The fewest cells (and the k) that keep every set's two error rates at or below `fpr`, for sets of
  /// `set_sizes` keys in priority order, in `layout` (detail::plan_spatial).
  static filter_plan plan(std::span<const std::uint64_t> set_sizes, double fpr,
                          cell_layout layout = cell_layout::classic) {
    if (set_sizes.size() > max_sets)
      throw invalid_argument(std::to_string(set_sizes.size()) + " sets: cells of " + std::to_string(8 * sizeof(Cell)) +
                             " bits hold at most " + std::to_string(max_sets));
    return detail::plan_spatial<spatial_bloom_filter>(set_sizes, fpr,
                                                      layout == cell_layout::blocked ? cells_type::block_cells : 0);
  }

  /// Planned for sets of `set_sizes` keys (set i + 1 holds set_sizes[i]) at `fpr` for the worst set.
  spatial_bloom_filter(std::span<const std::uint64_t> set_sizes, double fpr, std::uint64_t seed = Hasher::default_seed)
      : spatial_bloom_filter(set_sizes, fpr, cell_layout::classic, seed) {}
  /// The same in `layout`.
  spatial_bloom_filter(std::span<const std::uint64_t> set_sizes, double fpr, cell_layout layout,
                       std::uint64_t seed = Hasher::default_seed)
      : spatial_bloom_filter(plan(set_sizes, fpr, layout), static_cast<std::uint32_t>(set_sizes.size()), layout, seed) {
  }
  /// `cells` cells probed `hashes` times per key, for sets 1..`sets`; blocked cells come in blocks of
  /// cells_type::block_cells.
  static spatial_bloom_filter with_geometry(std::uint64_t cells, std::uint32_t hashes, std::uint32_t sets,
                                            std::uint64_t seed = Hasher::default_seed,
                                            cell_layout layout = cell_layout::classic) {
    check_sets(sets);
    return spatial_bloom_filter(Hasher(seed), cells_type(cells, hashes, layout), std::vector<std::uint64_t>(sets, 0));
  }

  /// A filter of the pairs keys[i] → values[i] (set numbers, 1 … 255 for 8-bit cells), planned for the
  /// sets' sizes at `fpr` (every set's rates within it) in `layout`. The sets are 1 … the largest number given.
  template <std::ranges::input_range Keys, std::ranges::input_range Values>
  static spatial_bloom_filter from_pairs(const Keys& keys, const Values& values, double fpr,
                                         cell_layout layout = cell_layout::classic) {
    std::vector<std::uint64_t> sizes;
    std::uint64_t index = 0;
    for (auto&& v : values) {
      const auto set = static_cast<std::uint64_t>(v);
      if (set == 0 || set > max_sets)
        throw invalid_argument("spatial filter: the set of key " + std::to_string(index) + " is " +
                               std::to_string(set) + ", not in [1, " + std::to_string(max_sets) + "]");
      if (sizes.size() < set) sizes.resize(set, 0);
      ++sizes[set - 1];
      ++index;
    }
    if (sizes.empty()) sizes.push_back(0);
    spatial_bloom_filter f(sizes, fpr, layout);
    if constexpr (std::ranges::random_access_range<Values> && std::ranges::sized_range<Values>) {
      f.insert_many(keys, values);  // the sets were checked above
    } else {
      auto v = std::ranges::begin(values);
      for (auto&& k : keys) {
        if (v == std::ranges::end(values)) throw invalid_argument("spatial filter: fewer sets than keys");
        f.insert(k, static_cast<std::uint32_t>(*v));
        ++v;
      }
      if (v != std::ranges::end(values)) throw invalid_argument("spatial filter: more sets than keys");
    }
    return f;
  }

  /// Adds a key to `set` (1 … sets()); invalid_argument for another number. A key inserted into two sets
  /// answers the later one: the sets are meant to be disjoint.
  void insert(const digest& d, std::uint32_t set) {
    if (set == 0 || set > sets())
      throw invalid_argument("set " + std::to_string(set) + " is not in [1, " + std::to_string(sets()) + "]");
    cells_.join(d, static_cast<Cell>(set));
    ++sizes_[set - 1];
  }

  /// Adds keys[i] to sets[i] for every i; invalid_argument, before any insert, for a set outside
  /// [1, sets()] or ranges of different lengths.
  template <std::ranges::input_range Keys, std::ranges::random_access_range Sets>
  void insert_many(const Keys& keys, const Sets& sets) {
    const auto n = static_cast<std::size_t>(std::ranges::distance(keys));
    if (n != static_cast<std::size_t>(std::ranges::size(sets)))
      throw invalid_argument("spatial filter: " + std::to_string(n) + " keys and " +
                             std::to_string(std::ranges::size(sets)) + " sets");
    const auto first = std::ranges::begin(sets);
    for (std::size_t i = 0; i < n; ++i) {
      const auto set = static_cast<std::uint64_t>(first[i]);
      if (set == 0 || set > this->sets())
        throw invalid_argument("set " + std::to_string(set) + " is not in [1, " + std::to_string(this->sets()) + "]");
    }
    cells_.join_many(keys, this->hasher_fn(), [&](std::size_t i) {
      const auto set = static_cast<std::uint32_t>(first[i]);
      ++sizes_[set - 1];
      return static_cast<Cell>(set);
    });
  }

  /// Cell-wise max with a filter of the same geometry, sets and seed: each set becomes the union of the
  /// two, with the same priorities. incompatible_filters otherwise.
  void merge(const spatial_bloom_filter& other) {
    if (!this->same_geometry(other) || other.sets() != sets())
      throw incompatible_filters("spatial filters differ in cells, hashes, sets or seed");
    cells_.join_all(other.cells_);
    for (std::size_t i = 0; i < sizes_.size(); ++i) sizes_[i] += other.sizes_[i];
  }

  /// The model's rates for set `set` (1 … sets()) with the keys inserted so far.
  detail::spatial_set_rates set_rates(std::uint32_t set) const {
    if (set == 0 || set > sets())
      throw invalid_argument("set " + std::to_string(set) + " is not in [1, " + std::to_string(sets()) + "]");
    return all_set_rates()[set - 1];
  }
  std::vector<detail::spatial_set_rates> all_set_rates() const {
    return detail::spatial_rates(sizes_, static_cast<double>(this->cells()), this->hashes(),
                                 cells_.blocked() ? cells_type::block_cells : 0);
  }
  /// The set's measured emersion: the cells that hold its number against the cells its keys are expected
  /// to have written, m·(1 − (1 − 1/m)^{k·n_i}) (blocked: m·(1 − e^{−λ(1 − (1 − 1/B)^k)}), λ = n_i·B/m; the
  /// paper counts the written cells while inserting in order; this needs only the cells, so it holds for
  /// any order of inserts and after a load).
  double emersion(std::uint32_t set) const {
    const double written =
        static_cast<double>(cells_.cells()) * (1.0 - cells_.unreached(static_cast<double>(set_size(set))));
    if (written <= 0) return 1.0;
    std::uint64_t holding = 0;
    for (std::uint64_t i = 0; i < cells_.cells(); ++i) holding += cells_.cell(i) == set;
    return static_cast<double>(holding) / written;
  }
  /// The rate an absent key is reported as any set, with the keys inserted so far.
  double predicted_fpr() const noexcept { return cells_.all_reached(static_cast<double>(inserted())); }

  std::uint32_t sets() const noexcept { return static_cast<std::uint32_t>(sizes_.size()); }
  /// Inserts into set `set` (1 … sets()).
  std::uint64_t set_size(std::uint32_t set) const {
    if (set == 0 || set > sets())
      throw invalid_argument("set " + std::to_string(set) + " is not in [1, " + std::to_string(sets()) + "]");
    return sizes_[set - 1];
  }
  std::uint64_t inserted() const noexcept {
    std::uint64_t n = 0;
    for (const std::uint64_t s : sizes_) n += s;
    return n;
  }
  std::size_t size_in_bytes() const noexcept { return cells_.storage_bytes() + 8 * sizes_.size() + sizeof(*this); }

  friend bool operator==(const spatial_bloom_filter& a, const spatial_bloom_filter& b) noexcept {
    return a.seed() == b.seed() && a.sizes_ == b.sizes_ && a.cells_ == b.cells_;
  }

  // ---- serialization hooks (format.hpp) --------------------------------------------------------------
  // primary = cells, secondary = k, layout = cell bits (8 or 16), extra[0] = sets, extra[5] = the cell
  // layout (0 classic, 1 blocked); the rest zero; inserted =
  // the keys of all sets. Payload: each set's key count (u64, set 1 first), then the cells, little-endian,
  // zero-padded to a multiple of 8 bytes. A cell holds 0 or a set number.

  filter_parameters parameters() const noexcept {
    filter_parameters p = this->cell_parameters(8 * sizeof(Cell));
    p.extra[0] = sets();
    return p;
  }
  template <class Fn>
  void for_each_payload_segment(Fn&& fn) const {
    fn(std::span<const std::byte>(reinterpret_cast<const std::byte*>(sizes_.data()), 8 * sizes_.size()));
    fn(cells_.bytes());
  }
  static std::uint64_t payload_size(const filter_parameters& p) {
    check_parameters(p);
    return 8 * p.extra[0] + cells_type::bytes_for(p.primary);
  }
  static spatial_bloom_filter from_payload(const filter_parameters& p, std::uint64_t seed, std::uint64_t inserted,
                                           byte_storage payload) {
    try {
      check_parameters(p);
    } catch (const invalid_argument& e) {
      throw format_error(std::string("invalid parameters: ") + e.what());
    }
    const auto sets = static_cast<std::size_t>(p.extra[0]);
    if (payload.size() != 8 * sets + cells_type::bytes_for(p.primary))
      throw format_error("payload size does not match the parameters");
    std::vector<std::uint64_t> sizes(sets);
    std::memcpy(sizes.data(), payload.data(), 8 * sets);
    std::uint64_t total = 0;
    for (const std::uint64_t s : sizes) {
      if (s > inserted - total) throw format_error("the sets' key counts do not add up to the keys inserted");
      total += s;
    }
    if (total != inserted) throw format_error("the sets' key counts do not add up to the keys inserted");
    byte_storage cells = byte_storage::allocate(cells_type::bytes_for(p.primary));
    std::memcpy(cells.data(), payload.data() + 8 * sets, cells.size());
    cells_type::check_payload(p.primary, {cells.data(), cells.size()});
    cells_type array(p.primary, p.secondary, base::layout_of(p), std::move(cells));
    for (std::uint64_t i = 0; i < array.cells(); ++i)
      if (array.cell(i) > sets)
        throw format_error("cell " + std::to_string(i) + " holds set " + std::to_string(array.cell(i)) + " of " +
                           std::to_string(sets));
    return spatial_bloom_filter(Hasher(seed), std::move(array), std::move(sizes));
  }

 private:
  spatial_bloom_filter(const filter_plan& plan, std::uint32_t sets, cell_layout layout, std::uint64_t seed)
      : base(Hasher(seed), cells_type(plan.bits, plan.hashes, layout)), sizes_(sets, 0) {}
  spatial_bloom_filter(const Hasher& h, cells_type cells, std::vector<std::uint64_t> sizes)
      : base(h, std::move(cells)), sizes_(std::move(sizes)) {}

  static void check_sets(std::uint64_t sets) {
    if (sets == 0 || sets > max_sets)
      throw invalid_argument("sets must be in [1, " + std::to_string(max_sets) + "], got " + std::to_string(sets));
  }
  static void check_parameters(const filter_parameters& p) {
    if (p.layout != 8 * sizeof(Cell))
      throw invalid_argument("cells of " + std::to_string(p.layout) + " bits, not this type's " +
                             std::to_string(8 * sizeof(Cell)));
    check_sets(p.extra[0]);
    for (std::size_t i = 1; i < p.extra.size(); ++i)
      if (i != cell_layout_field && p.extra[i] != 0) throw invalid_argument("reserved header bytes are not zero");
    cells_type::check(p.primary, p.secondary, base::layout_of(p));
  }

  std::vector<std::uint64_t> sizes_;  // keys inserted into each set, set 1 first
};

/// The geometry for sets of `set_sizes` keys (priority order) with every set's rates within `fpr`.
inline filter_plan plan_spatial(std::span<const std::uint64_t> set_sizes, double fpr) {
  return spatial_bloom_filter<>::plan(set_sizes, fpr);
}

static_assert(serializable_filter<spatial_bloom_filter<>>);

}  // namespace blume
