// SPDX-License-Identifier: Apache-2.0
// The module's entry point: a drop-in for RedisBloom's BF.* and CF.* (module name "bf", the same data type
// names and encodings), built on blume's filters. See docs/redis.md.
#include "blume/version.hpp"
#include "commands.hpp"
#include "config.hpp"
#include "memory.hpp"
#include "module_api.hpp"

extern "C" __attribute__((visibility("default"))) int RedisModule_OnLoad(RedisModuleCtx* ctx, RedisModuleString** argv,
                                                                         int argc) {
  namespace api = blume::redis::api;
  if (!api::load(ctx, "bf", blume::version_number)) return api::err;
  // Filters' bit arrays come from the server's allocator, so INFO memory and maxmemory account for them.
  blume::redis::install_storage_allocator();
  // A corrupt RESTORE payload or RDB answers "Bad data format" instead of stopping the server.
  api::SetModuleOptions(ctx, api::options_handle_io_errors);
  if (!blume::redis::register_configs(ctx)) return api::err;
  if (!blume::redis::register_bloom(ctx) || !blume::redis::register_cuckoo(ctx) ||
      !blume::redis::register_counting(ctx) || !blume::redis::register_window(ctx))
    return api::err;
  if (api::LoadConfigs(ctx) != api::ok) return api::err;
  // Load-time arguments come last, so they win over the defaults LoadConfigs applies.
  if (!blume::redis::apply_load_arguments(ctx, argv, argc)) return api::err;
  return api::ok;
}
