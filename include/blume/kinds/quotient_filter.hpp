// SPDX-License-Identifier: Apache-2.0
// The quotient filter (Bender, Farach-Colton, Johnson, Kraner, Kuszmaul, Medjedovic, Montes, Shetty,
// Spillane & Zadok 2012, "Don't thrash: how to cache your hash on flash") in the rank-and-select layout of
// Pandey, Bender, Johnson & Patro (2017, "A general-purpose counting filter: making every bit count"). With s
// slots of r-bit remainders, a key's fingerprint F ∈ [0, s·2^r) splits into a quotient F >> r (its canonical
// slot) and a remainder F mod 2^r (what a slot stores). Remainders with the same quotient form a run, stored
// contiguously and sorted; runs are stored in quotient order, each starting at max(its quotient, the end of
// the previous run + 1), so a run may be pushed right by earlier ones.
//
// Layout (docs/format.md, layout 1): blocks of 64 slots. Block b holds the remainders of slots 64b … 64b + 63
// and three fields that make the runs decodable without walking them:
//   occupieds  bit j: quotient 64b + j has a run;
//   runends    bit j: slot 64b + j holds the last remainder of a run;
//   offset     O_b = how many slots from 64b on hold runs of quotients below 64b, stored as min(O_b, 255).
// Quotient q's run is then found by rank and select: it is the t-th run of its block, t = the occupieds set
// at or below q in the block, so it ends at the t-th runend at or after slot 64b + O_b, and starts after the
// (t−1)-th (or at 64b + O_b) but not before q. A lookup reads one block's metadata and the slots of one run:
// one or two cache lines, where the first layout walked clusters slot by slot. 2.125 bits a slot of metadata
// instead of 3. An offset of 255 means "255 or more": the true value is then recomputed from the last block
// before it whose offset is exact (block 0's always is), which only tables with runs pushed 255 slots
// happen (never at the loads insert allows, with random fingerprints).
//
// Choices made here:
//  * Any slot count s ≥ 2, not only 2^q, so memory follows the plan. Fingerprints: the key is hashed once
//    (hash_key); F = reduce(h, s·2^r) = ⌊h·s·2^r / 2^64⌋ for the digest's low half h (Lemire's
//    multiply-high by s·2^r; h itself when s·2^r = 2^64). The table yields every F back, so a resize to
//    (2s, r − 1) keeps the range s·2^r, the keys keep their F and re-splitting needs no keys (§4 of Bender
//    et al.); a merge is a merge of the sorted F. For s = 2^q, F is the top q + r bits of h.
//  * No wrap-around: quotient_overflow_blocks blocks (256 slots) past the last quotient take the runs
//    pushed beyond it. insert refuses (returns false, changes nothing) when a run would be pushed past them:
//    with random fingerprints at 95% load the chance is about e^−26 per filter; inserting one key hundreds
//    of times when its quotient is among the last slots can do it.
//  * Multiset: inserting a fingerprint again stores another copy, so erase of one copy keeps the other and
//    erase is sound for every key that was inserted. count() reports the copies.
//  * Erasing a key never inserted: refused, changing nothing, when its fingerprint is not stored. A false
//    positive's fingerprint is an inserted key's, and erasing it removes that key's copy, so the key answers
//    "no" from then on (a false negative). At 100,000 keys planned for 1% (0.70% at that load), erasing
//    100,000 keys never inserted made about 690 inserted keys (0.69%) answer "no" (tests/erase_test.cpp).
//    Erase only keys that were inserted.
//  * Canonical layout: runs are sorted, so the table is a function of the stored multiset alone (an insert
//    shifts the slots from its position to the first empty slot right by one; an erase shifts back the
//    slots after it up to an empty slot or a run in its own quotient's slot).
//  * Load: insert refuses above quotient_max_load = 95% of the quotient slots. plan_for sizes for 90%
//    (quotient_plan_load) in whole blocks.
//  * Limits: s ≥ 2, 1 ≤ r ≤ 32 (quotient_max_remainder_bits), s·2^r ≤ 2^64 (F fits in 64 bits), and the
//    table ((⌈s/64⌉ + 4)·(64r + 136) bits) at most 2^40 bits.
//
// Thread safety: const calls (contains, count, contains_many, count_contained, estimates, copying, saving)
// may run concurrently with each other; every other call (insert, insert_many, erase, clear, resize, merge,
// assignment) needs exclusive access: an insert moves remainders that a concurrent lookup could be reading.
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <limits>
#include <optional>
#include <ranges>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "blume/detail/bits.hpp"
#include "blume/detail/key_interface.hpp"
#include "blume/detail/pipeline.hpp"
#include "blume/detail/quotient_layout0.hpp"
#include "blume/detail/rank_select.hpp"
#include "blume/error.hpp"
#include "blume/hash.hpp"
#include "blume/io/parameters.hpp"
#include "blume/io/serialization.hpp"
#include "blume/kind.hpp"
#include "blume/plan.hpp"
#include "blume/storage.hpp"

namespace blume {

namespace detail {
/// A quotient filter's fingerprint of a digest's low half, in [0, s·2^r): ⌊low · s·2^r / 2^64⌋, one
/// multiply-high. `range` is s·2^r taken mod 2^64, so 0 stands for 2^64, where the fingerprint is low itself.
constexpr std::uint64_t quotient_fingerprint(std::uint64_t low, std::uint64_t range) noexcept {
  const std::uint64_t reduced = reduce(low, range);
  return range != 0 ? reduced : low;
}
}  // namespace detail

template <hasher Hasher = xxh3_hasher>
class quotient_filter : public detail::key_interface<quotient_filter<Hasher>> {
  using key_calls = detail::key_interface<quotient_filter>;

 public:
  using key_calls::contains;
  using key_calls::count;
  using key_calls::erase;
  using key_calls::hash;
  using key_calls::insert;
  using hasher_type = Hasher;
  static constexpr filter_kind kind{7};
  static constexpr std::string_view name = "quotient";
  static constexpr kind_input input = kind_input::keys;
  static constexpr bool is_static = false;
  /// What the file header's primary field holds, as `blume info` names it.
  static constexpr std::string_view primary_field = "slots";
  /// Keys hashed and prefetched per step of the bulk calls (as in basic_bloom_filter).
  static constexpr std::size_t batch_size = detail::pipeline_batch;
  /// The header's layout field: 1 is the rank-and-select layout written now; 0, the first layout (three
  /// metadata bits a slot), is still read and converted on load.
  static constexpr std::uint32_t current_layout = 1;

  // The planner's model: m bits of blocks (quotient_table_bits), k = r.
  static std::uint64_t plan_bytes(std::uint64_t bits) noexcept { return (bits + 7) / 8; }
  static double model_fpr(double n, double m, double k) noexcept {
    const double blocks = m / static_cast<double>(quotient_block_bits(static_cast<std::uint32_t>(k)));
    const double slots = std::max(2.0, (blocks - quotient_overflow_blocks) * quotient_block_slots);
    return math::quotient_fpr(n, slots, k);
  }
  static filter_plan plan(std::uint64_t items, double fpr) {
    return detail::plan_quotient<quotient_filter>(items, fpr);
  }
  static filter_plan plan_for_bits(std::uint64_t items, std::uint64_t bits) {
    return detail::plan_quotient_for_bits<quotient_filter>(items, bits);
  }

  /// A filter for `capacity` items at false-positive rate `fpr`, sized by plan().
  quotient_filter(std::uint64_t capacity, double fpr, std::uint64_t seed = Hasher::default_seed)
      : quotient_filter(plan(capacity, fpr), seed) {}

  /// A filter with the geometry of a quotient plan: r = hashes, and s = 64·(blocks − 4) for the plan's bits
  /// of blocks of 64r + 136 bits.
  explicit quotient_filter(const filter_plan& plan, std::uint64_t seed = Hasher::default_seed)
      : quotient_filter(slots_of(plan), plan.hashes, Hasher(seed)) {}

  /// A filter of `slots` slots (any count ≥ 2) holding remainders of remainder_bits bits.
  static quotient_filter with_slots(std::uint64_t slots, std::uint32_t remainder_bits,
                                    std::uint64_t seed = Hasher::default_seed) {
    return quotient_filter(slots, remainder_bits, Hasher(seed));
  }

  /// Throws invalid_argument naming the bad value unless s ≥ 2, 1 ≤ r ≤ 32, s·2^r ≤ 2^64 (the fingerprint
  /// range fits in 64 bits) and the table fits in max_filter_bits.
  static void check_geometry(std::uint64_t s, std::uint32_t r) {
    if (s < 2) throw invalid_argument("quotient filter: the slot count must be at least 2, got " + std::to_string(s));
    if (r == 0) throw invalid_argument("quotient filter: remainder bits must be at least 1, got 0");
    if (r > quotient_max_remainder_bits)
      throw invalid_argument("quotient filter: remainder bits must be at most " +
                             std::to_string(quotient_max_remainder_bits) + ", got " + std::to_string(r));
    const std::uint64_t blocks = s / quotient_block_slots + (s % quotient_block_slots != 0) + quotient_overflow_blocks;
    if (blocks > max_filter_bits / quotient_block_bits(r))
      throw invalid_argument("quotient filter: " + std::to_string(s) + " slots of " + std::to_string(r) +
                             "-bit remainders exceed the maximum of 2^40 bits (128 GiB)");
    if (r > 64 - std::bit_width(s - 1))  // s·2^r ≤ 2^64 ⟺ s ≤ 2^(64−r) ⟺ bit_width(s − 1) ≤ 64 − r
      throw invalid_argument("quotient filter: " + std::to_string(s) + " slots times 2^" + std::to_string(r) +
                             " remainders exceed the 2^64 fingerprints of a 64-bit hash");
  }

  // ---- serialization hooks (used by format.hpp) ------------------------------------------------------
  // Header fields: bits = s (the slots), hashes = r, layout = 1, extra all zero (docs/format.md).

  filter_parameters parameters() const noexcept {
    filter_parameters p;
    p.primary = slots_;
    p.secondary = r_;
    p.layout = current_layout;
    return p;
  }
  template <class Fn>
  void for_each_payload_segment(Fn&& fn) const {
    fn(std::span<const std::byte>(storage_.data(), storage_.size()));
  }
  static std::uint64_t payload_size(const filter_parameters& p) {
    if (p.layout > current_layout)
      throw invalid_argument("quotient filter: layout must be 0 or 1, got " + std::to_string(p.layout));
    check_geometry(p.primary, p.secondary);
    for (std::uint64_t x : p.extra)
      if (x != 0) throw invalid_argument("reserved header bytes are not zero");
    return p.layout == 0 ? detail::quotient_layout0::payload_bytes(p.primary, p.secondary)
                         : storage_bytes(p.primary, p.secondary);
  }
  /// Adopts `payload` (zero-copy when it is a file mapping) after checking that the table is one this
  /// filter could have written (see validate_table); throws format_error saying what is wrong. A table of
  /// layout 0 is checked by its own rules and rebuilt in the current layout (in memory: about 60 ns a
  /// fingerprint).
  static quotient_filter from_payload(const filter_parameters& p, std::uint64_t seed, std::uint64_t inserted,
                                      byte_storage payload) {
    std::uint64_t size = 0;
    try {
      size = payload_size(p);
    } catch (const invalid_argument& e) {
      throw format_error(std::string("invalid parameters: ") + e.what());
    }
    if (payload.size() != size)
      throw format_error("payload holds " + std::to_string(payload.size()) + " bytes but the parameters need " +
                         std::to_string(size));
    const std::uint64_t s = p.primary;
    const auto r = static_cast<std::uint32_t>(p.secondary);
    auto announced = [&](quotient_filter& f, std::uint64_t stored) {
      if (stored != inserted)
        throw format_error("the header announces " + std::to_string(inserted) + " fingerprints but the table holds " +
                           std::to_string(stored));
      f.entries_ = stored;
    };
    if (p.layout == 0) {
      const std::vector<std::uint64_t> sorted =
          detail::quotient_layout0::sorted_fingerprints(std::span<const std::byte>(payload.data(), payload.size()), s,
                                                        r);
      if (sorted.size() > max_entries_for(s))
        throw format_error("quotient table holds " + std::to_string(sorted.size()) +
                           " fingerprints, more than its capacity of " + std::to_string(max_entries_for(s)));
      quotient_filter f(s, r, Hasher(seed));
      if (!f.place_sorted(sorted))
        throw format_error("the layout-0 table's runs reach past the overflow blocks of the current layout");
      announced(f, sorted.size());
      return f;
    }
    quotient_filter f(s, r, Hasher(seed), std::move(payload));
    announced(f, f.validate_table());
    return f;
  }

  // ---- single keys -----------------------------------------------------------------------------------

  /// Stores the key's fingerprint (another copy if it is already there). Returns false, changing nothing,
  /// when the filter is full (capacity() fingerprints stored, or a run would be pushed past the overflow
  /// blocks).
  bool insert(const digest& d) { return insert_fingerprint(fingerprint(d)); }

  /// False means certainly absent; true means present or a false positive (rate: predicted_fpr()).
  bool contains(const digest& d) const noexcept { return contains_fingerprint(fingerprint(d)); }

  /// Copies of the key's fingerprint stored: the times it was inserted (and not erased), plus the copies of
  /// any other key with the same fingerprint.
  std::uint64_t count(const digest& d) const noexcept { return count_fingerprint(fingerprint(d), false); }

  /// Removes one copy of the key's fingerprint and shifts back the slots after it. Returns false and
  /// changes nothing when the fingerprint is absent. Erase only keys you inserted: erasing a false positive
  /// removes another key's fingerprint.
  bool erase(const digest& d) { return erase_fingerprint(fingerprint(d)); }

  // ---- bulk calls: ranges of keys or of digests ------------------------------------------------------
  // Keys are hashed batch_size at a time into fingerprints, and each quotient's block metadata and home slot
  // are prefetched before they are touched, so a batch keeps many cache misses in flight.

  /// Inserts every key; returns how many were stored (fewer than the keys once the filter is full).
  template <std::ranges::input_range R>
  std::size_t insert_many(const R& keys) {
    std::size_t stored = 0;
    pipelined(view(), keys, true, [&](std::span<const std::uint64_t> batch) {
      for (const std::uint64_t f : batch) stored += insert_fingerprint(f);
    });
    return stored;
  }

  /// Writes one bool per key to `out`; returns how many answered true.
  template <std::ranges::input_range R, class Out>
    requires std::output_iterator<Out, bool>
  std::size_t contains_many(const R& keys, Out out) const {
    std::size_t hits = 0;
    const probe_view v = view();
    pipelined(v, keys, false, [&](std::span<const std::uint64_t> batch) {
      for (const std::uint64_t f : batch) {
        const bool hit = contains_prefetched(v, f);
        hits += hit;
        *out = hit;
        ++out;
      }
    });
    return hits;
  }

  /// How many of `keys` the filter answers true for.
  template <std::ranges::input_range R>
  std::size_t count_contained(const R& keys) const noexcept {
    std::size_t hits = 0;
    const probe_view v = view();
    if constexpr (detail::fusable_range<R>) {
      detail::fused_probes<std::uint64_t>(
          keys, [this](const auto& k) { return this->hash(k); },
          [v](const digest& d) {
            const std::uint64_t f = v.fingerprint(d);
            v.prefetch(f >> v.r, false);
            return f;
          },
          [this, v, &hits](std::uint64_t f) { hits += contains_prefetched(v, f); });
      return hits;
    }
    pipelined(v, keys, false, [&](std::span<const std::uint64_t> batch) {
      std::size_t batch_hits = 0;  // a local sum: `hits` lives in memory the compiler must assume aliased
      for (const std::uint64_t f : batch) batch_hits += contains_prefetched(v, f);
      hits += batch_hits;
    });
    return hits;
  }

  // ---- whole-filter operations -----------------------------------------------------------------------

  void clear() noexcept {
    storage_.zero();
    entries_ = 0;
  }

  /// Doubles the slots: 2s slots of r − 1 remainder bits, rebuilt from the stored fingerprints. The range
  /// 2s·2^(r−1) = s·2^r is unchanged, so each key keeps its fingerprint F, now split one bit further left:
  /// every stored key stays a member and the false-positive rate at a given number of keys is unchanged
  /// while the load halves. Throws invalid_argument when r is already 1 or the doubled table would exceed
  /// 2^40 bits.
  void resize() {
    if (r_ == 1)
      throw invalid_argument("quotient filter: cannot resize, the remainder is already 1 bit (" +
                             std::to_string(slots_) + " slots)");
    check_geometry(slots_ * 2, r_ - 1);
    if (!rebuild(slots_ * 2, r_ - 1, sorted_fingerprints()))
      throw invalid_argument(
          "quotient filter: cannot resize, the runs of the doubled table reach past its overflow "
          "blocks (one fingerprint stored hundreds of times near the end)");
  }

  /// Union: afterwards the filter holds every fingerprint of both (copies add up: a merge of the two
  /// sorted fingerprint streams). Throws incompatible_filters unless both have the same s, r and seed.
  /// When the union would exceed quotient_max_load (or push a run past the overflow blocks), the result is
  /// resized (2s, r − 1, repeatedly as needed) first, so afterwards this filter may no longer be compatible
  /// with `other`; invalid_argument when even r = 1 cannot hold it.
  void merge(const quotient_filter& other) {
    check_compatible(other, "merge");
    const std::vector<std::uint64_t> mine = sorted_fingerprints();
    const std::vector<std::uint64_t> theirs = other.sorted_fingerprints();
    std::vector<std::uint64_t> all(mine.size() + theirs.size());
    std::merge(mine.begin(), mine.end(), theirs.begin(), theirs.end(), all.begin());
    std::uint64_t s = slots_;
    std::uint32_t r = r_;
    auto grow = [&] {
      if (r == 1)
        throw invalid_argument("quotient filter: the union of " + std::to_string(all.size()) +
                               " fingerprints does not fit even with 1 remainder bit");
      s *= 2;
      --r;
      check_geometry(s, r);
    };
    while (all.size() > max_entries_for(s)) grow();
    while (!rebuild(s, r, all)) grow();
  }

  /// Throws incompatible_filters naming the first parameter that differs.
  void check_compatible(const quotient_filter& other, std::string_view operation = "combine") const {
    auto fail = [&](std::string_view what, std::uint64_t a, std::uint64_t b) {
      throw incompatible_filters("cannot " + std::string(operation) + " quotient filters: " + std::string(what) +
                                 " differ (" + std::to_string(a) + " vs " + std::to_string(b) + ")");
    };
    if (slots_ != other.slots_) fail("slot counts", slots_, other.slots_);
    if (r_ != other.r_) fail("remainder bits", r_, other.r_);
    if (seed() != other.seed()) fail("seeds", seed(), other.seed());
  }

  // ---- estimates and geometry ------------------------------------------------------------------------

  /// The number of fingerprints stored (exact: copies included).
  double estimated_count() const noexcept { return static_cast<double>(entries_); }
  /// Fingerprints stored; what the file header records as `inserted`.
  std::uint64_t inserted() const noexcept { return entries_; }
  std::uint64_t size() const noexcept { return entries_; }
  /// The most fingerprints insert accepts: 95% of the slots (quotient_max_load), and never all of them.
  std::uint64_t capacity() const noexcept { return max_entries_; }
  /// Fingerprints per slot, α.
  double load_factor() const noexcept { return static_cast<double>(entries_) / static_cast<double>(slots_); }

  /// The false-positive rate now: 1 − e^{−α/2^r} ≈ α·2^−r (Bender et al. 2012; math::quotient_fpr).
  double predicted_fpr() const noexcept { return predicted_fpr_at(static_cast<double>(entries_)); }
  /// The rate when full (capacity() fingerprints stored).
  double predicted_fpr_at_capacity() const noexcept { return predicted_fpr_at(static_cast<double>(capacity())); }
  double predicted_fpr_at(double items) const noexcept {
    return math::quotient_fpr(items, static_cast<double>(slots_), r_);
  }

  std::uint32_t remainder_bits() const noexcept { return r_; }
  std::uint64_t slots() const noexcept { return slots_; }
  /// The fingerprint of a digest, in [0, slots()·2^r): quotient F >> r, remainder F mod 2^r.
  std::uint64_t fingerprint(const digest& d) const noexcept { return view().fingerprint(d); }
  /// Bits of the table: (⌈s/64⌉ + 4) blocks of 64r + 136 bits, the `bits` of a quotient filter_plan.
  std::uint64_t table_bits() const noexcept { return blocks_ * quotient_block_bits(r_); }
  std::uint64_t seed() const noexcept { return hasher_.seed(); }
  /// Memory held: the table and this object.
  std::size_t size_in_bytes() const noexcept { return storage_.size() + sizeof(*this); }
  const Hasher& hasher() const noexcept { return hasher_; }
  const byte_storage& storage() const noexcept { return storage_; }
  bool is_mapped() const noexcept { return storage_.file_backed(); }

  /// Every stored fingerprint F = quotient·2^r + remainder, ascending, copies repeated.
  std::vector<std::uint64_t> sorted_fingerprints() const {
    std::vector<std::uint64_t> out;
    out.reserve(entries_);
    std::uint64_t next_free = 0;
    for (std::uint64_t b = 0; b < blocks_; ++b) {
      for (std::uint64_t w = occupieds(b); w != 0; w &= w - 1) {
        const std::uint64_t q = b * 64 + static_cast<std::uint64_t>(std::countr_zero(w));
        const std::uint64_t end = select_runend(next_free, 1);
        for (std::uint64_t i = std::max(q, next_free); i <= end; ++i) out.push_back(q << r_ | remainder(i));
        next_free = end + 1;
      }
    }
    return out;
  }

  friend bool operator==(const quotient_filter& a, const quotient_filter& b) noexcept {
    if (a.slots_ != b.slots_ || a.r_ != b.r_ || a.seed() != b.seed() || a.entries_ != b.entries_) return false;
    return std::equal(a.storage_.data(), a.storage_.data() + a.storage_.size(), b.storage_.data());
  }

 private:
  // Block b: the remainders (8r bytes, slot j at bits j·r), occupieds (8 bytes), runends (8 bytes), the
  // offset (1 byte). Remainders come first so that the 8-byte window read for any slot ends inside its
  // block (⌊63r/8⌋ + 8 ≤ 8r + 17).
  static constexpr unsigned saturated = 255;

  static std::uint64_t storage_bytes(std::uint64_t s, std::uint32_t r) noexcept {
    return quotient_blocks(s) * (8 * std::uint64_t{r} + 17);
  }
  static std::uint64_t checked_storage_bytes(std::uint64_t s, std::uint32_t r) {
    check_geometry(s, r);  // before anything is computed from s or allocated
    return storage_bytes(s, r);
  }
  /// 95% of the slots (integer arithmetic: exact for every s ≤ 2^38), and at most all but one.
  static std::uint64_t max_entries_for(std::uint64_t slots) noexcept { return std::min(slots - 1, slots * 19 / 20); }
  static_assert(quotient_max_load == 0.95, "max_entries_for computes 95% as 19/20");

  static std::uint64_t slots_of(const filter_plan& plan) {
    if (plan.kind != kind)
      throw invalid_argument("quotient filter: the plan is for kind id " + std::to_string(static_cast<int>(plan.kind)));
    if (plan.hashes == 0 || plan.hashes > quotient_max_remainder_bits)
      throw invalid_argument("quotient filter: plan remainder bits " + std::to_string(plan.hashes) +
                             " are outside 1 to " + std::to_string(quotient_max_remainder_bits));
    const std::uint64_t block_bits = quotient_block_bits(plan.hashes);
    const std::uint64_t blocks = plan.bits / block_bits;
    if (blocks * block_bits != plan.bits || blocks <= quotient_overflow_blocks)
      throw invalid_argument("quotient filter: plan bits " + std::to_string(plan.bits) + " are not more than " +
                             std::to_string(quotient_overflow_blocks) +
                             " whole blocks of 64r + 136 bits with r = " + std::to_string(plan.hashes));
    return (blocks - quotient_overflow_blocks) * quotient_block_slots;
  }

  quotient_filter(std::uint64_t s, std::uint32_t r, const Hasher& h)
      : quotient_filter(s, r, h, byte_storage::allocate(checked_storage_bytes(s, r))) {}
  quotient_filter(std::uint64_t s, std::uint32_t r, const Hasher& h, byte_storage storage)
      : r_(r), block_bytes_(8 * std::uint64_t{r} + 17), slots_(s), blocks_(quotient_blocks(s)),
        physical_slots_(blocks_ * 64), remainder_mask_((std::uint64_t{1} << r) - 1), max_entries_(max_entries_for(s)),
        lanes_(57 / r), lane_lows_(lane_lows(r)), hasher_(h), storage_(std::move(storage)) {}

  /// The low bit of each of the ⌊57/r⌋ r-bit lanes that an 8-byte window read at any bit offset holds.
  static std::uint64_t lane_lows(std::uint32_t r) noexcept {
    std::uint64_t lows = 0;
    for (std::uint32_t lane = 0; lane < 57 / r; ++lane) lows |= std::uint64_t{1} << (lane * r);
    return lows;
  }

  // ---- blocks ----------------------------------------------------------------------------------------

  /// What a lookup reads of the filter, as a value. Bulk loops copy it into locals once: their stores (the
  /// answer count, the ring of fingerprints) could alias the filter's own 64-bit members, and the compiler
  /// would reload each of them for every key (measured at 1M keys, hashing included: 166 instructions a
  /// batched lookup through the members, 149 through a view, 8–15% less time at 10M).
  struct block_run {
    bool in_block;
    unsigned start, end;  // slots within the block
  };
  struct probe_view {
    const std::byte* table;
    std::uint64_t block_bytes;
    std::uint64_t fingerprints;  // s·2^r, taken mod 2^64 (0 when it is 2^64)
    std::uint64_t remainder_mask, lanes, lane_lows;
    std::uint32_t r;
    bool pdep;

    const std::byte* block(std::uint64_t b) const noexcept { return table + b * block_bytes; }
    std::uint64_t occupieds(std::uint64_t b) const noexcept { return detail::read_u64(block(b) + 8 * r); }
    std::uint64_t runends(std::uint64_t b) const noexcept { return detail::read_u64(block(b) + 8 * r + 8); }
    unsigned stored_offset(std::uint64_t b) const noexcept { return static_cast<unsigned>(block(b)[8 * r + 16]); }
    std::uint64_t fingerprint(const digest& d) const noexcept {
      return detail::quotient_fingerprint(d.low, fingerprints);
    }

    /// The lines a lookup of quotient q reads first: its block's 17 bytes of metadata (which may straddle
    /// two lines: blocks are not line-aligned) and the remainder in its own slot.
    void prefetch(std::uint64_t q, bool write) const noexcept {
      const std::byte* metadata = block(q >> 6) + 8 * r;
      const std::byte* home = block(q >> 6) + ((q & 63) * r >> 3);
      for (const std::byte* p : {home, metadata, metadata + 16}) {
        if (write) {
          detail::prefetch_write(p);
        } else {
          detail::prefetch_read(p);
        }
      }
    }

    /// The t-th (t ≥ 1) run of block b's quotients, when it ends within block b behind an exact offset, as
    /// slots within the block; `in_block` is false otherwise. Nearly always the frontier and the run's end
    /// both lie in the block: one select in one word, and the previous run's end is the highest runend
    /// below it (none when the run is the block's first). The run starts no lower than `low` (the
    /// quotient's own slot).
    block_run run_in_block(std::uint64_t b, unsigned t, unsigned low) const noexcept {
      const unsigned o = stored_offset(b);
      const std::uint64_t ends = runends(b) & (~std::uint64_t{0} << (o & 63));
      if (o >= 64 || static_cast<unsigned>(std::popcount(ends)) < t) return {false, 0, 0};
      const unsigned end = detail::select64(ends, t - 1, pdep);
      // The slot after the highest runend below `end`, or o when there is none, without a test for none:
      // shifted up one, any runend below `end` lies above bit o, which stands in for it when it is missing.
      const std::uint64_t before = ends & ((std::uint64_t{1} << end) - 1);
      const auto after_previous = static_cast<unsigned>(63 - __builtin_clzll(before << 1 | std::uint64_t{1} << o));
      return {true, std::max(low, after_previous), end};
    }

    /// Whether fingerprint f is stored, when its run lies in its quotient's block, holds at most `lanes`
    /// slots and follows an offset below 64 (else `elsewhere`, and only for an occupied quotient). The
    /// common case runs without a branch on the key: a quotient with no run is looked up as if it had the
    /// run before it (rank at least 1), and the answer masked by its occupied bit, as a branch on that bit
    /// would be mispredicted for about half the absent keys. The run's remainders are compared all at
    /// once: one 8-byte window of `lanes` remainders, XORed with r-bit copies of the remainder, has a zero
    /// lane where they are equal. The lowest zero lane is always flagged exactly (borrows only run upward,
    /// and only out of a zero lane), so a flag among the run's lanes means a match among them.
    enum class answer : std::uint8_t { no, yes, elsewhere };
    answer find(std::uint64_t f) const noexcept {
      const std::uint64_t q = f >> r, x = f & remainder_mask, b = q >> 6;
      const std::uint64_t occ = occupieds(b);
      const bool occupied = occ >> (q & 63) & 1;
      const auto t = static_cast<unsigned>(std::popcount(occ & (~std::uint64_t{0} >> (63 - (q & 63)))));
      const block_run run = run_in_block(b, std::max(t, 1u), static_cast<unsigned>(q & 63));
      const unsigned start = run.start, end = run.end;
      const unsigned length = end + 1 - std::min(start, end + 1);  // 0 when an unoccupied q lies past the run
      if (!run.in_block || length > lanes) return occupied ? answer::elsewhere : answer::no;
      const std::uint64_t bit = start * r;
      const std::uint64_t window = detail::read_u64(block(b) + (bit >> 3)) >> (bit & 7);
      const std::uint64_t differences = window ^ (x * lane_lows);
      const std::uint64_t zero_lanes = (differences - lane_lows) & ~differences & (lane_lows << (r - 1));
      const bool hit = occupied & ((zero_lanes & ((std::uint64_t{1} << (length * r)) - 1)) != 0);
      return hit ? answer::yes : answer::no;
    }
  };
  probe_view view() const noexcept {
    return {storage_.data(), block_bytes_, slots_ << r_, remainder_mask_, lanes_, lane_lows_, r_, pdep_};
  }

  const std::byte* block(std::uint64_t b) const noexcept { return view().block(b); }
  std::byte* block(std::uint64_t b) noexcept { return storage_.data() + b * block_bytes_; }
  std::uint64_t occupieds(std::uint64_t b) const noexcept { return view().occupieds(b); }
  std::uint64_t runends(std::uint64_t b) const noexcept { return view().runends(b); }
  unsigned stored_offset(std::uint64_t b) const noexcept { return view().stored_offset(b); }
  void set_occupieds(std::uint64_t b, std::uint64_t w) noexcept { std::memcpy(block(b) + 8 * r_, &w, 8); }
  void set_runends(std::uint64_t b, std::uint64_t w) noexcept { std::memcpy(block(b) + 8 * r_ + 8, &w, 8); }
  void set_offset(std::uint64_t b, std::uint64_t o) noexcept {
    block(b)[8 * r_ + 16] = static_cast<std::byte>(std::min<std::uint64_t>(o, saturated));
  }

  std::uint64_t remainder(std::uint64_t i) const noexcept {
    const std::uint64_t bit = (i & 63) * r_;
    return detail::read_u64(block(i >> 6) + (bit >> 3)) >> (bit & 7) & remainder_mask_;
  }
  void set_remainder(std::uint64_t i, std::uint64_t v) noexcept {
    const std::uint64_t bit = (i & 63) * r_;
    std::byte* p = block(i >> 6) + (bit >> 3);
    const unsigned shift = bit & 7;
    const std::uint64_t w = (detail::read_u64(p) & ~(remainder_mask_ << shift)) | v << shift;
    std::memcpy(p, &w, 8);
  }
  bool runend_bit(std::uint64_t i) const noexcept { return runends(i >> 6) >> (i & 63) & 1; }
  void set_runend_bit(std::uint64_t i, bool on) noexcept {
    const std::uint64_t w = runends(i >> 6), bit = std::uint64_t{1} << (i & 63);
    set_runends(i >> 6, on ? w | bit : w & ~bit);
  }

  // ---- rank and select -------------------------------------------------------------------------------

  /// O_b, exact: the stored byte, or when it is saturated, recomputed forward from the nearest block before
  /// with an exact offset (block 0's offset is always 0, as no quotient lies below it).
  std::uint64_t offset(std::uint64_t b) const noexcept {
    const unsigned o = stored_offset(b);
    return o != saturated ? o : exact_offset(b);
  }
  std::uint64_t exact_offset(std::uint64_t b) const noexcept {
    std::uint64_t j = b;
    while (j > 0 && stored_offset(j) == saturated) --j;
    std::uint64_t frontier = j * 64 + stored_offset(j);
    for (; j < b; ++j) frontier = next_frontier(j, frontier);
    return frontier - b * 64;
  }
  /// The frontier of block b + 1 (64(b + 1) + O_{b+1}: the first slot from 64(b + 1) on not holding a run of
  /// a quotient below it) from block b's.
  std::uint64_t next_frontier(std::uint64_t b, std::uint64_t frontier) const noexcept {
    const int runs = std::popcount(occupieds(b));
    const std::uint64_t next_start = (b + 1) * 64;
    if (runs == 0) return std::max(next_start, frontier);
    return std::max(next_start, select_runend(frontier, static_cast<std::uint64_t>(runs)) + 1);
  }

  /// The slot of the t-th (t ≥ 1) runend at or after slot `from`; physical_slots_ if there are fewer (only
  /// in a table being checked).
  std::uint64_t select_runend(std::uint64_t from, std::uint64_t t) const noexcept {
    std::uint64_t b = from >> 6;
    if (b >= blocks_) return physical_slots_;
    std::uint64_t w = runends(b) & (~std::uint64_t{0} << (from & 63));
    for (;;) {
      const auto c = static_cast<std::uint64_t>(std::popcount(w));
      if (c >= t) return b * 64 + detail::select64(w, static_cast<unsigned>(t - 1), pdep_);
      t -= c;
      if (++b == blocks_) return physical_slots_;
      w = runends(b);
    }
  }
  /// The last runend before slot `before`, known to lie at or after `floor`.
  std::uint64_t previous_runend(std::uint64_t before, std::uint64_t floor) const noexcept {
    std::uint64_t b = before >> 6;
    std::uint64_t w = runends(b) & ((std::uint64_t{1} << (before & 63)) - 1);
    while (w == 0 && b > (floor >> 6)) w = runends(--b);
    return b * 64 + 63 - static_cast<std::uint64_t>(std::countl_zero(w));
  }

  struct run_position {
    std::uint64_t start, end;  // the slots of q's run, when q has one
  };
  /// Quotient q's run (q must be occupied; `occ` is its block's occupieds).
  run_position run_of(std::uint64_t q, std::uint64_t occ) const noexcept {
    const std::uint64_t b = q >> 6;
    const auto t = static_cast<unsigned>(std::popcount(occ & (~std::uint64_t{0} >> (63 - (q & 63)))));
    if (const block_run run = view().run_in_block(b, t, static_cast<unsigned>(q & 63)); run.in_block)
      return {b * 64 + run.start, b * 64 + run.end};
    const std::uint64_t frontier = b * 64 + offset(b);
    const std::uint64_t end = select_runend(frontier, t);
    const std::uint64_t after_previous = t == 1 ? frontier : previous_runend(end, frontier) + 1;
    return {std::max(q, after_previous), end};
  }
  /// The first slot after the runs of every quotient up to p (any physical slot): p itself when p is empty.
  std::uint64_t past_runs_through(std::uint64_t p) const noexcept {
    const std::uint64_t b = p >> 6;
    const auto t = static_cast<std::uint64_t>(std::popcount(occupieds(b) & (~std::uint64_t{0} >> (63 - (p & 63)))));
    const std::uint64_t frontier = b * 64 + offset(b);
    return t == 0 ? frontier : select_runend(frontier, t) + 1;
  }
  /// The first empty slot at or after p, or physical_slots_ if none: a slot is empty when the runs of the
  /// quotients up to it end before it (later quotients' runs start after it).
  std::uint64_t first_empty_from(std::uint64_t p) const noexcept {
    while (p < physical_slots_) {
      const std::uint64_t past = past_runs_through(p);
      if (past <= p) return p;
      p = past;
    }
    return physical_slots_;
  }

  /// Whether fingerprint f is stored (probe_view::find, else the run's scan).
  bool contains_fingerprint(std::uint64_t f) const noexcept {
    // The run's remainders are read only once the metadata is decoded: ask for their line now, so that
    // its miss overlaps the metadata's instead of following it. One by one, a lookup waits for memory,
    // so an unoccupied quotient returns before the runends and offset are read (they may lie in the
    // next line); measured at 2^24 and 2^27 slots, absent keys took 0.81–0.84× the time of the
    // branch-free path, present keys the same.
    const probe_view v = view();
    const std::uint64_t q = f >> v.r;
    detail::prefetch_read(v.block(q >> 6) + ((q & 63) * v.r >> 3));
    if ((v.occupieds(q >> 6) >> (q & 63) & 1) == 0) return false;
    return contains_prefetched(v, f);
  }
  bool contains_prefetched(const probe_view& v, std::uint64_t f) const noexcept {
    const typename probe_view::answer a = v.find(f);
    return a == probe_view::answer::yes || (a == probe_view::answer::elsewhere && count_fingerprint(f, true) != 0);
  }

  /// Copies of fingerprint f (stopping at the first with `first_only`). Runs are sorted, so the scan ends
  /// at the first larger remainder.
  std::uint64_t count_fingerprint(std::uint64_t f, bool first_only) const noexcept {
    const std::uint64_t q = f >> r_, x = f & remainder_mask_;
    const std::uint64_t occ = occupieds(q >> 6);
    if ((occ >> (q & 63) & 1) == 0) return 0;
    const run_position run = run_of(q, occ);
    std::uint64_t copies = 0;
    for (std::uint64_t i = run.start; i <= run.end; ++i) {
      const std::uint64_t rem = remainder(i);
      if (rem > x) break;
      if (rem == x) {
        ++copies;
        if (first_only) break;
      }
    }
    return copies;
  }

  // ---- insert and erase ------------------------------------------------------------------------------

  /// Copies bits [lo, hi) of a block's remainders `by` bits up (to [lo + by, hi + by)), in windows of at most
  /// 56 bits from the top down, so that no window overwrites source bits not yet read. Every 8-byte access
  /// ends inside the block (the metadata follows the remainders).
  static void move_bits_up(std::byte* area, std::uint64_t lo, std::uint64_t hi, std::uint32_t by) noexcept {
    while (hi > lo) {
      const std::uint64_t length = std::min<std::uint64_t>(56, hi - lo), start = hi - length;
      write_bits(area, start + by, length, read_bits(area, start, length));
      hi = start;
    }
  }
  /// Copies bits [lo, hi) `by` bits down (to [lo − by, hi − by)), in windows from the bottom up.
  static void move_bits_down(std::byte* area, std::uint64_t lo, std::uint64_t hi, std::uint32_t by) noexcept {
    while (lo < hi) {
      const std::uint64_t length = std::min<std::uint64_t>(56, hi - lo);
      write_bits(area, lo - by, length, read_bits(area, lo, length));
      lo += length;
    }
  }
  static std::uint64_t read_bits(const std::byte* area, std::uint64_t bit, std::uint64_t length) noexcept {
    return detail::read_u64(area + (bit >> 3)) >> (bit & 7) & ((std::uint64_t{1} << length) - 1);
  }
  static void write_bits(std::byte* area, std::uint64_t bit, std::uint64_t length, std::uint64_t v) noexcept {
    std::byte* p = area + (bit >> 3);
    const unsigned shift = bit & 7;
    const std::uint64_t mask = ((std::uint64_t{1} << length) - 1) << shift;
    const std::uint64_t w = (detail::read_u64(p) & ~mask) | v << shift;
    std::memcpy(p, &w, 8);
  }

  /// Moves the remainders and runend bits of slots [from, to) to [from + 1, to]; slot `to` must be empty.
  /// Slot `from` keeps its remainder and gets runend 0.
  void shift_up(std::uint64_t from, std::uint64_t to) noexcept {
    const std::uint64_t first = from >> 6, last = to >> 6;
    // Remainders, block by block from the top: within a block one bit move of the slots' range, then the
    // slot pushed out of the block below comes in at slot 0.
    for (std::uint64_t k = last;; --k) {
      const std::uint64_t lo = k == first ? from & 63 : 0, hi = k == last ? to & 63 : 63;
      move_bits_up(block(k), lo * r_, hi * r_, r_);
      if (k == first) break;
      set_remainder(k * 64, remainder(k * 64 - 1));
    }
    for (std::uint64_t k = last;; --k) {
      const unsigned lo = k == first ? from & 63 : 0, hi = k == last ? to & 63 : 63;
      const std::uint64_t region = (~std::uint64_t{0} >> (63 - hi)) & (~std::uint64_t{0} << lo);
      const std::uint64_t old = runends(k), carry = k > first ? runends(k - 1) >> 63 : 0;
      const std::uint64_t moved = (old << 1) & region & ~(std::uint64_t{1} << lo);
      set_runends(k, (old & ~region) | moved | carry << lo);
      if (k == first) break;
    }
  }
  /// Moves the remainders and runend bits of slots (from, to) to [from, to − 1); slot to − 1 becomes empty.
  void shift_down(std::uint64_t from, std::uint64_t to) noexcept {
    const std::uint64_t first = from >> 6, last = (to - 1) >> 6;
    for (std::uint64_t k = first; k <= last; ++k) {
      const std::uint64_t lo = k == first ? from & 63 : 0, hi = k == last ? (to - 1) & 63 : 63;
      move_bits_down(block(k), (lo + 1) * r_, (hi + 1) * r_, r_);  // slot 63 then takes the next block's 0
      if (k < last) set_remainder(k * 64 + 63, remainder(k * 64 + 64));
    }
    set_remainder(to - 1, 0);
    for (std::uint64_t k = first; k <= last; ++k) {
      const unsigned lo = k == first ? from & 63 : 0, hi = k == last ? (to - 1) & 63 : 63;
      const std::uint64_t region = (~std::uint64_t{0} >> (63 - hi)) & (~std::uint64_t{0} << lo);
      const std::uint64_t old = runends(k), carry = k < last ? runends(k + 1) & 1 : 0;
      const std::uint64_t moved = (old >> 1) & region & ~(std::uint64_t{1} << hi);
      set_runends(k, (old & ~region) | moved | carry << 63);
    }
  }

  bool insert_fingerprint(std::uint64_t f) {
    if (entries_ >= max_entries_) return false;
    const std::uint64_t q = f >> r_, x = f & remainder_mask_, b = q >> 6;
    detail::prefetch_write(block(b) + ((q & 63) * r_ >> 3));  // as in contains_fingerprint
    const std::uint64_t occ = occupieds(b), bit = std::uint64_t{1} << (q & 63);
    std::uint64_t pos = 0, old_end = 0;
    const bool has_run = occ & bit;
    if (has_run) {
      const run_position run = run_of(q, occ);
      pos = run.start;
      while (pos <= run.end && remainder(pos) <= x) ++pos;  // after any copies: the order stays canonical
      old_end = run.end;
    } else {
      const auto before = static_cast<std::uint64_t>(std::popcount(occ & (bit - 1)));
      const std::uint64_t frontier = b * 64 + offset(b);
      pos = std::max(q, before == 0 ? frontier : select_runend(frontier, before) + 1);
    }
    const std::uint64_t empty = first_empty_from(pos);
    if (empty >= physical_slots_) return false;
    shift_up(pos, empty);
    set_remainder(pos, x);
    if (!has_run) {
      set_runend_bit(pos, true);
      set_occupieds(b, occ | bit);
    } else if (pos == old_end + 1) {  // appended: the run now ends one slot later
      set_runend_bit(old_end, false);
      set_runend_bit(pos, true);
    }
    // Every block starting in (q, empty] now holds one more slot of runs from quotients below it.
    for (std::uint64_t i = b + 1; i <= empty >> 6; ++i) {
      const unsigned o = stored_offset(i);
      if (o != saturated) set_offset(i, o + 1);
    }
    ++entries_;
    return true;
  }

  bool erase_fingerprint(std::uint64_t f) {
    const std::uint64_t q = f >> r_, x = f & remainder_mask_, b = q >> 6;
    const std::uint64_t occ = occupieds(b), bit = std::uint64_t{1} << (q & 63);
    if ((occ & bit) == 0) return false;
    const run_position run = run_of(q, occ);
    std::uint64_t p = run.start;
    while (p <= run.end && remainder(p) < x) ++p;
    if (p > run.end || remainder(p) != x) return false;
    // The slots after p move back one up to the first that is empty or starts a run in its quotient's slot.
    std::uint64_t stop = run.end + 1, run_quotient = q;
    while (stop < physical_slots_) {
      const std::uint64_t next = next_occupied(run_quotient + 1, stop);
      if (next >= stop) break;  // no run of an earlier quotient starts at `stop`: it is empty or at home
      run_quotient = next;
      stop = select_runend(stop, 1) + 1;
    }
    if (run.start == run.end) {
      set_occupieds(b, occ & ~bit);
    } else if (p == run.end) {
      set_runend_bit(p - 1, true);
    }
    shift_down(p, stop);
    // Every block starting in (q, stop − 1] holds one slot of runs from quotients below it fewer.
    std::optional<std::uint64_t> frontier;  // of the block before, when known exactly
    for (std::uint64_t i = b + 1; i <= (stop - 1) >> 6; ++i) {
      const unsigned o = stored_offset(i);
      const std::uint64_t exact =
          o != saturated ? o - 1 : (frontier ? next_frontier(i - 1, *frontier) - i * 64 : exact_offset(i));
      set_offset(i, exact);
      frontier = i * 64 + exact;
    }
    --entries_;
    return true;
  }

  /// The first occupied quotient in [from, limit), or limit.
  std::uint64_t next_occupied(std::uint64_t from, std::uint64_t limit) const noexcept {
    limit = std::min(limit, blocks_ * 64);
    while (from < limit) {
      const std::uint64_t w = occupieds(from >> 6) & (~std::uint64_t{0} << (from & 63));
      if (w != 0) return std::min(limit, (from & ~std::uint64_t{63}) + static_cast<std::uint64_t>(std::countr_zero(w)));
      from = (from | 63) + 1;
    }
    return limit;
  }

  // ---- whole table -----------------------------------------------------------------------------------

  /// Writes fingerprints `sorted` (ascending, each below s·2^r) into this empty table in the canonical
  /// layout and sets every offset. Returns false, leaving the table to be discarded, when the runs would
  /// reach past the last block.
  bool place_sorted(std::span<const std::uint64_t> sorted) {
    std::uint64_t next_free = 0;
    for (std::size_t i = 0; i < sorted.size(); ++i) {
      const std::uint64_t q = sorted[i] >> r_;
      const std::uint64_t p = std::max(next_free, q);
      if (p >= physical_slots_) return false;
      set_remainder(p, sorted[i] & remainder_mask_);
      set_occupieds(q >> 6, occupieds(q >> 6) | std::uint64_t{1} << (q & 63));
      if (i + 1 == sorted.size() || sorted[i + 1] >> r_ != q) set_runend_bit(p, true);
      next_free = p + 1;
    }
    std::uint64_t frontier = 0;
    for (std::uint64_t b = 0; b + 1 < blocks_; ++b) {
      frontier = next_frontier(b, frontier);
      set_offset(b + 1, frontier - (b + 1) * 64);
    }
    entries_ = sorted.size();
    return true;
  }

  /// Replaces the table by one of s slots of r-bit remainders holding `sorted`; false (changing nothing)
  /// when its runs would reach past the overflow blocks.
  bool rebuild(std::uint64_t s, std::uint32_t r, std::span<const std::uint64_t> sorted) {
    quotient_filter fresh(s, r, hasher_);
    if (!fresh.place_sorted(sorted)) return false;
    *this = std::move(fresh);
    return true;
  }

  /// Checks that the table is one insert and erase could have produced and returns how many fingerprints
  /// it holds; throws format_error otherwise. One pass over the runs in quotient order, so a hostile table
  /// can neither loop nor read out of bounds: no quotient at or past s is occupied; each occupied quotient's
  /// run ends at the next runend and not before the slot it starts at; no runend is left over; remainders
  /// ascend within a run and are zero in empty slots; every offset is min(255, the exact one); and the count
  /// is within capacity().
  std::uint64_t validate_table() const {
    auto bad = [](std::uint64_t slot, const std::string& what) {
      return format_error("quotient table slot " + std::to_string(slot) + ": " + what);
    };
    auto expect_empty = [&](std::uint64_t from, std::uint64_t to) {
      for (std::uint64_t i = from; i < to; ++i)
        if (remainder(i) != 0) throw bad(i, "an empty slot holds a remainder");
    };
    std::uint64_t next_free = 0, stored = 0;
    for (std::uint64_t b = 0; b < blocks_; ++b) {
      const std::uint64_t exact = std::max(next_free, b * 64) - b * 64;
      if (stored_offset(b) != std::min<std::uint64_t>(exact, saturated))
        throw format_error("quotient table block " + std::to_string(b) + ": offset " +
                           std::to_string(stored_offset(b)) + " where its runs give " + std::to_string(exact));
      const std::uint64_t occ = occupieds(b);
      if (slots_ < b * 64 + 64 && (occ >> (slots_ > b * 64 ? slots_ - b * 64 : 0)) != 0)
        throw format_error("quotient table block " + std::to_string(b) + ": a quotient at or past the " +
                           std::to_string(slots_) + " slots is marked occupied");
      for (std::uint64_t w = occ; w != 0; w &= w - 1) {
        const std::uint64_t q = b * 64 + static_cast<std::uint64_t>(std::countr_zero(w));
        const std::uint64_t start = std::max(q, next_free);
        const std::uint64_t end = select_runend(next_free, 1);
        if (end == physical_slots_) throw bad(q, "an occupied quotient whose run has no end");
        if (end < start) throw bad(end, "a run ends before it starts");
        expect_empty(next_free, start);
        for (std::uint64_t i = start + 1; i <= end; ++i)
          if (remainder(i) < remainder(i - 1)) throw bad(i, "remainders of a run out of order");
        stored += end - start + 1;
        next_free = end + 1;
      }
    }
    if (select_runend(next_free, 1) != physical_slots_)
      throw bad(select_runend(next_free, 1), "a run end with no occupied quotient left for it");
    expect_empty(next_free, physical_slots_);
    if (stored > max_entries_)
      throw format_error("quotient table holds " + std::to_string(stored) +
                         " fingerprints, more than its capacity of " + std::to_string(max_entries_));
    return stored;
  }

  // ---- batches ---------------------------------------------------------------------------------------

  /// Calls use(batch) with the fingerprints of up to batch_size keys at a time, each prefetched (for writing
  /// when `write`) while the batch before it is used.
  template <class R, class Use>
  void pipelined(const probe_view& v, const R& items, bool write, Use&& use) const {
    detail::pipelined_probes<std::uint64_t>(
        items, [this](const auto& k) { return this->hash(k); },
        [v, write](const digest& d) {
          const std::uint64_t f = v.fingerprint(d);
          v.prefetch(f >> v.r, write);
          return f;
        },
        use);
  }

  std::uint32_t r_;
  std::uint64_t block_bytes_;     // 8r + 17
  std::uint64_t slots_;           // s: the quotients
  std::uint64_t blocks_;          // ⌈s/64⌉ + quotient_overflow_blocks
  std::uint64_t physical_slots_;  // 64·blocks_
  std::uint64_t remainder_mask_;
  std::uint64_t max_entries_;
  std::uint64_t lanes_;      // remainders compared at once by contains_fingerprint
  std::uint64_t lane_lows_;  // bit 0 of each of those lanes
  std::uint64_t entries_ = 0;
  Hasher hasher_;
  byte_storage storage_;
  bool pdep_ = detail::cpu_has_fast_pdep();  // cached: select runs several times a lookup
};

static_assert(serializable_filter<quotient_filter<>>);

}  // namespace blume
