// SPDX-License-Identifier: Apache-2.0
// The Golomb-coded set: no false negatives, the designed rate 2^-P, close to P + 1.54 bits per key with the
// Rice code (P + 1.47 with the Golomb code), and refusals of impossible parameters and damaged files.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <iterator>
#include <ranges>
#include <vector>

#include "blume/io/format.hpp"
#include "blume/kinds/golomb_coded_set.hpp"
#include "test_support.hpp"

namespace {

using blume_test::absent_keys;
using blume_test::present_keys;
using gcs = blume::golomb_coded_set<>;

TEST(GolombCodedSet, NoFalseNegativesAndTheDesignRate) {
  const auto keys = present_keys(blume_test::scaled(1'000'000));
  for (std::uint32_t p : {6u, 8u, 12u}) {
    const gcs s = gcs::build(keys, p, 1, /*bucket_keys=*/128);
    ASSERT_EQ(s.count_contained(keys), keys.size()) << p;
    const auto probes = absent_keys(blume_test::scaled(400'000));
    const double hits = static_cast<double>(s.count_contained(probes));
    const double rate = s.predicted_fpr();
    // Values that collide are stored once, so the rate is a little under 2^-P (by about 2^-P / 2).
    EXPECT_NEAR(rate, std::ldexp(1.0, -static_cast<int>(p)), 0.03 * std::ldexp(1.0, -static_cast<int>(p)));
    EXPECT_NEAR(hits, probes.size() * rate, 5 * std::sqrt(probes.size() * rate) + 1) << p;
  }
}

// Every code length the decoder meets: P = 1 (M = 1, unary codes only), short codes, and P up to 32,
// whose 33-34-bit codes often do not fit the lookup's buffer and go through the general decoder. The
// rate shows that absent keys are decoded right too, not only present ones.
TEST(GolombCodedSet, EveryRateBitsValueDecodes) {
  const auto keys = present_keys(blume_test::scaled(20'000));
  const auto probes = absent_keys(blume_test::scaled(100'000));
  for (const blume::gcs_code code : {blume::gcs_code::rice, blume::gcs_code::golomb}) {
    for (std::uint32_t p = 1; p <= 32; ++p) {
      const gcs s = gcs::build(keys, p, 7, /*bucket_keys=*/p % 2 == 0 ? 64 : 256, code);
      ASSERT_EQ(s.code(), code);
      ASSERT_EQ(s.count_contained(keys), keys.size()) << "P = " << p;
      std::size_t one_by_one = 0;
      for (std::size_t i = 0; i < keys.size(); i += 7) one_by_one += s.contains(keys[i]);
      ASSERT_EQ(one_by_one, (keys.size() + 6) / 7) << "P = " << p;
      const double hits = static_cast<double>(s.count_contained(probes));
      const double expected = probes.size() * s.predicted_fpr();
      EXPECT_NEAR(hits, expected, 5 * std::sqrt(expected) + 1) << "P = " << p;
    }
  }
}

// The two codes store the same values: every key, present or absent, gets the same answer from both, one
// by one and in bulk, whatever the bucket size.
TEST(GolombCodedSet, RiceAndGolombCodedSetsAnswerAlike) {
  const auto keys = present_keys(blume_test::scaled(30'000));
  std::vector<std::uint64_t> probes = absent_keys(blume_test::scaled(60'000));
  probes.insert(probes.end(), keys.begin(), keys.begin() + static_cast<std::ptrdiff_t>(keys.size() / 2));
  for (const std::uint32_t p : {1u, 2u, 5u, 8u, 13u, 20u, 32u}) {
    for (const std::uint32_t bucket_keys : {1u, 100u, 128u, 1000u}) {
      const gcs rice = gcs::build(keys, p, 3, bucket_keys, blume::gcs_code::rice);
      const gcs golomb = gcs::build(keys, p, 3, bucket_keys, blume::gcs_code::golomb);
      ASSERT_EQ(rice.stored_values(), golomb.stored_values());
      std::vector<char> a, b;
      rice.contains_many(probes, std::back_inserter(a));
      golomb.contains_many(probes, std::back_inserter(b));
      ASSERT_EQ(a, b) << "P = " << p << ", " << bucket_keys << " keys per bucket";
      for (std::size_t i = 0; i < probes.size(); i += 97)
        ASSERT_EQ(rice.contains(probes[i]), a[i] != 0) << "P = " << p << ", probe " << i;
    }
  }
}

// The Rice code at P + 1.54 bits a gap (9.54 at 2^-8, a little less with the collisions), the Golomb code
// within a few hundredths of a bit of the entropy bound, log2(e·256) = 9.44, and the default bucket index
// within a fifth of a bit more.
TEST(GolombCodedSet, AtOneIn256ItTakesAtMostNinePointSevenBitsPerKeyWithItsIndex) {
  const auto keys = present_keys(blume_test::scaled(2'000'000));  // bits per key do not depend on the count
  const gcs s = gcs::build(keys, 8);
  EXPECT_EQ(s.code(), blume::gcs_code::rice);
  EXPECT_LE(s.index_bits_per_key(), 0.15);
  EXPECT_LE(s.bits_per_key(), 9.7);
  EXPECT_GE(s.bits_per_key() - s.index_bits_per_key(), 9.45);
  EXPECT_LE(s.bits_per_key() - s.index_bits_per_key(), 9.56);
  for (std::size_t i = 0; i < keys.size(); i += 4001) ASSERT_TRUE(s.contains(keys[i])) << i;
  const gcs golomb =
      gcs::build(keys, 8, gcs::hasher_type::default_seed, gcs::default_bucket_keys, blume::gcs_code::golomb);
  EXPECT_GE(golomb.bits_per_key() - golomb.index_bits_per_key(), 9.3);
  EXPECT_LE(golomb.bits_per_key() - golomb.index_bits_per_key(), 9.5);
  EXPECT_LT(golomb.bits_per_key(), s.bits_per_key());
}

// The bulk calls sort the keys by value and decode each bucket once: the same answers as one by one, in
// the keys' order, for batches below and above the size where sorting starts, and for bucket sizes where
// most buckets get several keys or none.
TEST(GolombCodedSet, BulkLookupsAnswerAsOneByOne) {
  const auto present = present_keys(blume_test::scaled(50'000));
  std::vector<std::uint64_t> mixed;
  const auto absent = absent_keys(blume_test::scaled(50'000));
  for (std::size_t i = 0; i < present.size(); ++i) {
    mixed.push_back(absent[i]);
    if (i % 3 == 0) mixed.push_back(present[present.size() - 1 - i]);
  }
  for (std::uint32_t bucket_keys : {1u, 16u, 96u, 4096u}) {
    const gcs s = gcs::build(present, 7, 5, bucket_keys);
    for (std::size_t batch : {std::size_t{1}, std::size_t{63}, std::size_t{64}, std::size_t{1000}, mixed.size()}) {
      const std::vector<std::uint64_t> keys(mixed.begin(), mixed.begin() + static_cast<std::ptrdiff_t>(batch));
      std::vector<char> bulk;
      const std::size_t hits = s.contains_many(keys, std::back_inserter(bulk));
      ASSERT_EQ(bulk.size(), keys.size());
      std::size_t one_by_one = 0;
      for (std::size_t i = 0; i < keys.size(); ++i) {
        const bool hit = s.contains(keys[i]);
        one_by_one += hit;
        ASSERT_EQ(bulk[i] != 0, hit) << bucket_keys << " " << batch << " " << i;
      }
      EXPECT_EQ(hits, one_by_one);
      EXPECT_EQ(s.count_contained(keys), one_by_one);
    }
    EXPECT_EQ(s.count_contained(present), present.size());
  }
}

// Batches of no keys, of one key many times over, of digests, and on an empty set.
TEST(GolombCodedSet, BulkLookupsOfEmptyRepeatedAndHashedBatches) {
  const auto keys = present_keys(20'000);
  const gcs s = gcs::build(keys, 9);
  std::vector<char> out;
  EXPECT_EQ(s.contains_many(std::vector<std::uint64_t>{}, std::back_inserter(out)), 0u);
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(s.count_contained(std::vector<std::uint64_t>{}), 0u);
  std::vector<std::uint64_t> repeated(500, keys[17]);
  repeated.insert(repeated.end(), 500, absent_keys(1)[0]);
  EXPECT_EQ(s.contains_many(repeated, std::back_inserter(out)), 500u + s.contains(absent_keys(1)[0]) * 500u);
  ASSERT_EQ(out.size(), repeated.size());
  for (std::size_t i = 0; i < 500; ++i) ASSERT_TRUE(out[i]) << i;
  std::vector<blume::digest> digests;
  for (std::size_t i = 0; i < 300; ++i) digests.push_back(s.hash(keys[i * 7]));
  EXPECT_EQ(s.count_contained(digests), digests.size());
  const gcs empty = gcs::build(std::vector<std::uint64_t>{}, 9);
  out.clear();
  EXPECT_EQ(empty.contains_many(keys, std::back_inserter(out)), 0u);
  EXPECT_EQ(out, std::vector<char>(keys.size(), 0));
}

// A bulk call made while another runs on the same thread (from the keys' range, or from the output) answers
// with buffers of its own, leaving the outer call's intact.
TEST(GolombCodedSet, BulkLookupsInsideBulkLookupsKeepTheirOwnBuffers) {
  const auto keys = present_keys(20'000);
  const auto absent = absent_keys(20'000);
  const gcs outer = gcs::build(keys, 9, 1);
  const gcs inner = gcs::build(absent, 9, 2);
  std::vector<std::uint64_t> probes(keys.begin(), keys.begin() + 3000);
  probes.insert(probes.end(), absent.begin(), absent.begin() + 3000);
  const std::vector<std::uint64_t> inner_batch(absent.begin(), absent.begin() + 200);
  std::size_t inner_hits = 0;
  // The keys' range: reading a key makes a bulk lookup in another set (a hand-written input range, as
  // clang 14 cannot instantiate std::views over libstdc++ 12).
  struct nesting_keys {
    const std::vector<std::uint64_t>* keys;
    const gcs* set;
    const std::vector<std::uint64_t>* batch;
    std::size_t* hits;
    struct iterator {
      using value_type = std::uint64_t;
      using difference_type = std::ptrdiff_t;
      const nesting_keys* range = nullptr;
      std::size_t at = 0;
      std::uint64_t operator*() const {
        *range->hits += range->set->count_contained(*range->batch);
        return (*range->keys)[at];
      }
      iterator& operator++() {
        ++at;
        return *this;
      }
      void operator++(int) { ++at; }
      bool operator==(const iterator& other) const { return at == other.at; }
    };
    iterator begin() const { return {this, 0}; }
    iterator end() const { return {this, keys->size()}; }
  };
  static_assert(std::ranges::input_range<nesting_keys>);
  const nesting_keys counting{&probes, &inner, &inner_batch, &inner_hits};
  std::vector<char> out;
  const std::size_t hits = outer.contains_many(counting, std::back_inserter(out));
  ASSERT_EQ(out.size(), probes.size());
  EXPECT_EQ(inner_hits, probes.size() * inner_batch.size());
  std::size_t expected = 0;
  for (std::size_t i = 0; i < probes.size(); ++i) {
    ASSERT_EQ(out[i] != 0, outer.contains(probes[i])) << i;
    expected += out[i] != 0;
  }
  EXPECT_EQ(hits, expected);
  // From the output: each answer written triggers a bulk lookup of its own.
  struct nesting_output {
    const gcs* set;
    const std::vector<std::uint64_t>* batch;
    std::vector<char>* answers;
    std::size_t* inner_hits;
    nesting_output& operator*() { return *this; }
    nesting_output& operator++() { return *this; }
    nesting_output operator++(int) { return *this; }
    nesting_output& operator=(bool a) {
      answers->push_back(a);
      *inner_hits += set->count_contained(*batch);
      return *this;
    }
    using difference_type = std::ptrdiff_t;
  };
  std::vector<char> again;
  inner_hits = 0;
  outer.contains_many(probes, nesting_output{&inner, &inner_batch, &again, &inner_hits});
  EXPECT_EQ(again, out);
  EXPECT_EQ(inner_hits, probes.size() * inner_batch.size());
}

TEST(GolombCodedSet, ABudgetFarBeyondThirtyTwoBitsAKeyPlansTheLargestP) {
  const blume::filter_plan p = blume::plan_for_bits(100, blume::max_filter_bits, gcs::kind);
  EXPECT_EQ(p.hashes, 32u);
  EXPECT_LE(p.bits, blume::max_filter_bits);
}

TEST(GolombCodedSet, EmptyAndDuplicateKeySets) {
  const gcs empty = gcs::build(std::vector<std::uint64_t>{}, 8);
  EXPECT_FALSE(empty.contains(std::uint64_t{1}));
  std::vector<std::uint64_t> keys = present_keys(10'000);
  keys.insert(keys.end(), keys.begin(), keys.begin() + 5'000);
  const gcs s = gcs::build(keys, 10, 3, 64);
  EXPECT_EQ(s.count_contained(present_keys(10'000)), 10'000u);
  EXPECT_LE(s.stored_values(), 10'000u);
}

TEST(GolombCodedSet, BadParametersAreRefused) {
  const auto keys = present_keys(10);
  EXPECT_THROW(gcs::build(keys, 0), blume::invalid_argument);
  EXPECT_THROW(gcs::build(keys, 33), blume::invalid_argument);
  EXPECT_THROW(gcs::build(keys, 8, 1, 0), blume::invalid_argument);
}

}  // namespace

namespace {

TEST(GolombCodedSetFormat, RoundTripsAndRefusesDamage) {
  const auto keys = blume_test::present_keys(30'000);
  const gcs s = gcs::build(keys, 8, 11, 256);
  const auto bytes = blume::to_bytes(s);
  const gcs back = blume::from_bytes<gcs>(bytes);
  EXPECT_TRUE(back == s);
  EXPECT_EQ(back.count_contained(keys), keys.size());
  for (std::size_t cut = 0; cut < bytes.size(); cut += 211)
    EXPECT_THROW(blume::from_bytes<gcs>(std::span(bytes).first(cut)), blume::format_error) << cut;
  for (std::size_t at = 0; at < blume::header_size; ++at) {
    auto bad = bytes;
    bad[at] ^= std::byte{0x04};
    EXPECT_THROW(blume::from_bytes<gcs>(bad), blume::format_error) << at;
  }
  const gcs empty = gcs::build(std::vector<std::uint64_t>{}, 8);
  EXPECT_FALSE(blume::from_bytes<gcs>(blume::to_bytes(empty)).contains(std::uint64_t{1}));
}

// Sets of the Golomb code are files whose header says code 0 (the layout before the Rice code): they load
// as they are, answer alike, and write the same bytes back. An unknown code is refused.
TEST(GolombCodedSetFormat, GolombCodedFilesLoadAsTheyAreAndUnknownCodesAreRefused) {
  const auto keys = blume_test::present_keys(20'000);
  const gcs golomb = gcs::build(keys, 10, 5, 96, blume::gcs_code::golomb);
  const auto bytes = blume::to_bytes(golomb);
  EXPECT_EQ(blume::decode_header(bytes).extra[3], 0u);
  const gcs back = blume::from_bytes<gcs>(bytes);
  EXPECT_EQ(back.code(), blume::gcs_code::golomb);
  EXPECT_EQ(back.golomb_parameter(), golomb.golomb_parameter());
  EXPECT_TRUE(back == golomb);
  EXPECT_EQ(blume::to_bytes(back), bytes);
  EXPECT_EQ(back.count_contained(keys), keys.size());
  EXPECT_EQ(blume::decode_header(blume::to_bytes(gcs::build(keys, 10))).extra[3], 1u);
  blume::file_header h = blume::decode_header(bytes);
  h.extra[3] = 2;
  const auto header = blume::encode_header(h);
  auto bad = bytes;
  std::copy(header.begin(), header.end(), bad.begin());
  EXPECT_THROW(blume::from_bytes<gcs>(bad), blume::format_error);
}

// A stream whose bits were replaced before the checksum (long runs of ones, codes that overrun their
// bucket) is answered without reading outside it, by the Rice path's long-code fallback and bounds.
TEST(GolombCodedSetFormat, ForgedStreamsNeverReadOutsideIt) {
  for (const blume::gcs_code code : {blume::gcs_code::rice, blume::gcs_code::golomb}) {
    for (const std::uint32_t p : {2u, 8u, 32u}) {
      const gcs s = gcs::build(blume_test::present_keys(5'000), p, 3, 64, code);
      const auto bytes = blume::to_bytes(s);
      blume::file_header h = blume::decode_header(bytes);
      const std::size_t words = h.primary / 64;
      for (const std::uint64_t pattern :
           std::initializer_list<std::uint64_t>{~std::uint64_t{0}, 0, 0x00ff00ff00ff00ff, 0x8000000000000001}) {
        auto bad = bytes;
        for (std::size_t w = 0; w + 1 < words; ++w)  // the zero end word stays, or the file is refused
          std::memcpy(bad.data() + blume::header_size + w * 8, &pattern, 8);
        h.payload_checksum = XXH64(bad.data() + blume::header_size, bad.size() - blume::header_size, 0);
        const auto header = blume::encode_header(h);
        std::copy(header.begin(), header.end(), bad.begin());
        const gcs forged = blume::from_bytes<gcs>(bad);
        const auto probes = blume_test::absent_keys(3'000);
        std::size_t hits = 0;
        for (const std::uint64_t k : probes) hits += forged.contains(k);
        std::vector<char> bulk;
        EXPECT_EQ(forged.contains_many(probes, std::back_inserter(bulk)), forged.count_contained(probes));
        ASSERT_EQ(bulk.size(), probes.size());
        for (std::size_t i = 0; i < probes.size(); i += 101)
          EXPECT_EQ(bulk[i] != 0, forged.contains(probes[i])) << "P = " << p << ", probe " << i;
        EXPECT_LE(hits, probes.size());
      }
    }
  }
}

// A range beyond 2^58 leaves fewer than 2^6 index bits below a value: the bulk calls take the keys in chunks.
// The set is forged (2^26 keys given at 2^-32 with no value stored), so that it costs a few bytes.
TEST(GolombCodedSetFormat, BulkLookupsOfRangesNearTwoToTheSixtyFourTakeTheKeysInChunks) {
  const gcs small = gcs::build(blume_test::present_keys(10), 32, 3, 1u << 20);
  blume::file_header h = blume::decode_header(blume::to_bytes(small));
  const std::uint64_t n = std::uint64_t{1} << 26;  // values in [0, 2^58), 64 buckets of 2^52
  h.primary = 64;
  h.extra = {n, 0, 17, 1, 0, 0};
  h.inserted = n;
  std::vector<std::byte> payload(8 + (65 + 3) / 4 * 8 + 2 * 8, std::byte{0});
  h.payload_size = payload.size();
  h.payload_checksum = XXH64(payload.data(), payload.size(), 0);
  const auto header = blume::encode_header(h);
  std::vector<std::byte> bytes(header.begin(), header.end());
  bytes.insert(bytes.end(), payload.begin(), payload.end());
  const gcs forged = blume::from_bytes<gcs>(bytes);
  const auto probes = blume_test::absent_keys(1'000);
  std::vector<char> bulk;
  EXPECT_EQ(forged.contains_many(probes, std::back_inserter(bulk)), 0u);
  EXPECT_EQ(bulk, std::vector<char>(probes.size(), 0));
  EXPECT_EQ(forged.count_contained(probes), 0u);
}

TEST(GolombCodedSetFormat, ForgedOffsetsNeverReadOutsideTheStream) {
  // A header and payload that agree with each other and their checksums, but whose bucket offsets were
  // tampered with before the checksum was computed: refused, or answered without reading out of bounds.
  const gcs s = gcs::build(blume_test::present_keys(5'000), 6, 3, 64);
  auto bytes = blume::to_bytes(s);
  blume::file_header h = blume::decode_header(bytes);
  const std::size_t offsets_at = blume::header_size + h.primary / 8;
  for (std::size_t i = 0; i < 40; ++i) {
    auto bad = bytes;
    bad[offsets_at + i * 4 + 1] ^= std::byte{0x7f};
    h.payload_checksum = XXH64(bad.data() + blume::header_size, bad.size() - blume::header_size, 0);
    const auto header = blume::encode_header(h);
    std::copy(header.begin(), header.end(), bad.begin());
    try {
      const gcs forged = blume::from_bytes<gcs>(bad);
      forged.count_contained(blume_test::absent_keys(2'000));
    } catch (const blume::format_error&) {
    }
  }
}

}  // namespace
