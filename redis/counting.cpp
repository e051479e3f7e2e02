// SPDX-License-Identifier: Apache-2.0
// CBF.*: counting Bloom filters, the deletable Bloom filter RedisBloom's users have asked for since 2017
// (a bit of BF.* cannot be unset). Each probe position is a 4- or 8-bit counter; blume's
// counting_bloom_filter does the work and the value is stored in blume's file format (native.hpp).
#include <cmath>
#include <cstdint>
#include <exception>
#include <new>
#include <span>
#include <string>
#include <variant>

#include "commands.hpp"
#include "config.hpp"
#include "counting_codec.hpp"
#include "data_type.hpp"
#include "memory.hpp"
#include "native_commands.hpp"
#include "surface.hpp"

namespace blume::redis {
namespace {

using codec = counting_codec;
using value_type = codec::value_type;

RedisModuleType* counting_type = nullptr;
constexpr int encoding_version = 1;

struct counting_spec {
  using codec = counting_codec;
  static RedisModuleType* type() { return counting_type; }
  static constexpr const char* loading = "ERR the filter is still being loaded (CBF.LOADCHUNK)";
  static constexpr const char* loadchunk_command = "CBF.LOADCHUNK";
};
using native = native_commands<counting_spec>;

std::uint64_t memory_limit() { return static_cast<std::uint64_t>(config().max_filter_memory); }

template <class Fn>
decltype(auto) with_filter(value_type& v, Fn&& fn) {
  return std::visit(fn, *v.filter);
}
template <class Fn>
decltype(auto) with_filter(const value_type& v, Fn&& fn) {
  return std::visit(fn, *v.filter);
}

struct creation {
  double error_rate;
  long long capacity;
  unsigned width;
};

/// Creates the filter at an empty key; an error reply (returned) when memory does not allow it.
value_type* create(RedisModuleCtx* ctx, const open_key& key, const creation& c, std::string* error) {
  try {
    const filter_plan plan = c.width == 8 ? counting8::plan(static_cast<std::uint64_t>(c.capacity), c.error_rate)
                                          : counting4::plan(static_cast<std::uint64_t>(c.capacity), c.error_rate);
    if (const std::uint64_t needed = header_size + plan.bytes; !within_filter_limit(ctx, needed)) {
      *error = over_limit_reply(needed, memory_limit());
      return nullptr;
    }
    if (!memory_allows(ctx, plan.bytes)) {
      *error = "ERR Insufficient memory to create filter";
      return nullptr;
    }
    auto v = std::make_unique<value_type>();
    if (c.width == 8) {
      v->filter.emplace(std::in_place_type<counting8>, plan);
    } else {
      v->filter.emplace(std::in_place_type<counting4>, plan);
    }
    v->design = {static_cast<std::uint64_t>(c.capacity), c.error_rate};
    value_type* raw = v.release();
    api::ModuleTypeSetValue(key.get(), counting_type, raw);
    return raw;
  } catch (const std::bad_alloc&) {
    *error = "ERR Insufficient memory to create filter";
  } catch (const std::exception& e) {
    *error = std::string("ERR could not create filter: ") + e.what();
  }
  return nullptr;
}

creation defaults() {
  const module_config& c = config();
  return {c.bf_error_rate, c.bf_initial_size, 4};
}

// ---- commands ---------------------------------------------------------------------------------------

/// CBF.RESERVE key error_rate capacity [WIDTH 4|8] [TTL seconds]
int reserve(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  if (argc < 4 || argc > 8) return api::WrongArity(ctx);
  const auto rate = to_double(argv[2]);
  if (!rate) return reply_error(ctx, "ERR bad error rate");
  if (!(*rate > 0 && *rate < 1)) return reply_error(ctx, "ERR error rate must be in the range (0.000000, 1.000000)");
  const auto capacity = to_integer(argv[3]);
  if (!capacity) return reply_error(ctx, "ERR bad capacity");
  if (*capacity < 1 || *capacity > config().max_capacity) {
    const std::string msg = "ERR capacity must be in the range [1, " + std::to_string(config().max_capacity) + "]";
    return reply_error(ctx, msg.c_str());
  }
  creation c{*rate, *capacity, 4};
  key_ttl ttl;
  for (int i = 4; i < argc; i += 2) {
    if (is_word(argv[i], "WIDTH")) {
      const auto w = i + 1 < argc ? to_integer(argv[i + 1]) : std::nullopt;
      if (!w || (*w != 4 && *w != 8)) return reply_error(ctx, "ERR WIDTH must be 4 or 8 (bits per counter)");
      c.width = static_cast<unsigned>(*w);
    } else if (is_word(argv[i], "TTL")) {
      if (const char* e = parse_ttl(argv, argc, i, &ttl)) return reply_error(ctx, e);
    } else {
      return reply_error(ctx, "ERR syntax error: expected WIDTH or TTL");
    }
  }
  open_key key(ctx, argv[1], api::open_read | api::open_write);
  if (key.wrong_type(counting_type)) return reply_error(ctx, api::errormsg_wrongtype);
  if (!key.empty()) return reply_error(ctx, item_exists);
  std::string error;
  if (create(ctx, key, c, &error) == nullptr) return reply_error(ctx, error.c_str());
  api::ReplyWithSimpleString(ctx, "OK");
  api::ReplicateVerbatim(ctx);
  apply_ttl(ctx, key, argv[1], ttl);
  return api::ok;
}

/// CBF.ADD key item / CBF.MADD key item [item ...]: creates a missing filter with bf-error-rate,
/// bf-initial-size and 4-bit counters, as BF.ADD does. 1 when the item was not there (a counter was 0).
int add_items(RedisModuleCtx* ctx, RedisModuleString** argv, int argc, bool multi) {
  open_key key(ctx, argv[1], api::open_read | api::open_write);
  value_type* v = key.value<value_type>(counting_type);
  if (v == nullptr) {
    if (key.wrong_type(counting_type)) return reply_error(ctx, api::errormsg_wrongtype);
    std::string error;
    v = create(ctx, key, defaults(), &error);
    if (v == nullptr) return reply_error(ctx, error.c_str());
  }
  if (!v->complete()) return reply_error(ctx, counting_spec::loading);
  if (multi) api::ReplyWithArray(ctx, argc - 2);
  with_filter(*v, [&](auto& f) {
    for (int i = 2; i < argc; ++i) reply_bool(ctx, f.insert(f.hash(text(argv[i]))));
  });
  api::ReplicateVerbatim(ctx);
  return api::ok;
}

/// CBF.DEL key item: 1 when one occurrence was removed; 0 when the item is certainly not there (a
/// counter is 0), and nothing changes.
int del(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  if (argc != 3) return api::WrongArity(ctx);
  open_key key(ctx, argv[1], api::open_read | api::open_write);
  value_type* v = native::existing<value_type>(ctx, key);
  if (v == nullptr) return api::ok;
  const bool removed = with_filter(*v, [&](auto& f) { return f.erase(f.hash(text(argv[2]))); });
  reply_bool(ctx, removed);
  if (removed) api::ReplicateVerbatim(ctx);
  return api::ok;
}

/// CBF.EXISTS key item / CBF.MEXISTS key item [item ...]: 0 for a missing key.
int exists_items(RedisModuleCtx* ctx, RedisModuleString** argv, int argc, bool multi) {
  open_key key(ctx, argv[1], api::open_read);
  const value_type* v = nullptr;
  if (!native::readable(ctx, key, &v)) return api::ok;
  if (multi) api::ReplyWithArray(ctx, argc - 2);
  for (int i = 2; i < argc; ++i) {
    const bool maybe = v != nullptr &&
                       with_filter(*v, [&](const auto& f) { return f.contains(f.hash(text(argv[i]))); });
    reply_bool(ctx, maybe);
  }
  return api::ok;
}

/// CBF.COUNT key item: the item's smallest counter, an upper bound on its adds less its deletes (0 for a
/// missing key; a saturated counter reads as its maximum).
int count(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  if (argc != 3) return api::WrongArity(ctx);
  open_key key(ctx, argv[1], api::open_read);
  const value_type* v = nullptr;
  if (!native::readable(ctx, key, &v)) return api::ok;
  const std::uint64_t n = v == nullptr ? 0
                                       : with_filter(*v, [&](const auto& f) { return f.count(f.hash(text(argv[2]))); });
  api::ReplyWithLongLong(ctx, static_cast<long long>(n));
  return api::ok;
}

/// CBF.INFO key: the design, the geometry and the counts, as a map (a flat array in RESP2).
int info(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  if (argc != 2) return api::WrongArity(ctx);
  open_key key(ctx, argv[1], api::open_read);
  const value_type* v = native::existing<const value_type>(ctx, key);
  if (v == nullptr) return api::ok;
  with_filter(*v, [&](const auto& f) {
    using F = std::decay_t<decltype(f)>;
    using field = info_field;
    const field fields[] = {
        field::of("Capacity", static_cast<long long>(v->design.items)),
        field::of("Error rate", v->design.fpr),
        field::of("Size", static_cast<long long>(codec::size(*v))),
        field::of("Number of counters", static_cast<long long>(f.bits())),
        field::of("Counter width", static_cast<long long>(F::layout_type::block_bits)),
        field::of("Number of hash functions", static_cast<long long>(f.hashes())),
        field::of("Number of items inserted", static_cast<long long>(f.inserted())),
        field::estimate("Estimated items", f.estimated_count()),
        field::of("Predicted error rate", f.predicted_fpr()),
    };
    reply_info(ctx, fields);
  });
  return api::ok;
}

}  // namespace

bool register_counting(RedisModuleCtx* ctx) {
  const command commands[] = {
      {"cbf.reserve", reserve, "write deny-oom"},
      {"cbf.add", one_item<add_items>, "write deny-oom"},
      {"cbf.madd", many_items<add_items>, "write deny-oom"},
      {"cbf.del", del, "write"},
      {"cbf.exists", one_item<exists_items>, "readonly fast"},
      {"cbf.mexists", many_items<exists_items>, "readonly fast"},
      {"cbf.count", count, "readonly fast"},
      {"cbf.info", info, "readonly fast"},
      {"cbf.scandump", native::scandump, "readonly"},
      {"cbf.loadchunk", native::loadchunk, "write deny-oom"},
  };
  counting_type = data_type<native::traits>::create(ctx, "blume-CBF", encoding_version, commands);
  return counting_type != nullptr;
}

}  // namespace blume::redis
