// SPDX-License-Identifier: Apache-2.0
// The MBbloomCF RDB loader: one byte of encoding version (0 … 5), then the module value in Redis's
// encoding. A record that loads must save and load again to the same bytes.
#include <cstdint>
#include <exception>
#include <span>

#include "redis_fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace rb = blume::redisbloom;
  using namespace blume::redis;
  const auto w = fuzz::load_round_trip(data, size, load_cuckoo, save_cuckoo, cuckoo_encoding_version);
  if (w == nullptr) return 0;
  const blume::digest d = w->filter.hash("fuzz");
  // As the module does: a new sub-filter is refused when it would take the filter over the limit.
  if (filter_memory(rb::record_of(*w)) + cuckoo_sub_filter_bytes + w->filter.next_sub_filter_bytes() >
      fuzz::memory_limit)
    return 0;
  try {
    rb::cuckoo_insert(*w, d);
  } catch (const std::exception&) {
  }
  return 0;
}
