// SPDX-License-Identifier: Apache-2.0
// Storage: zeroed, 64-byte aligned memory that knows nothing about filters. It is either owned
// (heap memory, with large blocks placed so the kernel can back them with 2 MiB pages) or a private
// mapping of a file (copy-on-write: a filter opened from a file can be queried without copying it and
// even modified in memory without ever touching the file). A host may route owned storage through its
// own allocator (set_storage_allocator).
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <utility>

namespace blume {

/// Where owned storage comes from when a host wants to account for it itself. The Redis module installs
/// the server's allocator, so INFO memory, MEMORY USAGE and maxmemory see every filter's bytes.
/// `allocate` returns `bytes` zeroed bytes aligned to 64, or nullptr when out of memory.
struct storage_allocator {
  void* (*allocate)(std::size_t bytes) = nullptr;
  void (*deallocate)(void* p) noexcept = nullptr;
};

/// Storage of a size the system would not give. Still a std::bad_alloc (so hosts that map that to "out of
/// memory" keep doing so), but its message says how much was asked for and how much memory there is.
class allocation_error : public std::bad_alloc {
 public:
  explicit allocation_error(std::size_t bytes) noexcept {
    const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
    const double gib = 1024.0 * 1024 * 1024;
    if (pages > 0 && page > 0)
      std::snprintf(what_, sizeof what_,
                    "out of memory: cannot allocate %zu bytes (%.2f GiB) for the filter; this machine has %.2f GiB",
                    bytes, static_cast<double>(bytes) / gib,
                    static_cast<double>(pages) * static_cast<double>(page) / gib);
    else std::snprintf(what_, sizeof what_, "out of memory: cannot allocate %zu bytes for the filter", bytes);
  }
  const char* what() const noexcept override { return what_; }

 private:
  char what_[160];
};

namespace detail {
inline storage_allocator& installed_storage_allocator() noexcept {
  static storage_allocator a;
  return a;
}
}  // namespace detail

/// Routes every later byte_storage::allocate through `a` (both functions set), or back to the built-in
/// heap and mappings (both null). Storage already allocated keeps the deallocator it was made with. Not
/// synchronised: install once, before any filter exists.
inline void set_storage_allocator(storage_allocator a) noexcept { detail::installed_storage_allocator() = a; }

class byte_storage {
 public:
  static constexpr std::size_t alignment = 64;
  static constexpr std::size_t huge_page = std::size_t{2} << 20;

  byte_storage() noexcept = default;

  /// `bytes` zeroed bytes. Blocks of 2 MiB or more come from an anonymous mapping aligned to 2 MiB and
  /// marked MADV_HUGEPAGE: at 100M keys TLB misses, not cache misses, dominate lookups, and huge pages
  /// remove most of them. Pages are zero and only committed when first touched.
  static byte_storage allocate(std::size_t bytes) {
    byte_storage s;
    s.size_ = bytes;
    if (bytes == 0) return s;
    if (const storage_allocator& host = detail::installed_storage_allocator(); host.allocate != nullptr) {
      void* p = host.allocate(round_up(bytes, alignment));
      if (p == nullptr) throw allocation_error(bytes);
      s.data_ = static_cast<std::byte*>(p);
      s.host_deallocate_ = host.deallocate;
      return s;
    }
    if (bytes >= huge_page) {
      const std::size_t length = round_up(bytes, page_size());
      const std::size_t reserve = length + huge_page;
      void* raw = ::mmap(nullptr, reserve, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (raw == MAP_FAILED) throw allocation_error(bytes);
      const auto base = reinterpret_cast<std::uintptr_t>(raw);
      const std::uintptr_t aligned = round_up(base, huge_page);
      // Give back the slack on both sides so we hold exactly `length` bytes.
      if (aligned > base) ::munmap(raw, aligned - base);
      const std::uintptr_t end = aligned + length;
      if (base + reserve > end) ::munmap(reinterpret_cast<void*>(end), base + reserve - end);
      ::madvise(reinterpret_cast<void*>(aligned), length, MADV_HUGEPAGE);
      s.data_ = reinterpret_cast<std::byte*>(aligned);
      s.map_base_ = s.data_;
      s.map_length_ = length;
    } else {
      void* p = std::aligned_alloc(alignment, round_up(bytes, alignment));
      if (p == nullptr) throw allocation_error(bytes);
      std::memset(p, 0, round_up(bytes, alignment));
      s.data_ = static_cast<std::byte*>(p);
    }
    return s;
  }

  /// Take ownership of a mapping [map_base, map_base + map_length) whose bytes [data, data + bytes) are
  /// the storage. `data` must be 64-byte aligned. The mapping is unmapped on destruction.
  static byte_storage adopt_mapping(void* map_base, std::size_t map_length, std::byte* data,
                                    std::size_t bytes) noexcept {
    byte_storage s;
    s.data_ = data;
    s.size_ = bytes;
    s.map_base_ = map_base;
    s.map_length_ = map_length;
    s.file_backed_ = true;
    return s;
  }

  byte_storage(const byte_storage& other) : byte_storage(allocate(other.size_)) {
    if (size_ != 0) std::memcpy(data_, other.data_, size_);
  }
  byte_storage& operator=(const byte_storage& other) {
    if (this != &other) *this = byte_storage(other);
    return *this;
  }
  byte_storage(byte_storage&& other) noexcept { swap(other); }
  byte_storage& operator=(byte_storage&& other) noexcept {
    byte_storage(std::move(other)).swap(*this);
    return *this;
  }
  ~byte_storage() { release(); }

  void swap(byte_storage& other) noexcept {
    std::swap(data_, other.data_);
    std::swap(size_, other.size_);
    std::swap(map_base_, other.map_base_);
    std::swap(map_length_, other.map_length_);
    std::swap(file_backed_, other.file_backed_);
    std::swap(host_deallocate_, other.host_deallocate_);
  }

  std::byte* data() noexcept { return data_; }
  const std::byte* data() const noexcept { return data_; }
  std::size_t size() const noexcept { return size_; }
  /// True when the bytes are a private mapping of a file rather than heap memory.
  bool file_backed() const noexcept { return file_backed_; }

  void zero() noexcept {
    if (size_ != 0) std::memset(data_, 0, size_);
  }

  static std::size_t page_size() noexcept {
    static const std::size_t size = [] {
      const long p = ::sysconf(_SC_PAGESIZE);
      return p > 0 ? static_cast<std::size_t>(p) : std::size_t{4096};
    }();
    return size;
  }

 private:
  static constexpr std::size_t round_up(std::size_t x, std::size_t to) noexcept { return (x + to - 1) / to * to; }

  void release() noexcept {
    if (map_length_ != 0) {  // a mapping (anonymous or of a file), whatever address it got
      ::munmap(map_base_, map_length_);
    } else if (host_deallocate_ != nullptr) {
      host_deallocate_(data_);
    } else if (data_ != nullptr) {
      std::free(data_);
    }
    host_deallocate_ = nullptr;
    data_ = nullptr;
    map_base_ = nullptr;
    size_ = map_length_ = 0;
    file_backed_ = false;
  }

  std::byte* data_ = nullptr;
  std::size_t size_ = 0;
  void* map_base_ = nullptr;  // non-null when the bytes live in a mapping we must unmap
  std::size_t map_length_ = 0;
  bool file_backed_ = false;
  void (*host_deallocate_)(void*) noexcept = nullptr;  // set when a storage_allocator made the bytes
};

}  // namespace blume
