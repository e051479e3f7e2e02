// SPDX-License-Identifier: Apache-2.0
// CF.LOADCHUNK: a 38-byte header and then chunks (i64 iterator, u16 length, bytes), decoded as the module
// does. An accepted header must come back unchanged from SCANDUMP, and a chunk either lies within one
// sub-filter or changes nothing.
#include <cstdint>
#include <exception>

#include "redis_fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace rb = blume::redisbloom;
  using namespace blume::redis;
  fuzz::input in(data, size);
  const std::string_view header = in.bytes(rb::cuckoo_header_bytes);
  rb::cuckoo_record r;
  try {
    r = cuckoo_header(header, fuzz::memory_limit, fuzz::max_sub_filters);
  } catch (const over_limit& e) {
    if (e.needed() <= fuzz::memory_limit) fuzz::fail("over_limit below the limit");
    return 0;
  } catch (const blume::format_error&) {
    return 0;
  }
  rb::cuckoo_value v = rb::value_from(r, fuzz::max_sub_filters);
  if (rb::encode_header(rb::record_of(v)) != header) fuzz::fail("SCANDUMP header differs from the one loaded");
  while (!in.empty()) {
    const auto iterator = in.take<std::int64_t>();
    const std::string_view chunk = in.bytes(in.take<std::uint16_t>());
    const std::uint64_t before = v.filter.inserted();
    const bool loaded =
        rb::load_cuckoo_chunk(v, iterator, {reinterpret_cast<const std::byte*>(chunk.data()), chunk.size()});
    if (!loaded && v.filter.inserted() != before) fuzz::fail("a refused chunk changed the filter");
  }
  for (long long it = 1;;) {
    const rb::chunk c = rb::cuckoo_chunk(v, it, 4096);
    if (c.next == 0) break;
    if (c.next <= it) fuzz::fail("SCANDUMP iterator did not advance");
    it = c.next;
  }
  const blume::digest d = v.filter.hash("fuzz");
  // As the module does: a new sub-filter is refused when it would take the filter over the limit.
  if (filter_memory(rb::record_of(v)) + cuckoo_sub_filter_bytes + v.filter.next_sub_filter_bytes() > fuzz::memory_limit)
    return 0;
  try {
    if (rb::cuckoo_insert(v, d) && !v.filter.contains(d)) fuzz::fail("an inserted item is missing");
    rb::cuckoo_delete(v, d);
  } catch (const std::exception&) {
  }
  return 0;
}
