// SPDX-License-Identifier: Apache-2.0
// insert_concurrent and insert_many_concurrent from two threads: no key is lost, the bits are those of a
// sequential build, and lookups running alongside see every key inserted before they started.
#include <atomic>
#include <thread>
#include <vector>

#include "test_support.hpp"

namespace {

using blume_test::present_key;
using blume_test::present_keys;

/// Runs two functions on two threads, released at the same moment so that they overlap.
template <class A, class B>
void run_together(A&& a, B&& b) {
  std::atomic<int> ready{0};
  auto start = [&ready] {
    ready.fetch_add(1);
    while (ready.load() < 2) {
    }
  };
  std::thread first([&] {
    start();
    a();
  });
  std::thread second([&] {
    start();
    b();
  });
  first.join();
  second.join();
}

template <class F>
class ConcurrentInsert : public ::testing::Test {};
TYPED_TEST_SUITE(ConcurrentInsert, blume_test::filter_types, blume_test::kind_names);

TYPED_TEST(ConcurrentInsert, NoFalseNegativesAfterInsertsFromTwoThreads) {
  constexpr std::uint64_t n = 200'000;
  TypeParam f(n, 0.01);
  run_together(
      [&] {
        for (std::uint64_t i = 0; i < n; i += 2) f.insert_concurrent(present_key(i));
      },
      [&] {
        for (std::uint64_t i = 1; i < n; i += 2) f.insert_concurrent(present_key(i));
      });
  EXPECT_EQ(f.count_contained(present_keys(n)), n);
  EXPECT_EQ(f.inserted(), n);
}

TYPED_TEST(ConcurrentInsert, NoFalseNegativesAfterBulkInsertsFromTwoThreads) {
  constexpr std::uint64_t n = 200'000;
  TypeParam f(n, 0.01);
  const auto first_half = present_keys(n / 2), second_half = present_keys(n / 2, n / 2);
  run_together([&] { f.insert_many_concurrent(first_half); }, [&] { f.insert_many_concurrent(second_half); });
  EXPECT_EQ(f.count_contained(present_keys(n)), n);
  EXPECT_EQ(f.inserted(), n);
}

TYPED_TEST(ConcurrentInsert, ConcurrentInsertsSetTheSameBitsAsSequentialInserts) {
  // A small filter, so that both threads keep writing to the same words: a lost update would show as a
  // missing bit. Many short rounds give the threads many chances to collide.
  constexpr std::uint64_t per_thread = 500;
  for (std::uint64_t round = 0; round < 200; ++round) {
    const std::uint64_t first = round * 2 * per_thread;
    auto concurrent = blume_test::small_filter<TypeParam>(round);
    auto sequential = blume_test::small_filter<TypeParam>(round);
    run_together(
        [&] {
          for (std::uint64_t i = 0; i < per_thread; ++i) concurrent.insert_concurrent(present_key(first + i));
        },
        [&] {
          for (std::uint64_t i = per_thread; i < 2 * per_thread; ++i)
            concurrent.insert_concurrent(present_key(first + i));
        });
    for (std::uint64_t i = 0; i < 2 * per_thread; ++i) sequential.insert(present_key(first + i));
    ASSERT_TRUE(concurrent == sequential) << "round " << round;
    ASSERT_EQ(concurrent.inserted(), 2 * per_thread) << "round " << round;
  }
}

TYPED_TEST(ConcurrentInsert, SingleAndBulkConcurrentInsertsMixWithoutLoss) {
  constexpr std::uint64_t per_thread = 2000;
  for (std::uint64_t round = 0; round < 50; ++round) {
    const std::uint64_t first = round * 2 * per_thread;
    auto concurrent = blume_test::small_filter<TypeParam>(round);
    auto sequential = blume_test::small_filter<TypeParam>(round);
    const auto bulk = present_keys(per_thread, first + per_thread);
    run_together(
        [&] {
          for (std::uint64_t i = 0; i < per_thread; ++i) concurrent.insert_concurrent(present_key(first + i));
        },
        [&] { concurrent.insert_many_concurrent(bulk); });
    sequential.insert_many(present_keys(2 * per_thread, first));
    ASSERT_TRUE(concurrent == sequential) << "round " << round;
    ASSERT_EQ(concurrent.inserted(), 2 * per_thread) << "round " << round;
  }
}

TYPED_TEST(ConcurrentInsert, LookupsDuringInsertsFindEveryEarlierKey) {
  constexpr std::uint64_t earlier = 50'000, later = 200'000, stride = 7;
  constexpr std::uint64_t sampled = (earlier + stride - 1) / stride;
  TypeParam f(earlier + later, 0.01);
  const auto earlier_keys = present_keys(earlier);
  f.insert_many(earlier_keys);
  std::atomic<bool> inserting{true};
  std::vector<std::size_t> found_in_bulk, found_one_by_one;
  run_together(
      [&] {
        for (std::uint64_t i = earlier; i < earlier + later; ++i) f.insert_concurrent(present_key(i));
        inserting.store(false);
      },
      [&] {
        do {
          found_in_bulk.push_back(f.count_contained(earlier_keys));
          std::size_t found = 0;
          for (std::uint64_t i = 0; i < earlier; i += stride) found += f.contains(earlier_keys[i]);
          found_one_by_one.push_back(found);
        } while (inserting.load());
      });
  ASSERT_FALSE(found_in_bulk.empty());
  for (std::size_t pass = 0; pass < found_in_bulk.size(); ++pass) {
    EXPECT_EQ(found_in_bulk[pass], earlier) << "pass " << pass;
    EXPECT_EQ(found_one_by_one[pass], sampled) << "pass " << pass;
  }
  EXPECT_EQ(f.count_contained(present_keys(earlier + later)), earlier + later);
}

}  // namespace
