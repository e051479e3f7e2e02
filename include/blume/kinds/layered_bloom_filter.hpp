// SPDX-License-Identifier: Apache-2.0
// The layered Bloom filter (as described in Tarkoma, Rothenberg & Lagerspetz's survey, 2012): L Bloom
// filters of one geometry stacked as layers, which count how many times a key was inserted, up to L. An
// insert goes into the first layer that does not yet hold the key; count(key) is the deepest layer l such
// that layers 1..l all hold it; contains(key) asks layer 1.
//
// A key is hashed once and the one digest probes every layer. Since the layers share their geometry, the
// key's probes fall on the same positions in each, and a layer is only written where the layer above it
// already answered "maybe": every bit set in layer l + 1 is set in layer l. Reading a file checks that.
//
// Errors. count(key) is never below min(true multiplicity, L) (the argument is beside count()). Above it:
// with ε_j the false-positive rate of layer j at the keys whose count reached j ((1 − e^{−k·n_j/m})^k for
// the classic layout, the layout's own model_fpr in general; layer_fpr(j − 1) reads it off the fill), a key
// inserted c < L times reads a count of c + 1 or more with probability at least ε_{c+1} (layer c + 1
// answers "maybe" for it) and at most Σ_{j ≤ c+1} ε_j (or one of its own inserts met a "maybe" in the
// layer it was aimed at and went deeper; overcount_bound(c)): math::layered_overcount_bound. A key never
// inserted reads j or more with probability exactly ε_j, so ε_1 is contains()'s false-positive rate. Each
// layer is planned for the whole capacity at the target rate, since every key may reach every layer;
// deeper layers hold fewer keys, so their rates are lower still.
//
// No erase: an erase would have to clear the key's bits in its deepest layer, and other keys share those
// bits, so they would lose a count they had (a false negative in layer 1). No merge either (merge_refusal).
//
// Thread safety: const calls may run concurrently with each other; insert, insert_many, clear and
// assignment need exclusive access (an insert reads the layers before it writes one).
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <ranges>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "blume/detail/key_interface.hpp"
#include "blume/detail/pipeline.hpp"
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

/// Layers a layered filter gets unless told otherwise: it counts 1, 2, 3 and "4 or more".
inline constexpr std::uint32_t layered_default_layers = 4;
/// Most layers a layered filter may have: each costs a whole filter's memory, and a count above 64 is a
/// job for a counting sketch.
inline constexpr std::uint32_t layered_max_layers = 64;

template <class Layout = blocked_layout, hasher Hasher = xxh3_hasher>
class layered_bloom_filter : public detail::key_interface<layered_bloom_filter<Layout, Hasher>> {
  static_assert(bloom_layout<Layout>);
  // A counting layout's words hold counters, not bits: the nesting of the layers and the padding checks
  // below read words as bits.
  static_assert(
      !requires(const Layout& l, const typename Layout::word_type* w, const digest& d) { l.count(w, d); },
      "layered filters stack bit arrays, not counters");
  using key_calls = detail::key_interface<layered_bloom_filter>;

 public:
  using key_calls::contains;
  using key_calls::count;
  using key_calls::hash;
  using key_calls::insert;
  using layout_type = Layout;
  using hasher_type = Hasher;
  using word_type = typename Layout::word_type;
  static constexpr filter_kind kind{19};
  static constexpr std::string_view name = "layered";
  static constexpr kind_input input = kind_input::keys;
  static constexpr bool is_static = false;
  /// What the file header's primary field holds, as `blume info` names it.
  static constexpr std::string_view primary_field = "bits per layer";
  static constexpr std::string_view merge_refusal =
      "a layer-wise union counts a key at least the larger of its two counts, not their sum, so counts would be "
      "wrong";

  // Planning is per layer with the layout's planner; a plan's `bits` are all layered_default_layers
  // layers' bits, so the model divides them back into one layer's.
  static std::uint64_t plan_bytes(std::uint64_t bits) noexcept {
    return Layout::plan_bytes(bits / layered_default_layers) * layered_default_layers;
  }
  static double model_fpr(double n, double m, double k) noexcept {
    return Layout::model_fpr(n, m / layered_default_layers, k);
  }
  /// Every layer planned for `items` keys at `fpr` (each may receive every key): bits = layers × the
  /// layer's bits, predicted_fpr = one layer's rate at `items`, the rate of contains() and the bound on
  /// every over-count probability.
  static filter_plan plan(std::uint64_t items, double fpr)
    requires requires(std::uint64_t n, double x) { Layout::plan(n, x); }
  {
    const filter_plan layer = Layout::plan(items, fpr);
    detail::check_bits(static_cast<double>(layer.bits) * layered_default_layers, items, fpr);
    return detail::make_plan<layered_bloom_filter>(items, layer.bits * layered_default_layers, layer.hashes);
  }
  /// The budget split evenly over the layers, each given the layout's best plan for its share.
  static filter_plan plan_for_bits(std::uint64_t items, std::uint64_t bits)
    requires requires(std::uint64_t n, std::uint64_t m) { Layout::plan_for_bits(n, m); }
  {
    detail::check_budget(items, bits);
    if (bits < layered_default_layers)
      throw invalid_argument("bit budget " + std::to_string(bits) + " cannot hold " +
                             std::to_string(layered_default_layers) + " layers");
    const filter_plan layer = Layout::plan_for_bits(items, bits / layered_default_layers);
    return detail::make_plan<layered_bloom_filter>(items, layer.bits * layered_default_layers, layer.hashes);
  }

  /// `layers` layers, each planned for `capacity` keys at false-positive rate `fpr` by the layout's
  /// planner. invalid_argument, before anything is allocated, for a bad request or layer count.
  layered_bloom_filter(std::uint64_t capacity, double fpr, std::uint32_t layers = layered_default_layers,
                       std::uint64_t seed = Hasher::default_seed)
      : layered_bloom_filter(planned_layout(capacity, fpr, layers), layers, Hasher(seed)) {}

  /// `layers` layers of exactly `bits` bits and `hashes` probes each (the layout may reject sizes).
  static layered_bloom_filter with_geometry(std::uint64_t bits, std::uint32_t hashes,
                                            std::uint32_t layers = layered_default_layers,
                                            std::uint64_t seed = Hasher::default_seed) {
    return layered_bloom_filter(Layout(bits, hashes), layers, Hasher(seed));
  }

  // ---- single keys -----------------------------------------------------------------------------------

  /// Adds one to the key's count: sets its bits in the first layer that does not hold it. At L layers
  /// the count saturates and nothing changes. Returns the count afterwards (at least 1).
  std::uint64_t insert(const digest& d) noexcept {
    ++inserted_;
    const std::uint64_t c = count(d);
    if (c == layers_) return c;
    layout_.template insert<false>(layer_words(static_cast<std::uint32_t>(c)), d);
    return c + 1;
  }

  /// False means certainly never inserted; true means inserted or a false positive of layer 1.
  bool contains(const digest& d) const noexcept { return layout_.contains(layer_words(0), d); }

  /// How many times the key was inserted, capped at layers(): never less than that (see the header's
  /// comment), more within layer_fpr() and overcount_bound(). 0 means certainly never inserted.
  std::uint64_t count(const digest& d) const noexcept {
    // The first layer that misses ends the count: the layers a key was inserted into are 1..c, without gaps.
    std::uint32_t c = 0;
    while (c < layers_ && layout_.contains(layer_words(c), d)) ++c;
    return c;
  }

  // Why count() never under-counts: bits are only ever set, so a layer that holds a key holds it from then
  // on. An insert of a key whose count is c < L finds layers 1..c holding it and layer c + 1 not (that is
  // what count c means), so it writes layer c + 1 and leaves the count at c + 1 or more. Each of the key's
  // inserts therefore raises its count by at least one until it reaches L, and nothing ever lowers it:
  // after j inserts the count is at least min(j, L), whatever other keys did.

  // ---- bulk calls --------------------------------------------------------------------------------------

  /// Inserts every key (as insert, in order), hashing and prefetching a batch ahead of its use.
  template <std::ranges::input_range R>
  void insert_many(const R& keys) noexcept {
    detail::pipelined(
        keys, [this](const auto& k) { return this->hash(k); },
        [this](const digest& d) { layout_.prefetch(layer_words(0), d); },
        [this](std::span<const digest> batch) {
          for (const digest& d : batch) insert(d);
        });
  }

  /// Forgets every key.
  void clear() noexcept {
    storage_.zero();
    inserted_ = 0;
  }

  // ---- estimates ---------------------------------------------------------------------------------------

  /// Distinct keys, estimated from layer 1's fill (every inserted key is there once).
  double estimated_count() const noexcept { return layer_estimated_count(0); }
  /// Keys whose count reached layer i + 1, estimated from that layer's fill.
  double layer_estimated_count(std::uint32_t i) const noexcept {
    return Layout::estimate_items(static_cast<double>(layer_set_bits(i)), static_cast<double>(bits()), hashes());
  }
  /// The fraction of layer i's bits that are set.
  double layer_fill(std::uint32_t i) const noexcept {
    return static_cast<double>(layer_set_bits(i)) / static_cast<double>(bits());
  }
  /// Layer i's false-positive rate at the keys its fill shows: ε_{i+1}, the least probability that a key
  /// inserted i times reads a higher count, and exactly the probability that a key never inserted reads
  /// i + 1 or more.
  double layer_fpr(std::uint32_t i) const noexcept { return predicted_fpr_at(layer_estimated_count(i)); }
  /// The most probability that a key inserted `multiplicity` times reads a higher count,
  /// ε_1 + … + ε_{multiplicity+1} (math::layered_overcount_bound; 0 from layers() on: counts saturate).
  double overcount_bound(std::uint32_t multiplicity) const {
    if (multiplicity >= layers_) return 0.0;
    std::vector<double> rates(multiplicity + 1);
    for (std::uint32_t i = 0; i <= multiplicity; ++i) rates[i] = layer_fpr(i);
    return math::layered_overcount_bound(rates, multiplicity);
  }

  /// contains()'s false-positive rate now (layer 1's model at its estimated keys).
  double predicted_fpr() const noexcept { return layer_fpr(0); }
  /// One layer's model at `items` keys: contains()'s rate when `items` distinct keys were inserted.
  double predicted_fpr_at(double items) const noexcept {
    if (items == std::numeric_limits<double>::infinity()) return 1.0;
    return Layout::model_fpr(items, static_cast<double>(bits()), hashes());
  }
  /// The load at which a layer's k is optimal, n = m·ln 2 / k: the capacity a file with no recorded design
  /// is read against.
  double optimal_load() const noexcept { return static_cast<double>(bits()) * math::ln2 / hashes(); }

  // ---- geometry ----------------------------------------------------------------------------------------

  std::uint32_t layers() const noexcept { return layers_; }
  /// Bits of one layer (every layer has the same).
  std::uint64_t bits() const noexcept { return layout_.bits(); }
  std::uint32_t hashes() const noexcept { return layout_.hashes(); }
  std::uint64_t seed() const noexcept { return hasher_.seed(); }
  const Hasher& hasher() const noexcept { return hasher_; }
  const Layout& layout() const noexcept { return layout_; }
  /// Calls to insert so far, saturated ones included (so a stream's length, not its distinct keys).
  std::uint64_t inserted() const noexcept { return inserted_; }
  /// Memory held: the layers' bit arrays plus this object.
  std::size_t size_in_bytes() const noexcept { return storage_.size() + sizeof(*this); }
  /// True when the layers are a private mapping of a file (opened with map_file).
  bool is_mapped() const noexcept { return storage_.file_backed(); }

  friend bool operator==(const layered_bloom_filter& a, const layered_bloom_filter& b) noexcept {
    if (a.layers_ != b.layers_ || a.bits() != b.bits() || a.hashes() != b.hashes() || a.seed() != b.seed())
      return false;
    return std::ranges::equal(std::span<const std::byte>(a.storage_.data(), a.storage_.size()),
                              std::span<const std::byte>(b.storage_.data(), b.storage_.size()));
  }

  // ---- serialization hooks (format.hpp) ------------------------------------------------------------------
  // bits = one layer's bits, hashes = its probes, layout = the layers' kind id (3 for blocked); extra[0] =
  // the number of layers, extra[1..5] = 0. Payload: the layers' arrays in order, layer 1 first, each
  // Layout::storage_bytes() long.

  filter_parameters parameters() const noexcept {
    filter_parameters p;
    p.primary = bits();
    p.secondary = hashes();
    p.layout = static_cast<std::uint32_t>(Layout::kind);
    p.extra[0] = layers_;
    return p;
  }
  template <class Fn>
  void for_each_payload_segment(Fn&& fn) const {
    fn(std::span<const std::byte>(storage_.data(), storage_.size()));
  }
  /// invalid_argument when the parameters describe no layered filter.
  static std::uint64_t payload_size(const filter_parameters& p) {
    const auto [layout, layers] = described_by(p);
    return std::uint64_t{layers} * layout.storage_bytes();
  }
  /// Adopts `payload` (zero-copy when it is a file mapping) after checking what a filter never writes:
  /// padding bits past a layer's used ones, and a bit set in a layer where the layer above is clear.
  static layered_bloom_filter from_payload(const filter_parameters& p, std::uint64_t seed, std::uint64_t inserted,
                                           byte_storage payload) {
    std::uint64_t size = 0;
    try {
      size = payload_size(p);
    } catch (const invalid_argument& e) {
      throw format_error(std::string("invalid parameters: ") + e.what());
    }
    if (payload.size() != size)
      throw format_error("layered filter: payload holds " + std::to_string(payload.size()) +
                         " bytes but the parameters need " + std::to_string(size));
    const auto [layout, layers] = described_by(p);
    layered_bloom_filter f(layout, layers, Hasher(seed), std::move(payload));
    f.inserted_ = inserted;
    f.check_layers();
    return f;
  }

 private:
  struct description {
    Layout layout;
    std::uint32_t layers;
  };

  static void check_layer_count(std::uint64_t layers) {
    if (layers == 0 || layers > layered_max_layers)
      throw invalid_argument("layered filter: layer count must be in [1, " + std::to_string(layered_max_layers) +
                             "], got " + std::to_string(layers));
  }
  static void check_total(const Layout& layout, std::uint32_t layers) {
    if (layout.bits() > max_filter_bits / layers)
      throw invalid_argument("layered filter: " + std::to_string(layers) + " layers of " +
                             std::to_string(layout.bits()) + " bits exceed the maximum of 2^40 bits");
  }

  static description described_by(const filter_parameters& p) {
    if (p.layout != static_cast<std::uint32_t>(Layout::kind))
      throw invalid_argument("layered filter: layer kind " + std::to_string(p.layout) + " is not " +
                             std::string(Layout::name) + " (" + std::to_string(static_cast<int>(Layout::kind)) + ")");
    for (std::size_t i = 1; i < p.extra.size(); ++i)
      if (p.extra[i] != 0) throw invalid_argument("reserved header bytes are not zero");
    check_layer_count(p.extra[0]);
    const auto layers = static_cast<std::uint32_t>(p.extra[0]);
    Layout layout(p.primary, p.secondary);
    check_total(layout, layers);
    return {layout, layers};
  }

  static Layout planned_layout(std::uint64_t capacity, double fpr, std::uint32_t layers) {
    check_layer_count(layers);
    const filter_plan plan = Layout::plan(capacity, fpr);
    return Layout(plan.bits, plan.hashes);
  }

  layered_bloom_filter(const Layout& layout, std::uint32_t layers, const Hasher& hasher)
      : layered_bloom_filter(layout, layers, hasher, allocate_layers(layout, layers)) {}
  layered_bloom_filter(const Layout& layout, std::uint32_t layers, const Hasher& hasher, byte_storage storage)
      : layout_(layout), hasher_(hasher), storage_(std::move(storage)), layers_(layers) {}

  /// The layers' zeroed arrays, after the checks: nothing is allocated for a size the checks refuse.
  static byte_storage allocate_layers(const Layout& layout, std::uint32_t layers) {
    check_layer_count(layers);
    check_total(layout, layers);
    return byte_storage::allocate(static_cast<std::size_t>(layers * layout.storage_bytes()));
  }

  std::size_t layer_bytes() const noexcept { return static_cast<std::size_t>(layout_.storage_bytes()); }
  word_type* layer_words(std::uint32_t i) noexcept {
    return reinterpret_cast<word_type*>(storage_.data() + i * layer_bytes());
  }
  const word_type* layer_words(std::uint32_t i) const noexcept {
    return reinterpret_cast<const word_type*>(storage_.data() + i * layer_bytes());
  }
  std::span<const word_type> layer_span(std::uint32_t i) const noexcept {
    return {layer_words(i), layer_bytes() / sizeof(word_type)};
  }
  std::uint64_t layer_set_bits(std::uint32_t i) const noexcept {
    std::uint64_t n = 0;
    for (const word_type w : layer_span(i)) n += static_cast<std::uint64_t>(std::popcount(w));
    return n;
  }

  /// format_error unless every layer's padding is clear and each layer's bits lie within the layer above.
  void check_layers() const {
    std::uint64_t used = bits();
    if constexpr (requires { layout_.payload_bits(); }) used = layout_.payload_bits();
    for (std::uint32_t i = 0; i < layers_; ++i) {
      const std::byte* bytes = storage_.data() + i * layer_bytes();
      for (std::uint64_t bit = used; bit < layer_bytes() * 8; ++bit)
        if ((static_cast<unsigned>(bytes[bit / 8]) >> (bit % 8)) & 1u)
          throw format_error("layered filter: layer " + std::to_string(i + 1) + " has padding bits past bit " +
                             std::to_string(used) + " set");
      if (i == 0) continue;
      const std::span<const word_type> above = layer_span(i - 1), here = layer_span(i);
      for (std::size_t w = 0; w < here.size(); ++w)
        if ((here[w] & ~above[w]) != 0)
          throw format_error("layered filter: layer " + std::to_string(i + 1) + " sets a bit that layer " +
                             std::to_string(i) + " lacks");
    }
  }

  Layout layout_;
  Hasher hasher_;
  byte_storage storage_;
  std::uint32_t layers_;
  std::uint64_t inserted_ = 0;
};

static_assert(serializable_filter<layered_bloom_filter<>>);
static_assert(can_count<layered_bloom_filter<>> && takes_inserts<layered_bloom_filter<>>);
static_assert(!can_erase<layered_bloom_filter<>> && !can_merge<layered_bloom_filter<>> &&
              !bit_array_filter<layered_bloom_filter<>>);

}  // namespace blume
