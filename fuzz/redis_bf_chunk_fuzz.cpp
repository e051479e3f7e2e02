// SPDX-License-Identifier: Apache-2.0
// BF.LOADCHUNK: a header (u16 length, then its bytes) and then chunks (i64 iterator, u16 length, bytes),
// decoded as the module does. A header accepted must describe exactly the filter it builds (SCANDUMP gives
// the same header back), and chunks either land inside a layer or are refused.
#include <cstdint>
#include <exception>

#include "redis_fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace rb = blume::redisbloom;
  using namespace blume::redis;
  fuzz::input in(data, size);
  const std::string_view header = in.bytes(in.take<std::uint16_t>());
  rb::bloom_chain_record r;
  try {
    r = bloom_header(header, fuzz::memory_limit);
  } catch (const over_limit& e) {
    if (e.needed() <= fuzz::memory_limit) fuzz::fail("over_limit below the limit");
    return 0;
  } catch (const blume::format_error&) {
    return 0;
  }
  if (filter_memory(r) > fuzz::memory_limit) fuzz::fail("accepted a header over the limit");
  rb::bloom_value v = rb::value_from(r);
  if (rb::encode_header(rb::record_of(v)) != header) fuzz::fail("SCANDUMP header differs from the one loaded");
  while (!in.empty()) {
    const auto iterator = in.take<std::int64_t>();
    const std::string_view chunk = in.bytes(in.take<std::uint16_t>());
    rb::load_bloom_chunk(v, iterator, {reinterpret_cast<const std::byte*>(chunk.data()), chunk.size()});
  }
  for (long long it = 1;;) {  // SCANDUMP walks the layers to the end
    const rb::chunk c = rb::bloom_chunk(v, it, 4096);
    if (c.next == 0) break;
    if (c.next <= it) fuzz::fail("SCANDUMP iterator did not advance");
    it = c.next;
  }
  try {
    const blume::digest d = v.chain.hash("fuzz");
    // As the module does: a new layer is refused when it would take the filter over the limit.
    if (v.chain.needs_new_layer() && v.chain.can_grow() &&
        filter_memory(rb::record_of(v)) + bloom_layer_bytes + v.chain.next_layer_bytes() > fuzz::memory_limit)
      return 0;
    if (v.chain.try_insert(d) != blume::insert_result::full && !v.chain.contains(d))
      fuzz::fail("an inserted item is missing");
  } catch (const std::exception&) {
  }
  return 0;
}
