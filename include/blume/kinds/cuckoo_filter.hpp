// SPDX-License-Identifier: Apache-2.0
// The cuckoo filter (Fan, Andersen, Kaminsky & Mitzenmacher, "Cuckoo Filter: Practically Better Than
// Bloom", CoNEXT 2014): a table of buckets of b slots, each slot holding an f-bit fingerprint of a key or
// 0 for "empty". A key may live in two buckets; inserting into two full buckets evicts a resident
// fingerprint to *its* other bucket, and so on (partial-key cuckoo hashing). Unlike a Bloom filter it can
// erase keys and count copies, and at low rates it needs fewer bits per key (f/α versus 1.44·log2(1/ε)).
//
// A key's fingerprint and buckets come from the hashing policy: cuckoo_geometry.hpp has blume's own, for
// any bucket count, and redisbloom.hpp RedisBloom's. How slots are packed and a bucket is tested in one
// load is in detail/cuckoo_table.hpp.
//
// Growth (optional): with expansion e > 0, when an insert fails a new sub-filter of n·e^j buckets
// is chained (up to max_filters of them). Lookups, erase and count scan every sub-filter; inserts first
// take an empty slot in any sub-filter's two buckets, newest first (so room freed by erase is reused, and
// RedisBloom's CF.ADD order can be expressed), then relocate in the newest sub-filter only. The hashing
// policy keeps chained sub-filters' bucket pairs nested, so that erase cannot create false negatives.
//
// Erase only keys that were inserted. A key whose fingerprint is in neither bucket is refused and nothing
// changes; a false positive cannot be told from a key inserted, and erasing it removes the fingerprint of
// the inserted key it matched, which answers "no" from then on (a false negative). At 100,000 keys planned
// for 1% (a rate of 0.19% at that load), erasing 100,000 keys never inserted erased about 185 false
// positives and so made about 185 inserted keys (0.19%) answer "no" (tests/erase_test.cpp).
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
#include <ranges>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "blume/detail/bits.hpp"
#include "blume/detail/cuckoo_table.hpp"
#include "blume/detail/key_interface.hpp"
#include "blume/detail/pipeline.hpp"
#include "blume/error.hpp"
#include "blume/hash.hpp"
#include "blume/io/parameters.hpp"
#include "blume/io/serialization.hpp"
#include "blume/kind.hpp"
#include "blume/kinds/cuckoo_geometry.hpp"
#include "blume/plan.hpp"
#include "blume/storage.hpp"

namespace blume {

template <hasher Hasher = xxh3_hasher, class Hashing = cuckoo_hashing>
class cuckoo_filter : public detail::key_interface<cuckoo_filter<Hasher, Hashing>> {
  using key_calls = detail::key_interface<cuckoo_filter>;
  static_assert(cuckoo_hashing_policy<Hashing>);

 public:
  using key_calls::contains;
  using key_calls::count;
  using key_calls::erase;
  using key_calls::hash;
  using key_calls::insert;
  using hasher_type = Hasher;
  using hashing_type = Hashing;
  static constexpr filter_kind kind{6};
  static constexpr std::string_view name = "cuckoo";
  static constexpr kind_input input = kind_input::keys;
  static constexpr bool is_static = false;
  /// What the file header's primary field holds, as `blume info` names it.
  static constexpr std::string_view primary_field = "buckets";
  /// No merge(): the union of two buckets may hold more than b fingerprints, and relocating the overflow
  /// needs the buckets of keys that are no longer known, only their fingerprints and current positions;
  /// any fingerprint that did not fit would become a false negative.
  static constexpr std::string_view merge_refusal =
      "the union of two buckets can exceed their capacity, and fingerprints that cannot be relocated would be "
      "lost (not sound in general)";
  /// Keys hashed and prefetched per step of the bulk calls (as in basic_bloom_filter).
  static constexpr std::size_t batch_size = detail::pipeline_batch;

  // The planner's model: m = the table's bits (buckets·b·f), k = f, b = cuckoo_default_bucket_size; the
  // table takes whole cache lines with at least 8 bytes of slack in a file (cuckoo_geometry::table_bytes).
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
    // A table made in memory has no slack; the file's is zeros.
    static constexpr std::byte zeros[64] = {};
    for (const table& t : tables_) {
      const std::uint64_t file_bytes = geometry_.table_bytes(t.buckets);
      const std::uint64_t held = std::min(t.bytes, file_bytes);
      fn(std::span<const std::byte>(data(t), held));
      for (std::uint64_t rest = file_bytes - held; rest != 0; rest -= std::min<std::uint64_t>(rest, sizeof zeros))
        fn(std::span<const std::byte>(zeros, std::min<std::uint64_t>(rest, sizeof zeros)));
    }
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
      if (!f.slots(t).padding_is_clear(f.data(t), t.buckets, t.bytes))
        throw format_error("cuckoo sub-filter " + std::to_string(i) + ": padding bits past slot " +
                           std::to_string(t.buckets * g.bucket_size) + " are set");
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

  /// Stores one copy of the key's fingerprint. Returns false when the filter is full: no empty slot was
  /// found within max_kicks relocations and the filter may not grow (expansion 0, max_filters reached,
  /// or the next sub-filter would exceed 2^40 bits). A failed insert leaves the filter exactly as it was.
  /// Inserting a key again stores another copy (count() tells how many); one bucket pair holds at most
  /// 2b copies of a fingerprint in each sub-filter.
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
  bool erase(const digest& d) noexcept {
    const std::uint32_t fp = fingerprint(d);
    for (std::size_t i = tables_.size(); i-- > 0;) {
      table& t = tables_[i];
      const std::uint64_t i1 = primary(d, t.buckets);
      for (const std::uint64_t bucket : {i1, alternate(i1, fp, t)}) {
        if (const std::uint32_t slot = find(t, bucket, fp); slot != npos) {
          put(t, bucket * b() + slot, 0);
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
    pipelined(
        keys, [&](const digest& d) { prefetch(d, true); },
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
    pipelined(
        keys, [&](const digest& d) { prefetch(d, false); },
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
    if (one_load_single_table_) {
      pipelined_probes(keys, [&](const auto& path, std::span<const probe> batch) {
        std::size_t batch_hits = 0;  // a local sum: `hits` lives in memory the compiler must assume aliased
        for (const probe& p : batch) batch_hits += path.hits(p);
        hits += batch_hits;
      });
      return hits;
    }
    pipelined(
        keys, [&](const digest& d) { prefetch(d, false); },
        [&](std::span<const digest> batch) {
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
      const std::uint64_t slots = tables_[j].buckets * b();
      for (std::uint64_t slot = 0; slot < slots; ++slot) {
        const std::uint32_t fp = get(tables_[j], slot);
        if (fp == 0) continue;
        if (move_to_older(j, slot / b(), fp)) {
          put(tables_[j], slot, 0);
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
    for (const table& t : tables_) miss *= 1.0 - math::cuckoo_fpr(load_of(t), b(), geometry_.fingerprint_bits);
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
  const Hasher& hasher() const noexcept { return hasher_; }
  /// Stored fingerprints (successful inserts minus successful erases); what the file header records.
  std::uint64_t inserted() const noexcept { return stored_; }
  /// Buckets of sub-filter j (geometry().buckets_of(j) for the sub-filters present).
  std::uint64_t sub_filter_buckets(std::size_t j) const noexcept { return tables_[j].buckets; }
  /// Bytes the next sub-filter's table would take, or 0 when the filter cannot grow; lets a caller check a
  /// memory budget before an insert that may grow the filter.
  std::uint64_t next_sub_filter_bytes() const noexcept {
    if (geometry_.expansion == 0 || tables_.size() >= geometry_.max_filters) return 0;
    const std::uint64_t n = geometry_.buckets_of(static_cast<std::uint32_t>(tables_.size()));
    return n == 0 ? 0 : made_table_bytes(geometry_, n);
  }

  // ---- raw slots, for codecs of other formats (RedisBloom's SCANDUMP/LOADCHUNK and RDB) ---------------

  /// An empty filter that already has `count` sub-filters (1 … max_filters), as a dump describes it.
  static cuckoo_filter with_sub_filters(const cuckoo_geometry& geometry, std::uint32_t count,
                                        std::uint64_t seed = Hasher::default_seed) {
    const cuckoo_geometry& g = checked(geometry);
    if (count == 0 || count > g.max_filters)
      throw invalid_argument("cuckoo filter: " + std::to_string(count) + " sub-filters is outside [1, " +
                             std::to_string(g.max_filters) + "]");
    // Sizes first, then the table lists sized once: growing table by table reallocated them once per
    // sub-filter (quadratic: 65,536 sub-filters took most of a minute).
    std::vector<std::uint64_t> sizes(count);
    for (std::uint32_t i = 0; i < count; ++i) {
      if (i > 0 && (g.expansion == 0 || sizes[i - 1] > g.max_buckets() / g.expansion))
        throw invalid_argument("cuckoo filter: " + std::to_string(count) + " sub-filters with expansion " +
                               std::to_string(g.expansion) + " are impossible");
      sizes[i] = i == 0 ? g.buckets : sizes[i - 1] * g.expansion;
    }
    // A block per table, as growth makes them: an allocator rounds each block up to a size class, and a
    // table of 2^k bytes is a class of its own while a sum of several (32 + 128 + 512 KiB) is not, so a
    // reloaded filter would take another amount of memory than the same filter grown.
    std::vector<byte_storage> storages;
    storages.reserve(count);
    for (const std::uint64_t n : sizes) storages.push_back(byte_storage::allocate(made_table_bytes(g, n)));
    return cuckoo_filter(g, Hasher(seed), std::move(storages), sizes);
  }
  /// Sub-filter j's slots as bytes: ⌈slots·f / 8⌉ of them, slot s at bits s·f … s·f + f − 1 (for 8-bit
  /// fingerprints, byte s: RedisBloom's layout).
  std::span<const std::byte> slot_bytes(std::size_t j) const noexcept {
    return {data(tables_[j]),
            static_cast<std::size_t>((tables_[j].buckets * b() * geometry_.fingerprint_bits + 7) / 8)};
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
    for (std::uint64_t s = first; s < last; ++s) before += get(t, s) != 0;
    std::memcpy(base + offset, bytes.data(), bytes.size());
    const std::uint64_t used_bits = t.buckets * b() * f;
    if (used_bits % 8 != 0 && offset + bytes.size() == size)  // bits past the last slot stay zero
      base[size - 1] &= static_cast<std::byte>((1u << (used_bits % 8)) - 1);
    for (std::uint64_t s = first; s < last; ++s) after += get(t, s) != 0;
    t.stored = t.stored - before + after;
    stored_ = stored_ - before + after;
    return true;
  }
  /// Memory held: the tables plus this object.
  std::size_t size_in_bytes() const noexcept {
    std::size_t bytes =
        sizeof(*this) + tables_.capacity() * sizeof(table) + storages_.capacity() * sizeof(byte_storage);
    for (const byte_storage& s : storages_) bytes += s.size();
    return bytes;
  }
  /// The fingerprint stored in slot `slot` of bucket `bucket` of sub-filter `sub_filter` (0 = empty).
  std::uint32_t slot_value(std::size_t sub_filter, std::uint64_t bucket, std::uint32_t slot) const noexcept {
    return get(tables_[sub_filter], bucket * b() + slot);
  }

  friend bool operator==(const cuckoo_filter& a, const cuckoo_filter& c) noexcept {
    if (a.geometry_ != c.geometry_ || a.seed() != c.seed() || a.tables_.size() != c.tables_.size()) return false;
    for (std::size_t i = 0; i < a.tables_.size(); ++i)
      if (std::memcmp(a.data(a.tables_[i]), c.data(c.tables_[i]), a.slot_bytes(i).size()) != 0) return false;
    return true;
  }

 private:
  using table = detail::cuckoo_table;
  using probe = detail::cuckoo_probe;
  using runtime_bucket = detail::cuckoo_runtime_bucket;
  template <std::uint32_t F, std::uint32_t B>
  using fixed_bucket = detail::cuckoo_fixed_bucket<F, B>;
  template <class Bucket>
  using lookup_path = detail::cuckoo_lookup_path<Hashing, Bucket>;
  static constexpr std::uint32_t npos = detail::cuckoo_slots::npos;

  /// A filter over tables of the given bucket counts, table i in storages[i].
  cuckoo_filter(const cuckoo_geometry& g, const Hasher& hasher, std::vector<byte_storage> storages,
                const std::vector<std::uint64_t>& sizes)
      : geometry_(g), hasher_(hasher), storages_(std::move(storages)) {
    prepare_constants();
    tables_.reserve(sizes.size());
    for (std::size_t i = 0; i < sizes.size(); ++i)
      tables_.push_back(table{i, 0, sizes[i], made_table_bytes(g, sizes[i]), 0, static_cast<std::uint32_t>(i)});
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
    const std::uint64_t bytes = made_table_bytes(geometry_, buckets);
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

  /// Whether `bucket` holds `fp`: the one-load test (detail/cuckoo_table.hpp) when the geometry allows it.
  bool holds(const table& t, std::uint64_t bucket, std::uint32_t fp) const noexcept {
    if (!swar_) return find(t, bucket, fp) != npos;
    return detail::cuckoo_bucket_holds<Hashing::exact_tables>(runtime_test(), data(t) + bucket * bucket_bytes_,
                                                              last_load(t), lane_lows_ * fp);
  }
  // Lookups in a filter that has not grown (one table) with the one-load bucket test, the common case,
  // take a shorter path: a lookup_path value. For the default bucket of 4 slots with 8-, 12- or 16-bit
  // fingerprints its geometry is a compile-time constant. A lookup is bound by the one multiplier port
  // (hashing, the two bucket reductions and the alternate's offset already need six multiplies), not by
  // its ALU work; fewer instructions per lookup also let more lookups' cache misses overlap, and a
  // negative lookup waits on two of them.
  /// Calls fn(path) with the short path's lookup_path (only when one_load_single_table_).
  template <class Fn>
  decltype(auto) with_short_path(Fn&& fn) const {
    const std::byte* base = storages_.front().data();  // table 0 always starts storage 0
    const std::byte* last = last_load(tables_.front());
    const std::uint64_t n = geometry_.buckets;
    switch (short_path_) {
      case short_path::fixed_8x4: return fn(lookup_path<fixed_bucket<8, 4>>{base, n, {}, last});
      case short_path::fixed_12x4: return fn(lookup_path<fixed_bucket<12, 4>>{base, n, {}, last});
      case short_path::fixed_16x4: return fn(lookup_path<fixed_bucket<16, 4>>{base, n, {}, last});
      default: return fn(lookup_path<runtime_bucket>{base, n, runtime_test(), last});
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

  // Slots in this filter's geometry: on bytes (get, put), and on a sub-filter's table, whose bytes are in storages_.
  detail::cuckoo_slots slots(const table& t) const noexcept {
    return {geometry_.fingerprint_bits, geometry_.bucket_size, t.bytes - 8};
  }
  const std::byte* last_load(const table& t) const noexcept { return data(t) + (t.bytes - 8); }
  static std::uint64_t made_table_bytes(const cuckoo_geometry& g, std::uint64_t n) noexcept {
    return Hashing::exact_tables ? g.memory_bytes(n) : g.table_bytes(n);
  }
  std::uint32_t get(const table& t, std::uint64_t slot) const noexcept { return slots(t).get(data(t), slot); }
  void put(table& t, std::uint64_t slot, std::uint32_t value) noexcept { slots(t).put(data(t), slot, value); }
  std::uint32_t find(const table& t, std::uint64_t bucket, std::uint32_t fp) const noexcept {
    return slots(t).find(data(t), bucket, fp);
  }
  std::uint64_t count_in(const table& t, std::uint64_t bucket, std::uint32_t fp) const noexcept {
    return slots(t).count_in(data(t), bucket, fp);
  }
  bool place(table& t, std::uint64_t bucket, std::uint32_t fp) noexcept { return slots(t).place(data(t), bucket, fp); }
  std::uint64_t count_nonempty(const table& t) const noexcept { return slots(t).count_nonempty(data(t), t.buckets); }
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
    const std::uint64_t n = t.buckets;
    const std::uint64_t walk = Hashing::walk(d);
    std::uint64_t bucket = primary(d, n);
    if (Hashing::starts_at_alternate(walk)) bucket = alternate(bucket, fp, t);
    std::uint32_t carried = fp;
    for (std::uint32_t k = 0; k < kicks; ++k) {
      const std::uint64_t slot = bucket * b() + victim(walk, k);
      const std::uint32_t evicted = get(t, slot);
      put(t, slot, carried);
      carried = evicted;
      bucket = alternate(bucket, carried, t);
      if (place(t, bucket, carried)) return true;
    }
    for (std::uint32_t k = kicks; k-- > 0;) {
      bucket = alternate(bucket, carried, t);
      const std::uint64_t slot = bucket * b() + victim(walk, k);
      const std::uint32_t resident = get(t, slot);
      put(t, slot, carried);
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
    detail::pipelined(
        items, [this](const auto& k) { return hash(k); }, prefetch_one, use);
  }

  /// Precomputes what lookups would otherwise derive from the geometry on every call, including the
  /// constants of holds()'s one-load bucket test when the geometry allows it.
  void prepare_constants() noexcept {
    const std::uint32_t f = geometry_.fingerprint_bits;
    swar_ = detail::cuckoo_one_load_bucket(b(), f);
    note_table_count();
    if (!swar_) return;
    bucket_bytes_ = f * b() / 8;
    lane_lows_ = detail::cuckoo_lane_lows(b(), f);
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
  bool one_load_single_table_ = false;           // swar_ and no sub-filter grown: lookups take the short path
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
