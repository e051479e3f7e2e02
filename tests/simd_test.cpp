// SPDX-License-Identifier: Apache-2.0
// The AVX2 and portable code paths of the split-block filter set and test exactly the same bits.
#include <cstring>
#include <random>
#include <vector>

#include "test_support.hpp"

namespace {

using blume::split_block_bloom_filter;
using blume_test::absent_key;
using blume_test::present_key;
namespace detail = blume::detail;

/// Sets the AVX2 permission for its lifetime and restores the previous one afterwards.
class avx2_permission {
 public:
  explicit avx2_permission(bool allowed) : previous_(blume::simd::detail::avx2_allowed().load()) {
    blume::simd::allow_avx2(allowed);
  }
  avx2_permission(const avx2_permission&) = delete;
  avx2_permission& operator=(const avx2_permission&) = delete;
  ~avx2_permission() { blume::simd::allow_avx2(previous_); }

 private:
  bool previous_;
};

constexpr std::uint64_t keys = 100'000;

/// A split-block filter built on one code path: half the keys inserted one by one, half in bulk.
split_block_bloom_filter<> build_on_path(bool avx2) {
  const avx2_permission permission(avx2);
  split_block_bloom_filter<> f(keys, 0.01, 21);
  for (std::uint64_t i = 0; i < keys / 2; ++i) f.insert(present_key(i));
  f.insert_many(blume_test::present_keys(keys / 2, keys / 2));
  return f;
}

/// Tests that compare the two paths need a CPU with AVX2; elsewhere they are skipped.
class Avx2Test : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!blume::simd::cpu_has_avx2()) GTEST_SKIP() << "this CPU has no AVX2";
  }
};
using SimdPaths = Avx2Test;
using SplitBlockAvx2Functions = Avx2Test;

TEST(SimdPermission, AllowAvx2DecidesWhetherAvx2IsEnabled) {
  {
    const avx2_permission permission(false);
    EXPECT_FALSE(blume::simd::avx2_enabled());
    EXPECT_FALSE(split_block_bloom_filter<>(1000, 0.01).layout().uses_avx2());
  }
  const avx2_permission permission(true);
  EXPECT_EQ(blume::simd::avx2_enabled(), blume::simd::cpu_has_avx2());
  EXPECT_EQ(split_block_bloom_filter<>(1000, 0.01).layout().uses_avx2(), blume::simd::cpu_has_avx2());
}

#if !BLUME_X86
TEST(SimdPermission, OffX86OnlyThePortablePathExists) {
  EXPECT_FALSE(blume::simd::cpu_has_avx2());
  EXPECT_FALSE(split_block_bloom_filter<>(1000, 0.01).layout().uses_avx2());
}
#endif

TEST_F(SimdPaths, FiltersBuiltOnBothPathsAreIdentical) {
  const auto portable = build_on_path(false);
  const auto avx2 = build_on_path(true);
  ASSERT_FALSE(portable.layout().uses_avx2());
  ASSERT_TRUE(avx2.layout().uses_avx2());
  EXPECT_TRUE(portable == avx2);
  EXPECT_EQ(blume::to_bytes(portable), blume::to_bytes(avx2));
}

TEST_F(SimdPaths, BothPathsAnswerAlikeForAMillionAbsentKeys) {
  const auto portable = build_on_path(false);
  const auto avx2 = build_on_path(true);
  const std::uint64_t probes = blume_test::scaled(1'000'000);
  std::uint64_t positives = 0;
  for (std::uint64_t i = 0; i < probes; ++i) {
    const bool answer = portable.contains(absent_key(i));
    ASSERT_EQ(avx2.contains(absent_key(i)), answer) << i;
    positives += answer;
  }
  EXPECT_GT(positives, 0u);  // false positives occur, so the comparison covers both answers
  EXPECT_EQ(portable.count_contained(blume_test::absent_key_view(probes)), positives);
  EXPECT_EQ(avx2.count_contained(blume_test::absent_key_view(probes)), positives);
}

TEST_F(SimdPaths, BothPathsFindEveryInsertedKey) {
  const auto portable = build_on_path(false);
  const auto avx2 = build_on_path(true);
  EXPECT_EQ(portable.count_contained(blume_test::present_keys(keys)), keys);
  EXPECT_EQ(avx2.count_contained(blume_test::present_keys(keys)), keys);
}

TEST_F(SimdPaths, BulkLookupsAgreeBetweenPaths) {
  const auto portable = build_on_path(false);
  const auto avx2 = build_on_path(true);
  std::vector<std::uint64_t> probes;
  for (std::uint64_t i = 0; i < 100'003; ++i) probes.push_back(i % 2 ? present_key(i) : absent_key(i));
  std::vector<bool> a, b;
  portable.contains_many(probes, std::back_inserter(a));
  avx2.contains_many(probes, std::back_inserter(b));
  EXPECT_EQ(a, b);
}

TEST_F(SimdPaths, LoadedFilterFollowsThePermissionAtLoadTime) {
  const auto serialized = blume::to_bytes(build_on_path(true));
  {
    const avx2_permission permission(false);
    EXPECT_FALSE(blume::from_bytes<split_block_bloom_filter<>>(serialized).layout().uses_avx2());
  }
  const avx2_permission permission(true);
  EXPECT_TRUE(blume::from_bytes<split_block_bloom_filter<>>(serialized).layout().uses_avx2());
}

TEST_F(SimdPaths, ConcurrentInsertsIntoAnAvx2FilterSetTheSameBits) {
  // Concurrent inserts need per-word atomic ORs and take the portable path even in an AVX2 filter.
  const avx2_permission permission(true);
  split_block_bloom_filter<> plain(10'000, 0.01), concurrent(10'000, 0.01);
  for (std::uint64_t i = 0; i < 10'000; ++i) {
    plain.insert(present_key(i));
    concurrent.insert_concurrent(present_key(i));
  }
  EXPECT_TRUE(plain == concurrent);
}

// ---- the block functions themselves --------------------------------------------------------------------

struct alignas(32) block {
  std::uint32_t words[8] = {};
};

TEST(SplitBlockFunctions, MaskSetsTheParquetBitInEachWord) {
  // The salts of the Parquet specification (BloomFilter.md, "Technical Approach").
  constexpr std::uint32_t parquet_salt[8] = {0x47b6137bU, 0x44974d91U, 0x8824ad5bU, 0xa2b7289dU,
                                             0x705495c7U, 0x2df1424bU, 0x9efc4947U, 0x5c6bfb31U};
  std::mt19937_64 rng(1);
  for (int trial = 0; trial < 10'000; ++trial) {
    const auto key = static_cast<std::uint32_t>(rng());
    block b;
    EXPECT_TRUE(detail::split_block_insert_portable<false>(b.words, key));
    for (int w = 0; w < 8; ++w) {
      const std::uint32_t expected = std::uint32_t{1} << ((key * parquet_salt[w]) >> 27);
      ASSERT_EQ(detail::split_block_mask(key, w), expected) << key << " word " << w;
      ASSERT_EQ(b.words[w], expected) << key << " word " << w;
    }
  }
}

TEST(SplitBlockFunctions, InsertReturnsWhetherAnyBitWasNew) {
  block b;
  EXPECT_TRUE(detail::split_block_insert_portable<false>(b.words, 12345));
  EXPECT_FALSE(detail::split_block_insert_portable<false>(b.words, 12345));
  EXPECT_TRUE(detail::split_block_contains_portable(b.words, 12345));
}

TEST(SplitBlockFunctions, AtomicAndPlainPortableInsertsSetTheSameBits) {
  std::mt19937_64 rng(2);
  block plain, atomic;
  for (int i = 0; i < 100'000; ++i) {
    if (i % 16 == 0) plain = atomic = block{};
    const auto key = static_cast<std::uint32_t>(rng());
    ASSERT_EQ(detail::split_block_insert_portable<true>(atomic.words, key),
              detail::split_block_insert_portable<false>(plain.words, key))
        << i;
    ASSERT_EQ(std::memcmp(plain.words, atomic.words, sizeof plain.words), 0) << i;
  }
}

// The AVX2 block functions exist only where the compiler targets x86.
#if BLUME_X86
TEST_F(SplitBlockAvx2Functions, PortableAndAvx2InsertsSetTheSameBits) {
  std::mt19937_64 rng(3);
  block portable, avx2;
  std::uint64_t reported_new = 0;
  for (int i = 0; i < 100'000; ++i) {
    if (i % 16 == 0) portable = avx2 = block{};  // keep blocks from saturating, so both answers occur
    const auto key = static_cast<std::uint32_t>(rng());
    const bool fresh = detail::split_block_insert_portable<false>(portable.words, key);
    ASSERT_EQ(detail::split_block_insert_avx2(avx2.words, key), fresh) << i;
    ASSERT_EQ(std::memcmp(portable.words, avx2.words, sizeof portable.words), 0) << i;
    reported_new += fresh;
  }
  EXPECT_GT(reported_new, 0u);
  EXPECT_LT(reported_new, 100'000u);
}

TEST_F(SplitBlockAvx2Functions, PortableAndAvx2LookupsAgree) {
  std::mt19937_64 rng(4);
  std::uint64_t hits = 0, misses = 0;
  for (int trial = 0; trial < 2000; ++trial) {
    // Blocks from sparse to dense: about 6%, 25%, 50%, 75% and 94% of bits set.
    block b;
    for (std::uint32_t& w : b.words) {
      const auto r = [&] { return static_cast<std::uint32_t>(rng()); };
      switch (trial % 5) {
        case 0: w = r() & r() & r() & r(); break;
        case 1: w = r() & r(); break;
        case 2: w = r(); break;
        case 3: w = r() | r(); break;
        default: w = r() | r() | r() | r(); break;
      }
    }
    for (int probe = 0; probe < 200; ++probe) {
      const auto key = static_cast<std::uint32_t>(rng());
      const bool answer = detail::split_block_contains_portable(b.words, key);
      ASSERT_EQ(detail::split_block_contains_avx2(b.words, key), answer) << trial << " " << key;
      (answer ? hits : misses) += 1;
    }
  }
  EXPECT_GT(hits, 0u);
  EXPECT_GT(misses, 0u);
}

TEST_F(SplitBlockAvx2Functions, KeyInsertedOnOnePathIsFoundOnTheOther) {
  std::mt19937_64 rng(5);
  for (int i = 0; i < 10'000; ++i) {
    const auto key = static_cast<std::uint32_t>(rng());
    block by_portable, by_avx2;
    detail::split_block_insert_portable<false>(by_portable.words, key);
    detail::split_block_insert_avx2(by_avx2.words, key);
    ASSERT_TRUE(detail::split_block_contains_avx2(by_portable.words, key)) << key;
    ASSERT_TRUE(detail::split_block_contains_portable(by_avx2.words, key)) << key;
  }
}
#endif  // BLUME_X86

}  // namespace
