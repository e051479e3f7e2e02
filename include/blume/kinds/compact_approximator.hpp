// SPDX-License-Identifier: Apache-2.0
// The compact approximator (Boldi & Vigna, "Compact approximation of lattice functions with applications
// to large-alphabet text search"): a Bloom filter whose bits are generalised to cells
// holding elements of a lattice. Inserting (key, v) joins v into the key's k cells; a lookup answers the
// meet of the k cells. Every cell a key reached holds at least its value, so the answer is never below the
// join of the values inserted for the key, whatever the order of inserts and whatever else was inserted:
// an upper bound that is exact unless every one of the key's cells was raised by other keys
// (math::compact_overestimate). The Bloom filter is the two-element lattice {0, 1}.
//
// Cells are classic (a key's k cells anywhere) or blocked (all in one 64-byte block: one cache miss a
// lookup, for more cells at the same rate, the more the wider the cell; lattice_cells.hpp).
//
// Thread safety: const calls may run concurrently; insert and merge need exclusive access.
#pragma once

#include <cmath>
#include <cstdint>
#include <optional>
#include <ranges>
#include <span>
#include <string>
#include <string_view>
#include <utility>

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

template <lattice Lattice = max_lattice<std::uint32_t>, hasher Hasher = xxh3_hasher>
class compact_approximator : public detail::lattice_filter<compact_approximator<Lattice, Hasher>, Lattice, Hasher,
                                                           typename Lattice::value_type> {
  using base = detail::lattice_filter<compact_approximator, Lattice, Hasher, typename Lattice::value_type>;
  using base::cells_;
  using typename base::cells_type;

 public:
  // find(key): the upper bound, or nothing when it is bottom (no key of a value above bottom reached every
  // cell); contains(key): whether it is above bottom; find_many, contains_many, count_contained pipelined.
  using base::contains;
  using base::find;
  using base::hash;
  using base::insert;
  using lattice_type = Lattice;
  using typename base::value_type;
  static constexpr filter_kind kind{21};
  static constexpr std::string_view name = "compact";
  static constexpr kind_input input = kind_input::keys_with_values;
  static constexpr bool is_static = false;
  /// The largest value insert takes.
  static constexpr std::uint64_t max_value = static_cast<value_type>(~value_type{0});
  static constexpr size_unit unit{"cells", "cell", 8 * sizeof(value_type)};

  // The classic filter's geometry and model, in cells: an absent key answers above bottom exactly when each
  // of its k cells was reached by a key of a value above bottom.
  static std::uint64_t plan_bytes(std::uint64_t cells) noexcept { return cells_type::bytes_for(cells); }
  static double model_fpr(double n, double m, double k) noexcept { return math::bloom_fpr(n, m, k); }
  static filter_plan plan(std::uint64_t items, double fpr) {
    return detail::plan_classic<compact_approximator>(items, fpr);
  }
  /// A budget of `cells` cells (a plan's `bits` are cells, as a counting filter's are counters).
  static filter_plan plan_for_bits(std::uint64_t items, std::uint64_t cells) {
    return detail::plan_classic_for_bits<compact_approximator>(items, cells);
  }
  /// The plans in `layout`: blocked, the fewest whole blocks (and the k) whose blocked rate meets `fpr`.
  static filter_plan plan(std::uint64_t items, double fpr, cell_layout layout) {
    if (layout == cell_layout::classic) return plan(items, fpr);
    return detail::plan_blocked<blocked_model>(items, fpr, cells_type::block_cells);
  }
  static filter_plan plan_for_bits(std::uint64_t items, std::uint64_t cells, cell_layout layout) {
    if (layout == cell_layout::classic) return plan_for_bits(items, cells);
    return detail::plan_granular_for_bits<blocked_model>(items, cells, cells_type::block_cells, 1, 32, false);
  }

  /// Sized as a classic Bloom filter for `capacity` keys at `fpr`, in cells: `fpr` is the rate at which a
  /// key never inserted answers above bottom.
  compact_approximator(std::uint64_t capacity, double fpr, std::uint64_t seed = Hasher::default_seed)
      : compact_approximator(capacity, fpr, cell_layout::classic, seed) {}
  /// The same in `layout`.
  compact_approximator(std::uint64_t capacity, double fpr, cell_layout layout,
                       std::uint64_t seed = Hasher::default_seed)
      : compact_approximator(Hasher(seed), plan(capacity, fpr, layout), layout) {}
  /// `cells` cells probed `hashes` times per key; blocked cells come in blocks of cells_type::block_cells.
  static compact_approximator with_geometry(std::uint64_t cells, std::uint32_t hashes,
                                            std::uint64_t seed = Hasher::default_seed,
                                            cell_layout layout = cell_layout::classic) {
    return compact_approximator(Hasher(seed), cells_type(cells, hashes, layout), 0);
  }

  /// An approximator of the pairs keys[i] → values[i], sized for their number at `fpr` in `layout`. A key
  /// given twice answers at least the join of its values.
  template <std::ranges::input_range Keys, std::ranges::input_range Values>
  static compact_approximator from_pairs(const Keys& keys, const Values& values, double fpr,
                                         cell_layout layout = cell_layout::classic) {
    const auto n = static_cast<std::uint64_t>(std::ranges::distance(keys));
    compact_approximator f(std::max<std::uint64_t>(n, 1), fpr, layout);
    std::uint64_t index = 0;
    for (auto&& v : values) {
      if (static_cast<std::uint64_t>(v) > max_value)
        throw invalid_argument("compact approximator: the value of key " + std::to_string(index) + " (" +
                               std::to_string(static_cast<std::uint64_t>(v)) + ") does not fit in " +
                               std::to_string(8 * sizeof(value_type)) + " bits");
      ++index;
    }
    if (index != n)
      throw invalid_argument("compact approximator: " + std::to_string(n) + " keys and " + std::to_string(index) +
                             " values");
    if constexpr (std::ranges::random_access_range<Values> && std::ranges::sized_range<Values>) {
      f.insert_many(keys, values);
    } else {
      auto v = std::ranges::begin(values);
      for (auto&& k : keys) f.insert(k, static_cast<value_type>(*v++));
    }
    return f;
  }

  /// Joins `value` into the key's cells: from now on the key answers at least `value`.
  void insert(const digest& d, value_type value) noexcept {
    cells_.join(d, value);
    ++inserted_;
  }
  /// Joins values[i] into the cells of keys[i] for every i (the same number of each), pipelined.
  template <std::ranges::input_range Keys, std::ranges::random_access_range Values>
  void insert_many(const Keys& keys, const Values& values) {
    const auto n = static_cast<std::size_t>(std::ranges::distance(keys));
    if (n != static_cast<std::size_t>(std::ranges::size(values)))
      throw invalid_argument("compact approximator: " + std::to_string(n) + " keys and " +
                             std::to_string(std::ranges::size(values)) + " values");
    const auto first = std::ranges::begin(values);
    cells_.join_many(keys, this->hasher_fn(), [&](std::size_t i) { return static_cast<value_type>(first[i]); });
    inserted_ += n;
  }
  /// The upper bound: the meet of the key's cells (bottom for a key nothing reached).
  value_type value(const digest& d) const noexcept { return cells_.meet(d); }
  template <key K>
  value_type value(const K& k) const noexcept {
    return value(hash(k));
  }
  /// Writes each key's upper bound (value()) to `out`, pipelined.
  template <std::ranges::input_range R, class Out>
  void value_many(const R& keys, Out out) const {
    cells_.meet_many(keys, this->hasher_fn(), [&](std::size_t, value_type v) { *out++ = v; });
  }

  /// Cell-wise join: every key of either answers at least what it answered in either. Same geometry and
  /// seed, or incompatible_filters.
  void merge(const compact_approximator& other) {
    if (!this->same_geometry(other))
      throw incompatible_filters("compact approximators differ in cells, hashes or seed");
    cells_.join_all(other.cells_);
    inserted_ += other.inserted_;
  }

  /// The rate at which a key answers above its own value v, with `others` keys inserted whose values are
  /// not below v (math::compact_overestimate; blocked, math::blocked_fpr): exact on a chain, an upper bound
  /// otherwise.
  double overestimate_probability(double others) const noexcept { return cells_.all_reached(others); }
  /// The model's rate for a key never inserted, all inserts counted as above bottom.
  double predicted_fpr() const noexcept { return overestimate_probability(static_cast<double>(inserted_)); }
  /// Inserts made (a key inserted twice counts twice).
  std::uint64_t inserted() const noexcept { return inserted_; }
  std::size_t size_in_bytes() const noexcept { return cells_.storage_bytes() + sizeof(*this); }

  friend bool operator==(const compact_approximator& a, const compact_approximator& b) noexcept {
    return a.seed() == b.seed() && a.inserted_ == b.inserted_ && a.cells_ == b.cells_;
  }

  // ---- serialization hooks (format.hpp) --------------------------------------------------------------
  // primary = cells, secondary = k, layout = the lattice's id (its cell width in its low byte); extra[5] =
  // the cell layout (0 classic, 1 blocked), the rest zero; inserted = inserts. Payload: the cells, little-endian, zero-padded to a multiple of 8 bytes.

  filter_parameters parameters() const noexcept { return this->cell_parameters(Lattice::id); }
  template <class Fn>
  void for_each_payload_segment(Fn&& fn) const {
    fn(cells_.bytes());
  }
  static std::uint64_t payload_size(const filter_parameters& p) {
    check_parameters(p);
    return cells_type::bytes_for(p.primary);
  }
  static compact_approximator from_payload(const filter_parameters& p, std::uint64_t seed, std::uint64_t inserted,
                                           byte_storage payload) {
    try {
      check_parameters(p);
    } catch (const invalid_argument& e) {
      throw format_error(std::string("invalid parameters: ") + e.what());
    }
    cells_type::check_payload(p.primary, {payload.data(), payload.size()});
    return compact_approximator(Hasher(seed),
                                cells_type(p.primary, p.secondary, base::layout_of(p), std::move(payload)), inserted);
  }

 private:
  // The planner's blocked model, in cells (detail::plan_blocked takes a model, as it does a kind).
  struct blocked_model {
    static constexpr filter_kind kind = compact_approximator::kind;
    static constexpr std::string_view name = compact_approximator::name;
    static std::uint64_t plan_bytes(std::uint64_t cells) noexcept { return cells_type::bytes_for(cells); }
    static double model_fpr(double n, double m, double k) noexcept {
      return math::blocked_fpr(n, m, k, cells_type::block_cells);
    }
  };

  compact_approximator(const Hasher& h, const filter_plan& plan, cell_layout layout)
      : base(h, cells_type(plan.bits, plan.hashes, layout)) {}
  compact_approximator(const Hasher& h, cells_type cells, std::uint64_t inserted)
      : base(h, std::move(cells)), inserted_(inserted) {}

  static void check_parameters(const filter_parameters& p) {
    if (p.layout != Lattice::id)
      throw invalid_argument("the cells hold lattice 0x" + base::hex(p.layout) + ", not this type's 0x" +
                             base::hex(Lattice::id));
    for (std::size_t i = 0; i < p.extra.size(); ++i)
      if (i != cell_layout_field && p.extra[i] != 0) throw invalid_argument("reserved header bytes are not zero");
    cells_type::check(p.primary, p.secondary, base::layout_of(p));
  }

  std::uint64_t inserted_ = 0;
};

static_assert(serializable_filter<compact_approximator<>>);
static_assert(can_merge<compact_approximator<>>);

}  // namespace blume
