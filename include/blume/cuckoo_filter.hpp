// The cuckoo filter (Fan, Andersen, Kaminsky & Mitzenmacher, "Cuckoo Filter: Practically Better Than
// Bloom", CoNEXT 2014): a table of buckets of b slots, each slot holding an f-bit fingerprint of a key or
// 0 for "empty". A key may live in two buckets; inserting into two full buckets evicts a resident
// fingerprint to *its* other bucket, and so on (partial-key cuckoo hashing). Unlike a Bloom filter it can
// erase keys and count copies, and at low rates it needs fewer bits per key (f/α versus 1.44·log2(1/ε)).
//
// Derivation from the key's one digest d (see hash.hpp):
//   fingerprint  fp = reduce(d.high, 2^f − 1) + 1            uniform in [1, 2^f − 1]; 0 marks an empty slot
//   primary      i1 = reduce(d.low, n)                        n = buckets of the sub-filter looked at
//   alternate    i2 = (H(fp) − i1) mod n,  H(fp) = reduce(fp·φ mod 2^64, n)
// Fan et al. use i2 = i1 ⊕ hash(fp), which is an involution only when n is a power of two, so their
// tables are rounded up to one (up to 2× the memory). (H − i) mod n is an involution for every n:
// H − (H − i) = i. The other bucket of a fingerprint is therefore found from either of its buckets and
// the fingerprint alone, which is all relocation needs, and the table can have exactly as many buckets as
// the plan asks for. H depends on fp only, as partial-key cuckoo hashing requires. It is Fibonacci
// hashing: fp·φ mod 2^64 (φ = 2^64/golden ratio, odd) spreads the 2^f − 1 possible offsets evenly over the
// whole table (by the three-distance theorem, consecutive fingerprints land about 0.38·n apart), at the
// cost of one multiply on the path of every lookup's second load.
//
// Fingerprints are packed tightly: slot s of a table occupies bits [s·f, s·f + f) of the table read as a
// little-endian bit string, so 12-bit fingerprints take 12 bits. A slot is read with one unaligned 64-bit
// load at byte ⌊s·f/8⌋; every table ends with at least 8 zero bytes of slack for that load.
//
// Growth (optional): with expansion e > 0, when an insert fails a new sub-filter of n·e^j buckets
// is chained (up to max_filters of them). Lookups, erase and count scan every sub-filter; inserts first
// take an empty slot in any sub-filter's two buckets, newest first (so room freed by erase is reused, and
// RedisBloom's CF.ADD order can be expressed), then relocate in the newest sub-filter only.
//
// Chained sub-filters need one more property, or erase could create false negatives: if keys a and b
// share a fingerprint and a bucket pair in sub-filter j while a's copy sits in an older sub-filter k,
// erasing a (newest first) removes b's copy from j, and b must then still see a's copy in k. So bucket
// pairs nest: a bucket of sub-filter j (n·e^j buckets) is read as mixed-radix digits (q; r_1 … r_j) with
// q < n and r < e; the primary is reduce(d.low, n·e^j), whose leading digits are the primary of every
// smaller sub-filter (⌊⌊x·n·e/2^64⌋/e⌋ = ⌊x·n/2^64⌋), and the alternate maps q ↦ (H(fp) − q) mod n and each
// r ↦ (G(fp) − r) mod e, still an involution. Equal pairs in sub-filter j then mean equal pairs in every
// older (smaller) one, and the erased key's own copy stands in for the one removed. With e = 1 all
// sub-filters have the same buckets and pairs; a single table needs none of this (two keys with one
// fingerprint sharing one bucket share both, since i2 = H(fp) − i1).
//
// Thread safety: not a concurrent structure. Writers (insert, insert_many, erase, clear, assignment) need
// exclusive access; const calls (contains, contains_many, count, count_contained, estimated_count,
// predicted_fpr, copying, saving) may run concurrently with each other.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <limits>
#include <ranges>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "blume/detail/bits.hpp"
#include "blume/detail/pipeline.hpp"
#include "blume/error.hpp"
#include "blume/hash.hpp"
#include "blume/kind.hpp"
#include "blume/parameters.hpp"
#include "blume/plan.hpp"
#include "blume/storage.hpp"
#include "blume/serialization.hpp"

namespace blume {

/// Bounds of the cuckoo geometry. The kick and expansion limits are RedisBloom's (CF.RESERVE accepts
/// MAXITERATIONS 1..65535 and EXPANSION 0..32768), so every RedisBloom geometry can be expressed.
inline constexpr std::uint32_t cuckoo_max_bucket_size = 255;
inline constexpr std::uint32_t cuckoo_max_kicks = 65535;
inline constexpr std::uint32_t cuckoo_max_expansion = 32768;
inline constexpr std::uint32_t cuckoo_max_filters = 65536;  // RedisBloom's cf-max-expansions range

/// The shape of a cuckoo filter. Defaults: b = 4 (95% load reachable, Fan et al. §5), 500 relocations
/// (the reference implementation's kMaxCuckooCount), no growth.
struct cuckoo_geometry {
  std::uint64_t buckets = 1;                             // of the first sub-filter; any count ≥ 1
  std::uint32_t bucket_size = cuckoo_default_bucket_size;  // slots per bucket, 1..255
  std::uint32_t fingerprint_bits = 12;                   // 8, 12 or 16
  std::uint32_t expansion = 0;                           // 0: never grow; else sub-filter i has buckets·e^i
  std::uint32_t max_kicks = 500;                         // relocations tried before an insert gives up
  std::uint32_t max_filters = 32;                        // sub-filters at most (with expansion > 0)

  /// The geometry of a cuckoo plan (cuckoo_filter<>::plan(items, fpr)): bits = buckets·b·f and hashes = f,
  /// with the planning bucket size b = cuckoo_default_bucket_size.
  static cuckoo_geometry from_plan(const filter_plan& plan) {
    cuckoo_geometry g;
    g.fingerprint_bits = plan.hashes;
    g.bucket_size = cuckoo_default_bucket_size;
    const std::uint64_t bucket_bits = std::uint64_t{g.bucket_size} * std::max<std::uint32_t>(plan.hashes, 1);
    if (plan.bits % bucket_bits != 0)
      throw invalid_argument("cuckoo plan: " + std::to_string(plan.bits) + " bits is not a whole number of " +
                             std::to_string(bucket_bits) + "-bit buckets");
    g.buckets = plan.bits / bucket_bits;
    return g;
  }

  /// Throws invalid_argument naming the first bad value.
  void validate() const {
    if (fingerprint_bits != 8 && fingerprint_bits != 12 && fingerprint_bits != 16)
      throw invalid_argument("cuckoo filter: fingerprint bits must be 8, 12 or 16, got " +
                             std::to_string(fingerprint_bits));
    if (bucket_size == 0 || bucket_size > cuckoo_max_bucket_size)
      throw invalid_argument("cuckoo filter: bucket size must be in [1, 255], got " + std::to_string(bucket_size));
    if (buckets == 0) throw invalid_argument("cuckoo filter: bucket count must be at least 1, got 0");
    if (buckets > max_buckets())
      throw invalid_argument("cuckoo filter: " + std::to_string(buckets) + " buckets of " +
                             std::to_string(bucket_size) + " " + std::to_string(fingerprint_bits) +
                             "-bit slots exceed the maximum of 2^40 bits");
    if (max_kicks > cuckoo_max_kicks)
      throw invalid_argument("cuckoo filter: max kicks must be in [0, 65535], got " + std::to_string(max_kicks));
    if (expansion > cuckoo_max_expansion)
      throw invalid_argument("cuckoo filter: expansion must be in [0, 32768], got " + std::to_string(expansion));
    if (max_filters == 0 || max_filters > cuckoo_max_filters)
      throw invalid_argument("cuckoo filter: max sub-filters must be in [1, " + std::to_string(cuckoo_max_filters) +
                             "], got " + std::to_string(max_filters));
  }

  /// Most buckets one sub-filter may have: its slots must fit in max_filter_bits.
  std::uint64_t max_buckets() const noexcept {
    return max_filter_bits / (std::uint64_t{bucket_size} * fingerprint_bits);
  }

  /// Bytes of the table of a sub-filter with `n` buckets: the packed slots, at least 8 bytes of slack for
  /// the unaligned slot loads, rounded up to 64 bytes so every sub-filter starts on a cache line.
  std::uint64_t table_bytes(std::uint64_t n) const noexcept {
    const std::uint64_t slot_bits = n * bucket_size * fingerprint_bits;
    return (slot_bits + 64 + 511) / 512 * 64;
  }

  /// Buckets of sub-filter i (buckets·expansion^i), or 0 if that exceeds max_buckets(). Constant time for
  /// expansion 0 or 1, and at most 40 steps otherwise (n at least doubles up to 2^40): a file may hold
  /// 65,536 sub-filters, and a loop of i steps per sub-filter made opening one quadratic.
  std::uint64_t buckets_of(std::uint32_t i) const noexcept {
    if (i == 0) return buckets;
    if (expansion <= 1) return expansion == 0 ? 0 : buckets;
    return next_buckets(buckets, i);
  }
  /// Buckets of the sub-filter `steps` after one of `n` buckets, or 0 if beyond max_buckets(): what a
  /// walk over the sub-filters in order uses, one step at a time.
  std::uint64_t next_buckets(std::uint64_t n, std::uint32_t steps = 1) const noexcept {
    if (expansion == 1) return n;
    for (std::uint32_t j = 0; j < steps; ++j) {
      if (expansion == 0 || n == 0 || n > max_buckets() / expansion) return 0;
      n *= expansion;
    }
    return n;
  }

  friend constexpr bool operator==(const cuckoo_geometry&, const cuckoo_geometry&) = default;
};

/// How a cuckoo filter derives a key's fingerprint and buckets from its digest, and how a relocation
/// walks: blume's own scheme, described at the top of this file, for any bucket count. A policy is a
/// class of static functions with these names; redisbloom.hpp has RedisBloom's (power-of-two tables,
/// XOR alternates), so the same filter code reads and writes RedisBloom's CF data.
struct cuckoo_hashing {
  /// count() of a key whose two buckets coincide: count that bucket once (blume) or twice (RedisBloom).
  static constexpr bool counts_coinciding_buckets_twice = false;

  /// Constraints on the geometry beyond cuckoo_geometry::validate() (none here).
  static void validate(const cuckoo_geometry&) {}

  /// reduce(d.high, 2^f − 1) + 1 without a multiply: x·(2^f − 1) = x·2^f − x, whose high 64 bits are
  /// x >> (64 − f) less the borrow out of the low half, (x << f) − x, which occurs when x << f < x.
  static std::uint64_t fingerprint(const digest& d, std::uint64_t f) noexcept {
    const std::uint64_t x = d.high;
    return (x >> (64 - f)) - static_cast<std::uint64_t>((x << f) < x) + 1;
  }
  /// The key's bucket in a sub-filter of n buckets.
  static std::uint64_t primary(const digest& d, std::uint64_t n) noexcept { return reduce(d.low, n); }
  /// (H(fp) − q) mod n for q < n: the other bucket in sub-filter 0 (n buckets), and the leading digit's
  /// part of alternate() in the others. Without a branch: which way it goes is a coin flip, and a
  /// mispredicted branch here stalls the load of the second bucket, which is what lookups wait for.
  static std::uint64_t alternate_first(std::uint64_t q, std::uint64_t fp, std::uint64_t n) noexcept {
    const std::uint64_t h = reduce(fp * 0x9e3779b97f4a7c15ULL, n);
    return h - q + (n & (std::uint64_t{0} - static_cast<std::uint64_t>(h < q)));
  }
  /// The other bucket of fingerprint fp in bucket i of sub-filter `level` (n·e^level buckets): digit by
  /// digit in the mixed radix of a grown sub-filter. An involution in i for every n and e.
  static std::uint64_t alternate(std::uint64_t i, std::uint64_t fp, std::uint64_t n, std::uint64_t e,
                                 std::uint32_t level) noexcept {
    if (level == 0 || e <= 1) return alternate_first(i, fp, n);
    const std::uint64_t g = reduce(mix(fp * 0x9e3779b97f4a7c15ULL), e);
    std::uint64_t low = 0, scale = 1;
    for (std::uint32_t j = 0; j < level; ++j) {
      const std::uint64_t r = i % e;
      i /= e;
      low += (g >= r ? g - r : g + e - r) * scale;
      scale *= e;
    }
    return alternate_first(i, fp, n) * scale + low;
  }
  /// Bucket i of sub-filter `from` as a bucket of the older sub-filter `to`: its leading digits (the
  /// bucket pair there holds the same keys' fingerprints).
  static std::uint64_t project(std::uint64_t i, std::uint64_t /*n*/, std::uint64_t e, std::uint32_t from,
                               std::uint32_t to) noexcept {
    if (e <= 1) return i;
    for (std::uint32_t j = to; j < from; ++j) i /= e;
    return i;
  }
  /// A relocation walk's seed; whether it starts at the key's alternate bucket; the slot step k evicts.
  /// Pseudo-random (a fixed victim can cycle between two buckets; Fan et al. pick at random) yet
  /// recomputable from the key's digest and k, so a failed walk can be undone without recording it.
  static std::uint64_t walk(const digest& d) noexcept { return d.low ^ mix(d.high); }
  static bool starts_at_alternate(std::uint64_t walk) noexcept { return (walk & 1) != 0; }
  static std::uint32_t victim(std::uint64_t walk, std::uint32_t k, std::uint32_t b) noexcept {
    return static_cast<std::uint32_t>(reduce(mix(walk + k * 0x9e3779b97f4a7c15ULL), b));
  }
};

template <hasher Hasher = xxh3_hasher, class Hashing = cuckoo_hashing>
class cuckoo_filter {
 public:
  using hasher_type = Hasher;
  using hashing_type = Hashing;
  static constexpr filter_kind kind{6};
  static constexpr std::string_view name = "cuckoo";
  static constexpr kind_input input = kind_input::keys;
  static constexpr bool is_static = false;
  /// No merge(): the union of two buckets may hold more than b fingerprints, and relocating the overflow
  /// needs the buckets of keys that are no longer known, only their fingerprints and current positions;
  /// any fingerprint that did not fit would become a false negative.
  static constexpr std::string_view merge_refusal =
      "the union of two buckets can exceed their capacity, and fingerprints that cannot be relocated would be "
      "lost (not sound in general)";
  /// Keys hashed and prefetched per step of the bulk calls (as in basic_bloom_filter).
  static constexpr std::size_t batch_size = detail::pipeline_batch;

  // The planner's model: m = the table's bits (buckets·b·f), k = f, b = cuckoo_default_bucket_size; the
  // table takes whole cache lines with at least 8 bytes of slack (cuckoo_geometry::table_bytes).
  static std::uint64_t plan_bytes(std::uint64_t bits) noexcept { return (bits + 64 + 511) / 512 * 64; }
  static double model_fpr(double n, double m, double k) noexcept {
    return math::cuckoo_fpr(n * k / m, cuckoo_default_bucket_size, k);
  }
  static filter_plan plan(std::uint64_t items, double fpr) { return detail::plan_cuckoo<cuckoo_filter>(items, fpr); }
  static filter_plan plan_for_bits(std::uint64_t items, std::uint64_t bits) {
    return detail::plan_cuckoo_for_bits<cuckoo_filter>(items, bits);
  }

  /// A filter for `capacity` items at false-positive rate `fpr` (at the design load), sized by plan(). It
  /// does not grow: see cuckoo_geometry::expansion.
  cuckoo_filter(std::uint64_t capacity, double fpr, std::uint64_t seed = Hasher::default_seed)
      : cuckoo_filter(plan(capacity, fpr), seed) {}

  explicit cuckoo_filter(const filter_plan& plan, std::uint64_t seed = Hasher::default_seed)
      : cuckoo_filter(cuckoo_geometry::from_plan(checked_plan(plan)), seed) {}

  explicit cuckoo_filter(const cuckoo_geometry& geometry, std::uint64_t seed = Hasher::default_seed)
      : geometry_(checked(geometry)), hasher_(seed) {
    prepare_constants();
    add_table(geometry_.buckets);
  }

  // ---- serialization hooks (used by format.hpp) ------------------------------------------------------
  // Header: bits = buckets of the first sub-filter, hashes = f, layout = b,
  // extra = {expansion, max kicks, sub-filters present, max sub-filters, 0, 0}.
  // Payload: the sub-filters' tables in order, each geometry().table_bytes(buckets_of(i)) bytes.

  filter_parameters parameters() const noexcept {
    filter_parameters p;
    p.primary = geometry_.buckets;
    p.secondary = geometry_.fingerprint_bits;
    p.layout = geometry_.bucket_size;
    p.extra = {geometry_.expansion, geometry_.max_kicks, tables_.size(), geometry_.max_filters, 0, 0};
    return p;
  }
  template <class Fn>
  void for_each_payload_segment(Fn&& fn) const {
    for (const table& t : tables_) fn(std::span<const std::byte>(data(t), t.bytes));
  }
  static std::uint64_t payload_size(const filter_parameters& p) {
    const auto [g, count] = geometry_of(p);
    std::uint64_t total = 0, n = g.buckets;
    for (std::uint32_t i = 0; i < count; ++i, n = g.next_buckets(n)) total += g.table_bytes(n);
    return total;
  }
  /// Adopts `payload` (zero-copy when it is a file mapping) after checking it: every padding bit past the
  /// last slot of each table is zero, and the non-empty slots number exactly `inserted` (the header's
  /// count of stored fingerprints). Any f-bit value in a slot is a possible fingerprint, so beyond that a
  /// damaged table is indistinguishable from a valid one; the payload checksum guards against that.
  static cuckoo_filter from_payload(const filter_parameters& p, std::uint64_t seed, std::uint64_t inserted,
                                    byte_storage payload) {
    std::uint64_t expected = 0;
    cuckoo_geometry g;
    std::uint32_t count = 0;
    try {
      std::tie(g, count) = geometry_of(p);
      expected = payload_size(p);
    } catch (const invalid_argument& e) {
      throw format_error(std::string("invalid parameters: ") + e.what());
    }
    if (payload.size() != expected)
      throw format_error("payload holds " + std::to_string(payload.size()) + " bytes but the parameters need " +
                         std::to_string(expected));
    cuckoo_filter f(g, Hasher(seed), std::move(payload), count);
    std::uint64_t stored = 0;
    for (std::size_t i = 0; i < f.tables_.size(); ++i) {
      table& t = f.tables_[i];
      const std::byte* bytes = f.data(t);
      const std::uint64_t used_bits = t.buckets * g.bucket_size * g.fingerprint_bits;
      for (std::uint64_t byte = used_bits / 8; byte < t.bytes; ++byte) {
        const unsigned allowed = byte == used_bits / 8 ? (1u << (used_bits % 8)) - 1 : 0u;
        if ((static_cast<unsigned>(bytes[byte]) & ~allowed) != 0)
          throw format_error("cuckoo sub-filter " + std::to_string(i) + ": padding bits past slot " +
                             std::to_string(t.buckets * g.bucket_size) + " are set");
      }
      t.stored = f.count_nonempty(t);
      stored += t.stored;
    }
    if (stored != inserted)
      throw format_error("the header counts " + std::to_string(inserted) + " stored fingerprints but the tables hold " +
                         std::to_string(stored));
    f.stored_ = stored;
    return f;
  }

  // ---- single keys -----------------------------------------------------------------------------------

  /// The digest everything about `k` derives from.
  template <key K>
  digest hash(const K& k) const noexcept {
    return hash_key(hasher_, k);
  }

  /// Stores one copy of the key's fingerprint. Returns false when the filter is full: no empty slot was
  /// found within max_kicks relocations and the filter may not grow (expansion 0, max_filters reached,
  /// or the next sub-filter would exceed 2^40 bits). A failed insert leaves the filter exactly as it was.
  /// Inserting a key again stores another copy (count() tells how many); one bucket pair holds at most
  /// 2b copies of a fingerprint in each sub-filter.
  template <key K>
  bool insert(const K& k) {
    return insert(hash(k));
  }
  bool insert(const digest& d) { return insert_without_growing(d) || insert_into_new_sub_filter(d); }

  /// The first half of insert(): an empty slot in any sub-filter, else relocation in the newest. False
  /// (the filter unchanged) when the key needs a new sub-filter; a caller with a memory budget checks
  /// next_sub_filter_bytes() against it and then calls insert_into_new_sub_filter().
  bool insert_without_growing(const digest& d) noexcept {
    const std::uint32_t fp = fingerprint(d);
    for (std::size_t i = tables_.size(); i-- > 0;) {
      table& t = tables_[i];
      const std::uint64_t i1 = primary(d, t.buckets);
      if (place(t, i1, fp) || place(t, alternate(i1, fp, t), fp)) return stored_one(t);
    }
    return relocate(tables_.back(), d, fp) && stored_one(tables_.back());
  }
  /// The second half: chains the next sub-filter and stores the key there. False when the filter may
  /// not grow (expansion 0, max_filters reached, or beyond 2^40 bits).
  bool insert_into_new_sub_filter(const digest& d) {
    if (!grow()) return false;
    table& fresh = tables_.back();
    place(fresh, primary(d, fresh.buckets), fingerprint(d));  // an empty table has room in any bucket (b ≥ 1)
    return stored_one(fresh);
  }

  /// False means certainly absent; true means present or a false positive (rate: predicted_fpr()).
  template <key K>
  bool contains(const K& k) const noexcept {
    return contains(hash(k));
  }
  bool contains(const digest& d) const noexcept {
    if (one_load_single_table_) {
      return with_short_path([&](const auto& path) { return path.hits(path.probe_of(d)); });
    }
    return contains_anywhere(d);
  }

 private:
  static const filter_plan& checked_plan(const filter_plan& plan) {
    if (plan.kind != kind)
      throw invalid_argument("a cuckoo filter needs a cuckoo plan, got a plan for kind id " +
                             std::to_string(static_cast<int>(plan.kind)));
    return plan;
  }

  // Kept out of line so the one-table path inlined into callers stays small.
  [[gnu::noinline]] bool contains_anywhere(const digest& d) const noexcept {
    const std::uint32_t fp = fingerprint(d);
    for (const table& t : tables_) {
      const std::uint64_t i1 = primary(d, t.buckets);
      if (holds(t, i1, fp) || holds(t, alternate(i1, fp, t), fp)) return true;
    }
    return false;
  }

 public:

  /// Removes one copy of the key's fingerprint (from the newest sub-filter holding one). Returns false,
  /// changing nothing, when no copy is stored. Erase only keys you inserted: erasing a false positive
  /// removes another key's fingerprint, and that key becomes a false negative.
  template <key K>
  bool erase(const K& k) noexcept {
    return erase(hash(k));
  }
  bool erase(const digest& d) noexcept {
    const std::uint32_t fp = fingerprint(d);
    for (std::size_t i = tables_.size(); i-- > 0;) {
      table& t = tables_[i];
      const std::uint64_t i1 = primary(d, t.buckets);
      for (const std::uint64_t bucket : {i1, alternate(i1, fp, t)}) {
        if (const std::uint32_t slot = find(t, bucket, fp); slot != npos) {
          put(data(t), bucket * b() + slot, 0);
          --t.stored;
          --stored_;
          return true;
        }
      }
    }
    return false;
  }

  /// Copies of the key's fingerprint in its two buckets of every sub-filter: at least the number of
  /// times the key was inserted and not erased; more when other keys share fingerprint and buckets.
  template <key K>
  std::uint64_t count(const K& k) const noexcept {
    return count(hash(k));
  }
  std::uint64_t count(const digest& d) const noexcept {
    const std::uint32_t fp = fingerprint(d);
    std::uint64_t copies = 0;
    for (const table& t : tables_) {
      const std::uint64_t i1 = primary(d, t.buckets);
      const std::uint64_t i2 = alternate(i1, fp, t);
      copies += count_in(t, i1, fp);
      if (i2 != i1 || Hashing::counts_coinciding_buckets_twice) copies += count_in(t, i2, fp);
    }
    return copies;
  }

  // ---- bulk calls: ranges of keys or of digests ------------------------------------------------------
  // Keys are hashed batch_size at a time and both buckets of each (in every sub-filter) are prefetched
  // before they are touched, so a batch keeps many cache misses in flight.

  /// Inserts every key; returns how many were stored (the others found the filter full).
  template <std::ranges::input_range R>
  std::size_t insert_many(const R& keys) {
    std::size_t stored = 0;
    pipelined(keys, [&](const digest& d) { prefetch(d, true); }, [&](std::span<const digest> batch) {
      for (const digest& d : batch) stored += insert(d);
    });
    return stored;
  }

  /// Writes one bool per key to `out`; returns how many answered true.
  template <std::ranges::input_range R, class Out>
    requires std::output_iterator<Out, bool>
  std::size_t contains_many(const R& keys, Out out) const {
    std::size_t hits = 0;
    if (one_load_single_table_) {
      pipelined_probes(keys, [&](const auto& path, std::span<const probe> batch) {
        for (const probe& p : batch) {
          const bool hit = path.hits(p);
          hits += hit;
          *out = hit;
          ++out;
        }
      });
      return hits;
    }
    pipelined(keys, [&](const digest& d) { prefetch(d, false); }, [&](std::span<const digest> batch) {
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
    if (one_load_single_table_) {
      pipelined_probes(keys, [&](const auto& path, std::span<const probe> batch) {
        std::size_t batch_hits = 0;  // a local sum: `hits` lives in memory the compiler must assume aliased
        for (const probe& p : batch) batch_hits += path.hits(p);
        hits += batch_hits;
      });
      return hits;
    }
    pipelined(keys, [&](const digest& d) { prefetch(d, false); }, [&](std::span<const digest> batch) {
      for (const digest& d : batch) hits += contains(d);
    });
    return hits;
  }

  // ---- whole-filter operations -----------------------------------------------------------------------

  /// Empties the filter and drops the sub-filters it grew, back to its constructed geometry.
  void clear() noexcept {
    tables_.resize(1);
    storages_.resize(1);  // table 0 always lives in storage 0
    note_table_count();
    std::memset(data(tables_[0]), 0, tables_[0].bytes);
    tables_[0].stored = 0;
    stored_ = 0;
  }

  /// Moves fingerprints from newer sub-filters into free slots of older ones (the oldest first) and drops
  /// the newest sub-filter once it is empty, working from the newest down, so a grown filter gives its
  /// memory back after many erases (RedisBloom's CF.COMPACT; its CF.DEL runs it after many deletes).
  /// With keep_going false it stops at the first sub-filter it cannot empty: no older one could be
  /// dropped while that one stays. Answers to contains() and count() do not change.
  void compact(bool keep_going = true) {
    for (std::size_t j = tables_.size(); j-- > 1;) {
      bool emptied = true;
      std::byte* base = data(tables_[j]);
      const std::uint64_t slots = tables_[j].buckets * b();
      for (std::uint64_t slot = 0; slot < slots; ++slot) {
        const std::uint32_t fp = get(base, slot);
        if (fp == 0) continue;
        if (move_to_older(j, slot / b(), fp)) {
          put(base, slot, 0);
          --tables_[j].stored;
        } else {
          emptied = false;
        }
      }
      if (emptied && j == tables_.size() - 1) {
        drop_newest_table();
      } else if (!emptied && !keep_going) {
        break;
      }
    }
  }

  /// The rate at the design load, where plans put a full filter.
  double predicted_fpr_at_capacity() const noexcept {
    return math::cuckoo_fpr(cuckoo_design_load, b(), geometry_.fingerprint_bits);
  }

  /// Throws incompatible_filters naming the first parameter that differs (geometry or seed), so two
  /// filters can be compared slot for slot.
  void check_compatible(const cuckoo_filter& other, std::string_view operation = "combine") const {
    auto fail = [&](std::string_view what, std::uint64_t a, std::uint64_t c) {
      throw incompatible_filters("cannot " + std::string(operation) + " cuckoo filters: " + std::string(what) +
                                 " differ (" + std::to_string(a) + " vs " + std::to_string(c) + ")");
    };
    const cuckoo_geometry& a = geometry_;
    const cuckoo_geometry& c = other.geometry_;
    if (a.buckets != c.buckets) fail("bucket counts", a.buckets, c.buckets);
    if (a.bucket_size != c.bucket_size) fail("bucket sizes", a.bucket_size, c.bucket_size);
    if (a.fingerprint_bits != c.fingerprint_bits) fail("fingerprint bits", a.fingerprint_bits, c.fingerprint_bits);
    if (a.expansion != c.expansion) fail("expansions", a.expansion, c.expansion);
    if (seed() != other.seed()) fail("seeds", seed(), other.seed());
  }

  // ---- estimates -------------------------------------------------------------------------------------

  /// The number of fingerprints stored: exact, not an estimate (copies of a key count once each).
  double estimated_count() const noexcept { return static_cast<double>(stored_); }

  /// The false-positive rate now: sub-filter i at load α_i has ε_i = 1 − (1 − 1/(2^f − 1))^{2b·α_i}
  /// (math::cuckoo_fpr), and a lookup probes all of them: ε = 1 − Π(1 − ε_i) ≈ Σ ε_i.
  double predicted_fpr() const noexcept {
    double miss = 1.0;
    for (const table& t : tables_)
      miss *= 1.0 - math::cuckoo_fpr(load_of(t), b(), geometry_.fingerprint_bits);
    return 1.0 - miss;
  }

  /// Stored fingerprints over slots, across all sub-filters.
  double load_factor() const noexcept { return static_cast<double>(stored_) / static_cast<double>(capacity()); }
  /// Slots in all sub-filters present: the most fingerprints the filter holds without growing (in
  /// practice inserts start failing near 95% of it with b = 4, 84% with b = 2: Fan et al. §5).
  std::uint64_t capacity() const noexcept {
    std::uint64_t slots = 0;
    for (const table& t : tables_) slots += t.buckets * b();
    return slots;
  }

  // ---- geometry and raw access -----------------------------------------------------------------------

  const cuckoo_geometry& geometry() const noexcept { return geometry_; }
  std::uint32_t fingerprint_bits() const noexcept { return geometry_.fingerprint_bits; }
  std::uint32_t bucket_size() const noexcept { return geometry_.bucket_size; }
  /// Buckets of the first sub-filter.
  std::uint64_t buckets() const noexcept { return geometry_.buckets; }
  std::size_t sub_filters() const noexcept { return tables_.size(); }
  std::uint64_t seed() const noexcept { return hasher_.seed(); }
  /// Stored fingerprints (successful inserts minus successful erases); what the file header records.
  std::uint64_t inserted() const noexcept { return stored_; }
  /// Buckets of sub-filter j (geometry().buckets_of(j) for the sub-filters present).
  std::uint64_t sub_filter_buckets(std::size_t j) const noexcept { return tables_[j].buckets; }
  /// Bytes the next sub-filter's table would take, or 0 when the filter cannot grow; lets a caller check a
  /// memory budget before an insert that may grow the filter.
  std::uint64_t next_sub_filter_bytes() const noexcept {
    if (geometry_.expansion == 0 || tables_.size() >= geometry_.max_filters) return 0;
    const std::uint64_t n = geometry_.buckets_of(static_cast<std::uint32_t>(tables_.size()));
    return n == 0 ? 0 : geometry_.table_bytes(n);
  }

  // ---- raw slots, for codecs of other formats (RedisBloom's SCANDUMP/LOADCHUNK and RDB) ---------------

  /// An empty filter that already has `count` sub-filters (1 … max_filters), as a dump describes it.
  static cuckoo_filter with_sub_filters(const cuckoo_geometry& geometry, std::uint32_t count,
                                        std::uint64_t seed = Hasher::default_seed) {
    const cuckoo_geometry& g = checked(geometry);
    if (count == 0 || count > g.max_filters)
      throw invalid_argument("cuckoo filter: " + std::to_string(count) + " sub-filters is outside [1, " +
                             std::to_string(g.max_filters) + "]");
    // Sizes first, then one allocation: growing table by table reallocated the table lists once per
    // sub-filter (quadratic: 65,536 sub-filters took most of a minute).
    std::vector<std::uint64_t> sizes(count);
    std::uint64_t total = 0;
    for (std::uint32_t i = 0; i < count; ++i) {
      if (i > 0 && (g.expansion == 0 || sizes[i - 1] > g.max_buckets() / g.expansion))
        throw invalid_argument("cuckoo filter: " + std::to_string(count) + " sub-filters with expansion " +
                               std::to_string(g.expansion) + " are impossible");
      sizes[i] = i == 0 ? g.buckets : sizes[i - 1] * g.expansion;
      total += g.table_bytes(sizes[i]);  // at most 65,536 tables of at most 2^37 bytes: no overflow
    }
    return cuckoo_filter(g, Hasher(seed), byte_storage::allocate(total), sizes);
  }
  /// Sub-filter j's slots as bytes: ⌈slots·f / 8⌉ of them, slot s at bits s·f … s·f + f − 1 (for 8-bit
  /// fingerprints, byte s: RedisBloom's layout).
  std::span<const std::byte> slot_bytes(std::size_t j) const noexcept {
    return {data(tables_[j]), static_cast<std::size_t>((tables_[j].buckets * b() * geometry_.fingerprint_bits + 7) / 8)};
  }
  /// Overwrites slot_bytes(j)[offset, offset + bytes.size()) and keeps the stored counts exact. Returns
  /// false, changing nothing, if the range does not lie within slot_bytes(j).
  bool write_slot_bytes(std::size_t j, std::uint64_t offset, std::span<const std::byte> bytes) noexcept {
    if (j >= tables_.size()) return false;
    const std::uint64_t size = slot_bytes(j).size();
    if (offset > size || bytes.size() > size - offset) return false;
    if (bytes.empty()) return true;
    table& t = tables_[j];
    std::byte* base = data(t);
    const std::uint64_t f = geometry_.fingerprint_bits;
    const std::uint64_t first = offset * 8 / f;
    const std::uint64_t last = std::min<std::uint64_t>(((offset + bytes.size()) * 8 + f - 1) / f, t.buckets * b());
    std::uint64_t before = 0, after = 0;
    for (std::uint64_t s = first; s < last; ++s) before += get(base, s) != 0;
    std::memcpy(base + offset, bytes.data(), bytes.size());
    const std::uint64_t used_bits = t.buckets * b() * f;
    if (used_bits % 8 != 0 && offset + bytes.size() == size)  // bits past the last slot stay zero
      base[size - 1] &= static_cast<std::byte>((1u << (used_bits % 8)) - 1);
    for (std::uint64_t s = first; s < last; ++s) after += get(base, s) != 0;
    t.stored = t.stored - before + after;
    stored_ = stored_ - before + after;
    return true;
  }
  /// Memory held: the tables plus this object.
  std::size_t size_in_bytes() const noexcept {
    std::size_t bytes = sizeof(*this) + tables_.capacity() * sizeof(table) + storages_.capacity() * sizeof(byte_storage);
    for (const byte_storage& s : storages_) bytes += s.size();
    return bytes;
  }
  /// The fingerprint stored in slot `slot` of bucket `bucket` of sub-filter `sub_filter` (0 = empty).
  std::uint32_t slot_value(std::size_t sub_filter, std::uint64_t bucket, std::uint32_t slot) const noexcept {
    return get(data(tables_[sub_filter]), bucket * b() + slot);
  }

  friend bool operator==(const cuckoo_filter& a, const cuckoo_filter& c) noexcept {
    if (a.geometry_ != c.geometry_ || a.seed() != c.seed() || a.tables_.size() != c.tables_.size()) return false;
    for (std::size_t i = 0; i < a.tables_.size(); ++i)
      if (std::memcmp(a.data(a.tables_[i]), c.data(c.tables_[i]), a.tables_[i].bytes) != 0) return false;
    return true;
  }

 private:
  static constexpr std::uint32_t npos = std::numeric_limits<std::uint32_t>::max();

  /// One sub-filter: `bytes` bytes at `offset` in storages_[storage].
  struct table {
    std::size_t storage = 0;
    std::size_t offset = 0;
    std::uint64_t buckets = 0;
    std::uint64_t bytes = 0;
    std::uint64_t stored = 0;
    std::uint32_t level = 0;  // j: this is the j-th sub-filter, of n·e^j buckets
  };

  /// A filter over a payload holding tables of the given bucket counts back to back.
  cuckoo_filter(const cuckoo_geometry& g, const Hasher& hasher, byte_storage payload,
                const std::vector<std::uint64_t>& sizes)
      : geometry_(g), hasher_(hasher) {
    prepare_constants();
    storages_.push_back(std::move(payload));
    tables_.reserve(sizes.size());
    std::size_t offset = 0;
    for (std::size_t i = 0; i < sizes.size(); ++i) {
      tables_.push_back(table{0, offset, sizes[i], g.table_bytes(sizes[i]), 0, static_cast<std::uint32_t>(i)});
      offset += g.table_bytes(sizes[i]);
    }
    note_table_count();
  }

  /// Reassembles a filter over a payload holding `count` tables back to back.
  cuckoo_filter(const cuckoo_geometry& g, const Hasher& hasher, byte_storage payload, std::uint32_t count)
      : geometry_(g), hasher_(hasher) {
    prepare_constants();
    storages_.push_back(std::move(payload));
    tables_.reserve(count);
    std::size_t offset = 0;
    std::uint64_t n = g.buckets;
    for (std::uint32_t i = 0; i < count; ++i, n = g.next_buckets(n)) {
      tables_.push_back(table{0, offset, n, g.table_bytes(n), 0, i});
      offset += g.table_bytes(n);
    }
    note_table_count();
  }

  static const cuckoo_geometry& checked(const cuckoo_geometry& g) {
    g.validate();
    Hashing::validate(g);
    return g;
  }

  /// The geometry and sub-filter count a header describes; invalid_argument naming what is wrong.
  static std::pair<cuckoo_geometry, std::uint32_t> geometry_of(const filter_parameters& p) {
    const auto limit = [](std::uint64_t value, std::uint64_t max, const char* what) {
      if (value > max)
        throw invalid_argument(std::string("cuckoo filter: ") + what + " " + std::to_string(value) + " exceeds " +
                               std::to_string(max));
      return static_cast<std::uint32_t>(value);
    };
    cuckoo_geometry g;
    g.buckets = p.primary;
    g.fingerprint_bits = p.secondary;
    g.bucket_size = p.layout;
    g.expansion = limit(p.extra[0], cuckoo_max_expansion, "expansion");
    g.max_kicks = limit(p.extra[1], cuckoo_max_kicks, "max kicks");
    const std::uint32_t count = limit(p.extra[2], cuckoo_max_filters, "sub-filter count");
    g.max_filters = limit(p.extra[3], cuckoo_max_filters, "max sub-filters");
    if (p.extra[4] != 0 || p.extra[5] != 0) throw invalid_argument("reserved header bytes are not zero");
    g.validate();
    Hashing::validate(g);
    if (count == 0 || count > g.max_filters)
      throw invalid_argument("cuckoo filter: sub-filter count must be in [1, " + std::to_string(g.max_filters) +
                             "], got " + std::to_string(count));
    if (count > 1 && g.buckets_of(count - 1) == 0)
      throw invalid_argument("cuckoo filter: " + std::to_string(count) + " sub-filters with expansion " +
                             std::to_string(g.expansion) + " are impossible (none, or beyond 2^40 bits)");
    return {g, count};
  }

  std::uint32_t b() const noexcept { return geometry_.bucket_size; }

  std::byte* data(const table& t) noexcept { return storages_[t.storage].data() + t.offset; }
  const std::byte* data(const table& t) const noexcept { return storages_[t.storage].data() + t.offset; }

  void add_table(std::uint64_t buckets) {
    const std::uint64_t bytes = geometry_.table_bytes(buckets);
    storages_.push_back(byte_storage::allocate(bytes));
    tables_.push_back(table{storages_.size() - 1, 0, buckets, bytes, 0, static_cast<std::uint32_t>(tables_.size())});
    note_table_count();
  }

  /// Places fp, found in bucket i of sub-filter j, in the same keys' bucket pair of an older sub-filter.
  bool move_to_older(std::size_t j, std::uint64_t i, std::uint32_t fp) noexcept {
    for (std::size_t k = 0; k < j; ++k) {
      table& older = tables_[k];
      const std::uint64_t q = Hashing::project(i, geometry_.buckets, geometry_.expansion, static_cast<std::uint32_t>(j),
                                               static_cast<std::uint32_t>(k));
      if (place(older, q, fp) || place(older, alternate(q, fp, older), fp)) {
        ++older.stored;
        return true;
      }
    }
    return false;
  }
  void drop_newest_table() noexcept {
    const std::size_t storage = tables_.back().storage;
    tables_.pop_back();
    // Tables reassembled from one payload share storage 0; a grown table has its own, freed here.
    if (storage != 0 && storage + 1 == storages_.size()) storages_.pop_back();
    note_table_count();
  }

  /// Chains the next sub-filter; false if growth is off, at max_filters or beyond the size limit.
  bool grow() {
    if (geometry_.expansion == 0 || tables_.size() >= geometry_.max_filters) return false;
    const std::uint64_t n = geometry_.buckets_of(static_cast<std::uint32_t>(tables_.size()));
    if (n == 0) return false;
    storages_.reserve(storages_.size() + 1);
    tables_.reserve(tables_.size() + 1);  // so add_table cannot fail between its two push_backs
    add_table(n);
    return true;
  }

  bool stored_one(table& t) noexcept {
    ++t.stored;
    ++stored_;
    return true;
  }

  std::uint32_t fingerprint(const digest& d) const noexcept {
    return static_cast<std::uint32_t>(Hashing::fingerprint(d, geometry_.fingerprint_bits));
  }
  static std::uint64_t primary(const digest& d, std::uint64_t n) noexcept { return Hashing::primary(d, n); }
  /// The other bucket of fingerprint fp in bucket i of table t.
  std::uint64_t alternate(std::uint64_t i, std::uint32_t fp, const table& t) const noexcept {
    return Hashing::alternate(i, fp, geometry_.buckets, geometry_.expansion, t.level);
  }

  // Slot s occupies bits [s·f, s·f + f): one unaligned little-endian load at byte ⌊s·f/8⌋ holds it
  // (f ≤ 16, shift ≤ 7), and the table's slack makes that load safe for the last slot.
  std::uint32_t get(const std::byte* base, std::uint64_t slot) const noexcept {
    const std::uint64_t bit = slot * geometry_.fingerprint_bits;
    std::uint64_t w;
    std::memcpy(&w, base + bit / 8, sizeof w);
    return static_cast<std::uint32_t>((w >> (bit % 8)) & ((std::uint64_t{1} << geometry_.fingerprint_bits) - 1));
  }
  void put(std::byte* base, std::uint64_t slot, std::uint32_t value) const noexcept {
    const std::uint64_t bit = slot * geometry_.fingerprint_bits;
    const unsigned shift = static_cast<unsigned>(bit % 8);
    const std::uint64_t mask = ((std::uint64_t{1} << geometry_.fingerprint_bits) - 1) << shift;
    std::uint64_t w;
    std::memcpy(&w, base + bit / 8, sizeof w);
    w = (w & ~mask) | (std::uint64_t{value} << shift);
    std::memcpy(base + bit / 8, &w, sizeof w);
  }

  /// Whether `bucket` holds `fp`. When a bucket is whole bytes and at most 64 bits (b·f ≤ 64 with b·f a
  /// multiple of 8, as for the default b = 4 with f = 8, 12 or 16), one load compares all its slots at
  /// once: XOR with fp repeated in every lane, then the classic "some lane is zero" test
  /// (x − lows) & ~x & highs, which is exact as a yes/no answer. Lookups spend most of their instructions
  /// here, and fewer instructions per lookup let more lookups' cache misses overlap.
  bool holds(const table& t, std::uint64_t bucket, std::uint32_t fp) const noexcept {
    if (!swar_) return find(t, bucket, fp) != npos;
    return bucket_holds(runtime_test(), data(t) + bucket * bucket_bytes_, lane_lows_ * fp);
  }
  // Lookups in a filter that has not grown (one table) with the one-load bucket test, the common case,
  // take a shorter path. Its constants are copied into a lookup_path value, so the batched loops keep
  // them in registers (stores into the probe buffers could otherwise alias the filter's members), and a
  // probe holds both bucket addresses and the fingerprint pattern, computed once while the buckets are
  // prefetched, so the second pass only loads and tests. For the default bucket of 4 slots with 8-, 12-
  // or 16-bit fingerprints the geometry is a compile-time constant, so scaling a bucket index to bytes
  // and the lane masks need no multiply: a lookup is bound by the one multiplier port (hashing, the two
  // bucket reductions and the alternate's offset already need six multiplies), not by its ALU work.
  // Fewer instructions per lookup also let more lookups' cache misses overlap, and a negative lookup
  // waits on two of them.
  struct probe {
    const std::byte* first;
    const std::byte* second;
    std::uint64_t pattern;  // fp in every lane
  };
  /// Bucket geometry known only at run time (any b·f ≤ 64 that is whole bytes).
  struct runtime_bucket {
    std::uint64_t fingerprint_bits, bytes, lane_lows, lane_highs;
  };
  /// b slots of f bits, fixed at compile time.
  template <std::uint32_t F, std::uint32_t B>
  struct fixed_bucket {
    static constexpr std::uint64_t fingerprint_bits = F, bytes = F * B / 8;
    static constexpr std::uint64_t lane_lows = [] {
      std::uint64_t lows = 0;
      for (std::uint32_t j = 0; j < B; ++j) lows |= std::uint64_t{1} << (j * F);
      return lows;
    }();
    static constexpr std::uint64_t lane_highs = lane_lows << (F - 1);
  };
  /// Whether the bucket at `at` has a lane equal to `pattern`'s: XOR, then the classic "some lane is
  /// zero" test (x − lows) & ~x & highs, exact as a yes/no answer. The load also reads bits past the
  /// bucket (the next bucket's, or slack), but highs marks the bucket's lanes only, and a subtraction's
  /// low bits do not depend on its high bits, so they cannot change the answer.
  template <class Bucket>
  static bool bucket_holds(const Bucket& bucket, const std::byte* at, std::uint64_t pattern) noexcept {
    std::uint64_t w;
    std::memcpy(&w, at, sizeof w);
    const std::uint64_t x = w ^ pattern;
    return ((x - bucket.lane_lows) & ~x & bucket.lane_highs) != 0;
  }
  template <class Bucket>
  struct lookup_path {
    const std::byte* base;
    std::uint64_t buckets;
    Bucket bucket;

    probe probe_of(const digest& d) const noexcept {
      const std::uint64_t fp = Hashing::fingerprint(d, bucket.fingerprint_bits);
      const std::uint64_t i1 = Hashing::primary(d, buckets);
      const std::uint64_t i2 = Hashing::alternate_first(i1, fp, buckets);
      return {base + i1 * bucket.bytes, base + i2 * bucket.bytes, bucket.lane_lows * fp};
    }
    bool hits(const probe& p) const noexcept {
      // Both tests always run (| not ||): a negative lookup needs both, and no branch sits between the loads.
      return bucket_holds(bucket, p.first, p.pattern) | bucket_holds(bucket, p.second, p.pattern);
    }
  };
  /// Calls fn(path) with the short path's lookup_path (only when one_load_single_table_).
  template <class Fn>
  decltype(auto) with_short_path(Fn&& fn) const {
    const std::byte* base = storages_.front().data();  // table 0 always starts storage 0
    const std::uint64_t n = geometry_.buckets;
    switch (short_path_) {
      case short_path::fixed_8x4: return fn(lookup_path<fixed_bucket<8, 4>>{base, n, {}});
      case short_path::fixed_12x4: return fn(lookup_path<fixed_bucket<12, 4>>{base, n, {}});
      case short_path::fixed_16x4: return fn(lookup_path<fixed_bucket<16, 4>>{base, n, {}});
      default: return fn(lookup_path<runtime_bucket>{base, n, runtime_test()});
    }
  }
  runtime_bucket runtime_test() const noexcept {
    return {geometry_.fingerprint_bits, bucket_bytes_, lane_lows_, lane_highs_};
  }
  template <class R, class Use>
  void pipelined_probes(const R& items, Use&& use) const {
    with_short_path([&](const auto& path) {
      detail::pipelined_probes<probe>(
          items, [h = hasher_](const auto& k) { return hash_key(h, k); },
          [path](const digest& d) {
            const probe p = path.probe_of(d);
            // The 8-byte load of a bucket crosses into the next cache line for about 1 bucket in 10:
            // prefetch the line of its last byte too, or that lookup stalls on a demand miss.
            detail::prefetch_read(p.first);
            detail::prefetch_read(p.first + 7);
            detail::prefetch_read(p.second);
            detail::prefetch_read(p.second + 7);
            return p;
          },
          [&](std::span<const probe> batch) { use(path, batch); });
    });
  }

  /// The first slot of `bucket` holding `fp` (0 finds an empty slot), or npos.
  std::uint32_t find(const table& t, std::uint64_t bucket, std::uint32_t fp) const noexcept {
    const std::byte* base = data(t);
    const std::uint64_t first = bucket * b();
    for (std::uint32_t j = 0; j < b(); ++j)
      if (get(base, first + j) == fp) return j;
    return npos;
  }
  std::uint64_t count_in(const table& t, std::uint64_t bucket, std::uint32_t fp) const noexcept {
    const std::byte* base = data(t);
    const std::uint64_t first = bucket * b();
    std::uint64_t n = 0;
    for (std::uint32_t j = 0; j < b(); ++j) n += get(base, first + j) == fp;
    return n;
  }
  bool place(table& t, std::uint64_t bucket, std::uint32_t fp) noexcept {
    const std::uint32_t slot = find(t, bucket, 0);
    if (slot == npos) return false;
    put(data(t), bucket * b() + slot, fp);
    return true;
  }
  std::uint64_t count_nonempty(const table& t) const noexcept {
    const std::byte* base = data(t);
    std::uint64_t n = 0;
    const std::uint64_t slots = t.buckets * b();
    for (std::uint64_t s = 0; s < slots; ++s) n += get(base, s) != 0;
    return n;
  }
  double load_of(const table& t) const noexcept {
    return static_cast<double>(t.stored) / static_cast<double>(t.buckets * b());
  }

  std::uint32_t victim(std::uint64_t walk, std::uint32_t k) const noexcept { return Hashing::victim(walk, k, b()); }

  /// Partial-key cuckoo relocation in table t, starting from one of the key's two full buckets (the
  /// policy's walk says which, and which slot each step evicts): evict a
  /// victim, move it to its other bucket, repeat up to max_kicks times. On failure the walk is undone in
  /// reverse: step k put fingerprint c_k into slot (i_k, j_k) and carried the evicted c_{k+1} to bucket
  /// i_{k+1} = alt(i_k, c_{k+1}); since alt is an involution, i_k = alt(i_{k+1}, c_{k+1}), and j_k is
  /// recomputed, so writing c_{k+1} back and picking c_k up again restores every slot, last step first.
  /// The table is then bit for bit what it was, and no fingerprint is lost.
  bool relocate(table& t, const digest& d, std::uint32_t fp) noexcept {
    const std::uint32_t kicks = geometry_.max_kicks;
    if (kicks == 0) return false;
    std::byte* base = data(t);
    const std::uint64_t n = t.buckets;
    const std::uint64_t walk = Hashing::walk(d);
    std::uint64_t bucket = primary(d, n);
    if (Hashing::starts_at_alternate(walk)) bucket = alternate(bucket, fp, t);
    std::uint32_t carried = fp;
    for (std::uint32_t k = 0; k < kicks; ++k) {
      const std::uint64_t slot = bucket * b() + victim(walk, k);
      const std::uint32_t evicted = get(base, slot);
      put(base, slot, carried);
      carried = evicted;
      bucket = alternate(bucket, carried, t);
      if (place(t, bucket, carried)) return true;
    }
    for (std::uint32_t k = kicks; k-- > 0;) {
      bucket = alternate(bucket, carried, t);
      const std::uint64_t slot = bucket * b() + victim(walk, k);
      const std::uint32_t resident = get(base, slot);
      put(base, slot, carried);
      carried = resident;
    }
    return false;
  }

  void prefetch(const digest& d, bool for_write) const noexcept {
    const std::uint32_t fp = fingerprint(d);
    for (const table& t : tables_) {
      const std::uint64_t i1 = primary(d, t.buckets);
      for (const std::uint64_t bucket : {i1, alternate(i1, fp, t)}) {
        const std::byte* p = data(t) + bucket * b() * geometry_.fingerprint_bits / 8;
        if (for_write) {
          detail::prefetch_write(p);
        } else {
          detail::prefetch_read(p);
        }
      }
    }
  }

  template <class R, class Prefetch, class Use>
  void pipelined(const R& items, Prefetch&& prefetch_one, Use&& use) const {
    detail::pipelined(items, [this](const auto& k) { return hash(k); }, prefetch_one, use);
  }

  /// Precomputes what lookups would otherwise derive from the geometry on every call, including the
  /// constants of holds()'s one-load bucket test when the geometry allows it.
  void prepare_constants() noexcept {
    const std::uint32_t f = geometry_.fingerprint_bits;
    const std::uint32_t width = f * b();
    swar_ = width <= 64 && width % 8 == 0;
    note_table_count();
    if (!swar_) return;
    bucket_bytes_ = width / 8;
    lane_lows_ = 0;
    for (std::uint32_t j = 0; j < b(); ++j) lane_lows_ |= std::uint64_t{1} << (j * f);
    lane_highs_ = lane_lows_ << (f - 1);
  }

  void note_table_count() noexcept {
    one_load_single_table_ = swar_ && tables_.size() == 1;
    short_path_ = short_path::runtime;
    if (geometry_.bucket_size == 4 && geometry_.fingerprint_bits == 8) short_path_ = short_path::fixed_8x4;
    if (geometry_.bucket_size == 4 && geometry_.fingerprint_bits == 12) short_path_ = short_path::fixed_12x4;
    if (geometry_.bucket_size == 4 && geometry_.fingerprint_bits == 16) short_path_ = short_path::fixed_16x4;
  }
  enum class short_path : std::uint8_t { runtime, fixed_8x4, fixed_12x4, fixed_16x4 };

  cuckoo_geometry geometry_;
  bool swar_ = false;
  bool one_load_single_table_ = false;  // swar_ and no sub-filter grown: lookups take the short path
  short_path short_path_ = short_path::runtime;  // which lookup_path that is
  std::uint64_t bucket_bytes_ = 0, lane_lows_ = 0, lane_highs_ = 0;
  Hasher hasher_;
  std::vector<byte_storage> storages_;
  std::vector<table> tables_;
  std::uint64_t stored_ = 0;
};

static_assert(serializable_filter<cuckoo_filter<>>);
static_assert(!can_merge<cuckoo_filter<>>);

}  // namespace blume
