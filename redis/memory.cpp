#include "memory.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "blume/storage.hpp"

namespace blume::redis {

namespace {

// byte_storage wants 64-byte alignment; the server's allocator promises 16. Over-allocate, align, and keep
// the pointer to free just below the aligned block.
constexpr std::size_t alignment = 64;

void* allocate(std::size_t bytes) {
  // TryCalloc (Redis 7.4+) lets the allocator hand out fresh zero pages untouched; TryAlloc needs a
  // memset, which commits every page at once. Neither aborts the server when memory runs out.
  const std::size_t size = bytes + alignment + sizeof(void*);
  const bool zeroed = api::TryCalloc != nullptr;
  void* raw = zeroed ? api::TryCalloc(1, size) : api::TryAlloc(size);
  if (raw == nullptr) return nullptr;
  const auto start = reinterpret_cast<std::uintptr_t>(raw) + sizeof(void*);
  auto* aligned = reinterpret_cast<std::byte*>((start + alignment - 1) / alignment * alignment);
  std::memcpy(aligned - sizeof(void*), &raw, sizeof(void*));
  if (!zeroed) std::memset(aligned, 0, bytes);
  return aligned;
}

void deallocate(void* p) noexcept {
  void* raw = nullptr;
  std::memcpy(&raw, static_cast<std::byte*>(p) - sizeof(void*), sizeof(void*));
  api::Free(raw);
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

}  // namespace blume::redis
