// The blume-CBF RDB loader (redis/native.hpp over counting filters): the module value in Redis's
// encoding, as the server would hand it to the module. A record must be refused with a reason or load
// within the limit; one that loads saves, loads and saves again to the same record, and a complete filter
// answers for an item it takes.
#include <cstdint>
#include <span>
#include <string>

#include "../redis/counting_codec.hpp"
#include "redis_fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace blume::redis;
  byte_rdb_reader in(std::as_bytes(std::span(data, size)));
  std::string why;
  auto v = counting_codec::load(in, 1, fuzz::memory_limit, &why);
  if (v == nullptr) {
    if (why.empty()) fuzz::fail("refused without a reason");
    return 0;
  }
  if (counting_codec::size(*v) > fuzz::memory_limit) fuzz::fail("loaded a filter over the limit");
  byte_rdb_writer out;
  counting_codec::save(out, *v);
  byte_rdb_reader again(std::as_bytes(std::span(out.bytes().data(), out.bytes().size())));
  auto w = counting_codec::load(again, 1, fuzz::memory_limit, &why);
  if (w == nullptr) fuzz::fail("a saved record does not load");
  byte_rdb_writer out2;
  counting_codec::save(out2, *w);
  if (out2.bytes() != out.bytes()) fuzz::fail("save, load, save changed the record");
  if (w->complete()) {
    std::visit(
        [](auto& f) {
          const blume::digest d = f.hash(std::string_view("fuzz"));
          f.insert(d);
          if (!f.contains(d)) fuzz::fail("an inserted item is missing");
        },
        *w->filter);
  }
  return 0;
}
