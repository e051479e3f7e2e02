// SPDX-License-Identifier: Apache-2.0
#include "memory.hpp"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <unordered_map>

#include <sys/mman.h>

#include "blume/storage.hpp"
#include "config.hpp"

namespace blume::redis {

namespace {

// byte_storage wants 64-byte alignment; the server's allocator promises 16.
constexpr std::size_t alignment = 64;

// A block is asked for at exactly its size, because the allocator rounds each request up to a size class
// and a power-of-two table is a class of its own: the 72 bytes of alignment slack and free pointer we used
// to add to every block put a 1 GiB cuckoo table in the 1.25 GiB class. jemalloc (Redis's allocator)
// returns 64-aligned blocks for requests of multiples of 64 (such classes sit in page-aligned slabs, large
// blocks on pages offset by whole cache lines). Another allocator may not; then the block is asked for
// again with slack, and the aligned pointer is remembered here with the block to free (taking the
// lock, for a value may be freed on a background thread after UNLINK or FLUSHALL ASYNC).
std::mutex offset_blocks_guard;
std::unordered_map<void*, void*> offset_blocks;
std::atomic<bool> any_offset_blocks{false};

void* allocate_from_server(std::size_t bytes, bool zeroed) {
  return zeroed ? api::TryCalloc(1, bytes) : api::TryAlloc(bytes);
}

/// Whether [begin, end) lies wholly in private anonymous mappings (/proc/self/maps: a 'p' mapping with
/// inode 0), the only kind MADV_DONTNEED refills with zero pages. A host allocator could in principle
/// hand out shared or file-backed memory; then we must write the zeros ourselves.
bool private_anonymous(std::uintptr_t begin, std::uintptr_t end) {
  std::FILE* f = std::fopen("/proc/self/maps", "r");
  if (f == nullptr) return false;
  char line[512];
  std::uintptr_t covered = begin;
  while (covered < end && std::fgets(line, sizeof line, f) != nullptr) {
    unsigned long long lo = 0, hi = 0, inode = 0;
    char perms[8] = {};
    if (std::sscanf(line, "%llx-%llx %7s %*s %*s %llu", &lo, &hi, perms, &inode) != 4) break;
    if (hi <= covered) continue;
    if (lo > covered || perms[3] != 'p' || inode != 0) break;
    covered = hi;
  }
  std::fclose(f);
  return covered >= end;
}

/// Zeroes fresh memory the way calloc does for large blocks: whole pages are handed back to the kernel
/// (MADV_DONTNEED), which maps them to the shared zero page until written, so a 1.3 GB BF.RESERVE costs
/// microseconds and no resident memory; only the partial pages at the two ends are written. A memset of
/// the whole block committed every page at once and blocked the server for seconds.
void zero(std::byte* p, std::size_t bytes) {
  constexpr std::size_t worth_it = std::size_t{2} << 20;  // below this, writing is as cheap as asking
  if (bytes >= worth_it) {
    const std::uintptr_t page = byte_storage::page_size();
    const auto first = reinterpret_cast<std::uintptr_t>(p);
    const std::uintptr_t begin = (first + page - 1) / page * page;
    const std::uintptr_t end = (first + bytes) / page * page;
    if (begin < end && private_anonymous(begin, end) &&
        ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED) == 0) {
      std::memset(p, 0, begin - first);
      std::memset(reinterpret_cast<std::byte*>(end), 0, first + bytes - end);
      return;
    }
  }
  std::memset(p, 0, bytes);
}

void* allocate(std::size_t bytes) {
  // TryCalloc (Redis 7.4+) lets the allocator hand out fresh zero pages untouched; with TryAlloc (7.0)
  // we zero them ourselves without touching them. Neither aborts the server when memory runs out.
  // byte_storage asks for whole multiples of 64.
  const bool zeroed = api::TryCalloc != nullptr;
  void* p = allocate_from_server(bytes, zeroed);
  if (p == nullptr) return nullptr;
  if (reinterpret_cast<std::uintptr_t>(p) % alignment != 0) {
    api::Free(p);
    void* raw = allocate_from_server(bytes + alignment, zeroed);
    if (raw == nullptr) return nullptr;
    p = reinterpret_cast<void*>((reinterpret_cast<std::uintptr_t>(raw) + alignment) / alignment * alignment);
    try {
      const std::lock_guard lock(offset_blocks_guard);
      offset_blocks.emplace(p, raw);
      any_offset_blocks.store(true, std::memory_order_release);
    } catch (const std::bad_alloc&) {
      api::Free(raw);
      return nullptr;
    }
  }
  if (!zeroed) zero(static_cast<std::byte*>(p), bytes);
  return p;
}

void deallocate(void* p) noexcept {
  if (any_offset_blocks.load(std::memory_order_acquire)) {
    const std::lock_guard lock(offset_blocks_guard);
    if (const auto it = offset_blocks.find(p); it != offset_blocks.end()) {
      p = it->second;
      offset_blocks.erase(it);
    }
  }
  api::Free(p);
}

/// MemAvailable from /proc/meminfo, in bytes; 0 if it cannot be read (then only maxmemory limits).
std::uint64_t available_memory() {
  std::FILE* f = std::fopen("/proc/meminfo", "r");
  if (f == nullptr) return 0;
  char line[256];
  unsigned long long kib = 0;
  while (std::fgets(line, sizeof line, f) != nullptr)
    if (std::sscanf(line, "MemAvailable: %llu kB", &kib) == 1) break;
  std::fclose(f);
  return static_cast<std::uint64_t>(kib) * 1024;
}

}  // namespace

void install_storage_allocator() noexcept { set_storage_allocator({allocate, deallocate}); }

bool memory_allows(RedisModuleCtx* ctx, std::uint64_t bytes) {
  if ((api::GetContextFlags(ctx) & (api::ctx_flags_replicated | api::ctx_flags_loading)) != 0) return true;
  RedisModuleServerInfoData* info = api::GetServerInfo(ctx, "memory");
  if (info != nullptr) {
    int missing = 0;
    const unsigned long long maxmemory = api::ServerInfoGetFieldUnsigned(info, "maxmemory", &missing);
    const unsigned long long used = api::ServerInfoGetFieldUnsigned(info, "used_memory", &missing);
    api::FreeServerInfo(ctx, info);
    if (maxmemory != 0 && (used >= maxmemory || bytes > maxmemory - used)) return false;
  }
  const std::uint64_t available = available_memory();
  return available == 0 || bytes <= available;
}

std::uint64_t filter_limit_for(RedisModuleCtx* ctx) {
  if ((api::GetContextFlags(ctx) & (api::ctx_flags_replicated | api::ctx_flags_loading)) != 0) return UINT64_MAX;
  return static_cast<std::uint64_t>(config().max_filter_memory);
}

bool within_filter_limit(RedisModuleCtx* ctx, std::uint64_t filter_bytes) {
  const auto limit = static_cast<std::uint64_t>(config().max_filter_memory);
  if (filter_bytes <= limit) return true;
  if ((api::GetContextFlags(ctx) & (api::ctx_flags_replicated | api::ctx_flags_loading)) == 0) return false;
  api::Log(ctx, api::log_warning,
           "a replicated or reloaded command takes a filter to %llu bytes, past bf.max-filter-memory (%llu): "
           "applied as its origin did; raise the limit here to match",
           static_cast<unsigned long long>(filter_bytes), static_cast<unsigned long long>(limit));
  return true;
}

}  // namespace blume::redis
