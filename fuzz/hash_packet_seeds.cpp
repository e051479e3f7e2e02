// SPDX-License-Identifier: Apache-2.0
// Writes the seed corpus of the hash_packet harness (fuzz/corpus/hash_packet/): packets the encoder makes
// (the range's 8 bytes, then the packet's words), from an empty packet to one value over the whole 64-bit
// range (the largest parameter the encoder chooses). Regenerate with
//   g++ -std=c++20 -I include fuzz/hash_packet_seeds.cpp -o seeds && ./seeds fuzz/corpus/hash_packet
// The regression-* seeds beside them are the reproducers of past findings, kept by hand.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "blume/detail/hash_packet.hpp"

namespace {

void write(const std::filesystem::path& dir, const std::string& name, std::vector<std::uint64_t> sorted,
           std::uint64_t range) {
  std::vector<std::uint64_t> words{range};
  blume::detail::encode_hash_packet(sorted, range, words);
  std::filesystem::create_directories(dir);
  std::ofstream(dir / name, std::ios::binary)
      .write(reinterpret_cast<const char*>(words.data()), static_cast<std::streamsize>(words.size() * 8));
}

std::vector<std::uint64_t> sorted_values(std::size_t n, std::uint64_t range, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::uint64_t> v(n);
  for (auto& x : v) x = rng() % range;
  std::sort(v.begin(), v.end());
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s CORPUS_DIR\n", argv[0]);
    return 2;
  }
  const std::filesystem::path dir = argv[1];
  write(dir, "empty", {}, 100);
  write(dir, "dense", {0, 0, 1, 3, 3, 3, 7, 8, 12, 15}, 16);  // M = 1: unary codes only
  write(dir, "small", sorted_values(20, 1000, 1), 1000);
  write(dir, "wide", sorted_values(200, std::uint64_t{1} << 40, 2), std::uint64_t{1} << 40);
  write(dir, "one-value-full-range", {~std::uint64_t{0} - 1}, ~std::uint64_t{0});
  return 0;
}
