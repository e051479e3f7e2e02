// SPDX-License-Identifier: Apache-2.0
// Filter memory inside Redis: bit arrays come from the server's allocator (so INFO memory, MEMORY USAGE
// and maxmemory see them), and a filter, layer or sub-filter is refused before it is allocated when the
// memory it needs is not there.
#pragma once

#include <cstdint>

#include "module_api.hpp"

namespace blume::redis {

/// Routes blume's storage through the server's allocator (TryAlloc, so running out is an error reply,
/// not an abort of the server). Call once in OnLoad.
void install_storage_allocator() noexcept;

/// Whether `bytes` more fit: under maxmemory when it is set, and under the memory the machine has
/// available. Always true while the server loads data or applies its primary's stream, which must not
/// diverge from what was accepted there.
bool memory_allows(RedisModuleCtx* ctx, std::uint64_t bytes);

/// Whether a filter of `filter_bytes` (MEMORY USAGE's count) is within bf.max-filter-memory. Commands
/// replayed from a primary or an AOF are always allowed, like memory_allows: the limit is local
/// configuration (CONFIG SET does not replicate), and refusing there would drop items the primary
/// stored, turning "maybe" into a false "no". Such an excess is logged instead.
bool within_filter_limit(RedisModuleCtx* ctx, std::uint64_t filter_bytes);
/// bf.max-filter-memory for a header to be checked against (LOADCHUNK): unlimited for a replayed command,
/// for the reason within_filter_limit gives (an AOF rewrite stores filters as LOADCHUNK commands).
std::uint64_t filter_limit_for(RedisModuleCtx* ctx);

}  // namespace blume::redis
