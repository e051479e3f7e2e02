// SPDX-License-Identifier: Apache-2.0
// CBF.LOADCHUNK streams (redis/native.hpp), decoded as the module does: see
// fuzz::native_chunk_stream for the input's shape and what must hold.
#include <cstdint>

#include "../redis/counting_codec.hpp"
#include "redis_fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  blume::redis::fuzz::native_chunk_stream<blume::redis::counting_codec>(data, size);
  return 0;
}
