// SPDX-License-Identifier: Apache-2.0
// The scalable Bloom filter (Almeida, Baquero, Preguiça & Hutchison 2007): a chain of filters that grows
// when the newest one reaches its capacity, so n need not be known in advance, while the compound
// false-positive rate stays under the target.
//
// Layer i has capacity C·s^i (growth s ≥ 1) and rate ε_i = ε·(1 − r)·r^i (tightening 0 < r < 1), so the
// rate of the whole chain is at most Σ ε_i = ε·(1 − r)·Σ r^i < ε, however many layers are added (a key is
// a false positive of the chain if it is one of any layer: 1 − Π(1 − ε_i) ≤ Σ ε_i). With r = 0.5 layer i
// gets ε·0.5^(i+1), RedisBloom's geometry. Each layer's k grows by about log2(1/r) per layer.
//
// A key is hashed once; the digest probes every layer. Inserts go to the newest layer and only when no
// layer already answers "maybe" (Almeida et al.; RedisBloom does the same), and a layer's fill counts
// only inserts that set a new bit, so duplicates and false positives never trigger growth.
//
// Sizes: growth is at most scalable_max_growth (32768, RedisBloom's EXPANSION limit), tightening lies in
// (0, 1) and the rate is at least min_fpr (2^-64, plan.hpp), checked on construction (invalid_argument) and
// on load (format_error), so a small file cannot describe a chain whose next layer is gigabytes. Each new
// layer is held to what a fresh plan may make: its rate at least min_fpr, its bits and the chain's total
// bits at most max_filter_bits (2^40 bits, 128 GiB), its capacity at most the growth of the last layer's.
// A layer beyond these is refused before anything is allocated: try_insert answers insert_result::full,
// growth_refusal() says why, and the chain stays as it was.
//
// Thread safety: const calls may run concurrently; everything else needs exclusive access.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "blume/detail/bits.hpp"
#include "blume/detail/geometry.hpp"
#include "blume/detail/key_interface.hpp"
#include "blume/io/parameters.hpp"
#include "blume/io/serialization.hpp"
#include "blume/kinds/basic_bloom_filter.hpp"
#include "blume/kinds/partitioned_bloom_filter.hpp"
#include "blume/plan.hpp"

namespace blume {

/// Most layers a chain may have (each layer at least doubles the k of the first within about 30 layers at
/// growth 1, and rates underflow after about 1075 halvings, so no useful chain comes near).
inline constexpr std::uint32_t scalable_max_layers = 4096;
/// Largest growth factor: RedisBloom's EXPANSION range is [0, 32768], and a larger factor makes the next
/// layer of even a tiny chain a request for gigabytes (a 144-byte file with growth 5e10 asked for 78 GB).
inline constexpr double scalable_max_growth = 32768;

struct scalable_options {
  double growth = 2.0;      // s: layer i holds capacity × growth^i items
  double tightening = 0.5;  // r: layer i's rate is fpr × (1 − r) × r^i
  bool scaling = true;      // false: a single layer that refuses inserts once it holds its capacity
  std::uint32_t max_layers = 64;
};

/// One layer's design: the items it takes before the next layer starts, and its false-positive rate.
struct layer_spec {
  std::uint64_t capacity = 0;
  double fpr = 0;
  friend constexpr bool operator==(const layer_spec&, const layer_spec&) = default;
};

/// What an insert did: stored the key, found it already (a layer answered "maybe"), or found no room
/// (non-scaling and full, at max_layers, or the next layer would be impossible).
enum class insert_result { added, present, full };

/// A chain policy: each layer's design (spec(), which may build on the previous layer's) and its geometry
/// for a design (layout()). The default below is Almeida et al.'s; redisbloom.hpp has RedisBloom's.
template <class P, class Layer>
concept layer_policy =
    std::default_initializable<P> &&
    requires(const P& p, std::uint64_t n, double x, const scalable_options& o, std::size_t i, const layer_spec& s) {
      { p.spec(n, x, o, i, s) } -> std::same_as<layer_spec>;
      { p.layout(s) } -> std::same_as<typename Layer::layout_type>;
    };

namespace detail {
/// The smallest rate a chain policy plans a layer for: its `min_fpr` when it declares one (RedisBloom's
/// policy takes any rate above 0, as RedisBloom does), else the planners' min_fpr.
template <class P>
constexpr double policy_min_fpr() noexcept {
  if constexpr (requires { P::min_fpr; }) {
    return P::min_fpr;
  } else {
    return min_fpr;
  }
}

/// At most how many keys `bits` bits of a Bloom layer hold at rate `fpr` with k ≥ 1 probes. Up to 1/2 that
/// is the classic m·ln²2 / ln(1/ε), at the optimal k = log2(1/ε) ≥ 1. Above 1/2 the optimum would need
/// k < 1, so it is k = 1's m·ln(1/(1 − ε)), at most 36.7 keys per bit for a double below 1 (the classic
/// formula grows without bound as ε nears 1: a layer of 64 bits at 1 − 1e-7 would "hold" 3·10^8 keys).
inline double keys_per_bit(double fpr) noexcept {
  return fpr <= 0.5 ? math::ln2 * math::ln2 / -std::log(fpr) : -std::log1p(-fpr);
}
}  // namespace detail

/// The default chain policy (Almeida et al.): layer i gets capacity ⌈C·s^i⌉ and rate ε·(1 − r)·r^i in
/// closed form, and the geometry the layer kind's planner gives.
template <class Layer>
struct plan_layers {
  layer_spec spec(std::uint64_t capacity, double fpr, const scalable_options& o, std::size_t index,
                  const layer_spec& /*previous*/) const {
    const double c = std::ceil(static_cast<double>(capacity) * std::pow(o.growth, static_cast<double>(index)));
    const std::uint64_t layer_capacity = c < 0x1p63 ? static_cast<std::uint64_t>(c) : std::uint64_t{1} << 63;
    if (!o.scaling) return {layer_capacity, fpr};  // one layer, which gets the whole rate (as RedisBloom's NONSCALING)
    return {layer_capacity, fpr * (1 - o.tightening) * std::pow(o.tightening, static_cast<double>(index))};
  }
  typename Layer::layout_type layout(const layer_spec& s) const {
    const filter_plan plan = Layer::plan(s.capacity, s.fpr);  // throws beyond 2^40 bits
    return typename Layer::layout_type(plan.bits, plan.hashes);
  }
};

static_assert(layer_policy<plan_layers<partitioned_bloom_filter<>>, partitioned_bloom_filter<>>);

template <class Layer = partitioned_bloom_filter<>, class LayerPlan = plan_layers<Layer>>
class scalable_bloom_filter : public detail::key_interface<scalable_bloom_filter<Layer, LayerPlan>> {
  static_assert(layer_policy<LayerPlan, Layer>);
  using key_calls = detail::key_interface<scalable_bloom_filter>;

 public:
  using key_calls::contains;
  using key_calls::hash;
  using key_calls::insert;
  using key_calls::try_insert;
  using layer_type = Layer;
  using hasher_type = typename Layer::hasher_type;
  static constexpr filter_kind kind{8};
  static constexpr std::string_view name = "scalable";
  static constexpr kind_input input = kind_input::keys;
  static constexpr bool is_static = false;
  /// What the file header's primary field holds, as `blume info` names it.
  static constexpr std::string_view primary_field = "first layer capacity";

  // The planner's model is the first layer's, planned at half the rate (the default tightening 0.5), so
  // the chain's rate stays below the target however it grows.
  static std::uint64_t plan_bytes(std::uint64_t bits) noexcept { return Layer::plan_bytes(bits); }
  static double model_fpr(double n, double m, double k) noexcept { return Layer::model_fpr(n, m, k); }
  static filter_plan plan(std::uint64_t items, double fpr) {
    detail::checked_ideal_bits(items, fpr);  // the request as given, before it is halved
    const filter_plan layer = Layer::plan(items, fpr * 0.5);
    return detail::make_plan<scalable_bloom_filter>(items, layer.bits, layer.hashes);
  }
  static filter_plan plan_for_bits(std::uint64_t items, std::uint64_t bits) {
    const filter_plan layer = Layer::plan_for_bits(items, bits);
    return detail::make_plan<scalable_bloom_filter>(items, layer.bits, layer.hashes);
  }

  /// A chain whose first layer holds `capacity` items; the compound rate stays below `fpr`.
  scalable_bloom_filter(std::uint64_t capacity, double fpr, scalable_options options = {},
                        std::uint64_t seed = hasher_type::default_seed)
      : capacity_(capacity), fpr_(fpr), options_(options), hasher_(seed) {
    validate(capacity, fpr, options);
    add_layer();
  }

  /// The smallest rate this chain (and each of its layers) may have.
  static constexpr double min_rate = detail::policy_min_fpr<LayerPlan>();

  /// Layer i's capacity and rate (see the header comment and the policy): recorded for the layers that
  /// exist, as the policy would give them for the layers to come.
  std::uint64_t layer_capacity(std::size_t i) const { return spec_at(i).capacity; }
  double layer_fpr(std::size_t i) const { return spec_at(i).fpr; }
  layer_spec spec_at(std::size_t i) const {
    if (i < specs_.size()) return specs_[i];
    layer_spec s = specs_.empty() ? LayerPlan{}.spec(capacity_, fpr_, options_, 0, {}) : specs_.back();
    for (std::size_t j = std::max<std::size_t>(specs_.size(), 1); j <= i; ++j)
      s = LayerPlan{}.spec(capacity_, fpr_, options_, j, s);
    return s;
  }

  /// Adds a key unless a layer already answers "maybe". Returns true if it was added; false if it was
  /// (probably) present already, or the filter is non-scaling (or at max_layers) and full.
  bool insert(const digest& d) { return try_insert(d) == insert_result::added; }

  /// insert() that tells "already present" from "full".
  insert_result try_insert(const digest& d) {
    if (contains(d)) return insert_result::present;
    if (needs_new_layer()) {
      if (!can_grow()) return insert_result::full;
      try {
        add_layer();
      } catch (const invalid_argument&) {
        return insert_result::full;  // the next layer is beyond what a plan may make: growth_refusal() says why
      }
    }
    if (layers_.back().insert(d)) ++counts_.back();
    return insert_result::added;
  }

  /// try_insert() that also answers how many bits the key set in the newest layer (where an added key
  /// goes), so a caller can keep each layer's fill without reading its array.
  insert_result try_insert(const digest& d, std::uint64_t& new_bits)
    requires requires(Layer& l, const digest& x) { l.insert_counting(x); }
  {
    new_bits = 0;
    if (contains(d)) return insert_result::present;
    if (needs_new_layer()) {
      if (!can_grow()) return insert_result::full;
      try {
        add_layer();
      } catch (const invalid_argument&) {
        return insert_result::full;
      }
    }
    new_bits = layers_.back().insert_counting(d);
    if (new_bits != 0) ++counts_.back();
    return insert_result::added;
  }

  /// Whether the newest layer holds its capacity, so the next added key needs a new layer.
  bool needs_new_layer() const noexcept { return counts_.back() >= specs_.back().capacity; }
  /// Whether a new layer may be added (scaling and below max_layers); it may still be too large to exist.
  bool can_grow() const noexcept { return options_.scaling && layers_.size() < options_.max_layers; }
  /// Bytes the next layer's bit array would take (so a caller can check a memory budget before an insert
  /// that needs it); invalid_argument, saying why, if that layer cannot exist.
  std::uint64_t next_layer_bytes() const { return next_layer().storage_bytes(); }
  /// Why the chain cannot add its next layer (empty when it can): what a full chain tells its user.
  std::string growth_refusal() const {
    if (!options_.scaling) return "a non-scaling chain holds one layer";
    if (layers_.size() >= options_.max_layers)
      return "the chain holds its maximum of " + std::to_string(options_.max_layers) + " layers";
    try {
      (void)next_layer();
    } catch (const invalid_argument& e) {
      return e.what();
    }
    return {};
  }

  bool contains(const digest& d) const noexcept {
    // Newest first: it is the largest and holds the most recent keys.
    for (std::size_t i = layers_.size(); i-- > 0;)
      if (layers_[i].contains(d)) return true;
    return false;
  }

  /// Starts loading the memory a lookup of `d` touches first in every layer (see basic_bloom_filter).
  void prefetch(const digest& d) const noexcept {
    for (const Layer& l : layers_) l.prefetch(d);
  }
  /// What an insert of `d` touches: the lookup's first words in the older layers, every word it sets in
  /// the newest.
  void prefetch_for_insert(const digest& d) noexcept {
    for (std::size_t i = 0; i + 1 < layers_.size(); ++i) layers_[i].prefetch(d);
    layers_.back().prefetch_for_insert(d);
  }

  /// Inserts every key; returns how many were stored or found present, fewer than keys.size() only when
  /// the chain is full (as cuckoo_filter::insert_many reports a full table): a refused key must not be
  /// taken for stored.
  template <std::ranges::input_range R>
  std::size_t insert_many(const R& keys) {
    std::size_t stored = 0;
    for (auto&& k : keys) stored += try_insert(k) != insert_result::full;
    return stored;
  }

  /// try_insert for digests hashed beforehand (by other threads, say), in order, loading the words each
  /// touches some keys ahead so that the cache misses overlap. Returns how many the chain refused (full).
  std::size_t try_insert_digests(std::span<const digest> digests) {
    constexpr std::size_t ahead = 16;
    std::size_t refused = 0;
    for (std::size_t i = 0; i < digests.size(); ++i) {
      if (i + ahead < digests.size()) prefetch_for_insert(digests[i + ahead]);
      refused += try_insert(digests[i]) == insert_result::full;
    }
    return refused;
  }

  /// Back to one empty layer.
  void clear() {
    layers_.clear();
    counts_.clear();
    specs_.clear();
    table_.clear();
    add_layer();
  }

  /// Layer-wise union of two chains with the same parameters and layer count. Every layer is checked
  /// before any is changed, so a refused merge leaves this chain as it was.
  void merge(const scalable_bloom_filter& other) {
    check_compatible(other, "merge");
    for (std::size_t i = 0; i < layers_.size(); ++i) {
      layers_[i].merge(other.layers_[i]);
      counts_[i] += other.counts_[i];
    }
  }
  void check_compatible(const scalable_bloom_filter& other, std::string_view operation = "combine") const {
    auto fail = [&](std::string_view what, const std::string& a, const std::string& b) {
      throw incompatible_filters("cannot " + std::string(operation) + " scalable filters: " + std::string(what) +
                                 " differ (" + a + " vs " + b + ")");
    };
    if (capacity_ != other.capacity_) fail("capacities", std::to_string(capacity_), std::to_string(other.capacity_));
    if (fpr_ != other.fpr_) fail("rates", detail::format_number(fpr_), detail::format_number(other.fpr_));
    if (options_.growth != other.options_.growth || options_.tightening != other.options_.tightening)
      fail("growth or tightening", detail::format_number(options_.growth),
           detail::format_number(other.options_.growth));
    if (seed() != other.seed()) fail("seeds", std::to_string(seed()), std::to_string(other.seed()));
    if (options_.scaling != other.options_.scaling)
      fail("scaling", options_.scaling ? "scaling" : "non-scaling", other.options_.scaling ? "scaling" : "non-scaling");
    if (layers_.size() != other.layers_.size())
      fail("layer counts", std::to_string(layers_.size()), std::to_string(other.layers_.size()));
    for (std::size_t i = 0; i < layers_.size(); ++i) layers_[i].check_compatible(other.layers_[i], operation);
  }

  /// Items added (inserts that set at least one new bit), over all layers.
  std::uint64_t inserted() const noexcept {
    std::uint64_t n = 0;
    for (std::uint64_t c : counts_) n += c;
    return n;
  }
  double estimated_count() const noexcept {
    double n = 0;
    for (const Layer& l : layers_) n += l.estimated_count();
    return n;
  }
  /// 1 − Π(1 − ε_i) over the layers at their current fill.
  double predicted_fpr() const noexcept {
    double none = 1;
    for (const Layer& l : layers_) none *= 1 - l.predicted_fpr();
    return 1 - none;
  }
  /// The bound that holds however far the chain grows: ε·(1 − r)·Σ r^i < ε.
  double fpr_bound() const noexcept { return fpr_; }
  double predicted_fpr_at_capacity() const noexcept { return fpr_bound(); }

  std::size_t size_in_bytes() const noexcept {
    std::size_t n = sizeof(*this);
    for (const Layer& l : layers_) n += l.size_in_bytes();
    return n + (counts_.capacity() + table_.capacity()) * sizeof(std::uint64_t) +
           specs_.capacity() * sizeof(layer_spec);
  }
  std::uint64_t capacity() const noexcept { return capacity_; }
  double target_fpr() const noexcept { return fpr_; }
  const scalable_options& options() const noexcept { return options_; }
  std::uint64_t seed() const noexcept { return hasher_.seed(); }
  const hasher_type& hasher() const noexcept { return hasher_; }
  std::span<const Layer> layers() const noexcept { return layers_; }
  std::span<const std::uint64_t> layer_counts() const noexcept { return counts_; }

  std::span<const layer_spec> layer_specs() const noexcept { return specs_; }

  friend bool operator==(const scalable_bloom_filter& a, const scalable_bloom_filter& b) noexcept {
    return a.capacity_ == b.capacity_ && a.fpr_ == b.fpr_ && a.options_.growth == b.options_.growth &&
           a.options_.tightening == b.options_.tightening && a.options_.scaling == b.options_.scaling &&
           a.seed() == b.seed() && a.counts_ == b.counts_ && a.specs_ == b.specs_ && a.layers_ == b.layers_;
  }

  /// For codecs of other formats: a chain from explicit layers, each with its spec and the number of
  /// keys it took. The layers must share the chain's seed; nothing here allocates beyond the vectors.
  static scalable_bloom_filter from_layers(std::uint64_t capacity, double fpr, scalable_options options,
                                           std::uint64_t seed, std::vector<Layer> layers, std::vector<layer_spec> specs,
                                           std::vector<std::uint64_t> counts) {
    scalable_bloom_filter f(capacity, fpr, options, seed, 0);  // validates, allocates nothing
    if (layers.empty() || layers.size() != specs.size() || layers.size() != counts.size())
      throw invalid_argument("scalable filter: " + std::to_string(layers.size()) + " layers, " +
                             std::to_string(specs.size()) + " specs and " + std::to_string(counts.size()) +
                             " counts do not describe a chain");
    if (layers.size() > options.max_layers)
      throw invalid_argument("scalable filter: " + std::to_string(layers.size()) + " layers exceed max_layers " +
                             std::to_string(options.max_layers));
    for (const Layer& l : layers)
      if (l.seed() != seed) throw invalid_argument("scalable filter: a layer's seed differs from the chain's");
    f.layers_ = std::move(layers);
    f.specs_ = std::move(specs);
    f.rebuild_table();
    f.counts_ = std::move(counts);
    return f;
  }
  std::span<Layer> mutable_layers() noexcept { return layers_; }

  // ---- serialization hooks (format.hpp) --------------------------------------------------------------
  // bits = capacity of layer 0, hashes = number of layers, layout = the layers' kind id; extra = {fpr,
  // growth, tightening (IEEE-754 bits), flags, max_layers, 0}, flags bit 0: non-scaling, bit 1: the
  // payload holds the layer table. Payload: one u64 count per layer, the layer table (per layer: bits,
  // hashes, capacity, fpr's IEEE-754 bits, as u64), then each layer's payload in order. The table makes
  // the file its own description: a reader never asks a planner, so tuning one cannot change how stored
  // files read. Files written before the table existed (flag bit 1 clear) get the policy's geometry for
  // their parameters, as when they were written (the tests of tests/fixtures, v1 and v2-planned, hold it).
  static constexpr std::uint64_t flag_non_scaling = 1, flag_layer_table = 2;

  filter_parameters parameters() const noexcept {
    filter_parameters p;
    p.primary = capacity_;
    p.secondary = static_cast<std::uint32_t>(layers_.size());
    p.layout = static_cast<std::uint32_t>(Layer::kind);
    p.extra = {std::bit_cast<std::uint64_t>(fpr_),
               std::bit_cast<std::uint64_t>(options_.growth),
               std::bit_cast<std::uint64_t>(options_.tightening),
               (options_.scaling ? 0 : flag_non_scaling) | flag_layer_table,
               options_.max_layers,
               0};
    return p;
  }
  template <class Fn>
  void for_each_payload_segment(Fn&& fn) const {
    fn(std::as_bytes(std::span<const std::uint64_t>(counts_)));
    fn(std::as_bytes(std::span<const std::uint64_t>(table_)));
    for (const Layer& l : layers_) l.for_each_payload_segment(fn);
  }
  /// The payload's size as its layer table (or, without one, the policy) describes it; invalid_argument
  /// when the parameters or the table describe no chain. Reads at most the table, within `payload`.
  static std::uint64_t payload_size(const filter_parameters& p, std::span<const std::byte> payload) {
    std::uint64_t size = prefix_bytes(p);
    for (const stored_layer& l : stored_layers(from_parameters(p), p, payload))
      size += Layer::payload_size(l.parameters);
    return size;
  }
  static scalable_bloom_filter from_payload(const filter_parameters& p, std::uint64_t seed, std::uint64_t,
                                            byte_storage payload) {
    scalable_bloom_filter f = from_parameters(p, seed);
    const std::vector<stored_layer> layers = stored_layers(f, p, {payload.data(), payload.size()});
    f.counts_.assign(p.secondary, 0);
    std::memcpy(f.counts_.data(), payload.data(), 8 * static_cast<std::size_t>(p.secondary));
    const std::byte* at = payload.data() + prefix_bytes(p);
    for (std::uint32_t i = 0; i < p.secondary; ++i) {
      const std::uint64_t size = Layer::payload_size(layers[i].parameters);
      byte_storage part = byte_storage::allocate(size);
      if (size != 0) std::memcpy(part.data(), at, size);
      at += size;
      f.layers_.push_back(Layer::from_payload(layers[i].parameters, seed, f.counts_[i], std::move(part)));
      // A layer's recorded capacity must be one its bits can hold at its rate (doubled for rounding and
      // other planners): the next layer is sized from it, and a table claiming 2·10^14 keys for a layer of
      // 310 bits made the next insert allocate 63 billion bits (file fuzzer). A non-scaling chain never
      // sizes a layer from it, and keeps the classic bound RedisBloom's NONSCALING layers (whose rate may
      // pass 1/2) are written under.
      const double fpr = layers[i].spec.fpr;
      const double per_bit = f.options_.scaling ? detail::keys_per_bit(fpr) : math::ln2 * math::ln2 / -std::log(fpr);
      const double holds = static_cast<double>(f.layers_.back().bits()) * per_bit;
      if (static_cast<double>(layers[i].spec.capacity) > 2 * holds + 64)
        throw format_error("scalable filter: layer " + std::to_string(i) + " records a capacity of " +
                           std::to_string(layers[i].spec.capacity) + " keys, but its " +
                           std::to_string(f.layers_.back().bits()) + " bits hold about " +
                           std::to_string(static_cast<std::uint64_t>(holds)) + " at its rate");
      f.specs_.push_back(layers[i].spec);
    }
    f.rebuild_table();
    if (f.total_bits() > max_filter_bits)
      throw format_error("scalable filter: its layers hold " + std::to_string(f.total_bits()) +
                         " bits, beyond the maximum of 2^40");
    // The next layer comes from the header's capacity, rate, growth and tightening, the stored ones from
    // the table; a policy grows each layer's capacity by the growth factor, so a next layer far beyond
    // that (a header that claims billions of keys over a table of tiny layers) would make the next insert
    // allocate gigabytes that nothing in the file accounts for. Its size in bits is held to a plan's
    // limits when it is added (a rate below min_fpr, or beyond 2^40 bits, leaves the chain full); its
    // capacity is refused here, since no chain this library writes records one.
    if (f.can_grow()) {
      const layer_spec next = f.spec_at(f.specs_.size());
      if (const std::string why = f.capacity_refusal(next); !why.empty()) throw format_error("scalable filter: " + why);
    }
    return f;
  }

 private:
  /// A chain with no layers yet (for from_parameters: nothing is allocated before a file is validated).
  scalable_bloom_filter(std::uint64_t capacity, double fpr, scalable_options options, std::uint64_t seed, int)
      : capacity_(capacity), fpr_(fpr), options_(options), hasher_(seed) {
    validate(capacity, fpr, options);
  }

  static void validate(std::uint64_t capacity, double fpr, const scalable_options& options) {
    detail::check_plan_inputs(capacity, fpr, min_rate);
    // A non-scaling chain never uses its growth (RedisBloom records 0 for some), so only a scaling one
    // needs growth ≥ 1.
    if (!(options.growth >= (options.scaling ? 1.0 : 0.0) && options.growth <= scalable_max_growth))
      throw invalid_argument("scalable filter: growth must be in [" + std::string(options.scaling ? "1" : "0") +
                             ", 32768], got " + detail::format_number(options.growth));
    if (!(options.tightening > 0.0 && options.tightening < 1.0))
      throw invalid_argument("scalable filter: tightening ratio must be in (0, 1), got " +
                             detail::format_number(options.tightening));
    if (options.max_layers == 0 || options.max_layers > scalable_max_layers)
      throw invalid_argument("scalable filter: max_layers must be in [1, " + std::to_string(scalable_max_layers) +
                             "], got " + std::to_string(options.max_layers));
  }

  /// The chain a header describes, with no layers yet; invalid_argument if it describes none.
  static scalable_bloom_filter from_parameters(const filter_parameters& p, std::uint64_t seed = 0) {
    if (p.layout != static_cast<std::uint32_t>(Layer::kind))
      throw invalid_argument("scalable filter: layer kind " + std::to_string(p.layout) + " is not " +
                             std::string(Layer::name));
    if ((p.extra[3] & ~(flag_non_scaling | flag_layer_table)) != 0 || p.extra[5] != 0)
      throw invalid_argument("scalable filter: unknown flags");
    scalable_options o;
    o.growth = std::bit_cast<double>(p.extra[1]);
    o.tightening = std::bit_cast<double>(p.extra[2]);
    o.scaling = (p.extra[3] & flag_non_scaling) == 0;
    o.max_layers = static_cast<std::uint32_t>(std::min<std::uint64_t>(p.extra[4], scalable_max_layers + 1));
    scalable_bloom_filter f(p.primary, std::bit_cast<double>(p.extra[0]), o, seed, 0);  // validates, allocates nothing
    if (p.secondary == 0 || p.secondary > o.max_layers || (!o.scaling && p.secondary != 1))
      throw invalid_argument("scalable filter: layer count " + std::to_string(p.secondary) + " is not possible");
    return f;
  }

  /// Counts, and the layer table when there is one.
  static std::uint64_t prefix_bytes(const filter_parameters& p) noexcept {
    return 8 * std::uint64_t{p.secondary} * ((p.extra[3] & flag_layer_table) ? 5 : 1);
  }

  /// A layer as a file describes it: its parameters, and its design.
  struct stored_layer {
    filter_parameters parameters;
    layer_spec spec;
  };

  /// Each layer's parameters and design: read from the table, or (without one) planned by the policy as
  /// when the file was written. Each spec is taken one step from the last, so a 4096-layer file costs 4096
  /// steps.
  static std::vector<stored_layer> stored_layers(scalable_bloom_filter shape, const filter_parameters& p,
                                                 std::span<const std::byte> payload) {
    if ((p.extra[3] & flag_layer_table) && payload.size() < prefix_bytes(p))
      throw invalid_argument("scalable filter: a payload of " + std::to_string(payload.size()) +
                             " bytes cannot hold the counts and layer table of " + std::to_string(p.secondary) +
                             " layers");
    std::vector<stored_layer> layers(p.secondary);
    for (std::uint32_t i = 0; i < p.secondary; ++i) {
      filter_parameters& lp = layers[i].parameters;
      lp.layout = Layer::layout_type::block_bits;
      if (p.extra[3] & flag_layer_table) {
        const std::byte* row = payload.data() + 8 * (static_cast<std::size_t>(p.secondary) + 4 * i);
        const std::uint64_t hashes = detail::read_u64(row + 8), capacity = detail::read_u64(row + 16);
        const double fpr = std::bit_cast<double>(detail::read_u64(row + 24));
        if (hashes > UINT32_MAX || capacity == 0 || !(fpr > 0 && fpr < 1))
          throw invalid_argument("scalable filter: layer " + std::to_string(i) + " has " + std::to_string(hashes) +
                                 " hashes, capacity " + std::to_string(capacity) + " and rate " +
                                 detail::format_number(fpr));
        lp.primary = detail::read_u64(row);
        lp.secondary = static_cast<std::uint32_t>(hashes);
        layers[i].spec = {capacity, fpr};
      } else {
        shape.specs_.push_back(shape.spec_at(i));
        layers[i].spec = shape.specs_.back();
        const auto layout = LayerPlan{}.layout(layers[i].spec);
        lp.primary = layout.bits();
        lp.secondary = layout.hashes();
      }
    }
    return layers;
  }

  std::uint64_t total_bits() const noexcept {
    std::uint64_t bits = 0;
    for (const Layer& l : layers_) bits += l.bits();  // each at most 2^40, at most 4096 of them: no overflow
    return bits;
  }

  /// Why `next` may not follow the newest layer (empty if it may): a capacity beyond the growth of the
  /// newest layer's, which no policy makes.
  std::string capacity_refusal(const layer_spec& next) const {
    if (specs_.empty()) return {};
    const double allowed = 2 * std::max(1.0, options_.growth) * static_cast<double>(specs_.back().capacity) + 1;
    if (static_cast<double>(next.capacity) <= allowed) return {};
    return "its next layer would hold " + std::to_string(next.capacity) + " keys, beyond the growth of its last " +
           "layer's " + std::to_string(specs_.back().capacity);
  }

  /// The next layer's geometry, held to what a fresh plan may make before anything is allocated, whatever
  /// the policy: invalid_argument saying why not.
  typename Layer::layout_type next_layer() const {
    const std::size_t i = layers_.size();
    const layer_spec spec = spec_at(i);
    auto refuse = [&](const std::string& why) -> void {
      throw invalid_argument("scalable filter: layer " + std::to_string(i) + " (" + std::to_string(spec.capacity) +
                             " keys at rate " + detail::format_number(spec.fpr) + ") cannot be added: " + why);
    };
    if (const std::string why = capacity_refusal(spec); !why.empty()) refuse(why);
    // A policy that plans below min_rate would make each key cost millions of bits (see min_fpr).
    if (!(spec.fpr >= min_rate))
      refuse("its rate is below the smallest a plan accepts, " + detail::format_number(min_rate));
    std::optional<typename Layer::layout_type> layout;
    try {
      layout.emplace(LayerPlan{}.layout(spec));  // throws beyond 2^40 bits
    } catch (const invalid_argument& e) {
      refuse(e.what());
    }
    if (layout->bits() > max_filter_bits)
      refuse(std::to_string(layout->bits()) + " bits are beyond the maximum of 2^40");
    if (layout->bits() > max_filter_bits - total_bits())
      refuse("the chain's " + std::to_string(total_bits()) + " bits and its " + std::to_string(layout->bits()) +
             " would pass the maximum of 2^40 bits for one filter");
    return *layout;
  }

  void add_layer() {
    const layer_spec spec = spec_at(layers_.size());
    const auto layout = next_layer();
    layers_.reserve(layers_.size() + 1);
    specs_.reserve(specs_.size() + 1);
    counts_.reserve(counts_.size() + 1);
    layers_.push_back(Layer::from_parts(layout, hasher_type(hasher_.seed()),
                                        byte_storage::allocate(layout.storage_bytes()), 0));
    counts_.push_back(0);  // cannot throw after the reserves, so the three vectors stay in step
    specs_.push_back(spec);
    rebuild_table();
  }

  void rebuild_table() {
    table_.clear();
    table_.reserve(4 * layers_.size());
    for (std::size_t i = 0; i < layers_.size(); ++i)
      table_.insert(table_.end(), {layers_[i].bits(), layers_[i].hashes(), specs_[i].capacity,
                                   std::bit_cast<std::uint64_t>(specs_[i].fpr)});
  }

  std::uint64_t capacity_;
  double fpr_;
  scalable_options options_;
  hasher_type hasher_;
  std::vector<Layer> layers_;
  std::vector<std::uint64_t> counts_;
  std::vector<layer_spec> specs_;
  std::vector<std::uint64_t> table_;  // the layer table as files store it, kept beside the layers
};

static_assert(serializable_filter<scalable_bloom_filter<>>);

namespace detail {

/// Pair estimates read two chains layer by layer, which is exact only while both have one layer. An item
/// sits in whichever layer was last when it was added, so chains filled in different orders hold a shared
/// item in different layers, and layers of different depths have different geometries that no bit-wise
/// estimate can compare: past one layer the layer-wise union overstates the true one by every such item
/// (two 8-layer chains of 200k items sharing 100k gave 396k for a union of 300k). Rather than print that,
/// grown chains are refused, and the message gives the bounds their bits do support.
template <class Layer, class Plan>
void check_pair_estimable(const scalable_bloom_filter<Layer, Plan>& a, const scalable_bloom_filter<Layer, Plan>& b,
                          std::string_view operation) {
  a.check_compatible(b, operation);
  if (a.layers().size() == 1) return;
  double layerwise = 0;
  for (std::size_t i = 0; i < a.layers().size(); ++i) layerwise += estimate_union(a.layers()[i], b.layers()[i]);
  const double na = a.estimated_count(), nb = b.estimated_count();
  throw incompatible_filters(
      "cannot " + std::string(operation) + " scalable filters that have grown (" + std::to_string(a.layers().size()) +
      " layers): an item sits in the layer that was last when it was added, which differs between filters "
      "filled in different orders, so their bits bound the union only, between " +
      std::to_string(static_cast<std::uint64_t>(std::max(na, nb))) + " and " +
      std::to_string(static_cast<std::uint64_t>(std::min(layerwise, na + nb))) +
      "; filters reserved for all their items (one layer each) are estimated exactly");
}

}  // namespace detail

/// Estimated distinct items in the union of two compatible chains of one layer each: the union estimate of
/// their layers, which is the estimate of the chain merge() would make. Throws incompatible_filters for
/// chains that have grown (see detail::check_pair_estimable) or differ.
template <class Layer, class Plan>
double estimate_union(const scalable_bloom_filter<Layer, Plan>& a, const scalable_bloom_filter<Layer, Plan>& b) {
  detail::check_pair_estimable(a, b, "estimate the union of");
  return estimate_union(a.layers()[0], b.layers()[0]);
}

/// n(A) + n(B) − n(A ∪ B) over the chains' fill, never below zero; one layer each, as estimate_union.
template <class Layer, class Plan>
double estimate_intersection(const scalable_bloom_filter<Layer, Plan>& a, const scalable_bloom_filter<Layer, Plan>& b) {
  detail::check_pair_estimable(a, b, "estimate the intersection of");
  const double u = estimate_union(a.layers()[0], b.layers()[0]);
  return std::max(0.0, a.estimated_count() + b.estimated_count() - u);
}

/// |A ∩ B| / |A ∪ B| from the two estimates (0 when both are empty); one layer each, as estimate_union.
template <class Layer, class Plan>
double estimate_jaccard(const scalable_bloom_filter<Layer, Plan>& a, const scalable_bloom_filter<Layer, Plan>& b) {
  detail::check_pair_estimable(a, b, "estimate the Jaccard index of");
  const double u = estimate_union(a.layers()[0], b.layers()[0]);
  if (u <= 0) return 0.0;
  return std::max(0.0, a.estimated_count() + b.estimated_count() - u) / u;
}

}  // namespace blume
