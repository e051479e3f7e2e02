// SPDX-License-Identifier: Apache-2.0
// The module's own data types (CBF.*), which hold blume filters in blume's file format rather than
// RedisBloom's: the value is a filter file's header and payload, so a SCANDUMP stream is the file's bytes
// and `blume redis push` can send a file built by `blume build` as it is. Nothing here calls the server:
// RDB records go through codec.hpp's rdb_reader/rdb_writer, so unit tests and fuzzers run the same code.
//
//   SCANDUMP key 0      → [1, the 192-byte header]
//   SCANDUMP key it     → [it + n, the n payload bytes at offset it − 1] (n ≤ 16 MiB), [0, ""] at the end
//   LOADCHUNK key 1 H   creates the filter from header H (checked, within the memory limit) with a zero
//                       payload; it answers nothing but LOADCHUNK until the payload is complete
//   LOADCHUNK key it D  the bytes SCANDUMP returned with `it`: they start at it − 1 − |D|, which must be
//                       where the previous chunk ended; the last one checks the header's checksum
//
//   RDB record          u64 record version (1), string header, u64 payload bytes loaded, then the loaded
//                       bytes as strings of at most 64 MiB
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>

#include "blume/compat/redisbloom_format.hpp"
#include "blume/io/format.hpp"
#include "codec.hpp"

namespace blume::redis {

inline constexpr std::uint64_t native_record_version = 1;
inline constexpr std::size_t native_chunk_bytes = std::size_t{16} << 20;
inline constexpr std::size_t native_rdb_string_bytes = std::size_t{64} << 20;

/// A filter of one of the kinds Fs..., or one still arriving through LOADCHUNK.
template <class... Fs>
struct native_value {
  using filter_type = std::variant<Fs...>;

  std::optional<filter_type> filter;  // set once the payload is complete and checked
  filter_design design;               // recorded in every header written
  // While LOADCHUNK fills it: the header as received, and the payload so far.
  file_header pending;
  std::string pending_header;
  byte_storage payload;
  std::uint64_t loaded = 0;

  bool complete() const noexcept { return filter.has_value(); }
  std::uint64_t payload_size() const noexcept {
    if (!complete()) return pending.payload_size;
    return std::visit([](const auto& f) { return payload_bytes(f); }, *filter);
  }

  template <class F>
  static std::uint64_t payload_bytes(const F& f) {
    std::uint64_t n = 0;
    f.for_each_payload_segment([&](std::span<const std::byte> s) { n += s.size(); });
    return n;
  }
};

/// What a native type accepts: `Select::index(header)` is the index in Fs... of the kind that reads it,
/// or throws format_error for a header of any other kind (a counting filter type refuses an aging file).
template <class Select>
concept native_selector = requires(const file_header& h) {
  { Select::index(h) } -> std::convertible_to<std::size_t>;
};

namespace native_detail {

template <class V, std::size_t I = 0, class Fn>
void with_alternative(std::size_t index, Fn&& fn) {
  if constexpr (I < std::variant_size_v<V>) {
    if (index == I) {
      fn(std::type_identity<std::variant_alternative_t<I, V>>{});
      return;
    }
    with_alternative<V, I + 1>(index, fn);
  } else {
    throw format_error("filter kind " + std::to_string(index) + " cannot be held here");
  }
}

}  // namespace native_detail

template <native_selector Select, class... Fs>
class native_codec {
 public:
  using value_type = native_value<Fs...>;
  using filter_type = typename value_type::filter_type;

  /// The header of the value's file: encoded from the filter (one checksum pass over the payload), or
  /// the pending one as it arrived.
  static std::string header(const value_type& v) {
    if (!v.complete()) return v.pending_header;
    std::string out;
    std::visit(
        [&](const auto& f) {
          detail::with_file_parts(f, v.design, [&](std::span<const std::span<const std::byte>> parts) {
            out.assign(reinterpret_cast<const char*>(parts[0].data()), parts[0].size());
          });
        },
        *v.filter);
    return out;
  }

  /// The payload bytes SCANDUMP returns after `iterator` (≥ 1): at most `limit` from offset iterator − 1,
  /// within one segment; {0, {}} past the end (or the loaded part of a pending value).
  static redisbloom::chunk chunk(const value_type& v, long long iterator, std::size_t limit = native_chunk_bytes) {
    if (iterator < 1) return {};
    std::uint64_t offset = static_cast<std::uint64_t>(iterator) - 1;
    redisbloom::chunk out;
    const auto take = [&](std::span<const std::byte> s) {
      if (out.next != 0) return;
      if (offset >= s.size()) {
        offset -= s.size();
        return;
      }
      const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(limit, s.size() - offset));
      out = {iterator + static_cast<long long>(n), s.subspan(static_cast<std::size_t>(offset), n)};
    };
    if (v.complete()) {
      std::visit([&](const auto& f) { f.for_each_payload_segment(take); }, *v.filter);
    } else {
      take(std::span<const std::byte>(v.payload.data(), static_cast<std::size_t>(v.loaded)));
    }
    return out;
  }

  /// The bytes MEMORY USAGE reports: the header and the payload.
  static std::size_t size(const value_type& v) { return header_size + static_cast<std::size_t>(v.payload_size()); }

  /// A value from a header (LOADCHUNK's first chunk, an RDB record): decoded and checked for one of Fs,
  /// its payload within `limit` bytes (over_limit otherwise), allocated zeroed and waiting for its bytes.
  /// A header with an empty payload makes a complete value at once.
  static std::unique_ptr<value_type> from_header(std::string_view bytes, std::uint64_t limit) {
    return from_checked_header(bytes, checked_header(bytes, limit));
  }

  /// from_header's checks alone, allocating nothing: the header, for a caller that must ask whether its
  /// payload fits (the server's memory) before from_checked_header allocates it.
  static file_header checked_header(std::string_view bytes, std::uint64_t limit) {
    const std::span<const std::byte> raw(reinterpret_cast<const std::byte*>(bytes.data()), bytes.size());
    const file_header h = decode_header(raw);
    if (bytes.size() != h.size)
      throw format_error("a header chunk is " + std::to_string(bytes.size()) + " bytes, its header says " +
                         std::to_string(h.size));
    native_detail::with_alternative<filter_type>(Select::index(h),
                                                 [&](auto type) { check_header<typename decltype(type)::type>(h); });
    if (const std::uint64_t needed = header_size + h.payload_size; needed > limit) throw over_limit(needed, limit);
    return h;
  }
  static std::unique_ptr<value_type> from_checked_header(std::string_view bytes, const file_header& h) {
    auto v = std::make_unique<value_type>();
    v->pending = h;
    v->pending_header.assign(bytes);
    v->design = h.design;
    v->payload = byte_storage::allocate(static_cast<std::size_t>(h.payload_size));
    if (h.payload_size == 0) finish(*v);
    return v;
  }

  enum class chunk_status { ok, not_loading, out_of_order, too_big, corrupt, failed };

  /// LOADCHUNK's data step: the chunk must start where the loaded bytes end. The last one assembles the
  /// filter; *why says what was wrong with a corrupt one.
  static chunk_status load_chunk(value_type& v, long long iterator, std::span<const std::byte> data, std::string* why) {
    if (v.complete()) return chunk_status::not_loading;
    if (iterator < 1 || static_cast<std::uint64_t>(iterator) - 1 < data.size() ||
        static_cast<std::uint64_t>(iterator) - 1 - data.size() != v.loaded)
      return chunk_status::out_of_order;
    if (data.size() > v.pending.payload_size - v.loaded) return chunk_status::too_big;
    if (!data.empty()) std::memcpy(v.payload.data() + v.loaded, data.data(), data.size());
    v.loaded += data.size();
    if (v.loaded == v.pending.payload_size) {
      // The payload moves into the filter, so a failure here leaves no usable value: the caller drops it.
      try {
        finish(v);
      } catch (const std::bad_alloc&) {
        *why = "not enough memory to assemble the filter";
        return chunk_status::failed;
      } catch (const std::exception& e) {
        *why = e.what();
        return chunk_status::corrupt;
      }
    }
    return chunk_status::ok;
  }

  static void save(rdb_writer& out, const value_type& v) {
    out.save_unsigned(native_record_version);
    const std::string h = header(v);
    out.save_string(std::as_bytes(std::span<const char>(h.data(), h.size())));
    out.save_unsigned(v.complete() ? v.payload_size() : v.loaded);
    std::string buffer;  // segments are cut into strings of at most native_rdb_string_bytes
    const auto emit = [&](std::span<const std::byte> s) {
      while (!s.empty()) {
        const std::size_t n = std::min(s.size(), native_rdb_string_bytes);
        out.save_string(s.first(n));
        s = s.subspan(n);
      }
    };
    if (v.complete()) {
      std::visit([&](const auto& f) { f.for_each_payload_segment(emit); }, *v.filter);
    } else {
      emit(std::span<const std::byte>(v.payload.data(), static_cast<std::size_t>(v.loaded)));
    }
  }

  /// Decodes a record; nullptr for bad data, with the reason in *why.
  static std::unique_ptr<value_type> load(rdb_reader& in, int /*encver*/, std::uint64_t limit, std::string* why) {
    try {
      if (const std::uint64_t version = in.load_unsigned(); in.failed() || version != native_record_version)
        throw format_error("record version " + std::to_string(version) + " is not " +
                           std::to_string(native_record_version));
      const rdb_buffer h = in.load_string();
      if (!h.valid()) throw format_error("the record ends before its header");
      const auto bytes = h.bytes();
      auto v = from_header(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()), limit);
      const std::uint64_t loaded = in.load_unsigned();
      if (in.failed() || loaded > v->pending.payload_size)
        throw format_error("the record says " + std::to_string(loaded) + " payload bytes of " +
                           std::to_string(v->pending.payload_size) + " were loaded");
      if (v->complete()) return v;
      while (v->loaded < loaded) {
        const rdb_buffer piece = in.load_string();
        if (!piece.valid() || piece.bytes().empty() || piece.bytes().size() > loaded - v->loaded)
          throw format_error("the record's payload strings do not add up to " + std::to_string(loaded) + " bytes");
        std::memcpy(v->payload.data() + v->loaded, piece.bytes().data(), piece.bytes().size());
        v->loaded += piece.bytes().size();
      }
      if (v->loaded == v->pending.payload_size) finish(*v);
      return v;
    } catch (const over_limit& e) {
      *why = e.what();
    } catch (const std::bad_alloc&) {
      *why = "not enough memory for the filter";
    } catch (const std::exception& e) {
      *why = std::string("bad filter record: ") + e.what();
    }
    return nullptr;
  }

 private:
  static void finish(value_type& v) {
    native_detail::with_alternative<filter_type>(Select::index(v.pending), [&](auto type) {
      using F = typename decltype(type)::type;
      v.filter.emplace(std::in_place_type<F>, from_parts<F>(v.pending, std::move(v.payload)));
    });
    v.payload = byte_storage();
    v.pending_header.clear();
    v.loaded = 0;
  }
};

}  // namespace blume::redis
