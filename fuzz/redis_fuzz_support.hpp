// SPDX-License-Identifier: Apache-2.0
// What the Redis module's fuzz harnesses share: the limits they decode under and small helpers to cut
// an input into pieces. The limits are the module's defaults scaled down, so a harness explores the
// same checks without spending the fuzzer's memory on multi-gigabyte filters.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

#include "../redis/codec.hpp"  // relative: the harnesses need no include path of their own
#include "../redis/native.hpp"

namespace blume::redis::fuzz {

inline constexpr std::uint64_t memory_limit = std::uint64_t{1} << 20;
inline constexpr std::uint64_t max_sub_filters = 1024;

inline rdb_limits limits() { return {memory_limit, 2, 20, 1}; }

/// Reads the input front to back; past the end every read is zero or empty.
class input {
 public:
  input(const std::uint8_t* data, std::size_t size) noexcept : data_(data), size_(size) {}
  template <class T>
  T take() noexcept {
    T v{};
    const std::size_t n = std::min(sizeof(T), size_ - at_);
    std::memcpy(&v, data_ + at_, n);
    at_ += n;
    return v;
  }
  std::string_view bytes(std::size_t n) noexcept {
    n = std::min(n, size_ - at_);
    const std::string_view s(reinterpret_cast<const char*>(data_ + at_), n);
    at_ += n;
    return s;
  }
  bool empty() const noexcept { return at_ == size_; }

 private:
  const std::uint8_t* data_;
  std::size_t size_;
  std::size_t at_ = 0;
};

[[noreturn]] inline void fail(const char* what) {
  std::fprintf(stderr, "redis fuzz: %s\n", what);
  __builtin_trap();
}

/// The RDB harnesses' common course: the first byte picks an encoding version (0 … 5, one past the
/// newest), the rest is the record. A refused record must say why; one that loads stays under the limit,
/// and saves, loads and saves again to the same bytes. Returns the reloaded value (null if refused).
template <class Load, class Save>
auto load_round_trip(const std::uint8_t* data, std::size_t size, Load load, Save save, int newest)
    -> decltype(load(std::declval<rdb_reader&>(), 0, limits(), nullptr)) {
  if (size < 1) return nullptr;
  byte_rdb_reader in(std::as_bytes(std::span(data + 1, size - 1)));
  std::string why;
  auto v = load(in, data[0] % 6, limits(), &why);
  if (v == nullptr) {
    if (why.empty()) fail("refused without a reason");
    return nullptr;
  }
  if (filter_memory(redisbloom::record_of(*v)) > memory_limit) fail("loaded a filter over the limit");
  byte_rdb_writer out;
  save(out, *v);
  byte_rdb_reader again(std::as_bytes(std::span(out.bytes().data(), out.bytes().size())));
  auto w = load(again, newest, limits(), &why);
  if (w == nullptr) fail("a saved record does not load");
  byte_rdb_writer out2;
  save(out2, *w);
  if (out2.bytes() != out.bytes()) fail("save, load, save changed the record");
  return w;
}

/// The native types' RDB harness (native.hpp): a record is refused with a reason or loads within the
/// limit; one that loads saves, loads and saves again to the same record, and a complete filter answers for
/// an item it takes.
template <class Codec>
void native_rdb_round_trip(const std::uint8_t* data, std::size_t size) {
  byte_rdb_reader in(std::as_bytes(std::span(data, size)));
  std::string why;
  auto v = Codec::load(in, 1, memory_limit, &why);
  if (v == nullptr) {
    if (why.empty()) fail("refused without a reason");
    return;
  }
  if (Codec::size(*v) > memory_limit) fail("loaded a filter over the limit");
  byte_rdb_writer out;
  Codec::save(out, *v);
  byte_rdb_reader again(std::as_bytes(std::span(out.bytes().data(), out.bytes().size())));
  auto w = Codec::load(again, 1, memory_limit, &why);
  if (w == nullptr) fail("a saved record does not load");
  byte_rdb_writer out2;
  Codec::save(out2, *w);
  if (out2.bytes() != out.bytes()) fail("save, load, save changed the record");
  if (w->complete()) {
    std::visit(
        [](auto& f) {
          const blume::digest d = f.hash(std::string_view("fuzz"));
          f.insert(d);
          if (!f.contains(d)) fail("an inserted item is missing");
        },
        *w->filter);
  }
}

/// The native types' LOADCHUNK harness: a header (u16 length, then its bytes) and chunks (i64 iterator,
/// u16 length, bytes). A header accepted is within the limit; a chunk lands where the loaded bytes end or
/// is refused and changes nothing; a completed filter gives SCANDUMP the payload it was loaded from.
template <class Codec>
void native_chunk_stream(const std::uint8_t* data, std::size_t size) {
  input in(data, size);
  const std::string_view header = in.bytes(in.take<std::uint16_t>());
  std::unique_ptr<typename Codec::value_type> v;
  try {
    v = Codec::from_header(header, memory_limit);
  } catch (const over_limit& e) {
    if (e.needed() <= memory_limit) fail("over_limit below the limit");
    return;
  } catch (const blume::format_error&) {
    return;
  }
  if (Codec::size(*v) > memory_limit) fail("accepted a header over the limit");
  std::string loaded;
  while (!in.empty() && !v->complete()) {
    const auto iterator = in.take<std::int64_t>();
    const std::string_view chunk = in.bytes(in.take<std::uint16_t>());
    const std::uint64_t before = v->loaded;
    std::string why;
    const auto status = Codec::load_chunk(*v, iterator, std::as_bytes(std::span(chunk.data(), chunk.size())), &why);
    if (status == Codec::chunk_status::corrupt || status == Codec::chunk_status::failed) {
      if (why.empty()) fail("a corrupt payload without a reason");
      return;
    }
    if (status == Codec::chunk_status::ok) {
      loaded += chunk;
    } else if (v->loaded != before) {
      fail("a refused chunk changed the loaded bytes");
    }
  }
  if (!v->complete()) return;
  // The header is written anew (a version 1 header comes back as version 2), but describes the same payload.
  const std::string again = Codec::header(*v);
  const blume::file_header h = blume::decode_header(std::as_bytes(std::span(again.data(), again.size())));
  if (h.payload_size != loaded.size()) fail("SCANDUMP header describes another payload");
  std::string walked;
  for (long long it = 1;;) {
    const redisbloom::chunk c = Codec::chunk(*v, it, 4096);
    if (c.next == 0) break;
    if (c.next <= it) fail("SCANDUMP iterator did not advance");
    walked.append(reinterpret_cast<const char*>(c.bytes.data()), c.bytes.size());
    it = c.next;
  }
  if (walked != loaded) fail("SCANDUMP returned other bytes than were loaded");
}

}  // namespace blume::redis::fuzz
