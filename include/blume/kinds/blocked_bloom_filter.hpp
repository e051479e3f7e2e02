// SPDX-License-Identifier: Apache-2.0
// The cache-blocked Bloom filter: every probe of a key lands in one 512-bit block (one 64-byte cache
// line), so a lookup costs one cache miss whatever k is (Putze, Sanders & Singler 2007); any k in
// [1, 32]. The price is a higher false-positive rate for the same memory, because keys spread unevenly
// over blocks; the planner sizes it with its real rate (math::blocked_fpr). split_block_bloom_filter.hpp
// has the other blocked kind.
#pragma once

#include <cstdint>
#include <utility>

#include "blume/detail/geometry.hpp"
#include "blume/detail/probe_ops.hpp"
#include "blume/kinds/basic_bloom_filter.hpp"

namespace blume {

/// The block is reduce(digest.high, blocks). Probe positions are 9-bit fields of digest.low (3 bits pick one
/// of the block's eight 64-bit words, 6 bits a bit in it), seven per 64-bit value (detail::block_offsets).
class blocked_layout {
 public:
  using word_type = std::uint64_t;
  static constexpr filter_kind kind{3};
  static constexpr std::string_view name = "blocked";
  static constexpr std::uint32_t block_bits = blocked_block_bits;
  static constexpr std::uint32_t max_k = 32;

  static std::uint64_t plan_bytes(std::uint64_t bits) noexcept { return bits / 8; }
  static double model_fpr(double n, double m, double k) noexcept { return math::blocked_fpr(n, m, k, block_bits); }
  static double estimate_items(double set, double m, double k) noexcept {
    return math::blocked_items(set, m, k, block_bits);
  }
  static filter_plan plan(std::uint64_t items, double fpr) {
    return detail::plan_blocked<blocked_layout>(items, fpr, block_bits);
  }
  static filter_plan plan_for_bits(std::uint64_t items, std::uint64_t bits) {
    return detail::plan_granular_for_bits<blocked_layout>(items, bits, block_bits, 1, max_k, false);
  }

  blocked_layout(std::uint64_t bits, std::uint32_t hashes) : hashes_(hashes) {
    detail::check_geometry(name, bits, hashes, block_bits, max_k);
    blocks_ = bits / block_bits;
  }

  std::uint64_t bits() const noexcept { return blocks_ * block_bits; }
  std::uint32_t hashes() const noexcept { return hashes_; }
  std::uint64_t blocks() const noexcept { return blocks_; }
  std::size_t storage_bytes() const noexcept { return static_cast<std::size_t>(blocks_ * 64); }

  template <bool Atomic>
  bool insert(word_type* words, digest d) const noexcept {
    word_type* block = block_of(words, d);
    word_type fresh = 0;
    for_each_probe(d, [&](unsigned pos) {
      const word_type mask = word_type{1} << (pos & 63);
      fresh |= ~detail::load_relaxed(block[pos >> 6]) & mask;
      detail::set_mask<Atomic>(block[pos >> 6], mask);
    });
    return fresh != 0;
  }

  bool contains(const word_type* words, digest d) const noexcept {
    // Branch-free: all probes are in one cache line, so testing them all costs less than mispredicting.
    const word_type* block = block_of(words, d);
    word_type all = 1;
    for_each_probe(d, [&](unsigned pos) { all &= detail::load_relaxed(block[pos >> 6]) >> (pos & 63); });
    return (all & 1) != 0;
  }

  void prefetch(const word_type* words, digest d) const noexcept { detail::prefetch_read(block_of(words, d)); }
  void prefetch_for_write(word_type* words, digest d) const noexcept {
    detail::prefetch_write(block_of(const_cast<const word_type*>(words), d));
  }

 private:
  /// fn(position in block) for each probe (detail::block_offsets: seven 9-bit fields per 64-bit value).
  template <class Fn>
  void for_each_probe(digest d, Fn&& fn) const noexcept {
    detail::block_offsets<9>(d.low, hashes_, fn);
  }

  const word_type* block_of(const word_type* words, digest d) const noexcept {
    return words + reduce(d.high, blocks_) * 8;
  }
  word_type* block_of(word_type* words, digest d) const noexcept { return words + reduce(d.high, blocks_) * 8; }

  std::uint64_t blocks_ = 0;
  std::uint32_t hashes_;
};

template <hasher Hasher = xxh3_hasher>
using blocked_bloom_filter = basic_bloom_filter<blocked_layout, Hasher>;

static_assert(serializable_filter<blocked_bloom_filter<>>);

}  // namespace blume
