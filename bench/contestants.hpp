// SPDX-License-Identifier: Apache-2.0
// The contestants: blume's kinds through one template (kind_contestant), each baseline in its own struct,
// all with the same small interface so one measuring routine serves them all (and the compiler inlines
// every per-key call):
//
//   explicit C(std::uint64_t capacity);        an empty structure sized (or reserved) for `capacity` keys
//   void insert(key);                          add one key
//   bool contains(key) const;                  one lookup
//   std::size_t memory_bytes() const;          memory it holds (see each struct for what is counted)
//   double predicted_fpr() const;              its model's false-positive rate at capacity (0 if exact)
// and, only where the library has a bulk path (our filters):
//   void insert_many(range);  std::size_t count_contained(range) const;  operator==
// and, only where the structure can delete (our kinds with erase(): counting, cuckoo, quotient; the hash sets):
//   bool erase(key);                           remove one key; true if something was removed
// Kinds whose lookups may miss present keys by design (those that forget: stable, aging) say so with
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
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include <absl/container/flat_hash_set.h>
#include <absl/hash/hash.h>

#include "affinity.hpp"
#include "blume/kinds.hpp"
#include "blume/plan.hpp"
#include "our_kinds.hpp"

namespace blume::bench {

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

namespace detail {

/// Kinds whose calls take the time (a time window): the benchmark hands every call one fixed time point.
template <class F>
concept takes_time = requires { typename F::time_point; };

/// Bits per counter or cell of a kind whose planner counts cells (plan_bytes(m) for m cells): counting's
/// counters, stable's cells.
template <class F>
constexpr std::uint64_t cell_bits() {
  return F::plan_bytes(512) * 8 / 512;
}

inline std::string percent(double fraction, const char* format = "%.1f%%") {
  char text[32];
  std::snprintf(text, sizeof text, format, fraction * 100);
  return text;
}
inline std::string number(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", value);
  return text;
}

/// The kind's geometry after the n inserts, in words, read off the getters it offers ("" for a plain bit
/// array or a static filter: its bits/key say it all).
template <class F>
std::string geometry(const F& f, std::uint64_t capacity, double fpr) {
  if constexpr (can_grow<F> && requires {
                  f.layers();
                  f.layer_capacity(0);
                  f.layer_fpr(0);
                }) {
    // A chain of layers: the first sized for the capacity, the next ones by its growth and tightening.
    const std::uint64_t first = f.layer_capacity(0);
    return "first layer for " + (first == capacity ? std::string("n") : std::to_string(first)) + " keys at " +
           number(f.layer_fpr(0) * 100) + "% (tightening " + number(f.layer_fpr(1) / f.layer_fpr(0)) + ", growth " +
           number(static_cast<double>(f.layer_capacity(1)) / static_cast<double>(first)) + "); " +
           std::to_string(f.layers().size()) + " layer(s) after n inserts";
  } else if constexpr (requires {
                         f.window();
                         f.inserted();
                         typename F::buffer_type;
                       }) {
    // A sliding window of two buffers, each for half the window at half the rate.
    return "window = n = " + std::to_string(f.window()) + " items (two " + std::string(F::buffer_type::name) +
           " buffers of n/2 at " + number(fpr / 2 * 100) + "%); " + std::to_string(f.inserted()) +
           " items in the window after n inserts";
  } else if constexpr (requires {
                         f.cells();
                         f.hashes();
                         f.decrements();
                         f.stable_fpr();
                       }) {
    return std::to_string(f.cells()) + " cells of " + std::to_string(cell_bits<F>()) +
           " bits, k = " + std::to_string(f.hashes()) + ", P = " + std::to_string(f.decrements()) +
           " decrements per insert; stable (endless-stream) rate " + percent(f.stable_fpr(), "%.4f%%");
  } else if constexpr (requires {
                         f.fingerprint_bits();
                         f.buckets();
                         f.bucket_size();
                         f.load_factor();
                       }) {
    return std::to_string(f.fingerprint_bits()) + "-bit fingerprints, " + std::to_string(f.buckets()) + " buckets of " +
           std::to_string(f.bucket_size()) + ", load " + percent(f.load_factor()) + " after n inserts";
  } else if constexpr (requires {
                         f.slots();
                         f.load_factor();
                       }) {
    // Slots of fingerprints (quotient): whichever of its geometry getters it offers.
    std::string out = std::to_string(f.slots()) + " slots, ";
    if constexpr (requires { f.quotient_bits(); }) out += "q = " + std::to_string(f.quotient_bits()) + ", ";
    if constexpr (requires { f.remainder_bits(); }) out += "r = " + std::to_string(f.remainder_bits()) + ", ";
    return out + "load " + percent(f.load_factor()) + " after n inserts";
  } else if constexpr (requires {
                         f.layers();
                         f.bits();
                         f.hashes();
                       }) {
    return std::to_string(f.layers()) + " layers of " + std::to_string(f.bits()) +
           " bits, k = " + std::to_string(f.hashes());
  } else if constexpr (requires {
                         f.depth();
                         f.level(0).bits();
                         f.level(0).hashes();
                       }) {
    return std::to_string(f.depth()) + " levels of " + std::to_string(f.level(0).bits()) +
           " bits, k = " + std::to_string(f.level(0).hashes()) + "; lookups ask level 0";
  } else if constexpr (requires {
                         f.cells();
                         f.hashes();
                         f.sets();
                       }) {
    return std::to_string(f.cells()) + " cells of " + std::to_string(8 * sizeof(typename F::cell_type)) + " bits" +
           (f.layout() == cell_layout::blocked ? " in 64-byte blocks" : "") + ", k = " + std::to_string(f.hashes()) +
           ", " + std::to_string(f.sets()) + " sets";
  } else if constexpr (requires {
                         f.cells();
                         f.hashes();
                         typename F::value_type;
                       }) {
    std::string out =
        std::to_string(f.cells()) + " cells of " + std::to_string(8 * sizeof(typename F::value_type)) + " bits";
    if constexpr (requires {
                    { f.layout() } -> std::same_as<cell_layout>;
                  })
      if (f.layout() == cell_layout::blocked) out += " in 64-byte blocks";
    return out + ", k = " + std::to_string(f.hashes());
  } else if constexpr (bit_array_filter<F> && can_count<F>) {
    return std::to_string(cell_bits<F>()) + "-bit counters: " + std::to_string(f.bits()) +
           " counters, k = " + std::to_string(f.hashes());
  } else {
    return "";
  }
}

}  // namespace detail

/// One of blume's kinds, built and called the way the kind declares, through the public API only:
///  - a static kind (F::is_static) takes no inserts: insert() collects each key's digest half (8 bytes) and
///    finish() builds the filter from all of them with F::from_digest_lows, with every CPU allowed (its
///    construction runs on two threads); the benchmark times both as the construction;
///  - the others are sized up front as blume::make_filter sizes them: F::for_capacity(n, fpr) where the
///    kind has one (stable: the decrements that hold the rate on an endless stream), else the (n, fpr)
///    constructor (sized by blume::plan_for);
///  - a kind whose calls take the time gets one fixed time point in every call, construction included:
///    its count-based window never reads it, and the default argument would read the system clock on every
///    call, which is not the structure's cost;
///  - a kind that may be full (may_be_full) has its refusals counted: insert() returns false only for want
///    of room, or, where insert() also answers false for a key already present, try_insert() says "full";
///  - erase, and == between the filters built one key at a time and in bulk, exist where the kind has them.
/// The rate is kind_setup<F>::fpr unless the constructor is given one (the FPR sweep). Memory: size_in_bytes(). Predicted FPR: the kind's model at n keys where
/// it takes a key count (predicted_fpr_at), else its model in the state after the n inserts.
/// `Cells`: the cell layout of the kinds built on lattice cells (spatial, compact), which take one.
template <class F, cell_layout Cells = cell_layout::classic>
class kind_contestant {
 public:
  static constexpr double default_fpr = kind_setup<F>::fpr;
  /// Kinds that forget by design: their misses are measured as a rate, not reported as failures.
  static constexpr bool false_negatives_by_design = forgets_v<F>;

  explicit kind_contestant(std::uint64_t capacity, double rate = default_fpr) : capacity_(capacity), fpr_(rate) {
    if constexpr (F::is_static) lows_.reserve(capacity);
    else filter_.emplace(make(capacity, rate));
  }

  template <class K>
  void insert(const K& key) {
    if constexpr (F::is_static) {
      lows_.push_back(blume::hash_key(typename F::hasher_type(), key).low);
    } else if constexpr (requires { filter_->try_insert(key); }) {
      refused_ += filter_->try_insert(key) == insert_result::full;
    } else if constexpr (may_be_full<F>) {
      refused_ += !call_insert(key);
    } else {
      call_insert(key);
    }
  }
  void finish()
    requires(F::is_static)
  {
    static_assert(
        requires(std::vector<std::uint64_t> lows) { F::from_digest_lows(std::move(lows), 0.01, nullptr); },
        "a static kind built from one key set offers from_digest_lows (kind.hpp)");
    bench::on_all_cpus([&] { filter_.emplace(F::from_digest_lows(std::move(lows_), fpr_, nullptr)); });
  }
  template <class K>
  bool contains(const K& key) const noexcept {
    if constexpr (detail::takes_time<F>) return filter_->contains(key, now());
    else return filter_->contains(key);
  }
  template <class R>
  void insert_many(const R& keys)
    requires(
        F::is_static || requires(F& f) { f.insert_many(keys); } ||
        requires(F& f, std::vector<std::uint32_t> values) { f.insert_many(keys, values); })
  {
    if constexpr (takes_valued_inserts<F>) {
      // The values insert() would give these keys, one after the other.
      std::vector<std::uint32_t> values(static_cast<std::size_t>(std::ranges::distance(keys)));
      for (auto& v : values) v = static_cast<std::uint32_t>(1 + next_value_++ % valued_sets);
      filter_->insert_many(keys, values);
    } else if constexpr (F::is_static) {
      for (auto&& k : keys) insert(k);
      finish();
    } else if constexpr (may_be_full<F>) {
      refused_ += static_cast<std::uint64_t>(std::ranges::distance(keys)) - filter_->insert_many(keys);
    } else if constexpr (detail::takes_time<F>) {
      filter_->insert_many(keys, now());
    } else {
      filter_->insert_many(keys);
    }
  }
  template <class R>
  std::size_t count_contained(const R& keys) const
    requires requires(const F& f) { f.count_contained(keys); }
  {
    if constexpr (detail::takes_time<F>) return filter_->count_contained(keys, now());
    else return filter_->count_contained(keys);
  }
  template <class K>
  bool erase(const K& key)
    requires requires(F& f) { f.erase(key); }
  {
    return filter_->erase(key);
  }

  std::size_t memory_bytes() const noexcept { return filter_->size_in_bytes(); }
  double predicted_fpr() const noexcept {
    if constexpr (requires(const F& f) { f.predicted_fpr_at(1.0); })
      return filter_->predicted_fpr_at(static_cast<double>(capacity_));
    else return filter_->predicted_fpr();
  }
  std::string details() const { return detail::geometry(*filter_, capacity_, fpr_); }
  /// Fingerprint bits and slot load of the fingerprint tables (cuckoo, quotient); 0 and NaN elsewhere.
  unsigned fingerprint_bits() const noexcept {
    if constexpr (requires(const F& f) { f.fingerprint_bits(); }) return filter_->fingerprint_bits();
    else return 0;
  }
  double load_factor() const noexcept {
    if constexpr (requires(const F& f) { f.load_factor(); }) return filter_->load_factor();
    else return std::numeric_limits<double>::quiet_NaN();
  }
  /// Keys the filter refused for want of room (0 unless the kind may be full).
  std::uint64_t refused_inserts() const noexcept { return refused_; }
  friend bool operator==(const kind_contestant& a, const kind_contestant& b) noexcept
    requires std::equality_comparable<F>
  {
    return *a.filter_ == *b.filter_;
  }

 private:
  static F make(std::uint64_t capacity, double fpr) {
    if constexpr (requires { F::for_capacity(capacity, fpr); }) {
      return F::for_capacity(capacity, fpr);
    } else if constexpr (detail::takes_time<F>) {
      static_assert(std::constructible_from<F, std::uint64_t, double, std::chrono::nanoseconds, std::uint64_t,
                                            typename F::time_point>,
                    "a kind that takes the time is built as (window, fpr, window time, seed, now)");
      return F(capacity, fpr, std::chrono::nanoseconds{0}, F::hasher_type::default_seed, now());
    } else if constexpr (requires(std::span<const std::uint64_t> sizes) { F(sizes, fpr, Cells); }) {
      // Planned for its sets: the keys shared out over valued_sets sets, as insert numbers them.
      std::vector<std::uint64_t> sizes(valued_sets, capacity / valued_sets);
      for (std::uint64_t i = 0; i < capacity % valued_sets; ++i) ++sizes[i];
      return F(sizes, fpr, Cells);
    } else if constexpr (std::constructible_from<F, std::uint64_t, double, cell_layout>) {
      return F(capacity, fpr, Cells);
    } else {
      static_assert(Cells == cell_layout::classic, "a kind without cells of its own has no cell layout");
      return F(capacity, fpr);
    }
  }
  static auto now() noexcept
    requires detail::takes_time<F>
  {
    return typename F::time_point{};
  }
  template <class K>
  bool call_insert(const K& key) {
    if constexpr (detail::takes_time<F>) {
      return filter_->insert(key, now());
    } else if constexpr (takes_valued_inserts<F>) {
      filter_->insert(key, static_cast<std::uint32_t>(1 + next_value_++ % valued_sets));
      return true;
    } else {
      return filter_->insert(key);
    }
  }

  std::uint64_t capacity_;
  double fpr_;
  std::optional<F> filter_;
  std::vector<std::uint64_t> lows_;  // a static kind's digest halves, until finish()
  std::uint64_t refused_ = 0;
  std::uint64_t next_value_ = 0;  // kinds that take values: the values cycle through 1 … valued_sets
};

// ---- baselines -------------------------------------------------------------------------------------------

/// A hash set of Key (std::uint64_t, or std::string_view into the workload's arena), reserved for
/// `capacity` keys up front like the filters are. Memory: bytes allocated (counting allocator) plus the
/// object; for string_view keys the measuring code adds the arena bytes the views point into.
template <template <class...> class Set, class Key, class Hash>
class hash_set_contestant {
 public:
  explicit hash_set_contestant(std::uint64_t capacity)
      : set_(0, Hash{}, std::equal_to<Key>{}, allocator(&live_bytes_)) {
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
  double predicted_fpr() const noexcept { return blume::math::bloom_fpr(bloom_.entries, bloom_.bits, bloom_.hashes); }

 private:
  struct bloom* mutable_bloom() const noexcept { return const_cast<struct bloom*>(&bloom_); }
  struct bloom bloom_ {};
};

}  // namespace blume::bench
