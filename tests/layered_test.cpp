// SPDX-License-Identifier: Apache-2.0
// The layered filter: counts that never fall short, over-counts held to the layer model, files that
// round-trip and forged ones refused, and its counts beside a counting filter's in the same memory.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>

#include "test_support.hpp"

namespace {

using blume_test::absent_key;
using blume_test::present_key;
using layered = blume::layered_bloom_filter<>;

/// |measured − predicted| allowed for a rate measured over `trials` independent keys: the two-sided 99.9%
/// normal bound of a binomial (3.29 standard deviations), plus a relative slack for the model's inputs.
double bound_999(double predicted, double trials, double model_slack = 0.03) {
  return 3.29 * std::sqrt(predicted * (1.0 - predicted) / trials) + model_slack * predicted;
}

TEST(LayeredFilter, CountsInsertsUpToItsLayers) {
  layered f(1000, 0.01);
  EXPECT_EQ(f.layers(), blume::layered_default_layers);
  EXPECT_FALSE(f.contains("alice"));
  EXPECT_EQ(f.count("alice"), 0u);
  for (std::uint64_t i = 1; i <= 4; ++i) EXPECT_EQ(f.insert("alice"), i);
  EXPECT_EQ(f.insert("alice"), 4u) << "a fifth insert saturates";
  EXPECT_EQ(f.count("alice"), 4u);
  EXPECT_TRUE(f.contains("alice"));
  f.insert("bob");
  EXPECT_EQ(f.count("bob"), 1u);
  EXPECT_EQ(f.inserted(), 6u);  // every call, the saturated one included
  EXPECT_EQ(f.count("carol"), 0u);
  f.clear();
  EXPECT_EQ(f.count("alice"), 0u);
  EXPECT_EQ(f.inserted(), 0u);
}

TEST(LayeredFilter, OneDigestProbesEveryLayerAtTheSamePositions) {
  layered f(1000, 0.01, 3);
  const blume::digest d = f.hash(std::string_view("alice"));
  EXPECT_EQ(f.insert(d), 1u);
  EXPECT_EQ(f.insert(d), 2u);
  EXPECT_EQ(f.count(std::string_view("alice")), 2u);
  EXPECT_DOUBLE_EQ(f.layer_fill(0), f.layer_fill(1));
  EXPECT_EQ(f.layer_fill(2), 0.0);
}

TEST(LayeredFilter, InsertManyIsInsertInOrder) {
  layered a(10'000, 0.01), b(10'000, 0.01);
  std::vector<std::uint64_t> keys;
  for (std::uint64_t i = 0; i < 5000; ++i) keys.push_back(present_key(i % 1700));
  a.insert_many(keys);
  for (const std::uint64_t k : keys) b.insert(k);
  EXPECT_TRUE(a == b);
  EXPECT_EQ(a.inserted(), b.inserted());
}

TEST(LayeredFilter, BadParametersAreRefusedBeforeAllocating) {
  for (const std::uint32_t layers : {0u, blume::layered_max_layers + 1}) {
    const std::string message = blume_test::message_of<blume::invalid_argument>([&] { layered(1000, 0.01, layers); });
    EXPECT_TRUE(blume_test::mentions_number(message, layers)) << message;
  }
  EXPECT_THROW(layered(0, 0.01), blume::invalid_argument);
  EXPECT_THROW(layered(1000, 1.5), blume::invalid_argument);
  // Each layer fits in 2^40 bits, all of them do not.
  EXPECT_THROW(layered::with_geometry(blume::max_filter_bits / 2, 7, 3), blume::invalid_argument);
}

TEST(LayeredFilter, PlansEveryLayerForTheWholeCapacity) {
  const blume::filter_plan layer = blume::blocked_bloom_filter<>::plan(1'000'000, 0.01);
  const blume::filter_plan p = blume::plan_for(1'000'000, 0.01, layered::kind);
  EXPECT_EQ(p.bits, 4 * layer.bits);
  EXPECT_EQ(p.bytes, 4 * layer.bytes);
  EXPECT_EQ(p.hashes, layer.hashes);
  EXPECT_DOUBLE_EQ(p.predicted_fpr, layer.predicted_fpr);
  const layered f(1'000'000, 0.01);
  EXPECT_EQ(f.bits(), layer.bits);
  EXPECT_EQ(f.hashes(), layer.hashes);
  EXPECT_NEAR(f.predicted_fpr_at(1'000'000), layer.predicted_fpr, 1e-15);
  const blume::filter_plan budget = blume::plan_for_bits(1'000'000, p.bits, layered::kind);
  EXPECT_EQ(budget.bits, p.bits);
  EXPECT_LE(budget.predicted_fpr, p.predicted_fpr);
}

// The whole error model at n = 1M distinct keys with multiplicities 1..L+1 (fixed seed), inserted in a
// shuffled order: no key is ever under-counted; a key never inserted reads a count of j or more at layer
// j's model rate (the layers are nested, so that is layer j's own false-positive rate); an inserted key is
// over-counted at a rate between its next layer's and the sum of the layers' up to it (math::
// layered_overcount_bound), and (to first order) at most layer 1's: its own bits in layer 1 must be other
// keys' for any layer to mislead it.
TEST(LayeredFilter, NeverUnderCountsAndOverCountsAsTheModelSays) {
  constexpr std::uint64_t n = blume_test::scaled(1'000'000);
  // The fill's relative error grows as 1/sqrt(n): the 1% and 5% below are for 1M keys.
  const double widen = std::sqrt(1e6 / static_cast<double>(n));
  constexpr std::uint32_t L = blume::layered_default_layers;
  std::mt19937_64 rng(20240519);
  std::vector<std::uint8_t> multiplicity(n);
  std::vector<std::uint32_t> order;
  order.reserve(n * (L + 2) / 2);
  for (std::uint64_t i = 0; i < n; ++i) {
    multiplicity[i] = static_cast<std::uint8_t>(1 + rng() % (L + 1));
    for (int j = 0; j < multiplicity[i]; ++j) order.push_back(static_cast<std::uint32_t>(i));
  }
  std::shuffle(order.begin(), order.end(), rng);
  layered f(n, 0.01);
  for (const std::uint32_t i : order) f.insert(present_key(i));
  EXPECT_EQ(f.inserted(), order.size());

  // reached[j]: keys whose multiplicity reached layer j + 1 (what that layer holds, but for over-counts).
  std::vector<double> reached(L, 0), with(L + 2, 0), over(L + 2, 0);
  std::uint64_t under = 0;
  for (std::uint64_t i = 0; i < n; ++i) {
    const std::uint64_t c = multiplicity[i], got = f.count(present_key(i));
    under += got < std::min<std::uint64_t>(c, L);
    with[c] += 1;
    over[c] += got > c;
    for (std::uint64_t j = 0; j < std::min<std::uint64_t>(c, L); ++j) reached[j] += 1;
  }
  EXPECT_EQ(under, 0u) << "count() fell below min(multiplicity, L)";

  // Layer j's rate, from the keys that reached it and from its fill: the two must agree.
  std::vector<double> rate(L);
  for (std::uint32_t j = 0; j < L; ++j) {
    rate[j] = blume::blocked_layout::model_fpr(reached[j], static_cast<double>(f.bits()), f.hashes());
    EXPECT_NEAR(f.layer_estimated_count(j), reached[j], 0.01 * widen * reached[j]) << "layer " << j + 1;
    EXPECT_NEAR(f.layer_fpr(j), rate[j], 0.05 * widen * rate[j]) << "layer " << j + 1;
  }

  // Keys never inserted: P(count ≥ j) = layer j's rate.
  constexpr std::uint64_t probes = blume_test::scaled(1'000'000);
  std::vector<double> at_least(L + 1, 0);
  for (std::uint64_t i = 0; i < probes; ++i) {
    const std::uint64_t got = f.count(absent_key(i));
    for (std::uint64_t j = 1; j <= got; ++j) at_least[j] += 1;
  }
  for (std::uint32_t j = 1; j <= L; ++j) {
    const double measured = at_least[j] / probes;
    std::printf("  absent keys: P(count >= %u) measured %.6f, layer %u's model %.6f (n = %.0f)\n", j, measured, j,
                rate[j - 1], reached[j - 1]);
    EXPECT_NEAR(measured, rate[j - 1], bound_999(rate[j - 1], probes)) << "layer " << j;
  }

  // Inserted keys of multiplicity c < L: at least layer c + 1's rate, at most layer 1's.
  for (std::uint32_t c = 1; c < L; ++c) {
    const double measured = over[c] / with[c];
    std::printf(
        "  multiplicity %u: over-counted %.6f of %.0f keys; layer %u's rate %.6f, layer 1's %.6f, "
        "bound %.6f\n",
        c, measured, with[c], c + 1, rate[c], rate[0], f.overcount_bound(c));
    EXPECT_GE(measured, rate[c] - bound_999(rate[c], with[c])) << c;
    EXPECT_LE(measured, rate[0] + bound_999(rate[0], with[c])) << c;
    EXPECT_LE(measured, f.overcount_bound(c) + bound_999(f.overcount_bound(c), with[c])) << c;
  }
  EXPECT_EQ(over[L] + over[L + 1], 0u) << "a saturated count cannot be exceeded";
}

TEST(LayeredFilter, SaveAndLoadGiveTheSameAnswers) {
  layered f(20'000, 0.01, 5, 77);
  for (std::uint64_t i = 0; i < 20'000; ++i)
    for (std::uint64_t j = 0; j <= i % 6; ++j) f.insert(present_key(i));
  const std::vector<std::byte> bytes = blume::to_bytes(f, {20'000, 0.01});
  const layered g = blume::from_bytes<layered>(bytes);
  EXPECT_TRUE(f == g);
  EXPECT_EQ(g.layers(), 5u);
  EXPECT_EQ(g.seed(), 77u);
  EXPECT_EQ(g.inserted(), f.inserted());
  for (std::uint64_t i = 0; i < 40'000; ++i) {
    EXPECT_EQ(g.count(present_key(i)), f.count(present_key(i)));
    EXPECT_EQ(g.count(absent_key(i)), f.count(absent_key(i)));
  }
  const blume::file_header h = blume::decode_header(bytes);
  EXPECT_EQ(h.primary, f.bits());
  EXPECT_EQ(h.secondary, f.hashes());
  EXPECT_EQ(h.layout, 3u);  // the layers' kind: blocked
  EXPECT_EQ(h.extra[0], 5u);
}

/// `bytes` with its header changed by `edit` and both checksums recomputed, as a forger would.
template <class Edit>
std::vector<std::byte> forged(std::vector<std::byte> bytes, Edit edit) {
  blume::file_header h = blume::decode_header(bytes);
  edit(h, bytes);
  h.payload_size = bytes.size() - blume::header_size;
  h.payload_checksum = XXH64(bytes.data() + blume::header_size, h.payload_size, 0);
  const auto encoded = blume::encode_header(h);
  std::copy(encoded.begin(), encoded.end(), bytes.begin());
  return bytes;
}

TEST(LayeredFilter, ForgedFilesAreRefused) {
  layered f(2000, 0.01);
  for (std::uint64_t i = 0; i < 2000; ++i)
    for (std::uint64_t j = 0; j <= i % 3; ++j) f.insert(present_key(i));
  const std::vector<std::byte> good = blume::to_bytes(f);
  ASSERT_NO_THROW(blume::from_bytes<layered>(good));
  using header = blume::file_header;
  using bytes = std::vector<std::byte>;
  const auto refused = [&](auto edit) { return forged(good, edit); };
  for (const std::uint64_t layers : {std::uint64_t{0}, std::uint64_t{65}, std::uint64_t{1} << 40})
    EXPECT_THROW(blume::from_bytes<layered>(refused([&](header& h, bytes&) { h.extra[0] = layers; })),
                 blume::format_error)
        << layers;
  // More layers than the payload holds, and a truncated payload.
  EXPECT_THROW(blume::from_bytes<layered>(refused([](header& h, bytes&) { h.extra[0] = 5; })), blume::format_error);
  EXPECT_THROW(blume::from_bytes<layered>(refused([](header&, bytes& b) { b.resize(b.size() - 64); })),
               blume::format_error);
  for (std::size_t i = 1; i < 6; ++i)
    EXPECT_THROW(blume::from_bytes<layered>(refused([&](header& h, bytes&) { h.extra[i] = 1; })), blume::format_error)
        << "reserved field " << i;
  EXPECT_THROW(blume::from_bytes<layered>(refused([](header& h, bytes&) { h.layout = 1; })), blume::format_error);
  EXPECT_THROW(blume::from_bytes<layered>(refused([](header& h, bytes&) { h.primary += 512; })), blume::format_error);
  EXPECT_THROW(blume::from_bytes<layered>(refused([](header& h, bytes&) { h.secondary = 0; })), blume::format_error);
  // A bit in layer 2 where layer 1 is clear: no sequence of inserts writes that.
  const std::size_t layer_bytes = f.bits() / 8;
  bytes payload_edit = good;
  std::size_t at = 0;
  while (payload_edit[blume::header_size + at] != std::byte{0}) ++at;  // a clear byte of layer 1
  EXPECT_THROW(blume::from_bytes<layered>(refused([&](header&, bytes& b) {
                 b[blume::header_size + layer_bytes + at] = std::byte{1};
               })),
               blume::format_error);
}

// Not a pass/fail property: how count() compares with a counting filter's (4-bit counters) in the same
// memory, at 1M keys of multiplicities 1..4. Printed for the record.
TEST(LayeredFilter, CountAccuracyBesideACountingFilterInTheSameMemory) {
  constexpr std::uint64_t n = blume_test::scaled(1'000'000), probes = blume_test::scaled(1'000'000);
  std::mt19937_64 rng(7);
  std::vector<std::uint8_t> multiplicity(n);
  for (auto& m : multiplicity) m = static_cast<std::uint8_t>(1 + rng() % 4);
  layered a(n, 0.01);
  const std::uint64_t bytes = a.bits() / 8 * a.layers();
  blume::counting_bloom_filter<> b(blume::plan_for_bits(n, bytes * 8 / blume::default_counter_bits,
                                                        blume::counting_bloom_filter<>::kind));
  const std::uint64_t counting_bytes = b.storage().size();
  for (std::uint64_t i = 0; i < n; ++i)
    for (int j = 0; j < multiplicity[i]; ++j) {
      a.insert(present_key(i));
      b.insert(present_key(i));
    }
  std::uint64_t over_a = 0, over_b = 0, under_a = 0, under_b = 0, ghost_a = 0, ghost_b = 0;
  for (std::uint64_t i = 0; i < n; ++i) {
    const std::uint64_t ca = a.count(present_key(i)), cb = b.count(present_key(i));
    over_a += ca > multiplicity[i];
    over_b += cb > multiplicity[i];
    under_a += ca < multiplicity[i];
    under_b += cb < multiplicity[i];
  }
  for (std::uint64_t i = 0; i < probes; ++i) {
    ghost_a += a.count(absent_key(i)) != 0;
    ghost_b += b.count(absent_key(i)) != 0;
  }
  std::printf("  equal memory, %llu keys of multiplicity 1..4:\n", static_cast<unsigned long long>(n));
  std::printf("    layered (4 blocked layers, k = %u, %llu bytes): over-counted %.6f, absent with a count %.6f\n",
              a.hashes(), static_cast<unsigned long long>(bytes), static_cast<double>(over_a) / n,
              static_cast<double>(ghost_a) / probes);
  std::printf("    counting (4-bit counters, k = %u, %llu bytes): over-counted %.6f, absent with a count %.6f\n",
              b.hashes(), static_cast<unsigned long long>(counting_bytes), static_cast<double>(over_b) / n,
              static_cast<double>(ghost_b) / probes);
  RecordProperty("layered_overcounted", std::to_string(static_cast<double>(over_a) / n));
  RecordProperty("counting_overcounted", std::to_string(static_cast<double>(over_b) / n));
  RecordProperty("layered_absent_nonzero", std::to_string(static_cast<double>(ghost_a) / probes));
  RecordProperty("counting_absent_nonzero", std::to_string(static_cast<double>(ghost_b) / probes));
  EXPECT_EQ(under_a + under_b, 0u) << "neither under-counts";
  EXPECT_LE(counting_bytes, bytes);
}

}  // namespace
