// SPDX-License-Identifier: Apache-2.0
// WBF.*: "seen within the last window", the expiring items RedisBloom's users have asked for since 2019.
// blume's aging filter keeps two buffers that take turns, each holding half the window: an item added in
// the last half window is always found, one older than the window never is, and in between it depends on
// where the turn fell. The window is a time (WINDOW seconds) or a count of items (ITEMS count). Time is
// the primary's: writes are replicated with the time they were executed at (WBF.ADDAT), so replicas and an
// AOF replayed later turn the buffers at the same moments.
#include <chrono>
#include <cmath>
#include <cstdint>
#include <exception>
#include <new>
#include <span>
#include <string>

#include "commands.hpp"
#include "config.hpp"
#include "data_type.hpp"
#include "memory.hpp"
#include "native_commands.hpp"
#include "surface.hpp"
#include "window_codec.hpp"

namespace blume::redis {
namespace {

using codec = window_codec;
using value_type = codec::value_type;

RedisModuleType* window_type = nullptr;
constexpr int encoding_version = 1;

struct window_spec {
  using codec = window_codec;
  static RedisModuleType* type() { return window_type; }
  static constexpr const char* loading = "ERR the filter is still being loaded (WBF.LOADCHUNK)";
  static constexpr const char* loadchunk_command = "WBF.LOADCHUNK";
};
using native = native_commands<window_spec>;
// The aging filter counts time in int64 nanoseconds since 1970, which ends in 2262: windows and times stay
// inside it.
constexpr long long max_window_seconds = 9'000'000'000LL;
constexpr long long max_time_ms = 9'000'000'000'000LL;

std::uint64_t memory_limit() { return static_cast<std::uint64_t>(config().max_filter_memory); }

window_filter::time_point at_ms(long long ms) {
  return window_filter::time_point(
      std::chrono::duration_cast<window_filter::time_point::duration>(std::chrono::milliseconds(ms)));
}

/// Adds argv[first, argc) at time `ms`: 1 for an item not seen within the window.
void add_at(RedisModuleCtx* ctx, value_type& v, RedisModuleString** argv, int argc, int first, long long ms,
            bool multi) {
  auto& f = std::get<window_filter>(*v.filter);
  if (multi) api::ReplyWithArray(ctx, argc - first);
  for (int i = first; i < argc; ++i) reply_bool(ctx, f.insert(f.hash(text(argv[i])), at_ms(ms)));
}

/// The replication form of an add: WBF.ADDAT key <the primary's time> item [item ...].
void replicate_at(RedisModuleCtx* ctx, RedisModuleString** argv, int argc, int first, long long ms) {
  api::Replicate(ctx, "WBF.ADDAT", "slv", argv[1], ms, argv + first, static_cast<std::size_t>(argc - first));
}

// ---- commands ---------------------------------------------------------------------------------------

/// WBF.RESERVE key error_rate capacity WINDOW seconds | ITEMS count [TTL seconds] [AT unix-ms]
int reserve(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  if (argc < 6 || argc > 10 || argc % 2 != 0) return api::WrongArity(ctx);
  const auto rate = to_double(argv[2]);
  if (!rate) return reply_error(ctx, "ERR bad error rate");
  if (!(*rate > 0 && *rate < 1)) return reply_error(ctx, "ERR error rate must be in the range (0.000000, 1.000000)");
  const auto capacity = to_integer(argv[3]);
  if (!capacity) return reply_error(ctx, "ERR bad capacity");
  if (*capacity < 2 || *capacity > config().max_capacity) {
    const std::string msg = "ERR capacity must be in the range [2, " + std::to_string(config().max_capacity) + "]";
    return reply_error(ctx, msg.c_str());
  }
  long long window_seconds = 0, window_items = 0;
  long long at = api::Milliseconds();
  key_ttl ttl;
  for (int i = 4; i < argc; i += 2) {
    const auto n = to_integer(argv[i + 1]);
    if (is_word(argv[i], "WINDOW")) {
      if (!n || *n < 1 || *n > max_window_seconds)
        return reply_error(ctx, "ERR WINDOW must be an integer in the range [1, 9000000000] seconds");
      window_seconds = *n;
    } else if (is_word(argv[i], "ITEMS")) {
      if (!n || *n < 2 || *n > *capacity)
        return reply_error(ctx, "ERR ITEMS must be an integer in the range [2, capacity]");
      window_items = *n;
    } else if (is_word(argv[i], "TTL")) {
      if (const char* e = parse_ttl(argv, argc, i, &ttl)) return reply_error(ctx, e);
    } else if (is_word(argv[i], "AT")) {
      if (!n || *n < 0 || *n > max_time_ms) return reply_error(ctx, "ERR AT must be a time in Unix milliseconds");
      at = *n;
    } else {
      return reply_error(ctx, "ERR syntax error: expected WINDOW, ITEMS, TTL or AT");
    }
  }
  if ((window_seconds != 0) == (window_items != 0))
    return reply_error(ctx, "ERR give exactly one of WINDOW seconds and ITEMS count");
  open_key key(ctx, argv[1], api::open_read | api::open_write);
  if (key.wrong_type(window_type)) return reply_error(ctx, api::errormsg_wrongtype);
  if (!key.empty()) return reply_error(ctx, item_exists);
  // A time window holds up to `capacity` items; a count window is its count, which is all it ever holds.
  const auto items = static_cast<std::uint64_t>(window_items != 0 ? window_items : *capacity);
  try {
    const filter_plan plan = window_filter::plan(items, *rate);
    if (const std::uint64_t needed = header_size + 32 + plan.bytes; !within_filter_limit(ctx, needed))
      return reply_error(ctx, over_limit_reply(needed, memory_limit()).c_str());
    if (!memory_allows(ctx, plan.bytes)) return reply_error(ctx, "ERR Insufficient memory to create filter");
    auto v = std::make_unique<value_type>();
    v->filter.emplace(std::in_place_type<window_filter>, items, *rate, std::chrono::seconds(window_seconds),
                      window_filter::hasher_type::default_seed, at_ms(at));
    v->design = {static_cast<std::uint64_t>(*capacity), *rate};
    api::ModuleTypeSetValue(key.get(), window_type, v.release());
  } catch (const std::bad_alloc&) {
    return reply_error(ctx, "ERR Insufficient memory to create filter");
  } catch (const std::exception& e) {
    const std::string msg = std::string("ERR could not create filter: ") + e.what();
    return reply_error(ctx, msg.c_str());
  }
  api::ReplyWithSimpleString(ctx, "OK");
  // Replicas and the AOF get the creation time, where the first half window starts.
  if (find_word(argv, argc, 4, "AT") >= 0) {
    api::ReplicateVerbatim(ctx);
  } else {
    api::Replicate(ctx, "WBF.RESERVE", "svcl", argv[1], argv + 2, static_cast<std::size_t>(argc - 2), "AT", at);
  }
  apply_ttl(ctx, key, argv[1], ttl);
  return api::ok;
}

/// WBF.ADD key item / WBF.MADD key item [item ...]: 1 for an item not seen within the window.
int add_items(RedisModuleCtx* ctx, RedisModuleString** argv, int argc, bool multi) {
  open_key key(ctx, argv[1], api::open_read | api::open_write);
  value_type* v = native::existing<value_type>(ctx, key);
  if (v == nullptr) return api::ok;
  const long long now = api::Milliseconds();
  add_at(ctx, *v, argv, argc, 2, now, multi);
  replicate_at(ctx, argv, argc, 2, now);
  return api::ok;
}

/// WBF.ADDAT key unix-ms item [item ...]: WBF.MADD at a given time, the form writes are replicated in.
int add_at_time(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  if (argc < 4) return api::WrongArity(ctx);
  const auto ms = to_integer(argv[2]);
  if (!ms || *ms < 0 || *ms > max_time_ms) return reply_error(ctx, "ERR the time must be Unix milliseconds");
  open_key key(ctx, argv[1], api::open_read | api::open_write);
  value_type* v = native::existing<value_type>(ctx, key);
  if (v == nullptr) return api::ok;
  add_at(ctx, *v, argv, argc, 3, *ms, true);
  api::ReplicateVerbatim(ctx);
  return api::ok;
}

/// WBF.EXISTS key item / WBF.MEXISTS key item [item ...]: 1 for an item seen within the window; 0 means
/// absent from the window (never added, or added too long ago), not "never added".
int exists_items(RedisModuleCtx* ctx, RedisModuleString** argv, int argc, bool multi) {
  open_key key(ctx, argv[1], api::open_read);
  const value_type* v = nullptr;
  if (!native::readable(ctx, key, &v)) return api::ok;
  const auto now = at_ms(api::Milliseconds());
  if (multi) api::ReplyWithArray(ctx, argc - 2);
  for (int i = 2; i < argc; ++i) {
    const window_filter* f = v == nullptr ? nullptr : &std::get<window_filter>(*v->filter);
    reply_bool(ctx, f != nullptr && f->contains(f->hash(text(argv[i])), now));
  }
  return api::ok;
}

/// WBF.INFO key
int info(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  if (argc != 2) return api::WrongArity(ctx);
  open_key key(ctx, argv[1], api::open_read);
  const value_type* v = native::existing<const value_type>(ctx, key);
  if (v == nullptr) return api::ok;
  const window_filter& f = std::get<window_filter>(*v->filter);
  const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(f.window_time()).count();
  using field = info_field;
  const field fields[] = {
      field::of("Capacity", static_cast<long long>(v->design.items)),
      field::of("Error rate", v->design.fpr),
      seconds == 0 ? field::none("Window seconds") : field::of("Window seconds", static_cast<long long>(seconds)),
      field::of("Window items", static_cast<long long>(f.window())),
      field::of("Size", static_cast<long long>(codec::size(*v))),
      field::of("Number of hash functions", static_cast<long long>(f.active_buffer().hashes())),
      field::of("Number of items in the window", static_cast<long long>(f.inserted())),
      field::estimate("Estimated items", f.estimated_count()),
      field::of("Predicted error rate", f.predicted_fpr()),
  };
  reply_info(ctx, fields);
  return api::ok;
}

}  // namespace

bool register_window(RedisModuleCtx* ctx) {
  const command commands[] = {
      {"wbf.reserve", reserve, "write deny-oom"},
      {"wbf.add", one_item<add_items>, "write deny-oom"},
      {"wbf.madd", many_items<add_items>, "write deny-oom"},
      {"wbf.addat", add_at_time, "write deny-oom"},
      {"wbf.exists", one_item<exists_items>, "readonly fast"},
      {"wbf.mexists", many_items<exists_items>, "readonly fast"},
      {"wbf.info", info, "readonly fast"},
      {"wbf.scandump", native::scandump, "readonly"},
      {"wbf.loadchunk", native::loadchunk, "write deny-oom"},
  };
  window_type = data_type<native::traits>::create(ctx, "blume-WBF", encoding_version, commands);
  return window_type != nullptr;
}

}  // namespace blume::redis
