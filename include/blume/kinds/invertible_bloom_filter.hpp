// SPDX-License-Identifier: Apache-2.0
// The invertible Bloom lookup table (Goodrich & Mitzenmacher, "Invertible Bloom Lookup Tables", Allerton
// 2011; its use for set reconciliation: Eppstein, Goodrich, Uyeda & Varghese, "What's the Difference?
// Efficient Set Reconciliation without Prior Context", SIGCOMM 2011). Each cell holds a count, the XOR of
// the ids of the keys in it and the XOR of their checksums. Subtracting B's table from A's cancels every
// key the two share, whatever their sizes, and what is left (the symmetric difference) is listed back by
// peeling: a cell of count ±1 whose checksum matches its id holds exactly one key, which is removed from
// its other cells, freeing more. Peeling lists everything when the cells number a little more than the
// entries left: asymptotically 1.222 cells per entry for k = 3 and 1.295 for k = 4 (the 2-core thresholds
// of random hypergraphs, Molloy 2004); small tables need more (math::iblt_cells_for_difference).
//
// A key is hashed once; its id is the digest's low 64 bits. Its k cells, one in each of k equal
// subtables (so a key never hits one cell twice, which would hide it from peeling), and its checksum come
// from remixes of the id alone, because peeling knows only the id. Two keys with one id are one key to
// the table (about d·n/2^64 for n keys and d differences).
//
// A table may be cut into strata (Eppstein et al.'s strata estimator): a key goes to stratum i with
// probability 2^−(i+1) (the trailing zeros of a remix of its id) and to its k cells inside it. Decoding
// the strata of A − B from the last down estimates the size of the difference (estimate_difference); the
// strata_estimator type wraps such a table.
//
// As a membership filter (the kind's role in the list): a key is absent when one of its cells counts 0;
// the rate is the partitioned Bloom filter's, math::partitioned_fpr, with n the entries held. Cells of 16
// bytes make that an expensive filter: the kind's worth is decode().
//
// Erase only keys that were inserted. A key with a cell of count 0 is refused and nothing changes; a false
// positive is erased like a key, so decode() lists it as −1, and each of its cells that counted one key
// drops to 0, so that key answers "no" from then on. At 100,000 keys planned for 1%, erasing 100,000 keys
// never inserted erased about 960 false positives, each damaging 4.7 inserted keys: 4,500 of them (4.5%)
// then answered "no" (tests/erase_test.cpp). To take away keys that were never inserted, subtract a table
// of them instead.
//
// Thread safety: const calls may run concurrently; insert, erase, merge and subtract need exclusive access.
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
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
#include "blume/plan.hpp"
#include "blume/storage.hpp"

namespace blume {

/// What decode() lists: the ids (digest.low of the keys) of the entries counted +1 (inserted here and not
/// subtracted: only in A of A − B) and −1 (only in B), each sorted. `complete` says the table was emptied:
/// the lists are then the whole difference; otherwise they are what could be recovered, and more remain.
struct iblt_listing {
  bool complete = false;
  std::vector<std::uint64_t> only_here;
  std::vector<std::uint64_t> only_there;
  std::uint64_t recovered() const noexcept { return only_here.size() + only_there.size(); }
};

namespace detail {

/// One cell, 16 bytes, little-endian in files. The count is kept modulo 2^32 and read as signed: only the
/// counts of a difference need to fit, so a table of a large set subtracted from a table of another still
/// decodes after its counts wrapped.
struct iblt_cell {
  std::uint32_t count;
  std::uint32_t check;
  std::uint64_t id;
};
static_assert(sizeof(iblt_cell) == 16);

/// SplitMix64's output function: the ids are already uniform, so one strong finaliser per use gives the
/// cells, the checksum and the stratum as independent values.
constexpr std::uint64_t iblt_remix(std::uint64_t x) noexcept { return splitmix64_mix(x); }
inline constexpr std::uint64_t iblt_gamma = 0x9e3779b97f4a7c15ULL;

/// The checksum that tells a cell of one entry from a mix whose count happens to be ±1.
constexpr std::uint32_t iblt_checksum(std::uint64_t id) noexcept { return static_cast<std::uint32_t>(iblt_remix(id)); }
/// The stratum of an id: the trailing zeros of 32 independent bits, at most strata − 1.
constexpr std::uint32_t iblt_stratum(std::uint64_t id, std::uint32_t strata) noexcept {
  if (strata == 1) return 0;
  const auto bits = static_cast<std::uint32_t>(iblt_remix(id) >> 32);
  return std::min<std::uint32_t>(static_cast<std::uint32_t>(std::countr_zero(bits)), strata - 1);
}

}  // namespace detail

template <hasher Hasher = xxh3_hasher>
class invertible_bloom_filter : public detail::key_interface<invertible_bloom_filter<Hasher>> {
  using key_calls = detail::key_interface<invertible_bloom_filter>;
  using cell = detail::iblt_cell;

 public:
  using key_calls::contains;
  using key_calls::erase;
  using key_calls::hash;
  using key_calls::insert;
  using hasher_type = Hasher;
  static constexpr filter_kind kind{23};
  static constexpr std::string_view name = "iblt";
  static constexpr kind_input input = kind_input::keys;
  static constexpr bool is_static = false;
  static constexpr std::uint32_t cell_bytes = sizeof(cell);
  /// The header's layout field: the cell's bits, so that another cell layout can be told apart.
  static constexpr std::uint32_t cell_layout = 8 * cell_bytes;
  static constexpr size_unit unit{"cells", "cell", 8 * cell_bytes};
  static constexpr std::uint32_t min_hashes = 2;
  static constexpr std::uint32_t max_hashes = 16;
  /// Strata hold the trailing zeros of 32 bits.
  static constexpr std::uint32_t max_strata = 32;
  /// Cells within the 2^40-bit limit every kind keeps.
  static constexpr std::uint64_t max_cells = max_filter_bits / (8 * cell_bytes);

  // The planner's model, in cells: the partitioned filter's rate (one cell per subtable, a key absent when
  // one of them counts 0), with at least the cells that list the entries back (detail::plan_iblt).
  static std::uint64_t plan_bytes(std::uint64_t cells) noexcept { return cells * cell_bytes; }
  static double model_fpr(double n, double m, double k) noexcept { return math::partitioned_fpr(n, m, k); }
  static filter_plan plan(std::uint64_t items, double fpr) {
    return detail::plan_iblt<invertible_bloom_filter>(items, fpr);
  }
  static filter_plan plan_for_bits(std::uint64_t items, std::uint64_t cells) {
    detail::check_budget(items, cells);
    if (cells > max_cells)
      throw invalid_argument("iblt: a budget of " + std::to_string(cells) + " cells of " + std::to_string(cell_bytes) +
                             " bytes exceeds the maximum of 2^40 bits (" + std::to_string(max_cells) + " cells)");
    return detail::plan_granular_for_bits<invertible_bloom_filter>(items, cells, 1, math::iblt_min_planned_hashes,
                                                                   math::iblt_max_planned_hashes, true);
  }

  /// A table of `capacity` keys whose membership rate is at most `fpr` and that lists its keys back.
  invertible_bloom_filter(std::uint64_t capacity, double fpr, std::uint64_t seed = Hasher::default_seed)
      : invertible_bloom_filter(plan(capacity, fpr), seed) {}
  explicit invertible_bloom_filter(const filter_plan& plan, std::uint64_t seed = Hasher::default_seed)
      : invertible_bloom_filter(plan.bits, plan.hashes, 1, seed) {}

  /// `cells` cells (a multiple of hashes · strata) in `strata` strata of `hashes` subtables each.
  static invertible_bloom_filter with_geometry(std::uint64_t cells, std::uint32_t hashes, std::uint32_t strata = 1,
                                               std::uint64_t seed = Hasher::default_seed) {
    return invertible_bloom_filter(cells, hashes, strata, seed);
  }
  /// A table sized to decode a difference of `differences` keys (math::iblt_cells_for_difference: at most
  /// 1% of decodes fail when the difference is that size).
  static invertible_bloom_filter for_difference(std::uint64_t differences, std::uint64_t seed = Hasher::default_seed) {
    return invertible_bloom_filter(math::iblt_cells_for_difference(differences),
                                   math::iblt_difference_hashes(differences), 1, seed);
  }
  /// An empty table of the same geometry and seed: what the other side fills to subtract.
  invertible_bloom_filter empty_like() const { return invertible_bloom_filter(cells_, hashes_, strata_, seed()); }

  // ---- keys ------------------------------------------------------------------------------------------

  /// Adds one entry of the key; always true (a table never refuses a key: an overfull one fails to decode).
  bool insert(const digest& d) noexcept {
    apply(d.low, 1);
    ++inserted_;
    return true;
  }
  template <std::ranges::input_range R>
  void insert_many(const R& keys) {
    for (auto&& k : keys) insert(k);
  }
  /// Removes one entry of the key. False, and nothing changes, when the key is certainly not in the table
  /// (a cell of count 0). A false positive is erased like a key, and decode() then lists it as −1: erase
  /// only keys that were inserted (to list keys that were not, subtract a table of them).
  bool erase(const digest& d) noexcept {
    if (!contains(d)) return false;
    apply(d.low, static_cast<std::uint32_t>(-1));
    ++erased_;
    return true;
  }
  /// False means certainly absent (a cell of the key counts 0); true means present or a false positive.
  bool contains(const digest& d) const noexcept {
    const std::uint64_t id = d.low;
    const std::uint64_t base = stratum_base(id);
    for (std::uint32_t j = 0; j < hashes_; ++j)
      if (table()[base + position(id, j)].count == 0) return false;
    return true;
  }

  // ---- tables ----------------------------------------------------------------------------------------

  /// Adds another table's entries (the multiset sum: a key in both counts twice).
  void merge(const invertible_bloom_filter& other) {
    check_compatible(other, "merge");
    combine(other, 1);
    inserted_ += other.inserted_;
    erased_ += other.erased_;
  }
  /// Takes away another table's entries: afterwards the table holds A − B, the keys only in A counted +1
  /// and those only in B −1, whatever the sizes of A and B. incompatible_filters unless both have the same
  /// cells, hashes, strata and seed.
  void subtract(const invertible_bloom_filter& other) {
    check_compatible(other, "subtract");
    combine(other, static_cast<std::uint32_t>(-1));
    inserted_ += other.erased_;
    erased_ += other.inserted_;
  }

  /// Lists the entries by peeling (the table is unchanged). complete is true only when every cell was
  /// emptied, and then the lists are exactly the difference held (up to ids shared by two keys, and a
  /// failure of the 32-bit checksum together with the position check, both of which leave cells that do
  /// not empty); false means more entries remain than could be peeled: a larger table is needed.
  iblt_listing decode() const { return decode_range(0, cells_); }
  /// decode() of stratum `s` alone.
  iblt_listing decode_stratum(std::uint32_t s) const {
    if (s >= strata_)
      throw invalid_argument("stratum " + std::to_string(s) + " of a table of " + std::to_string(strata_) + " strata");
    return decode_range(s * stratum_cells(), stratum_cells());
  }

  // ---- state -----------------------------------------------------------------------------------------

  std::uint64_t cells() const noexcept { return cells_; }
  std::uint32_t hashes() const noexcept { return hashes_; }
  std::uint32_t strata() const noexcept { return strata_; }
  std::uint64_t stratum_cells() const noexcept { return cells_ / strata_; }
  /// Entries inserted, and subtracted from another table's erasures.
  std::uint64_t inserted() const noexcept { return inserted_; }
  /// Entries erased, and taken away by subtract (the other table's inserts).
  std::uint64_t erased() const noexcept { return erased_; }
  std::uint64_t seed() const noexcept { return hasher_.seed(); }
  const Hasher& hasher() const noexcept { return hasher_; }
  std::size_t size_in_bytes() const noexcept { return storage_.size() + sizeof(*this); }
  /// The membership rate with the entries held now (inserted − erased, at least 0), for one stratum's
  /// share of them in a table of strata.
  double predicted_fpr() const noexcept {
    const double held = inserted_ > erased_ ? static_cast<double>(inserted_ - erased_) : 0.0;
    return model_fpr(held, static_cast<double>(cells_), hashes_);
  }
  void clear() noexcept {
    storage_.zero();
    inserted_ = erased_ = 0;
  }

  friend bool operator==(const invertible_bloom_filter& a, const invertible_bloom_filter& b) noexcept {
    return a.cells_ == b.cells_ && a.hashes_ == b.hashes_ && a.strata_ == b.strata_ && a.seed() == b.seed() &&
           a.inserted_ == b.inserted_ && a.erased_ == b.erased_ &&
           std::memcmp(a.storage_.data(), b.storage_.data(), a.storage_.size()) == 0;
  }

  // ---- serialization hooks (format.hpp) --------------------------------------------------------------
  // primary = cells, secondary = k, layout = 128 (the cell's bits), extra[0] = entries erased, extra[1] =
  // strata (1: a plain table), the rest zero; inserted = entries inserted. Payload: the cells, 16 bytes
  // each: count (u32, two's complement), checksum XOR (u32), id XOR (u64), stratum 0 first, within it
  // subtable 0 first.

  filter_parameters parameters() const noexcept {
    filter_parameters p;
    p.primary = cells_;
    p.secondary = hashes_;
    p.layout = cell_layout;
    p.extra[0] = erased_;
    p.extra[1] = strata_;
    return p;
  }
  template <class Fn>
  void for_each_payload_segment(Fn&& fn) const {
    fn(std::span<const std::byte>(storage_.data(), storage_.size()));
  }
  static std::uint64_t payload_size(const filter_parameters& p) {
    check_parameters(p);
    return p.primary * cell_bytes;
  }
  /// Adopts the payload (zero-copy from a mapping) after checking what every table satisfies: each key
  /// adds to one cell of every subtable, so in every subtable the counts sum to inserted − erased (modulo
  /// 2^32) and the ids and checksums XOR to the same values as in the first.
  static invertible_bloom_filter from_payload(const filter_parameters& p, std::uint64_t seed, std::uint64_t inserted,
                                              byte_storage payload) {
    try {
      check_parameters(p);
    } catch (const invalid_argument& e) {
      throw format_error(std::string("invalid parameters: ") + e.what());
    }
    if (payload.size() != p.primary * cell_bytes) throw format_error("payload size does not match the parameters");
    invertible_bloom_filter f(p.primary, p.secondary, static_cast<std::uint32_t>(p.extra[1]), Hasher(seed),
                              std::move(payload));
    f.inserted_ = inserted;
    f.erased_ = p.extra[0];
    const std::uint64_t width = f.subtable_cells();
    cell first{};
    for (std::uint32_t j = 0; j < f.hashes_; ++j) {
      cell sum{};
      for (std::uint32_t s = 0; s < f.strata_; ++s) {
        const cell* c = f.table() + s * f.stratum_cells() + j * width;
        for (std::uint64_t i = 0; i < width; ++i) {
          sum.count += c[i].count;
          sum.check ^= c[i].check;
          sum.id ^= c[i].id;
        }
      }
      if (sum.count != static_cast<std::uint32_t>(inserted - p.extra[0]))
        throw format_error("subtable " + std::to_string(j) + " counts " + std::to_string(sum.count) +
                           " entries (modulo 2^32), not inserted − erased");
      if (j == 0) first = sum;
      else if (sum.check != first.check || sum.id != first.id)
        throw format_error("subtable " + std::to_string(j) + " holds other entries than subtable 0");
    }
    return f;
  }

 private:
  invertible_bloom_filter(std::uint64_t cells, std::uint32_t hashes, std::uint32_t strata, std::uint64_t seed)
      : cells_(checked_cells(cells, hashes, strata)), hashes_(hashes), strata_(strata), hasher_(seed),
        storage_(byte_storage::allocate(cells * cell_bytes)) {}
  invertible_bloom_filter(std::uint64_t cells, std::uint32_t hashes, std::uint32_t strata, const Hasher& h,
                          byte_storage storage)
      : cells_(cells), hashes_(hashes), strata_(strata), hasher_(h), storage_(std::move(storage)) {}

  static std::uint64_t checked_cells(std::uint64_t cells, std::uint32_t hashes, std::uint32_t strata) {
    if (hashes < min_hashes || hashes > max_hashes)
      throw invalid_argument("iblt: hash count must be in [" + std::to_string(min_hashes) + ", " +
                             std::to_string(max_hashes) + "], got " + std::to_string(hashes));
    if (strata == 0 || strata > max_strata)
      throw invalid_argument("iblt: strata must be in [1, " + std::to_string(max_strata) + "], got " +
                             std::to_string(strata));
    const std::uint64_t stride = std::uint64_t{hashes} * strata;
    if (cells == 0 || cells % stride != 0)
      throw invalid_argument("iblt: " + std::to_string(cells) +
                             " cells are not a positive multiple of hashes × strata (" + std::to_string(stride) + ")");
    if (cells > max_cells)
      throw invalid_argument("iblt: " + std::to_string(cells) + " cells of " + std::to_string(cell_bytes) +
                             " bytes exceed the maximum of 2^40 bits");
    return cells;
  }
  static void check_parameters(const filter_parameters& p) {
    if (p.layout != cell_layout)
      throw invalid_argument("cells of " + std::to_string(p.layout) + " bits, not " + std::to_string(cell_layout));
    if (p.extra[1] > max_strata)
      throw invalid_argument("strata must be in [1, " + std::to_string(max_strata) + "], got " +
                             std::to_string(p.extra[1]));
    for (std::size_t i = 2; i < p.extra.size(); ++i)
      if (p.extra[i] != 0) throw invalid_argument("reserved header bytes are not zero");
    checked_cells(p.primary, p.secondary, static_cast<std::uint32_t>(p.extra[1]));
  }
  void check_compatible(const invertible_bloom_filter& other, const char* what) const {
    if (other.cells_ != cells_ || other.hashes_ != hashes_ || other.strata_ != strata_ || other.seed() != seed())
      throw incompatible_filters(std::string("cannot ") + what + " iblt tables that differ in cells (" +
                                 std::to_string(cells_) + ", " + std::to_string(other.cells_) + "), hashes (" +
                                 std::to_string(hashes_) + ", " + std::to_string(other.hashes_) + "), strata (" +
                                 std::to_string(strata_) + ", " + std::to_string(other.strata_) + ") or seed");
  }

  cell* table() noexcept { return reinterpret_cast<cell*>(storage_.data()); }
  const cell* table() const noexcept { return reinterpret_cast<const cell*>(storage_.data()); }
  std::uint64_t subtable_cells() const noexcept { return cells_ / strata_ / hashes_; }
  std::uint64_t stratum_base(std::uint64_t id) const noexcept {
    return detail::iblt_stratum(id, strata_) * stratum_cells();
  }
  /// The id's cell in subtable j, from the start of its stratum.
  std::uint64_t position(std::uint64_t id, std::uint32_t j) const noexcept {
    const std::uint64_t width = subtable_cells();
    return j * width + reduce(detail::iblt_remix(id + (j + 1) * detail::iblt_gamma), width);
  }
  static void add_entry(cell& c, std::uint64_t id, std::uint32_t check, std::uint32_t count) noexcept {
    c.count += count;
    c.check ^= check;
    c.id ^= id;
  }
  void apply(std::uint64_t id, std::uint32_t count) noexcept {
    const std::uint64_t base = stratum_base(id);
    const std::uint32_t check = detail::iblt_checksum(id);
    for (std::uint32_t j = 0; j < hashes_; ++j) add_entry(table()[base + position(id, j)], id, check, count);
  }
  void combine(const invertible_bloom_filter& other, std::uint32_t sign) noexcept {
    cell* mine = table();
    const cell* theirs = other.table();
    for (std::uint64_t i = 0; i < cells_; ++i)
      add_entry(mine[i], theirs[i].id, theirs[i].check, sign * theirs[i].count);
  }

  /// Peels cells [first, first + count) of a copy. A cell is taken for one entry when its count is ±1, its
  /// checksum is the id's and the id's cell in that subtable of that stratum is this one.
  iblt_listing decode_range(std::uint64_t first, std::uint64_t count) const {
    std::vector<cell> work(table() + first, table() + first + count);
    const std::uint64_t width = subtable_cells();
    const std::uint64_t per_stratum = stratum_cells();
    const auto pure = [&](std::uint64_t i) {
      const cell& c = work[i];
      if (c.count != 1 && c.count != static_cast<std::uint32_t>(-1)) return false;
      if (c.check != detail::iblt_checksum(c.id)) return false;
      const std::uint64_t at = first + i;
      if (detail::iblt_stratum(c.id, strata_) != at / per_stratum) return false;
      const auto j = static_cast<std::uint32_t>(at % per_stratum / width);
      return position(c.id, j) == at % per_stratum;
    };
    iblt_listing out;
    std::vector<std::uint64_t> pending;
    pending.reserve(count);
    for (std::uint64_t i = count; i-- > 0;) pending.push_back(i);
    // A true entry is peeled once and empties a cell for good, so more peels than cells means the
    // checksums were fooled: stop, and the leftovers report the failure.
    std::uint64_t peels = 0;
    while (!pending.empty() && peels <= count) {
      const std::uint64_t i = pending.back();
      pending.pop_back();
      if (!pure(i)) continue;
      const std::uint64_t id = work[i].id;
      const std::uint32_t sign = work[i].count;
      (sign == 1 ? out.only_here : out.only_there).push_back(id);
      ++peels;
      const std::uint64_t base = stratum_base(id) - first;
      const std::uint32_t check = detail::iblt_checksum(id);
      for (std::uint32_t j = 0; j < hashes_; ++j) {
        const std::uint64_t at = base + position(id, j);
        add_entry(work[at], id, check, static_cast<std::uint32_t>(0) - sign);
        pending.push_back(at);
      }
    }
    out.complete =
        std::all_of(work.begin(), work.end(), [](const cell& c) { return c.count == 0 && c.check == 0 && c.id == 0; });
    std::sort(out.only_here.begin(), out.only_here.end());
    std::sort(out.only_there.begin(), out.only_there.end());
    return out;
  }

  std::uint64_t cells_;
  std::uint32_t hashes_;
  std::uint32_t strata_;
  Hasher hasher_;
  byte_storage storage_;
  std::uint64_t inserted_ = 0;
  std::uint64_t erased_ = 0;
};

/// The estimate of |A △ B| from two tables of strata (Eppstein et al. 2011, §3.2): strata are decoded from
/// the last (rarest) down; at the first that does not decode, i, the entries counted so far are scaled by
/// 2^(i+1); when all decode the count is exact. `exact` says which.
struct difference_estimate {
  double estimate = 0;
  bool exact = false;
};

template <hasher Hasher>
difference_estimate estimate_difference(const invertible_bloom_filter<Hasher>& a,
                                        const invertible_bloom_filter<Hasher>& b) {
  invertible_bloom_filter<Hasher> diff = a;
  diff.subtract(b);
  std::uint64_t counted = 0;
  for (std::uint32_t s = diff.strata(); s-- > 0;) {
    const iblt_listing l = diff.decode_stratum(s);
    if (!l.complete) return {std::ldexp(static_cast<double>(counted), static_cast<int>(s) + 1), false};
    counted += l.recovered();
  }
  return {static_cast<double>(counted), true};
}

static_assert(serializable_filter<invertible_bloom_filter<>>);
static_assert(can_erase<invertible_bloom_filter<>> && can_merge<invertible_bloom_filter<>>);
static_assert(!can_intersect<invertible_bloom_filter<>> && !can_count<invertible_bloom_filter<>>);

}  // namespace blume
