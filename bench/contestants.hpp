// The contestants: one struct each, all with the same small interface so one measuring routine serves
// them all (and the compiler inlines every per-key call):
//
//   explicit C(std::uint64_t capacity);        an empty structure sized (or reserved) for `capacity` keys
//   void insert(key);                          add one key
//   bool contains(key) const;                  one lookup
//   std::size_t memory_bytes() const;          memory it holds (see each struct for what is counted)
//   double predicted_fpr() const;              its model's false-positive rate at capacity (0 if exact)
// and, only where the library has a bulk path (our filters):
//   void insert_many(range);  std::size_t count_contained(range) const;  operator==
// and, only where the structure can delete (counting, cuckoo, quotient, the hash sets):
//   bool erase(key);                           remove one key; true if something was removed
// Kinds whose lookups may miss present keys by design (stable, aging) say so with
//   static constexpr bool false_negatives_by_design = true;
#pragma once

#include <bloom.h>

#include <chrono>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <iterator>
#include <limits>
#include <memory>
#include <optional>
#include <ranges>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include <absl/container/flat_hash_set.h>
#include <absl/hash/hash.h>

#include "affinity.hpp"
#include "blume/aging_bloom_filter.hpp"
#include "blume/xor_filter.hpp"
#include "blume/blocked_bloom_filter.hpp"
#include "blume/bloom_filter.hpp"
#include "blume/counting_bloom_filter.hpp"
#include "blume/golomb_coded_set.hpp"
#include "blume/cuckoo_filter.hpp"
#include "blume/partitioned_bloom_filter.hpp"
#include "blume/plan.hpp"
#include "blume/quotient_filter.hpp"
#include "blume/scalable_bloom_filter.hpp"
#include "blume/stable_bloom_filter.hpp"

namespace blume::bench {

inline constexpr double target_fpr = 0.01;

/// std::allocator that keeps a running total of the bytes currently allocated through it (and its
/// rebound copies) in a counter owned by the container's owner: hash-set memory measured, not guessed.
/// It counts bytes requested, so malloc's own per-allocation overhead (8–16 bytes per chunk) is excluded.
template <class T>
class counting_allocator {
 public:
  using value_type = T;

  explicit counting_allocator(std::size_t* live_bytes) noexcept : live_bytes_(live_bytes) {}
  template <class U>
  counting_allocator(const counting_allocator<U>& other) noexcept : live_bytes_(other.live_bytes()) {}

  T* allocate(std::size_t n) {
    T* p = std::allocator<T>{}.allocate(n);
    *live_bytes_ += n * sizeof(T);
    return p;
  }
  void deallocate(T* p, std::size_t n) noexcept {
    *live_bytes_ -= n * sizeof(T);
    std::allocator<T>{}.deallocate(p, n);
  }

  std::size_t* live_bytes() const noexcept { return live_bytes_; }
  template <class U>
  friend bool operator==(const counting_allocator& a, const counting_allocator<U>& b) noexcept {
    return a.live_bytes() == b.live_bytes();
  }

 private:
  std::size_t* live_bytes_;
};

// ---- ours ------------------------------------------------------------------------------------------------

/// One of blume's filters, sized by its (capacity, fpr) constructor, i.e. by blume::plan_for.
/// Memory: size_in_bytes(), the bit array plus the object.
template <class Filter>
class blume_contestant {
 public:
  explicit blume_contestant(std::uint64_t capacity) : capacity_(capacity), filter_(capacity, target_fpr) {}

  template <class K>
  void insert(const K& key) noexcept {
    filter_.insert(key);
  }
  template <class K>
  bool contains(const K& key) const noexcept {
    return filter_.contains(key);
  }
  template <class R>
  void insert_many(const R& keys) noexcept {
    filter_.insert_many(keys);
  }
  template <class R>
  std::size_t count_contained(const R& keys) const noexcept {
    return filter_.count_contained(keys);
  }

  std::size_t memory_bytes() const noexcept { return filter_.size_in_bytes(); }
  double predicted_fpr() const noexcept { return filter_.predicted_fpr_at(static_cast<double>(capacity_)); }
  friend bool operator==(const blume_contestant& a, const blume_contestant& b) noexcept {
    return a.filter_ == b.filter_;
  }

 private:
  std::uint64_t capacity_;
  Filter filter_;
};

/// A static filter (xor, binary fuse, Golomb-coded set): insert() only collects each key's digest half (8 bytes); finish()
/// builds the filter from all of them, and the benchmark times both as the construction.
template <class Filter>
class static_contestant {
 public:
  explicit static_contestant(std::uint64_t capacity) { lows_.reserve(capacity); }

  template <class K>
  void insert(const K& key) {
    lows_.push_back(blume::hash_key(blume::xxh3_hasher(), key).low);
  }
  void finish() {
    bench::on_all_cpus([&] {
      if constexpr (Filter::kind == blume::golomb_coded_set<>::kind)  // at the ε = 2^−8
        filter_.emplace(Filter::build_from_hashes(std::move(lows_), 8, blume::xxh3_hasher::default_seed));
      else
        filter_.emplace(Filter::build_from_hashes(std::move(lows_), blume::xxh3_hasher::default_seed));
    });
  }
  template <class R>
  void insert_many(const R& keys) {
    for (auto&& k : keys) insert(k);
    finish();
  }
  template <class K>
  bool contains(const K& key) const noexcept {
    return filter_->contains(key);
  }
  template <class R>
  std::size_t count_contained(const R& keys) const noexcept {
    return filter_->count_contained(keys);
  }
  std::size_t memory_bytes() const noexcept { return filter_->size_in_bytes(); }
  double predicted_fpr() const noexcept { return filter_->predicted_fpr(); }
  friend bool operator==(const static_contestant& a, const static_contestant& b) noexcept {
    return *a.filter_ == *b.filter_;
  }

 private:
  std::vector<std::uint64_t> lows_;
  std::optional<Filter> filter_;
};

// ---- the rest of the family (selected with --family or by name in --kinds) -------------------------------

/// How each family kind is built for `capacity` keys at target_fpr, and what to say about its geometry.
/// Only the public API is used: (capacity, fpr) constructors, insert/contains/erase/count_contained,
/// size_in_bytes, predicted_fpr, and the kind's own geometry getters for the details line.
struct counting_kind {
  using filter = blume::counting_bloom_filter<4>;
  static filter make(std::uint64_t capacity) { return filter(capacity, target_fpr); }
  static double predicted_fpr(const filter& f, std::uint64_t capacity) {
    return f.predicted_fpr_at(static_cast<double>(capacity));
  }
  static std::string details(const filter& f) {
    return "4-bit counters: " + std::to_string(f.bits()) + " counters, k = " + std::to_string(f.hashes());
  }
};

struct scalable_kind {
  using filter = blume::scalable_bloom_filter<>;
  static filter make(std::uint64_t capacity) { return filter(capacity, target_fpr); }
  static double predicted_fpr(const filter& f, std::uint64_t) { return f.predicted_fpr(); }
  static std::string details(const filter& f) {
    return "first layer for n keys at 0.5% (tightening 0.5, growth 2); " + std::to_string(f.layers().size()) +
           " layer(s) after n inserts";
  }
};

struct cuckoo_kind {
  using filter = blume::cuckoo_filter<>;
  static constexpr bool insert_false_means_full = true;
  static filter make(std::uint64_t capacity) { return filter(capacity, target_fpr); }
  static double predicted_fpr(const filter& f, std::uint64_t) { return f.predicted_fpr(); }  // at its load
  static std::string details(const filter& f) {
    char load[32];
    std::snprintf(load, sizeof load, "%.1f%%", f.load_factor() * 100);
    return std::to_string(f.fingerprint_bits()) + "-bit fingerprints, " + std::to_string(f.buckets()) +
           " buckets of " + std::to_string(f.bucket_size()) + ", load " + load + " after n inserts";
  }
};

struct quotient_kind {
  using filter = blume::quotient_filter<>;
  static constexpr bool insert_false_means_full = true;
  static filter make(std::uint64_t capacity) { return filter(capacity, target_fpr); }
  static double predicted_fpr(const filter& f, std::uint64_t) { return f.predicted_fpr(); }  // at n entries
  /// A template so that only the geometry getters the filter still offers are read (its internals are
  /// being reworked: power-of-two quotients or any slot count).
  template <class F>
  static std::string details(const F& f) {
    std::string out;
    if constexpr (requires { f.slots(); }) out += std::to_string(f.slots()) + " slots, ";
    if constexpr (requires { f.quotient_bits(); }) out += "q = " + std::to_string(f.quotient_bits()) + ", ";
    if constexpr (requires { f.remainder_bits(); }) out += "r = " + std::to_string(f.remainder_bits()) + ", ";
    if constexpr (requires { f.load_factor(); }) {
      char load[32];
      std::snprintf(load, sizeof load, "%.1f%%", f.load_factor() * 100);
      out += std::string("load ") + load + " after n inserts";
    }
    return out;
  }
};

struct stable_kind {
  using filter = blume::stable_bloom_filter<>;
  static constexpr bool false_negatives_by_design = true;
  /// Cells and k from the planner (the classic geometry in 2-bit cells), then the decrements P that make
  /// the rate on an endless stream the target.
  static filter make(std::uint64_t capacity) { return filter::for_capacity(capacity, target_fpr); }
  static double predicted_fpr(const filter& f, std::uint64_t) { return f.predicted_fpr(); }  // from its zeros now
  static std::string details(const filter& f) {
    char limit[32];
    std::snprintf(limit, sizeof limit, "%.4f%%", f.stable_fpr() * 100);
    return std::to_string(f.cells()) + " cells of 2 bits, k = " + std::to_string(f.hashes()) + ", P = " +
           std::to_string(f.decrements()) + " decrements per insert; stable (endless-stream) rate " + limit;
  }
};

struct aging_kind {
  using filter = blume::aging_bloom_filter<>;
  static constexpr bool false_negatives_by_design = true;
  static filter make(std::uint64_t capacity) {
    return filter(capacity, target_fpr, std::chrono::nanoseconds{0}, filter::hasher_type::default_seed, now());
  }
  static double predicted_fpr(const filter& f, std::uint64_t) { return f.predicted_fpr(); }
  static std::string details(const filter& f) {
    return "window = n = " + std::to_string(f.window()) + " items (two split-block buffers of n/2 at 0.5%); " +
           std::to_string(f.inserted()) + " items in the window after n inserts";
  }
  /// A count-based window never consults the clock, so every call gets this fixed time point: the default
  /// argument would read the system clock once per call, which is not the structure's cost.
  static filter::time_point now() noexcept { return filter::time_point{}; }
};

/// A family kind wrapped in the contestant interface. Optional calls (bulk, erase, ==) exist exactly when
/// the filter has them, so the measuring code skips what a kind does not offer.
template <class Kind>
class family_contestant {
 public:
  using filter_type = typename Kind::filter;
  static constexpr bool false_negatives_by_design = requires { requires Kind::false_negatives_by_design; };
  static constexpr bool timed = requires { Kind::now(); };

  explicit family_contestant(std::uint64_t capacity) : capacity_(capacity), filter_(Kind::make(capacity)) {}

  template <class K>
  void insert(const K& key) {
    bool stored;
    if constexpr (timed) stored = filter_.insert(key, Kind::now());
    else stored = filter_.insert(key);
    if constexpr (requires { requires Kind::insert_false_means_full; }) refused_ += !stored;
  }
  template <class K>
  bool contains(const K& key) const noexcept {
    if constexpr (timed) return filter_.contains(key, Kind::now());
    else return filter_.contains(key);
  }
  template <class R>
  void insert_many(const R& keys)
    requires requires(filter_type& f) { f.insert_many(keys); }
  {
    if constexpr (requires { requires Kind::insert_false_means_full; }) {
      refused_ += static_cast<std::uint64_t>(std::ranges::distance(keys)) - filter_.insert_many(keys);
    } else if constexpr (timed) {
      filter_.insert_many(keys, Kind::now());
    } else {
      filter_.insert_many(keys);
    }
  }
  template <class R>
  std::size_t count_contained(const R& keys) const
    requires requires(const filter_type& f) { f.count_contained(keys); }
  {
    if constexpr (timed) return filter_.count_contained(keys, Kind::now());
    else return filter_.count_contained(keys);
  }
  template <class K>
  bool erase(const K& key)
    requires requires(filter_type& f) { f.erase(key); }
  {
    return filter_.erase(key);
  }

  std::size_t memory_bytes() const noexcept { return filter_.size_in_bytes(); }
  double predicted_fpr() const noexcept { return Kind::predicted_fpr(filter_, capacity_); }
  std::string details() const { return Kind::details(filter_); }
  /// Fingerprint bits and slot load of the fingerprint tables (cuckoo, quotient); 0 and NaN elsewhere.
  unsigned fingerprint_bits() const noexcept {
    if constexpr (requires { filter_.fingerprint_bits(); }) return filter_.fingerprint_bits();
    else return 0;
  }
  double load_factor() const noexcept {
    if constexpr (requires { filter_.load_factor(); }) return filter_.load_factor();
    else return std::numeric_limits<double>::quiet_NaN();
  }
  /// Inserts the filter refused because it was full (cuckoo, quotient); 0 for the others.
  std::uint64_t refused_inserts() const noexcept { return refused_; }
  friend bool operator==(const family_contestant& a, const family_contestant& b) noexcept
    requires std::equality_comparable<filter_type>
  {
    return a.filter_ == b.filter_;
  }

 private:
  std::uint64_t capacity_;
  filter_type filter_;
  std::uint64_t refused_ = 0;
};

// ---- baselines -------------------------------------------------------------------------------------------

/// A hash set of Key (std::uint64_t, or std::string_view into the workload's arena), reserved for
/// `capacity` keys up front like the filters are. Memory: bytes allocated (counting allocator) plus the
/// object; for string_view keys the measuring code adds the arena bytes the views point into.
template <template <class...> class Set, class Key, class Hash>
class hash_set_contestant {
 public:
  explicit hash_set_contestant(std::uint64_t capacity) : set_(0, Hash{}, std::equal_to<Key>{}, allocator(&live_bytes_)) {
    set_.reserve(capacity);
  }
  hash_set_contestant(const hash_set_contestant&) = delete;  // the allocator points at live_bytes_
  static constexpr bool holds_key_views = std::same_as<Key, std::string_view>;
  hash_set_contestant& operator=(const hash_set_contestant&) = delete;

  void insert(Key key) { set_.insert(key); }
  bool contains(Key key) const noexcept { return set_.find(key) != set_.end(); }
  bool erase(Key key) { return set_.erase(key) == 1; }

  std::size_t memory_bytes() const noexcept { return live_bytes_ + sizeof(set_); }
  double predicted_fpr() const noexcept { return 0.0; }

 private:
  using allocator = counting_allocator<Key>;
  std::size_t live_bytes_ = 0;  // declared before set_: outlives it
  Set<Key, Hash, std::equal_to<Key>, allocator> set_;
};

template <class Key>
using std_unordered_set_contestant = hash_set_contestant<std::unordered_set, Key, std::hash<Key>>;
template <class Key>
using absl_flat_hash_set_contestant = hash_set_contestant<absl::flat_hash_set, Key, absl::Hash<Key>>;

/// libbloom (Jyri Virkki's C library): a classic Bloom filter with bits = n·(−ln ε/ln²2) and
/// k = ⌈ln 2 · bits/n⌉, probes from two 32-bit MurmurHash2 values. Memory: its `bytes` field plus the struct.
class libbloom_contestant {
 public:
  explicit libbloom_contestant(std::uint64_t capacity) {
    if (capacity > static_cast<std::uint64_t>(std::numeric_limits<int>::max()) ||
        bloom_init(&bloom_, static_cast<int>(capacity), target_fpr) != 0)
      throw std::runtime_error("libbloom: bloom_init failed for " + std::to_string(capacity) + " entries");
  }
  libbloom_contestant(const libbloom_contestant&) = delete;
  libbloom_contestant& operator=(const libbloom_contestant&) = delete;
  ~libbloom_contestant() { bloom_free(&bloom_); }

  void insert(std::uint64_t key) noexcept { bloom_add(&bloom_, &key, sizeof key); }
  void insert(std::string_view key) noexcept { bloom_add(&bloom_, key.data(), static_cast<int>(key.size())); }
  // bloom_check does not modify the filter but takes a non-const pointer.
  bool contains(std::uint64_t key) const noexcept { return bloom_check(mutable_bloom(), &key, sizeof key) == 1; }
  bool contains(std::string_view key) const noexcept {
    return bloom_check(mutable_bloom(), key.data(), static_cast<int>(key.size())) == 1;
  }

  std::size_t memory_bytes() const noexcept { return static_cast<std::size_t>(bloom_.bytes) + sizeof bloom_; }
  double predicted_fpr() const noexcept {
    return blume::math::bloom_fpr(bloom_.entries, bloom_.bits, bloom_.hashes);
  }

 private:
  struct bloom* mutable_bloom() const noexcept { return const_cast<struct bloom*>(&bloom_); }
  struct bloom bloom_ {};
};

}  // namespace blume::bench
