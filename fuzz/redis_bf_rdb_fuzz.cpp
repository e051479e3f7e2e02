// SPDX-License-Identifier: Apache-2.0
// The MBbloom-- RDB loader: one byte of encoding version (0 … 5, so one past the newest), then the module
// value in Redis's encoding, read as the server would hand it to the module. A record that loads must
// save and load again to the same record and bits.
#include <cstdint>
#include <span>

#include "redis_fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace blume::redis;
  fuzz::load_round_trip(data, size, load_bloom, save_bloom, bloom_encoding_version);
  return 0;
}
