// SPDX-License-Identifier: Apache-2.0
// The fruit fly's novelty filter (Dasgupta, Sheehan, Stevens & Navlakha, "A neural data structure for novelty
// detection", PNAS 115(51):13093–13098, 2018): a Bloom filter over vectors that knows similarity and time.
//
// An input x of d values gets a tag, the k of m units that FlyHash (detail/flyhash.hpp) selects: a sparse
// binary projection, then winner-take-all. The filter holds one weight per unit (the synapse from a Kenyon
// cell to the novelty neuron MBON-α'3), all 1 at first. Its rules, the paper's:
//  * novelty(x) is the mean weight of x's tag: 1 for an input unlike anything observed, near 0 for one observed
//    just now, and in between for one near an observed input, since near inputs share most of their tag;
//  * observe(x) multiplies the weights of x's tag by δ (depression; δ = 0 is the binary filter, a unit once
//    hit stays 0);
//  * every other weight recovers toward 1 by a share ε of what it lacks at each step: w ← w + ε(1 − w).
// A step is one observation, or one step of elapse(n). Recovery is kept lazily and exactly: each unit stores
// its weight when last depressed and the step recovery started, and after t steps a deficit 1 − w has become
// (1 − w)(1 − ε)^t; so an observation costs O(m·s) for the tag and O(k) for the weights, and elapse(n) O(1),
// where the rule applied step by step would cost O(m) a step.
//
// Defaults: m = 2000 units, s = 6 inputs a unit (d if smaller), k = 5% of m, δ = 0.4, ε = 0.01: the fly's Kenyon cells sample
// about 6 projection neurons and about 5% fire for an odour; δ and ε are the values reported for the paper's
// time-sensitive filter.
//
// Its model, for the binary rule (δ = 0, ε = 0) and inputs whose tags are independent: after n observations a
// unit is still 1 with probability (1 − k/m)^n, so an unrelated input reads novelty 0 (a false "seen") with
// probability (1 − (1 − k/m)^n)^k: a classic filter of m bits and k probes (model_fpr). With δ > 0 the
// expected novelty of an unrelated input is (1 − (1 − δ)k/m)^n before recovery (expected_novelty).
//
// It takes vectors, not keys (kind_input::vectors): there is no insert(key) or contains(key), and so no false
// negative to promise. It forgets by design: an input's novelty rises back with time.
//
// Thread safety: const calls may run concurrently; observe and elapse need exclusive access.
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "blume/detail/flyhash.hpp"
#include "blume/error.hpp"
#include "blume/hash.hpp"
#include "blume/io/parameters.hpp"
#include "blume/io/serialization.hpp"
#include "blume/kind.hpp"
#include "blume/plan.hpp"
#include "blume/storage.hpp"

namespace blume {

/// The projection's identity in file headers: FlyHash drawn from the seed (no key is hashed).
struct flyhash_projection {
  static constexpr hash_id id = hash_id::flyhash;
  static constexpr std::uint64_t default_seed = 0x626c756d65ULL;
};

/// The shape of a novelty filter: inputs of `dim` values, `units` weights, each unit summing `samples` inputs
/// (0: 6, or dim when it is smaller), tags of `tag` units (0: 5% of the units, at least 1).
struct novelty_geometry {
  std::uint32_t dim = 0;
  std::uint32_t units = 2000;
  std::uint32_t samples = 0;
  std::uint32_t tag = 0;
};

/// How weights change: an observation multiplies its tag's weights by `depression` (δ, in [0, 1)); at each
/// step every weight recovers by `recovery` (ε, in [0, 1]) of what it lacks.
struct novelty_rules {
  double depression = 0.4;
  double recovery = 0.01;
};

class novelty_filter {
 public:
  static constexpr filter_kind kind{27};
  static constexpr std::string_view name = "novelty";
  static constexpr kind_input input = kind_input::vectors;
  static constexpr bool is_static = false;
  static constexpr bool forgets = true;
  static constexpr std::string_view plan_refusal =
      "a novelty filter is sized by its inputs' dimension, its units and its tag (novelty_geometry), not by a key "
      "count and a rate";
  static constexpr std::string_view merge_refusal =
      "their weights depend on the order of the observations and the steps between them, so a union means nothing";
  static constexpr size_unit unit{"units", "unit", 128};
  static constexpr std::string_view secondary_field = "tag";
  using hasher_type = flyhash_projection;

  static constexpr std::uint32_t max_dim = 1u << 24;
  static constexpr std::uint32_t max_units = 1u << 28;
  static constexpr std::uint32_t max_samples = 32;

  /// A unit's bytes: its weight (a double) and the step its recovery started (a u64).
  static std::uint64_t plan_bytes(std::uint64_t units) noexcept { return 16 * units; }
  /// The binary rule's rate (δ = 0, ε = 0): an input unrelated to n observed ones reads novelty 0 with
  /// probability (1 − (1 − k/m)^n)^k.
  static double model_fpr(double n, double m, double k) noexcept {
    if (k <= 0 || m <= 0) return 1.0;
    if (!(n > 0)) return 0.0;
    return std::pow(-std::expm1(n * std::log1p(-std::min(k / m, 1.0))), k);
  }

  explicit novelty_filter(novelty_geometry g, novelty_rules r = {},
                          std::uint64_t seed = flyhash_projection::default_seed)
      : rules_(r), seed_(seed) {
    if (g.samples == 0) g.samples = std::min<std::uint32_t>(6, std::max<std::uint32_t>(g.dim, 1));
    if (g.tag == 0) g.tag = std::max<std::uint32_t>(1, static_cast<std::uint32_t>(std::lround(0.05 * g.units)));
    validate(g, r);
    hash_ = detail::flyhash(g.dim, g.units, g.samples, g.tag, seed);
    storage_ = byte_storage::allocate(plan_bytes(g.units));
    for (std::uint32_t u = 0; u < g.units; ++u) set_cell(u, 1.0, 0);
  }
  /// A filter for inputs of `dim` values with every other parameter at its default.
  static novelty_filter for_dimension(std::uint32_t dim) { return novelty_filter(novelty_geometry{dim}); }

  /// x's novelty now: the mean weight of its tag, in [0, 1].
  double novelty(std::span<const double> x) const { return novelty(x, scratch::of_this_thread(*this)); }
  /// Observes x: returns its novelty just before, then depresses its tag's weights and advances one step.
  double observe(std::span<const double> x) { return observe(x, scratch::of_this_thread(*this)); }
  /// Rows of `dim()` values each, in order (each observation changes what the next one reads). Writes each
  /// row's novelty before it was observed to `out` when it is not empty.
  void observe_many(std::span<const double> rows, std::span<double> out = {}) {
    const std::size_t n = row_count(rows, out);
    scratch& s = scratch::of_this_thread(*this);
    for (std::size_t i = 0; i < n; ++i) {
      const double v = observe(rows.subspan(i * dim(), dim()), s);
      if (!out.empty()) out[i] = v;
    }
  }
  void novelty_many(std::span<const double> rows, std::span<double> out) const {
    const std::size_t n = row_count(rows, out);
    scratch& s = scratch::of_this_thread(*this);
    for (std::size_t i = 0; i < n; ++i) out[i] = novelty(rows.subspan(i * dim(), dim()), s);
  }
  /// Lets `steps` steps pass without an observation: every weight recovers.
  void elapse(std::uint64_t steps) {
    if (steps > ~std::uint64_t{0} - clock_) throw invalid_argument("novelty filter: the clock would overflow");
    clock_ += steps;
  }

  /// x's tag: the units it reads and an observation of it depresses, increasing.
  std::vector<std::uint32_t> tag(std::span<const double> x) const {
    check_input(x);
    return hash_.tag(x);
  }
  /// Unit u's weight now.
  double weight(std::uint32_t u) const noexcept { return weight_at(u, clock_); }
  /// The expected novelty of an input unrelated to the n observed ones, before recovery:
  /// (1 − (1 − δ)k/m)^n (independent tags; see the header comment).
  double expected_novelty(double n) const noexcept {
    if (!(n > 0)) return 1.0;
    const double share = (1 - rules_.depression) * static_cast<double>(tag_size()) / units();
    return std::exp(n * std::log1p(-share));
  }
  /// The expected novelty of an input unrelated to everything observed so far (expected_novelty(observed)).
  double expected_unrelated_novelty() const noexcept { return expected_novelty(static_cast<double>(observed_)); }

  std::uint32_t dim() const noexcept { return hash_.dim(); }
  std::uint32_t units() const noexcept { return hash_.units(); }
  std::uint32_t samples() const noexcept { return hash_.samples(); }
  std::uint32_t tag_size() const noexcept { return hash_.tag_size(); }
  novelty_geometry geometry() const noexcept { return {dim(), units(), samples(), tag_size()}; }
  novelty_rules rules() const noexcept { return rules_; }
  /// Steps so far: observations and elapsed steps.
  std::uint64_t clock() const noexcept { return clock_; }
  std::uint64_t observed() const noexcept { return observed_; }
  std::uint64_t inserted() const noexcept { return observed_; }
  std::uint64_t seed() const noexcept { return seed_; }
  std::uint64_t bits() const noexcept { return std::uint64_t{units()} * unit.bits; }
  std::uint32_t hashes() const noexcept { return tag_size(); }
  /// The weights' memory and the projection's (m·s unit-input links).
  std::size_t size_in_bytes() const noexcept {
    return sizeof(*this) + storage_.size() + std::size_t{units()} * samples() * sizeof(std::uint32_t);
  }
  /// The mean weight over every unit now: 1 for a filter that has observed nothing (or forgotten it all).
  double mean_weight() const noexcept {
    double sum = 0;
    for (std::uint32_t u = 0; u < units(); ++u) sum += weight(u);
    return sum / units();
  }

  /// Back to its first state: every weight 1, the clock at 0.
  void clear() noexcept {
    for (std::uint32_t u = 0; u < units(); ++u) set_cell(u, 1.0, 0);
    clock_ = observed_ = 0;
  }

  friend bool operator==(const novelty_filter& a, const novelty_filter& b) noexcept {
    return a.geometry_equal(b) && a.clock_ == b.clock_ && a.observed_ == b.observed_ &&
           std::memcmp(a.storage_.data(), b.storage_.data(), a.storage_.size()) == 0;
  }

  // ---- serialization hooks (format.hpp) --------------------------------------------------------------
  // primary = m, secondary = k, layout = s, extra = {d, clock, δ's and ε's IEEE-754 bits, 0, 0}, inserted =
  // observations. Payload: m cells of 16 bytes: the weight when the unit was last depressed (a double in
  // [0, 1]) and the step its recovery started (a u64, at most the clock).

  filter_parameters parameters() const noexcept {
    filter_parameters p;
    p.primary = units();
    p.secondary = tag_size();
    p.layout = samples();
    p.extra = {
        dim(), clock_, std::bit_cast<std::uint64_t>(rules_.depression), std::bit_cast<std::uint64_t>(rules_.recovery),
        0,     0};
    return p;
  }
  template <class Fn>
  void for_each_payload_segment(Fn&& fn) const {
    fn(std::span<const std::byte>(storage_.data(), storage_.size()));
  }
  static std::uint64_t payload_size(const filter_parameters& p) {
    if (p.extra[4] != 0 || p.extra[5] != 0) throw invalid_argument("reserved header bytes are not zero");
    if (p.primary > max_units || p.extra[0] > max_dim)
      throw invalid_argument("novelty filter of " + std::to_string(p.primary) + " units over " +
                             std::to_string(p.extra[0]) + " inputs is larger than supported");
    validate(geometry_of(p), rules_of(p));
    return plan_bytes(p.primary);
  }
  static novelty_filter from_payload(const filter_parameters& p, std::uint64_t seed, std::uint64_t inserted,
                                     byte_storage payload) {
    // The cells are checked before the projection is drawn, which costs m·s draws and 4·m·s bytes.
    const std::uint64_t clock = p.extra[1];
    if (inserted > clock)
      throw format_error("novelty filter: " + std::to_string(inserted) + " observations but a clock of " +
                         std::to_string(clock) + " steps");
    for (std::uint64_t u = 0; u < p.primary; ++u) {
      double w;
      std::uint64_t t;
      std::memcpy(&w, payload.data() + 16 * u, 8);
      std::memcpy(&t, payload.data() + 16 * u + 8, 8);
      if (!(w >= 0.0 && w <= 1.0))
        throw format_error("novelty filter: unit " + std::to_string(u) + " has a weight outside [0, 1]");
      if (t > clock)
        throw format_error("novelty filter: unit " + std::to_string(u) + " was depressed after the clock's step");
    }
    novelty_filter f(geometry_of(p), rules_of(p), seed, std::move(payload));
    f.clock_ = clock;
    f.observed_ = inserted;
    return f;
  }

 private:
  // A tag's working memory, one per thread: a call allocating m doubles twice would cost more than the tag
  // itself once m passes the allocator's mapping threshold.
  struct scratch {
    std::vector<std::uint32_t> tag;
    std::vector<double> sums, selection;
    std::vector<std::uint64_t> ties;
    static scratch& of_this_thread(const novelty_filter& f) {
      thread_local scratch s;
      s.tag.resize(f.tag_size());
      return s;
    }
  };

  novelty_filter(novelty_geometry g, novelty_rules r, std::uint64_t seed, byte_storage payload)
      : rules_(r), seed_(seed), hash_(g.dim, g.units, g.samples, g.tag, seed), storage_(std::move(payload)) {}

  static novelty_geometry geometry_of(const filter_parameters& p) noexcept {
    return {static_cast<std::uint32_t>(p.extra[0]), static_cast<std::uint32_t>(p.primary), p.layout, p.secondary};
  }
  static novelty_rules rules_of(const filter_parameters& p) noexcept {
    return {std::bit_cast<double>(p.extra[2]), std::bit_cast<double>(p.extra[3])};
  }

  static void validate(const novelty_geometry& g, const novelty_rules& r) {
    const auto n = [](std::uint64_t v) { return std::to_string(v); };
    if (g.dim < 1 || g.dim > max_dim)
      throw invalid_argument("novelty filter: dim must be 1 to " + n(max_dim) + ", got " + n(g.dim));
    if (g.units < 1 || g.units > max_units)
      throw invalid_argument("novelty filter: units must be 1 to " + n(max_units) + ", got " + n(g.units));
    if (g.samples < 1 || g.samples > std::min(g.dim, max_samples))
      throw invalid_argument("novelty filter: samples (inputs a unit sums) must be 1 to min(dim, " + n(max_samples) +
                             ") = " + n(std::min(g.dim, max_samples)) + ", got " + n(g.samples));
    if (g.tag < 1 || g.tag > g.units)
      throw invalid_argument("novelty filter: the tag must be 1 to " + n(g.units) + " units, got " + n(g.tag));
    if (!(r.depression >= 0 && r.depression < 1))
      throw invalid_argument("novelty filter: depression must be in [0, 1), got " + std::to_string(r.depression));
    if (!(r.recovery >= 0 && r.recovery <= 1))
      throw invalid_argument("novelty filter: recovery must be in [0, 1], got " + std::to_string(r.recovery));
  }

  void check_input(std::span<const double> x) const {
    if (x.size() != dim())
      throw invalid_argument("novelty filter: an input has " + std::to_string(x.size()) + " values, the filter takes " +
                             std::to_string(dim()));
    for (std::size_t i = 0; i < x.size(); ++i)
      if (!std::isfinite(x[i]))
        throw invalid_argument("novelty filter: input value " + std::to_string(i) + " is not a finite number");
  }
  std::size_t row_count(std::span<const double> rows, std::span<double> out) const {
    if (rows.size() % dim() != 0)
      throw invalid_argument("novelty filter: " + std::to_string(rows.size()) + " values are not rows of " +
                             std::to_string(dim()));
    const std::size_t n = rows.size() / dim();
    if (!out.empty() && out.size() != n)
      throw invalid_argument("novelty filter: " + std::to_string(n) + " rows but room for " +
                             std::to_string(out.size()) + " answers");
    for (std::size_t i = 0; i < n; ++i) check_input(rows.subspan(i * dim(), dim()));
    return n;
  }

  double novelty(std::span<const double> x, scratch& s) const {
    check_input(x);
    hash_.tag(x, s.tag, s.sums, s.selection, s.ties);
    double sum = 0;
    for (const std::uint32_t u : s.tag) sum += weight_at(u, clock_);
    return sum / static_cast<double>(tag_size());
  }
  double observe(std::span<const double> x, scratch& s) {
    if (clock_ == ~std::uint64_t{0}) throw invalid_argument("novelty filter: the clock would overflow");
    const double before = novelty(x, s);
    // The tag's units are depressed at this step and start recovering at the next, as in the paper's rule,
    // where the units outside the tag recover at this step.
    for (const std::uint32_t u : s.tag) set_cell(u, rules_.depression * weight_at(u, clock_), clock_ + 1);
    ++clock_;
    ++observed_;
    return before;
  }

  // The weight is computed the same on every machine, so that files written from it are the same bytes
  // everywhere: (1 − ε)^t by squaring and multiplying (correctly rounded products in a fixed order, where a
  // library's pow may differ between platforms), then one fused multiply-add, which a compiler free to contract
  // 1 − (1 − w)·p into one would otherwise round differently on machines with FMA.
  static double power(double base, std::uint64_t n) noexcept {
    double result = 1.0;
    for (; n != 0; n >>= 1) {
      if ((n & 1) != 0) result *= base;
      base *= base;
    }
    return result;
  }
  double weight_at(std::uint32_t u, std::uint64_t step) const noexcept {
    const double w = stored_weight(u);
    const std::uint64_t since = stamp(u);
    if (w == 1.0 || step <= since || rules_.recovery == 0) return w;
    return std::fma(w - 1.0, power(1.0 - rules_.recovery, step - since), 1.0);
  }
  double stored_weight(std::uint32_t u) const noexcept {
    double w;
    std::memcpy(&w, storage_.data() + 16 * std::size_t{u}, 8);
    return w;
  }
  std::uint64_t stamp(std::uint32_t u) const noexcept {
    std::uint64_t t;
    std::memcpy(&t, storage_.data() + 16 * std::size_t{u} + 8, 8);
    return t;
  }
  void set_cell(std::uint32_t u, double w, std::uint64_t step) noexcept {
    std::memcpy(storage_.data() + 16 * std::size_t{u}, &w, 8);
    std::memcpy(storage_.data() + 16 * std::size_t{u} + 8, &step, 8);
  }
  bool geometry_equal(const novelty_filter& o) const noexcept {
    return dim() == o.dim() && units() == o.units() && samples() == o.samples() && tag_size() == o.tag_size() &&
           seed_ == o.seed_ &&
           std::bit_cast<std::uint64_t>(rules_.depression) == std::bit_cast<std::uint64_t>(o.rules_.depression) &&
           std::bit_cast<std::uint64_t>(rules_.recovery) == std::bit_cast<std::uint64_t>(o.rules_.recovery);
  }

  novelty_rules rules_;
  std::uint64_t seed_ = 0, clock_ = 0, observed_ = 0;
  detail::flyhash hash_;
  byte_storage storage_;  // m cells: weight (double), recovery start (u64)
};

static_assert(serializable_filter<novelty_filter>);

}  // namespace blume
