// SPDX-License-Identifier: Apache-2.0
// What the module's own types (CBF, WBF) share on the server side: finding a complete value, SCANDUMP
// and LOADCHUNK over native.hpp's stream, and the data type's callbacks. A type supplies a Spec:
//   codec            its native_codec
//   type             a RedisModuleType*& filled at registration
//   loading          the error for a value LOADCHUNK is still filling
//   loadchunk_command the command the AOF rewrite emits
#pragma once

#include <cmath>
#include <exception>
#include <new>
#include <span>
#include <string>
#include <string_view>

#include "data_type.hpp"
#include "memory.hpp"
#include "native.hpp"
#include "surface.hpp"

namespace blume::redis {

/// One field of a native type's INFO reply: an integer, a double, or null.
struct info_field {
  const char* label;
  enum class type { integer, real, null } kind;
  long long integer = 0;
  double real = 0;

  static info_field of(const char* label, long long v) { return {label, type::integer, v, 0}; }
  static info_field of(const char* label, double v) { return {label, type::real, 0, v}; }
  static info_field none(const char* label) { return {label, type::null, 0, 0}; }
  /// An estimated count: rounded, or null when the fill allows no finite estimate.
  static info_field estimate(const char* label, double n) {
    return std::isfinite(n) ? of(label, std::llround(n)) : none(label);
  }
};

/// The INFO reply: a map of the fields (a flat array in RESP2).
inline void reply_info(RedisModuleCtx* ctx, std::span<const info_field> fields) {
  api::ReplyWithMap(ctx, static_cast<long>(fields.size()));
  for (const info_field& f : fields) {
    api::ReplyWithSimpleString(ctx, f.label);
    switch (f.kind) {
      case info_field::type::integer: api::ReplyWithLongLong(ctx, f.integer); break;
      case info_field::type::real: api::ReplyWithDouble(ctx, f.real); break;
      case info_field::type::null: api::ReplyWithNull(ctx); break;
    }
  }
}

template <class Spec>
struct native_commands {
  using codec = typename Spec::codec;
  using value_type = typename codec::value_type;

  /// The value at `key` for a command that needs a complete one: null after replying "not found",
  /// WRONGTYPE or "still being loaded".
  template <class V>
  static V* existing(RedisModuleCtx* ctx, const open_key& key) {
    V* v = key.template value<value_type>(Spec::type());
    if (v == nullptr) {
      reply_error(ctx, key.wrong_type(Spec::type()) ? api::errormsg_wrongtype : not_found);
    } else if (!v->complete()) {
      reply_error(ctx, Spec::loading);
      return nullptr;
    }
    return v;
  }

  /// A value for a read that answers 0 for a missing key: *v is null for a missing key; false after
  /// replying WRONGTYPE or "still being loaded".
  static bool readable(RedisModuleCtx* ctx, const open_key& key, const value_type** v) {
    *v = key.template value<value_type>(Spec::type());
    if (*v == nullptr && key.wrong_type(Spec::type())) {
      reply_error(ctx, api::errormsg_wrongtype);
      return false;
    }
    if (*v != nullptr && !(*v)->complete()) {
      reply_error(ctx, Spec::loading);
      return false;
    }
    return true;
  }

  /// <TYPE>.SCANDUMP key iterator: the filter as blume's file bytes.
  static int scandump(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
    if (argc != 3) return api::WrongArity(ctx);
    const auto iterator = to_integer(argv[2]);
    if (!iterator) return reply_error(ctx, "ERR Second argument must be numeric");
    open_key key(ctx, argv[1], api::open_read);
    const value_type* v = existing<const value_type>(ctx, key);
    if (v == nullptr) return api::ok;
    api::ReplyWithArray(ctx, 2);
    if (*iterator == 0) {
      const std::string header = codec::header(*v);
      api::ReplyWithLongLong(ctx, 1);
      api::ReplyWithStringBuffer(ctx, header.data(), header.size());
      return api::ok;
    }
    const redisbloom::chunk c = codec::chunk(*v, *iterator);
    api::ReplyWithLongLong(ctx, c.next);
    api::ReplyWithStringBuffer(ctx, reinterpret_cast<const char*>(c.bytes.data()), c.bytes.size());
    return api::ok;
  }

  /// <TYPE>.LOADCHUNK key iterator data
  static int loadchunk(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
    if (argc != 4) return api::WrongArity(ctx);
    const auto iterator = to_integer(argv[2]);
    if (!iterator) return reply_error(ctx, "ERR Second argument must be numeric");
    open_key key(ctx, argv[1], api::open_read | api::open_write);
    value_type* v = key.template value<value_type>(Spec::type());
    if (v == nullptr && key.empty() && *iterator == 1) {
      try {
        const file_header h = codec::checked_header(text(argv[3]), filter_limit_for(ctx));
        if (!memory_allows(ctx, h.payload_size)) return reply_error(ctx, "ERR Insufficient memory to create filter");
        api::ModuleTypeSetValue(key.get(), Spec::type(), codec::from_checked_header(text(argv[3]), h).release());
      } catch (const over_limit& e) {
        return reply_error(ctx, e.what());
      } catch (const std::bad_alloc&) {
        return reply_error(ctx, "ERR Insufficient memory to create filter");
      } catch (const std::exception& e) {
        const std::string msg = std::string("ERR received bad data: ") + e.what();
        return reply_error(ctx, msg.c_str());
      }
      api::ReplyWithSimpleString(ctx, "OK");
      api::ReplicateVerbatim(ctx);
      return api::ok;
    }
    if (v == nullptr) return reply_error(ctx, key.wrong_type(Spec::type()) ? api::errormsg_wrongtype : not_found);
    std::string why;
    const std::string_view data = text(argv[3]);
    const auto status =
        codec::load_chunk(*v, *iterator, std::as_bytes(std::span<const char>(data.data(), data.size())), &why);
    switch (status) {
      case codec::chunk_status::ok: break;
      case codec::chunk_status::not_loading: return reply_error(ctx, "ERR the filter is complete: nothing to load");
      case codec::chunk_status::out_of_order:
        return reply_error(ctx, "ERR invalid chunk: it does not start where the loaded bytes end");
      case codec::chunk_status::too_big: return reply_error(ctx, "ERR invalid chunk - Too big for current filter");
      case codec::chunk_status::corrupt:
      case codec::chunk_status::failed: {
        // A filter whose bytes fail their checksum could say "no" for an item it holds, and one that could
        // not be assembled has given its payload away: neither is kept.
        api::DeleteKey(key.get());
        api::ReplicateVerbatim(ctx);
        const std::string msg = std::string(status == codec::chunk_status::corrupt ? "ERR received bad data: "
                                                                                   : "ERR Insufficient memory: ") +
                                why + "; the key was deleted";
        return reply_error(ctx, msg.c_str());
      }
    }
    api::ReplyWithSimpleString(ctx, "OK");
    api::ReplicateVerbatim(ctx);
    return api::ok;
  }

  /// What data_type needs to know of the type.
  struct traits {
    using value_type = native_commands::value_type;
    static constexpr const char* loadchunk_command = Spec::loadchunk_command;
    static std::string header(const value_type& v) { return codec::header(v); }
    static redisbloom::chunk chunk(const value_type& v, long long iterator) { return codec::chunk(v, iterator); }
    static std::size_t size(const value_type& v) { return codec::size(v); }
    static void* rdb_load(RedisModuleIO* io, int encver) {
      return rdb_load_with(io, encver, [](rdb_reader& in, int version, const rdb_limits& limits, std::string* why) {
        return codec::load(in, version, limits.max_filter_memory, why);
      });
    }
    static void rdb_save(RedisModuleIO* io, void* value) {
      module_rdb_writer out(io);
      codec::save(out, *static_cast<const value_type*>(value));
    }
  };
  static_assert(data_type_traits<traits>);
};

}  // namespace blume::redis
