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
#pragma once

#include <bloom.h>

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_set>

#include <absl/container/flat_hash_set.h>
#include <absl/hash/hash.h>

#include "blume/blocked_bloom_filter.hpp"
#include "blume/bloom_filter.hpp"
#include "blume/partitioned_bloom_filter.hpp"
#include "blume/plan.hpp"

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
