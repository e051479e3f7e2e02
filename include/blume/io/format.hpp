// SPDX-License-Identifier: Apache-2.0
// The file format: a 192-byte little-endian header (128 bytes in version 1, still read), then the filter's
// payload (for the Bloom kinds, the bit array exactly as it lies in memory). Layout, field by field, in docs/format.md. This is the only code
// that reads or writes serialized filters; it validates everything before it trusts anything, and throws
// format_error with a message saying what is wrong. What a kind provides to be stored: serialization.hpp
// (serializable_filter).
#pragma once

#include <fcntl.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <span>
#include <string>
#include <system_error>
#include <vector>

#include "blume/error.hpp"
#include "blume/hash.hpp"
#include "blume/io/file_io.hpp"
#include "blume/io/parameters.hpp"
#include "blume/io/serialization.hpp"
#include "blume/kinds.hpp"
#include "blume/storage.hpp"

namespace blume {

inline constexpr std::array<char, 8> file_magic = {'B', 'L', 'U', 'M', 'E', 'F', 'L', 'T'};
/// The version this build writes. Version 1 files (128-byte headers, no design record) are still read.
inline constexpr std::uint32_t format_version = 2;
/// The size of the header this build writes: 192 bytes, so the payload stays 64-byte aligned.
inline constexpr std::size_t header_size = 192;
inline constexpr std::size_t header_size_v1 = 128;

/// What a filter was planned for: the capacity and the target false-positive rate its parameters came
/// from. Geometry alone cannot say this (a planner may round, and some kinds forget or grow), so it is
/// recorded beside the parameters; zero means not recorded (a version-1 file, or a filter saved without it).
struct filter_design {
  std::uint64_t items = 0;
  double fpr = 0;
  bool recorded() const noexcept { return items != 0; }
  friend bool operator==(const filter_design&, const filter_design&) = default;
};

/// The decoded header of a filter file.
struct file_header {
  std::uint32_t version = format_version;
  std::uint32_t size = header_size;  // header bytes: 128 (version 1) or 192 (version 2)
  filter_kind kind{};                // 0: none
  hash_id hash = hash_id::xxh3_128;
  // The geometry, in the fields of filter_parameters (each kind gives them its meaning).
  std::uint32_t layout = 0;
  std::uint64_t seed = 0;
  std::uint64_t primary = 0;
  std::uint32_t secondary = 0;
  std::array<std::uint64_t, 6> extra{};  // kind-specific parameters (zero for the Bloom kinds)
  std::uint64_t inserted = 0;
  std::uint64_t payload_size = 0;
  std::uint64_t payload_checksum = 0;  // XXH64 of the payload, seed 0
  filter_design design;                // version 2 only
};

/// How much map_file checks before returning.
enum class verify {
  full,         // header and payload checksum: one pass over the payload (~10 ms per 100 MB from cache)
  header_only,  // header checksum and sizes only: opens a filter of any size in microseconds
};

namespace detail {

// Byte offsets of the header fields (docs/format.md).
inline constexpr std::size_t off_version = 8, off_header_size = 12, off_kind = 16, off_hash = 18, off_block_bits = 20,
                             off_seed = 24, off_bits = 32, off_hashes = 40, off_flags = 44, off_inserted = 48,
                             off_payload_size = 56, off_payload_checksum = 64, off_reserved = 72,
                             off_header_checksum_v1 = 120, off_design_items = 120, off_design_fpr = 128,
                             off_reserved_v2 = 136, off_header_checksum = 184;

template <class T>
T read_le(const std::byte* p) noexcept {
  T v;
  std::memcpy(&v, p, sizeof v);  // the host is little-endian (static_assert in hash.hpp)
  return v;
}
template <class T>
void write_le(std::byte* p, T v) noexcept {
  std::memcpy(p, &v, sizeof v);
}

inline std::uint64_t checksum(const void* data, std::size_t len) noexcept { return XXH64(data, len, 0); }

inline bool known_kind(std::uint16_t k) noexcept { return is_known(static_cast<filter_kind>(k)); }

}  // namespace detail

namespace detail {
[[noreturn]] inline void truncated_header(const std::string& what, std::uint64_t size) {
  throw format_error("truncated header: " + what + std::to_string(size) +
                     " bytes, a filter file starts with at least " + std::to_string(header_size_v1));
}
}  // namespace detail

/// Encodes a header in the current version (computing its checksum); h.version and h.size are ignored.
inline std::array<std::byte, header_size> encode_header(const file_header& h) noexcept {
  using namespace detail;
  std::array<std::byte, header_size> out{};
  std::memcpy(out.data(), file_magic.data(), file_magic.size());
  write_le<std::uint32_t>(out.data() + off_version, format_version);
  write_le<std::uint32_t>(out.data() + off_header_size, static_cast<std::uint32_t>(header_size));
  write_le<std::uint16_t>(out.data() + off_kind, static_cast<std::uint16_t>(h.kind));
  write_le<std::uint16_t>(out.data() + off_hash, static_cast<std::uint16_t>(h.hash));
  write_le<std::uint32_t>(out.data() + off_block_bits, h.layout);
  write_le<std::uint64_t>(out.data() + off_seed, h.seed);
  write_le<std::uint64_t>(out.data() + off_bits, h.primary);
  write_le<std::uint32_t>(out.data() + off_hashes, h.secondary);
  write_le<std::uint64_t>(out.data() + off_inserted, h.inserted);
  write_le<std::uint64_t>(out.data() + off_payload_size, h.payload_size);
  write_le<std::uint64_t>(out.data() + off_payload_checksum, h.payload_checksum);
  for (std::size_t i = 0; i < h.extra.size(); ++i)
    write_le<std::uint64_t>(out.data() + off_reserved + 8 * i, h.extra[i]);
  write_le<std::uint64_t>(out.data() + off_design_items, h.design.items);
  write_le<std::uint64_t>(out.data() + off_design_fpr, std::bit_cast<std::uint64_t>(h.design.fpr));
  write_le<std::uint64_t>(out.data() + off_header_checksum, checksum(out.data(), off_header_checksum));
  return out;
}

/// Decodes and validates a header of either version: magic, version, header size, header checksum, known
/// kind and hash, zero flags and reserved bytes, a plausible design record. `bytes` is at least the header
/// (it may be the whole file).
inline file_header decode_header(std::span<const std::byte> bytes) {
  using namespace detail;
  if (bytes.size() < header_size_v1) truncated_header("", bytes.size());
  const std::byte* p = bytes.data();
  if (std::memcmp(p, file_magic.data(), file_magic.size()) != 0)
    throw format_error("bad magic: not a blume filter file");
  file_header h;
  h.version = read_le<std::uint32_t>(p + off_version);
  if (h.version != 1 && h.version != format_version)
    throw format_error("unsupported format version " + std::to_string(h.version) +
                       " (this build reads versions 1 and " + std::to_string(format_version) + ")");
  const std::size_t expected_size = h.version == 1 ? header_size_v1 : header_size;
  if (const auto size = read_le<std::uint32_t>(p + off_header_size); size != expected_size)
    throw format_error("bad header size " + std::to_string(size) + " (version " + std::to_string(h.version) +
                       " headers are " + std::to_string(expected_size) + " bytes)");
  h.size = static_cast<std::uint32_t>(expected_size);
  if (bytes.size() < expected_size)
    throw format_error("truncated header: " + std::to_string(bytes.size()) + " bytes, a version " +
                       std::to_string(h.version) + " header has " + std::to_string(expected_size));
  const std::size_t checksum_at = expected_size - 8;
  if (read_le<std::uint64_t>(p + checksum_at) != checksum(p, checksum_at))
    throw format_error("header checksum mismatch: the header is corrupt");
  const auto kind = read_le<std::uint16_t>(p + off_kind);
  if (!known_kind(kind)) throw format_error("unknown filter kind " + std::to_string(kind));
  h.kind = static_cast<filter_kind>(kind);
  const auto hash = read_le<std::uint16_t>(p + off_hash);
  if (hash < static_cast<std::uint16_t>(hash_id::xxh3_128) || hash > static_cast<std::uint16_t>(hash_id::flyhash))
    throw format_error("unknown hash function id " + std::to_string(hash));
  h.hash = static_cast<hash_id>(hash);
  h.layout = read_le<std::uint32_t>(p + off_block_bits);
  h.seed = read_le<std::uint64_t>(p + off_seed);
  h.primary = read_le<std::uint64_t>(p + off_bits);
  h.secondary = read_le<std::uint32_t>(p + off_hashes);
  if (read_le<std::uint32_t>(p + off_flags) != 0) throw format_error("unknown header flags");
  h.inserted = read_le<std::uint64_t>(p + off_inserted);
  h.payload_size = read_le<std::uint64_t>(p + off_payload_size);
  h.payload_checksum = read_le<std::uint64_t>(p + off_payload_checksum);
  for (std::size_t i = 0; i < h.extra.size(); ++i) h.extra[i] = read_le<std::uint64_t>(p + off_reserved + 8 * i);
  if (h.version >= 2) {
    h.design.items = read_le<std::uint64_t>(p + off_design_items);
    h.design.fpr = std::bit_cast<double>(read_le<std::uint64_t>(p + off_design_fpr));
    // Both or neither, and a rate in (0, 1): what readers show and check against must be meaningful.
    const bool none = h.design.items == 0 && read_le<std::uint64_t>(p + off_design_fpr) == 0;
    if (!none && !(h.design.items != 0 && h.design.fpr > 0 && h.design.fpr < 1))
      throw format_error("bad design record: capacity " + std::to_string(h.design.items) + ", rate " +
                         std::to_string(h.design.fpr));
    for (std::size_t at = off_reserved_v2; at < off_header_checksum; ++at)
      if (p[at] != std::byte{0}) throw format_error("reserved header bytes are not zero");
  }
  return h;
}

namespace detail {

inline filter_parameters parameters_of(const file_header& h) noexcept {
  filter_parameters p;
  p.primary = h.primary;
  p.secondary = h.secondary;
  p.layout = h.layout;
  p.extra = h.extra;
  return p;
}

/// The payload's size against what F's parameters (or, for a payload that describes itself, its own
/// table within `payload`) call for.
template <serializable_filter F>
void check_payload_size_for(const file_header& h, std::span<const std::byte> payload) {
  std::uint64_t expected = 0;
  try {
    if constexpr (sized_by_header<F>) {
      expected = F::payload_size(parameters_of(h));
    } else {
      expected = F::payload_size(parameters_of(h), payload);
    }
  } catch (const invalid_argument& e) {
    throw format_error(std::string("invalid parameters: ") + e.what());
  }
  if (h.payload_size != expected)
    throw format_error("payload size " + std::to_string(h.payload_size) + " does not match the parameters (" +
                       std::to_string(h.primary) + " bits need " + std::to_string(expected) + " bytes)");
}

/// Checks that a header describes a valid F and, for a payload the header sizes, that its payload size is
/// the one F's parameters need; format_error saying why not.
template <serializable_filter F>
void check_header_for(const file_header& h) {
  if (h.kind != F::kind)
    throw format_error("file holds a '" + std::string(kind_name(h.kind)) + "' filter, not a '" + std::string(F::name) +
                       "' filter");
  if (h.hash != F::hasher_type::id) {
    // RedisBloom's hashes mark files meant for Redis (blume build --redisbloom, blume redis pull): say so.
    const bool redisbloom = h.hash == hash_id::murmur64a_pair || h.hash == hash_id::murmur64a;
    throw format_error("file uses hash function id " + std::to_string(static_cast<int>(h.hash)) +
                       (redisbloom ? " (RedisBloom's: a filter for Redis, read by `blume redis push`)" : "") +
                       ", this filter type uses id " + std::to_string(static_cast<int>(F::hasher_type::id)));
  }
  if constexpr (sized_by_header<F>) check_payload_size_for<F>(h, {});
}

/// What check_header_for could not check before the payload was at hand.
template <serializable_filter F>
void check_payload_for(const file_header& h, std::span<const std::byte> payload) {
  if constexpr (!sized_by_header<F>) check_payload_size_for<F>(h, payload);
}

inline void check_file_size(std::uint64_t actual, const file_header& h) {
  const std::uint64_t expected = h.size + h.payload_size;
  if (actual < expected)
    throw format_error("truncated: " + std::to_string(actual) + " bytes, the header announces " +
                       std::to_string(expected));
  if (actual > expected)
    throw format_error("trailing data: " + std::to_string(actual) + " bytes, the header announces " +
                       std::to_string(expected));
}

inline void check_checksum(const std::byte* payload, const file_header& h) {
  if (checksum(payload, h.payload_size) != h.payload_checksum)
    throw format_error("payload checksum mismatch: the filter's bits are corrupt");
}

template <class F>
F assemble(const file_header& h, byte_storage payload) {
  return F::from_payload(parameters_of(h), h.seed, h.inserted, std::move(payload));
}

/// The header of a filter and the spans of its payload, in order.
template <class F>
file_header header_of(const F& f, std::vector<std::span<const std::byte>>& segments, const filter_design& design) {
  // Write only what a reader accepts (decode_header): none, or a capacity with a rate in (0, 1).
  if (design != filter_design{} && !(design.items != 0 && design.fpr > 0 && design.fpr < 1))
    throw invalid_argument("design record: capacity " + std::to_string(design.items) + " and rate " +
                           std::to_string(design.fpr) + " (give both, the rate in (0, 1), or neither)");
  const filter_parameters p = f.parameters();
  file_header h;
  h.design = design;
  h.kind = F::kind;
  h.hash = F::hasher_type::id;
  h.layout = p.layout;
  h.seed = f.seed();
  h.primary = p.primary;
  h.secondary = p.secondary;
  h.extra = p.extra;
  h.inserted = f.inserted();
  XXH64_state_t state;
  XXH64_reset(&state, 0);
  f.for_each_payload_segment([&](std::span<const std::byte> segment) {
    segments.push_back(segment);
    h.payload_size += segment.size();
    XXH64_update(&state, segment.data(), segment.size());
  });
  h.payload_checksum = XXH64_digest(&state);
  return h;
}

inline void read_all(int fd, void* data, std::size_t len, const std::filesystem::path& path) {
  auto* p = static_cast<char*>(data);
  while (len > 0) {
    const ssize_t n = ::read(fd, p, std::min<std::size_t>(len, std::size_t{1} << 30));
    if (n < 0) {
      if (errno == EINTR) continue;
      throw io_error(errno_text("cannot read", path));
    }
    if (n == 0) throw format_error("truncated: '" + path.string() + "' ended early");
    p += n;
    len -= static_cast<std::size_t>(n);
  }
}

inline std::uint64_t open_for_reading(detail::fd_guard& fd, const std::filesystem::path& path) {
  fd.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd.fd < 0) throw io_error(errno_text("cannot open", path));
  struct stat st {};
  if (::fstat(fd.fd, &st) != 0) throw io_error(errno_text("cannot stat", path));
  if (!S_ISREG(st.st_mode)) throw io_error("cannot read '" + path.string() + "': not a regular file");
  return static_cast<std::uint64_t>(st.st_size);
}

}  // namespace detail

namespace detail {

/// Hands `sink` the file's parts in order, the encoded header then the payload's segments, without
/// copying the payload: what every writer (bytes, file, stream) starts from.
template <class F, class Sink>
void with_file_parts(const F& f, const filter_design& design, Sink&& sink) {
  std::vector<std::span<const std::byte>> parts(1);
  const auto header = encode_header(header_of(f, parts, design));
  parts[0] = header;
  sink(std::span<const std::span<const std::byte>>(parts));
}

}  // namespace detail

/// The filter serialized: header then payload, with `design` recorded in the header.
template <class F>
std::vector<std::byte> to_bytes(const F& f, const filter_design& design = {}) {
  std::vector<std::byte> out;
  detail::with_file_parts(f, design, [&](std::span<const std::span<const std::byte>> parts) {
    std::size_t total = 0;
    for (auto part : parts) total += part.size();
    out.reserve(total);
    for (auto part : parts) out.insert(out.end(), part.begin(), part.end());
  });
  return out;
}

/// A filter from serialized bytes (copied). Throws format_error for anything not a valid F.
template <class F>
F from_bytes(std::span<const std::byte> bytes) {
  const file_header h = decode_header(bytes);
  detail::check_header_for<F>(h);
  detail::check_file_size(bytes.size(), h);
  detail::check_payload_for<F>(h, bytes.subspan(h.size, h.payload_size));
  detail::check_checksum(bytes.data() + h.size, h);
  byte_storage storage = byte_storage::allocate(h.payload_size);
  if (h.payload_size != 0) std::memcpy(storage.data(), bytes.data() + h.size, h.payload_size);
  return detail::assemble<F>(h, std::move(storage));
}

/// Checks a decoded header as from_bytes does before it reads a payload: the kind is F's and the payload
/// size is the one its geometry needs, so a reader receiving the payload in pieces (a LOADCHUNK stream, an
/// RDB record) knows what to allocate before it allocates. Throws format_error.
template <class F>
void check_header(const file_header& h) {
  detail::check_header_for<F>(h);
}

/// A filter from a checked header and its whole payload, adopted without a copy: from_bytes's payload
/// and checksum checks for a reader that received the payload in pieces. Throws format_error.
template <class F>
F from_parts(const file_header& h, byte_storage payload) {
  detail::check_header_for<F>(h);
  if (payload.size() != h.payload_size)
    throw format_error("payload is " + std::to_string(payload.size()) + " bytes, the header says " +
                       std::to_string(h.payload_size));
  detail::check_payload_for<F>(h, std::span<const std::byte>(payload.data(), payload.size()));
  detail::check_checksum(payload.data(), h);
  return detail::assemble<F>(h, std::move(payload));
}

/// Saves atomically (see write_file_atomically for what it guarantees, also under concurrent writers, and
/// what it refuses to replace), with `design` recorded in the header.
template <class F>
void save(const F& f, const std::filesystem::path& path, const filter_design& design = {},
          const write_options& options = {}) {
  detail::with_file_parts(f, design, [&](auto parts) { write_file_atomically(path, parts, options); });
}

/// Writes the serialized filter to an open descriptor (a pipe, standard output): not atomic, for streams.
template <class F>
void write_to(const F& f, int fd, const std::string& name, const filter_design& design = {}) {
  detail::with_file_parts(f, design, [&](auto parts) {
    for (auto part : parts) detail::write_all(fd, part.data(), part.size(), name);
  });
}

namespace detail {

/// Reads and decodes the header of an open file of `size` bytes.
inline file_header read_header_from(int fd, std::uint64_t size, const std::filesystem::path& path) {
  if (size < header_size_v1) truncated_header("'" + path.string() + "' has ", size);
  std::array<std::byte, header_size> buf{};
  const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(size, header_size));
  read_all(fd, buf.data(), n, path);
  return decode_header(std::span<const std::byte>(buf.data(), n));
}

}  // namespace detail

/// Reads a file's header without loading the filter.
inline file_header read_header(const std::filesystem::path& path) {
  detail::fd_guard fd;
  const std::uint64_t size = detail::open_for_reading(fd, path);
  const file_header h = detail::read_header_from(fd.fd, size, path);
  detail::check_file_size(size, h);
  return h;
}

/// Loads a filter into memory (huge-page backed when large). Sizes are checked against the file before
/// anything is allocated, so a hostile header cannot make us allocate more than the file holds.
namespace detail {
/// The rest of load once the header `h` of the open file `fd` (of `size` bytes) is read.
template <class F>
F load_payload(const fd_guard& fd, std::uint64_t size, const file_header& h, const std::filesystem::path& path) {
  check_header_for<F>(h);
  check_file_size(size, h);
  if (::lseek(fd.fd, static_cast<off_t>(h.size), SEEK_SET) < 0) throw io_error(errno_text("cannot seek in", path));
  byte_storage storage = byte_storage::allocate(h.payload_size);
  read_all(fd.fd, storage.data(), h.payload_size, path);
  check_payload_for<F>(h, std::span<const std::byte>(storage.data(), h.payload_size));
  check_checksum(storage.data(), h);
  return assemble<F>(h, std::move(storage));
}
}  // namespace detail

template <class F>
F load(const std::filesystem::path& path) {
  detail::fd_guard fd;
  const std::uint64_t size = detail::open_for_reading(fd, path);
  return detail::load_payload<F>(fd, size, detail::read_header_from(fd.fd, size, path), path);
}

namespace detail {

/// A whole file privately mapped, its header decoded and its size checked against the header: one open,
/// so the header and the payload are those of the same file even while writers replace it.
class mapped_file {
 public:
  explicit mapped_file(const std::filesystem::path& path) {
    fd_guard fd;
    const std::uint64_t size = open_for_reading(fd, path);
    if (size < header_size_v1) truncated_header("'" + path.string() + "' has ", size);
    void* base = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd.fd, 0);
    if (base == MAP_FAILED) throw io_error(errno_text("cannot map", path));
    base_ = base;
    size_ = size;
    header = decode_header(bytes());  // the destructor unmaps if this throws
    check_file_size(size, header);
  }
  ~mapped_file() {
    if (base_ != nullptr) ::munmap(base_, size_);
  }
  mapped_file(const mapped_file&) = delete;
  mapped_file& operator=(const mapped_file&) = delete;

  std::span<const std::byte> bytes() const noexcept { return {static_cast<const std::byte*>(base_), size_}; }

  /// The filter, as an F, owning the mapping from here on.
  template <class F>
  F assemble(verify level) {
    check_header_for<F>(header);
    check_payload_for<F>(header, bytes().subspan(header.size, header.payload_size));
    if (level == verify::full) check_checksum(bytes().data() + header.size, header);
    byte_storage storage =
        byte_storage::adopt_mapping(base_, size_, static_cast<std::byte*>(base_) + header.size, header.payload_size);
    base_ = nullptr;
    return detail::assemble<F>(header, std::move(storage));
  }

  file_header header;

 private:
  void* base_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace detail

/// Opens a filter as a private, copy-on-write mapping of the file: nothing is copied, pages are read on
/// first touch, and changes made through the filter stay in memory (the file is never written). With
/// verify::header_only a filter of any size opens in microseconds; verify::full also checks the payload
/// checksum. The file must not be truncated by another process while mapped (blume's own writers never
/// do: they replace files by rename, and a mapping keeps the old inode).
template <class F>
F map_file(const std::filesystem::path& path, verify level = verify::full) {
  detail::mapped_file file(path);
  return file.assemble<F>(level);
}

}  // namespace blume
