// SPDX-License-Identifier: Apache-2.0
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
// The blocked option (probes k > 1) puts a key's k bits in one 512-bit block, as blocked_bloom_filter<>
// does, for a tenth of the single-shot filter's memory at 1%: a key is then sent as its block and 20 bits
// that pick its k bits there, about 15.7 + log2 P bits at 1% (the gaps are over blocks·2^20 values). An
// absent key whose block holds a key of its own pattern is a false positive whatever the bits: with λ keys
// per block that adds 1 − e^{−λ/2^20} to the blocked rate (5·10^−5 at 1%, λ ≈ 53; with 16 bits it was
// 8·10^−4, measured as 1.07% against 0.99%), which the model and the planner include.
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
#include "blume/kinds/blocked_bloom_filter.hpp"
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
  /// With `probes` k > 1, the blocked option: k bits in one 512-bit block per key, each rank holding whole
  /// blocks.
  partitioned_filter(MPI_Comm comm, std::uint64_t global_bits, std::uint32_t probes = 1,
                     std::uint64_t seed = Hasher::default_seed)
      : comm_(comm), where_(place::of(comm)), hasher_(seed), probes_(probes) {
    if (global_bits == 0 || global_bits > max_filter_bits)
      throw invalid_argument("distributed filter: the size must be in [1, 2^40] bits, got " +
                             std::to_string(global_bits));
    if (probes == 0 || probes > 32)
      throw invalid_argument("distributed filter: probes must be in [1, 32], got " + std::to_string(probes));
    check_same(comm, global_bits, "the filter's size");
    check_same(comm, probes, "the probes per key");
    check_same(comm, seed, "the seed");
    const auto p = static_cast<std::uint64_t>(where_.ranks);
    const std::uint64_t granule = probes == 1 ? 64 : block_bits;
    local_bits_ = (global_bits + granule * p - 1) / (granule * p) * granule;
    local_range_ = probes == 1 ? local_bits_ : (local_bits_ / block_bits) << pattern_bits;
    words_.assign(local_bits_ / 64, 0);
  }

  /// Sized for `items` keys over all ranks at rate `fpr`: s = n / −ln(1 − ε).
  static partitioned_filter for_capacity(MPI_Comm comm, std::uint64_t items, double fpr,
                                         std::uint64_t seed = Hasher::default_seed) {
    blume::detail::check_plan_inputs(items, fpr);
    const double bits = std::ceil(static_cast<double>(items) / -std::log1p(-fpr));
    blume::detail::check_bits(bits, items, fpr);
    return partitioned_filter(comm, static_cast<std::uint64_t>(bits), 1, seed);
  }
  /// The blocked option sized for `items` keys at rate `fpr`, as blocked_bloom_filter<> plans itself.
  static partitioned_filter blocked_for_capacity(MPI_Comm comm, std::uint64_t items, double fpr,
                                                 std::uint64_t seed = Hasher::default_seed) {
    for (double target = fpr;; target *= 0.98) {
      const filter_plan plan = blocked_bloom_filter<Hasher>::plan(items, target);
      const std::uint32_t k = std::max<std::uint32_t>(plan.hashes, 2);
      if (blocked_rate(static_cast<double>(items), static_cast<double>(plan.bits), k) <= fpr)
        return partitioned_filter(comm, plan.bits, k, seed);
    }
  }

  /// Inserts this rank's keys (any range of keys); collective.
  template <std::ranges::input_range R>
  void insert_many(const R& keys) {
    last_ = {};
    const routed r = route(keys);
    const received in = all_to_all(comm_, r.packets);
    for (int p = 0; p < where_.ranks; ++p) {
      scratch_.clear();
      blume::detail::decode_hash_packet(in.from(p), local_range_, scratch_);
      for (const std::uint64_t v : scratch_)
        for_each_bit(v, [&](std::uint64_t bit) {
          words_[bit / 64] |= std::uint64_t{1} << (bit % 64);
          return true;
        });
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
      blume::detail::decode_hash_packet(in.from(p), local_range_, scratch_);
      auto& bits = answers[p];
      bits.assign((scratch_.size() + 63) / 64, 0);
      for (std::size_t j = 0; j < scratch_.size(); ++j) {
        const bool set =
            for_each_bit(scratch_[j], [&](std::uint64_t bit) { return ((words_[bit / 64] >> (bit % 64)) & 1) != 0; });
        if (set) bits[j / 64] |= std::uint64_t{1} << (j % 64);
      }
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

  /// The rate after `items` distinct keys over all ranks: 1 − e^{−n/s}, or the blocked filter's.
  double predicted_fpr(double items) const noexcept {
    if (probes_ > 1) return blocked_rate(items, static_cast<double>(global_bits()), probes_);
    return -std::expm1(-items / static_cast<double>(global_bits()));
  }
  /// Bits per key: 1 (single-shot) or k in one block.
  std::uint32_t probes() const noexcept { return probes_; }
  std::uint64_t global_bits() const noexcept { return local_bits_ * static_cast<std::uint64_t>(where_.ranks); }
  std::uint64_t local_bits() const noexcept { return local_bits_; }
  /// The first global bit this rank holds.
  std::uint64_t first_bit() const noexcept { return local_bits_ * static_cast<std::uint64_t>(where_.rank); }
  /// This rank's slice of the global bit array.
  std::span<const std::uint64_t> local_words() const noexcept { return words_; }
  /// A key's global bit (single-shot): the one the filter sets and tests for it.
  template <key K>
  std::uint64_t position(const K& k) const noexcept {
    return reduce(hash_key(hasher_, k).low, global_bits());
  }
  static constexpr std::uint64_t block_bits = 512;
  static constexpr unsigned pattern_bits = 20;
  /// The blocked option's rate: an absent key's block holds a key of its pattern (1 − e^{−λ/2^20}), or
  /// else its k bits are set anyway (math::blocked_fpr).
  static double blocked_rate(double items, double bits, std::uint32_t k) noexcept {
    const double same_pattern = -std::expm1(-items * block_bits / bits / std::exp2(pattern_bits));
    return same_pattern + (1 - same_pattern) * math::blocked_fpr(items, bits, k, block_bits);
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
    // The value a key is sent as: its bit, or its block and pattern; each rank holds local_range_ of them.
    const std::uint64_t values = local_range_ * p;
    for (auto&& k : keys) {
      const std::uint64_t v = reduce(hash_key(hasher_, k).low, values);
      buckets[v / local_range_].emplace_back(v % local_range_, r.keys++);
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
      last_.packet_bytes += 8 * blume::detail::encode_hash_packet(sorted, local_range_, r.packets[q]);
    }
    last_.items = r.keys;
    return r;
  }

  /// fn(local bit) for the bits of a received value while fn returns true: the bit itself, or k bits of
  /// its block picked by its pattern.
  template <class Fn>
  bool for_each_bit(std::uint64_t v, Fn&& fn) const {
    if (probes_ == 1) return fn(v);
    const std::uint64_t base = (v >> pattern_bits) * block_bits;
    const std::uint64_t pattern = v & ((std::uint64_t{1} << pattern_bits) - 1);
    for (std::uint32_t i = 0; i < probes_; ++i)
      if (!fn(base + (mix(pattern ^ (0x9e3779b97f4a7c15ULL * (i + 1))) >> 55))) return false;
    return true;
  }

  MPI_Comm comm_;
  place where_;
  Hasher hasher_;
  std::uint32_t probes_ = 1;
  std::uint64_t local_bits_ = 0;
  std::uint64_t local_range_ = 0;  // values per rank: its bits, or its blocks × 2^16 patterns
  std::vector<std::uint64_t> words_;
  std::vector<std::uint64_t> scratch_;
  traffic last_;
};

}  // namespace blume::distributed
