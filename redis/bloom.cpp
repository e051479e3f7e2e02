// SPDX-License-Identifier: Apache-2.0
// BF.*: RedisBloom's scalable Bloom filter commands, replies and errors (8.x where 2.8 differs), over
// blume's RedisBloom-compatible chain (blume/compat/redisbloom.hpp) and its codec (blume/compat/redisbloom_format.hpp).
#include <algorithm>
#include <cmath>
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
using value_type = rb::bloom_value;

RedisModuleType* bloom_type = nullptr;
constexpr int encoding_version = bloom_encoding_version;
constexpr long long max_expansion = 32768;

// RedisBloom's Size (BF.INFO, MEMORY USAGE): sizeof(SBChain) + one SBLink per layer + the bit arrays.
std::uint64_t reported_size(const value_type& v) { return filter_memory(rb::record_of(v)); }
std::uint64_t memory_limit() { return static_cast<std::uint64_t>(config().max_filter_memory); }
std::uint64_t total_capacity(const value_type& v) {
  std::uint64_t n = 0;
  for (const auto& s : v.chain.layer_specs()) n += s.capacity;
  return n;
}

std::span<const std::byte> bytes_of(const RedisModuleString* s) {
  const std::string_view t = text(s);
  return {reinterpret_cast<const std::byte*>(t.data()), t.size()};
}

/// The parameters of a filter to create.
struct creation {
  double error_rate;
  long long capacity;
  long long expansion;
  bool scaling;
};

creation defaults() {
  const module_config& c = config();
  return {c.bf_error_rate, c.bf_initial_size, c.bf_expansion_factor, c.bf_expansion_factor != 0};
}

/// Creates the filter at an empty key; an error reply (returned) when memory does not allow it.
value_type* create(RedisModuleCtx* ctx, const open_key& key, const creation& c, std::string* error) {
  try {
    const std::uint64_t bytes =
        redisbloom_layer_geometry(static_cast<std::uint64_t>(c.capacity), c.scaling ? c.error_rate * 0.5 : c.error_rate)
            .storage_bytes();
    if (const std::uint64_t needed = bloom_fixed_bytes + bloom_layer_bytes + bytes; !within_filter_limit(ctx, needed)) {
      *error = over_limit_reply(needed, memory_limit());
      return nullptr;
    }
    if (!memory_allows(ctx, bytes)) {
      *error = "ERR Insufficient memory to create filter";
      return nullptr;
    }
    auto* v = new value_type(rb::make_bloom(static_cast<std::uint64_t>(c.capacity), c.error_rate,
                                            static_cast<std::uint32_t>(c.expansion), c.scaling));
    api::ModuleTypeSetValue(key.get(), bloom_type, v);
    return v;
  } catch (const std::bad_alloc&) {
    *error = "ERR Insufficient memory to create filter";
  } catch (const std::exception&) {
    *error = "ERR could not create filter";
  }
  return nullptr;
}

enum class add_outcome { added, present, full, failed, over_limit };

/// One BF.ADD of a hashed item: refuses a new layer the memory budget or bf.max-filter-memory cannot
/// hold (then *needed is the filter's size with it).
add_outcome add(RedisModuleCtx* ctx, value_type& v, const digest& d, std::uint64_t* needed) {
  auto& chain = v.chain;
  if (chain.needs_new_layer() && chain.can_grow() && !chain.contains(d)) {
    try {
      const std::uint64_t bytes = chain.next_layer_bytes();
      *needed = reported_size(v) + bloom_layer_bytes + bytes;
      if (!within_filter_limit(ctx, *needed)) return add_outcome::over_limit;
      if (!memory_allows(ctx, bytes)) return add_outcome::failed;
    } catch (const std::exception&) {
      return add_outcome::failed;
    }
  }
  try {
    switch (rb::bloom_insert(v, d)) {
      case insert_result::added: return add_outcome::added;
      case insert_result::present: return add_outcome::present;
      case insert_result::full: return chain.options().scaling ? add_outcome::failed : add_outcome::full;
    }
  } catch (const std::bad_alloc&) {
  }
  return add_outcome::failed;
}

/// Adds argv[first, argc) to the filter at argv[1], creating it with `c` if absent (and `create_missing`):
/// the shared body of BF.ADD, BF.MADD and BF.INSERT.
/// A filter this command creates gets `ttl`; an existing one keeps its expiry.
int add_items(RedisModuleCtx* ctx, RedisModuleString** argv, int argc, int first, bool multi, bool create_missing,
              const creation& c, const key_ttl& ttl = {}) {
  open_key key(ctx, argv[1], api::open_read | api::open_write);
  value_type* v = key.value<value_type>(bloom_type);
  bool created = false;
  if (v == nullptr) {
    if (key.wrong_type(bloom_type)) return reply_error(ctx, api::errormsg_wrongtype);
    if (!create_missing) return reply_error(ctx, not_found);
    std::string error;
    v = create(ctx, key, c, &error);
    if (v == nullptr) return reply_error(ctx, error.c_str());
    created = true;
  }
  if (multi) api::ReplyWithArray(ctx, api::postponed_len);
  long replies = 0;
  // Hash a batch of the call's items and start loading the words their inserts touch, then insert them:
  // the cache misses of one call overlap instead of following one another.
  constexpr int batch = 32;
  digest digests[batch];
  bool stopped = false;
  for (int start = first; start < argc && !stopped; start += batch) {
    const int n = std::min(batch, argc - start);
    for (int j = 0; j < n; ++j) {
      digests[j] = v->chain.hash(text(argv[start + j]));
      v->chain.prefetch_for_insert(digests[j]);
    }
    for (int j = 0; j < n; ++j) {
      std::uint64_t needed = 0;
      const add_outcome outcome = add(ctx, *v, digests[j], &needed);
      ++replies;
      if (outcome == add_outcome::full || outcome == add_outcome::failed || outcome == add_outcome::over_limit) {
        // RedisBloom stops at the first item it cannot add.
        if (outcome == add_outcome::over_limit) {
          api::ReplyWithError(ctx, over_limit_reply(needed, memory_limit()).c_str());
        } else {
          api::ReplyWithError(ctx, outcome == add_outcome::full ? "ERR non scaling filter is full"
                                                                : "ERR problem inserting into filter");
        }
        stopped = true;
        break;
      }
      reply_bool(ctx, outcome == add_outcome::added);
    }
  }
  if (multi) api::ReplySetArrayLength(ctx, replies);
  api::ReplicateVerbatim(ctx);
  if (created) apply_ttl(ctx, key, argv[1], ttl);
  return api::ok;
}

// ---- commands ---------------------------------------------------------------------------------------

/// Whether an existing chain is the one BF.RESERVE would create with `c` (for IFNOTEXISTS).
bool reserved_as(const value_type& v, const creation& c) {
  const auto& chain = v.chain;
  return chain.capacity() == static_cast<std::uint64_t>(c.capacity) && chain.target_fpr() == c.error_rate &&
         chain.options().scaling == c.scaling && chain.options().growth == static_cast<double>(c.expansion);
}

/// BF.RESERVE key error_rate capacity [EXPANSION expansion] [NONSCALING] [TTL seconds] [IFNOTEXISTS]
/// TTL and IFNOTEXISTS are ours; without them the command is RedisBloom's, arity and errors included.
int reserve(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  const int ttl_at = argc >= 4 ? find_word(argv, argc, 4, "TTL") : -1;
  const int ifnotexists_at = argc >= 4 ? find_word(argv, argc, 4, "IFNOTEXISTS") : -1;
  const int ours = (ttl_at >= 0 ? 2 : 0) + (ifnotexists_at >= 0 ? 1 : 0);
  if (argc - ours < 4 || argc - ours > 7) return api::WrongArity(ctx);
  key_ttl ttl;
  if (ttl_at >= 0)
    if (const char* e = parse_ttl(argv, argc, ttl_at, &ttl)) return reply_error(ctx, e);
  const auto rate = to_double(argv[2]);
  if (!rate) return reply_error(ctx, "ERR bad error rate");
  if (!(*rate > 0 && *rate < 1)) return reply_error(ctx, "ERR error rate must be in the range (0.000000, 1.000000)");
  const double error_rate = std::min(*rate, max_error_rate);
  const auto capacity = to_integer(argv[3]);
  if (!capacity) return reply_error(ctx, "ERR bad capacity");
  if (*capacity < 1 || *capacity > config().max_capacity) {
    const std::string msg = "ERR capacity must be in the range [1, " + std::to_string(config().max_capacity) + "]";
    return reply_error(ctx, msg.c_str());
  }
  // As RedisBloom 8: bf-expansion-factor 0 makes every reserved filter non-scaling, exactly as if
  // NONSCALING had been given, so an explicit non-zero EXPANSION is refused then too.
  const bool nonscaling = find_word(argv, argc, 4, "NONSCALING") >= 0 || config().bf_expansion_factor == 0;
  bool scaling = !nonscaling;
  long long expansion = config().bf_expansion_factor;
  if (const int at = find_word(argv, argc, 4, "EXPANSION"); at >= 0) {
    if (at + 1 == argc) return reply_error(ctx, "ERR no expansion");
    const auto e = to_integer(argv[at + 1]);
    if (!e) return reply_error(ctx, "ERR bad expansion");
    if (*e != 0 && nonscaling) return reply_error(ctx, "Nonscaling filters cannot expand");
    if (*e < 0 || *e > max_expansion) return reply_error(ctx, "ERR expansion must be in the range [0, 32768]");
    expansion = *e;
    if (*e == 0) scaling = false;
  }
  const creation wanted{error_rate, *capacity, expansion, scaling};
  open_key key(ctx, argv[1], api::open_read | api::open_write);
  if (key.wrong_type(bloom_type)) return reply_error(ctx, api::errormsg_wrongtype);
  if (!key.empty()) {
    if (ifnotexists_at < 0) return reply_error(ctx, item_exists);
    // The same filter is already there: nothing to do (its TTL, if any, stays as it was).
    if (reserved_as(*key.value<value_type>(bloom_type), wanted)) {
      api::ReplyWithSimpleString(ctx, "OK");
      return api::ok;
    }
    return reply_error(ctx, "ERR a filter with other parameters exists at this key");
  }
  std::string error;
  if (create(ctx, key, wanted, &error) == nullptr) return reply_error(ctx, error.c_str());
  api::ReplyWithSimpleString(ctx, "OK");
  api::ReplicateVerbatim(ctx);
  apply_ttl(ctx, key, argv[1], ttl);
  return api::ok;
}

/// BF.ADD key item
int add_one(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  if (argc != 3) return api::WrongArity(ctx);
  return add_items(ctx, argv, argc, 2, false, true, defaults());
}

/// BF.MADD key item [item ...]
int add_many(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  if (argc < 3) return api::WrongArity(ctx);
  return add_items(ctx, argv, argc, 2, true, true, defaults());
}

/// BF.INSERT key [CAPACITY cap] [ERROR rate] [EXPANSION exp] [NOCREATE] [NONSCALING] [TTL seconds]
/// ITEMS item [item ...]
/// RedisBloom's options are recognised by their first letters, as RedisBloom does (ERror, Expansion,
/// Capacity, NOCreate, Nonscaling, Items); ours, TTL, only as the whole word.
int insert(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  if (argc < 4) return api::WrongArity(ctx);
  creation c = defaults();
  key_ttl ttl;
  bool create_missing = true;
  // bf-expansion-factor 0 starts the filter non-scaling and an EXPANSION option does not undo that
  // (RedisBloom 8 keeps the option's growth in the header all the same).
  bool nonscaling = !c.scaling;
  int items = -1;
  for (int i = 2; i < argc && items < 0;) {
    switch (initial(argv[i])) {
      case 'i': items = i + 1; break;
      case 'e': {
        if (i + 1 == argc) return api::WrongArity(ctx);
        if (initial(argv[i], 1) == 'r') {
          const auto rate = to_double(argv[i + 1]);
          if (!rate || !(*rate > 0 && *rate < 1)) return reply_error(ctx, "Bad error rate");
          c.error_rate = std::min(*rate, max_error_rate);
        } else {
          const auto e = to_integer(argv[i + 1]);
          if (!e || *e < 0 || *e > max_expansion) return reply_error(ctx, "Bad expansion");
          c.expansion = *e;
        }
        i += 2;
        break;
      }
      case 'c': {
        if (i + 1 == argc) return api::WrongArity(ctx);
        const auto cap = to_integer(argv[i + 1]);
        if (!cap || *cap < 1 || *cap > config().max_capacity) return reply_error(ctx, "Bad capacity");
        c.capacity = *cap;
        i += 2;
        break;
      }
      case 'n':
        if (initial(argv[i], 2) == 'c') {
          create_missing = false;
        } else {
          nonscaling = true;
        }
        ++i;
        break;
      default:
        if (!is_word(argv[i], "TTL")) return reply_error(ctx, "Unknown argument received");
        if (const char* e = parse_ttl(argv, argc, i, &ttl)) return reply_error(ctx, e);
        i += 2;
        break;
    }
  }
  if (items < 0 || items >= argc) return api::WrongArity(ctx);
  c.scaling = !nonscaling && c.expansion != 0;
  return add_items(ctx, argv, argc, items, true, create_missing, c, ttl);
}

/// Answers whether each of argv[first, argc) may be in `v` (a null `v` answers 0 for all).
void reply_exists(RedisModuleCtx* ctx, const value_type* v, RedisModuleString** argv, int argc, int first, bool multi) {
  if (multi) api::ReplyWithArray(ctx, argc - first);
  if (v == nullptr) {
    for (int i = first; i < argc; ++i) reply_bool(ctx, false);
    return;
  }
  // Hash the whole call first and prefetch each item's first probe in the newest layer, so the lookups
  // of one call overlap their cache misses instead of taking them one after another.
  constexpr int batch = 32;
  digest digests[batch];
  for (int start = first; start < argc; start += batch) {
    const int n = std::min(batch, argc - start);
    for (int j = 0; j < n; ++j) {
      digests[j] = v->chain.hash(text(argv[start + j]));
      v->chain.prefetch(digests[j]);
    }
    for (int j = 0; j < n; ++j) reply_bool(ctx, v->chain.contains(digests[j]));
  }
}

/// BF.EXISTS key item / BF.MEXISTS key item [item ...]: a missing key or another type answers 0.
int exists_items(RedisModuleCtx* ctx, RedisModuleString** argv, int argc, bool multi) {
  open_key key(ctx, argv[1], api::open_read);
  reply_exists(ctx, key.value<value_type>(bloom_type), argv, argc, 2, multi);
  return api::ok;
}

/// Opens argv[1] for reading and answers "not found" or WRONGTYPE when it holds no filter.
const value_type* existing(RedisModuleCtx* ctx, const open_key& key) {
  const value_type* v = key.value<value_type>(bloom_type);
  if (v == nullptr) reply_error(ctx, key.wrong_type(bloom_type) ? api::errormsg_wrongtype : not_found);
  return v;
}

/// An estimated number of items as an integer; a chain with a full layer has no finite estimate.
void reply_estimate(RedisModuleCtx* ctx, double n) {
  if (!std::isfinite(n)) {
    api::ReplyWithError(ctx, "ERR the filter is saturated (a layer has every bit set): no estimate");
    return;
  }
  api::ReplyWithLongLong(ctx, std::llround(n));
}

/// BF.INFO key [CAPACITY | SIZE | FILTERS | ITEMS | EXPANSION | ESTIMATE]
int info(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  if (argc < 2 || argc > 3) return api::WrongArity(ctx);
  open_key key(ctx, argv[1], api::open_read);
  const value_type* v = existing(ctx, key);
  if (v == nullptr) return api::ok;
  struct field {
    const char* word;
    const char* label;
    long long value;
    bool null;
  };
  const bool scaling = v->chain.options().scaling;
  const field fields[] = {
      {"CAPACITY", "Capacity", static_cast<long long>(total_capacity(*v)), false},
      {"SIZE", "Size", static_cast<long long>(reported_size(*v)), false},
      {"FILTERS", "Number of filters", static_cast<long long>(v->chain.layers().size()), false},
      {"ITEMS", "Number of items inserted", static_cast<long long>(v->chain.inserted()), false},
      {"EXPANSION", "Expansion rate", static_cast<long long>(v->chain.options().growth), !scaling},
  };
  // The whole reply is a map (a flat array in RESP2). One selected field is a one-element array of its
  // value in RESP2 but a one-entry map, label included, in RESP3.
  const bool map = argc == 2 || resp3(ctx);
  const auto emit = [&](const field& f) {
    if (map) api::ReplyWithSimpleString(ctx, f.label);
    if (f.null) {
      api::ReplyWithNull(ctx);
    } else {
      api::ReplyWithLongLong(ctx, f.value);
    }
  };
  if (argc == 3) {
    if (is_word(argv[2], "ESTIMATE")) {  // ours: the count from the fill, beside "Number of items inserted"
      const double n = rb::bloom_estimated_count(*v);
      if (!std::isfinite(n)) {
        reply_estimate(ctx, n);
        return api::ok;
      }
      if (map) {
        api::ReplyWithMap(ctx, 1);
        api::ReplyWithSimpleString(ctx, "Estimated items");
      } else {
        api::ReplyWithArray(ctx, 1);
      }
      reply_estimate(ctx, n);
      return api::ok;
    }
    for (const field& f : fields) {
      if (!is_word(argv[2], f.word)) continue;
      if (map) {
        api::ReplyWithMap(ctx, 1);
      } else {
        api::ReplyWithArray(ctx, 1);
      }
      emit(f);
      return api::ok;
    }
    return reply_error(ctx, "Invalid information value");
  }
  api::ReplyWithMap(ctx, 5);
  for (const field& f : fields) emit(f);
  return api::ok;
}

/// BF.CARD key: items added (0 for a missing key).
int card(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  if (argc != 2) return api::WrongArity(ctx);
  open_key key(ctx, argv[1], api::open_read);
  const value_type* v = key.value<value_type>(bloom_type);
  if (v == nullptr && key.wrong_type(bloom_type)) return reply_error(ctx, api::errormsg_wrongtype);
  api::ReplyWithLongLong(ctx, v == nullptr ? 0 : static_cast<long long>(v->chain.inserted()));
  return api::ok;
}

/// BF.DEBUG key
int debug(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  if (argc != 2) return api::WrongArity(ctx);
  open_key key(ctx, argv[1], api::open_read);
  const value_type* v = existing(ctx, key);
  if (v == nullptr) return api::ok;
  const rb::bloom_chain_record r = rb::record_of(*v);
  api::ReplyWithArray(ctx, static_cast<long>(1 + r.layers.size()));
  std::string line = "size:" + std::to_string(r.size);
  api::ReplyWithStringBuffer(ctx, line.data(), line.size());
  for (const rb::bloom_layer_record& l : r.layers) {
    char buf[256];
    const int n =
        std::snprintf(buf, sizeof buf, "bytes:%llu bits:%llu hashes:%u hashwidth:64 capacity:%llu size:%llu ratio:%g",
                      static_cast<unsigned long long>(l.bytes), static_cast<unsigned long long>(l.bits), l.hashes,
                      static_cast<unsigned long long>(l.entries), static_cast<unsigned long long>(l.size), l.error);
    api::ReplyWithStringBuffer(ctx, buf, static_cast<std::size_t>(n));
  }
  return api::ok;
}

/// BF.SCANDUMP key iterator
int scandump(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  if (argc != 3) return api::WrongArity(ctx);
  open_key key(ctx, argv[1], api::open_read);
  const value_type* v = existing(ctx, key);
  if (v == nullptr) return api::ok;
  const auto iterator = to_integer(argv[2]);
  if (!iterator) return reply_error(ctx, "Second argument must be numeric");
  api::ReplyWithArray(ctx, 2);
  if (*iterator == 0) {
    const std::string header = rb::encode_header(rb::record_of(*v));
    api::ReplyWithLongLong(ctx, 1);
    api::ReplyWithStringBuffer(ctx, header.data(), header.size());
    return api::ok;
  }
  const rb::chunk c = rb::bloom_chunk(*v, *iterator);
  api::ReplyWithLongLong(ctx, c.next);
  api::ReplyWithStringBuffer(ctx, reinterpret_cast<const char*>(c.bytes.data()), c.bytes.size());
  return api::ok;
}

/// BF.LOADCHUNK key iterator data
int loadchunk(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  if (argc != 4) return api::WrongArity(ctx);
  const auto iterator = to_integer(argv[2]);
  if (!iterator) return reply_error(ctx, "ERR Second argument must be numeric");
  open_key key(ctx, argv[1], api::open_read | api::open_write);
  value_type* v = key.value<value_type>(bloom_type);
  if (v == nullptr && key.empty() && *iterator == 1) {
    try {
      const rb::bloom_chain_record r = bloom_header(text(argv[3]), filter_limit_for(ctx));
      if (!memory_allows(ctx, r.total_bytes())) return reply_error(ctx, "ERR Insufficient memory to create filter");
      auto* fresh = new value_type(rb::value_from(r));
      api::ModuleTypeSetValue(key.get(), bloom_type, fresh);
    } catch (const over_limit& e) {
      return reply_error(ctx, e.what());
    } catch (const std::bad_alloc&) {
      return reply_error(ctx, "ERR Insufficient memory to create filter");
    } catch (const std::exception&) {
      return reply_error(ctx, "ERR received bad data");
    }
    api::ReplyWithSimpleString(ctx, "OK");
    api::ReplicateVerbatim(ctx);
    return api::ok;
  }
  if (v == nullptr) return reply_error(ctx, key.wrong_type(bloom_type) ? api::errormsg_wrongtype : not_found);
  switch (rb::load_bloom_chunk(*v, *iterator, bytes_of(argv[3]))) {
    case rb::chunk_status::ok: break;
    case rb::chunk_status::bad_data: return reply_error(ctx, "ERR received bad data");
    case rb::chunk_status::no_layer: return reply_error(ctx, "ERR invalid offset - no link found");
    case rb::chunk_status::too_big: return reply_error(ctx, "ERR invalid chunk - Too big for current filter");
  }
  api::ReplyWithSimpleString(ctx, "OK");
  api::ReplicateVerbatim(ctx);
  return api::ok;
}

// ---- beyond RedisBloom ------------------------------------------------------------------------------

/// BF.QUERY key [STRICT] ITEMS item [item ...]: BF.MEXISTS's answers, where no item can be taken for an
/// option; STRICT makes a missing key an error instead of all zeros.
int query(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  if (argc < 4) return api::WrongArity(ctx);
  int at = 2;
  const bool strict = is_word(argv[at], "STRICT");
  if (strict) ++at;
  if (at >= argc || !is_word(argv[at], "ITEMS")) return reply_error(ctx, "ERR syntax error: expected [STRICT] ITEMS");
  if (++at >= argc) return api::WrongArity(ctx);
  open_key key(ctx, argv[1], api::open_read);
  const value_type* v = strict ? existing(ctx, key) : key.value<value_type>(bloom_type);
  if (v == nullptr && strict) return api::ok;
  reply_exists(ctx, v, argv, argc, at, true);
  return api::ok;
}

/// The filter at `name` for a command over several keys: null after an error reply.
const value_type* existing_at(RedisModuleCtx* ctx, std::vector<std::unique_ptr<open_key>>& keys,
                              RedisModuleString* name) {
  keys.push_back(std::make_unique<open_key>(ctx, name, api::open_read));
  return existing(ctx, *keys.back());
}

/// Whether two filters can be combined bit for bit: the chain's parameters and every layer's geometry,
/// and RedisBloom's encoding options (an old power-of-two layer probes differently).
/// With `estimate`, also that the pair can be estimated from its bits (one layer each: see
/// detail::check_pair_estimable, whose message gives grown filters' bounds instead).
bool check_combinable(RedisModuleCtx* ctx, const value_type& a, const value_type& b, const char* operation,
                      bool estimate = false) {
  try {
    a.chain.check_compatible(b.chain, operation);
    if (estimate) blume::detail::check_pair_estimable(a.chain, b.chain, operation);
    if (a.options != b.options)
      throw incompatible_filters(std::string("cannot ") + operation + " filters: their encoding options differ");
    return true;
  } catch (const incompatible_filters& e) {
    const std::string msg = std::string("ERR ") + e.what();
    reply_error(ctx, msg.c_str());
    return false;
  }
}

/// BF.ESTIMATE key: items estimated from the fill, n* = −(m/k)·ln(1 − X/m) summed over the layers.
/// BF.ESTIMATE key1 key2 UNION | INTERSECTION | JACCARD: the same for two filters' sets.
int estimate(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  // One key or two, then a word: no fixed key range describes that, so the server asks the command.
  if (api::IsKeysPositionRequest(ctx) != 0) {
    if (argc >= 2) api::KeyAtPos(ctx, 1);
    if (argc == 4) api::KeyAtPos(ctx, 2);
    return api::ok;
  }
  if (argc != 2 && argc != 4) return api::WrongArity(ctx);
  std::vector<std::unique_ptr<open_key>> keys;
  const value_type* a = existing_at(ctx, keys, argv[1]);
  if (a == nullptr) return api::ok;
  if (argc == 2) {
    reply_estimate(ctx, rb::bloom_estimated_count(*a));
    return api::ok;
  }
  enum class pair { union_, intersection, jaccard };
  pair what;
  if (is_word(argv[3], "UNION")) {
    what = pair::union_;
  } else if (is_word(argv[3], "INTERSECTION")) {
    what = pair::intersection;
  } else if (is_word(argv[3], "JACCARD")) {
    what = pair::jaccard;
  } else {
    return reply_error(ctx, "ERR syntax error: expected UNION, INTERSECTION or JACCARD");
  }
  const value_type* b = existing_at(ctx, keys, argv[2]);
  const char* operation = what == pair::union_         ? "estimate the union of"
                          : what == pair::intersection ? "estimate the intersection of"
                                                       : "estimate the Jaccard index of";
  if (b == nullptr || !check_combinable(ctx, *a, *b, operation, /*estimate=*/true)) return api::ok;
  switch (what) {
    case pair::union_: reply_estimate(ctx, estimate_union(a->chain, b->chain)); break;
    case pair::intersection: {
      const double u = estimate_union(a->chain, b->chain);
      if (!std::isfinite(u)) {
        reply_estimate(ctx, u);
      } else {
        reply_estimate(ctx, estimate_intersection(a->chain, b->chain));
      }
      break;
    }
    case pair::jaccard: {
      const double u = estimate_union(a->chain, b->chain);
      if (!std::isfinite(u)) {
        reply_estimate(ctx, u);
      } else {
        api::ReplyWithDouble(ctx, estimate_jaccard(a->chain, b->chain));
      }
      break;
    }
  }
  return api::ok;
}

/// Every layer's set bits counted again: after a merge, whose OR cannot tell how many bits were new.
void recount_all(value_type& v) {
  for (std::size_t i = 0; i < v.chain.layers().size(); ++i) rb::recount_bits(v, i);
}

/// BF.MERGE dest src [src ...]: dest becomes the union of itself (when it exists) and the sources, which
/// must match it in every parameter and layer (a scaled filter merges layer by layer). Nothing changes
/// unless every source qualifies. Items added (BF.CARD) add up, duplicates included.
int merge(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  if (argc < 3) return api::WrongArity(ctx);
  open_key dest(ctx, argv[1], api::open_read | api::open_write);
  value_type* d = dest.value<value_type>(bloom_type);
  if (d == nullptr && dest.wrong_type(bloom_type)) return reply_error(ctx, api::errormsg_wrongtype);
  std::vector<std::unique_ptr<open_key>> keys;
  std::vector<const value_type*> sources;
  for (int i = 2; i < argc; ++i) {
    const value_type* s = existing_at(ctx, keys, argv[i]);
    if (s == nullptr) return api::ok;
    // A key named twice, or dest among the sources, is one set: merging it again would only inflate the
    // count of adds.
    if (s != d && std::find(sources.begin(), sources.end(), s) == sources.end()) sources.push_back(s);
  }
  const value_type* base = d != nullptr ? d : sources.front();
  for (const value_type* s : sources)
    if (!check_combinable(ctx, *base, *s, "merge")) return api::ok;
  try {
    if (d == nullptr) {
      const std::uint64_t size = reported_size(*base);
      if (!within_filter_limit(ctx, size)) return reply_error(ctx, over_limit_reply(size, memory_limit()).c_str());
      if (!memory_allows(ctx, size)) return reply_error(ctx, "ERR Insufficient memory to create filter");
      auto fresh = std::make_unique<value_type>(*base);
      for (std::size_t i = 1; i < sources.size(); ++i) fresh->chain.merge(sources[i]->chain);
      if (sources.size() > 1) recount_all(*fresh);
      api::ModuleTypeSetValue(dest.get(), bloom_type, fresh.release());
    } else {
      for (const value_type* s : sources) d->chain.merge(s->chain);
      if (!sources.empty()) recount_all(*d);
    }
  } catch (const std::bad_alloc&) {
    return reply_error(ctx, "ERR Insufficient memory to create filter");
  }
  api::ReplyWithSimpleString(ctx, "OK");
  api::ReplicateVerbatim(ctx);
  return api::ok;
}

// ---- the data type -------------------------------------------------------------------------------------

void* bloom_rdb_load(RedisModuleIO* io, int encver) { return rdb_load_with(io, encver, load_bloom); }

void bloom_rdb_save(RedisModuleIO* io, void* value) {
  module_rdb_writer out(io);
  save_bloom(out, *static_cast<const value_type*>(value));
}

/// What data_type needs to know of a Bloom filter value.
struct bloom_traits {
  using value_type = rb::bloom_value;
  static constexpr const char* loadchunk_command = "BF.LOADCHUNK";
  static std::string header(const value_type& v) { return rb::encode_header(rb::record_of(v)); }
  static rb::chunk chunk(const value_type& v, long long iterator) { return rb::bloom_chunk(v, iterator); }
  static std::size_t size(const value_type& v) { return reported_size(v); }
  static void* rdb_load(RedisModuleIO* io, int encver) { return bloom_rdb_load(io, encver); }
  static void rdb_save(RedisModuleIO* io, void* value) { bloom_rdb_save(io, value); }
};
static_assert(data_type_traits<bloom_traits>);

}  // namespace

bool register_bloom(RedisModuleCtx* ctx) {
  const command commands[] = {
      {"bf.reserve", reserve, "write deny-oom"},
      {"bf.add", add_one, "write deny-oom"},
      {"bf.madd", add_many, "write deny-oom"},
      {"bf.insert", insert, "write deny-oom"},
      {"bf.exists", one_item<exists_items>, "readonly fast"},
      {"bf.mexists", many_items<exists_items>, "readonly fast"},
      {"bf.info", info, "readonly fast"},
      {"bf.card", card, "readonly fast"},
      {"bf.debug", debug, "readonly fast"},
      {"bf.scandump", scandump, "readonly fast"},
      {"bf.loadchunk", loadchunk, "write deny-oom"},
      {"bf.query", query, "readonly fast"},
      {"bf.estimate", estimate, "readonly getkeys-api", 1, 1, 1},
      {"bf.merge", merge, "write deny-oom", 1, -1, 1},
  };
  bloom_type = data_type<bloom_traits>::create(ctx, "MBbloom--", encoding_version, commands);
  return bloom_type != nullptr;
}

}  // namespace blume::redis
