// A Bloom filter spread over the processing elements (PEs) of a shared-nothing machine, as Sanders, Schlag
// & Müller describe it ("Communication efficient algorithms for fundamental big data problems", IEEE Big
// Data 2013): one global filter of s bits, PE p holding bits [p·s/P, (p+1)·s/P). A bulk insert hashes each
// local key once to a bit position, sorts the positions (bucket sort by owner, then by position), and sends
// each owner one packet of its positions, Golomb-coded (detail/hash_packet.hpp), through one
// MPI_Alltoallv. A bulk query routes positions the same way and the owners send back one bit per position.
//
// It is the "single-shot" filter: one bit per key (k = 1), so the rate is ε = 1 − e^{−n/s}, and a key's
// whole traffic is one Golomb code: a PE's n/P keys lie among s positions, so about log2(e·s·P/n) bits
// each. At 1% (s/n ≈ 99.5) that is 8.1 + log2 P bits on the wire (10.1 on 4 PEs), against 64 for a raw
// hash and the key's own length for the keys.
//
// Every call here is collective: all ranks of the communicator call it, in the same order.
#pragma once

#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <ranges>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "blume/detail/hash_packet.hpp"
#include "blume/distributed/exchange.hpp"
#include "blume/error.hpp"
#include "blume/hash.hpp"
#include "blume/plan.hpp"

namespace blume::distributed {

/// What one collective call sent from this rank.
struct traffic {
  std::uint64_t items = 0;         // keys hashed here
  std::uint64_t packet_bytes = 0;  // Golomb-coded packets, headers included (to other ranks and to itself)
  std::uint64_t answer_bytes = 0;  // answer bits sent back (queries)
  std::uint64_t raw_hash_bytes() const noexcept { return 8 * items; }  // the same positions as 64-bit words
};

template <hasher Hasher = xxh3_hasher>
class partitioned_filter {
 public:
  /// A filter of at least `global_bits` bits (rounded up to whole 64-bit words per rank) over the ranks of
  /// `comm`. Collective; every rank must pass the same size and seed.
  partitioned_filter(MPI_Comm comm, std::uint64_t global_bits, std::uint64_t seed = Hasher::default_seed)
      : comm_(comm), where_(place::of(comm)), hasher_(seed) {
    if (global_bits == 0 || global_bits > max_filter_bits)
      throw invalid_argument("distributed filter: the size must be in [1, 2^40] bits, got " +
                             std::to_string(global_bits));
    check_same(comm, global_bits, "the filter's size");
    check_same(comm, seed, "the seed");
    const auto p = static_cast<std::uint64_t>(where_.ranks);
    local_bits_ = (global_bits + 64 * p - 1) / (64 * p) * 64;
    words_.assign(local_bits_ / 64, 0);
  }

  /// Sized for `items` keys over all ranks at rate `fpr`: s = n / −ln(1 − ε).
  static partitioned_filter for_capacity(MPI_Comm comm, std::uint64_t items, double fpr,
                                         std::uint64_t seed = Hasher::default_seed) {
    blume::detail::check_plan_inputs(items, fpr);
    const double bits = std::ceil(static_cast<double>(items) / -std::log1p(-fpr));
    blume::detail::check_bits(bits, items, fpr);
    return partitioned_filter(comm, static_cast<std::uint64_t>(bits), seed);
  }

  /// Inserts this rank's keys (any range of keys); collective.
  template <std::ranges::input_range R>
  void insert_many(const R& keys) {
    last_ = {};
    const routed r = route(keys);
    const received in = all_to_all(comm_, r.packets);
    for (int p = 0; p < where_.ranks; ++p) {
      scratch_.clear();
      blume::detail::decode_hash_packet(in.from(p), local_bits_, scratch_);
      for (const std::uint64_t bit : scratch_) words_[bit / 64] |= std::uint64_t{1} << (bit % 64);
    }
  }

  /// One answer per key of this rank's `keys`, in order (0: certainly absent); collective.
  template <std::ranges::input_range R>
  std::vector<std::uint8_t> contains_many(const R& keys) {
    last_ = {};
    const routed r = route(keys);
    const received in = all_to_all(comm_, r.packets);
    // Answer each sender's positions in the order they came, one bit each.
    std::vector<std::vector<std::uint64_t>> answers(where_.ranks);
    for (int p = 0; p < where_.ranks; ++p) {
      scratch_.clear();
      blume::detail::decode_hash_packet(in.from(p), local_bits_, scratch_);
      auto& bits = answers[p];
      bits.assign((scratch_.size() + 63) / 64, 0);
      for (std::size_t j = 0; j < scratch_.size(); ++j)
        if ((words_[scratch_[j] / 64] >> (scratch_[j] % 64)) & 1) bits[j / 64] |= std::uint64_t{1} << (j % 64);
      last_.answer_bytes += 8 * bits.size();
    }
    const received back = all_to_all(comm_, answers);
    std::vector<std::uint8_t> out(r.keys, 0);
    for (int p = 0; p < where_.ranks; ++p) {
      const std::span<const std::uint64_t> bits = back.from(p);
      const std::vector<std::uint64_t>& order = r.order[p];
      if (bits.size() != (order.size() + 63) / 64)
        throw format_error("distributed filter: rank " + std::to_string(p) + " answered " +
                           std::to_string(bits.size()) + " words for " + std::to_string(order.size()) + " queries");
      for (std::size_t j = 0; j < order.size(); ++j) out[order[j]] = (bits[j / 64] >> (j % 64)) & 1;
    }
    return out;
  }

  /// The rate after `items` distinct keys over all ranks: 1 − e^{−n/s}.
  double predicted_fpr(double items) const noexcept { return -std::expm1(-items / static_cast<double>(global_bits())); }
  std::uint64_t global_bits() const noexcept { return local_bits_ * static_cast<std::uint64_t>(where_.ranks); }
  std::uint64_t local_bits() const noexcept { return local_bits_; }
  /// The first global bit this rank holds.
  std::uint64_t first_bit() const noexcept { return local_bits_ * static_cast<std::uint64_t>(where_.rank); }
  /// This rank's slice of the global bit array.
  std::span<const std::uint64_t> local_words() const noexcept { return words_; }
  /// A key's global bit: the one the filter sets and tests for it.
  template <key K>
  std::uint64_t position(const K& k) const noexcept {
    return reduce(hash_key(hasher_, k).low, global_bits());
  }
  /// What this rank sent in the last insert_many or contains_many.
  const traffic& last_traffic() const noexcept { return last_; }
  int rank() const noexcept { return where_.rank; }
  int ranks() const noexcept { return where_.ranks; }
  std::uint64_t seed() const noexcept { return hasher_.seed(); }

 private:
  /// The packets for each owner, and for each owner the local key indexes in the order of its packet.
  struct routed {
    std::vector<std::vector<std::uint64_t>> packets;
    std::vector<std::vector<std::uint64_t>> order;
    std::uint64_t keys = 0;
  };

  template <std::ranges::input_range R>
  routed route(const R& keys) {
    routed r;
    const auto p = static_cast<std::size_t>(where_.ranks);
    // (position within the owner's slice, key index) per owner: a bucket sort by owner, then a sort of
    // each bucket, which also puts a key's repeats side by side.
    std::vector<std::vector<std::pair<std::uint64_t, std::uint64_t>>> buckets(p);
    const std::uint64_t s = global_bits();
    for (auto&& k : keys) {
      const std::uint64_t bit = reduce(hash_key(hasher_, k).low, s);
      buckets[bit / local_bits_].emplace_back(bit % local_bits_, r.keys++);
    }
    r.packets.resize(p);
    r.order.resize(p);
    std::vector<std::uint64_t> sorted;
    for (std::size_t q = 0; q < p; ++q) {
      auto& b = buckets[q];
      std::sort(b.begin(), b.end());
      sorted.clear();
      r.order[q].reserve(b.size());
      for (const auto& [bit, index] : b) {
        sorted.push_back(bit);
        r.order[q].push_back(index);
      }
      last_.packet_bytes += 8 * blume::detail::encode_hash_packet(sorted, local_bits_, r.packets[q]);
    }
    last_.items = r.keys;
    return r;
  }

  MPI_Comm comm_;
  place where_;
  Hasher hasher_;
  std::uint64_t local_bits_ = 0;
  std::vector<std::uint64_t> words_;
  std::vector<std::uint64_t> scratch_;
  traffic last_;
};

}  // namespace blume::distributed
