// SPDX-License-Identifier: Apache-2.0
// The Golomb-coded packets of sorted hashes that distributed filters send: round trips, the size the code
// promises, and hostile packets refused before they are trusted.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "blume/detail/golomb_code.hpp"
#include "blume/detail/hash_packet.hpp"

namespace {

using blume::detail::decode_hash_packet;
using blume::detail::encode_hash_packet;
using blume::detail::golomb_code;

std::vector<std::uint64_t> sorted_values(std::uint64_t n, std::uint64_t range, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::uint64_t> v(n);
  for (auto& x : v) x = rng() % range;
  std::sort(v.begin(), v.end());
  return v;
}

TEST(HashPacket, RoundTripsWithRepeatsAndAtTheRangesEnds) {
  for (const std::uint64_t range : {1ULL, 2ULL, 1000ULL, 1ULL << 40, ~0ULL}) {
    std::vector<std::uint64_t> v = sorted_values(5000, range, range);
    v.insert(v.begin(), 0);
    v.push_back(range - 1);
    v.push_back(range - 1);
    std::sort(v.begin(), v.end());
    std::vector<std::uint64_t> packet, back;
    encode_hash_packet(v, range, packet);
    decode_hash_packet(packet, range, back);
    EXPECT_EQ(back, v) << "range " << range;
  }
  std::vector<std::uint64_t> packet, back;
  encode_hash_packet({}, 100, packet);
  decode_hash_packet(packet, 100, back);
  EXPECT_TRUE(back.empty());
}

TEST(HashPacket, CostsAboutLog2OfETimesTheMeanGapPerValue) {
  constexpr std::uint64_t n = 100'000, range = n * 100;
  std::vector<std::uint64_t> packet;
  encode_hash_packet(sorted_values(n, range, 3), range, packet);
  const double bits = 64.0 * static_cast<double>(packet.size() - 3) / n;
  EXPECT_NEAR(bits, std::log2(std::exp(1.0) * 100), 0.3);
}

TEST(HashPacket, HostilePacketsAreRefused) {
  std::vector<std::uint64_t> good;
  encode_hash_packet(sorted_values(100, 1000, 5), 1000, good);
  std::vector<std::uint64_t> out;
  EXPECT_THROW(decode_hash_packet(std::vector<std::uint64_t>{1, 1}, 1000, out), blume::format_error);
  auto too_many = good;
  too_many[0] = 1ULL << 40;
  EXPECT_THROW(decode_hash_packet(too_many, 1000, out), blume::format_error);
  auto no_parameter = good;
  no_parameter[1] = 0;
  EXPECT_THROW(decode_hash_packet(no_parameter, 1000, out), blume::format_error);
  EXPECT_THROW(decode_hash_packet(good, 10, out), blume::format_error) << "values past the range";
  auto ones = good;
  std::fill(ones.begin() + 2, ones.end() - 1, ~0ULL);
  EXPECT_THROW(decode_hash_packet(ones, 1000, out), blume::format_error) << "a code running past the end";
  auto no_end_word = good;
  no_end_word.back() = 1;
  EXPECT_THROW(decode_hash_packet(no_end_word, 1000, out), blume::format_error);
}

// A single value over a wide range gives the largest parameter the encoder chooses (about ln 2 · range),
// which the decoder must still take: its refusal of a parameter above the range is not a refusal of these.
TEST(HashPacket, RoundTripsOneValueOverEveryWidth) {
  for (unsigned width = 0; width < 64; ++width) {
    const std::uint64_t range = std::uint64_t{1} << width;
    for (const std::uint64_t v : {std::uint64_t{0}, range / 2, range - 1}) {
      std::vector<std::uint64_t> packet, back;
      encode_hash_packet(std::vector<std::uint64_t>{v}, range, packet);
      EXPECT_LE(packet[1], range);
      decode_hash_packet(packet, range, back);
      EXPECT_EQ(back, std::vector<std::uint64_t>{v}) << "range 2^" << width;
    }
  }
}

// Found by a harness written for the decoder: a parameter above 2^63 made ⌈log2 M⌉ = 64, and the code
// shifted by it (undefined; UBSan stops here without the fix).
TEST(HashPacket, AParameterAbove2To63IsRefusedWithoutUndefinedShifts) {
  const std::vector<std::uint64_t> packet{1, (std::uint64_t{1} << 63) + 1, 0, 0};
  std::vector<std::uint64_t> out;
  EXPECT_THROW(decode_hash_packet(packet, 1000, out), blume::format_error) << "a parameter above the range";
  // Over the whole 64-bit range the parameter is not out of place, and the code of M > 2^63 (remainders of
  // 63 or 64 bits) still decodes.
  out.clear();
  decode_hash_packet(packet, ~0ULL, out);
  EXPECT_EQ(out, std::vector<std::uint64_t>{0});
}

TEST(HashPacket, CodesOfEveryParameterWidthRoundTrip) {
  constexpr std::uint64_t top = std::uint64_t{1} << 63, all = ~std::uint64_t{0};
  for (const std::uint64_t m : {top, top + 1, all - 1, all}) {
    const golomb_code code(m);
    const std::vector<std::uint64_t> gaps{0, 1, m - 1, m / 2 + 7, all - m, all - m + 1, all};
    std::vector<std::uint64_t> bits;
    std::uint64_t at = 0;
    for (const std::uint64_t g : gaps) code.put(bits, at, g);
    const std::uint64_t end = at;
    bits.resize((at + 63) / 64);
    bits.push_back(0);
    std::vector<std::uint64_t> back;
    for (at = 0; at < end;) {
      std::uint64_t g = 0;
      ASSERT_TRUE(code.get(bits, at, end, g)) << "M " << m;
      back.push_back(g);
    }
    EXPECT_EQ(back, gaps) << "M " << m;
  }
}

// Found by the same harness: a packet whose last word is not zero let a code's unary part end past the
// code bits, and its remainder was then read from the word after the packet (ASan stops here without the
// fix). The packet is its own allocation, so any read past it is caught.
TEST(HashPacket, ACodeEndingPastThePacketIsNotReadBeyondIt) {
  // M = 2^40: ones up to bit 104 (past the 64 code bits), then a remainder of 40 bits that ends at 144, in
  // the word after the packet.
  const std::vector<std::uint64_t> packet{1, std::uint64_t{1} << 40, ~0ULL, ~0ULL ^ (std::uint64_t{1} << 40)};
  std::vector<std::uint64_t> out;
  EXPECT_THROW(decode_hash_packet(packet, ~0ULL, out), blume::format_error);
  // The code itself, whose readers (the Golomb-coded set too) trust their slack word less than this one.
  const golomb_code code(std::uint64_t{1} << 40);
  const std::vector<std::uint64_t> bits(packet.begin() + 2, packet.end());
  std::uint64_t at = 0, gap = 0;
  EXPECT_FALSE(code.get(bits, at, 64, gap));
}

}  // namespace
