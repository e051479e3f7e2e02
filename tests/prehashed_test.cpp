// SPDX-License-Identifier: Apache-2.0
// Prepared hashes: a caller's own uniform 64-bit hash of each key in place of the key (insert_hash,
// contains_hash and their bulk forms), tested with XXH64 digests as Parquet computes them. The filter's rate
// then holds as for keys, because those hashes are uniform.
#include <cstdint>
#include <string>
#include <vector>

#include "test_support.hpp"

namespace {

std::vector<std::uint64_t> xxh64_hashes(std::uint64_t first, std::uint64_t count) {
  std::vector<std::uint64_t> out(count);
  for (std::uint64_t i = 0; i < count; ++i) {
    const std::string value = "row-" + std::to_string(first + i);
    out[i] = XXH64(value.data(), value.size(), 0);
  }
  return out;
}

template <class F>
class PreparedHashes : public ::testing::Test {};
using prehash_kinds =
    ::testing::Types<blume::split_block_bloom_filter<>, blume::split_block_bloom_filter<blume::xxh3_hasher>,
                     blume::bloom_filter<>, blume::blocked_bloom_filter<>, blume::partitioned_bloom_filter<>,
                     blume::cuckoo_filter<>, blume::counting_bloom_filter<>>;
TYPED_TEST_SUITE(PreparedHashes, prehash_kinds);

TYPED_TEST(PreparedHashes, FindEveryInsertedHashAndHoldTheModelsRate) {
  using F = TypeParam;
  constexpr std::uint64_t n = 200'000, probes = 1'000'000;
  F f(n, 0.01);
  const std::vector<std::uint64_t> present = xxh64_hashes(0, n);
  for (const std::uint64_t h : present) f.insert_hash(h);
  for (const std::uint64_t h : present) ASSERT_TRUE(f.contains_hash(h));
  EXPECT_EQ(f.count_contained_hashes(present), n);

  const std::vector<std::uint64_t> absent = xxh64_hashes(n, probes);
  std::vector<char> answers(probes);
  const std::size_t hits = f.contains_hashes(absent, answers.begin());
  std::size_t one_by_one = 0;
  for (std::uint64_t i = 0; i < probes; ++i) {
    ASSERT_EQ(answers[i] != 0, f.contains_hash(absent[i])) << i;
    one_by_one += answers[i] != 0;
  }
  EXPECT_EQ(hits, one_by_one);
  EXPECT_EQ(f.count_contained_hashes(absent), hits);
  EXPECT_TRUE(blume_test::within_binomial_999(static_cast<double>(hits), probes, f.predicted_fpr()));
}

TYPED_TEST(PreparedHashes, InBulkSetWhatOneByOneSets) {
  using F = TypeParam;
  const std::vector<std::uint64_t> hashes = xxh64_hashes(0, 20'000);
  F one(20'000, 0.01), bulk(20'000, 0.01);
  for (const std::uint64_t h : hashes) one.insert_hash(h);
  bulk.insert_hashes(hashes);
  EXPECT_TRUE(blume::to_bytes(one) == blume::to_bytes(bulk));
}

TEST(PreparedHashesOfXxh3_64, AreTheDigestsOfTheirKeys) {
  // Under XXH3-64 a key's digest is its hash in both halves: a caller who computes XXH3_64bits_withSeed itself
  // and passes it as the prepared hash sets the bits the key would set.
  blume::split_block_bloom_filter<> by_key(1000, 0.01), by_hash(1000, 0.01);
  for (std::uint64_t i = 0; i < 1000; ++i) {
    by_key.insert(i);
    by_hash.insert_hash(XXH3_64bits_withSeed(&i, 8, by_hash.seed()));
  }
  EXPECT_TRUE(blume::to_bytes(by_key) == blume::to_bytes(by_hash));
}

}  // namespace
