// SPDX-License-Identifier: Apache-2.0
// The attenuated Bloom filter (Rhea & Kubiatowicz 2002, "Probabilistic location and routing"): D Bloom
// filters per node of a network. Level 0 holds the keys (services) the node itself offers; level i holds
// what its neighbours' level i − 1 held, so a key at level i is offered i hops away. A distance-vector
// protocol builds the levels: each round a node ORs every neighbour's level i − 1 into its level i
// (absorb). Level i then holds the keys of every node at the end of a walk of i hops, which includes the
// nodes exactly i hops away; the smallest level that holds a key is the distance to its nearest provider,
// because the shortest walk to a provider is a shortest path.
//
// A query at a node stops when level 0 holds the key, and otherwise goes to the neighbour whose filter
// holds it at the smallest level (nearest). Every level has the same geometry and the same hasher, so a
// key probes the same positions at every level and levels can be ORed between nodes; one digest serves
// every level.
//
// False positives can misroute. At a node d ≥ 1 hops from the nearest provider, every neighbour one hop
// closer holds the key by level d − 1. A greedy step goes wrong only if the node's own level 0 answers
// falsely (the query stops short), or a neighbour that is not closer answers at a level ≤ d − 1 (at level
// d − 1 it may win the tie). With f_j(w) the rate of neighbour w's level j (its layout's model at the
// level's fill), a union bound gives
//     P(step goes wrong) ≤ f_0(v) + Σ_{w not closer} Σ_{j<d} f_j(w)        (step_misroute_bound)
// and a route is shortest unless one of its steps went wrong: summing the bound over the nodes of every
// shortest route bounds the chance that a greedy route is not shortest.
//
// Sizing: every level is planned for `capacity` keys at `fpr` by the layout's planner. The deepest level
// holds the most keys (the union over the most nodes), so capacity should bound that union.
//
// contains() asks level 0 (does this node offer the key?); nearest() and find() answer the routing
// question. inserted() counts inserts into level 0; the levels absorbed from neighbours record no count.
//
// Thread safety: const calls may run concurrently; everything else needs exclusive access.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <optional>
#include <ranges>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "blume/detail/key_interface.hpp"
#include "blume/error.hpp"
#include "blume/hash.hpp"
#include "blume/io/parameters.hpp"
#include "blume/io/serialization.hpp"
#include "blume/kind.hpp"
#include "blume/kinds/basic_bloom_filter.hpp"
#include "blume/kinds/blocked_bloom_filter.hpp"
#include "blume/plan.hpp"
#include "blume/storage.hpp"

namespace blume {

/// Levels a filter has unless told otherwise: what make_filter and the planner assume.
inline constexpr std::uint32_t attenuated_default_depth = 4;
/// Most levels a filter may have. A route longer than a few dozen hops is past what the levels' union can
/// describe at any useful rate, and the cap keeps a forged header from describing a huge payload.
inline constexpr std::uint32_t attenuated_max_depth = 64;

template <class Layout = blocked_layout, hasher Hasher = xxh3_hasher>
class attenuated_bloom_filter : public detail::key_interface<attenuated_bloom_filter<Layout, Hasher>> {
  static_assert(bloom_layout<Layout>);
  // Levels are ORed between nodes: a union of counter arrays is not an OR of their words.
  static_assert(
      !requires(typename Layout::word_type w) { Layout::merge_word(w, w); },
      "attenuated levels must be plain bit arrays");
  using key_calls = detail::key_interface<attenuated_bloom_filter>;

 public:
  using key_calls::contains;
  using key_calls::find;
  using key_calls::hash;
  using key_calls::insert;
  using level_type = basic_bloom_filter<Layout, Hasher>;
  using hasher_type = Hasher;
  static constexpr filter_kind kind{20};
  static constexpr std::string_view name = "attenuated";
  static constexpr kind_input input = kind_input::keys;
  static constexpr bool is_static = false;
  /// What the file header's primary field holds, as `blume info` names it.
  static constexpr std::string_view primary_field = "bits per level";

  // The planner's model is a filter of attenuated_default_depth levels: `bits` counts every level's bits,
  // and the rate is one level's at `n` keys (each level is planned for the same capacity).
  static std::uint64_t plan_bytes(std::uint64_t bits) noexcept { return Layout::plan_bytes(bits); }
  static double model_fpr(double n, double m, double k) noexcept {
    return Layout::model_fpr(n, m / attenuated_default_depth, k);
  }
  static filter_plan plan(std::uint64_t items, double fpr) {
    const filter_plan level = Layout::plan(items, fpr);
    detail::check_bits(static_cast<double>(level.bits) * attenuated_default_depth, items, fpr);
    return detail::make_plan<attenuated_bloom_filter>(items, level.bits * attenuated_default_depth, level.hashes);
  }
  /// The budget split evenly over the default depth's levels, each planned by the layout.
  static filter_plan plan_for_bits(std::uint64_t items, std::uint64_t bits) {
    detail::check_budget(items, bits);
    filter_plan level;
    try {
      level = Layout::plan_for_bits(items, bits / attenuated_default_depth);
    } catch (const invalid_argument& e) {
      throw invalid_argument("a budget of " + std::to_string(bits) + " bits for " +
                             std::to_string(attenuated_default_depth) + " attenuated levels: " + e.what());
    }
    return detail::make_plan<attenuated_bloom_filter>(items, level.bits * attenuated_default_depth, level.hashes);
  }

  /// `depth` levels, each planned by the layout for `capacity` keys at rate `fpr`.
  attenuated_bloom_filter(std::uint64_t capacity, double fpr, std::uint32_t depth = attenuated_default_depth,
                          std::uint64_t seed = Hasher::default_seed)
      : hasher_(seed) {
    check_depth(depth);
    const filter_plan level = Layout::plan(capacity, fpr);
    detail::check_bits(static_cast<double>(level.bits) * depth, capacity, fpr);
    allocate(Layout(level.bits, level.hashes), depth);
  }

  /// `depth` levels of exactly `bits` bits and `hashes` probes each.
  static attenuated_bloom_filter with_geometry(std::uint64_t bits, std::uint32_t hashes,
                                               std::uint32_t depth = attenuated_default_depth,
                                               std::uint64_t seed = Hasher::default_seed) {
    check_depth(depth);
    const Layout layout(bits, hashes);
    check_total(layout.bits(), depth);
    attenuated_bloom_filter f{Hasher(seed)};
    f.allocate(layout, depth);
    return f;
  }

  // ---- the node's own keys ---------------------------------------------------------------------------

  /// Adds a key the node offers (level 0). True if it set a new bit.
  bool insert(const digest& d) noexcept { return levels_[0].insert(d); }
  template <std::ranges::input_range R>
  void insert_many(const R& keys) noexcept {
    levels_[0].insert_many(keys);
  }

  /// Whether the node itself offers the key (level 0): false is certain, true may be a false positive
  /// (rate: level_fpr(0)).
  bool contains(const digest& d) const noexcept { return levels_[0].contains(d); }
  template <std::ranges::input_range R, class Out>
    requires std::output_iterator<Out, bool>
  std::size_t contains_many(const R& keys, Out out) const {
    return levels_[0].contains_many(keys, out);
  }
  template <std::ranges::input_range R>
  std::size_t count_contained(const R& keys) const noexcept {
    return levels_[0].count_contained(keys);
  }

  // ---- routing ---------------------------------------------------------------------------------------

  /// The smallest level that may hold the key: the hops to its nearest provider as far as this node
  /// knows (0: the node offers it), or nothing when no level holds it. A level below the true distance
  /// answers only by a false positive; the level at the true distance always holds the key.
  std::optional<std::uint32_t> nearest(const digest& d) const noexcept {
    for (std::uint32_t i = 0; i < depth(); ++i)
      if (levels_[i].contains(d)) return i;
    return std::nullopt;
  }
  template <key K>
  std::optional<std::uint32_t> nearest(const K& k) const noexcept {
    return nearest(this->hash(k));
  }
  /// nearest(): the value the tool's query prints for kinds that find one.
  std::optional<std::uint32_t> find(const digest& d) const noexcept { return nearest(d); }

  /// Takes in what a neighbour `hops` hops away knows: its level i becomes part of level i + hops here,
  /// for every i + hops < depth() (what the neighbour has i hops from it is at most i + hops from here;
  /// what lies past the last level is dropped). Throws incompatible_filters unless both filters have the
  /// same depth, geometry and seed; invalid_argument for hops == 0 (a filter of the same node: merge) and
  /// for hops >= depth(), where every level of the neighbour would fall past the last one and absorbing it
  /// would change nothing (a caller asking for it has the wrong distance or too shallow a filter).
  void absorb(const attenuated_bloom_filter& neighbour, std::uint32_t hops = 1) {
    check_compatible(neighbour, "absorb");
    if (hops == 0) throw invalid_argument("absorb: a neighbour is at least 1 hop away (merge joins views of one node)");
    if (hops >= depth())
      throw invalid_argument("absorb: a neighbour " + std::to_string(hops) + " hops away lies past the filter's " +
                             std::to_string(depth()) + " levels (0 to " + std::to_string(depth() - 1) +
                             "), so nothing of it would be kept: use hops below " + std::to_string(depth()) +
                             ", or filters with more levels");
    // Deepest first, so that absorbing the filter itself reads each level before it changes.
    for (std::uint32_t i = depth(); i-- > hops;) or_into(levels_[i], neighbour.levels_[i - hops]);
  }

  /// Union of two views of the same node (built in parts, or replicas): level i of each joins level i.
  /// Throws incompatible_filters unless both have the same depth, geometry and seed.
  void merge(const attenuated_bloom_filter& other) {
    check_compatible(other, "merge");
    levels_[0].merge(other.levels_[0]);
    for (std::uint32_t i = 1; i < depth(); ++i) or_into(levels_[i], other.levels_[i]);
  }

  /// Empties the levels learnt from neighbours, keeping the node's own keys: the start of a new round of
  /// a protocol that recomputes them.
  void clear_absorbed() noexcept {
    for (std::uint32_t i = 1; i < depth(); ++i) levels_[i].clear();
  }
  void clear() noexcept {
    for (level_type& l : levels_) l.clear();
  }

  /// Throws incompatible_filters naming the first parameter that differs.
  void check_compatible(const attenuated_bloom_filter& other, std::string_view operation = "combine") const {
    const auto fail = [&](std::string_view what, std::uint64_t a, std::uint64_t b) {
      throw incompatible_filters("cannot " + std::string(operation) + " attenuated filters: " + std::string(what) +
                                 " differ (" + std::to_string(a) + " vs " + std::to_string(b) + ")");
    };
    if (depth() != other.depth()) fail("depths", depth(), other.depth());
    if (bits() != other.bits()) fail("bits per level", bits(), other.bits());
    if (hashes() != other.hashes()) fail("hash counts", hashes(), other.hashes());
    if (seed() != other.seed()) fail("seeds", seed(), other.seed());
  }

  // ---- the error model -------------------------------------------------------------------------------

  /// Level i's false-positive rate now: the layout's model at the keys its fill implies.
  double level_fpr(std::uint32_t i) const { return level(i).predicted_fpr(); }
  /// Σ_{j<levels} level_fpr(j): a union bound on the key being found falsely at a level below `levels`
  /// (what a neighbour that is not closer contributes to a misroute `levels` hops from the key).
  double fpr_below(std::uint32_t levels) const {
    double sum = 0;
    for (std::uint32_t j = 0; j < levels && j < depth(); ++j) sum += level_fpr(j);
    return sum;
  }
  /// The union bound on a greedy step going wrong at `here`, `distance` ≥ 1 hops from the key's nearest
  /// provider, where `not_closer` are its neighbours that are not one hop closer (see the header comment).
  static double step_misroute_bound(const attenuated_bloom_filter& here,
                                    std::span<const attenuated_bloom_filter* const> not_closer,
                                    std::uint32_t distance) {
    double sum = here.level_fpr(0);
    for (const attenuated_bloom_filter* w : not_closer) sum += w->fpr_below(distance);
    return sum;
  }

  /// Level 0's fill read as keys (the node's own distinct keys, as contains() answers for them).
  double estimated_count() const noexcept { return levels_[0].estimated_count(); }
  /// The rate contains() answers with now (level 0's).
  double predicted_fpr() const noexcept { return levels_[0].predicted_fpr(); }
  /// A level's rate at `items` keys (every level has the same geometry).
  double predicted_fpr_at(double items) const noexcept { return levels_[0].predicted_fpr_at(items); }
  /// The load at which a level's k is optimal.
  double optimal_load() const noexcept { return levels_[0].optimal_load(); }
  double level_fill(std::uint32_t i) const { return level(i).fill_ratio(); }
  double level_estimated_count(std::uint32_t i) const { return level(i).estimated_count(); }

  // ---- geometry and access ---------------------------------------------------------------------------

  std::uint32_t depth() const noexcept { return static_cast<std::uint32_t>(levels_.size()); }
  /// Bits of one level.
  std::uint64_t bits() const noexcept { return levels_[0].bits(); }
  std::uint32_t hashes() const noexcept { return levels_[0].hashes(); }
  const level_type& level(std::uint32_t i) const {
    if (i >= depth())
      throw invalid_argument("attenuated filter: level " + std::to_string(i) + " of a filter of depth " +
                             std::to_string(depth()));
    return levels_[i];
  }
  std::span<const level_type> levels() const noexcept { return levels_; }
  std::uint64_t seed() const noexcept { return hasher_.seed(); }
  const hasher_type& hasher() const noexcept { return hasher_; }
  /// Inserts into level 0 so far (duplicates included); carried through merge and save/load.
  std::uint64_t inserted() const noexcept { return levels_[0].inserted(); }
  std::size_t size_in_bytes() const noexcept {
    std::size_t n = sizeof(*this) + levels_.capacity() * sizeof(level_type);
    for (const level_type& l : levels_) n += l.storage().size();
    return n;
  }

  friend bool operator==(const attenuated_bloom_filter& a, const attenuated_bloom_filter& b) noexcept {
    return a.seed() == b.seed() && a.levels_ == b.levels_;
  }

  // ---- serialization hooks (format.hpp) --------------------------------------------------------------
  // primary = bits per level, secondary = hashes, layout = the levels' kind id, extra = {depth, 0, 0, 0, 0,
  // 0}. Payload: the levels' bit arrays, level 0 first.

  filter_parameters parameters() const noexcept {
    filter_parameters p;
    p.primary = bits();
    p.secondary = hashes();
    p.layout = static_cast<std::uint32_t>(Layout::kind);
    p.extra[0] = depth();
    return p;
  }
  template <class Fn>
  void for_each_payload_segment(Fn&& fn) const {
    for (const level_type& l : levels_) l.for_each_payload_segment(fn);
  }
  /// invalid_argument when the parameters describe no filter (a layout, depth or geometry out of range, a
  /// reserved field set).
  static std::uint64_t payload_size(const filter_parameters& p) {
    if (p.layout != static_cast<std::uint32_t>(Layout::kind))
      throw invalid_argument("attenuated filter: level kind " + std::to_string(p.layout) + " is not " +
                             std::string(Layout::name));
    for (std::size_t i = 1; i < p.extra.size(); ++i)
      if (p.extra[i] != 0) throw invalid_argument("attenuated filter: reserved header fields are not zero");
    if (p.extra[0] == 0 || p.extra[0] > attenuated_max_depth)
      throw invalid_argument("attenuated filter: depth must be in [1, " + std::to_string(attenuated_max_depth) +
                             "], got " + std::to_string(p.extra[0]));
    const Layout layout(p.primary, p.secondary);  // validates the geometry
    check_total(layout.bits(), static_cast<std::uint32_t>(p.extra[0]));
    return layout.storage_bytes() * p.extra[0];
  }
  /// Copies each level out of `payload` (sized by payload_size before this is called); format_error for a
  /// level with bits set past its end.
  static attenuated_bloom_filter from_payload(const filter_parameters& p, std::uint64_t seed, std::uint64_t inserted,
                                              byte_storage payload) {
    const std::uint64_t size = payload_size(p);
    if (payload.size() != size)
      throw format_error("attenuated filter: a payload of " + std::to_string(payload.size()) +
                         " bytes where the parameters need " + std::to_string(size));
    const auto depth = static_cast<std::uint32_t>(p.extra[0]);
    const std::uint64_t level_bytes = size / depth;
    filter_parameters lp;
    lp.primary = p.primary;
    lp.secondary = p.secondary;
    lp.layout = Layout::block_bits;
    attenuated_bloom_filter f{Hasher(seed)};
    f.levels_.reserve(depth);
    for (std::uint32_t i = 0; i < depth; ++i) {
      byte_storage part = byte_storage::allocate(level_bytes);
      if (level_bytes != 0) std::memcpy(part.data(), payload.data() + i * level_bytes, level_bytes);
      f.levels_.push_back(level_type::from_payload(lp, seed, i == 0 ? inserted : 0, std::move(part)));
    }
    return f;
  }

 private:
  explicit attenuated_bloom_filter(const Hasher& hasher) : hasher_(hasher) {}

  static void check_depth(std::uint32_t depth) {
    if (depth == 0 || depth > attenuated_max_depth)
      throw invalid_argument("attenuated filter: depth must be in [1, " + std::to_string(attenuated_max_depth) +
                             "], got " + std::to_string(depth));
  }
  static void check_total(std::uint64_t level_bits, std::uint32_t depth) {
    if (level_bits * depth > max_filter_bits)  // level_bits ≤ 2^40 and depth ≤ 64: no overflow
      throw invalid_argument("attenuated filter: " + std::to_string(depth) + " levels of " +
                             std::to_string(level_bits) + " bits exceed the maximum of 2^40 bits");
  }

  void allocate(const Layout& layout, std::uint32_t depth) {
    levels_.reserve(depth);
    for (std::uint32_t i = 0; i < depth; ++i)
      levels_.push_back(level_type::with_geometry(layout.bits(), layout.hashes(), hasher_.seed()));
  }

  /// to |= from, bit by bit; the level's own insert count is left as it is.
  static void or_into(level_type& to, const level_type& from) noexcept {
    const std::span<std::byte> a = to.mutable_bytes();
    const std::byte* b = from.storage().data();
    for (std::size_t i = 0; i < a.size(); ++i) a[i] |= b[i];
  }

  Hasher hasher_;
  std::vector<level_type> levels_;
};

static_assert(serializable_filter<attenuated_bloom_filter<>>);
static_assert(can_merge<attenuated_bloom_filter<>> && !can_intersect<attenuated_bloom_filter<>>);
// Its fill and estimates are per level: the whole-structure bit-array estimators would mix levels.
static_assert(!bit_array_filter<attenuated_bloom_filter<>>);

}  // namespace blume
