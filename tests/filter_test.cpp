// SPDX-License-Identifier: Apache-2.0
// The verbs every filter kind answers: insert, contains, the bulk calls, clear, merge and intersect, and
// the validation of geometries. Typed over bloom, partitioned, blocked and split-block filters.
#include <cstring>
#include <iterator>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "test_support.hpp"

namespace {

using blume_test::absent_key;
using blume_test::absent_string;
using blume_test::mentions;
using blume_test::mentions_number;
using blume_test::message_of;
using blume_test::present_key;
using blume_test::present_string;
using blume_test::small_filter;
using blume_test::small_geometry;

enum class colour : std::uint8_t { red, green, blue, cyan, magenta, yellow, black, white };
enum class ticket : std::int64_t {};
enum legacy_code : int { legacy_first = 0 };

constexpr std::uint64_t seeds[] = {
    0, 1, 2, 42, blume::xxh3_hasher::default_seed, 0x8000000000000000ULL, 0xffffffffffffffffULL};
constexpr std::uint64_t keys_per_type = 3000;

template <class F>
class FilterBehaviour : public ::testing::Test {};
TYPED_TEST_SUITE(FilterBehaviour, blume_test::filter_types, blume_test::kind_names);

// ---- empty filters and single keys ---------------------------------------------------------------------

TYPED_TEST(FilterBehaviour, NewFilterIsEmpty) {
  const TypeParam f(10'000, 0.01);
  EXPECT_EQ(f.set_bits(), 0u);
  EXPECT_EQ(f.estimated_count(), 0.0);
  EXPECT_EQ(f.inserted(), 0u);
  EXPECT_EQ(f.count_contained(blume_test::absent_key_view(10'000)), 0u);
}

TYPED_TEST(FilterBehaviour, InsertOfANewKeyIntoAnEmptyFilterReturnsTrue) {
  const blume::filter_plan plan = blume::plan_for(10'000, 0.01, TypeParam::kind);
  for (std::uint64_t i = 0; i < 100; ++i) {
    TypeParam f(plan, i);
    EXPECT_TRUE(f.insert(present_key(i))) << i;
  }
}

TYPED_TEST(FilterBehaviour, InsertOfTheSameKeyAgainReturnsFalse) {
  TypeParam f(10'000, 0.01);
  ASSERT_TRUE(f.insert(std::string("again")));
  EXPECT_FALSE(f.insert(std::string("again")));
  EXPECT_FALSE(f.insert(std::string_view("again")));
}

TYPED_TEST(FilterBehaviour, InsertReturnsWhetherTheKeyWasAbsentBefore) {
  // A crowded filter, so that some new keys are false positives and insert must return false for them.
  auto f = small_filter<TypeParam>();
  std::uint64_t new_keys_reported_present = 0;
  for (std::uint64_t i = 0; i < 3000; ++i) {
    const bool was_contained = f.contains(present_key(i));
    new_keys_reported_present += was_contained;
    ASSERT_EQ(f.insert(present_key(i)), !was_contained) << i;
  }
  EXPECT_GT(new_keys_reported_present, 0u);
}

TYPED_TEST(FilterBehaviour, InsertedCountsEveryCallIncludingDuplicates) {
  TypeParam f(1000, 0.01);
  for (int round = 0; round < 3; ++round)
    for (std::uint64_t i = 0; i < 100; ++i) f.insert(present_key(i));
  f.insert_many(blume_test::present_keys(50));
  EXPECT_EQ(f.inserted(), 350u);
}

TYPED_TEST(FilterBehaviour, OneKeySetsAtMostKBitsAndAtLeastOne) {
  auto f = small_filter<TypeParam>();
  for (std::uint64_t i = 0; i < 1000; ++i) {
    f.clear();
    f.insert(present_key(i));
    ASSERT_GE(f.set_bits(), 1u) << i;
    ASSERT_LE(f.set_bits(), f.hashes()) << i;
    // Partitioned probes land in distinct slices and split-block probes in distinct words: exactly k bits.
    if constexpr (TypeParam::kind == blume::partitioned_bloom_filter<>::kind ||
                  TypeParam::kind == blume::split_block_bloom_filter<>::kind) {
      ASSERT_EQ(f.set_bits(), f.hashes()) << i;
    }
  }
}

template <class F>
class BlockedFilterLayout : public ::testing::Test {};
using blocked_filter_types = ::testing::Types<blume::blocked_bloom_filter<>, blume::split_block_bloom_filter<>>;
TYPED_TEST_SUITE(BlockedFilterLayout, blocked_filter_types, blume_test::kind_names);

TYPED_TEST(BlockedFilterLayout, AllOfAKeysBitsLieInOneBlock) {
  const std::size_t block_bytes = TypeParam::layout_type::block_bits / 8;
  auto f = small_filter<TypeParam>();
  for (std::uint64_t i = 0; i < 1000; ++i) {
    f.clear();
    f.insert(present_key(i));
    const std::byte* bytes = f.storage().data();
    std::size_t first = f.storage().size(), last = 0;
    for (std::size_t b = 0; b < f.storage().size(); ++b) {
      if (bytes[b] != std::byte{0}) {
        first = std::min(first, b);
        last = b;
      }
    }
    ASSERT_LT(first, f.storage().size()) << i;
    ASSERT_EQ(first / block_bytes, last / block_bytes) << i;
  }
}

TYPED_TEST(FilterBehaviour, DigestOverloadsAnswerLikeTheKeyOverloads) {
  TypeParam f(1000, 0.01, 99);
  f.insert(f.hash(std::string("by digest")));
  f.insert(std::string("by key"));
  EXPECT_TRUE(f.contains(std::string("by digest")));
  EXPECT_TRUE(f.contains(f.hash(std::string("by key"))));
}

TYPED_TEST(FilterBehaviour, EqualIntegerValuesOfDifferentTypesAreOneKey) {
  TypeParam f(1000, 0.01);
  ASSERT_TRUE(f.insert(5));
  EXPECT_TRUE(f.contains(5u));
  EXPECT_TRUE(f.contains(5ll));
  EXPECT_TRUE(f.contains(static_cast<std::uint8_t>(5)));
  const std::uint64_t bits_set = f.set_bits();
  EXPECT_FALSE(f.insert(static_cast<std::uint16_t>(5)));  // nothing new to set
  EXPECT_EQ(f.set_bits(), bits_set);
}

// ---- no false negatives, for every kind of key and many seeds ------------------------------------------

TYPED_TEST(FilterBehaviour, NoFalseNegativesForStringKeys) {
  for (std::uint64_t seed : seeds) {
    TypeParam f(blume::plan_for(3 * keys_per_type, 0.01, TypeParam::kind), seed);
    std::vector<std::string> keys;
    for (std::uint64_t i = 0; i < 3 * keys_per_type; ++i) keys.push_back(present_string(i));
    for (std::uint64_t i = 0; i < keys.size(); ++i) {
      if (i % 3 == 0) f.insert(keys[i]);                    // std::string
      if (i % 3 == 1) f.insert(std::string_view(keys[i]));  // std::string_view
      if (i % 3 == 2) f.insert(keys[i].c_str());            // const char*
    }
    for (const std::string& k : keys) {
      ASSERT_TRUE(f.contains(k)) << seed << " " << k;
      ASSERT_TRUE(f.contains(std::string_view(k))) << seed << " " << k;
      ASSERT_TRUE(f.contains(k.c_str())) << seed << " " << k;
    }
  }
}

/// The plan for keys_per_type keys at 1%, computed once per kind (planning a blocked filter takes a while).
template <class F>
const blume::filter_plan& key_type_plan() {
  static const blume::filter_plan plan = blume::plan_for(keys_per_type, 0.01, F::kind);
  return plan;
}

template <class F, class T>
void expect_no_false_negatives_for(std::uint64_t seed) {
  F f(key_type_plan<F>(), seed);
  std::vector<T> keys;
  for (std::uint64_t i = 0; i < keys_per_type; ++i) keys.push_back(static_cast<T>(present_key(i)));
  for (T k : keys) f.insert(k);
  for (T k : keys) ASSERT_TRUE(f.contains(k)) << "seed " << seed << ", " << sizeof(T) << "-byte key";
}

template <class F, class... T>
void expect_no_false_negatives_for_each(std::uint64_t seed) {
  (expect_no_false_negatives_for<F, T>(seed), ...);
}

TYPED_TEST(FilterBehaviour, NoFalseNegativesForEveryIntegerType) {
  for (std::uint64_t seed : seeds) {
    expect_no_false_negatives_for_each<TypeParam, bool, char, signed char, unsigned char, wchar_t, char8_t, char16_t,
                                       char32_t, short, unsigned short, int, unsigned, long, unsigned long, long long,
                                       unsigned long long>(seed);
  }
}

TYPED_TEST(FilterBehaviour, NoFalseNegativesForEnumKeys) {
  for (std::uint64_t seed : seeds) {
    expect_no_false_negatives_for_each<TypeParam, colour, ticket, legacy_code>(seed);
  }
}

TYPED_TEST(FilterBehaviour, NoFalseNegativesForKeysWithKeyBytesCustomisation) {
  for (std::uint64_t seed : seeds) {
    TypeParam f(key_type_plan<TypeParam>(), seed);
    std::vector<app::user> users;
    for (std::uint64_t i = 0; i < keys_per_type; ++i)
      users.push_back(app::user{present_string(i), static_cast<int>(i)});
    for (const app::user& u : users) f.insert(u);
    for (const app::user& u : users) {
      ASSERT_TRUE(f.contains(u)) << seed << " " << u.name;
      ASSERT_TRUE(f.contains(app::user{u.name, -1})) << seed << " " << u.name;  // visits is not part of the key
    }
  }
}

TYPED_TEST(FilterBehaviour, NoFalseNegativesForKeysWithKeyHashSpecialisation) {
  for (std::uint64_t seed : seeds) {
    TypeParam f(key_type_plan<TypeParam>(), seed);
    std::vector<geo::point> points;
    for (std::uint64_t i = 0; i < keys_per_type; ++i) {
      const std::uint64_t r = present_key(i);
      points.push_back(geo::point{static_cast<std::int32_t>(r), static_cast<std::int32_t>(r >> 32)});
    }
    for (const geo::point& p : points) f.insert(p);
    for (const geo::point& p : points) ASSERT_TRUE(f.contains(p)) << seed << " (" << p.x << ", " << p.y << ")";
  }
}

// ---- bulk calls ----------------------------------------------------------------------------------------

/// A crowded filter holding present keys 0..1999, and probes that mix present and absent keys, so that
/// answers of both kinds occur. 10,007 probes: not a multiple of the batch size.
template <class F>
struct bulk_setup {
  F filter = F(2000, 0.1);
  bulk_setup() {
    for (std::uint64_t i = 0; i < 2000; ++i) filter.insert(present_key(i));
  }
  static constexpr std::uint64_t probes = 10'007;
  static std::uint64_t probe(std::uint64_t i) { return i % 2 ? present_key(i / 2) : absent_key(i); }
};

template <class F, class Key>
void expect_contains_many_agrees(const F& f, const std::vector<Key>& keys) {
  std::vector<bool> answers;
  const std::size_t hits = f.contains_many(keys, std::back_inserter(answers));
  ASSERT_EQ(answers.size(), keys.size());
  std::size_t trues = 0, falses = 0;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    ASSERT_EQ(answers[i], f.contains(keys[i])) << i;
    (answers[i] ? trues : falses) += 1;
  }
  EXPECT_EQ(hits, trues);
  EXPECT_GT(trues, 0u);
  EXPECT_GT(falses, 0u);
}

TYPED_TEST(FilterBehaviour, ContainsManyOverStringsAgreesWithContains) {
  TypeParam f(2000, 0.1);
  std::vector<std::string> keys;
  for (std::uint64_t i = 0; i < 2000; ++i) f.insert(present_string(i));
  for (std::uint64_t i = 0; i < bulk_setup<TypeParam>::probes; ++i)
    keys.push_back(i % 2 ? present_string(i / 2) : absent_string(i));
  expect_contains_many_agrees(f, keys);
}

TYPED_TEST(FilterBehaviour, ContainsManyOverIntegersAgreesWithContains) {
  bulk_setup<TypeParam> s;
  std::vector<std::uint64_t> keys;
  for (std::uint64_t i = 0; i < s.probes; ++i) keys.push_back(s.probe(i));
  expect_contains_many_agrees(s.filter, keys);
}

TYPED_TEST(FilterBehaviour, ContainsManyOverDigestsAgreesWithContains) {
  bulk_setup<TypeParam> s;
  std::vector<blume::digest> digests;
  for (std::uint64_t i = 0; i < s.probes; ++i) digests.push_back(s.filter.hash(s.probe(i)));
  expect_contains_many_agrees(s.filter, digests);
}

TYPED_TEST(FilterBehaviour, ContainsManyOfNothingWritesNothing) {
  bulk_setup<TypeParam> s;
  std::vector<bool> answers;
  EXPECT_EQ(s.filter.contains_many(std::vector<std::uint64_t>{}, std::back_inserter(answers)), 0u);
  EXPECT_TRUE(answers.empty());
}

TYPED_TEST(FilterBehaviour, CountContainedEqualsTheNumberOfTrueAnswers) {
  bulk_setup<TypeParam> s;
  std::vector<std::uint64_t> keys;
  std::size_t trues = 0;
  for (std::uint64_t i = 0; i < s.probes; ++i) {
    keys.push_back(s.probe(i));
    trues += s.filter.contains(keys.back());
  }
  EXPECT_EQ(s.filter.count_contained(keys), trues);
  std::vector<blume::digest> digests;
  for (std::uint64_t k : keys) digests.push_back(s.filter.hash(k));
  EXPECT_EQ(s.filter.count_contained(digests), trues);
}

TYPED_TEST(FilterBehaviour, InsertManyOfStringsEqualsRepeatedInsert) {
  std::vector<std::string> keys;
  for (std::uint64_t i = 0; i < 5003; ++i) keys.push_back(present_string(i));
  TypeParam bulk(5000, 0.01), single(5000, 0.01);
  bulk.insert_many(keys);
  for (const std::string& k : keys) single.insert(k);
  EXPECT_TRUE(bulk == single);
  EXPECT_EQ(bulk.inserted(), single.inserted());
}

TYPED_TEST(FilterBehaviour, InsertManyOfIntegersEqualsRepeatedInsert) {
  const auto keys = blume_test::present_keys(5003);
  TypeParam bulk(5000, 0.01), single(5000, 0.01);
  bulk.insert_many(keys);
  for (std::uint64_t k : keys) single.insert(k);
  EXPECT_TRUE(bulk == single);
  EXPECT_EQ(bulk.inserted(), single.inserted());
}

TYPED_TEST(FilterBehaviour, InsertManyOfDigestsEqualsRepeatedInsert) {
  TypeParam bulk(5000, 0.01), single(5000, 0.01);
  std::vector<blume::digest> digests;
  for (std::uint64_t i = 0; i < 5003; ++i) digests.push_back(bulk.hash(present_key(i)));
  bulk.insert_many(digests);
  for (std::uint64_t i = 0; i < 5003; ++i) single.insert(present_key(i));
  EXPECT_TRUE(bulk == single);
  EXPECT_EQ(bulk.inserted(), single.inserted());
}

// The bulk loops hash keys some way ahead of the one they use (a ring of detail::fused_distance, or
// batches of detail::pipeline_batch): inputs shorter than, equal to and just past those lengths.
TYPED_TEST(FilterBehaviour, BulkCallsAgreeWithOneByOneAtEveryLengthAroundThePipeline) {
  for (const std::size_t n : {std::size_t{1}, std::size_t{2}, std::size_t{31}, std::size_t{32}, std::size_t{33},
                              std::size_t{63}, std::size_t{64}, std::size_t{65}, std::size_t{97}}) {
    const auto keys = blume_test::present_keys(n);
    TypeParam bulk(1000, 0.05), single(1000, 0.05);
    bulk.insert_many(keys);
    for (std::uint64_t k : keys) single.insert(k);
    ASSERT_TRUE(bulk == single) << n;
    ASSERT_EQ(bulk.inserted(), single.inserted()) << n;
    std::vector<std::uint64_t> probes;
    for (std::uint64_t i = 0; i < n; ++i) probes.push_back(i % 2 ? present_key(i) : absent_key(i));
    std::vector<char> answers(n);
    std::size_t trues = 0;
    const std::size_t hits = bulk.contains_many(probes, answers.begin());
    for (std::size_t i = 0; i < n; ++i) {
      ASSERT_EQ(answers[i] != 0, bulk.contains(probes[i])) << n << " " << i;
      trues += answers[i] != 0;
    }
    ASSERT_EQ(hits, trues) << n;
    ASSERT_EQ(bulk.count_contained(probes), trues) << n;
  }
}

TYPED_TEST(FilterBehaviour, InsertManyOfNothingChangesNothing) {
  TypeParam f(1000, 0.01);
  f.insert_many(std::vector<std::string>{});
  EXPECT_EQ(f.set_bits(), 0u);
  EXPECT_EQ(f.inserted(), 0u);
}

// ---- clear, copy, equality -----------------------------------------------------------------------------

TYPED_TEST(FilterBehaviour, ClearEmptiesTheFilter) {
  TypeParam f(10'000, 0.01);
  f.insert_many(blume_test::present_keys(10'000));
  ASSERT_GT(f.set_bits(), 0u);
  f.clear();
  EXPECT_EQ(f.set_bits(), 0u);
  EXPECT_EQ(f.estimated_count(), 0.0);
  EXPECT_EQ(f.inserted(), 0u);
  EXPECT_EQ(f.count_contained(blume_test::present_keys(10'000)), 0u);
  EXPECT_TRUE(f == TypeParam(10'000, 0.01));
}

TYPED_TEST(FilterBehaviour, InsertAfterClearReturnsTrueAgain) {
  TypeParam f(1000, 0.01);
  ASSERT_TRUE(f.insert(std::string("k")));
  f.clear();
  EXPECT_TRUE(f.insert(std::string("k")));
  EXPECT_TRUE(f.contains(std::string("k")));
}

TYPED_TEST(FilterBehaviour, CopyIsIndependentOfTheOriginal) {
  TypeParam original(1000, 0.01);
  original.insert_many(blume_test::present_keys(500));
  TypeParam copy = original;
  EXPECT_TRUE(copy == original);
  copy.insert_many(blume_test::present_keys(500, 500));
  EXPECT_FALSE(copy == original);
  EXPECT_EQ(original.inserted(), 500u);
  EXPECT_EQ(original.count_contained(blume_test::present_keys(500)), 500u);
}

TYPED_TEST(FilterBehaviour, MovedToFilterKeepsTheKeys) {
  TypeParam original(1000, 0.01, 7);
  original.insert_many(blume_test::present_keys(500));
  const TypeParam reference = original;
  TypeParam moved = std::move(original);
  EXPECT_TRUE(moved == reference);
  EXPECT_EQ(moved.seed(), 7u);
  EXPECT_EQ(moved.count_contained(blume_test::present_keys(500)), 500u);
}

TYPED_TEST(FilterBehaviour, EqualityComparesBitsGeometryAndSeed) {
  TypeParam a(1000, 0.01, 1), b(1000, 0.01, 1);
  a.insert(std::string("x"));
  EXPECT_FALSE(a == b);
  b.insert(std::string("x"));
  EXPECT_TRUE(a == b);
  EXPECT_FALSE(TypeParam(1000, 0.01, 1) == TypeParam(1000, 0.01, 2));  // empty, but hashing differently
  EXPECT_FALSE(TypeParam(1000, 0.01, 1) == TypeParam(2000, 0.01, 1));
}

TYPED_TEST(FilterBehaviour, DifferentSeedsPlaceKeysDifferently) {
  TypeParam a(1000, 0.01, 1), b(1000, 0.01, 2);
  a.insert_many(blume_test::present_keys(100));
  b.insert_many(blume_test::present_keys(100));
  ASSERT_EQ(a.storage().size(), b.storage().size());
  EXPECT_NE(std::memcmp(a.storage().data(), b.storage().data(), a.storage().size()), 0);
}

// ---- geometry ------------------------------------------------------------------------------------------

TYPED_TEST(FilterBehaviour, FilterForACapacityHasItsPlansGeometry) {
  const blume::filter_plan plan = blume::plan_for(123'457, 0.003, TypeParam::kind);
  const TypeParam f(123'457, 0.003, 31);
  EXPECT_EQ(f.bits(), plan.bits);
  EXPECT_EQ(f.hashes(), plan.hashes);
  EXPECT_EQ(f.seed(), 31u);
  EXPECT_EQ(f.storage().size(), plan.bytes);
  EXPECT_GE(f.size_in_bytes(), plan.bytes);
  EXPECT_LT(f.size_in_bytes(), plan.bytes + 1024);
  EXPECT_DOUBLE_EQ(f.predicted_fpr_at(123'457), plan.predicted_fpr);
  EXPECT_FALSE(f.is_mapped());
}

TYPED_TEST(FilterBehaviour, WithGeometryHasExactlyThatGeometry) {
  const auto f = small_filter<TypeParam>(5);
  EXPECT_EQ(f.bits(), small_geometry<TypeParam>::bits);
  EXPECT_EQ(f.hashes(), small_geometry<TypeParam>::hashes);
  EXPECT_EQ(f.seed(), 5u);
  EXPECT_EQ(f.storage().size(), TypeParam::plan_bytes(small_geometry<TypeParam>::bits));
}

TYPED_TEST(FilterBehaviour, FillRatioIsSetBitsOverBits) {
  TypeParam f(1000, 0.01);
  f.insert_many(blume_test::present_keys(700));
  EXPECT_DOUBLE_EQ(f.fill_ratio(), static_cast<double>(f.set_bits()) / static_cast<double>(f.bits()));
  EXPECT_GT(f.fill_ratio(), 0.2);
  EXPECT_LT(f.fill_ratio(), 0.8);
}

TYPED_TEST(FilterBehaviour, WithGeometryRejectsZeroBits) {
  const std::string message =
      message_of<blume::invalid_argument>([] { TypeParam::with_geometry(0, small_geometry<TypeParam>::hashes); });
  EXPECT_TRUE(mentions(message, "bit count"));
  EXPECT_TRUE(mentions(message, std::string(blume::kind_name(TypeParam::kind))));
}

TYPED_TEST(FilterBehaviour, WithGeometryRejectsZeroHashes) {
  const std::string message =
      message_of<blume::invalid_argument>([] { TypeParam::with_geometry(small_geometry<TypeParam>::bits, 0); });
  EXPECT_TRUE(mentions(message, "hash count"));
  EXPECT_TRUE(mentions_number(message, 0));
}

TYPED_TEST(FilterBehaviour, WithGeometryRejectsMoreHashesThanTheKindAllows) {
  constexpr std::uint32_t too_many = TypeParam::kind == blume::blocked_bloom_filter<>::kind ? 33
                                     : TypeParam::kind == blume::split_block_bloom_filter<>::kind
                                         ? 9
                                         : blume::max_hashes + 1;
  const std::string message =
      message_of<blume::invalid_argument>([] { TypeParam::with_geometry(512ull * 65 * 9, too_many); });
  EXPECT_TRUE(mentions_number(message, too_many));
}

TYPED_TEST(FilterBehaviour, WithGeometryRejectsMoreBitsThanTheMaximum) {
  const std::uint64_t too_many = blume::max_filter_bits + 512 * 3;  // a multiple of both block sizes
  const std::string message = message_of<blume::invalid_argument>([&] {
    TypeParam::with_geometry(too_many, small_geometry<TypeParam>::hashes);
  });
  EXPECT_TRUE(mentions(message, std::to_string(too_many)));
}

TYPED_TEST(FilterBehaviour, ConstructionRejectsBadPlans) {
  EXPECT_THROW(TypeParam(0, 0.01), blume::invalid_argument);
  EXPECT_THROW(TypeParam(1000, 0.0), blume::invalid_argument);
  EXPECT_THROW(TypeParam(1000, 1.5), blume::invalid_argument);
}

TEST(FilterGeometry, BlockedBitCountMustBeAMultipleOf512) {
  const std::string message =
      message_of<blume::invalid_argument>([] { blume::blocked_bloom_filter<>::with_geometry(1000, 4); });
  EXPECT_TRUE(mentions(message, "1000"));
  EXPECT_TRUE(mentions(message, "512"));
}

TEST(FilterGeometry, SplitBlockBitCountMustBeAMultipleOf256) {
  const std::string message =
      message_of<blume::invalid_argument>([] { blume::split_block_bloom_filter<>::with_geometry(1000, 8); });
  EXPECT_TRUE(mentions(message, "1000"));
  EXPECT_TRUE(mentions(message, "256"));
}

TEST(FilterGeometry, SplitBlockHashCountMustBeEight) {
  for (std::uint32_t k : {1u, 7u, 9u, 16u}) {
    const std::string message =
        message_of<blume::invalid_argument>([&] { blume::split_block_bloom_filter<>::with_geometry(2560, k); });
    EXPECT_TRUE(mentions_number(message, k)) << k;
  }
}

TEST(FilterGeometry, PartitionedBitCountMustBeAMultipleOfTheHashCount) {
  const std::string message =
      message_of<blume::invalid_argument>([] { blume::partitioned_bloom_filter<>::with_geometry(1000, 3); });
  EXPECT_TRUE(mentions(message, "1000"));
  EXPECT_TRUE(mentions_number(message, 3));
}

TEST(FilterGeometry, ClassicFilterTakesAnyBitCount) {
  for (std::uint64_t bits : {1u, 63u, 64u, 65u, 1001u}) {
    auto f = blume::bloom_filter<>::with_geometry(bits, 3);
    EXPECT_EQ(f.bits(), bits);
    f.insert(std::string("k"));
    EXPECT_TRUE(f.contains(std::string("k")));
    EXPECT_LE(f.set_bits(), std::min<std::uint64_t>(bits, 3));
  }
}

// ---- merge and intersect -------------------------------------------------------------------------------

template <class F>
F filter_of(std::uint64_t first, std::uint64_t count, std::uint64_t seed = 3) {
  F f(10'000, 0.01, seed);
  for (std::uint64_t i = first; i < first + count; ++i) f.insert(present_key(i));
  return f;
}

TYPED_TEST(FilterBehaviour, NoFalseNegativesAfterMerge) {
  auto a = filter_of<TypeParam>(0, 4000);
  const auto b = filter_of<TypeParam>(3000, 4000);
  a.merge(b);
  EXPECT_EQ(a.count_contained(blume_test::present_keys(7000)), 7000u);
}

TYPED_TEST(FilterBehaviour, MergeEqualsAFilterBuiltFromBothSets) {
  auto a = filter_of<TypeParam>(0, 4000);
  a.merge(filter_of<TypeParam>(3000, 4000));
  auto both = filter_of<TypeParam>(0, 4000);  // every key of each set inserted (the overlap twice)
  for (std::uint64_t i = 3000; i < 7000; ++i) both.insert(present_key(i));
  EXPECT_TRUE(a == both);
}

TYPED_TEST(FilterBehaviour, MergeAddsTheInsertedCounts) {
  auto a = filter_of<TypeParam>(0, 4000);
  a.merge(filter_of<TypeParam>(3000, 2500));
  EXPECT_EQ(a.inserted(), 6500u);
}

// Intersection, for the bit-array kinds that offer it (a counter layout needs an intersection rule of its
// own: vi-counting has none).
template <class F>
class Intersection : public ::testing::Test {};
template <class F>
struct intersectable : std::bool_constant<blume::bit_array_filter<F> && blume::can_intersect<F>> {};
using intersectable_types = blume_test::kinds_where<intersectable, blume::filter_types>::type;
TYPED_TEST_SUITE(Intersection, intersectable_types, blume_test::kind_names);

TYPED_TEST(Intersection, NoFalseNegativesForCommonKeysAfterIntersect) {
  auto a = filter_of<TypeParam>(0, 4000);
  a.intersect(filter_of<TypeParam>(3000, 4000));
  EXPECT_EQ(a.count_contained(blume_test::present_keys(1000, 3000)), 1000u);
}

TYPED_TEST(Intersection, IntersectAnswersTrueOnlyWhereBothFiltersDid) {
  const auto a = filter_of<TypeParam>(0, 4000);
  const auto b = filter_of<TypeParam>(3000, 4000);
  auto both = a;
  both.intersect(b);
  std::uint64_t dropped = 0;
  for (std::uint64_t i = 0; i < 20'000; ++i) {
    const std::uint64_t k = i % 2 ? present_key(i / 2) : absent_key(i);
    ASSERT_EQ(both.contains(k), a.contains(k) && b.contains(k)) << i;
    dropped += a.contains(k) && !both.contains(k);
  }
  EXPECT_GT(dropped, 0u);
}

TYPED_TEST(Intersection, IntersectKeepsTheSmallerInsertedCount) {
  auto a = filter_of<TypeParam>(0, 4000);
  a.intersect(filter_of<TypeParam>(3000, 2500));
  EXPECT_EQ(a.inserted(), 2500u);
}

TYPED_TEST(FilterBehaviour, MergeRejectsDifferentBitCountsNamingThem) {
  using G = small_geometry<TypeParam>;
  auto a = TypeParam::with_geometry(G::bits, G::hashes);
  a.insert(1);
  const auto before = a;
  const auto b = TypeParam::with_geometry(G::other_bits, G::hashes);
  const std::string message = message_of<blume::incompatible_filters>([&] { a.merge(b); });
  EXPECT_TRUE(mentions(message, "bit count"));
  EXPECT_TRUE(mentions(message, std::to_string(G::bits)));
  EXPECT_TRUE(mentions(message, std::to_string(G::other_bits)));
  EXPECT_TRUE(a == before);
}

template <class F>
class FreeHashCount : public ::testing::Test {};
using free_hash_count_types =
    ::testing::Types<blume::bloom_filter<>, blume::partitioned_bloom_filter<>, blume::blocked_bloom_filter<>>;
TYPED_TEST_SUITE(FreeHashCount, free_hash_count_types, blume_test::kind_names);

TYPED_TEST(FreeHashCount, MergeRejectsDifferentHashCountsNamingThem) {
  using G = small_geometry<TypeParam>;
  auto a = TypeParam::with_geometry(G::bits, G::hashes);
  const auto b = TypeParam::with_geometry(G::bits, G::other_hashes);
  const std::string message = message_of<blume::incompatible_filters>([&] { a.merge(b); });
  EXPECT_TRUE(mentions(message, "hash count"));
  EXPECT_TRUE(mentions_number(message, G::hashes));
  EXPECT_TRUE(mentions_number(message, G::other_hashes));
}

TYPED_TEST(FreeHashCount, IntersectRejectsDifferentHashCounts) {
  using G = small_geometry<TypeParam>;
  auto a = TypeParam::with_geometry(G::bits, G::hashes);
  EXPECT_THROW(a.intersect(TypeParam::with_geometry(G::bits, G::other_hashes)), blume::incompatible_filters);
}

TYPED_TEST(FilterBehaviour, MergeRejectsDifferentSeedsNamingThem) {
  auto a = small_filter<TypeParam>(11);
  const auto b = small_filter<TypeParam>(12);
  const std::string message = message_of<blume::incompatible_filters>([&] { a.merge(b); });
  EXPECT_TRUE(mentions(message, "seed"));
  EXPECT_TRUE(mentions_number(message, 11));
  EXPECT_TRUE(mentions_number(message, 12));
}

TYPED_TEST(Intersection, IntersectRejectsIncompatibleFilters) {
  using G = small_geometry<TypeParam>;
  auto a = small_filter<TypeParam>(11);
  EXPECT_TRUE(mentions(message_of<blume::incompatible_filters>([&] { a.intersect(small_filter<TypeParam>(12)); }),
                       "seed"));
  EXPECT_TRUE(mentions(message_of<blume::incompatible_filters>([&] {
                         a.intersect(TypeParam::with_geometry(G::other_bits, G::hashes, 11));
                       }),
                       "bit count"));
}

TYPED_TEST(FilterBehaviour, IncompatibleFiltersErrorIsABlumeError) {
  auto a = small_filter<TypeParam>(11);
  EXPECT_THROW(a.merge(small_filter<TypeParam>(12)), blume::error);
}

}  // namespace
