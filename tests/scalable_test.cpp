// SPDX-License-Identifier: Apache-2.0
// The scalable Bloom filter: growth, the compound false-positive bound, RedisBloom's layer geometry, and
// the file format of a chain.
#include <gtest/gtest.h>

#include <bit>
#include <chrono>
#include <cstdio>

#include "blume/kinds/scalable_bloom_filter.hpp"
#include "forge.hpp"
#include "test_support.hpp"

namespace {

using blume_test::absent_key;
using blume_test::present_key;
using scalable = blume::scalable_bloom_filter<>;

scalable filled(std::uint64_t capacity, double fpr, std::uint64_t items, blume::scalable_options options = {}) {
  scalable f(capacity, fpr, options);
  for (std::uint64_t i = 0; i < items; ++i) f.insert(present_key(i));
  return f;
}

TEST(ScalableFilter, GrowsPastItsInitialCapacityWithoutFalseNegatives) {
  const scalable f = filled(1000, 0.01, 100'000);
  EXPECT_GT(f.layers().size(), 5u);
  for (std::uint64_t i = 0; i < 100'000; ++i) ASSERT_TRUE(f.contains(present_key(i))) << i;
}

TEST(ScalableFilter, CompoundRateStaysBelowTheTarget) {
  // The slow builds start at a tenth of the capacity and insert a tenth of the keys: the same layers.
  const scalable f = filled(blume_test::scaled(10'000, 10, 1'000), 0.01, blume_test::scaled(1'000'000));
  ASSERT_GE(f.layers().size(), 6u);  // about seven
  const std::uint64_t probes = blume_test::scaled(2'000'000);
  const double measured = static_cast<double>(f.count_contained(blume_test::absent_key_view(probes))) / probes;
  // The model's compound rate is at most the target; the measured one is a sample of it, so it may exceed the
  // target by sampling noise only (the 99.9% binomial interval).
  EXPECT_LE(f.predicted_fpr(), 0.01);
  EXPECT_LE(measured, 0.01 + blume_test::binomial_999_slack(0.01, probes));
  EXPECT_NEAR(measured, f.predicted_fpr(), blume_test::fpr_tolerance(f.predicted_fpr(), probes, 0.05));
}

TEST(ScalableFilter, LayerGeometryIsRedisBlooms) {
  const scalable f(100, 0.01);
  for (std::size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(f.layer_capacity(i), 100u << i);
    EXPECT_DOUBLE_EQ(f.layer_fpr(i), 0.01 * std::pow(0.5, static_cast<double>(i + 1)));
  }
}

TEST(ScalableFilter, EachLayerIsSizedForItsShareOfTheRate) {
  const scalable f = filled(1000, 0.01, 10'000);
  for (std::size_t i = 0; i < f.layers().size(); ++i) {
    const blume::filter_plan plan =
        blume::plan_for(f.layer_capacity(i), f.layer_fpr(i), blume::partitioned_bloom_filter<>::kind);
    EXPECT_EQ(f.layers()[i].bits(), plan.bits) << i;
    EXPECT_EQ(f.layers()[i].hashes(), plan.hashes) << i;
  }
  EXPECT_GT(f.layers()[3].hashes(), f.layers()[0].hashes());  // k grows as the rates tighten
}

TEST(ScalableFilter, DuplicatesNeitherCountNorGrowTheChain) {
  scalable f(10, 0.01);
  EXPECT_TRUE(f.insert("same"));
  for (int i = 0; i < 10'000; ++i) EXPECT_FALSE(f.insert("same"));
  EXPECT_EQ(f.layers().size(), 1u);
  EXPECT_EQ(f.inserted(), 1u);
}

TEST(ScalableFilter, CustomGrowthAndTighteningShapeTheLayers) {
  blume::scalable_options o;
  o.growth = 4;
  o.tightening = 0.8;
  const scalable f = filled(100, 0.05, 2000, o);
  EXPECT_EQ(f.layer_capacity(2), 1600u);
  EXPECT_DOUBLE_EQ(f.layer_fpr(1), 0.05 * 0.2 * 0.8);
  EXPECT_EQ(f.layers().size(), 3u);  // 100 + 400 + 1600 ≥ 2000 distinct adds
}

TEST(ScalableFilter, NonScalingFilterRefusesInsertsWhenFull) {
  blume::scalable_options o;
  o.scaling = false;
  scalable f(100, 0.01, o);
  std::uint64_t added = 0;
  for (std::uint64_t i = 0; i < 1000; ++i) added += f.insert(present_key(i));
  EXPECT_GE(added, 99u);
  EXPECT_LE(added, 100u);
  EXPECT_EQ(f.layers().size(), 1u);
  EXPECT_FALSE(f.insert("one more"));
  for (std::uint64_t i = 0; i < 90; ++i) EXPECT_TRUE(f.contains(present_key(i)));
}

TEST(ScalableFilter, InsertManyReportsTheKeysAFullChainRefused) {
  blume::scalable_options o;
  o.scaling = false;
  scalable f(100, 0.01, o);
  const auto keys = blume_test::present_keys(1000);
  const std::size_t stored = f.insert_many(keys);
  EXPECT_LT(stored, keys.size());  // refused keys are not reported as stored
  EXPECT_GE(stored, 100u);         // the first 100 fit, and some later ones were (falsely) present already
  std::size_t found = 0;
  for (const auto& k : keys) found += f.contains(k);
  EXPECT_GE(found, stored);  // everything it counted as stored answers "maybe"
}

TEST(ScalableFilter, NonScalingLayerGetsTheWholeRate) {
  blume::scalable_options o;
  o.scaling = false;
  const scalable f(10'000, 0.01, o);
  EXPECT_DOUBLE_EQ(f.layer_fpr(0), 0.01);
  EXPECT_EQ(f.layers()[0].bits(), blume::plan_for(10'000, 0.01, blume::partitioned_bloom_filter<>::kind).bits);
}

/// A layer policy (what a RedisBloom-compatible chain plugs in): the default capacities and rates, with
/// twice plan_for's bits.
struct doubled_layers : blume::plan_layers<blume::bloom_filter<>> {
  blume::classic_layout layout(const blume::layer_spec& s) const {
    const blume::filter_plan p = blume::plan_for(s.capacity, s.fpr, blume::bloom_filter<>::kind);
    return blume::classic_layout(p.bits * 2, p.hashes);
  }
};

TEST(ScalableFilter, LayerSizingIsAPolicy) {
  blume::scalable_bloom_filter<blume::bloom_filter<>, doubled_layers> f(1000, 0.01);
  EXPECT_EQ(f.layers()[0].bits(), 2 * blume::plan_for(1000, 0.005, blume::bloom_filter<>::kind).bits);
  for (std::uint64_t i = 0; i < 5000; ++i) f.insert(present_key(i));
  const auto copy = blume::from_bytes<decltype(f)>(blume::to_bytes(f));
  EXPECT_TRUE(copy == f);
}

TEST(ScalableFilter, BadOptionsAreRejectedNamingTheValue) {
  auto refused = [](double growth, double tightening) {
    blume::scalable_options o;
    o.growth = growth;
    o.tightening = tightening;
    return blume_test::message_of<blume::invalid_argument>([&] { scalable(100, 0.01, o); });
  };
  EXPECT_TRUE(blume_test::mentions_number(refused(0.5, 0.5), 0.5));
  EXPECT_TRUE(blume_test::mentions(refused(0.5, 0.5), "growth"));
  EXPECT_TRUE(blume_test::mentions(refused(2, 0), "tightening"));
  EXPECT_TRUE(blume_test::mentions_number(refused(2, 1.5), 1.5));
  EXPECT_TRUE(blume_test::mentions(refused(2, 1), "tightening"));
  EXPECT_THROW(scalable(0, 0.01), blume::invalid_argument);
  EXPECT_THROW(scalable(100, 1.0), blume::invalid_argument);
}

TEST(ScalableFilter, MergeOfChainsWithTheSameShapeIsTheirUnion) {
  scalable a(1000, 0.01), b(1000, 0.01);
  for (std::uint64_t i = 0; i < 900; ++i) a.insert(present_key(i));
  for (std::uint64_t i = 900; i < 1800; ++i) b.insert(present_key(i));
  a.merge(b);
  for (std::uint64_t i = 0; i < 1800; ++i) ASSERT_TRUE(a.contains(present_key(i)));
  const scalable grown = filled(1000, 0.01, 5000);
  EXPECT_TRUE(blume_test::mentions(blume_test::message_of<blume::incompatible_filters>([&] { a.merge(grown); }),
                                   "layer counts"));
}

TEST(ScalableFilter, AMergeRefusedForAnyLayerChangesNoLayer) {
  scalable a(1000, 0.01), scaling_off(1000, 0.01, {.scaling = false});
  for (std::uint64_t i = 0; i < 500; ++i) a.insert(present_key(i));
  const scalable before = a;
  EXPECT_TRUE(blume_test::mentions(blume_test::message_of<blume::incompatible_filters>([&] { a.merge(scaling_off); }),
                                   "scaling"));
  EXPECT_TRUE(a == before);
}

TEST(ScalableFilter, UnionIntersectionAndJaccardEstimatesFollowTheSets) {
  // Two-layer chains: 0..2999 and 2000..4999 overlap in 1000 keys; each chain holds 3000 keys.
  scalable a(2000, 0.01), b(2000, 0.01);
  for (std::uint64_t i = 0; i < 3000; ++i) a.insert(present_key(i));
  for (std::uint64_t i = 2000; i < 5000; ++i) b.insert(present_key(i));
  ASSERT_EQ(a.layers().size(), 2u);
  ASSERT_EQ(b.layers().size(), 2u);
  // Keys 2000..2999 sit in a's second layer and b's first: the layer-wise union would count them twice
  // (about 6000 for 5000), so grown chains are refused, with the bounds their bits support.
  const std::string why =
      blume_test::message_of<blume::incompatible_filters>([&] { (void)blume::estimate_union(a, b); });
  EXPECT_TRUE(blume_test::mentions(why, "grown")) << why;
  EXPECT_TRUE(blume_test::mentions(why, "between 3")) << why;
  EXPECT_THROW((void)blume::estimate_intersection(a, b), blume::incompatible_filters);
  EXPECT_THROW((void)blume::estimate_jaccard(a, b), blume::incompatible_filters);
  scalable c(6000, 0.01), d(6000, 0.01);
  for (std::uint64_t i = 0; i < 3000; ++i) c.insert(present_key(i));
  for (std::uint64_t i = 2000; i < 5000; ++i) d.insert(present_key(i));
  ASSERT_EQ(c.layers().size(), 1u);
  scalable merged = c;
  merged.merge(d);
  EXPECT_DOUBLE_EQ(blume::estimate_union(c, d), merged.estimated_count());
  EXPECT_NEAR(blume::estimate_union(c, d), 5000, 5000 * 0.03);
  EXPECT_NEAR(blume::estimate_intersection(c, d), 1000, 1000 * 0.15);
  EXPECT_NEAR(blume::estimate_jaccard(c, d), 0.2, 0.03);
  EXPECT_THROW(blume::estimate_union(a, c), blume::incompatible_filters);
}

TEST(ScalableFilter, ClearLeavesOneEmptyLayer) {
  scalable f = filled(100, 0.01, 1000);
  f.clear();
  EXPECT_EQ(f.layers().size(), 1u);
  EXPECT_EQ(f.inserted(), 0u);
  EXPECT_FALSE(f.contains(present_key(1)));
}

TEST(ScalableFilter, RoundTripsThroughBytesFilesAndMappings) {
  const scalable f = filled(1000, 0.01, 7000);
  const auto bytes = blume::to_bytes(f);
  EXPECT_TRUE(blume::from_bytes<scalable>(bytes) == f);
  const blume_test::temp_dir dir;
  blume::save(f, dir / "chain.blume");
  EXPECT_TRUE(blume::load<scalable>(dir / "chain.blume") == f);
  const scalable mapped = blume::map_file<scalable>(dir / "chain.blume");
  EXPECT_TRUE(mapped == f);
  for (std::uint64_t i = 0; i < 7000; ++i) ASSERT_TRUE(mapped.contains(present_key(i)));
  scalable reloaded = blume::from_bytes<scalable>(bytes);
  reloaded.insert("keeps growing after a reload");
  EXPECT_TRUE(reloaded.contains("keeps growing after a reload"));
}

TEST(ScalableFilter, EveryHeaderByteFlipAndTruncationIsRejected) {
  const auto bytes = blume::to_bytes(filled(50, 0.01, 300));
  for (std::size_t i = 0; i < blume::header_size; ++i) {
    auto damaged = bytes;
    damaged[i] ^= std::byte{0x10};
    EXPECT_THROW(blume::from_bytes<scalable>(damaged), blume::format_error) << i;
  }
  for (std::size_t n = 0; n < bytes.size(); ++n)
    EXPECT_THROW(blume::from_bytes<scalable>(std::span(bytes.data(), n)), blume::format_error) << n;
  auto damaged = bytes;
  damaged.back() ^= std::byte{1};
  EXPECT_THROW(blume::from_bytes<scalable>(damaged), blume::format_error);
}

TEST(ScalableFilter, ForgedLayerCountIsRefusedBeforeAllocating) {
  const auto bytes = blume::to_bytes(filled(50, 0.01, 10));
  blume::file_header h = blume::decode_header(bytes);
  h.secondary = 60;  // 60 layers of doubling capacity: far more than 2^40 bits, and more than the file holds
  const auto header = blume::encode_header(h);
  auto forged = bytes;
  std::copy(header.begin(), header.end(), forged.begin());
  EXPECT_THROW(blume::from_bytes<scalable>(forged), blume::format_error);
}

TEST(ScalableFilter, GrowthIsBoundedByRedisBloomsExpansionLimit) {
  blume::scalable_options o;
  o.growth = 32768;
  EXPECT_NO_THROW(scalable(1, 0.01, o));
  for (const double growth : {32769.0, 5e10, std::numeric_limits<double>::infinity(), std::nan("")}) {
    o.growth = growth;
    EXPECT_TRUE(blume_test::mentions(blume_test::message_of<blume::invalid_argument>([&] { scalable(1, 0.01, o); }),
                                     "growth"))
        << growth;
  }
  o.scaling = false;
  o.growth = 1e6;
  EXPECT_THROW(scalable(1, 0.01, o), blume::invalid_argument) << "a non-scaling chain records its growth too";
}

// Issue 11: a 144-byte file (a version-1 header and one layer of one 64-bit word) with growth 5e10 made the
// next add ask for a 78 GB layer. The file is refused on load, at once.
TEST(ScalableFilter, ATinyFileWithAHugeGrowthIsRefusedOnLoad) {
  scalable f(1, 0.01);
  f.insert(present_key(0));
  auto bytes = blume::to_bytes(f);
  ASSERT_EQ(bytes.size(), blume::header_size + 48);  // the layer's item count, its row of the layer table, its one word
  blume::file_header h = blume::decode_header(bytes);
  h.extra[1] = std::bit_cast<std::uint64_t>(5e10);  // growth
  const auto header = blume::encode_header(h);
  std::copy(header.begin(), header.end(), bytes.begin());
  const auto started = std::chrono::steady_clock::now();
  EXPECT_TRUE(blume_test::mentions(
      blume_test::message_of<blume::format_error>([&] { (void)blume::from_bytes<scalable>(bytes); }), "growth"));
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(1));
}

// Found by the file fuzzer once the corpus held layer tables: a header claiming 3.45 billion keys over a
// table whose one layer holds 40 made the next layer 7.8 GB. The next layer may grow the last one by the
// growth factor, not more.
TEST(ScalableFilter, AHeaderCapacityFarAboveItsLayerTableIsRefusedOnLoad) {
  scalable f(40, 0.05);
  for (std::uint64_t i = 0; i < 40; ++i) f.insert(present_key(i));
  auto bytes = blume::to_bytes(f);
  EXPECT_NO_THROW((void)blume::from_bytes<scalable>(bytes)) << "a chain as written grows by its growth";
  blume::file_header h = blume::decode_header(bytes);
  h.primary = 3'452'764'179;  // the first layer's capacity, as the header records it
  const auto header = blume::encode_header(h);
  std::copy(header.begin(), header.end(), bytes.begin());
  blume_test::fix_checksums(bytes);
  EXPECT_TRUE(blume_test::mentions(
      blume_test::message_of<blume::format_error>([&] { (void)blume::from_bytes<scalable>(bytes); }), "next layer"));
}

TEST(ScalableFilter, TighteningOutsideZeroToOneIsRefusedOnLoad) {
  const auto good = blume::to_bytes(filled(100, 0.01, 10));
  for (const double tightening : {0.0, -0.5, 1.0, 1.5, std::nan("")}) {
    auto bytes = good;
    blume::file_header h = blume::decode_header(bytes);
    h.extra[2] = std::bit_cast<std::uint64_t>(tightening);
    const auto header = blume::encode_header(h);
    std::copy(header.begin(), header.end(), bytes.begin());
    EXPECT_TRUE(blume_test::mentions(
        blume_test::message_of<blume::format_error>([&] { (void)blume::from_bytes<scalable>(bytes); }), "tightening"))
        << tightening;
  }
}

TEST(ScalableFilter, ALayerBeyondTheLibraryCapIsRefusedAndTheChainStaysAsItWas) {
  blume::scalable_options o;
  o.growth = 32768;
  scalable f(1'000'000, 1e-8, o);  // layer 1: 3.3e10 items at 2.5e-9, about 2^40.2 bits
  std::uint64_t i = 0;
  while (!f.needs_new_layer()) f.insert(present_key(i++));
  EXPECT_THROW((void)f.next_layer_bytes(), blume::invalid_argument);
  EXPECT_EQ(f.try_insert(absent_key(0)), blume::insert_result::full);
  EXPECT_EQ(f.layers().size(), 1u);
}

// Issue 28: a layer is held to what a fresh plan may make. A tightening of 0.01 takes layer 1 of a chain at
// 1e-18 below 2^-64, where k stays at 64 and a key would cost hundreds of bits: the chain is full after
// its first layer, says why, and stays as it was.
TEST(ScalableFilter, ALayerBelowTheSmallestPlannedRateIsNotAdded) {
  EXPECT_TRUE(blume_test::mentions(blume_test::message_of<blume::invalid_argument>([] { scalable(100, 1e-25); }),
                                   "smallest"));
  blume::scalable_options o;
  o.growth = 1;
  o.tightening = 0.01;
  EXPECT_EQ(scalable(1, 1e-18).growth_refusal(), "") << "at tightening 0.5, layer 1 is planned at 2.5e-19";
  scalable f(1, 1e-18, o);
  f.insert(present_key(0));
  ASSERT_TRUE(f.needs_new_layer());
  EXPECT_TRUE(blume_test::mentions(f.growth_refusal(), "smallest")) << f.growth_refusal();
  const scalable before = f;
  EXPECT_EQ(f.try_insert(absent_key(0)), blume::insert_result::full);
  EXPECT_TRUE(f == before);
}

/// The default policy, counting the layer specs it is asked for.
struct counted_layers : blume::plan_layers<blume::partitioned_bloom_filter<>> {
  static inline std::uint64_t specs = 0;
  blume::layer_spec spec(std::uint64_t capacity, double fpr, const blume::scalable_options& o, std::size_t index,
                         const blume::layer_spec& previous) const {
    ++specs;
    return plan_layers::spec(capacity, fpr, o, index, previous);
  }
};

// The cuckoo filter's issue-11 pattern, in the chain: each layer's size was found by walking the specs
// up from layer 0, so checking the payload size of a file took time quadratic in its layers (8.4 million
// specs for the 4096 one-word layers of this 78 KB file, growth 1 and tightening 0.995).
TEST(ScalableFilter, AFileOfManyLayersOpensInLinearTime) {
  using chain = blume::scalable_bloom_filter<blume::partitioned_bloom_filter<>, counted_layers>;
  blume::filter_parameters p;
  p.primary = 1;  // capacity of each layer
  p.secondary = blume::scalable_max_layers;
  p.layout = static_cast<std::uint32_t>(chain::layer_type::kind);
  p.extra = {std::bit_cast<std::uint64_t>(0.01),  std::bit_cast<std::uint64_t>(1.0),
             std::bit_cast<std::uint64_t>(0.995), 0,
             blume::scalable_max_layers,          0};
  blume::file_header h;
  h.kind = blume::scalable_bloom_filter<>::kind;
  h.hash = chain::hasher_type::id;
  h.seed = chain::hasher_type::default_seed;
  h.primary = p.primary;
  h.secondary = p.secondary;
  h.layout = p.layout;
  h.extra = p.extra;
  h.payload_size = chain::payload_size(p, {});                        // no layer table: the policy gives the geometry
  std::vector<std::byte> bytes(blume::header_size + h.payload_size);  // every layer empty
  const auto header = blume::encode_header(h);
  std::copy(header.begin(), header.end(), bytes.begin());
  blume_test::fix_checksums(bytes);

  counted_layers::specs = 0;
  const auto started = std::chrono::steady_clock::now();
  const chain f = blume::from_bytes<chain>(bytes);
  const auto took = std::chrono::steady_clock::now() - started;
  std::printf("opened %zu layers (%zu bytes) in %.1f ms, %ju layer specs\n", f.layers().size(), bytes.size(),
              std::chrono::duration<double, std::milli>(took).count(),
              static_cast<std::uintmax_t>(counted_layers::specs));
  EXPECT_EQ(f.layers().size(), blume::scalable_max_layers);
  EXPECT_LE(counted_layers::specs, 4u * blume::scalable_max_layers);
}

}  // namespace
