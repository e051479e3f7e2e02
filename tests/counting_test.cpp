// SPDX-License-Identifier: Apache-2.0
// Behaviour only the counting filter has: erase, count, saturation, counter widths, counter merges.
#include <gtest/gtest.h>

#include <random>
#include <thread>
#include <unordered_map>
#include <unordered_set>

#include "test_support.hpp"

namespace {

using blume_test::absent_key;
using blume_test::present_key;
using counting = blume::counting_bloom_filter<>;

TEST(CountingFilter, EraseRemovesTheOnlyKey) {
  counting f(1000, 0.01);
  f.insert("alice");
  ASSERT_TRUE(f.contains("alice"));
  EXPECT_TRUE(f.erase("alice"));
  EXPECT_FALSE(f.contains("alice"));
  EXPECT_EQ(f.set_bits(), 0u);
  EXPECT_EQ(f.inserted(), 0u);
}

TEST(CountingFilter, EraseOfAnAbsentKeyIsRefusedAndChangesNothing) {
  counting f(1000, 0.01);
  for (std::uint64_t i = 0; i < 500; ++i) f.insert(present_key(i));
  const counting before = f;
  std::uint64_t refused = 0;
  for (std::uint64_t i = 0; i < 2000; ++i) {
    if (f.contains(absent_key(i))) continue;  // a false positive would be accepted: skip those
    EXPECT_FALSE(f.erase(absent_key(i)));
    ++refused;
  }
  EXPECT_GT(refused, 1900u);
  EXPECT_TRUE(f == before);
  EXPECT_EQ(f.inserted(), before.inserted());
}

TEST(CountingFilter, CountIsAnUpperBoundOnInsertions) {
  counting f(10'000, 0.01);
  for (int i = 0; i < 3; ++i) f.insert("thrice");
  f.insert("once");
  EXPECT_GE(f.count("thrice"), 3u);
  EXPECT_GE(f.count("once"), 1u);
  EXPECT_EQ(f.count("never inserted"), 0u);
  EXPECT_EQ(f.count("thrice"), 3u);  // alone in a nearly empty filter, the count is exact
}

TEST(CountingFilter, SaturatedCountersNeverDecrementSoNoFalseNegativeAppears) {
  counting f = counting::with_geometry(64, 3);
  for (int i = 0; i < 20; ++i) f.insert("hot");
  EXPECT_EQ(f.count("hot"), 15u);  // 4-bit counters stop at 15
  for (int i = 0; i < 20; ++i) EXPECT_TRUE(f.erase("hot"));
  EXPECT_TRUE(f.contains("hot")) << "a saturated counter must stay saturated";
  EXPECT_EQ(f.count("hot"), 15u);
}

TEST(CountingFilter, TwoAndEightBitCountersSaturateAtTheirMaximum) {
  blume::counting_bloom_filter<2> narrow = blume::counting_bloom_filter<2>::with_geometry(64, 2);
  blume::counting_bloom_filter<8> wide = blume::counting_bloom_filter<8>::with_geometry(64, 2);
  for (int i = 0; i < 300; ++i) {
    narrow.insert(7);
    wide.insert(7);
  }
  EXPECT_EQ(narrow.count(7), 3u);
  EXPECT_EQ(wide.count(7), 255u);
  EXPECT_EQ(narrow.storage().size(), 16u);  // 64 counters × 2 bits
  EXPECT_EQ(wide.storage().size(), 64u);    // 64 counters × 8 bits
}

// A random sequence of inserts and erases of keys that were inserted, against an exact multiset model:
// every key still in the model must be found, and counts must never fall below the model's.
template <unsigned W>
void check_against_model(std::uint64_t seed) {
  blume::counting_bloom_filter<W> f(2000, 0.01, seed);
  std::unordered_map<std::uint64_t, std::uint64_t> model;
  std::mt19937_64 rng(seed);
  for (int step = 0; step < 20'000; ++step) {
    const std::uint64_t key = present_key(rng() % 1500);
    if (rng() % 3 != 0 || model[key] == 0) {
      f.insert(key);
      ++model[key];
    } else {
      ASSERT_TRUE(f.erase(key)) << "erase of an inserted key refused at step " << step;
      --model[key];
    }
    if (step % 997 == 0) {
      for (const auto& [k, n] : model) {
        if (n == 0) continue;
        ASSERT_TRUE(f.contains(k)) << "false negative at step " << step;
        ASSERT_GE(f.count(k), std::min<std::uint64_t>(n, (1u << W) - 1));
      }
    }
  }
  for (const auto& [k, n] : model)
    if (n != 0) {
      ASSERT_TRUE(f.contains(k));
    }
}

TEST(CountingFilter, EraseNeverRemovesAnotherPresentKey) {
  for (std::uint64_t seed : {1u, 2u, 3u}) check_against_model<4>(seed);
}
TEST(CountingFilter, EraseNeverRemovesAnotherPresentKeyWithTwoBitCounters) { check_against_model<2>(4); }
TEST(CountingFilter, EraseNeverRemovesAnotherPresentKeyWithEightBitCounters) { check_against_model<8>(5); }

TEST(CountingFilter, ErasingEverythingEmptiesTheFilter) {
  counting f(10'000, 0.01);
  for (std::uint64_t i = 0; i < 10'000; ++i) f.insert(present_key(i));
  for (std::uint64_t i = 0; i < 10'000; ++i) ASSERT_TRUE(f.erase(present_key(i)));
  EXPECT_EQ(f.set_bits(), 0u);
}

TEST(CountingFilter, MemoryIsFourTimesTheClassicFilters) {
  const counting c(1'000'000, 0.01);
  const blume::bloom_filter<> b(1'000'000, 0.01);
  const double ratio = static_cast<double>(c.size_in_bytes()) / static_cast<double>(b.size_in_bytes());
  EXPECT_LE(ratio, 4.1);
  EXPECT_GE(ratio, 3.9);
  EXPECT_EQ(c.bits(), b.bits());
  EXPECT_EQ(c.hashes(), b.hashes());
}

TEST(CountingFilter, MergeAddsCountersSoEitherSideCanBeErased) {
  counting a(10'000, 0.01), b(10'000, 0.01);
  for (std::uint64_t i = 0; i < 3000; ++i) a.insert(present_key(i));
  for (std::uint64_t i = 2000; i < 5000; ++i) b.insert(present_key(i));
  a.merge(b);
  for (std::uint64_t i = 2000; i < 3000; ++i) ASSERT_GE(a.count(present_key(i)), 2u);
  for (std::uint64_t i = 0; i < 3000; ++i) ASSERT_TRUE(a.erase(present_key(i)));
  for (std::uint64_t i = 2000; i < 5000; ++i) ASSERT_TRUE(a.contains(present_key(i))) << i;
}

TEST(CountingFilter, MergeSaturatesInsteadOfOverflowing) {
  counting a = counting::with_geometry(64, 1), b = counting::with_geometry(64, 1);
  for (int i = 0; i < 10; ++i) {
    a.insert("k");
    b.insert("k");
  }
  a.merge(b);
  EXPECT_EQ(a.count("k"), 15u);
}

TEST(CountingFilter, IntersectKeepsTheSmallerCount) {
  counting a = counting::with_geometry(640, 2), b = counting::with_geometry(640, 2);
  for (int i = 0; i < 5; ++i) a.insert("k");
  for (int i = 0; i < 2; ++i) b.insert("k");
  a.insert("only in a");
  a.intersect(b);
  EXPECT_EQ(a.count("k"), 2u);
  EXPECT_FALSE(a.contains("only in a"));
}

TEST(CountingFilter, ConcurrentInsertsCountEveryInsertion) {
  counting f(100'000, 0.01);
  std::thread t1([&] {
    for (int i = 0; i < 50'000; ++i) f.insert_concurrent("shared"), f.insert_concurrent(present_key(i));
  });
  std::thread t2([&] {
    for (int i = 50'000; i < 100'000; ++i) f.insert_concurrent("shared"), f.insert_concurrent(present_key(i));
  });
  t1.join();
  t2.join();
  EXPECT_EQ(f.count("shared"), 15u);
  for (std::uint64_t i = 0; i < 100'000; ++i) ASSERT_TRUE(f.contains(present_key(i)));
  counting sequential(100'000, 0.01);
  for (std::uint64_t i = 0; i < 100'000; ++i) sequential.insert(present_key(i));
  for (int i = 0; i < 15; ++i) sequential.insert("shared");
  EXPECT_EQ(f.estimated_count(), sequential.estimated_count());
}

TEST(CountingFilter, FileRecordsTheCounterWidth) {
  blume::counting_bloom_filter<8> wide(1000, 0.01);
  wide.insert("x");
  const auto bytes = blume::to_bytes(wide);
  EXPECT_EQ(blume::decode_header(bytes).layout, 8u);
  EXPECT_TRUE(blume::from_bytes<blume::counting_bloom_filter<8>>(bytes) == wide);
  const std::string message =
      blume_test::message_of<blume::format_error>([&] { blume::from_bytes<blume::counting_bloom_filter<4>>(bytes); });
  EXPECT_FALSE(message.empty());
}

TEST(CountingFilter, CounterBitsPastTheLastCounterMustBeZeroInAFile) {
  counting f = counting::with_geometry(10, 2);  // 40 bits of a 64-bit word used
  auto bytes = blume::to_bytes(f);
  bytes[blume::header_size + 6] = std::byte{1};  // bit 48: past the last counter
  blume::file_header h = blume::decode_header(bytes);
  h.payload_checksum = XXH64(bytes.data() + blume::header_size, 8, 0);
  const auto header = blume::encode_header(h);
  std::copy(header.begin(), header.end(), bytes.begin());
  EXPECT_TRUE(blume_test::mentions(
      blume_test::message_of<blume::format_error>([&] { blume::from_bytes<counting>(bytes); }), "padding"));
}

}  // namespace
