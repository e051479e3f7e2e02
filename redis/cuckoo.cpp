// SPDX-License-Identifier: Apache-2.0
// CF.*: RedisBloom's cuckoo filter commands, replies and errors (8.x where 2.8 differs), over blume's
// RedisBloom-compatible cuckoo filter (blume/compat/redisbloom.hpp) and its codec (blume/compat/redisbloom_format.hpp).
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <memory>
#include <new>
#include <span>
#include <string>
#include <vector>

#include "blume/compat/redisbloom_format.hpp"
#include "commands.hpp"
#include "config.hpp"
#include "data_type.hpp"
#include "memory.hpp"
#include "surface.hpp"

namespace blume::redis {
namespace {

namespace rb = blume::redisbloom;
using value_type = rb::cuckoo_value;

RedisModuleType* cuckoo_type = nullptr;
constexpr int encoding_version = cuckoo_encoding_version;

// RedisBloom's Size (CF.INFO, MEMORY USAGE): sizeof(CuckooFilter) + one SubCF per sub-filter + the slots.
std::uint64_t reported_size(const value_type& v) { return filter_memory(rb::record_of(v)); }
std::uint64_t memory_limit() { return static_cast<std::uint64_t>(config().max_filter_memory); }

std::span<const std::byte> bytes_of(const RedisModuleString* s) {
  const std::string_view t = text(s);
  return {reinterpret_cast<const std::byte*>(t.data()), t.size()};
}

/// A filter of `capacity` with the configured bucket size, iterations and expansion, at an empty key.
value_type* create(RedisModuleCtx* ctx, const open_key& key, long long capacity, long long bucket_size,
                   long long max_iterations, long long expansion, std::string* error) {
  try {
    const cuckoo_geometry g =
        redisbloom_cuckoo_geometry(static_cast<std::uint64_t>(capacity), static_cast<std::uint32_t>(bucket_size),
                                   static_cast<std::uint32_t>(max_iterations), static_cast<std::uint32_t>(expansion));
    const std::uint64_t needed = cuckoo_fixed_bytes + cuckoo_sub_filter_bytes + g.buckets * g.bucket_size;
    if (!within_filter_limit(ctx, needed)) {
      *error = over_limit_reply(needed, memory_limit());
      return nullptr;
    }
    if (!memory_allows(ctx, g.buckets * g.bucket_size)) {
      *error = "ERR Insufficient memory to create filter";
      return nullptr;
    }
    auto* v = new value_type{redisbloom_cuckoo_filter(g), 0, 0};
    api::ModuleTypeSetValue(key.get(), cuckoo_type, v);
    return v;
  } catch (const std::bad_alloc&) {
    *error = "ERR Insufficient memory to create filter";
  } catch (const std::exception&) {
    *error = "ERR could not create filter";
  }
  return nullptr;
}

value_type* create_default(RedisModuleCtx* ctx, const open_key& key, long long capacity, std::string* error) {
  const module_config& c = config();
  return create(ctx, key, capacity, c.cf_bucket_size, c.cf_max_iterations, c.cf_expansion_factor, error);
}

enum class add_outcome { added, exists, full, no_memory, over_limit };

/// One CF.ADD / CF.ADDNX: RedisBloom grows when relocation fails and expansion is not 0; we also refuse a
/// sub-filter the memory budget or bf.max-filter-memory cannot hold.
add_outcome add(RedisModuleCtx* ctx, value_type& v, const digest& d, bool unique) {
  if (unique && v.filter.contains(d)) return add_outcome::exists;
  switch (rb::cuckoo_insert_without_growing(v, d)) {
    case rb::cuckoo_add::added: return add_outcome::added;
    case rb::cuckoo_add::full: return v.filter.geometry().expansion == 0 ? add_outcome::full : add_outcome::no_memory;
    case rb::cuckoo_add::needs_growth: break;
  }
  const std::uint64_t bytes = v.filter.next_sub_filter_bytes();
  if (!within_filter_limit(ctx, reported_size(v) + cuckoo_sub_filter_bytes + bytes)) return add_outcome::over_limit;
  if (!memory_allows(ctx, bytes)) return add_outcome::no_memory;
  try {
    return rb::cuckoo_insert_growing(v, d) ? add_outcome::added : add_outcome::no_memory;
  } catch (const std::bad_alloc&) {
    return add_outcome::no_memory;
  }
}

/// Opens argv[1] and answers "not found" or WRONGTYPE when it holds no cuckoo filter.
value_type* existing(RedisModuleCtx* ctx, const open_key& key) {
  value_type* v = key.value<value_type>(cuckoo_type);
  if (v == nullptr) reply_error(ctx, key.wrong_type(cuckoo_type) ? api::errormsg_wrongtype : not_found);
  return v;
}

bool too_many_filters(const value_type& v) {
  return static_cast<long long>(v.filter.sub_filters()) >= config().cf_max_expansions;
}

// ---- commands ---------------------------------------------------------------------------------------

/// CF.RESERVE key capacity [BUCKETSIZE n] [MAXITERATIONS n] [EXPANSION n] [TTL seconds] (TTL is ours)
int reserve(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  if (argc < 3 || argc % 2 == 0) return api::WrongArity(ctx);
  key_ttl ttl;
  if (const int at = find_word(argv, argc, 3, "TTL"); at >= 0)
    if (const char* e = parse_ttl(argv, argc, at, &ttl)) return reply_error(ctx, e);
  const auto capacity = to_integer(argv[2]);
  if (!capacity) return reply_error(ctx, "Bad capacity");
  const module_config& c = config();
  long long max_iterations = c.cf_max_iterations, bucket_size = c.cf_bucket_size, expansion = c.cf_expansion_factor;
  // RedisBloom's order of checks, whatever the options' order in the command.
  struct option {
    const char* word;
    long long* value;
    long long min, max;
    const char* unparsable;
    const char* out_of_range;
  };
  const option options[] = {
      {"MAXITERATIONS", &max_iterations, 1, 65535, "Couldn't parse MAXITERATIONS",
       "MAXITERATIONS: value must be in the range [1, 65535]"},
      {"BUCKETSIZE", &bucket_size, 1, 255, "Couldn't parse BUCKETSIZE",
       "BUCKETSIZE: value must be in the range [1, 255]"},
      {"EXPANSION", &expansion, 0, 32768, "Couldn't parse EXPANSION",
       "EXPANSION: value must be in the range [0, 32768]"},
  };
  for (const option& o : options) {
    const int at = find_word(argv, argc, 3, o.word);
    if (at < 0) continue;
    if (at + 1 == argc) return api::WrongArity(ctx);
    const auto v = to_integer(argv[at + 1]);
    if (!v) return reply_error(ctx, o.unparsable);
    if (*v < o.min || *v > o.max) return reply_error(ctx, o.out_of_range);
    *o.value = *v;
  }
  if (*capacity < 2 * bucket_size || *capacity > c.max_capacity) {
    const std::string msg = "Capacity must be in the range [2 * BUCKETSIZE, " + std::to_string(c.max_capacity) + "]";
    return reply_error(ctx, msg.c_str());
  }
  open_key key(ctx, argv[1], api::open_read | api::open_write);
  if (key.wrong_type(cuckoo_type)) return reply_error(ctx, api::errormsg_wrongtype);
  if (!key.empty()) return reply_error(ctx, item_exists);
  std::string error;
  if (create(ctx, key, *capacity, bucket_size, max_iterations, expansion, &error) == nullptr)
    return reply_error(ctx, error.c_str());
  api::ReplyWithSimpleString(ctx, "OK");
  api::ReplicateVerbatim(ctx);
  apply_ttl(ctx, key, argv[1], ttl);
  return api::ok;
}

/// CF.ADD key item / CF.ADDNX key item
int add_command(RedisModuleCtx* ctx, RedisModuleString** argv, int argc, bool unique) {
  if (argc != 3) return api::WrongArity(ctx);
  open_key key(ctx, argv[1], api::open_read | api::open_write);
  value_type* v = key.value<value_type>(cuckoo_type);
  if (v == nullptr) {
    if (key.wrong_type(cuckoo_type)) return reply_error(ctx, api::errormsg_wrongtype);
    std::string error;
    v = create_default(ctx, key, config().cf_initial_size, &error);
    if (v == nullptr) return reply_error(ctx, error.c_str());
  }
  if (too_many_filters(*v)) return reply_error(ctx, "Maximum expansions reached");
  switch (add(ctx, *v, v->filter.hash(text(argv[2])), unique)) {
    case add_outcome::added: reply_bool(ctx, true); break;
    case add_outcome::exists: reply_bool(ctx, false); break;
    case add_outcome::full: api::ReplyWithError(ctx, "Filter is full"); break;
    case add_outcome::no_memory: api::ReplyWithError(ctx, "ERR Insufficient memory"); break;
    case add_outcome::over_limit: {
      const std::uint64_t needed = reported_size(*v) + cuckoo_sub_filter_bytes + v->filter.next_sub_filter_bytes();
      api::ReplyWithError(ctx, over_limit_reply(needed, memory_limit()).c_str());
      break;
    }
  }
  api::ReplicateVerbatim(ctx);
  return api::ok;
}
int add_one(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) { return add_command(ctx, argv, argc, false); }
int add_unique(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) { return add_command(ctx, argv, argc, true); }

/// CF.INSERT / CF.INSERTNX key [CAPACITY cap] [NOCREATE] ITEMS item [item ...]; options by first letter.
int insert_command(RedisModuleCtx* ctx, RedisModuleString** argv, int argc, bool unique) {
  if (argc < 4) return api::WrongArity(ctx);
  long long capacity = config().cf_initial_size;
  bool create_missing = true;
  int items = -1;
  for (int i = 2; i < argc && items < 0;) {
    switch (initial(argv[i])) {
      case 'c': {
        if (i + 1 == argc) return api::WrongArity(ctx);
        const auto cap = to_integer(argv[i + 1]);
        if (!cap) return reply_error(ctx, "Bad capacity");
        if (*cap < 2 * config().cf_bucket_size || *cap > config().max_capacity) {
          const std::string msg =
              "Capacity must be in the range [cf-bucket-size * 2, " + std::to_string(config().max_capacity) + "]";
          return reply_error(ctx, msg.c_str());
        }
        capacity = *cap;
        i += 2;
        break;
      }
      case 'i': items = i + 1; break;
      case 'n':
        create_missing = false;
        ++i;
        break;
      default: return reply_error(ctx, "Unknown argument received");
    }
  }
  if (items < 0 || items >= argc) return api::WrongArity(ctx);
  open_key key(ctx, argv[1], api::open_read | api::open_write);
  value_type* v = key.value<value_type>(cuckoo_type);
  if (v == nullptr) {
    if (key.wrong_type(cuckoo_type)) return reply_error(ctx, api::errormsg_wrongtype);
    if (!create_missing) return reply_error(ctx, not_found);
    std::string error;
    v = create_default(ctx, key, capacity, &error);
    if (v == nullptr) return reply_error(ctx, error.c_str());
  }
  if (too_many_filters(*v)) return reply_error(ctx, "Maximum expansions reached");
  // RESP2: 1 added, 0 present (INSERTNX), -1 no room. RESP3: CF.INSERT answers booleans (no room is
  // false); CF.INSERTNX keeps its integers.
  const bool booleans = !unique && resp3(ctx);
  api::ReplyWithArray(ctx, argc - items);
  for (int i = items; i < argc; ++i) {
    const add_outcome outcome = add(ctx, *v, v->filter.hash(text(argv[i])), unique);
    if (booleans) {
      api::ReplyWithBool(ctx, outcome == add_outcome::added ? 1 : 0);
    } else {
      api::ReplyWithLongLong(ctx, outcome == add_outcome::added ? 1 : outcome == add_outcome::exists ? 0 : -1);
    }
  }
  api::ReplicateVerbatim(ctx);
  return api::ok;
}
int insert(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) { return insert_command(ctx, argv, argc, false); }
int insert_unique(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  return insert_command(ctx, argv, argc, true);
}

/// CF.EXISTS / CF.MEXISTS: a missing key or another type answers 0.
int exists_items(RedisModuleCtx* ctx, RedisModuleString** argv, int argc, bool multi) {
  open_key key(ctx, argv[1], api::open_read);
  const value_type* v = key.value<value_type>(cuckoo_type);
  if (multi) api::ReplyWithArray(ctx, argc - 2);
  if (v == nullptr) {
    for (int i = 2; i < argc; ++i) reply_bool(ctx, false);
    return api::ok;
  }
  constexpr int batch = 32;
  digest digests[batch];
  for (int start = 2; start < argc; start += batch) {
    const int n = std::min(batch, argc - start);
    for (int j = 0; j < n; ++j) digests[j] = v->filter.hash(text(argv[start + j]));
    bool answers[batch];
    v->filter.contains_many(std::span<const digest>(digests, static_cast<std::size_t>(n)), answers);
    for (int j = 0; j < n; ++j) reply_bool(ctx, answers[j]);
  }
  return api::ok;
}

/// CF.COUNT key item: copies of the fingerprint (0 for a missing key or another type); always an integer.
int count(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  if (argc != 3) return api::WrongArity(ctx);
  open_key key(ctx, argv[1], api::open_read);
  const value_type* v = key.value<value_type>(cuckoo_type);
  api::ReplyWithLongLong(ctx,
                         v == nullptr ? 0 : static_cast<long long>(v->filter.count(v->filter.hash(text(argv[2])))));
  return api::ok;
}

/// CF.DEL key item
int del(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  if (argc != 3) return api::WrongArity(ctx);
  open_key key(ctx, argv[1], api::open_read | api::open_write);
  value_type* v = key.value<value_type>(cuckoo_type);
  if (v == nullptr) return reply_error(ctx, "Not found");
  api::ReplicateVerbatim(ctx);  // as RedisBloom: also when the item is absent
  reply_bool(ctx, rb::cuckoo_delete(*v, v->filter.hash(text(argv[2]))));
  return api::ok;
}

/// CF.COMPACT key
int compact(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  if (argc != 2) return api::WrongArity(ctx);
  open_key key(ctx, argv[1], api::open_read | api::open_write);
  value_type* v = key.value<value_type>(cuckoo_type);
  if (v == nullptr) return reply_error(ctx, "Cuckoo filter was not found");
  rb::cuckoo_compact(*v, true);
  api::ReplyWithSimpleString(ctx, "OK");
  api::ReplicateVerbatim(ctx);
  return api::ok;
}

/// CF.INFO key
int info(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  if (argc != 2) return api::WrongArity(ctx);
  open_key key(ctx, argv[1], api::open_read);
  const value_type* v = existing(ctx, key);
  if (v == nullptr) return api::ok;
  const cuckoo_geometry& g = v->filter.geometry();
  const std::pair<const char*, long long> fields[] = {
      {"Size", static_cast<long long>(reported_size(*v))},
      {"Number of buckets", static_cast<long long>(g.buckets)},
      {"Number of filters", static_cast<long long>(v->filter.sub_filters())},
      {"Number of items inserted", static_cast<long long>(v->items)},
      {"Number of items deleted", static_cast<long long>(v->deletes)},
      {"Bucket size", g.bucket_size},
      {"Expansion rate", g.expansion},
      {"Max iterations", g.max_kicks},
  };
  api::ReplyWithMap(ctx, 8);  // RESP2: a flat array of 16
  for (const auto& [label, value] : fields) {
    api::ReplyWithSimpleString(ctx, label);
    api::ReplyWithLongLong(ctx, value);
  }
  return api::ok;
}

/// CF.DEBUG key
int debug(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  if (argc != 2) return api::WrongArity(ctx);
  open_key key(ctx, argv[1], api::open_read);
  const value_type* v = existing(ctx, key);
  if (v == nullptr) return api::ok;
  const cuckoo_geometry& g = v->filter.geometry();
  char buf[256];
  const int n = std::snprintf(
      buf, sizeof buf, "bktsize:%u buckets:%llu items:%llu deletes:%llu filters:%zu max_iterations:%u expansion:%u",
      g.bucket_size, static_cast<unsigned long long>(g.buckets), static_cast<unsigned long long>(v->items),
      static_cast<unsigned long long>(v->deletes), v->filter.sub_filters(), g.max_kicks, g.expansion);
  api::ReplyWithStringBuffer(ctx, buf, static_cast<std::size_t>(n));
  return api::ok;
}

/// CF.SCANDUMP key iterator
int scandump(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  if (argc != 3) return api::WrongArity(ctx);
  const auto iterator = to_integer(argv[2]);
  if (!iterator || *iterator < 0) return reply_error(ctx, "Invalid position");
  open_key key(ctx, argv[1], api::open_read);
  const value_type* v = existing(ctx, key);
  if (v == nullptr) return api::ok;
  api::ReplyWithArray(ctx, 2);
  if (v->items == 0) {
    api::ReplyWithLongLong(ctx, 0);
    api::ReplyWithNull(ctx);
    return api::ok;
  }
  if (*iterator == 0) {
    const std::string header = rb::encode_header(rb::record_of(*v));
    api::ReplyWithLongLong(ctx, 1);
    api::ReplyWithStringBuffer(ctx, header.data(), header.size());
    return api::ok;
  }
  const rb::chunk c = rb::cuckoo_chunk(*v, *iterator);
  api::ReplyWithLongLong(ctx, c.next);
  if (c.next == 0) {
    api::ReplyWithNull(ctx);
  } else {
    api::ReplyWithStringBuffer(ctx, reinterpret_cast<const char*>(c.bytes.data()), c.bytes.size());
  }
  return api::ok;
}

/// CF.LOADCHUNK key iterator data
int loadchunk(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  if (argc != 4) return api::WrongArity(ctx);
  const auto iterator = to_integer(argv[2]);
  if (!iterator || *iterator == 0) return reply_error(ctx, "Invalid position");
  open_key key(ctx, argv[1], api::open_read | api::open_write);
  if (*iterator == 1) {
    if (key.wrong_type(cuckoo_type)) return reply_error(ctx, api::errormsg_wrongtype);
    if (!key.empty()) return reply_error(ctx, item_exists);
    if (text(argv[3]).size() != rb::cuckoo_header_bytes) return reply_error(ctx, "Invalid header");
    try {
      const auto max_sub_filters = static_cast<std::uint64_t>(config().cf_max_expansions);
      const rb::cuckoo_record r = cuckoo_header(text(argv[3]), filter_limit_for(ctx), max_sub_filters);
      if (!memory_allows(ctx, r.total_bytes())) return reply_error(ctx, "ERR Insufficient memory to create filter");
      api::ModuleTypeSetValue(key.get(), cuckoo_type, new value_type(rb::value_from(r, max_sub_filters)));
    } catch (const over_limit& e) {
      return reply_error(ctx, e.what());
    } catch (const std::bad_alloc&) {
      return reply_error(ctx, "ERR Insufficient memory to create filter");
    } catch (const std::exception&) {
      return reply_error(ctx, "Couldn't create filter!");
    }
    api::ReplyWithSimpleString(ctx, "OK");
    api::ReplicateVerbatim(ctx);
    return api::ok;
  }
  value_type* v = existing(ctx, key);
  if (v == nullptr) return api::ok;
  if (!rb::load_cuckoo_chunk(*v, *iterator, bytes_of(argv[3]))) return reply_error(ctx, "Couldn't load chunk!");
  api::ReplyWithSimpleString(ctx, "OK");
  api::ReplicateVerbatim(ctx);
  return api::ok;
}

// ---- the data type -------------------------------------------------------------------------------------

void* cuckoo_rdb_load(RedisModuleIO* io, int encver) { return rdb_load_with(io, encver, load_cuckoo); }

void cuckoo_rdb_save(RedisModuleIO* io, void* value) {
  module_rdb_writer out(io);
  save_cuckoo(out, *static_cast<const value_type*>(value));
}

/// What data_type needs to know of a cuckoo filter value.
struct cuckoo_traits {
  using value_type = rb::cuckoo_value;
  static constexpr const char* loadchunk_command = "CF.LOADCHUNK";
  static std::string header(const value_type& v) { return rb::encode_header(rb::record_of(v)); }
  static rb::chunk chunk(const value_type& v, long long iterator) { return rb::cuckoo_chunk(v, iterator); }
  static std::size_t size(const value_type& v) { return reported_size(v); }
  static void* rdb_load(RedisModuleIO* io, int encver) { return cuckoo_rdb_load(io, encver); }
  static void rdb_save(RedisModuleIO* io, void* value) { cuckoo_rdb_save(io, value); }
};
static_assert(data_type_traits<cuckoo_traits>);

}  // namespace

bool register_cuckoo(RedisModuleCtx* ctx) {
  // RedisBloom registers CF.COMPACT "readonly" although it rewrites the filter and replicates; it is a
  // write here, so replicas and read-only clients refuse it as they should.
  const command commands[] = {
      {"cf.reserve", reserve, "write deny-oom"},
      {"cf.add", add_one, "write deny-oom"},
      {"cf.addnx", add_unique, "write deny-oom"},
      {"cf.insert", insert, "write deny-oom"},
      {"cf.insertnx", insert_unique, "write deny-oom"},
      {"cf.exists", one_item<exists_items>, "readonly fast"},
      {"cf.mexists", many_items<exists_items>, "readonly fast"},
      {"cf.count", count, "readonly fast"},
      {"cf.del", del, "write fast"},
      {"cf.compact", compact, "write"},
      {"cf.info", info, "readonly fast"},
      {"cf.debug", debug, "readonly fast"},
      {"cf.scandump", scandump, "readonly fast"},
      {"cf.loadchunk", loadchunk, "write deny-oom"},
  };
  cuckoo_type = data_type<cuckoo_traits>::create(ctx, "MBbloomCF", encoding_version, commands);
  return cuckoo_type != nullptr;
}

}  // namespace blume::redis
