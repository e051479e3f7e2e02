// CBF.LOADCHUNK: a header (u16 length, then its bytes) and then chunks (i64 iterator, u16 length, bytes),
// decoded as the module does (redis/native.hpp). A header accepted is within the limit; a chunk lands
// where the loaded bytes end or is refused; a completed filter gives SCANDUMP the bytes it was loaded
// from.
#include <cstdint>
#include <string>

#include "../redis/counting_codec.hpp"
#include "redis_fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace blume::redis;
  using codec = counting_codec;
  fuzz::input in(data, size);
  const std::string_view header = in.bytes(in.take<std::uint16_t>());
  std::unique_ptr<codec::value_type> v;
  try {
    v = codec::from_header(header, fuzz::memory_limit);
  } catch (const over_limit& e) {
    if (e.needed() <= fuzz::memory_limit) fuzz::fail("over_limit below the limit");
    return 0;
  } catch (const blume::format_error&) {
    return 0;
  }
  if (codec::size(*v) > fuzz::memory_limit) fuzz::fail("accepted a header over the limit");
  std::string loaded;
  while (!in.empty() && !v->complete()) {
    const auto iterator = in.take<std::int64_t>();
    const std::string_view chunk = in.bytes(in.take<std::uint16_t>());
    const std::uint64_t before = v->loaded;
    std::string why;
    const auto status = codec::load_chunk(*v, iterator, std::as_bytes(std::span(chunk.data(), chunk.size())), &why);
    if (status == codec::chunk_status::corrupt) {
      if (why.empty()) fuzz::fail("a corrupt payload without a reason");
      return 0;
    }
    if (status == codec::chunk_status::ok) {
      loaded += chunk;
    } else if (v->loaded != before) {
      fuzz::fail("a refused chunk changed the loaded bytes");
    }
  }
  if (!v->complete()) return 0;
  if (codec::header(*v) != header) fuzz::fail("SCANDUMP header differs from the one loaded");
  std::string walked;
  for (long long it = 1;;) {
    const blume::redisbloom::chunk c = codec::chunk(*v, it, 4096);
    if (c.next == 0) break;
    if (c.next <= it) fuzz::fail("SCANDUMP iterator did not advance");
    walked.append(reinterpret_cast<const char*>(c.bytes.data()), c.bytes.size());
    it = c.next;
  }
  if (walked != loaded) fuzz::fail("SCANDUMP returned other bytes than were loaded");
  return 0;
}
