// What the Redis module's fuzz harnesses share: the limits they decode under and small helpers to cut
// an input into pieces. The limits are the module's defaults scaled down, so a harness explores the
// same checks without spending the fuzzer's memory on multi-gigabyte filters.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include "../redis/codec.hpp"  // relative: the harnesses need no include path of their own

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

}  // namespace blume::redis::fuzz
