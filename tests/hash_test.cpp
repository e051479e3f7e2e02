// SPDX-License-Identifier: Apache-2.0
// Keys and digests: what counts as the same key, how each kind of key is hashed, and range reduction.
#include <array>
#include <cstring>
#include <set>
#include <string>
#include <string_view>

#include "test_support.hpp"

namespace {

using blume::digest;
using blume::hash_key;
using blume::xxh3_hasher;

enum class colour : std::uint8_t { red = 1, green = 5, blue = 200 };
enum plain_enum { plain_five = 5 };
enum class signed_enum : std::int16_t { minus_one = -1 };

}  // namespace

static_assert(blume::key<std::string>);
static_assert(blume::key<std::string_view>);
static_assert(blume::key<const char*>);
static_assert(blume::key<int>);
static_assert(blume::key<std::uint8_t>);
static_assert(blume::key<colour>);
static_assert(blume::key<app::user>);
static_assert(blume::key<geo::point>);
static_assert(!blume::key<double>);
static_assert(!blume::key<std::vector<int>>);

namespace {

const xxh3_hasher hasher_under_test(12345);

digest bytes_digest(const void* data, std::size_t len) { return hasher_under_test(data, len); }

TEST(KeyHashing, StringLikeKeysHashTheirBytes) {
  const digest expected = bytes_digest("apple", 5);
  EXPECT_EQ(hash_key(hasher_under_test, std::string("apple")), expected);
  EXPECT_EQ(hash_key(hasher_under_test, std::string_view("apple")), expected);
  const char* pointer = "apple";
  EXPECT_EQ(hash_key(hasher_under_test, pointer), expected);
  EXPECT_EQ(hash_key(hasher_under_test, "apple"), expected);
}

TEST(KeyHashing, EmbeddedNulBytesArePartOfAStringKey) {
  const std::string with_nul("a\0b", 3);
  EXPECT_EQ(hash_key(hasher_under_test, with_nul), bytes_digest("a\0b", 3));
  EXPECT_NE(hash_key(hasher_under_test, with_nul), hash_key(hasher_under_test, std::string("a")));
}

TEST(KeyHashing, EmptyStringIsAValidKey) {
  EXPECT_EQ(hash_key(hasher_under_test, std::string()), bytes_digest("", 0));
  EXPECT_NE(hash_key(hasher_under_test, std::string()), hash_key(hasher_under_test, std::string(" ")));
}

TEST(KeyHashing, IntegersAreHashedAsTheirValueInEightLittleEndianBytes) {
  const std::uint64_t value = 0x0102030405060708ULL;
  const unsigned char little_endian[8] = {0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01};
  EXPECT_EQ(hash_key(hasher_under_test, value), bytes_digest(little_endian, 8));
}

TEST(KeyHashing, EqualValuesOfEveryIntegerTypeAreTheSameKey) {
  const digest five = hash_key(hasher_under_test, 5);
  EXPECT_EQ(hash_key(hasher_under_test, 5u), five);
  EXPECT_EQ(hash_key(hasher_under_test, 5ll), five);
  EXPECT_EQ(hash_key(hasher_under_test, 5ull), five);
  EXPECT_EQ(hash_key(hasher_under_test, 5l), five);
  EXPECT_EQ(hash_key(hasher_under_test, 5ul), five);
  EXPECT_EQ(hash_key(hasher_under_test, static_cast<std::uint8_t>(5)), five);
  EXPECT_EQ(hash_key(hasher_under_test, static_cast<std::int8_t>(5)), five);
  EXPECT_EQ(hash_key(hasher_under_test, static_cast<short>(5)), five);
  EXPECT_EQ(hash_key(hasher_under_test, static_cast<unsigned short>(5)), five);
  EXPECT_EQ(hash_key(hasher_under_test, static_cast<char>(5)), five);
  EXPECT_EQ(hash_key(hasher_under_test, static_cast<signed char>(5)), five);
  EXPECT_EQ(hash_key(hasher_under_test, static_cast<unsigned char>(5)), five);
  EXPECT_EQ(hash_key(hasher_under_test, static_cast<wchar_t>(5)), five);
  EXPECT_EQ(hash_key(hasher_under_test, static_cast<char8_t>(5)), five);
  EXPECT_EQ(hash_key(hasher_under_test, static_cast<char16_t>(5)), five);
  EXPECT_EQ(hash_key(hasher_under_test, static_cast<char32_t>(5)), five);
}

TEST(KeyHashing, SignedIntegersAreSignExtended) {
  const digest all_ones = hash_key(hasher_under_test, std::uint64_t{0xffffffffffffffffULL});
  EXPECT_EQ(hash_key(hasher_under_test, -1), all_ones);
  EXPECT_EQ(hash_key(hasher_under_test, -1ll), all_ones);
  EXPECT_EQ(hash_key(hasher_under_test, static_cast<std::int8_t>(-1)), all_ones);
  EXPECT_EQ(hash_key(hasher_under_test, static_cast<std::int16_t>(-1)), all_ones);
  EXPECT_EQ(hash_key(hasher_under_test, static_cast<std::int32_t>(-1)), all_ones);
}

TEST(KeyHashing, UnsignedIntegersAreZeroExtended) {
  EXPECT_EQ(hash_key(hasher_under_test, static_cast<std::uint8_t>(255)), hash_key(hasher_under_test, 255ull));
  EXPECT_NE(hash_key(hasher_under_test, static_cast<std::uint8_t>(255)),
            hash_key(hasher_under_test, static_cast<std::int8_t>(-1)));
  EXPECT_EQ(hash_key(hasher_under_test, 0xffffffffu), hash_key(hasher_under_test, 0xffffffffull));
}

TEST(KeyHashing, BoolIsTheIntegerZeroOrOne) {
  EXPECT_EQ(hash_key(hasher_under_test, true), hash_key(hasher_under_test, 1));
  EXPECT_EQ(hash_key(hasher_under_test, false), hash_key(hasher_under_test, 0));
}

TEST(KeyHashing, IntegersAreHashedNotUsedAsIdentity) {
  const digest zero = hash_key(hasher_under_test, 0);
  const digest one = hash_key(hasher_under_test, 1);
  EXPECT_NE(zero.low, one.low);
  EXPECT_NE(zero.high, one.high);
  EXPECT_NE(zero, (digest{0, 0}));
  EXPECT_NE(one.low, 1u);
  EXPECT_NE(one.high, 1u);
}

TEST(KeyHashing, EnumsAreTheKeyOfTheirUnderlyingValue) {
  EXPECT_EQ(hash_key(hasher_under_test, colour::green), hash_key(hasher_under_test, 5));
  EXPECT_EQ(hash_key(hasher_under_test, colour::blue), hash_key(hasher_under_test, 200));
  EXPECT_EQ(hash_key(hasher_under_test, plain_five), hash_key(hasher_under_test, 5));
  EXPECT_EQ(hash_key(hasher_under_test, signed_enum::minus_one), hash_key(hasher_under_test, -1));
  EXPECT_NE(hash_key(hasher_under_test, colour::red), hash_key(hasher_under_test, colour::green));
}

TEST(KeyHashing, KeyBytesCustomisationHashesTheReturnedBytes) {
  const app::user alice{"alice", 3};
  EXPECT_EQ(hash_key(hasher_under_test, alice), hash_key(hasher_under_test, std::string_view("alice")));
  EXPECT_EQ(hash_key(hasher_under_test, alice), hash_key(hasher_under_test, app::user{"alice", 99}));
  EXPECT_NE(hash_key(hasher_under_test, alice), hash_key(hasher_under_test, app::user{"bob", 3}));
}

TEST(KeyHashing, KeyHashSpecialisationDecidesTheDigest) {
  const geo::point p{3, -4};
  const std::int32_t xy[2] = {3, -4};
  EXPECT_EQ(hash_key(hasher_under_test, p), bytes_digest(xy, sizeof xy));
  EXPECT_NE(hash_key(hasher_under_test, p), hash_key(hasher_under_test, geo::point{-4, 3}));
}

TEST(KeyHashing, TheSameSeedAlwaysGivesTheSameDigest) {
  const xxh3_hasher a(77), b(77);
  EXPECT_EQ(hash_key(a, std::string("stable")), hash_key(b, std::string("stable")));
  EXPECT_EQ(hash_key(a, 123456789), hash_key(b, 123456789));
}

TEST(KeyHashing, DifferentSeedsGiveUnrelatedDigests) {
  const digest a = hash_key(xxh3_hasher(1), std::string("key"));
  const digest b = hash_key(xxh3_hasher(2), std::string("key"));
  EXPECT_NE(a.low, b.low);
  EXPECT_NE(a.high, b.high);
}

TEST(KeyHashing, DigestIsSeededXxh3With128Bits) {
  const XXH128_hash_t reference = XXH3_128bits_withSeed("blume", 5, 42);
  const digest d = xxh3_hasher(42)("blume", 5);
  EXPECT_EQ(d.low, reference.low64);
  EXPECT_EQ(d.high, reference.high64);
}

// The 8-byte path is written out for speed; XXH3 itself is the definition (docs/format.md, hash_id 4).
TEST(Xxh3_64Hashing, EveryKeyHashesAsXxh3_64WithTheSeed) {
  const std::uint64_t seeds[] = {0,
                                 1,
                                 blume::xxh3_64_hasher::default_seed,
                                 0x00000000ffffffffULL,
                                 0xffffffff00000000ULL,
                                 0x8000000000000001ULL,
                                 ~std::uint64_t{0},
                                 0x0123456789abcdefULL};
  for (const std::uint64_t seed : seeds) {
    const blume::xxh3_64_hasher h(seed);
    EXPECT_EQ(h.seed(), seed);
    for (std::uint64_t i = 0; i < 20'000; ++i) {
      // Small, sequential, structured and random 8-byte values.
      for (const std::uint64_t key :
           {i, i << 32, ~i, blume_test::splitmix64(i), i * std::uint64_t{0x0101010101010101}}) {
        const std::uint64_t reference = XXH3_64bits_withSeed(&key, 8, seed);
        ASSERT_EQ(h.of_8_bytes(key), reference) << "seed " << seed << " key " << key;
        ASSERT_EQ(hash_key(h, key), (digest{reference, reference}));
      }
    }
    const std::string text = "an address that is longer than eight bytes@example.com";
    for (std::size_t len = 0; len <= text.size(); ++len) {
      const std::uint64_t reference = XXH3_64bits_withSeed(text.data(), len, seed);
      ASSERT_EQ(h(text.data(), len), (digest{reference, reference})) << "length " << len;
    }
  }
}

TEST(Xxh3_64Hashing, TheRuleIsTheKeysLengthNotItsType) {
  // An integer is its 8 little-endian bytes, so the integer and the 8-byte string are one key, as in every
  // surface (Python's int and bytes).
  const blume::xxh3_64_hasher h;
  const std::uint64_t v = 0x6867666564636261ULL;  // "abcdefgh"
  EXPECT_EQ(hash_key(h, v), hash_key(h, std::string_view("abcdefgh")));
  EXPECT_EQ(hash_key(h, 5), hash_key(h, 5ull));
  EXPECT_EQ(hash_key(h, -1), hash_key(h, ~std::uint64_t{0}));
  EXPECT_NE(hash_key(h, 5), hash_key(blume::xxh3_64_hasher(6), 5));
}

TEST(PreparedHashes, BecomeDigestsWithoutHashing) {
  EXPECT_EQ(blume::xxh3_64_hasher::from_hash(7), (digest{7, 7}));
  // XXH3-128's kinds probe with both halves: the second is a bijective mix of the hash, not the hash again.
  const digest d = xxh3_hasher::from_hash(7);
  EXPECT_EQ(d.low, 7u);
  EXPECT_NE(d.high, 7u);
  std::set<std::uint64_t> highs;
  for (std::uint64_t i = 0; i < 1000; ++i) highs.insert(xxh3_hasher::from_hash(i).high);
  EXPECT_EQ(highs.size(), 1000u);
}

TEST(KeyHashing, DefaultSeedSpellsBlume) {
  EXPECT_EQ(xxh3_hasher::default_seed, 0x626c756d65ULL);
  EXPECT_EQ(xxh3_hasher().seed(), xxh3_hasher::default_seed);
  EXPECT_EQ(blume::bloom_filter<>(1000, 0.01).seed(), xxh3_hasher::default_seed);
}

TEST(KeyHashing, FilterHashIsHashKeyUnderTheFiltersSeed) {
  const auto f = blume::bloom_filter<>(1000, 0.01, 987);
  EXPECT_EQ(f.hash(std::string("k")), hash_key(xxh3_hasher(987), std::string("k")));
  EXPECT_EQ(f.hash(42), hash_key(xxh3_hasher(987), 42));
}

TEST(RangeReduction, StaysBelowTheRangeForEveryInput) {
  for (std::uint64_t n :
       {std::uint64_t{1}, std::uint64_t{3}, std::uint64_t{1000}, std::uint64_t{958'505'838}, blume::max_filter_bits}) {
    EXPECT_EQ(blume::reduce(0, n), 0u);
    EXPECT_EQ(blume::reduce(~std::uint64_t{0}, n), n - 1);
    for (std::uint64_t i = 0; i < 10'000; ++i) ASSERT_LT(blume::reduce(blume_test::splitmix64(i), n), n);
  }
}

TEST(RangeReduction, SpreadsUniformInputsEvenly) {
  constexpr std::uint64_t buckets = 10;
  constexpr std::uint64_t samples = 1'000'000;
  std::array<std::uint64_t, buckets> counts{};
  for (std::uint64_t i = 0; i < samples; ++i) ++counts[blume::reduce(blume_test::splitmix64(i), buckets)];
  // Each count is binomial(10^6, 0.1): standard deviation 300; allow five.
  for (std::uint64_t c : counts) EXPECT_NEAR(static_cast<double>(c), samples / buckets, 1500.0);
}

}  // namespace
