// SPDX-License-Identifier: Apache-2.0
// The aging Bloom filter: a sliding window over the last w items or the last T of time.
#include <gtest/gtest.h>

#include "blume/kinds/aging_bloom_filter.hpp"
#include "forge.hpp"
#include "test_support.hpp"

namespace {

using blume_test::absent_key;
using blume_test::present_key;
using aging = blume::aging_bloom_filter<>;
using namespace std::chrono_literals;
const aging::time_point t0{};  // a fixed clock for the tests

TEST(AgingFilter, TheLastHalfWindowIsAlwaysFoundAndOlderThanTheWindowNever) {
  aging f(10'000, 0.01, {}, 7, t0);
  for (std::uint64_t i = 0; i < 100'000; ++i) f.insert(present_key(i), t0);
  for (std::uint64_t i = 95'000; i < 100'000; ++i) ASSERT_TRUE(f.contains(present_key(i), t0)) << i;
  std::uint64_t old_found = 0;
  for (std::uint64_t i = 0; i < 80'000; ++i) old_found += f.contains(present_key(i), t0);
  EXPECT_LT(static_cast<double>(old_found) / 80'000, 0.02) << "only false positives may remain";
}

TEST(AgingFilter, FalsePositiveRateStaysNearTheTargetOnAnEndlessStream) {
  aging f(100'000, 0.01, {}, 7, t0);
  for (std::uint64_t i = 0; i < 1'000'000; ++i) f.insert(present_key(i), t0);
  const std::uint64_t probes = 1'000'000;
  const double measured = static_cast<double>(f.count_contained(blume_test::absent_key_view(probes), t0)) / probes;
  EXPECT_LE(measured, 0.0105);
  EXPECT_NEAR(measured, f.predicted_fpr(), blume_test::fpr_tolerance(f.predicted_fpr(), probes, 0.05));
}

TEST(AgingFilter, BuffersRotateAfterHalfTheWindow) {
  aging f(1000, 0.01, {}, 7, t0);
  for (std::uint64_t i = 0; i < 500; ++i) f.insert(present_key(i), t0);
  EXPECT_EQ(f.inserted(), 500u);
  f.insert(present_key(500), t0);  // the active buffer was full: the other one takes over
  EXPECT_EQ(f.inserted(), 501u);
  for (std::uint64_t i = 501; i < 1001; ++i) f.insert(present_key(i), t0);  // and again: keys 0–499 are gone
  EXPECT_EQ(f.inserted(), 501u);  // 500 in the full buffer, 1 in the new active one
  std::uint64_t found = 0;
  for (std::uint64_t i = 0; i < 500; ++i) found += f.contains(present_key(i), t0);
  EXPECT_LT(found, 20u);
}

TEST(AgingFilter, TimeWindowForgetsKeysOlderThanTheWindow) {
  aging f(1'000'000, 0.01, 60s, 7, t0);
  f.insert("early", t0);
  f.insert("later", t0 + 40s);
  EXPECT_TRUE(f.contains("early", t0 + 29s));
  EXPECT_TRUE(f.contains("later", t0 + 69s));   // within T/2 of its insertion: always found
  EXPECT_FALSE(f.contains("early", t0 + 61s));  // older than T: never found
  f.insert("tick", t0 + 95s);                   // the clock moves on and buffers rotate
  EXPECT_FALSE(f.contains("early", t0 + 95s));
  EXPECT_TRUE(f.contains("tick", t0 + 95s));
}

TEST(AgingFilter, LongIdleTimeClearsBothBuffers) {
  aging f(1000, 0.01, 10s, 7, t0);
  f.insert("a", t0);
  f.insert("b", t0 + 1h);
  EXPECT_FALSE(f.contains("a", t0 + 1h));
  EXPECT_TRUE(f.contains("b", t0 + 1h));
  EXPECT_EQ(f.inserted(), 1u);
}

TEST(AgingFilter, InsertReportsWhetherTheKeyWasSeenInTheWindow) {
  aging f(1000, 0.01, {}, 7, t0);
  EXPECT_TRUE(f.insert("x", t0));
  EXPECT_FALSE(f.insert("x", t0));
}

TEST(AgingFilter, BadParametersAreRejected) {
  EXPECT_THROW(aging(1, 0.01), blume::invalid_argument);
  EXPECT_THROW(aging(1000, 0.0), blume::invalid_argument);
  EXPECT_THROW(aging(1000, 0.01, -5s), blume::invalid_argument);
  static_assert(!blume::can_merge<aging>, "the windows rotate independently");
}

TEST(AgingFilter, RoundTripsWithItsWindowState) {
  aging f(2000, 0.01, 30s, 7, t0);
  for (std::uint64_t i = 0; i < 1500; ++i) f.insert(present_key(i), t0 + 1s);
  const auto bytes = blume::to_bytes(f);
  aging copy = blume::from_bytes<aging>(bytes);
  EXPECT_TRUE(copy == f);
  for (std::uint64_t i = 1000; i < 1500; ++i) ASSERT_TRUE(copy.contains(present_key(i), t0 + 2s));
  copy.insert("after", t0 + 50s);
  f.insert("after", t0 + 50s);
  EXPECT_TRUE(copy == f) << "the copy rotates exactly as the original";
  for (std::size_t i = 0; i < blume::header_size; ++i) {
    auto damaged = bytes;
    damaged[i] ^= std::byte{0x20};
    EXPECT_THROW(blume::from_bytes<aging>(damaged), blume::format_error) << i;
  }
  for (std::size_t n = 0; n < bytes.size(); n += 13)
    EXPECT_THROW(blume::from_bytes<aging>(std::span(bytes.data(), n)), blume::format_error) << n;
}

/// A copy of `good` whose two buffers start at `start` (ns since the clock's epoch), checksums fixed up.
std::vector<std::byte> with_start_times(std::vector<std::byte> bytes, std::int64_t start) {
  for (std::size_t b = 0; b < 2; ++b)  // the payload begins with count₀, count₁, start₀, start₁
    std::memcpy(bytes.data() + blume::header_size + 16 + 8 * b, &start, sizeof start);
  blume_test::fix_checksums(bytes);
  return bytes;
}

// Issue 11: start times are read from the payload, and any 64-bit value must leave a filter whose clock
// arithmetic neither overflows (UBSan) nor freezes: keys inserted after loading are found for half a
// window and forgotten after a whole one, as in a filter that was never saved.
TEST(AgingFilter, ForgedStartTimesNeitherOverflowNorFreezeTheWindow) {
  const auto good = blume::to_bytes(aging(1000, 0.01, 60s, 7, t0));
  const aging::time_point now = aging::clock_type::now();
  const std::int64_t now_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(now.time_since_epoch()).count();
  for (const std::int64_t start : {INT64_MIN, INT64_MIN + 1, std::int64_t{-1}, std::int64_t{0}, now_ns - 45'000'000'000,
                                   now_ns + 3'600'000'000'000, INT64_MAX - 1, INT64_MAX}) {
    SCOPED_TRACE(start);
    aging f = blume::from_bytes<aging>(with_start_times(good, start));
    f.insert("fresh", now);
    EXPECT_TRUE(f.contains("fresh", now));
    EXPECT_TRUE(f.contains("fresh", now + 29s)) << "within half a window: always found";
    f.insert("tick", now + 200s);
    EXPECT_FALSE(f.contains("fresh", now + 200s)) << "older than the window: never found";
    EXPECT_TRUE(f.contains("tick", now + 200s));
  }
}

TEST(AgingFilter, ForgedItemCountsBeyondABuffersShareAreRefused) {
  auto bytes = blume::to_bytes(aging(1000, 0.01, {}, 7, t0));
  const std::uint64_t count = 501;  // each buffer takes 500 of the 1000-item window
  std::memcpy(bytes.data() + blume::header_size, &count, sizeof count);
  blume_test::fix_checksums(bytes);
  EXPECT_TRUE(blume_test::mentions(
      blume_test::message_of<blume::format_error>([&] { (void)blume::from_bytes<aging>(bytes); }), "501"));
}

}  // namespace
