// The MBbloomCF RDB loader: one byte of encoding version (0 … 5), then the module value in Redis's
// encoding. A record that loads must save and load again to the same bytes.
#include <cstdint>
#include <exception>
#include <span>

#include "redis_fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace rb = blume::redisbloom;
  using namespace blume::redis;
  if (size < 1) return 0;
  const int encver = data[0] % 6;
  byte_rdb_reader in(std::as_bytes(std::span(data + 1, size - 1)));
  std::string why;
  const auto v = load_cuckoo(in, encver, fuzz::limits(), &why);
  if (v == nullptr) {
    if (why.empty()) fuzz::fail("refused without a reason");
    return 0;
  }
  if (filter_memory(rb::record_of(*v)) > fuzz::memory_limit) fuzz::fail("loaded a filter over the limit");
  byte_rdb_writer out;
  save_cuckoo(out, *v);
  byte_rdb_reader again(std::as_bytes(std::span(out.bytes().data(), out.bytes().size())));
  const auto w = load_cuckoo(again, cuckoo_encoding_version, fuzz::limits(), &why);
  if (w == nullptr) fuzz::fail("a saved record does not load");
  byte_rdb_writer out2;
  save_cuckoo(out2, *w);
  if (out2.bytes() != out.bytes()) fuzz::fail("save, load, save changed the record");
  const blume::digest d = w->filter.hash("fuzz");
  // As the module does: a new sub-filter is refused when it would take the filter over the limit.
  if (filter_memory(rb::record_of(*w)) + cuckoo_sub_filter_bytes + w->filter.next_sub_filter_bytes() > fuzz::memory_limit)
    return 0;
  try {
    rb::cuckoo_insert(*w, d);
  } catch (const std::exception&) {
  }
  return 0;
}
