// SPDX-License-Identifier: Apache-2.0
// The split-block Bloom filter: 256-bit blocks of eight 32-bit words with exactly one probe per word
// (k = 8), the layout of Apache Parquet's bloom filters. Like the blocked filter a lookup costs one cache
// miss, and here it is a handful of SIMD instructions; the planner sizes it with its real rate
// (math::split_block_fpr).
#pragma once

#include <cstdint>
#include <string>
#include <utility>

#include "blume/detail/geometry.hpp"
#include "blume/kinds/basic_bloom_filter.hpp"
#include "blume/simd.hpp"

#if BLUME_X86
#include <immintrin.h>
#endif

namespace blume {

namespace detail {

/// Parquet's split-block filter: the probe in word i is bit (key · salt_i) >> 27 of word i, where key is a
/// 32-bit part of the hash and salt_i are the odd constants of the Parquet specification.
inline constexpr std::uint32_t split_block_salt[8] = {0x47b6137bU, 0x44974d91U, 0x8824ad5bU, 0xa2b7289dU,
                                                      0x705495c7U, 0x2df1424bU, 0x9efc4947U, 0x5c6bfb31U};

inline std::uint32_t split_block_mask(std::uint32_t key, int word) noexcept {
  return std::uint32_t{1} << ((key * split_block_salt[word]) >> 27);
}

template <bool Atomic>
inline bool split_block_insert_portable(std::uint32_t* block, std::uint32_t key) noexcept {
  std::uint32_t fresh = 0;
  for (int i = 0; i < 8; ++i) {
    const std::uint32_t mask = split_block_mask(key, i);
    fresh |= ~load_relaxed(block[i]) & mask;
    set_mask<Atomic>(block[i], mask);
  }
  return fresh != 0;
}

inline bool split_block_contains_portable(const std::uint32_t* block, std::uint32_t key) noexcept {
  std::uint32_t missing = 0;
  for (int i = 0; i < 8; ++i) missing |= split_block_mask(key, i) & ~load_relaxed(block[i]);
  return missing == 0;
}

#if BLUME_X86
__attribute__((target("avx2"))) inline __m256i split_block_mask_avx2(std::uint32_t key) noexcept {
  const __m256i salt = _mm256_setr_epi32(0x47b6137b, 0x44974d91, static_cast<int>(0x8824ad5bU),
                                         static_cast<int>(0xa2b7289dU), 0x705495c7, 0x2df1424b,
                                         static_cast<int>(0x9efc4947U), 0x5c6bfb31);
  const __m256i product = _mm256_mullo_epi32(_mm256_set1_epi32(static_cast<int>(key)), salt);
  return _mm256_sllv_epi32(_mm256_set1_epi32(1), _mm256_srli_epi32(product, 27));
}

// The block is read and written as a vector of 32-bit words, not as __m256i: __m256i may alias any type,
// so a store through it would make the compiler reload every field of the filter (its size, its hasher's
// seed, its storage) after each insert; a vector of uint32 aliases only the words.
typedef std::uint32_t split_block_words __attribute__((vector_size(32), aligned(32)));

__attribute__((target("avx2"))) inline bool split_block_insert_avx2(std::uint32_t* block, std::uint32_t key) noexcept {
  const __m256i mask = split_block_mask_avx2(key);
  auto* p = reinterpret_cast<split_block_words*>(block);
  // GCC's vector casts reinterpret the bits in place (a function such as std::bit_cast would pass a 256-bit
  // vector by value outside AVX2 code).
  const auto old = (__m256i)*p;
  *p = (split_block_words)_mm256_or_si256(old, mask);
  return _mm256_testc_si256(old, mask) == 0;
}

__attribute__((target("avx2"))) inline bool split_block_contains_avx2(const std::uint32_t* block,
                                                                      std::uint32_t key) noexcept {
  const __m256i mask = split_block_mask_avx2(key);
  return _mm256_testc_si256(_mm256_load_si256(reinterpret_cast<const __m256i*>(block)), mask) != 0;
}
#endif  // BLUME_X86

}  // namespace detail

/// The block is reduce(digest.high, blocks); the in-block key is the low 32 bits of digest.low.
/// AVX2 (chosen at construction when the CPU has it and simd::allow_avx2 permits) and the portable path set
/// and test the same bits; tests hold them to it.
class split_block_layout {
 public:
  using word_type = std::uint32_t;
  static constexpr filter_kind kind{4};
  static constexpr std::string_view name = "split-block";
  static constexpr std::uint32_t block_bits = split_block_bits;

  static std::uint64_t plan_bytes(std::uint64_t bits) noexcept { return bits / 8; }
  static double model_fpr(double n, double m, double /*k: always 8*/) noexcept { return math::split_block_fpr(n, m); }
  static double estimate_items(double set, double m, double /*k*/) noexcept { return math::split_block_items(set, m); }
  static filter_plan plan(std::uint64_t items, double fpr) {
    return detail::plan_blocked<split_block_layout>(items, fpr, block_bits, split_block_hashes);
  }
  static filter_plan plan_for_bits(std::uint64_t items, std::uint64_t bits) {
    return detail::plan_granular_for_bits<split_block_layout>(items, bits, block_bits, split_block_hashes,
                                                              split_block_hashes, false);
  }

  split_block_layout(std::uint64_t bits, std::uint32_t hashes) : avx2_(simd::avx2_enabled()) {
    detail::check_geometry(name, bits, hashes, block_bits, split_block_hashes);
    if (hashes != split_block_hashes)
      throw invalid_argument("split-block filter: hash count is fixed at 8, got " + std::to_string(hashes));
    blocks_ = bits / block_bits;
  }

  std::uint64_t bits() const noexcept { return blocks_ * block_bits; }
  std::uint32_t hashes() const noexcept { return split_block_hashes; }
  std::uint64_t blocks() const noexcept { return blocks_; }
  std::size_t storage_bytes() const noexcept { return static_cast<std::size_t>(blocks_ * 32); }
  bool uses_avx2() const noexcept { return avx2_; }

  template <bool Atomic>
  bool insert(word_type* words, digest d) const noexcept {
    word_type* block = words + reduce(d.high, blocks_) * 8;
    const auto key = static_cast<std::uint32_t>(d.low);
#if BLUME_X86
    // Concurrent inserts need per-word atomic ORs, which only the portable path does.
    if (!Atomic && avx2_) return detail::split_block_insert_avx2(block, key);
#endif
    return detail::split_block_insert_portable<Atomic>(block, key);
  }

  bool contains(const word_type* words, digest d) const noexcept {
    const word_type* block = words + reduce(d.high, blocks_) * 8;
    const auto key = static_cast<std::uint32_t>(d.low);
#if BLUME_X86
    return avx2_ ? detail::split_block_contains_avx2(block, key) : detail::split_block_contains_portable(block, key);
#else
    return detail::split_block_contains_portable(block, key);
#endif
  }

  // ---- the bulk calls' probes --------------------------------------------------------------------------
  // A bulk call finds each key's block once, when it prefetches it, and keeps the word offset and the
  // in-block key for the batch's turn; a batch then chooses its code path once (an AVX2 call per key could
  // not be inlined into a loop compiled without AVX2, and would reload the geometry for every key).

  struct probe {
    std::uint64_t offset;  // of the block's first word
    std::uint32_t key;
  };
  probe prepare(const word_type* words, digest d) const noexcept {
    const probe p{reduce(d.high, blocks_) * 8, static_cast<std::uint32_t>(d.low)};
    detail::prefetch_read(words + p.offset);
    return p;
  }
  probe prepare_for_write(word_type* words, digest d) const noexcept {
    const probe p{reduce(d.high, blocks_) * 8, static_cast<std::uint32_t>(d.low)};
    detail::prefetch_write(words + p.offset);
    return p;
  }

  /// sink(answer) for each probe of a batch.
  template <class Sink>
  void contains_batch(const word_type* words, std::span<const probe> batch, Sink& sink) const {
#if BLUME_X86
    if (avx2_) {
      contains_batch_avx2(words, batch, sink);
      return;
    }
#endif
    for (const probe& p : batch) sink(detail::split_block_contains_portable(words + p.offset, p.key));
  }

  /// Inserts a batch of probes.
  template <bool Atomic>
  void insert_batch(word_type* words, std::span<const probe> batch) const noexcept {
#if BLUME_X86
    if (!Atomic && avx2_) {
      insert_batch_avx2(words, batch);
      return;
    }
#endif
    for (const probe& p : batch) detail::split_block_insert_portable<Atomic>(words + p.offset, p.key);
  }

  // ---- the fused bulk loops ------------------------------------------------------------------------------
  // For inputs of known size (basic_bloom_filter checks): one loop that hashes and prefetches key i + D
  // while it tests or sets key i (detail::fused_probes), its code path chosen once for the whole call. A
  // probe is 8 bytes (the block's index and the in-block key), and the geometry is read into locals before
  // the loop, so the kernel's stores do not make the compiler reload it for every key.

  /// sink(answer) for each key, in order; returns the sink.
  template <class R, class Hash, class Sink>
  Sink contains_all(const word_type* words, const R& keys, Hash hash, Sink sink) const {
#if BLUME_X86
    if (avx2_) return contains_all_avx2(words, blocks_, keys, hash, std::move(sink));
#endif
    fused<false>(
        words, blocks_, keys, hash, [ words, &sink ](packed_probe p) __attribute__((always_inline)) {
          sink(detail::split_block_contains_portable(words + block_offset(p), p.key));
        });
    return sink;
  }

  template <bool Atomic, class R, class Hash>
  void insert_all(word_type* words, const R& keys, Hash hash) const noexcept {
#if BLUME_X86
    if (!Atomic && avx2_) {
      insert_all_avx2(words, blocks_, keys, hash);
      return;
    }
#endif
    fused<true>(
        words, blocks_, keys, hash, [words](packed_probe p) __attribute__((always_inline)) {
          detail::split_block_insert_portable<Atomic>(words + block_offset(p), p.key);
        });
  }

  void prefetch(const word_type* words, digest d) const noexcept {
    detail::prefetch_read(words + reduce(d.high, blocks_) * 8);
  }
  void prefetch_for_write(word_type* words, digest d) const noexcept {
    detail::prefetch_write(words + reduce(d.high, blocks_) * 8);
  }

 private:
  struct packed_probe {
    std::uint32_t block;  // fewer than 2^32 blocks: max_filter_bits
    std::uint32_t key;
  };
  static std::uint64_t block_offset(packed_probe p) noexcept { return std::uint64_t{p.block} * 8; }

  template <bool ForWrite, class R, class Hash, class Use>
  __attribute__((always_inline)) static void fused(const word_type* words, std::uint64_t blocks, const R& keys,
                                                   Hash hash, Use use) {
    detail::fused_probes<packed_probe>(
        keys, hash, [ words, blocks ](const digest& d) __attribute__((always_inline)) {
          const packed_probe p{static_cast<std::uint32_t>(reduce(d.high, blocks)), static_cast<std::uint32_t>(d.low)};
          if constexpr (ForWrite) {
            detail::prefetch_write(words + block_offset(p));
          } else {
            detail::prefetch_read(words + block_offset(p));
          }
          return p;
        },
        use);
  }

#if BLUME_X86
  // Static, with the geometry passed by value: nothing the loop reads lives behind a pointer its stores
  // could alias.
  template <class R, class Hash, class Sink>
  __attribute__((target("avx2"))) static Sink contains_all_avx2(const word_type* words, std::uint64_t blocks,
                                                                const R& keys, Hash hash, Sink sink) {
    fused<false>(
        words, blocks, keys, hash, [ words, &sink ](packed_probe p) __attribute__((always_inline)) {
          sink(detail::split_block_contains_avx2(words + block_offset(p), p.key));
        });
    return sink;
  }
  template <class R, class Hash>
  __attribute__((target("avx2"))) static void insert_all_avx2(word_type* words, std::uint64_t blocks, const R& keys,
                                                              Hash hash) {
    fused<true>(
        words, blocks, keys, hash, [words](packed_probe p) __attribute__((always_inline)) {
          detail::split_block_insert_avx2(words + block_offset(p), p.key);
        });
  }

  template <class Sink>
  __attribute__((target("avx2"))) static void contains_batch_avx2(const word_type* words, std::span<const probe> batch,
                                                                  Sink& sink) {
    for (const probe& p : batch) sink(detail::split_block_contains_avx2(words + p.offset, p.key));
  }
  __attribute__((target("avx2"))) static void insert_batch_avx2(word_type* words, std::span<const probe> batch) {
    for (const probe& p : batch) detail::split_block_insert_avx2(words + p.offset, p.key);
  }
#endif

  std::uint64_t blocks_ = 0;
  bool avx2_;
};

/// New filters hash with XXH3-64 (xxh3_64_hasher): the layout reads 64 bits of digest, and on an 8-byte key
/// that hash is a third of XXH3-128's instructions. Files of XXH3-128 (hash id 1, written before it became
/// the default) read as split_block_bloom_filter<xxh3_hasher>, which any_filter and the tools open as they
/// were written. The block comes from the hash's high bits and the in-block key from its low 32; a filter
/// has at most 2^32 blocks (max_filter_bits), so the two never share a bit.
template <hasher Hasher = xxh3_64_hasher>
using split_block_bloom_filter = basic_bloom_filter<split_block_layout, Hasher>;

static_assert(serializable_filter<split_block_bloom_filter<>>);

}  // namespace blume
