// SPDX-License-Identifier: Apache-2.0
// The module's settings: RedisBloom's bf-* and cf-* configurations (CONFIG GET/SET bf.<name>, load-time
// arguments, redis.conf) and blume's own max-capacity, which lifts RedisBloom's 2^30 limit on capacities.
#pragma once

#include "module_api.hpp"

namespace blume::redis {

/// 256 MiB: a filter of 100M items at 0.1% (171 MiB) fits, and a DUMP, MIGRATE or RDB save of the
/// largest filter blocks for about 2 s, not the minute a 4 GiB one took (docs/redis.md, "The filter
/// memory limit"), and stays under the 512 MB proto-max-bulk-len that RESTORE and MIGRATE need.
inline constexpr long long default_max_filter_memory = 256LL << 20;
/// Bounds of max-filter-memory: at least 1 KiB, a floor against slips (it already refuses a default cuckoo
/// filter, 1080 bytes); at most 2^50.
inline constexpr long long min_max_filter_memory = 1LL << 10;
inline constexpr long long max_max_filter_memory = 1LL << 50;

struct module_config {
  double bf_error_rate = 0.01;
  long long bf_initial_size = 100;
  long long bf_expansion_factor = 2;
  long long cf_bucket_size = 2;
  long long cf_initial_size = 1024;
  long long cf_max_iterations = 20;
  long long cf_expansion_factor = 1;
  long long cf_max_expansions = 32;
  /// Largest capacity BF.RESERVE, BF.INSERT, CF.RESERVE and CF.INSERT accept (RedisBloom: 2^30).
  long long max_capacity = 1LL << 30;
  /// Most bytes one filter may hold, by RedisBloom's Size formula (what MEMORY USAGE reports), whatever
  /// made it: a RESERVE, an INSERT, growth, a LOADCHUNK header, RESTORE or an RDB file. Its default is
  /// below what RedisBloom's 2^30 capacity limit admits, because every byte of a key is serialized while
  /// the server waits; bigger filters are a setting away (or sharded across keys).
  long long max_filter_memory = default_max_filter_memory;
};

/// The settings in force (the server runs commands on one thread).
module_config& config() noexcept;

/// RedisBloom's rate cap: error rates above 0.25 are stored as 0.25.
inline constexpr double max_error_rate = 0.25;
/// Most max-capacity may be raised to: a filter's bit array must stay within blume's 2^40 bits.
inline constexpr long long max_capacity_limit = 1LL << 36;

/// Registers the configurations (call in OnLoad, before LoadConfigs).
bool register_configs(RedisModuleCtx* ctx);
/// Applies load-time arguments: pairs of a name and a value. RedisBloom's ERROR_RATE, INITIAL_SIZE and
/// CF_MAX_EXPANSIONS (legacy), bf-error-rate, bf-initial-size, cf-max-expansions, and blume's max-capacity
/// and max-filter-memory. Logs
/// the problem and returns false for an unknown name, a bad value or an odd count.
bool apply_load_arguments(RedisModuleCtx* ctx, RedisModuleString** argv, int argc);

}  // namespace blume::redis
