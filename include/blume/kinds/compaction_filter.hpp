// SPDX-License-Identifier: Apache-2.0
// Hash compaction (Stern & Dill, "Improved probabilistic verification by hash compaction", 1995; the
// comparison with Bloom filters in Dillinger & Manolios, "Bloom filters in probabilistic verification",
// FMCAD 2004): the visited set of a state search kept as a table of s slots of b bits. A key stores only a
// b-bit signature c ∈ [1, 2^b − 1] (0 marks an empty slot) at a position chosen by other bits of its hash;
// a new key whose probe walk meets its own signature is taken as seen (an omission, in a state search),
// a key whose walk ends before it is new.
//
// Choices made here:
//  * One 128-bit digest per key: the start slot from its low half (reduce(low, s)), the signature from its
//    high half (1 + reduce(high, 2^b − 1)), so position and signature are independent, as Stern & Dill
//    require. The slot count s is prime and a signature c walks with the step 1 + reduce(fmix64(c), s − 1):
//    every step generates the whole table, so a walk visits every slot before it repeats.
//  * Ordered hashing (Amble & Knuth 1974): along any walk, stored signatures are decreasing. A lookup of c
//    stops at the first slot holding c (seen) or a smaller value (new; empty is 0). An insert puts c in that
//    slot and carries the displaced value d onward along d's own walk, which it can do because d's step is a
//    function of d alone. The table is a function of the stored set (inserting in any order gives the same
//    bytes), lookups of new keys stop early, and a slot's value only ever grows, so a stored key is always
//    found. A carried d that meets another d is dropped: every walk that reached the slot d left continues
//    through larger values to the other d, so nothing answers "no" that answered "maybe" before.
//  * The model (derived for this table; docs/kinds.md). Keys with the same signature share one walk order,
//    so among them the table behaves like linear probing: a stored c sits at the end of a run of larger
//    values, where a new c is likely to land. Walk the l = 2^b − 1 signatures from the largest down, with β
//    the share of slots larger ones hold and λ = x/l keys of each signature after x keys per slot: the gap
//    before a slot not held by larger ones is geometric, so the c-keys hold (1 − β) − (1 − β)²e^−λ/(1 − βe^−λ)
//    of the slots, and a new c lands on one of them with probability 1 − (1 − β)²e^−λ/(1 − βe^−λ)². The rate
//    is the mean over c (math::compaction_after); above 4095 signatures its closed form at load α,
//        p(α) = (2/l)·[ψ(l/α + 1) − ψ(l/α − l + 1)] − α/l  ≈  (2·ln(1/(1 − α)) − α)/l,
//    ψ the digamma function. At b = 1 it is α, a bit array of one hash. A state search loses ∫ p over the
//    keys it inserts (expected_omissions). Plain uniform probing without order would omit α/((1 − α)·l).
//  * Load: inserts are refused (insert_result::full) above 95% of the slots; plans size for at most 90%.
//  * A walk is cut at compaction_probe_limit probes, which a table any sequence of inserts built does not
//    reach (a run that long has probability below 0.95^65536). A lookup cut there answers "maybe"; an insert
//    cut there undoes its swaps and answers full. Only a forged file gets there, and it cannot stall a call.
//  * No erase (a signature does not say which key left it), no merge (a stored signature does not say where
//    its walk began, so it cannot be re-inserted into another table soundly).
//
// Thread safety: const calls may run concurrently with each other; inserts need exclusive access.
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <ranges>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "blume/detail/bits.hpp"
#include "blume/detail/key_interface.hpp"
#include "blume/detail/pipeline.hpp"
#include "blume/detail/primes.hpp"
#include "blume/error.hpp"
#include "blume/hash.hpp"
#include "blume/io/parameters.hpp"
#include "blume/io/serialization.hpp"
#include "blume/kind.hpp"
#include "blume/kinds/scalable_bloom_filter.hpp"
#include "blume/plan.hpp"
#include "blume/storage.hpp"

namespace blume {

inline constexpr std::uint32_t compaction_max_signature_bits = 32;
inline constexpr double compaction_max_load = 0.95;
inline constexpr double compaction_plan_load = 0.90;
inline constexpr std::uint64_t compaction_probe_limit = std::uint64_t{1} << 16;

namespace math {

/// ψ(x) for x ≥ 1: the recurrence ψ(x) = ψ(x + 1) − 1/x up to 6, then the asymptotic series.
inline double digamma(double x) noexcept {
  double shift = 0;
  for (; x < 6; x += 1) shift -= 1 / x;
  const double f = 1 / (x * x);
  return shift + std::log(x) - 0.5 / x - f * (1.0 / 12 - f * (1.0 / 120 - f / 252));
}

/// Up to this many signatures (b ≤ 12) the model walks every signature value; above, twins are too rare to
/// matter and its closed form is within 0.5% of the walk (compaction_filter.hpp).
inline constexpr double compaction_exact_signatures = 4095;

/// A hash-compaction table after x keys per slot, with l = 2^b − 1 signatures: its load and the chance
/// that the next new key is taken as seen (the model in compaction_filter.hpp).
struct compaction_point {
  double load = 0;
  double fpr = 0;
};

inline compaction_point compaction_after(double keys_per_slot, double signatures) noexcept {
  const double x = std::max(keys_per_slot, 0.0), l = signatures;
  if (x == 0) return {};
  if (l > compaction_exact_signatures) {
    const double a = std::min(x, 1.0), v = l / a;
    return {a, std::clamp(2 / l * (digamma(v + 1) - digamma(v - l + 1)) - a / l, 0.0, 1.0)};
  }
  // From the largest signature down: β is the share of slots holding larger signatures; in the walk order
  // of signature c the gaps before slots not held by them are geometric, so a new c lands on a slot with
  // weight w = 1 + Geometric(β), and λ = x/l keys of each signature took a slot each with weight w.
  const double e = std::exp(-x / l);
  double beta = 0, taken = 0;
  for (double c = 0; c < l; c += 1) {
    const double q = 1 - beta * e, r = (1 - beta) * (1 - beta) * e / q;
    taken += 1 - r / q;    // P(a new c lands on a slot a c holds)
    beta += 1 - beta - r;  // + the share of slots the c keys hold
  }
  return {std::min(beta, 1.0), std::clamp(taken / l, 0.0, 1.0)};
}

/// The keys per slot at which the table reaches `load` (the inverse of compaction_after's load).
inline double compaction_keys_at_load(double load, double signatures) noexcept {
  if (load <= 0) return 0;
  if (signatures > compaction_exact_signatures) return std::min(load, 1.0);
  double lo = 0, hi = 1;
  while (compaction_after(hi, signatures).load < load && hi < 1e6) hi *= 2;
  for (int i = 0; i < 60; ++i) {
    const double mid = (lo + hi) / 2;
    (compaction_after(mid, signatures).load < load ? lo : hi) = mid;
  }
  return (lo + hi) / 2;
}

/// The chance a key new to a table at `load` is taken as seen.
inline double compaction_fpr(double load, double signatures) noexcept {
  return compaction_after(compaction_keys_at_load(load, signatures), signatures).fpr;
}

/// New keys taken as seen, per slot, while x keys per slot went in: ∫₀^x fpr (Simpson's rule, 128
/// intervals; the integrand is smooth).
inline double compaction_omissions_per_slot(double keys_per_slot, double signatures) noexcept {
  const double x = std::max(keys_per_slot, 0.0);
  if (x == 0) return 0;
  constexpr int intervals = 128;
  const double h = x / intervals;
  double sum = compaction_after(x, signatures).fpr;
  for (int i = 1; i < intervals; ++i) sum += (i % 2 ? 4 : 2) * compaction_after(i * h, signatures).fpr;
  return sum * h / 3;
}

}  // namespace math

namespace detail {

inline double compaction_signatures(std::uint32_t b) noexcept { return std::ldexp(1.0, static_cast<int>(b)) - 1; }

/// The most keys per slot, with the load at most compaction_plan_load, at which b-bit signatures keep the
/// rate ≤ fpr, or 0 when even a nearly empty table cannot (bisection: both grow with the keys).
inline double compaction_keys_for(double fpr, std::uint32_t b) noexcept {
  const double l = compaction_signatures(b);
  const auto fits = [&](double x) {
    const math::compaction_point p = math::compaction_after(x, l);
    return p.fpr <= fpr && p.load <= compaction_plan_load;
  };
  double lo = 0, hi = 2;
  for (int i = 0; i < 64; ++i) {
    const double mid = (lo + hi) / 2;
    (fits(mid) ? lo : hi) = mid;
  }
  return lo;
}

/// Compaction plans: for each signature width b, s = the smallest prime with n/s at or below the most keys
/// per slot that keep the rate ≤ fpr; the fewest bits s·b win.
template <kind_model K>
filter_plan plan_compaction(std::uint64_t items, double fpr) {
  check_plan_inputs(items, fpr);
  const double n = static_cast<double>(items);
  filter_plan best;
  for (std::uint32_t b = 1; b <= compaction_max_signature_bits; ++b) {
    const double per_slot = compaction_keys_for(fpr, b);
    if (per_slot < 1e-9) continue;
    const double slots = std::max(2.0, std::ceil(n / per_slot));
    if (slots * b > static_cast<double>(max_filter_bits)) continue;
    std::uint64_t s = prime_at_least(static_cast<std::uint64_t>(slots));
    while (K::model_fpr(n, static_cast<double>(s * b), b) > fpr) s = prime_at_least(s + 1);
    if (s * b > max_filter_bits) continue;
    if (best.bits == 0 || s * b < best.bits) best = make_plan<K>(items, s * b, b);
  }
  if (best.bits == 0) check_bits(std::numeric_limits<double>::infinity(), items, fpr);
  return best;
}

/// All of a budget: for each b, the largest prime s with s·b ≤ bits whose load after n keys is at most
/// compaction_plan_load; the lowest rate wins.
template <kind_model K>
filter_plan plan_compaction_for_bits(std::uint64_t items, std::uint64_t bits) {
  check_budget(items, bits);
  filter_plan best;
  for (std::uint32_t b = 1; b <= compaction_max_signature_bits; ++b) {
    const std::uint64_t s = prime_at_most(std::min(bits, max_filter_bits) / b);
    if (s < 2 ||
        math::compaction_after(static_cast<double>(items) / static_cast<double>(s), compaction_signatures(b)).load >
            compaction_plan_load)
      continue;
    const filter_plan p = make_plan<K>(items, s * b, b);
    if (best.bits == 0 || p.predicted_fpr < best.predicted_fpr) best = p;
  }
  if (best.bits == 0)
    throw invalid_argument(std::to_string(bits) + " bits cannot hold " + std::to_string(items) +
                           " keys in a hash-compaction table (1-bit slots at load at most " +
                           format_number(compaction_plan_load) + ")");
  return best;
}

}  // namespace detail

template <hasher Hasher = xxh3_hasher>
class compaction_filter : public detail::key_interface<compaction_filter<Hasher>> {
  using key_calls = detail::key_interface<compaction_filter>;

 public:
  using key_calls::contains;
  using key_calls::hash;
  using key_calls::insert;
  using key_calls::try_insert;
  using hasher_type = Hasher;
  static constexpr filter_kind kind{26};
  static constexpr std::string_view name = "compaction";
  static constexpr kind_input input = kind_input::keys;
  static constexpr bool is_static = false;
  static constexpr std::string_view primary_field = "slots";
  static constexpr std::string_view secondary_field = "signature bits";
  static constexpr std::string_view merge_refusal =
      "a stored signature does not say where its walk began, so it cannot be re-inserted into another table: insert "
      "both key sets into one table instead";

  // The planner's model: m = s·b bits in 64-bit words, k = b.
  static std::uint64_t plan_bytes(std::uint64_t bits) noexcept { return detail::word_bytes(bits); }
  static double model_fpr(double n, double m, double k) noexcept {
    return math::compaction_after(n / (m / k), detail::compaction_signatures(static_cast<std::uint32_t>(k))).fpr;
  }
  static filter_plan plan(std::uint64_t items, double fpr) {
    return detail::plan_compaction<compaction_filter>(items, fpr);
  }
  static filter_plan plan_for_bits(std::uint64_t items, std::uint64_t bits) {
    return detail::plan_compaction_for_bits<compaction_filter>(items, bits);
  }

  /// A table for `capacity` keys at rate `fpr`, sized by plan().
  compaction_filter(std::uint64_t capacity, double fpr, std::uint64_t seed = Hasher::default_seed)
      : compaction_filter(plan(capacity, fpr), seed) {}

  /// A table with the geometry of a compaction plan: s = bits / hashes slots of b = hashes bits.
  explicit compaction_filter(const filter_plan& plan, std::uint64_t seed = Hasher::default_seed)
      : compaction_filter(slots_of(plan), plan.hashes, Hasher(seed)) {}

  /// A table of `slots` slots (a prime) of `signature_bits` bits.
  static compaction_filter with_slots(std::uint64_t slots, std::uint32_t signature_bits,
                                      std::uint64_t seed = Hasher::default_seed) {
    return compaction_filter(slots, signature_bits, Hasher(seed));
  }

  /// Throws invalid_argument naming the bad value unless s is a prime, 1 ≤ b ≤ 32 and s·b ≤ 2^40.
  static void check_geometry(std::uint64_t s, std::uint32_t b) {
    if (b == 0 || b > compaction_max_signature_bits)
      throw invalid_argument("compaction filter: signature bits must be 1 to " +
                             std::to_string(compaction_max_signature_bits) + ", got " + std::to_string(b));
    if (s > max_filter_bits / b)
      throw invalid_argument("compaction filter: " + std::to_string(s) + " slots of " + std::to_string(b) +
                             " bits exceed the maximum of 2^40 bits (128 GiB)");
    if (!detail::is_prime(s))
      throw invalid_argument("compaction filter: the slot count must be a prime, got " + std::to_string(s) +
                             " (the nearest above is " + std::to_string(detail::prime_at_least(s)) + ")");
  }

  // ---- serialization hooks (format.hpp) --------------------------------------------------------------
  // bits = s, hashes = b, layout 0, extra all zero; `inserted` counts the keys answered "added". Payload:
  // ⌈s·b/64⌉ u64 words, slot i at bits [i·b, i·b + b) of the array, bits past the last slot zero.

  filter_parameters parameters() const noexcept {
    filter_parameters p;
    p.primary = slots_;
    p.secondary = b_;
    return p;
  }
  template <class Fn>
  void for_each_payload_segment(Fn&& fn) const {
    fn(std::span<const std::byte>(storage_.data(), storage_.size()));
  }
  static std::uint64_t payload_size(const filter_parameters& p) {
    if (p.layout != 0) throw invalid_argument("compaction filter: layout must be 0, got " + std::to_string(p.layout));
    for (const std::uint64_t x : p.extra)
      if (x != 0) throw invalid_argument("reserved header bytes are not zero");
    check_geometry(p.primary, p.secondary);
    return detail::word_bytes(p.primary * p.secondary);
  }
  /// Adopts `payload` (zero-copy when it is a file mapping) after checking what a reader can: no bits past
  /// the last slot, at most 95% of the slots used (so every walk meets an empty slot), and no fewer keys
  /// added than slots used.
  static compaction_filter from_payload(const filter_parameters& p, std::uint64_t seed, std::uint64_t inserted,
                                        byte_storage payload) {
    try {
      (void)payload_size(p);
    } catch (const invalid_argument& e) {
      throw format_error(std::string("invalid parameters: ") + e.what());
    }
    compaction_filter f(p.primary, p.secondary, Hasher(seed), std::move(payload));
    const std::uint64_t used_bits = f.slots_ * f.b_;
    if (used_bits % 64 != 0 && f.words()[used_bits / 64] >> (used_bits % 64) != 0)
      throw format_error("compaction table has bits set past its last slot");
    std::uint64_t occupied = 0;
    for (std::uint64_t i = 0; i < f.slots_; ++i) occupied += f.cell(i) != 0;
    if (occupied > f.max_entries_)
      throw format_error("compaction table uses " + std::to_string(occupied) + " slots, more than its capacity of " +
                         std::to_string(f.max_entries_));
    if (inserted < occupied)
      throw format_error("the header announces " + std::to_string(inserted) + " keys but the table holds " +
                         std::to_string(occupied) + " signatures");
    f.occupied_ = occupied;
    f.added_ = inserted;
    return f;
  }

  // ---- single keys -----------------------------------------------------------------------------------

  /// added: the key was new and is stored; present: its walk met its signature (it was inserted before, or
  /// it is omitted: a new key taken as seen, rate predicted_fpr()); full: 95% of the slots are used, and
  /// nothing changed.
  insert_result try_insert(const digest& d) {
    std::uint64_t c = signature(d), j = start(d), step = step_of(c), budget = compaction_probe_limit;
    std::uint64_t v = 0;
    for (;; advance(j, step)) {
      if (budget-- == 0) return insert_result::full;
      v = cell(j);
      if (v == c) return insert_result::present;
      if (v < c) break;
    }
    if (occupied_ >= max_entries_) return insert_result::full;
    undo_.clear();
    for (;;) {
      // c goes where the walk stopped; the smaller value found there moves on along its own walk.
      set_cell(j, c);
      undo_.emplace_back(j, v);
      if (v == 0) {
        ++occupied_;
        break;
      }
      c = v;
      step = step_of(c);
      for (;;) {
        advance(j, step);
        if (budget-- == 0) {
          for (auto it = undo_.rbegin(); it != undo_.rend(); ++it) set_cell(it->first, it->second);
          return insert_result::full;
        }
        v = cell(j);
        if (v <= c) break;
      }
      if (v == c) break;  // the carried signature meets its twin: dropped (see the header comment)
    }
    // Saturating: a file may announce any count up to 2^64 − 1, and a wrapped count would fall below the
    // signatures the table holds, which a reader refuses.
    if (added_ != std::numeric_limits<std::uint64_t>::max()) ++added_;
    return insert_result::added;
  }

  /// Inserts the key; false only when the table had no room for it (try_insert says whether it was new).
  bool insert(const digest& d) { return try_insert(d) != insert_result::full; }

  /// False means certainly absent; true means inserted, or a new key taken as seen (rate: predicted_fpr()).
  bool contains(const digest& d) const noexcept {
    const std::uint64_t c = signature(d), step = step_of(c);
    std::uint64_t j = start(d);
    for (std::uint64_t probes = 0; probes < compaction_probe_limit; ++probes, advance(j, step)) {
      const std::uint64_t v = cell(j);
      if (v == c) return true;
      if (v < c) return false;
    }
    return true;  // a forged table: "maybe" keeps every stored key found
  }

  // ---- bulk calls: the start slot of each key is prefetched a batch ahead -------------------------------

  /// Inserts every key; returns how many the table took or already held (fewer than the keys once full).
  template <std::ranges::input_range R>
  std::size_t insert_many(const R& keys) {
    std::size_t stored = 0;
    pipelined(
        keys, [&](const digest& d) { detail::prefetch_write(slot_word(start(d))); },
        [&](std::span<const digest> batch) {
          for (const digest& d : batch) stored += insert(d);
        });
    return stored;
  }
  template <std::ranges::input_range R, class Out>
    requires std::output_iterator<Out, bool>
  std::size_t contains_many(const R& keys, Out out) const {
    std::size_t hits = 0;
    pipelined(
        keys, [&](const digest& d) { detail::prefetch_read(slot_word(start(d))); },
        [&](std::span<const digest> batch) {
          for (const digest& d : batch) {
            const bool hit = contains(d);
            hits += hit;
            *out = hit;
            ++out;
          }
        });
    return hits;
  }
  template <std::ranges::input_range R>
  std::size_t count_contained(const R& keys) const noexcept {
    std::size_t hits = 0;
    pipelined(
        keys, [&](const digest& d) { detail::prefetch_read(slot_word(start(d))); },
        [&](std::span<const digest> batch) {
          for (const digest& d : batch) hits += contains(d);
        });
    return hits;
  }

  void clear() noexcept {
    storage_.zero();
    occupied_ = added_ = 0;
  }

  // ---- estimates and geometry ------------------------------------------------------------------------

  /// Keys answered "added" (exact), plus the model's expected omissions: new keys taken as seen.
  double estimated_count() const noexcept { return static_cast<double>(added_) + expected_omissions(); }
  /// The expected number of new keys taken as seen while the table filled to its load now.
  double expected_omissions() const noexcept {
    const double l = signatures();
    return static_cast<double>(slots_) *
           math::compaction_omissions_per_slot(math::compaction_keys_at_load(load_factor(), l), l);
  }
  /// Keys answered "added"; what the file header records as `inserted`.
  std::uint64_t inserted() const noexcept { return added_; }
  /// Slots holding a signature (at most inserted(): twins met while carrying are stored once).
  std::uint64_t occupied() const noexcept { return occupied_; }
  /// The most slots inserts fill: 95% of them, never all.
  std::uint64_t capacity() const noexcept { return max_entries_; }
  double load_factor() const noexcept { return static_cast<double>(occupied_) / static_cast<double>(slots_); }

  /// The chance now that a key never inserted answers "maybe" (and, in a state search, that a new state is
  /// taken as seen): p(α) at the table's load.
  double predicted_fpr() const noexcept { return math::compaction_fpr(load_factor(), signatures()); }
  double predicted_fpr_at_capacity() const noexcept { return predicted_fpr_at(static_cast<double>(max_entries_)); }
  /// The rate after `items` distinct keys.
  double predicted_fpr_at(double items) const noexcept {
    return math::compaction_after(items / static_cast<double>(slots_), signatures()).fpr;
  }

  std::uint64_t slots() const noexcept { return slots_; }
  std::uint32_t signature_bits() const noexcept { return b_; }
  /// Bits of the table: s·b, the `bits` of a compaction filter_plan.
  std::uint64_t bits() const noexcept { return slots_ * b_; }
  std::uint32_t hashes() const noexcept { return b_; }
  std::uint64_t seed() const noexcept { return hasher_.seed(); }
  const Hasher& hasher() const noexcept { return hasher_; }
  std::size_t size_in_bytes() const noexcept {
    return storage_.size() + sizeof(*this) + undo_.capacity() * sizeof(undo_[0]);
  }

  /// The slot a digest's walk starts at, its signature, and slot i's value (0: empty): the table as
  /// docs/format.md describes it.
  std::uint64_t start(const digest& d) const noexcept { return reduce(d.low, slots_); }
  std::uint64_t signature(const digest& d) const noexcept { return 1 + reduce(d.high, mask_); }
  std::uint64_t step_of(std::uint64_t c) const noexcept { return 1 + reduce(detail::murmur3_fmix64(c), slots_ - 1); }
  std::uint64_t cell(std::uint64_t i) const noexcept {
    const std::uint64_t bit = i * b_;
    const std::uint64_t* w = words() + bit / 64;
    const unsigned offset = bit % 64;
    std::uint64_t v = w[0] >> offset;
    if (offset + b_ > 64) v |= w[1] << (64 - offset);
    return v & mask_;
  }

  friend bool operator==(const compaction_filter& a, const compaction_filter& b) noexcept {
    if (a.slots_ != b.slots_ || a.b_ != b.b_ || a.seed() != b.seed() || a.added_ != b.added_) return false;
    return std::equal(a.storage_.data(), a.storage_.data() + a.storage_.size(), b.storage_.data());
  }

 private:
  static std::uint64_t max_entries_for(std::uint64_t s) noexcept { return std::min(s - 1, s * 19 / 20); }
  static_assert(compaction_max_load == 0.95, "max_entries_for computes 95% as 19/20");

  static std::uint64_t slots_of(const filter_plan& plan) {
    if (plan.kind != kind)
      throw invalid_argument("compaction filter: the plan is for kind id " +
                             std::to_string(static_cast<int>(plan.kind)));
    if (plan.hashes == 0 || plan.bits % plan.hashes != 0)
      throw invalid_argument("compaction filter: plan bits " + std::to_string(plan.bits) +
                             " are not s·b with b = " + std::to_string(plan.hashes));
    return plan.bits / plan.hashes;
  }
  static std::uint64_t checked_storage_bytes(std::uint64_t s, std::uint32_t b) {
    check_geometry(s, b);  // before anything is computed from s or allocated
    return detail::word_bytes(s * b);
  }

  compaction_filter(std::uint64_t s, std::uint32_t b, const Hasher& h)
      : compaction_filter(s, b, h, byte_storage::allocate(checked_storage_bytes(s, b))) {}
  compaction_filter(std::uint64_t s, std::uint32_t b, const Hasher& h, byte_storage storage)
      : b_(b), slots_(s), mask_((std::uint64_t{1} << b) - 1), max_entries_(max_entries_for(s)), hasher_(h),
        storage_(std::move(storage)) {}

  double signatures() const noexcept { return static_cast<double>(mask_); }
  void advance(std::uint64_t& j, std::uint64_t step) const noexcept {
    j += step;
    if (j >= slots_) j -= slots_;
  }
  std::uint64_t* words() noexcept { return reinterpret_cast<std::uint64_t*>(storage_.data()); }
  const std::uint64_t* words() const noexcept { return reinterpret_cast<const std::uint64_t*>(storage_.data()); }
  const std::uint64_t* slot_word(std::uint64_t i) const noexcept { return words() + i * b_ / 64; }
  void set_cell(std::uint64_t i, std::uint64_t v) noexcept {
    const std::uint64_t bit = i * b_;
    std::uint64_t* w = words() + bit / 64;
    const unsigned offset = bit % 64;
    w[0] = (w[0] & ~(mask_ << offset)) | (v << offset);
    if (offset + b_ > 64) {
      const unsigned high = offset + b_ - 64;
      w[1] = (w[1] & ~((std::uint64_t{1} << high) - 1)) | (v >> (64 - offset));
    }
  }

  template <class R, class Prefetch, class Use>
  void pipelined(const R& items, Prefetch&& prefetch, Use&& use) const {
    detail::pipelined(
        items, [this](const auto& k) { return hash(k); }, prefetch, use);
  }

  std::uint32_t b_;
  std::uint64_t slots_;
  std::uint64_t mask_;  // 2^b − 1: the largest signature, and l, the number of them
  std::uint64_t max_entries_;
  std::uint64_t occupied_ = 0;
  std::uint64_t added_ = 0;
  Hasher hasher_;
  byte_storage storage_;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> undo_;  // an insert's (slot, old value) swaps, reused
};

static_assert(serializable_filter<compaction_filter<>>);

}  // namespace blume
