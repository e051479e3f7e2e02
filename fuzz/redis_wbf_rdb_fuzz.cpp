// SPDX-License-Identifier: Apache-2.0
// The blume-WBF RDB loader (redis/native.hpp), as the server would hand it a record: see
// fuzz::native_rdb_round_trip for what must hold.
#include <cstdint>

#include "../redis/window_codec.hpp"
#include "redis_fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  blume::redis::fuzz::native_rdb_round_trip<blume::redis::window_codec>(data, size);
  return 0;
}
