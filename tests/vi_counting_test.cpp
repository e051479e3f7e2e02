// SPDX-License-Identifier: Apache-2.0
// The variable-increment counting filter: no false negatives through any sequence of inserts and erases
// of inserted keys, its false-positive rate held to the paper's model (with saturation) at 1M keys, and
// below the counting filter's at equal memory, as Rottenstreich, Kanizo & Keslassy report.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>

#include "forge.hpp"
#include "test_support.hpp"

namespace {

using blume::variable_increment_counting_filter;
using blume_test::absent_key;
using blume_test::present_key;

template <unsigned W>
using vi = variable_increment_counting_filter<W>;

TEST(VariableIncrement, InsertsErasesAndCounts) {
  vi<4> f(1000, 0.01);
  EXPECT_FALSE(f.contains(std::string_view("k")));
  f.insert(std::string_view("k"));
  f.insert(std::string_view("k"));
  EXPECT_TRUE(f.contains(std::string_view("k")));
  EXPECT_GE(f.count(std::string_view("k")), 2u);
  EXPECT_TRUE(f.erase(std::string_view("k")));
  EXPECT_TRUE(f.contains(std::string_view("k")));
  EXPECT_TRUE(f.erase(std::string_view("k")));
  EXPECT_FALSE(f.contains(std::string_view("k")));
  EXPECT_FALSE(f.erase(std::string_view("k"))) << "a key no longer present is refused";
  EXPECT_EQ(f.count(std::string_view("k")), 0u);
}

// Random inserts and erases of inserted keys, with repeats: every key still inserted is found at every
// step checked, and its count is at least its multiplicity (until a counter saturates).
template <unsigned W>
void no_false_negatives() {
  vi<W> f(20'000, 0.01);
  std::mt19937_64 rng(11 + W);
  std::vector<int> times(30'000, 0);
  for (int step = 0; step < 200'000; ++step) {
    const std::size_t i = rng() % times.size();
    if (times[i] > 0 && rng() % 3 == 0) {
      ASSERT_TRUE(f.erase(present_key(i))) << "step " << step;
      --times[i];
    } else {
      f.insert(present_key(i));
      ++times[i];
    }
    if (step % 20'000 == 0 || step == 199'999)
      for (std::size_t j = 0; j < times.size(); ++j)
        if (times[j] > 0) {
          ASSERT_TRUE(f.contains(present_key(j))) << "key " << j << " at step " << step;
        }
  }
}
TEST(VariableIncrement, NoFalseNegativesThroughInsertsAndErases4) { no_false_negatives<4>(); }
TEST(VariableIncrement, NoFalseNegativesThroughInsertsAndErases8) { no_false_negatives<8>(); }

// At n = 1M the measured rate is the model's (math::vi_fpr, saturation included) for 4- and 8-bit counters
// and L = 4, over a range of loads.
template <unsigned W>
void rate_matches_model(double counters_per_key, std::uint32_t k) {
  constexpr std::uint64_t n = blume_test::scaled(1'000'000), probes = blume_test::scaled(2'000'000);
  const auto m = static_cast<std::uint64_t>(counters_per_key * n);
  const typename vi<W>::layout_type layout(m, k);
  auto f = vi<W>::from_parts(layout, blume::xxh3_hasher(), blume::byte_storage::allocate(layout.storage_bytes()), 0);
  for (std::uint64_t i = 0; i < n; ++i) f.insert(present_key(i));
  for (std::uint64_t i = 0; i < n; i += 97) ASSERT_TRUE(f.contains(present_key(i)));
  const double hits = static_cast<double>(f.count_contained(blume_test::absent_key_view(probes)));
  const double model = vi<W>::layout_type::model_fpr(n, static_cast<double>(m), k);
  std::printf("W = %u, m/n = %.2f, k = %u: measured %.5f, model %.5f\n", W, counters_per_key, k, hits / probes, model);
  EXPECT_TRUE(blume_test::within_binomial_999(hits, probes, model));
}
TEST(VariableIncrement, RateMatchesTheModel4) {
  rate_matches_model<4>(10.0, 5);
  rate_matches_model<4>(6.0, 4);
}
TEST(VariableIncrement, RateMatchesTheModel8) {
  rate_matches_model<8>(5.0, 3);
  rate_matches_model<8>(8.0, 4);
}

// After erasing half the keys, predicted_fpr() is still the rate measured. The model at the keys left
// gave 0.031% at 4-bit counters where 0.070% was measured: counters that saturated while every key was
// in are never decremented and pass every lookup. The rate read off the counters sees them.
template <unsigned W>
void rate_after_erasing_half(std::uint64_t n) {
  constexpr std::uint64_t probes = 2'000'000;
  vi<W> f(n, 0.01);
  for (std::uint64_t i = 0; i < n; ++i) f.insert(present_key(i));
  for (std::uint64_t i = 0; i < n / 2; ++i) ASSERT_TRUE(f.erase(present_key(i)));
  const double hits = static_cast<double>(f.count_contained(blume_test::absent_key_view(probes)));
  std::printf("W = %u, %llu keys, half erased: measured %.5f%%, predicted %.5f%% (the model at the keys left %.5f%%)\n",
              W, static_cast<unsigned long long>(n), 100 * hits / probes, 100 * f.predicted_fpr(),
              100 * f.predicted_fpr_at(static_cast<double>(n - n / 2)));
  EXPECT_TRUE(blume_test::within_binomial_999(hits, probes, f.predicted_fpr()));
}
TEST(VariableIncrement, PredictedRateHoldsAfterErasingHalfTheKeys4) { rate_after_erasing_half<4>(200'000); }
TEST(VariableIncrement, PredictedRateHoldsAfterErasingHalfTheKeys8) { rate_after_erasing_half<8>(200'000); }

// Equal memory: the counting filter's m 4-bit counters against m 4-bit VI counters, and against m/2 8-bit
// ones; the VI filter's rate is lower, each with the k its own model prefers.
TEST(VariableIncrement, BeatsTheCountingFilterAtEqualMemory) {
  constexpr std::uint64_t n = blume_test::scaled(1'000'000), probes = blume_test::scaled(2'000'000);
  const blume::counting_bloom_filter<4> counting(n, 0.01);
  auto counting_filled = counting;
  for (std::uint64_t i = 0; i < n; ++i) counting_filled.insert(present_key(i));
  const std::uint64_t bits = counting.bits() * 4;  // the counting filter's memory in bits: m 4-bit counters
  const auto measure = [&](const auto& f) {
    return static_cast<double>(f.count_contained(blume_test::absent_key_view(probes))) / probes;
  };
  const double counting_rate = measure(counting_filled);
  const auto build = [&](auto type) {
    using F = typename decltype(type)::type;
    constexpr unsigned counter_bits = F::layout_type::block_bits % 256;
    const blume::filter_plan p = F::plan_for_bits(n, bits / counter_bits);  // in counters
    const typename F::layout_type layout(p.bits, p.hashes);
    auto f = F::from_parts(layout, blume::xxh3_hasher(), blume::byte_storage::allocate(layout.storage_bytes()), 0);
    for (std::uint64_t i = 0; i < n; ++i) f.insert(present_key(i));
    EXPECT_LE(f.size_in_bytes(), counting.size_in_bytes() + 64);
    return std::pair(measure(f), p);
  };
  const auto [vi4_rate, vi4] = build(std::type_identity<vi<4>>{});
  const auto [vi8_rate, vi8] = build(std::type_identity<vi<8>>{});
  std::printf(
      "equal memory (%llu bits): counting<4> k = %u %.5f; vi<4> k = %u %.5f (model %.5f); vi<8> k = %u %.5f "
      "(model %.5f)\n",
      static_cast<unsigned long long>(bits), counting.hashes(), counting_rate, vi4.hashes, vi4_rate, vi4.predicted_fpr,
      vi8.hashes, vi8_rate, vi8.predicted_fpr);
  EXPECT_LT(vi4_rate, counting_rate);
  EXPECT_LT(vi8_rate, counting_rate);
}

TEST(VariableIncrement, PlansMeetTheirTarget) {
  for (const double fpr : {0.1, 0.01, 0.001}) {
    const blume::filter_plan p = vi<4>::plan(100'000, fpr);
    EXPECT_LE(p.predicted_fpr, fpr);
    EXPECT_GT(vi<4>::layout_type::model_fpr(100'000, static_cast<double>(p.bits) * 0.95, p.hashes), fpr * 0.999)
        << "no more counters than needed (5% fewer miss the target)";
    EXPECT_EQ(p.kind, vi<4>::kind);
  }
  EXPECT_THROW(vi<4>::plan(0, 0.01), blume::invalid_argument);
  EXPECT_THROW(vi<4>::plan(10, 1.5), blume::invalid_argument);
}

TEST(VariableIncrement, CapacityIsWhereItsOwnModelMakesKBest) {
  // Planned for 1M keys at 1%: 4,121,392 counters and k = 5. The classic m·ln 2 / k says 571,346 keys, where
  // this model's best k is 8; under it k = 5 is best from about 850,000 to 1,050,000 keys.
  const blume::filter_plan p = vi<4>::plan(1'000'000, 0.01);
  ASSERT_EQ(p.hashes, 5u);
  const double m = static_cast<double>(p.bits);
  const double load = vi<4>::layout_type::optimal_load(m, p.hashes);
  EXPECT_GT(load, 850'000);
  EXPECT_LT(load, 1'000'000);
  const auto rate = [&](double k) { return vi<4>::layout_type::model_fpr(load, m, k); };
  EXPECT_LT(rate(5), rate(4));
  EXPECT_LT(rate(5), rate(6));
  EXPECT_NEAR(rate(5 + 1e-2), rate(5 - 1e-2), 1e-3 * rate(5)) << "the rate's slope in k is zero there";
  // What info shows and an unplanned file's overfill check reads: the filter's own, from its geometry.
  const vi<4> f(100'000, 0.01);
  EXPECT_DOUBLE_EQ(f.optimal_load(), vi<4>::layout_type::optimal_load(static_cast<double>(f.bits()), f.hashes()));
  EXPECT_GT(f.optimal_load(), 1.4 * static_cast<double>(f.bits()) * blume::math::ln2 / f.hashes());
  EXPECT_LT(f.predicted_fpr_at(f.optimal_load()), 0.01);
  EXPECT_GT(f.predicted_fpr_at(f.optimal_load()), 0.004);
  // The classic kinds keep the closed form.
  const blume::counting_bloom_filter<> c(100'000, 0.01);
  EXPECT_DOUBLE_EQ(c.optimal_load(), static_cast<double>(c.bits()) * blume::math::ln2 / c.hashes());
}

TEST(VariableIncrement, SaturatedCountersAreNeitherDecrementedNorMissed) {
  // One counter, one probe: a key of increment g saturates the 4-bit counter after 3 inserts or fewer.
  const typename vi<4>::layout_type layout(1, 1);
  auto f = vi<4>::from_parts(layout, blume::xxh3_hasher(), blume::byte_storage::allocate(8), 0);
  for (int i = 0; i < 4; ++i) f.insert(std::string_view("hot"));
  EXPECT_TRUE(f.contains(std::string_view("other")));  // a saturated counter passes every key
  for (int i = 0; i < 10; ++i) f.erase(std::string_view("hot"));
  EXPECT_TRUE(f.contains(std::string_view("hot"))) << "a saturated counter is never decremented";
}

// Found by the file fuzzer: a counter of 1 … L − 1, which no sum of increments makes, let an insert land
// between g and g + L and the key just inserted go missing. Files holding one are refused; an erase of a
// false positive, the only way to reach one, stops at L instead.
TEST(VariableIncrement, CountersNoSumOfIncrementsMakesAreRefusedAndNeverWritten) {
  const typename vi<4>::layout_type layout(16, 1);
  auto f = vi<4>::from_parts(layout, blume::xxh3_hasher(), blume::byte_storage::allocate(8), 0);
  auto bytes = blume::to_bytes(f);
  bytes[blume::header_size] = std::byte{0x03};  // counter 0 holds 3 < L
  blume_test::fix_checksums(bytes);
  EXPECT_TRUE(blume_test::mentions(
      blume_test::message_of<blume::format_error>([&] { (void)blume::from_bytes<vi<4>>(bytes); }), "holds 3"));
  // Erase keys never inserted until one passes (a false positive) and is erased: every counter stays
  // outside 1 … L − 1, and the keys inserted are all found.
  vi<4> g(50, 0.2);
  for (std::uint64_t i = 0; i < 50; ++i) g.insert(present_key(i));
  for (std::uint64_t i = 0; i < 2000; ++i) g.erase(absent_key(i));
  EXPECT_NO_THROW((void)blume::from_bytes<vi<4>>(blume::to_bytes(g)));
  for (std::uint64_t i = 0; i < 100; ++i) {
    g.insert(absent_key(10'000 + i));
    EXPECT_TRUE(g.contains(absent_key(10'000 + i))) << "a key just inserted is found";
  }
}

TEST(VariableIncrement, RoundTripsAndRefusesAnotherIncrementRange) {
  vi<4> f(5000, 0.01);
  for (std::uint64_t i = 0; i < 5000; ++i) f.insert(present_key(i));
  const auto bytes = blume::to_bytes(f);
  const auto g = blume::from_bytes<vi<4>>(bytes);
  EXPECT_TRUE(f == g);
  using narrower = variable_increment_counting_filter<4, 3>;
  EXPECT_THROW(blume::from_bytes<narrower>(bytes), blume::format_error);
  EXPECT_THROW(blume::from_bytes<vi<8>>(bytes), blume::format_error);
}

}  // namespace
