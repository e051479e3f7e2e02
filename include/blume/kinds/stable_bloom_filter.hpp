// SPDX-License-Identifier: Apache-2.0
// The stable Bloom filter (Deng & Rafiei 2006) for duplicate detection on endless streams: cells of d bits
// instead of bits; every insert first decrements P randomly chosen cells, then sets the key's k cells to
// Max = 2^d − 1. Old keys fade, so the fraction of zero cells, and with it the false-positive rate,
// converges to a fixed value however long the stream (math::stable_zero_fraction, math::stable_fpr).
// The price: a key inserted long enough ago may have faded, so false negatives are possible by design;
// the more recent the key, the less likely. Measured rates are in docs/benchmarks.md and the tests.
//
// Thread safety: const calls may run concurrently; insert and everything else need exclusive access.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "blume/detail/bits.hpp"
#include "blume/detail/geometry.hpp"
#include "blume/detail/key_interface.hpp"
#include "blume/detail/packed_cells.hpp"
#include "blume/detail/probe_ops.hpp"
#include "blume/error.hpp"
#include "blume/hash.hpp"
#include "blume/io/parameters.hpp"
#include "blume/io/serialization.hpp"
#include "blume/plan.hpp"
#include "blume/storage.hpp"

namespace blume {

template <unsigned CellBits = 2, hasher Hasher = xxh3_hasher>
class stable_bloom_filter : public detail::key_interface<stable_bloom_filter<CellBits, Hasher>> {
  using cell_array = detail::packed_cells<CellBits>;
  using key_calls = detail::key_interface<stable_bloom_filter>;

 public:
  using key_calls::contains;
  using key_calls::hash;
  using key_calls::insert;
  using hasher_type = Hasher;
  static constexpr filter_kind kind{9};
  static constexpr std::string_view name = "stable";
  static constexpr kind_input input = kind_input::keys;
  static constexpr bool is_static = false;
  /// No merge(): a union of two decayed states has no meaning for either stream.
  static constexpr std::string_view merge_refusal = "their cells decay independently, so a union means nothing";
  /// Old keys fade by design: contains() == false means "not seen recently" (a false negative for a key
  /// inserted long enough ago), never "never inserted".
  static constexpr bool forgets = true;
  /// The largest value a cell can hold, and the default Max.
  static constexpr std::uint64_t cell_max = cell_array::max_value;
  static constexpr size_unit unit{"cells", "cell", CellBits};

  /// m cells, k probes, P decrements per insert; cells are set to `max_value` (Max, in [1, 2^d − 1]).
  stable_bloom_filter(std::uint64_t cell_count, std::uint32_t hashes, std::uint64_t decrements,
                      std::uint64_t seed = Hasher::default_seed, std::uint64_t max_value = cell_max)
      : cells_(cell_count), hashes_(hashes), decrements_(decrements), max_(max_value), hasher_(seed), rng_(seed) {
    validate(cell_count, hashes, decrements, max_value);
    storage_ = byte_storage::allocate(cell_array::bytes_for(cell_count));
  }

  // The planner's model: the classic geometry in cells (m cells of CellBits bits, k probes), and the rate
  // of n keys before any cell decays; for_rate then picks P for the rate on an endless stream.
  static std::uint64_t plan_bytes(std::uint64_t cell_count) noexcept {
    return detail::word_bytes(cell_count * CellBits);
  }
  static double model_fpr(double n, double m, double k) noexcept { return math::bloom_fpr(n, m, k); }
  static filter_plan plan(std::uint64_t items, double fpr) {
    return detail::plan_classic<stable_bloom_filter>(items, fpr);
  }
  static filter_plan plan_for_bits(std::uint64_t items, std::uint64_t bits) {
    return detail::plan_classic_for_bits<stable_bloom_filter>(items, bits);
  }

  /// A filter for a stream at rate `fpr`: plan()'s cells and k, and the P that holds `fpr` on an endless
  /// stream (for_rate).
  static stable_bloom_filter for_capacity(std::uint64_t items, double fpr, std::uint64_t seed = Hasher::default_seed) {
    const filter_plan p = plan(items, fpr);
    return for_rate(p.bits, p.hashes, fpr, seed);
  }

  /// m cells and k probes, with the P that makes the stable false-positive rate `fpr`.
  static stable_bloom_filter for_rate(std::uint64_t cell_count, std::uint32_t hashes, double fpr,
                                      std::uint64_t seed = Hasher::default_seed, std::uint64_t max_value = cell_max) {
    detail::check_plan_inputs(1, fpr);
    validate(cell_count, hashes, 1, max_value);
    const double p =
        math::stable_decrements_for(static_cast<double>(cell_count), hashes, static_cast<double>(max_value), fpr);
    if (!(p >= 0.5 && p <= static_cast<double>(cell_count)))
      throw invalid_argument("stable filter: no whole number of decrements gives rate " + detail::format_number(fpr) +
                             " with " + std::to_string(cell_count) + " cells and k = " + std::to_string(hashes));
    return stable_bloom_filter(cell_count, hashes, static_cast<std::uint64_t>(std::llround(p)), seed, max_value);
  }

  /// Records a key. Returns true if the filter had not seen it (one of its cells was zero).
  bool insert(const digest& d) noexcept {
    const bool fresh = !contains(d);
    std::uint64_t* w = words();
    // The P cells are random, so each decrement is a cache miss of its own. Drawing a chunk of them and
    // prefetching all before touching any lets those misses overlap instead of following one another;
    // the draws and the decrements keep their order, so the result is the same cell for cell.
    constexpr std::uint64_t chunk = 32;
    std::uint64_t drawn[chunk];
    for (std::uint64_t done = 0; done < decrements_; done += chunk) {
      const std::uint64_t n = std::min(chunk, decrements_ - done);
      for (std::uint64_t i = 0; i < n; ++i) {
        drawn[i] = reduce(next_random(), cells_);
        detail::prefetch_write(w + drawn[i] / cell_array::per_word);
      }
      for (std::uint64_t i = 0; i < n; ++i) {
        const std::uint64_t v = cell_array::get(w, drawn[i]);
        if (v != 0) cell_array::set(w, drawn[i], v - 1);
      }
    }
    detail::double_hashing_probes(d, hashes_, cells_, [&](std::uint64_t cell) {
      cell_array::set(w, cell, max_);
      return true;
    });
    ++inserted_;
    return fresh;
  }

  /// True: seen recently (or a false positive); false: not seen recently (or it faded: a false negative).
  bool contains(const digest& d) const noexcept {
    return detail::double_hashing_probes(d, hashes_, cells_,
                                         [&](std::uint64_t cell) { return cell_array::get(words(), cell) != 0; });
  }

  template <std::ranges::input_range R>
  void insert_many(const R& keys) noexcept {
    for (auto&& k : keys) insert(k);
  }

  void clear() noexcept {
    storage_.zero();
    inserted_ = 0;
  }

  /// The fraction of zero cells now, and its limit on an endless stream.
  double zero_fraction() const noexcept {
    std::uint64_t nonzero = 0;
    const std::uint64_t* w = words();
    for (std::size_t i = 0; i < storage_.size() / 8; ++i) nonzero += cell_array::nonzero(w[i]);
    return 1.0 - static_cast<double>(nonzero) / static_cast<double>(cells_);
  }
  double stable_zero_fraction() const noexcept {
    return math::stable_zero_fraction(static_cast<double>(cells_), hashes_, static_cast<double>(decrements_),
                                      static_cast<double>(max_));
  }
  /// The rate now (an absent key's k cells all non-zero) and its limit.
  double predicted_fpr() const noexcept { return std::pow(1.0 - zero_fraction(), static_cast<double>(hashes_)); }
  double stable_fpr() const noexcept {
    return math::stable_fpr(static_cast<double>(cells_), hashes_, static_cast<double>(decrements_),
                            static_cast<double>(max_));
  }
  /// However long the stream: the limit.
  double predicted_fpr_at_capacity() const noexcept { return stable_fpr(); }

  /// The model probability that a key inserted `age` inserts ago is still found (math::stable_recall);
  /// one minus it is the false-negative rate for keys of that age.
  double recall_after(std::uint64_t age) const noexcept {
    return math::stable_recall(static_cast<double>(cells_), hashes_, static_cast<double>(decrements_),
                               static_cast<double>(max_), static_cast<double>(age));
  }

  /// The model age (inserts since its own) at which half of the keys are forgotten; none when nothing
  /// fades (no decrements).
  std::optional<std::uint64_t> half_forgotten_after() const noexcept {
    constexpr std::uint64_t never = std::uint64_t{1} << 62;
    std::uint64_t lo = 0, hi = never;  // recall_after falls with age: bisect for 1/2
    while (hi - lo > 1) {
      const std::uint64_t mid = lo + (hi - lo) / 2;
      (recall_after(mid) >= 0.5 ? lo : hi) = mid;
    }
    if (hi == never) return std::nullopt;
    return lo;
  }

  std::uint64_t cells() const noexcept { return cells_; }
  std::uint32_t hashes() const noexcept { return hashes_; }
  std::uint64_t decrements() const noexcept { return decrements_; }
  std::uint64_t max_value() const noexcept { return max_; }
  std::uint64_t seed() const noexcept { return hasher_.seed(); }
  const Hasher& hasher() const noexcept { return hasher_; }
  std::uint64_t inserted() const noexcept { return inserted_; }
  std::size_t size_in_bytes() const noexcept { return storage_.size() + sizeof(*this); }

  friend bool operator==(const stable_bloom_filter& a, const stable_bloom_filter& b) noexcept {
    return a.cells_ == b.cells_ && a.hashes_ == b.hashes_ && a.decrements_ == b.decrements_ && a.max_ == b.max_ &&
           a.seed() == b.seed() && a.rng_ == b.rng_ &&
           std::memcmp(a.storage_.data(), b.storage_.data(), a.storage_.size()) == 0;
  }

  // ---- serialization hooks (format.hpp): bits = cells, hashes = k, layout = cell bits,
  //      extra = {P, random state, Max, 0, 0, 0}; payload = the packed cells (none above Max).
  filter_parameters parameters() const noexcept {
    filter_parameters p;
    p.primary = cells_;
    p.secondary = hashes_;
    p.layout = CellBits;
    p.extra = {decrements_, rng_, max_, 0, 0, 0};
    return p;
  }
  template <class Fn>
  void for_each_payload_segment(Fn&& fn) const {
    fn(std::span<const std::byte>(storage_.data(), storage_.size()));
  }
  static std::uint64_t payload_size(const filter_parameters& p) {
    if (p.layout != CellBits)
      throw invalid_argument("stable filter: cell width " + std::to_string(p.layout) + " is not " +
                             std::to_string(CellBits));
    for (std::size_t i = 3; i < p.extra.size(); ++i)
      if (p.extra[i] != 0) throw invalid_argument("reserved header bytes are not zero");
    validate(p.primary, p.secondary, p.extra[0], p.extra[2]);
    return cell_array::bytes_for(p.primary);
  }
  static stable_bloom_filter from_payload(const filter_parameters& p, std::uint64_t seed, std::uint64_t inserted,
                                          byte_storage payload) {
    const std::uint64_t used = p.primary * CellBits;
    for (std::uint64_t bit = used; bit < payload.size() * 8; ++bit)
      if ((static_cast<unsigned>(payload.data()[bit / 8]) >> (bit % 8)) & 1u)
        throw format_error("padding bits past bit " + std::to_string(used) + " are set");
    for (std::uint64_t i = 0; i < p.primary; ++i)
      if (cell_array::get(reinterpret_cast<const std::uint64_t*>(payload.data()), i) > p.extra[2])
        throw format_error("cell " + std::to_string(i) + " holds more than Max = " + std::to_string(p.extra[2]));
    stable_bloom_filter f(p, seed, std::move(payload));
    f.rng_ = p.extra[1];
    f.inserted_ = inserted;
    return f;
  }

 private:
  stable_bloom_filter(const filter_parameters& p, std::uint64_t seed, byte_storage storage)
      : cells_(p.primary), hashes_(p.secondary), decrements_(p.extra[0]), max_(p.extra[2]), hasher_(seed), rng_(seed),
        storage_(std::move(storage)) {}

  static void validate(std::uint64_t cell_count, std::uint32_t hashes, std::uint64_t decrements,
                       std::uint64_t max_value) {
    if (max_value == 0 || max_value > cell_max)
      throw invalid_argument("stable filter: Max must be in [1, " + std::to_string(cell_max) + "] for " +
                             std::to_string(CellBits) + "-bit cells, got " + std::to_string(max_value));
    detail::check_geometry(name, cell_count, hashes, 1);
    if (cell_count > max_filter_bits / CellBits)
      throw invalid_argument("stable filter: " + std::to_string(cell_count) + " cells exceed the maximum of 2^40 bits");
    if (hashes >= cell_count)
      throw invalid_argument("stable filter: k = " + std::to_string(hashes) + " needs more than " +
                             std::to_string(cell_count) + " cells");
    if (decrements == 0 || decrements > cell_count)
      throw invalid_argument("stable filter: decrements per insert must be in [1, " + std::to_string(cell_count) +
                             "], got " + std::to_string(decrements));
  }

  std::uint64_t next_random() noexcept {  // splitmix64: fast, and deterministic for a given seed
    return detail::splitmix64_mix(rng_ += 0x9e3779b97f4a7c15ULL);
  }

  std::uint64_t* words() noexcept { return reinterpret_cast<std::uint64_t*>(storage_.data()); }
  const std::uint64_t* words() const noexcept { return reinterpret_cast<const std::uint64_t*>(storage_.data()); }

  std::uint64_t cells_;
  std::uint32_t hashes_;
  std::uint64_t decrements_;
  std::uint64_t max_;
  Hasher hasher_;
  std::uint64_t rng_;
  byte_storage storage_;
  std::uint64_t inserted_ = 0;
};

static_assert(serializable_filter<stable_bloom_filter<>>);
static_assert(!can_merge<stable_bloom_filter<>>);

}  // namespace blume
