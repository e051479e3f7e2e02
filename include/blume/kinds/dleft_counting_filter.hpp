// SPDX-License-Identifier: Apache-2.0
// The d-left counting Bloom filter (Bonomi, Mitzenmacher, Panigrahy, Singh & Varghese, "An Improved
// Construction for Counting Bloom Filters", ESA 2006): what a counting Bloom filter does, erase included,
// in about half its memory. A key's fingerprint h, uniform in [0, B·2^r), is stored once, as an r-bit
// remainder and a small counter, in one of d candidate buckets (one per subtable): the least loaded, the
// leftmost on ties, which keeps every bucket close to the mean (d-left hashing, Vöcking 2003).
//
// Bucket i of h is (q + g_i(ρ)) mod B with q = ⌊h / 2^r⌋ and ρ = h mod 2^r (g_0 = 0): for a fixed remainder
// this is a permutation of the buckets, so (subtable, bucket, remainder) names h uniquely, two fingerprints
// never share a cell, and a stored cell gives h back without the key. Inserting h again raises its
// counter; erasing lowers it and frees the cell at zero. Counters saturate at 2^C − 1 and stay there, as
// the counting filter's do (after an overflow the true count is unknown, and lowering it could later make
// a false negative).
//
// Erase only keys that were inserted. A key whose fingerprint is not stored is refused and nothing changes.
// A false positive is a key whose fingerprint equals an inserted key's, so erasing it lowers that key's
// counter, freeing the cell when it was the only occurrence, and the key answers "no" from then on (a false
// negative). At 100,000 keys planned for 1% (0.58% at that load), erasing 100,000 keys never inserted made
// about 575 inserted keys (0.58%) answer "no" (tests/erase_test.cpp).
//
// Growth (the paper's "move into a table of twice the size"): when all d buckets of a new fingerprint are
// full, the table doubles its buckets and takes one bit from the remainder. The range 2B·2^(r−1) = B·2^r
// is unchanged and so is every key's h, now split one bit further left, so each cell moves to its place in
// the larger table without the key. The rate at n keys is therefore unchanged by growing and rises with n
// like n/(B·2^r): a filter planned for n keys at ε holds 2n at about 2ε after one growth, 4n at 4ε after
// two, until the remainder is one bit.
//
// Thread safety: const calls may run concurrently; insert, erase, merge, intersect and clear need exclusive
// access.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <cstring>
#include <ranges>
#include <span>
#include <string>
#include <string_view>
#include <utility>

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

/// The shape of a d-left table: `subtables` (d) × `buckets` (B) buckets of `cells` (c) cells, each cell an
/// r-bit remainder above a C-bit counter. A bucket takes ⌈c·(r + C)/8⌉ bytes; the table is followed by 8
/// zero bytes, so a cell is read with one 8-byte load wherever it lies.
struct dleft_geometry {
  static constexpr std::uint32_t max_subtables = 8;
  static constexpr std::uint32_t max_cells = 32;
  static constexpr std::uint32_t max_counter_bits = 8;

  std::uint32_t subtables = dleft_default_subtables;
  std::uint64_t buckets = 0;
  std::uint32_t cells = dleft_default_bucket_cells;
  std::uint32_t remainder_bits = 0;
  std::uint32_t counter_bits = dleft_default_counter_bits;

  std::uint32_t cell_bits() const noexcept { return remainder_bits + counter_bits; }
  std::uint64_t bucket_bytes() const noexcept { return (std::uint64_t{cells} * cell_bits() + 7) / 8; }
  std::uint64_t table_bytes() const noexcept { return subtables * buckets * bucket_bytes() + 8; }
  /// The size of the fingerprint range, B·2^r (as a double: it may be 2^64).
  double fingerprints() const noexcept { return static_cast<double>(buckets) * std::exp2(remainder_bits); }

  /// Throws invalid_argument naming the first bad value.
  void validate() const {
    auto bad = [](const std::string& what) { throw invalid_argument("d-left counting filter: " + what); };
    if (subtables == 0 || subtables > max_subtables)
      bad("subtables must be in [1, " + std::to_string(max_subtables) + "], got " + std::to_string(subtables));
    if (cells == 0 || cells > max_cells)
      bad("cells per bucket must be in [1, " + std::to_string(max_cells) + "], got " + std::to_string(cells));
    if (counter_bits == 0 || counter_bits > max_counter_bits)
      bad("counter bits must be in [1, " + std::to_string(max_counter_bits) + "], got " + std::to_string(counter_bits));
    if (remainder_bits == 0 || remainder_bits + counter_bits > dleft_max_cell_bits)
      bad("remainder bits must be in [1, " + std::to_string(dleft_max_cell_bits - counter_bits) + "] with " +
          std::to_string(counter_bits) + "-bit counters, got " + std::to_string(remainder_bits));
    if (buckets == 0) bad("the bucket count must be at least 1, got 0");
    if (buckets > max_filter_bits / (std::uint64_t{subtables} * cells * cell_bits()))
      bad(std::to_string(subtables) + " × " + std::to_string(buckets) + " buckets of " + std::to_string(cells) +
          " cells of " + std::to_string(cell_bits()) + " bits exceed the maximum of 2^40 bits");
    if (fingerprints() > 0x1p64)
      bad(std::to_string(buckets) + " buckets times 2^" + std::to_string(remainder_bits) +
          " remainders exceed the 2^64 fingerprints of a 64-bit hash");
  }
};

template <hasher Hasher = xxh3_hasher>
class dleft_counting_filter : public detail::key_interface<dleft_counting_filter<Hasher>> {
  using key_calls = detail::key_interface<dleft_counting_filter>;

 public:
  using key_calls::contains;
  using key_calls::count;
  using key_calls::erase;
  using key_calls::hash;
  using key_calls::insert;
  using hasher_type = Hasher;
  static constexpr filter_kind kind{24};
  static constexpr std::string_view name = "dleft";
  static constexpr kind_input input = kind_input::keys;
  static constexpr bool is_static = false;
  /// What the file header's primary field holds, as `blume info` names it.
  static constexpr std::string_view primary_field = "buckets per subtable";
  static constexpr std::size_t batch_size = detail::pipeline_batch;
  /// Most doublings one insert makes. A doubling halves the load of the key's d buckets, so one that leaves
  /// all of them full happens with probability about 2^−(c·d) (2^−32 at the default shape); a key that
  /// needs more is one a file placed beside its fingerprint: a table of 1 bucket of 1 cell holding a key's
  /// fingerprint with the last bit flipped grows 2^(r−1)-fold on that key's insert (2^19 at r = 20,
  /// measured; 2^30 buckets, 1 GiB, from a 204-byte file at r = 31). Two doublings bound what one insert
  /// can ask of any table to 4 times its size.
  static constexpr std::uint32_t max_doublings_per_insert = 2;

  // The planner's model: m = the table's bits d·B·c·(r + C) with the default d, c and C; k = r.
  static std::uint64_t plan_bytes(std::uint64_t bits) noexcept { return (bits + 7) / 8 + 8; }
  static double model_fpr(double n, double m, double k) noexcept {
    return math::dleft_fpr(n, m / math::dleft_table_bits(1, k), k);
  }
  static filter_plan plan(std::uint64_t items, double fpr) {
    return detail::plan_dleft<dleft_counting_filter>(items, fpr);
  }
  static filter_plan plan_for_bits(std::uint64_t items, std::uint64_t bits) {
    return detail::plan_dleft_for_bits<dleft_counting_filter>(items, bits);
  }

  /// A filter for `capacity` keys at false-positive rate `fpr` (at the design load), sized by plan().
  dleft_counting_filter(std::uint64_t capacity, double fpr, std::uint64_t seed = Hasher::default_seed)
      : dleft_counting_filter(plan(capacity, fpr), seed) {}

  /// The geometry of a d-left plan: the default d, c and C, r = hashes, B from the bits.
  explicit dleft_counting_filter(const filter_plan& plan, std::uint64_t seed = Hasher::default_seed)
      : dleft_counting_filter(geometry_of(plan), seed) {}

  explicit dleft_counting_filter(const dleft_geometry& geometry, std::uint64_t seed = Hasher::default_seed)
      : dleft_counting_filter(checked(geometry), Hasher(seed),
                              byte_storage::allocate(checked(geometry).table_bytes())) {}

  // ---- serialization hooks (used by format.hpp) ------------------------------------------------------
  // Header: bits = B, hashes = r, layout = c, extra = {d, C, 0, 0, 0, 0}; inserted = occupied cells.
  // Payload: the d·B buckets, subtable by subtable, then 8 zero bytes (docs/format.md).

  filter_parameters parameters() const noexcept {
    filter_parameters p;
    p.primary = g_.buckets;
    p.secondary = g_.remainder_bits;
    p.layout = g_.cells;
    p.extra = {g_.subtables, g_.counter_bits, 0, 0, 0, 0};
    return p;
  }
  template <class Fn>
  void for_each_payload_segment(Fn&& fn) const {
    fn(std::span<const std::byte>(storage_.data(), storage_.size()));
  }
  static std::uint64_t payload_size(const filter_parameters& p) { return geometry_of(p).table_bytes(); }
  /// Adopts `payload` (zero-copy when it is a file mapping) after checking every bucket: occupied cells
  /// first (a lookup stops at the first empty cell), no counter of zero under a remainder, zero padding
  /// and slack, and exactly `inserted` occupied cells.
  static dleft_counting_filter from_payload(const filter_parameters& p, std::uint64_t seed, std::uint64_t inserted,
                                            byte_storage payload) {
    dleft_geometry g;
    try {
      g = geometry_of(p);
    } catch (const invalid_argument& e) {
      throw format_error(std::string("invalid parameters: ") + e.what());
    }
    if (payload.size() != g.table_bytes())
      throw format_error("payload holds " + std::to_string(payload.size()) + " bytes but the parameters need " +
                         std::to_string(g.table_bytes()));
    dleft_counting_filter f(g, Hasher(seed), std::move(payload));
    const std::uint64_t stored = f.validate_table();
    if (stored != inserted)
      throw format_error("the header counts " + std::to_string(inserted) + " stored fingerprints but the table holds " +
                         std::to_string(stored));
    f.entries_ = stored;
    return f;
  }

  // ---- single keys -----------------------------------------------------------------------------------

  /// Adds one occurrence of the key: raises its fingerprint's counter, or stores the fingerprint in the
  /// least loaded of its d buckets (growing the table when all are full). False when the table cannot
  /// grow (a 1-bit remainder, or beyond 2^40 bits), changing nothing, or when max_doublings_per_insert
  /// doublings left the key's buckets full (the table has grown; inserting again grows it further).
  bool insert(const digest& d) { return add(fetched(d), 1); }

  /// False means certainly absent; true means present or a false positive (rate: predicted_fpr()).
  bool contains(const digest& d) const noexcept { return locate(fetched(d)).found(); }

  /// How often the key was inserted and not erased, plus the insertions of any key with the same
  /// fingerprint (so at least the true count; a saturated counter answers 2^C − 1).
  std::uint64_t count(const digest& d) const noexcept {
    const where w = locate(fetched(d));
    return w.found() ? cell(w.bucket, w.cell) & counter_mask_ : 0;
  }

  /// Removes one occurrence of the key. Refused (false, nothing changed) when its fingerprint is not
  /// stored, which is what erasing a never-inserted key does unless it is a false positive; then, as with
  /// every counting filter, it lowers the count of the key it is mistaken for. A saturated counter is left
  /// alone.
  bool erase(const digest& d) noexcept {
    const where w = locate(fetched(d));
    if (!w.found()) return false;
    std::byte* bucket = w.bucket;
    const std::uint64_t c = cell(bucket, w.cell);
    const std::uint64_t n = c & counter_mask_;
    if (n == counter_mask_) return true;
    if (n > 1) {
      set_cell(bucket, w.cell, c - 1);
      return true;
    }
    // The last occurrence: the bucket's last occupied cell fills the hole, keeping occupied cells first.
    const std::uint32_t last = load_of(bucket) - 1;
    set_cell(bucket, w.cell, cell(bucket, last));
    set_cell(bucket, last, 0);
    --entries_;
    return true;
  }

  // ---- bulk calls: ranges of keys or of digests ------------------------------------------------------
  // Keys are hashed batch_size at a time and their d buckets prefetched before they are touched.

  /// Inserts every key; returns how many were stored (fewer only once the table cannot grow).
  template <std::ranges::input_range R>
  std::size_t insert_many(const R& keys) {
    std::size_t stored = 0;
    pipelined(keys, [&](std::span<const probe> batch) {
      for (const probe& p : batch) stored += add(p, 1);
    });
    return stored;
  }

  /// Writes one bool per key to `out`; returns how many answered true.
  template <std::ranges::input_range R, class Out>
    requires std::output_iterator<Out, bool>
  std::size_t contains_many(const R& keys, Out out) const {
    std::size_t hits = 0;
    pipelined(keys, [&](std::span<const probe> batch) {
      for (const probe& p : batch) {
        const bool hit = locate(p).found();
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
    pipelined(keys, [&](std::span<const probe> batch) {
      std::size_t batch_hits = 0;
      for (const probe& p : batch) batch_hits += locate(p).found();
      hits += batch_hits;
    });
    return hits;
  }

  // ---- whole-filter operations -----------------------------------------------------------------------

  void clear() noexcept {
    storage_.zero();
    entries_ = 0;
  }

  /// Doubles the buckets and takes one bit from the remainder, moving every cell (see the top of this
  /// file). False, changing nothing, when the remainder is already one bit or the doubled table would
  /// exceed 2^40 bits.
  bool grow() {
    if (!can_grow()) return false;
    dleft_geometry next = g_;
    next.buckets *= 2;
    next.remainder_bits -= 1;
    dleft_counting_filter grown(next, hasher_, byte_storage::allocate(next.table_bytes()));
    // Half the load in twice the buckets: a cell that finds its d new buckets full would need another
    // coincidence of d-left's improbable events; should it happen, this table stays as it was.
    bool moved = true;
    for_each_entry([&](std::uint64_t h, std::uint64_t n) { moved = moved && grown.add_without_growing(h, n); });
    if (!moved) return false;
    grown.generation_ = generation_ + 1;
    *this = std::move(grown);
    return true;
  }
  /// Whether grow() can double the table.
  bool can_grow() const noexcept {
    if (g_.remainder_bits <= 1) return false;
    return g_.buckets <= max_filter_bits / (2 * std::uint64_t{g_.subtables} * g_.cells * (g_.cell_bits() - 1));
  }

  /// Union: every fingerprint of `other` is added here with its count (counters add, saturating), growing
  /// this table if it must. Throws incompatible_filters unless both have the same subtables, cells per
  /// bucket, counter width, fingerprint range and seed (the buckets may differ by growth: a fingerprint is
  /// the same number in both); invalid_argument, with this filter unchanged, when the union cannot fit.
  void merge(const dleft_counting_filter& other) {
    check_compatible(other, "merge");
    dleft_counting_filter result = *this;
    bool ok = true;
    other.for_each_entry([&](std::uint64_t h, std::uint64_t n) {
      if (ok) ok = result.add(h, n, UINT32_MAX);  // a union may need what both tables hold, within 2^40 bits
    });
    if (!ok) throw invalid_argument("d-left counting filter: the union does not fit even after growing");
    *this = std::move(result);
  }

  /// Intersection: keeps the fingerprints stored in both, each with the smaller count. Sound where the
  /// counting filter's is: a key inserted into both has its fingerprint in both. Same requirements as
  /// merge(); the result keeps this filter's geometry.
  void intersect(const dleft_counting_filter& other) {
    check_compatible(other, "intersect");
    dleft_counting_filter result(g_, hasher_, byte_storage::allocate(g_.table_bytes()));
    for_each_entry([&](std::uint64_t h, std::uint64_t n) {
      const where w = other.locate(other.probe_of(h));
      if (w.found()) result.add_without_growing(h, std::min(n, other.cell(w.bucket, w.cell) & counter_mask_));
    });
    result.generation_ = generation_ + 1;
    *this = std::move(result);
  }

  /// Throws incompatible_filters naming the first parameter that differs.
  void check_compatible(const dleft_counting_filter& other, std::string_view operation = "combine") const {
    auto fail = [&](std::string_view what, double a, double b) {
      throw incompatible_filters("cannot " + std::string(operation) + " d-left counting filters: " + std::string(what) +
                                 " differ (" + detail::format_number(a) + " vs " + detail::format_number(b) + ")");
    };
    const dleft_geometry& a = g_;
    const dleft_geometry& b = other.g_;
    if (a.subtables != b.subtables) fail("subtable counts", a.subtables, b.subtables);
    if (a.cells != b.cells) fail("cells per bucket", a.cells, b.cells);
    if (a.counter_bits != b.counter_bits) fail("counter widths", a.counter_bits, b.counter_bits);
    if (a.fingerprints() != b.fingerprints()) fail("fingerprint ranges", a.fingerprints(), b.fingerprints());
    if (seed() != other.seed()) fail("seeds", static_cast<double>(seed()), static_cast<double>(other.seed()));
  }

  // ---- estimates and geometry ------------------------------------------------------------------------

  /// Fingerprints stored (distinct keys, less the few that share a fingerprint): exact, not an estimate.
  double estimated_count() const noexcept { return static_cast<double>(entries_); }
  /// Occupied cells; what the file header records as `inserted`.
  std::uint64_t inserted() const noexcept { return entries_; }
  std::uint64_t size() const noexcept { return entries_; }
  /// Cells at the design load: the keys the table holds before a full bucket becomes likely.
  std::uint64_t capacity() const noexcept {
    return static_cast<std::uint64_t>(static_cast<double>(cells_total()) * dleft_design_load);
  }
  /// Occupied cells over all cells.
  double load_factor() const noexcept { return static_cast<double>(entries_) / static_cast<double>(cells_total()); }

  /// The rate now: the stored fingerprints' share of the range, |S|/(B·2^r), exactly (a query's
  /// fingerprint is uniform over the range and matches only its own value).
  double predicted_fpr() const noexcept { return static_cast<double>(entries_) / g_.fingerprints(); }
  double predicted_fpr_at_capacity() const noexcept { return predicted_fpr_at(static_cast<double>(capacity())); }
  /// The rate after `items` distinct keys: 1 − (1 − 1/(B·2^r))^n (math::dleft_fpr; keys that share a
  /// fingerprint share its cell, so fewer cells than keys are stored).
  double predicted_fpr_at(double items) const noexcept {
    return math::dleft_fpr(items, static_cast<double>(g_.buckets), g_.remainder_bits);
  }

  const dleft_geometry& geometry() const noexcept { return g_; }
  std::uint64_t seed() const noexcept { return hasher_.seed(); }
  const Hasher& hasher() const noexcept { return hasher_; }
  std::size_t size_in_bytes() const noexcept { return storage_.size() + sizeof(*this); }
  const byte_storage& storage() const noexcept { return storage_; }
  bool is_mapped() const noexcept { return storage_.file_backed(); }

  /// The key's fingerprint h in [0, B·2^r). Growth keeps h: (low·2B) >> (64 − (r − 1)) = (low·B) >> (64 − r).
  std::uint64_t fingerprint(const digest& d) const noexcept {
    return static_cast<std::uint64_t>((static_cast<uint128_t>(d.low) * g_.buckets) >> (64 - g_.remainder_bits));
  }

  /// The number of cells in bucket `b` of subtable `t` that hold a fingerprint.
  std::uint32_t bucket_load(std::uint32_t t, std::uint64_t b) const noexcept { return load_of(bucket_at(t, b)); }

  friend bool operator==(const dleft_counting_filter& a, const dleft_counting_filter& b) noexcept {
    if (a.g_.subtables != b.g_.subtables || a.g_.buckets != b.g_.buckets || a.g_.cells != b.g_.cells ||
        a.g_.remainder_bits != b.g_.remainder_bits || a.g_.counter_bits != b.g_.counter_bits || a.seed() != b.seed() ||
        a.entries_ != b.entries_)
      return false;
    return std::equal(a.storage_.data(), a.storage_.data() + a.storage_.size(), b.storage_.data());
  }

 private:
  /// A fingerprint's remainder (shifted into cell position) and its d buckets.
  struct probe {
    std::uint64_t tagged = 0;  // ρ << C: a cell holds it when cell >> C == ρ
    std::uint64_t fingerprint = 0;
    std::uint64_t generation = 0;  // the table the buckets point into (a batch may outlive a growth)
    std::array<std::byte*, dleft_geometry::max_subtables> buckets{};
  };
  /// Where a fingerprint lives: its bucket and cell, or no bucket.
  struct where {
    std::byte* bucket = nullptr;
    std::uint32_t cell = 0;
    bool found() const noexcept { return bucket != nullptr; }
  };

  dleft_counting_filter(const dleft_geometry& g, const Hasher& h, byte_storage storage)
      : g_(g), hasher_(h), storage_(std::move(storage)) {
    cell_bits_ = g_.cell_bits();
    cell_mask_ = (std::uint64_t{1} << cell_bits_) - 1;
    counter_mask_ = (std::uint64_t{1} << g_.counter_bits) - 1;
    remainder_mask_ = (std::uint64_t{1} << g_.remainder_bits) - 1;
    bucket_bytes_ = g_.bucket_bytes();
    lanes16_ = cell_bits_ == 16 && g_.cells % 4 == 0;
    remainder_lanes_ = (~counter_mask_ & 0xffff) * 0x0001000100010001ULL;
  }

  static const dleft_geometry& checked(const dleft_geometry& g) {
    g.validate();
    return g;
  }
  static dleft_geometry geometry_of(const filter_plan& plan) {
    if (plan.kind != kind)
      throw invalid_argument("a d-left counting filter needs a d-left plan, got a plan for kind id " +
                             std::to_string(static_cast<int>(plan.kind)));
    dleft_geometry g;
    g.remainder_bits = plan.hashes;
    g.buckets = plan.bits / static_cast<std::uint64_t>(math::dleft_table_bits(1, plan.hashes));
    g.validate();
    return g;
  }
  static dleft_geometry geometry_of(const filter_parameters& p) {
    if (p.extra[0] > dleft_geometry::max_subtables || p.extra[1] > dleft_geometry::max_counter_bits ||
        p.layout > dleft_geometry::max_cells || p.secondary > dleft_max_cell_bits)
      throw invalid_argument("d-left counting filter: header fields out of range (subtables " +
                             std::to_string(p.extra[0]) + ", counter bits " + std::to_string(p.extra[1]) + ", cells " +
                             std::to_string(p.layout) + ", remainder bits " + std::to_string(p.secondary) + ")");
    for (std::size_t i = 2; i < p.extra.size(); ++i)
      if (p.extra[i] != 0) throw invalid_argument("reserved header bytes are not zero");
    dleft_geometry g;
    g.subtables = static_cast<std::uint32_t>(p.extra[0]);
    g.buckets = p.primary;
    g.cells = p.layout;
    g.remainder_bits = p.secondary;
    g.counter_bits = static_cast<std::uint32_t>(p.extra[1]);
    g.validate();
    return g;
  }

  std::uint64_t cells_total() const noexcept { return std::uint64_t{g_.subtables} * g_.buckets * g_.cells; }

  std::byte* bucket_at(std::uint32_t t, std::uint64_t b) const noexcept {
    return const_cast<std::byte*>(storage_.data()) + (t * g_.buckets + b) * bucket_bytes_;
  }
  std::uint64_t cell(const std::byte* bucket, std::uint32_t j) const noexcept {
    const std::uint64_t bit = std::uint64_t{j} * cell_bits_;
    std::uint64_t v;
    std::memcpy(&v, bucket + bit / 8, sizeof v);
    return (v >> (bit % 8)) & cell_mask_;
  }
  void set_cell(std::byte* bucket, std::uint32_t j, std::uint64_t value) const noexcept {
    const std::uint64_t bit = std::uint64_t{j} * cell_bits_;
    const unsigned shift = static_cast<unsigned>(bit % 8);
    std::uint64_t v;
    std::memcpy(&v, bucket + bit / 8, sizeof v);
    v = (v & ~(cell_mask_ << shift)) | (value << shift);
    std::memcpy(bucket + bit / 8, &v, sizeof v);
  }
  /// Occupied cells come first, so the load is the index of the first empty cell.
  std::uint32_t load_of(const std::byte* bucket) const noexcept {
    std::uint32_t j = 0;
    while (j < g_.cells && cell(bucket, j) != 0) ++j;
    return j;
  }

  /// g_i(ρ): subtable i's rotation of the buckets for remainder ρ (none for the first subtable).
  std::uint64_t offset(std::uint32_t i, std::uint64_t remainder) const noexcept {
    return i == 0 ? 0 : reduce(mix(remainder ^ (0x9e3779b97f4a7c15ULL * i)), g_.buckets);
  }

  [[gnu::always_inline]] probe probe_of(std::uint64_t h) const noexcept {
    probe p;
    const std::uint64_t q = h >> g_.remainder_bits;
    const std::uint64_t remainder = h & remainder_mask_;
    p.fingerprint = h;
    p.generation = generation_;
    p.tagged = remainder << g_.counter_bits;
    for (std::uint32_t i = 0; i < g_.subtables; ++i) {
      std::uint64_t b = q + offset(i, remainder);
      if (b >= g_.buckets) b -= g_.buckets;
      p.buckets[i] = bucket_at(i, b);
    }
    return p;
  }

  /// The key's probe, with the loads of all d buckets started before the first is scanned: a negative
  /// lookup and every insert read them all (measured at 10M keys: 105 → 70 ns per negative lookup).
  probe fetched(const digest& d) const noexcept {
    const probe p = probe_of(fingerprint(d));
    for (std::uint32_t i = 1; i < g_.subtables; ++i) detail::prefetch_read(p.buckets[i]);
    return p;
  }

  [[gnu::always_inline]] where locate(const probe& p) const noexcept {
    for (std::uint32_t i = 0; i < g_.subtables; ++i) {
      std::byte* bucket = p.buckets[i];
      if (const scanned s = scan(bucket, p.tagged); s.match != no_match) return {bucket, s.match};
    }
    return {};
  }

  /// Adds n occurrences of fingerprint h; grows when its buckets are full, at most `doublings` times.
  bool add(std::uint64_t h, std::uint64_t n, std::uint32_t doublings = max_doublings_per_insert) {
    return add(probe_of(h), n, doublings);
  }
  bool add(const probe& p, std::uint64_t n, std::uint32_t doublings = max_doublings_per_insert) {
    if (p.generation != generation_) return add(p.fingerprint, n, doublings);
    if (add_without_growing(p, n)) return true;
    for (std::uint32_t i = 0; i < doublings && grow(); ++i) {
      if (add_without_growing(p.fingerprint, n)) return true;
    }
    return false;
  }
  bool add_without_growing(std::uint64_t h, std::uint64_t n) { return add_without_growing(probe_of(h), n); }
  bool add_without_growing(const probe& p, std::uint64_t n) noexcept {
    std::uint32_t best = 0, best_load = g_.cells + 1;
    for (std::uint32_t i = 0; i < g_.subtables; ++i) {
      std::byte* bucket = p.buckets[i];
      const scanned s = scan(bucket, p.tagged);
      if (s.match != no_match) {
        const std::uint64_t c = cell(bucket, s.match);
        set_cell(bucket, s.match, (c & ~counter_mask_) | std::min((c & counter_mask_) + n, counter_mask_));
        return true;
      }
      if (s.load < best_load) {  // strictly less: the leftmost of equally loaded buckets
        best = i;
        best_load = s.load;
      }
    }
    if (best_load >= g_.cells) return false;
    set_cell(p.buckets[best], best_load, p.tagged | std::min(n, counter_mask_));
    ++entries_;
    return true;
  }

  static constexpr std::uint32_t no_match = ~std::uint32_t{0};
  /// A bucket's cell holding the remainder (no_match if none) and, when none does, its load.
  struct scanned {
    std::uint32_t match = no_match;
    std::uint32_t load = 0;
  };
  [[gnu::always_inline]] scanned scan(const std::byte* bucket, std::uint64_t tagged) const noexcept {
    if (lanes16_) return scan_lanes16(bucket, tagged);
    std::uint32_t j = 0;
    for (; j < g_.cells; ++j) {
      const std::uint64_t c = cell(bucket, j);
      if (c == 0) break;
      if ((c & ~counter_mask_) == tagged) return {j, 0};
    }
    return {no_match, j};
  }
  // 16-bit cells (the default: 12-bit remainders, 4-bit counters) are compared four to a 64-bit word, with
  // no branch per cell: a negative lookup reads d buckets of 8 cells, and a loop over 32 cells, each
  // extracted, compared and branched on, cost more than the buckets' cache misses.
  [[gnu::always_inline]] scanned scan_lanes16(const std::byte* bucket, std::uint64_t tagged) const noexcept {
    constexpr std::uint64_t ones = 0x0001000100010001ULL, low15 = 0x7fff7fff7fff7fffULL, high = ~low15;
    const std::uint64_t wanted = tagged * ones;
    std::uint32_t load = 0;
    for (std::uint32_t w = 0; w < g_.cells / 4; ++w) {
      std::uint64_t v;
      std::memcpy(&v, bucket + 8 * w, sizeof v);
      const std::uint64_t occupied = (((v & low15) + low15) | v) & high;  // the top bit of each non-zero lane
      const std::uint64_t x = (v & remainder_lanes_) ^ wanted;
      const std::uint64_t equal = ~(((x & low15) + low15) | x | low15);  // the top bit of each zero lane
      if (const std::uint64_t hit = equal & occupied; hit != 0)
        return {4 * w + static_cast<std::uint32_t>(std::countr_zero(hit)) / 16, 0};
      load += static_cast<std::uint32_t>(std::popcount(occupied));
      if (occupied != high) break;  // occupied cells come first: none past a word with an empty one
    }
    return {no_match, load};
  }

  /// fn(h, count) for every stored fingerprint: the cell's bucket and remainder give h back.
  template <class Fn>
  void for_each_entry(Fn&& fn) const {
    for (std::uint32_t i = 0; i < g_.subtables; ++i) {
      for (std::uint64_t b = 0; b < g_.buckets; ++b) {
        const std::byte* bucket = bucket_at(i, b);
        for (std::uint32_t j = 0; j < g_.cells; ++j) {
          const std::uint64_t c = cell(bucket, j);
          if (c == 0) break;
          const std::uint64_t remainder = c >> g_.counter_bits;
          const std::uint64_t off = offset(i, remainder);
          const std::uint64_t q = b >= off ? b - off : b + g_.buckets - off;
          fn((q << g_.remainder_bits) | remainder, c & counter_mask_);
        }
      }
    }
  }

  /// Checks what from_payload promises and returns the occupied cells.
  std::uint64_t validate_table() const {
    std::uint64_t stored = 0;
    const std::uint64_t used_bits = std::uint64_t{g_.cells} * cell_bits_;
    for (std::uint32_t i = 0; i < g_.subtables; ++i) {
      for (std::uint64_t b = 0; b < g_.buckets; ++b) {
        const std::byte* bucket = bucket_at(i, b);
        auto bad = [&](const std::string& what) {
          throw format_error("d-left subtable " + std::to_string(i) + ", bucket " + std::to_string(b) + ": " + what);
        };
        bool empty_seen = false;
        for (std::uint32_t j = 0; j < g_.cells; ++j) {
          const std::uint64_t c = cell(bucket, j);
          if (c == 0) {
            empty_seen = true;
            continue;
          }
          if (empty_seen) bad("cell " + std::to_string(j) + " is occupied after an empty cell");
          if ((c & counter_mask_) == 0) bad("cell " + std::to_string(j) + " holds a remainder with a zero count");
          ++stored;
        }
        if (used_bits % 8 != 0) {
          const auto last = std::to_integer<unsigned>(bucket[bucket_bytes_ - 1]);
          if ((last >> (used_bits % 8)) != 0) bad("padding bits past the last cell are set");
        }
      }
    }
    const std::byte* slack = storage_.data() + storage_.size() - 8;
    for (int k = 0; k < 8; ++k)
      if (slack[k] != std::byte{0}) throw format_error("d-left table: the 8 bytes after the buckets are not zero");
    return stored;
  }

  // ---- batches ---------------------------------------------------------------------------------------

  template <class R, class Use>
  void pipelined(const R& items, Use&& use) const {
    detail::pipelined_probes<probe>(
        items, [this](const auto& k) { return hash(k); },
        [this](const digest& d) {
          const probe p = probe_of(fingerprint(d));
          for (std::uint32_t i = 0; i < g_.subtables; ++i) detail::prefetch_read(p.buckets[i]);
          return p;
        },
        use);
  }

  dleft_geometry g_;
  Hasher hasher_;
  byte_storage storage_;
  std::uint32_t cell_bits_ = 0;
  std::uint64_t cell_mask_ = 0;
  std::uint64_t counter_mask_ = 0;
  std::uint64_t remainder_mask_ = 0;
  std::uint64_t bucket_bytes_ = 0;
  bool lanes16_ = false;               // cells of 16 bits, four to a word: scan_lanes16
  std::uint64_t remainder_lanes_ = 0;  // the remainder bits of four 16-bit cells
  std::uint64_t entries_ = 0;
  std::uint64_t generation_ = 0;  // counts growths, so probes made before one are not used after it
};

static_assert(serializable_filter<dleft_counting_filter<>>);
static_assert(can_erase<dleft_counting_filter<>> && can_count<dleft_counting_filter<>> &&
              can_merge<dleft_counting_filter<>> && can_intersect<dleft_counting_filter<>> &&
              may_be_full<dleft_counting_filter<>>);

}  // namespace blume
