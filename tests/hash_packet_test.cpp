// The Golomb-coded packets of sorted hashes that distributed filters send: round trips, the size the code
// promises, and hostile packets refused before they are trusted.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "blume/detail/hash_packet.hpp"

namespace {

using blume::detail::decode_hash_packet;
using blume::detail::encode_hash_packet;

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
}

}  // namespace
