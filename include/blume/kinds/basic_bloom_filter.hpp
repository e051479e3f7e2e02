// SPDX-License-Identifier: Apache-2.0
// basic_bloom_filter<Layout, Hasher>: the verbs every bit-array filter shares (insert, contains, bulk
// calls, clear, merge, intersect, estimates), written once. A Layout decides where a digest's probes
// fall; a Hasher turns keys into digests. bloom_filter, partitioned_bloom_filter, blocked_bloom_filter
// and split_block_bloom_filter are this template with their layouts.
//
// Thread safety:
//  * const calls (contains, contains_many, count_contained, estimated_count, predicted_fpr, set_bits,
//    size_in_bytes, hash, copying, saving) may run concurrently with each other;
//  * insert_concurrent and insert_many_concurrent may run concurrently with each other and with the const
//    lookups: each bit is set with an atomic OR, lookups read with relaxed atomic loads (a plain load on
//    x86) and never take a lock. A lookup that happens after an insert returned sees that key; one racing
//    it may or may not. The AVX2 lookup of split_block_bloom_filter reads a block with one vector load,
//    which x86 performs without tearing the 32-bit words it tests;
//  * everything else (insert, insert_many, clear, merge, intersect, assignment) needs exclusive access.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <ranges>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
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

/// Where a layout puts a digest's probes, what memory it needs, and its kind's model: the contract
/// between basic_bloom_filter and its layouts.
template <class L>
concept bloom_layout =
    kind_model<L> && std::copy_constructible<L> &&
    requires(const L& l, typename L::word_type* w, const typename L::word_type* cw, digest d, double x) {
      { L::block_bits } -> std::convertible_to<std::uint32_t>;  // the header's layout field
      L(std::uint64_t{}, std::uint32_t{});                      // validates the geometry
      { l.bits() } -> std::same_as<std::uint64_t>;
      { l.hashes() } -> std::same_as<std::uint32_t>;
      { l.storage_bytes() } -> std::convertible_to<std::uint64_t>;
      l.template insert<false>(w, d);
      l.template insert<true>(w, d);
      { l.contains(cw, d) } -> std::same_as<bool>;
      l.prefetch(cw, d);
      l.prefetch_for_write(w, d);
      { L::estimate_items(x, x, x) } -> std::same_as<double>;
    };

template <class Layout, hasher Hasher = xxh3_hasher>
class basic_bloom_filter : public detail::key_interface<basic_bloom_filter<Layout, Hasher>> {
  static_assert(bloom_layout<Layout>);
  using key_calls = detail::key_interface<basic_bloom_filter>;

 public:
  using key_calls::contains;
  using key_calls::count;
  using key_calls::erase;
  using key_calls::hash;
  using key_calls::insert;
  using key_calls::insert_concurrent;
  using layout_type = Layout;
  using hasher_type = Hasher;
  using word_type = typename Layout::word_type;
  static constexpr filter_kind kind = Layout::kind;
  static constexpr std::string_view name = Layout::name;
  static constexpr kind_input input = kind_input::keys;
  static constexpr bool is_static = false;
  static constexpr size_unit unit = size_unit_of<Layout>();

  static filter_plan plan(std::uint64_t items, double fpr)
    requires requires(std::uint64_t n, double x) { Layout::plan(n, x); }
  {
    return Layout::plan(items, fpr);
  }
  static filter_plan plan_for_bits(std::uint64_t items, std::uint64_t bits)
    requires requires(std::uint64_t n, std::uint64_t m) { Layout::plan_for_bits(n, m); }
  {
    return Layout::plan_for_bits(items, bits);
  }
  static double model_fpr(double n, double m, double k) noexcept { return Layout::model_fpr(n, m, k); }
  static std::uint64_t plan_bytes(std::uint64_t bits) noexcept { return Layout::plan_bytes(bits); }
  /// Keys hashed and probed per step of the bulk calls: enough independent cache misses in flight to hide
  /// memory latency, few enough that the digests stay in registers and L1.
  static constexpr std::size_t batch_size = detail::pipeline_batch;

  /// A filter for `capacity` items at false-positive rate `fpr`, sized by the layout's planner.
  basic_bloom_filter(std::uint64_t capacity, double fpr, std::uint64_t seed = Hasher::default_seed)
      : basic_bloom_filter(Layout::plan(capacity, fpr), seed) {}

  /// A filter with the geometry of `plan` (bits and hashes; other fields are informative).
  explicit basic_bloom_filter(const filter_plan& plan, std::uint64_t seed = Hasher::default_seed)
      : basic_bloom_filter(Layout(plan.bits, plan.hashes), Hasher(seed)) {}

  /// A filter of exactly `bits` bits and `hashes` probes (the layout may reject sizes it cannot hold).
  static basic_bloom_filter with_geometry(std::uint64_t bits, std::uint32_t hashes,
                                          std::uint64_t seed = Hasher::default_seed) {
    return basic_bloom_filter(Layout(bits, hashes), Hasher(seed));
  }

  /// For codecs: reassemble a filter from its parts. `storage` must hold layout.storage_bytes() bytes.
  static basic_bloom_filter from_parts(const Layout& layout, const Hasher& hasher, byte_storage storage,
                                       std::uint64_t inserted) {
    if (storage.size() != layout.storage_bytes())
      throw format_error("payload holds " + std::to_string(storage.size()) + " bytes but the parameters need " +
                         std::to_string(layout.storage_bytes()));
    basic_bloom_filter f(layout, hasher, std::move(storage));
    f.inserted_ = inserted;
    return f;
  }

  // ---- serialization hooks (used by format.hpp) ------------------------------------------------------

  filter_parameters parameters() const noexcept {
    filter_parameters p;
    p.primary = bits();
    p.secondary = hashes();
    p.layout = Layout::block_bits;
    return p;
  }
  template <class Fn>
  void for_each_payload_segment(Fn&& fn) const {
    fn(std::span<const std::byte>(storage_.data(), storage_.size()));
  }
  static std::uint64_t payload_size(const filter_parameters& p) {
    if (p.layout != Layout::block_bits)
      throw invalid_argument("block size " + std::to_string(p.layout) + " does not match a " + std::string(name) +
                             " filter (" + std::to_string(Layout::block_bits) + ")");
    for (std::uint64_t x : p.extra)
      if (x != 0) throw invalid_argument("reserved header bytes are not zero");
    return Layout(p.primary, p.secondary).storage_bytes();
  }
  /// Adopts `payload` (zero-copy when it is a file mapping) after checking that no bit past the used
  /// ones is set: a filter never sets them, so set ones mean a forged or damaged file.
  static basic_bloom_filter from_payload(const filter_parameters& p, std::uint64_t seed, std::uint64_t inserted,
                                         byte_storage payload) {
    const Layout layout(p.primary, p.secondary);
    std::uint64_t used = layout.bits();
    if constexpr (requires { layout.payload_bits(); }) used = layout.payload_bits();
    const std::byte* bytes = payload.data();
    for (std::uint64_t bit = used; bit < payload.size() * 8; ++bit)
      if ((static_cast<unsigned>(bytes[bit / 8]) >> (bit % 8)) & 1u)
        throw format_error("padding bits past bit " + std::to_string(used) + " are set");
    // A layout whose words have an invariant of their own checks it (vi-counting's counters).
    if constexpr (requires(const word_type* w) { layout.check_words(w); })
      layout.check_words(reinterpret_cast<const word_type*>(payload.data()));
    return from_parts(layout, Hasher(seed), std::move(payload), inserted);
  }

  // ---- single keys -----------------------------------------------------------------------------------

  /// Adds a key (or a digest, detail::key_interface hashing keys). Returns true if it set at least one new
  /// bit (the key was certainly absent before).
  bool insert(const digest& d) noexcept {
    ++inserted_;
    return layout_.template insert<false>(words(), d);
  }

  /// insert() that answers how many bits it set (0: the key was present or a false positive), for layouts
  /// whose probes are bits.
  std::uint32_t insert_counting(const digest& d) noexcept
    requires requires(const Layout& l, word_type* w, const digest& x) { l.insert_counting(w, x); }
  {
    ++inserted_;
    return layout_.insert_counting(words(), d);
  }

  /// insert() that may run concurrently with other insert_concurrent calls and with lookups.
  bool insert_concurrent(const digest& d) noexcept {
    std::atomic_ref<std::uint64_t>(inserted_).fetch_add(1, std::memory_order_relaxed);
    return layout_.template insert<true>(words(), d);
  }

  /// False means certainly absent; true means present or a false positive (rate: predicted_fpr()).
  bool contains(const digest& d) const noexcept { return layout_.contains(words(), d); }
  /// Starts loading the memory a lookup of `d` touches first, for callers that batch lookups their own
  /// way (the bulk calls below do this themselves).
  void prefetch(const digest& d) const noexcept { layout_.prefetch(words(), d); }
  /// Starts loading, for writing, every word an insert of `d` touches.
  void prefetch_for_insert(const digest& d) noexcept { layout_.prefetch_for_write(words(), d); }

  // ---- bulk calls: ranges of keys or of digests ------------------------------------------------------
  // Keys are hashed batch_size at a time and the memory they probe is prefetched before it is touched, so
  // a batch keeps many cache misses in flight instead of waiting for each in turn.

  template <std::ranges::input_range R>
  void insert_many(const R& keys) noexcept {
    insert_batched<false>(keys);
  }
  template <std::ranges::input_range R>
  void insert_many_concurrent(const R& keys) noexcept {
    insert_batched<true>(keys);
  }

  /// Writes one bool per key to `out`; returns how many answered true.
  template <std::ranges::input_range R, class Out>
    requires std::output_iterator<Out, bool>
  std::size_t contains_many(const R& keys, Out out) const {
    return lookups(keys, detail::answer_writer<Out>{std::move(out)}).hits;
  }

  /// How many of `keys` the filter answers true for.
  template <std::ranges::input_range R>
  std::size_t count_contained(const R& keys) const noexcept {
    return lookups(keys, detail::answer_counter{}).hits;
  }

  // ---- whole-filter operations -----------------------------------------------------------------------

  void clear() noexcept {
    storage_.zero();
    inserted_ = 0;
  }

  /// Union: afterwards the filter answers true for every key either filter held. Throws
  /// incompatible_filters unless both have the same bits, hashes and seed.
  void merge(const basic_bloom_filter& other) {
    check_compatible(other, "merge");
    combine(other, [](word_type a, word_type b) { return merged(a, b); });
    inserted_ += other.inserted_;
  }

  /// Intersection: afterwards the filter answers true only where both did (a superset of the keys in both
  /// sets, and a higher false-positive rate than a filter built from the intersection). A layout whose
  /// words are not bits (it merges with merge_word) offers it only with an intersect_word of its own.
  void intersect(const basic_bloom_filter& other)
    requires(
        requires(word_type a, word_type b) { Layout::intersect_word(a, b); } ||
        !requires(word_type a, word_type b) { Layout::merge_word(a, b); })
  {
    check_compatible(other, "intersect");
    combine(other, [](word_type a, word_type b) {
      if constexpr (requires { Layout::intersect_word(a, b); }) {
        return Layout::intersect_word(a, b);
      } else {
        return static_cast<word_type>(a & b);
      }
    });
    inserted_ = std::min(inserted_, other.inserted_);
  }

  /// Throws incompatible_filters naming the first parameter that differs.
  void check_compatible(const basic_bloom_filter& other, std::string_view operation = "combine") const {
    auto fail = [&](std::string_view what, std::uint64_t a, std::uint64_t b) {
      throw incompatible_filters("cannot " + std::string(operation) + " " + std::string(name) +
                                 " filters: " + std::string(what) + " differ (" + std::to_string(a) + " vs " +
                                 std::to_string(b) + ")");
    };
    if (bits() != other.bits()) fail("bit counts", bits(), other.bits());
    if (hashes() != other.hashes()) fail("hash counts", hashes(), other.hashes());
    if (seed() != other.seed()) fail("seeds", seed(), other.seed());
  }

  // ---- estimates -------------------------------------------------------------------------------------

  /// Number of set bits, or non-zero counters (one pass over the array).
  std::uint64_t set_bits() const noexcept {
    std::uint64_t n = 0;
    for (word_type w : word_span()) n += occupied(w);
    return n;
  }

  // ---- only where the layout can delete (counting filters) -------------------------------------------

  /// Removes one occurrence of a key. Returns false and changes nothing when the key is certainly absent
  /// (one of its counters is zero). Erasing a key that was never inserted but is a false positive does
  /// damage other keys' counters: erase only what you inserted. Needs exclusive access.
  bool erase(const digest& d) noexcept
    requires requires(const Layout& l, word_type* w, const digest& x) { l.erase(w, x); }
  {
    if (!layout_.erase(words(), d)) return false;
    if (inserted_ != 0) --inserted_;
    return true;
  }

  /// How many times the key was inserted, at most (the smallest of its counters); 0 means absent.
  std::uint64_t count(const digest& d) const noexcept
    requires requires(const Layout& l, const word_type* w, const digest& x) { l.count(w, x); }
  {
    return layout_.count(words(), d);
  }
  double fill_ratio() const noexcept { return static_cast<double>(set_bits()) / static_cast<double>(bits()); }

  /// Distinct items estimated from the fill (Swamidass & Baldi 2007; the layout inverts its kind's expected
  /// fill, see math::classic_items). Unlike inserted(), it ignores duplicates and works after merge.
  /// +infinity for a completely full filter.
  double estimated_count() const noexcept {
    return Layout::estimate_items(static_cast<double>(set_bits()), static_cast<double>(bits()), hashes());
  }

  /// The load at which this k is optimal, n = m·ln 2 / k under the classic model (a layout whose model
  /// differs says where): the capacity a filter with no recorded design is read against.
  double optimal_load() const noexcept {
    if constexpr (requires(double x) { Layout::optimal_load(x, x); }) {
      return Layout::optimal_load(static_cast<double>(bits()), hashes());
    } else {
      return static_cast<double>(bits()) * math::ln2 / hashes();
    }
  }

  /// Whether predicted_fpr() reads the rate off the cells rather than the model at the estimated count:
  /// kinds whose cells keep state the count cannot show (vi-counting's counters that saturated and stay).
  static constexpr bool rate_from_cells = requires(const Layout& l, const word_type* w) { l.fpr_of_counters(w); };

  /// The false-positive rate now: the kind's model at estimated_count() items, or for a kind whose model
  /// does not follow from the count (rate_from_cells), the rate its cells give.
  double predicted_fpr() const noexcept {
    if constexpr (rate_from_cells) {
      return layout_.fpr_of_counters(words());
    } else {
      return predicted_fpr_at(estimated_count());
    }
  }
  /// The kind's model at `items` items (for example at the planned capacity).
  double predicted_fpr_at(double items) const noexcept {
    if (items == std::numeric_limits<double>::infinity()) return 1.0;
    return Layout::model_fpr(items, static_cast<double>(bits()), hashes());
  }

  // ---- geometry and raw access -----------------------------------------------------------------------

  std::uint64_t bits() const noexcept { return layout_.bits(); }
  std::uint32_t hashes() const noexcept { return layout_.hashes(); }
  std::uint64_t seed() const noexcept { return hasher_.seed(); }
  /// Calls to insert so far (duplicates included); carried through merge and save/load.
  std::uint64_t inserted() const noexcept { return inserted_; }
  /// Memory held: the bit array plus this object.
  std::size_t size_in_bytes() const noexcept { return storage_.size() + sizeof(*this); }

  const Layout& layout() const noexcept { return layout_; }
  const Hasher& hasher() const noexcept { return hasher_; }
  const byte_storage& storage() const noexcept { return storage_; }
  /// The bit array's bytes, writable, for codecs that fill a filter piece by piece (RedisBloom's
  /// LOADCHUNK). Bits past bits() must stay zero.
  std::span<std::byte> mutable_bytes() noexcept { return {storage_.data(), storage_.size()}; }
  /// True when the bits are a private mapping of a file (opened with map_file).
  bool is_mapped() const noexcept { return storage_.file_backed(); }

  friend bool operator==(const basic_bloom_filter& a, const basic_bloom_filter& b) noexcept {
    if (a.bits() != b.bits() || a.hashes() != b.hashes() || a.seed() != b.seed()) return false;
    return std::ranges::equal(a.word_span(), b.word_span());
  }

 private:
  basic_bloom_filter(const Layout& layout, const Hasher& hasher)
      : basic_bloom_filter(layout, hasher, byte_storage::allocate(layout.storage_bytes())) {}
  basic_bloom_filter(const Layout& layout, const Hasher& hasher, byte_storage storage)
      : layout_(layout), hasher_(hasher), storage_(std::move(storage)) {}

  static std::uint64_t occupied(word_type w) noexcept {
    if constexpr (requires { Layout::occupied(w); }) {
      return Layout::occupied(w);
    } else {
      return static_cast<std::uint64_t>(std::popcount(w));
    }
  }
  static word_type merged(word_type a, word_type b) noexcept {
    if constexpr (requires { Layout::merge_word(a, b); }) {
      return Layout::merge_word(a, b);
    } else {
      return static_cast<word_type>(a | b);
    }
  }
  template <class L, class H>
  friend double estimate_union(const basic_bloom_filter<L, H>&, const basic_bloom_filter<L, H>&);

  word_type* words() noexcept { return reinterpret_cast<word_type*>(storage_.data()); }
  const word_type* words() const noexcept { return reinterpret_cast<const word_type*>(storage_.data()); }
  std::span<const word_type> word_span() const noexcept { return {words(), storage_.size() / sizeof(word_type)}; }

  template <class Op>
  void combine(const basic_bloom_filter& other, Op op) noexcept {
    word_type* a = words();
    const word_type* b = other.words();
    const std::size_t n = storage_.size() / sizeof(word_type);
    for (std::size_t i = 0; i < n; ++i) a[i] = op(a[i], b[i]);
  }

  template <class R, class Prefetch, class Use>
  void pipelined(const R& items, Prefetch&& prefetch, Use&& use) const {
    detail::pipelined(
        items, [this](const auto& k) { return this->hash(k); }, prefetch, use);
  }

  /// A layout with probes of its own (Layout::probe, prepare, contains_batch, insert_batch) finds each key's
  /// words once, when it prefetches them, and runs each batch through one loop of its own; any other is
  /// pipelined on digests.
  static constexpr bool has_probes = requires { typename Layout::probe; };

  /// A copy of the hasher as a function of a key: a bulk loop's stores cannot reach a copy it holds.
  struct hash_with {
    Hasher hasher;
    template <class K>
    digest operator()(const K& k) const noexcept {
      return hash_key(hasher, k);
    }
  };
  /// A layout with fused loops (Layout::contains_all, insert_all) runs a whole bulk call of known size as one
  /// loop; other inputs, and other layouts, go through batches.
  template <class R>
  static constexpr bool fuses = detail::fusable_range<R> && requires(const Layout& l, word_type* w, const R& r,
                                                                     hash_with h, detail::answer_counter s) {
    l.contains_all(w, r, h, s);
    l.template insert_all<false>(w, r, h);
  };

  /// sink(answer) for every key, in order; returns the sink. It travels by value, so that a fused loop holds
  /// its count and output position in registers (a store through `out` could otherwise alias them).
  template <class R, class Sink>
  Sink lookups(const R& keys, Sink sink) const {
    if constexpr (fuses<R>) {
      return layout_.contains_all(words(), keys, hash_with{hasher_}, std::move(sink));
    } else if constexpr (has_probes) {
      using probe = typename Layout::probe;
      const word_type* w = words();
      const Layout& layout = layout_;
      detail::pipelined_probes<probe>(
          keys, [this](const auto& k) { return this->hash(k); },
          [w, &layout](const digest& d) { return layout.prepare(w, d); },
          [w, &layout, &sink](std::span<const probe> batch) { layout.contains_batch(w, batch, sink); });
    } else {
      pipelined(
          keys, [&](const digest& d) { layout_.prefetch(words(), d); },
          [&](std::span<const digest> batch) {
            for (const digest& d : batch) sink(layout_.contains(words(), d));
          });
    }
    return sink;
  }

  template <bool Atomic, class R>
  void insert_batched(const R& keys) noexcept {
    std::uint64_t count = 0;
    if constexpr (fuses<R>) {
      layout_.template insert_all<Atomic>(words(), keys, hash_with{hasher_});
      count = static_cast<std::uint64_t>(std::ranges::size(keys));
    } else if constexpr (has_probes) {
      using probe = typename Layout::probe;
      word_type* w = words();
      const Layout& layout = layout_;
      detail::pipelined_probes<probe>(
          keys, [this](const auto& k) { return this->hash(k); },
          [w, &layout](const digest& d) { return layout.prepare_for_write(w, d); },
          [w, &layout, &count](std::span<const probe> batch) {
            layout.template insert_batch<Atomic>(w, batch);
            count += batch.size();
          });
    } else {
      pipelined(
          keys, [&](const digest& d) { layout_.prefetch_for_write(words(), d); },
          [&](std::span<const digest> batch) {
            for (const digest& d : batch) layout_.template insert<Atomic>(words(), d);
            count += batch.size();
          });
    }
    if constexpr (Atomic) {
      std::atomic_ref<std::uint64_t>(inserted_).fetch_add(count, std::memory_order_relaxed);
    } else {
      inserted_ += count;
    }
  }

  Layout layout_;
  Hasher hasher_;
  byte_storage storage_;
  std::uint64_t inserted_ = 0;
};

namespace detail {
/// The words of a filter's array, for the functions below that walk two filters' arrays side by side.
template <class L, class H>
std::span<const typename L::word_type> words_of(const basic_bloom_filter<L, H>& f) noexcept {
  using word = typename L::word_type;
  return {reinterpret_cast<const word*>(f.storage().data()), f.storage().size() / sizeof(word)};
}
}  // namespace detail

/// Estimated distinct items in the union of the two filters' sets: the estimate of their OR, computed
/// without building it. Throws incompatible_filters for filters of different geometry or seed.
template <class L, class H>
double estimate_union(const basic_bloom_filter<L, H>& a, const basic_bloom_filter<L, H>& b) {
  a.check_compatible(b, "estimate the union of");
  const auto x = detail::words_of(a), y = detail::words_of(b);
  std::uint64_t set = 0;
  using filter = basic_bloom_filter<L, H>;
  for (std::size_t i = 0; i < x.size(); ++i) set += filter::occupied(filter::merged(x[i], y[i]));
  return L::estimate_items(static_cast<double>(set), static_cast<double>(a.bits()), a.hashes());
}

/// Layouts whose words are plain bits (no merge_word of their own): the set relations below compare bits,
/// which for counters would mean nothing.
template <class L>
concept plain_bit_layout = !requires(typename L::word_type w) { L::merge_word(w, w); };

/// Whether every bit set in `a` is set in `b`. For filters of one geometry and seed this is the screen of
/// a containment question: when a's keys are a subset of b's, a ⊆ b always holds, so false is a certain
/// "no" (a query structure whose features are not all in a molecule's); true may be a false positive.
/// Throws incompatible_filters for filters of different geometry or seed.
template <class L, class H>
  requires plain_bit_layout<L>
bool is_subset_of(const basic_bloom_filter<L, H>& a, const basic_bloom_filter<L, H>& b) {
  a.check_compatible(b, "compare");
  using word = typename L::word_type;
  const auto x = detail::words_of(a), y = detail::words_of(b);
  word stray = 0;
  // No early exit: the branch-free loop vectorises, and a fingerprint is a few dozen words.
  for (std::size_t i = 0; i < x.size(); ++i) stray |= static_cast<word>(x[i] & ~y[i]);
  return stray == 0;
}

/// The Tanimoto coefficient of the two bit sets, |a ∧ b| / |a ∨ b| (1 when both are empty): the similarity
/// chemists compute on fingerprints. Bits shared by collision inflate it; estimate_jaccard corrects for
/// that by estimating the items behind the bits.
template <class L, class H>
  requires plain_bit_layout<L>
double tanimoto(const basic_bloom_filter<L, H>& a, const basic_bloom_filter<L, H>& b) {
  a.check_compatible(b, "compare");
  using word = typename L::word_type;
  const auto x = detail::words_of(a), y = detail::words_of(b);
  std::uint64_t both = 0;
  std::uint64_t either = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    both += static_cast<std::uint64_t>(std::popcount(static_cast<word>(x[i] & y[i])));
    either += static_cast<std::uint64_t>(std::popcount(static_cast<word>(x[i] | y[i])));
  }
  return either == 0 ? 1.0 : static_cast<double>(both) / static_cast<double>(either);
}

/// Estimated distinct items in both sets: n(A) + n(B) − n(A ∪ B), never below zero.
template <class L, class H>
double estimate_intersection(const basic_bloom_filter<L, H>& a, const basic_bloom_filter<L, H>& b) {
  const double u = estimate_union(a, b);
  return std::max(0.0, a.estimated_count() + b.estimated_count() - u);
}

/// Jaccard index |A ∩ B| / |A ∪ B| from the two estimates (0 when both are empty). On fingerprints this is
/// the collision-corrected Tanimoto coefficient: each bit count is turned into the items behind it,
/// n* = −(m/k)·ln(1 − X/m) under the classic model, before the ratio is taken (the correction Swamidass &
/// Baldi (2007) proposed for chemical fingerprints, as their abstract and the article describe it).
template <class L, class H>
double estimate_jaccard(const basic_bloom_filter<L, H>& a, const basic_bloom_filter<L, H>& b) {
  const double u = estimate_union(a, b);
  if (u <= 0) return 0.0;
  return std::max(0.0, a.estimated_count() + b.estimated_count() - u) / u;
}

}  // namespace blume
