// SPDX-License-Identifier: Apache-2.0
// The quotient filter (Bender, Farach-Colton, Johnson, Kraner, Kuszmaul, Medjedovic, Montes, Shetty,
// Spillane & Zadok 2012, "Don't thrash: how to cache your hash on flash"): a compact hash table of
// fingerprints. With s slots of r-bit remainders, a key's fingerprint F ∈ [0, s·2^r) splits into a quotient
// F >> r (the key's canonical slot among s) and a remainder F mod 2^r (what the slot stores). Remainders with the
// same quotient form a run, stored contiguously and sorted; runs are stored in quotient order, each at or
// after its canonical slot, so a run may be pushed right by earlier runs. Three metadata bits per slot make
// this decodable (§2 of the paper):
//   is_occupied     slot i is the canonical slot of some stored fingerprint (belongs to position i);
//   is_continuation the remainder in slot i belongs to the same run as the one in slot i − 1;
//   is_shifted      the remainder in slot i is not in its canonical slot.
// A cluster is a maximal sequence of full slots starting with an unshifted remainder; the table wraps around.
//
// Choices made here:
//  * Any slot count s ≥ 2, not only 2^q, so memory follows the plan instead of doubling at powers of two.
//    Fingerprints: the key is hashed once (hash_key); F = reduce(h, s·2^r) = ⌊h·s·2^r / 2^64⌋ for the
//    digest's low half h (Lemire's multiply-high, computed as ⌊h·s / 2^(64−r)⌋ in 128 bits). F is stored as
//    (quotient, remainder), so the table yields every F back. A resize to (2s, r − 1) keeps the range s·2^r,
//    so the same keys have the same F and re-splitting the stored F needs no keys (§4 of the paper); a merge
//    is a merge of the sorted F. For s = 2^q, F is the top q + r bits of h, the paper's power-of-two case.
//    Wrap-around at s is a compare, not a mask.
//  * Multiset: inserting a fingerprint again stores another copy, so erase of one copy keeps the other and
//    erase is sound for every key that was inserted. count() reports the copies.
//  * Erasing a key never inserted: refused, changing nothing, when its fingerprint is not stored. A false
//    positive's fingerprint is an inserted key's, and erasing it removes that key's copy, so the key answers
//    "no" from then on (a false negative). At 100,000 keys planned for 1% (0.70% at that load), erasing
//    100,000 keys never inserted made about 690 inserted keys (0.69%) answer "no" (tests/erase_test.cpp).
//    Erase only keys that were inserted.
//  * Canonical layout: runs are sorted, so the table is a function of the stored multiset alone. insert and
//    erase decode the affected stretch (from the cluster start to the first empty slot) and write it back,
//    which performs the paper's shifting right on insert and shifting back on erase in one rule: each
//    remainder lies at max(previous position + 1, its quotient).
//  * Load: insert refuses (returns false, changes nothing) above quotient_max_load = 95% of the slots, and
//    always keeps one slot empty, which bounds every scan. plan_for sizes for 90% (quotient_plan_load).
//  * Lookup: one walk back from the canonical slot to the nearest remainder stored in its own slot, counting
//    occupied quotients and run starts on the way, then forward from the canonical slot to the key's run.
//  * Limits: s ≥ 2, 1 ≤ r ≤ 32 (quotient_max_remainder_bits), s·2^r ≤ 2^64 (F fits in 64 bits), and
//    s·(r + 3) ≤ 2^40 bits.
//
// Thread safety: const calls (contains, count, contains_many, count_contained, estimates, copying, saving)
// may run concurrently with each other; every other call (insert, insert_many, erase, clear, resize, merge,
// assignment) needs exclusive access: an insert moves remainders that a concurrent lookup could be reading.
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <limits>
#include <ranges>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "blume/detail/bits.hpp"
#include "blume/detail/key_interface.hpp"
#include "blume/detail/pipeline.hpp"
#include "blume/error.hpp"
#include "blume/hash.hpp"
#include "blume/io/parameters.hpp"
#include "blume/io/serialization.hpp"
#include "blume/kind.hpp"
#include "blume/plan.hpp"
#include "blume/storage.hpp"

namespace blume {

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

  // The planner's model: m = s·(r + 3) bits of slots packed in 64-bit words, k = r.
  static std::uint64_t plan_bytes(std::uint64_t bits) noexcept { return detail::word_bytes(bits); }
  static double model_fpr(double n, double m, double k) noexcept {
    return math::quotient_fpr(n, m / (k + quotient_metadata_bits), k);
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

  /// A filter with the geometry of a quotient plan: s = bits / (hashes + 3) slots of r = hashes bits.
  explicit quotient_filter(const filter_plan& plan, std::uint64_t seed = Hasher::default_seed)
      : quotient_filter(slots_of(plan), plan.hashes, Hasher(seed)) {}

  /// A filter of `slots` slots (any count ≥ 2) holding remainders of remainder_bits bits.
  static quotient_filter with_slots(std::uint64_t slots, std::uint32_t remainder_bits,
                                    std::uint64_t seed = Hasher::default_seed) {
    return quotient_filter(slots, remainder_bits, Hasher(seed));
  }

  /// Throws invalid_argument naming the bad value unless s ≥ 2, 1 ≤ r ≤ 32, s·2^r ≤ 2^64 (the fingerprint
  /// range fits in 64 bits) and the table of s·(r + 3) bits fits in max_filter_bits.
  static void check_geometry(std::uint64_t s, std::uint32_t r) {
    if (s < 2) throw invalid_argument("quotient filter: the slot count must be at least 2, got " + std::to_string(s));
    if (r == 0) throw invalid_argument("quotient filter: remainder bits must be at least 1, got 0");
    if (r > quotient_max_remainder_bits)
      throw invalid_argument("quotient filter: remainder bits must be at most " +
                             std::to_string(quotient_max_remainder_bits) + ", got " + std::to_string(r));
    if (s > max_filter_bits / (r + quotient_metadata_bits))
      throw invalid_argument("quotient filter: " + std::to_string(s) + " slots of " +
                             std::to_string(r + quotient_metadata_bits) +
                             " bits exceed the maximum of 2^40 bits (128 GiB)");
    if (r > 64 - std::bit_width(s - 1))  // s·2^r ≤ 2^64 ⟺ s ≤ 2^(64−r) ⟺ bit_width(s − 1) ≤ 64 − r
      throw invalid_argument("quotient filter: " + std::to_string(s) + " slots times 2^" + std::to_string(r) +
                             " remainders exceed the 2^64 fingerprints of a 64-bit hash");
  }

  // ---- serialization hooks (used by format.hpp) ------------------------------------------------------
  // Header fields: bits = s (the slots), hashes = r, layout = 0, extra all zero (docs/format.md).

  filter_parameters parameters() const noexcept {
    filter_parameters p;
    p.primary = slots_;
    p.secondary = r_;
    p.layout = 0;
    return p;
  }
  template <class Fn>
  void for_each_payload_segment(Fn&& fn) const {
    fn(std::span<const std::byte>(storage_.data(), storage_.size()));
  }
  static std::uint64_t payload_size(const filter_parameters& p) {
    if (p.layout != 0) throw invalid_argument("quotient filter: layout must be 0, got " + std::to_string(p.layout));
    check_geometry(p.primary, p.secondary);
    for (std::uint64_t x : p.extra)
      if (x != 0) throw invalid_argument("reserved header bytes are not zero");
    return storage_bytes(p.primary, p.secondary);
  }
  /// Adopts `payload` (zero-copy when it is a file mapping) after checking that the table is one this
  /// filter could have written (see validate_table); throws format_error saying what is wrong.
  static quotient_filter from_payload(const filter_parameters& p, std::uint64_t seed, std::uint64_t inserted,
                                      byte_storage payload) {
    try {
      (void)payload_size(p);
    } catch (const invalid_argument& e) {
      throw format_error(std::string("invalid parameters: ") + e.what());
    }
    if (payload.size() != storage_bytes(p.primary, p.secondary))
      throw format_error("payload holds " + std::to_string(payload.size()) + " bytes but the parameters need " +
                         std::to_string(storage_bytes(p.primary, p.secondary)));
    quotient_filter f(p.primary, p.secondary, Hasher(seed), std::move(payload));
    const std::uint64_t stored = f.validate_table();
    if (stored != inserted)
      throw format_error("the header announces " + std::to_string(inserted) + " fingerprints but the table holds " +
                         std::to_string(stored));
    f.entries_ = stored;
    return f;
  }

  // ---- single keys -----------------------------------------------------------------------------------

  /// The digest the fingerprint derives from.

  /// Stores the key's fingerprint (another copy if it is already there). Returns false, changing nothing,
  /// when the filter is full (capacity() fingerprints stored).
  bool insert(const digest& d) { return insert_fingerprint(fingerprint(d)); }

  /// False means certainly absent; true means present or a false positive (rate: predicted_fpr()).
  bool contains(const digest& d) const noexcept { return count_fingerprint(fingerprint(d), true) != 0; }

  /// Copies of the key's fingerprint stored: the times it was inserted (and not erased), plus the copies of
  /// any other key with the same fingerprint.
  std::uint64_t count(const digest& d) const noexcept { return count_fingerprint(fingerprint(d), false); }

  /// Removes one copy of the key's fingerprint and shifts the rest of its cluster back. Returns false and
  /// changes nothing when the fingerprint is absent. Erase only keys you inserted: erasing a false positive
  /// removes another key's fingerprint.
  bool erase(const digest& d) { return erase_fingerprint(fingerprint(d)); }

  // ---- bulk calls: ranges of keys or of digests ------------------------------------------------------
  // Keys are hashed batch_size at a time and each canonical slot is prefetched before it is touched, so a
  // batch keeps many cache misses in flight.

  /// Inserts every key; returns how many were stored (fewer than the keys once the filter is full).
  template <std::ranges::input_range R>
  std::size_t insert_many(const R& keys) {
    std::size_t stored = 0;
    pipelined(
        keys, [&](const digest& d) { detail::prefetch_write(slot_word(fingerprint(d) >> r_)); },
        [&](std::span<const digest> batch) {
          for (const digest& d : batch) stored += insert(d);
        });
    return stored;
  }

  /// Writes one bool per key to `out`; returns how many answered true.
  template <std::ranges::input_range R, class Out>
    requires std::output_iterator<Out, bool>
  std::size_t contains_many(const R& keys, Out out) const {
    std::size_t hits = 0;
    pipelined(
        keys, [&](const digest& d) { detail::prefetch_read(slot_word(fingerprint(d) >> r_)); },
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

  /// How many of `keys` the filter answers true for.
  template <std::ranges::input_range R>
  std::size_t count_contained(const R& keys) const noexcept {
    std::size_t hits = 0;
    pipelined(
        keys, [&](const digest& d) { detail::prefetch_read(slot_word(fingerprint(d) >> r_)); },
        [&](std::span<const digest> batch) {
          for (const digest& d : batch) hits += contains(d);
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
    rebuild(slots_ * 2, r_ - 1, sorted_fingerprints());
  }

  /// Union: afterwards the filter holds every fingerprint of both (copies add up: a merge of the two
  /// sorted fingerprint streams). Throws incompatible_filters unless both have the same s, r and seed.
  /// When the union would exceed quotient_max_load, the result is resized (2s, r − 1, repeatedly as
  /// needed) first, so afterwards this filter may no longer be compatible with `other`; invalid_argument
  /// when even r = 1 cannot hold it.
  void merge(const quotient_filter& other) {
    check_compatible(other, "merge");
    const std::vector<std::uint64_t> mine = sorted_fingerprints();
    const std::vector<std::uint64_t> theirs = other.sorted_fingerprints();
    std::vector<std::uint64_t> all(mine.size() + theirs.size());
    std::merge(mine.begin(), mine.end(), theirs.begin(), theirs.end(), all.begin());
    std::uint64_t s = slots_;
    std::uint32_t r = r_;
    while (all.size() > max_entries_for(s)) {
      if (r == 1)
        throw invalid_argument("quotient filter: the union of " + std::to_string(all.size()) +
                               " fingerprints does not fit even with 1 remainder bit");
      s *= 2;
      --r;
      check_geometry(s, r);
    }
    rebuild(s, r, all);
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
  std::uint64_t fingerprint(const digest& d) const noexcept {
    return static_cast<std::uint64_t>((static_cast<uint128_t>(d.low) * slots_) >> (64 - r_));
  }
  /// Bits of the table: s·(r + 3), the `bits` of a quotient filter_plan.
  std::uint64_t table_bits() const noexcept { return slots_ * width_; }
  std::uint64_t seed() const noexcept { return hasher_.seed(); }
  /// Memory held: the table, this object and the scratch space of insert and erase.
  std::size_t size_in_bytes() const noexcept {
    return storage_.size() + sizeof(*this) + scratch_.capacity() * sizeof(std::uint64_t);
  }
  const Hasher& hasher() const noexcept { return hasher_; }
  const byte_storage& storage() const noexcept { return storage_; }
  bool is_mapped() const noexcept { return storage_.file_backed(); }

  /// Every stored fingerprint F = quotient·2^r + remainder, ascending, copies repeated.
  std::vector<std::uint64_t> sorted_fingerprints() const {
    std::vector<std::uint64_t> out;
    out.reserve(entries_);
    const std::uint64_t e = first_empty_slot();
    // Walking from just after an empty slot, quotients ascend from e + 1 and wrap once past the end.
    for_each_block_from(e, [&](std::uint64_t quotient, std::uint64_t remainder) {
      out.push_back((quotient << r_) | remainder);
    });
    const auto wrapped = std::partition_point(out.begin(), out.end(), [&](std::uint64_t f) { return (f >> r_) > e; });
    std::rotate(out.begin(), wrapped, out.end());
    return out;
  }

  friend bool operator==(const quotient_filter& a, const quotient_filter& b) noexcept {
    if (a.slots_ != b.slots_ || a.r_ != b.r_ || a.seed() != b.seed() || a.entries_ != b.entries_) return false;
    return std::equal(a.storage_.data(), a.storage_.data() + a.storage_.size(), b.storage_.data());
  }

 private:
  // A slot's value: bit 0 is_occupied, bit 1 is_continuation, bit 2 is_shifted, bits 3… the remainder.
  static constexpr std::uint64_t occupied_bit = 1, continuation_bit = 2, shifted_bit = 4, metadata_mask = 7;
  static bool is_occupied(std::uint64_t v) noexcept { return v & occupied_bit; }
  static bool is_continuation(std::uint64_t v) noexcept { return v & continuation_bit; }
  static bool is_shifted(std::uint64_t v) noexcept { return v & shifted_bit; }
  /// Empty: no remainder. is_occupied implies a remainder in the slot (its run starts there or earlier
  /// remainders fill it), so an empty slot has all three bits clear.
  static bool is_empty(std::uint64_t v) noexcept { return (v & metadata_mask) == 0; }
  static std::uint64_t remainder_of(std::uint64_t v) noexcept { return v >> 3; }

  static std::uint64_t storage_bytes(std::uint64_t s, std::uint32_t r) noexcept {
    return (s * (r + quotient_metadata_bits) + 63) / 64 * 8;
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
    const std::uint64_t slots = plan.bits / (plan.hashes + quotient_metadata_bits);
    if (slots * (plan.hashes + quotient_metadata_bits) != plan.bits)
      throw invalid_argument("quotient filter: plan bits " + std::to_string(plan.bits) +
                             " are not s·(r + 3) with r = " + std::to_string(plan.hashes));
    return slots;
  }

  quotient_filter(std::uint64_t s, std::uint32_t r, const Hasher& h)
      : quotient_filter(s, r, h, byte_storage::allocate(checked_storage_bytes(s, r))) {}
  quotient_filter(std::uint64_t s, std::uint32_t r, const Hasher& h, byte_storage storage)
      : r_(r), width_(r + quotient_metadata_bits), slots_(s), slot_mask_((std::uint64_t{1} << width_) - 1),
        remainder_mask_((std::uint64_t{1} << r) - 1), max_entries_(max_entries_for(s)), hasher_(h),
        storage_(std::move(storage)) {}

  // ---- slots -----------------------------------------------------------------------------------------

  std::uint64_t* words() noexcept { return reinterpret_cast<std::uint64_t*>(storage_.data()); }
  const std::uint64_t* words() const noexcept { return reinterpret_cast<const std::uint64_t*>(storage_.data()); }
  const std::uint64_t* slot_word(std::uint64_t i) const noexcept { return words() + (i * width_ >> 6); }

  /// Slot i's r + 3 bits; a slot may straddle two words (never past the last: the slot ends inside it).
  std::uint64_t get(std::uint64_t i) const noexcept {
    const std::uint64_t bit = i * width_;
    const std::uint64_t* w = words() + (bit >> 6);
    const unsigned offset = bit & 63;
    std::uint64_t v = w[0] >> offset;
    if (offset + width_ > 64) v |= w[1] << (64 - offset);
    return v & slot_mask_;
  }
  void set(std::uint64_t i, std::uint64_t v) noexcept {
    const std::uint64_t bit = i * width_;
    std::uint64_t* w = words() + (bit >> 6);
    const unsigned offset = bit & 63;
    w[0] = (w[0] & ~(slot_mask_ << offset)) | (v << offset);
    if (offset + width_ > 64) {
      const unsigned low = 64 - offset;  // bits of the slot in w[0]
      w[1] = (w[1] & ~(slot_mask_ >> low)) | (v >> low);
    }
  }
  std::uint64_t next(std::uint64_t i) const noexcept { return i + 1 == slots_ ? 0 : i + 1; }
  std::uint64_t previous(std::uint64_t i) const noexcept { return (i == 0 ? slots_ : i) - 1; }
  /// i mod s for i < 2s.
  std::uint64_t wrap(std::uint64_t i) const noexcept { return i >= slots_ ? i - slots_ : i; }

  /// The start of the cluster holding slot i (i full): walk back over shifted remainders.
  std::uint64_t cluster_start(std::uint64_t i) const noexcept {
    while (is_shifted(get(i))) i = previous(i);
    return i;
  }

  /// Where the run of quotient fq starts (fq is_occupied, so slot fq is full). The paper (§2) walks back to
  /// the cluster start and then forward twice over the same slots; here one walk back goes to the nearest
  /// slot j ≤ fq whose remainder lies in its own slot (full, not shifted: quotient j's run starts there;
  /// every slot passed is full), counting in [j, fq) the occupied quotients A (runs that come before fq's)
  /// and the run starts B (those of them that begin before slot fq). The other A − B begin at or after fq,
  /// so the walk forward from fq skips to the first run start and then A − B more.
  std::uint64_t run_start(std::uint64_t fq) const noexcept {
    std::uint64_t j = fq, v = get(fq);
    std::uint64_t pending = 0;  // A − B (modulo 2^64 on the way; A ≥ B at the end)
    while (is_shifted(v)) {
      j = previous(j);
      v = get(j);
      pending += (v & occupied_bit) - ((v & continuation_bit) == 0);
    }
    std::uint64_t s = fq;
    while (is_continuation(get(s))) s = next(s);
    for (; pending != 0; --pending) {
      do {
        s = next(s);
      } while (is_continuation(get(s)));
    }
    return s;
  }

  /// Copies of fingerprint f (stopping at the first with `first_only`). Runs are sorted, so the scan ends
  /// at the first larger remainder.
  std::uint64_t count_fingerprint(std::uint64_t f, bool first_only) const noexcept {
    const std::uint64_t fq = f >> r_, fr = f & remainder_mask_;
    if (!is_occupied(get(fq))) return 0;
    std::uint64_t s = run_start(fq), copies = 0;
    do {
      const std::uint64_t rem = remainder_of(get(s));
      if (rem > fr) break;
      if (rem == fr) {
        ++copies;
        if (first_only) break;
      }
      s = next(s);
    } while (is_continuation(get(s)));
    return copies;
  }

  // ---- insert and erase: decode a stretch, change it, write it back -----------------------------------

  /// Decodes slots b, b + 1, … up to the first empty slot into scratch_ as (quotient − b) << r | remainder,
  /// ascending (b must start a cluster). Returns the number of slots decoded.
  std::uint64_t decode_stretch(std::uint64_t b) {
    scratch_.clear();
    std::uint64_t quotient = 0;
    for (std::uint64_t u = 0;; ++u) {
      const std::uint64_t v = get(wrap(b + u));
      if (is_empty(v)) return u;
      if (u != 0 && !is_continuation(v)) {  // a new run: it belongs to the next occupied quotient
        do {
          ++quotient;
        } while (!is_occupied(get(wrap(b + quotient))));
      }
      scratch_.push_back((quotient << r_) | remainder_of(v));
    }
  }

  /// Writes scratch_ back over slots b … b + length − 1 in the canonical layout: each remainder at
  /// max(previous position + 1, its quotient), is_shifted where that is not the quotient, is_continuation
  /// within a run, is_occupied exactly at the quotients present. Slots left over become empty.
  void encode_stretch(std::uint64_t b, std::uint64_t length) noexcept {
    for (std::uint64_t u = 0; u < length; ++u) set(wrap(b + u), 0);
    std::uint64_t position = 0, previous_quotient = ~std::uint64_t{0};
    for (const std::uint64_t e : scratch_) {
      const std::uint64_t quotient = e >> r_;
      const std::uint64_t p = std::max(position, quotient);
      const std::uint64_t slot = wrap(b + p);
      std::uint64_t v = (e & remainder_mask_) << 3 | (get(slot) & occupied_bit);
      if (quotient == previous_quotient) v |= continuation_bit;
      if (p != quotient) v |= shifted_bit;
      set(slot, v);
      const std::uint64_t home = wrap(b + quotient);
      set(home, get(home) | occupied_bit);
      position = p + 1;
      previous_quotient = quotient;
    }
  }

  bool insert_fingerprint(std::uint64_t f) {
    if (entries_ >= max_entries_) return false;
    const std::uint64_t fq = f >> r_, fr = f & remainder_mask_;
    if (is_empty(get(fq))) {  // the canonical slot is free: nothing to shift
      set(fq, fr << 3 | occupied_bit);
      ++entries_;
      return true;
    }
    const std::uint64_t b = cluster_start(fq);
    const std::uint64_t length = decode_stretch(b);
    const std::uint64_t entry = (fq >= b ? fq - b : fq + slots_ - b) << r_ | fr;
    scratch_.insert(std::upper_bound(scratch_.begin(), scratch_.end(), entry), entry);
    encode_stretch(b, length + 1);  // the stretch grows into the empty slot that ended it
    ++entries_;
    return true;
  }

  bool erase_fingerprint(std::uint64_t f) {
    const std::uint64_t fq = f >> r_, fr = f & remainder_mask_;
    if (!is_occupied(get(fq))) return false;
    const std::uint64_t b = cluster_start(fq);
    const std::uint64_t length = decode_stretch(b);
    const std::uint64_t entry = (fq >= b ? fq - b : fq + slots_ - b) << r_ | fr;
    const auto at = std::lower_bound(scratch_.begin(), scratch_.end(), entry);
    if (at == scratch_.end() || *at != entry) return false;
    scratch_.erase(at);
    encode_stretch(b, length);  // the followers shift back; slots they leave become empty
    --entries_;
    return true;
  }

  // ---- whole table -----------------------------------------------------------------------------------

  std::uint64_t first_empty_slot() const noexcept {
    std::uint64_t i = 0;
    while (!is_empty(get(i))) ++i;  // at most capacity() < s slots are full
    return i;
  }

  /// Calls fn(quotient, remainder) for every stored fingerprint, walking once around the table from the
  /// empty slot e.
  template <class Fn>
  void for_each_block_from(std::uint64_t e, Fn&& fn) const {
    std::uint64_t quotient = e;
    for (std::uint64_t i = 1; i < slots_; ++i) {
      const std::uint64_t s = wrap(e + i);
      const std::uint64_t v = get(s);
      if (is_empty(v)) continue;
      if (!is_shifted(v)) {
        quotient = s;  // a cluster start is in its canonical slot
      } else if (!is_continuation(v)) {
        do {
          quotient = next(quotient);
        } while (!is_occupied(get(quotient)));
      }
      fn(quotient, remainder_of(v));
    }
  }

  /// Replaces the table by one of s slots of r-bit remainders holding the fingerprints `sorted` (ascending,
  /// each below s·2^r). Positions follow the canonical rule; the remainders pushed past the last slot
  /// wrap to the front and push the first runs in turn, so the first free position is found by iterating
  /// to a fixed point (it only grows, and fewer fingerprints than slots bound it).
  void rebuild(std::uint64_t s, std::uint32_t r, std::span<const std::uint64_t> sorted) {
    quotient_filter fresh(s, r, hasher_);
    std::uint64_t first_free = 0;
    for (;;) {
      std::uint64_t position = first_free;
      for (const std::uint64_t f : sorted) position = std::max(position, f >> r) + 1;
      const std::uint64_t wrapped = position > fresh.slots_ ? position - fresh.slots_ : 0;
      if (wrapped <= first_free) break;
      first_free = wrapped;
    }
    std::uint64_t position = first_free, previous_quotient = ~std::uint64_t{0};
    for (const std::uint64_t f : sorted) {
      const std::uint64_t quotient = f >> r;
      const std::uint64_t p = std::max(position, quotient);
      const std::uint64_t slot = fresh.wrap(p);
      std::uint64_t v = (f & fresh.remainder_mask_) << 3 | (fresh.get(slot) & occupied_bit);
      if (quotient == previous_quotient) v |= continuation_bit;
      if (p != quotient) v |= shifted_bit;
      fresh.set(slot, v);
      fresh.set(quotient, fresh.get(quotient) | occupied_bit);
      position = p + 1;
      previous_quotient = quotient;
    }
    fresh.entries_ = sorted.size();
    *this = std::move(fresh);
  }

  /// Checks that the table is one insert and erase could have produced and returns the fingerprints it
  /// holds; throws format_error otherwise. One pass from an empty slot, so a hostile table can neither
  /// loop nor read out of bounds: bits past the last slot are zero; some slot is empty; an empty slot holds
  /// no remainder; a cluster begins unshifted, not a continuation, at an occupied slot; each new run takes
  /// the next occupied quotient, which must not lie past the run's start (else there are more runs than
  /// occupied quotients); is_shifted is set exactly where a remainder is not at its quotient; remainders
  /// within a run ascend; every occupied quotient has a run; and the count is within capacity().
  std::uint64_t validate_table() const {
    const std::uint64_t used_bits = slots_ * width_;
    const std::byte* bytes = storage_.data();
    for (std::uint64_t bit = used_bits; bit < storage_.size() * 8; ++bit)
      if ((static_cast<unsigned>(bytes[bit / 8]) >> (bit % 8)) & 1u)
        throw format_error("padding bits past bit " + std::to_string(used_bits) + " are set");
    std::uint64_t e = 0;
    while (e < slots_ && !is_empty(get(e))) ++e;
    if (e == slots_) throw format_error("quotient table has no empty slot");
    auto bad = [&](std::uint64_t offset, const std::string& what) {
      return format_error("quotient table slot " + std::to_string(wrap(e + offset)) + ": " + what);
    };
    std::uint64_t stored = 0;
    std::uint64_t i = 0;  // offset from e; offset slots_ is e itself, which is empty
    while (i < slots_) {
      std::uint64_t v = get(wrap(e + i));
      if (is_empty(v)) {
        if (remainder_of(v) != 0) throw bad(i, "an empty slot holds a remainder");
        ++i;
        continue;
      }
      if (is_continuation(v)) throw bad(i, "a continuation with no run start before it");
      if (is_shifted(v)) throw bad(i, "a shifted remainder right after an empty slot");
      if (!is_occupied(v)) throw bad(i, "a remainder in its canonical slot, which is not marked occupied");
      std::uint64_t quotient = i, previous_remainder = remainder_of(v);
      ++stored;
      std::uint64_t j = i + 1;
      for (; j < slots_; ++j) {
        v = get(wrap(e + j));
        if (is_empty(v)) break;
        if (!is_continuation(v)) {
          do {
            ++quotient;
          } while (quotient <= j && !is_occupied(get(wrap(e + quotient))));
          if (quotient > j) throw bad(j, "a run starts but no occupied quotient is left for it");
        } else if (remainder_of(v) < previous_remainder) {
          throw bad(j, "remainders of a run out of order");
        }
        if (is_shifted(v) != (j != quotient)) throw bad(j, "is_shifted is inconsistent with the run's quotient");
        previous_remainder = remainder_of(v);
        ++stored;
      }
      for (std::uint64_t k = quotient + 1; k < j; ++k)
        if (is_occupied(get(wrap(e + k)))) throw bad(k, "marked occupied but has no run");
      i = j;
    }
    if (stored > max_entries_)
      throw format_error("quotient table holds " + std::to_string(stored) +
                         " fingerprints, more than its capacity of " + std::to_string(max_entries_));
    return stored;
  }

  // ---- batches ---------------------------------------------------------------------------------------

  template <class R, class Prefetch, class Use>
  void pipelined(const R& items, Prefetch&& prefetch, Use&& use) const {
    detail::pipelined(
        items, [this](const auto& k) { return hash(k); }, prefetch, use);
  }

  std::uint32_t r_;
  std::uint32_t width_;  // r + 3
  std::uint64_t slots_;
  std::uint64_t slot_mask_;
  std::uint64_t remainder_mask_;
  std::uint64_t max_entries_;
  std::uint64_t entries_ = 0;
  Hasher hasher_;
  byte_storage storage_;
  std::vector<std::uint64_t> scratch_;  // insert and erase decode their stretch here (reused)
};

static_assert(serializable_filter<quotient_filter<>>);

}  // namespace blume
