// SPDX-License-Identifier: Apache-2.0
// What the module decodes from bytes it cannot trust: LOADCHUNK headers, RDB records (also RESTORE
// payloads) and the RDB records it writes. Nothing here calls the server: the RDB code reads and writes
// through small interfaces (rdb_reader, rdb_writer) that the module implements over RedisModuleIO and
// fuzzers and unit tests over byte buffers in Redis's own encoding, so the same decoding logic runs in
// both. Every size a record declares is checked against the filter memory limit before anything is
// allocated for it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>

#include "blume/compat/redisbloom_format.hpp"

namespace blume::redis {

namespace rb = blume::redisbloom;

/// RedisBloom's Size formula, which MEMORY USAGE and BF.INFO/CF.INFO report and bf.max-filter-memory
/// limits: the struct, one link per Bloom layer or sub-filter, and the arrays.
inline constexpr std::uint64_t bloom_fixed_bytes = 32, bloom_layer_bytes = 64;
inline constexpr std::uint64_t cuckoo_fixed_bytes = 40, cuckoo_sub_filter_bytes = 16;

/// The Size of a filter a record describes (saturating: a forged record cannot wrap it round).
std::uint64_t filter_memory(const rb::bloom_chain_record& r) noexcept;
std::uint64_t filter_memory(const rb::cuckoo_record& r) noexcept;

/// A filter that would hold more than the limit. Carries both numbers for the error reply.
class over_limit : public std::runtime_error {
 public:
  over_limit(std::uint64_t needed, std::uint64_t limit);
  std::uint64_t needed() const noexcept { return needed_; }
  std::uint64_t limit() const noexcept { return limit_; }

 private:
  std::uint64_t needed_, limit_;
};

/// The error reply for a filter over bf.max-filter-memory.
std::string over_limit_reply(std::uint64_t needed, std::uint64_t limit);

/// A BF.LOADCHUNK header: decoded, validated and within `limit`. format_error for a bad header,
/// over_limit for one that asks for more. Allocates only the record.
rb::bloom_chain_record bloom_header(std::string_view bytes, std::uint64_t limit);
/// A CF.LOADCHUNK header (38 bytes), with at most `max_sub_filters` sub-filters; as above.
rb::cuckoo_record cuckoo_header(std::string_view bytes, std::uint64_t limit, std::uint64_t max_sub_filters);

// ---- RDB --------------------------------------------------------------------------------------------

/// A string an rdb_reader hands out: the bytes stay valid until it is destroyed.
class rdb_buffer {
 public:
  using release_fn = void (*)(const char*) noexcept;
  rdb_buffer() noexcept = default;
  rdb_buffer(const char* data, std::size_t size, release_fn release) noexcept
      : data_(data), size_(size), release_(release) {}
  rdb_buffer(rdb_buffer&& o) noexcept : data_(o.data_), size_(o.size_), release_(o.release_) { o.release_ = nullptr; }
  rdb_buffer& operator=(rdb_buffer&& o) noexcept {
    rdb_buffer(std::move(o)).swap(*this);
    return *this;
  }
  ~rdb_buffer() {
    if (release_ != nullptr && data_ != nullptr) release_(data_);
  }
  void swap(rdb_buffer& o) noexcept {
    std::swap(data_, o.data_);
    std::swap(size_, o.size_);
    std::swap(release_, o.release_);
  }
  bool valid() const noexcept { return data_ != nullptr; }
  std::span<const std::byte> bytes() const noexcept { return {reinterpret_cast<const std::byte*>(data_), size_}; }

 private:
  const char* data_ = nullptr;
  std::size_t size_ = 0;
  release_fn release_ = nullptr;
};

/// The fields of a module value in an RDB record, in order. After a failed read failed() is true and
/// every later read returns 0 or an invalid buffer (RedisModule_IsIOError's contract).
class rdb_reader {
 public:
  virtual ~rdb_reader() = default;
  virtual std::uint64_t load_unsigned() = 0;
  virtual double load_double() = 0;
  virtual rdb_buffer load_string() = 0;
  virtual bool failed() const = 0;
};

class rdb_writer {
 public:
  virtual ~rdb_writer() = default;
  virtual void save_unsigned(std::uint64_t v) = 0;
  virtual void save_double(double v) = 0;
  virtual void save_string(std::span<const std::byte> bytes) = 0;
};

/// What an RDB record may ask for, and what cuckoo records from before encoding 4 (which did not store
/// them) take from the configuration.
struct rdb_limits {
  std::uint64_t max_filter_memory = 256ULL << 20;  // the module's default (config.hpp)
  std::uint32_t cf_bucket_size = 2;
  std::uint32_t cf_max_iterations = 20;
  std::uint32_t cf_expansion = 1;
};

/// RedisBloom's type encoding versions (BF_MIN_GROWTH_ENC, CF_MIN_EXPANSION_VERSION).
inline constexpr int bloom_encoding_version = 4;
inline constexpr int cuckoo_encoding_version = 4;

/// Decodes an MBbloom-- record of encoding `encver`; nullptr for bad data, with the reason in *why.
std::unique_ptr<rb::bloom_value> load_bloom(rdb_reader& in, int encver, const rdb_limits& limits, std::string* why);
/// Decodes an MBbloomCF record; nullptr for bad data, with the reason in *why.
std::unique_ptr<rb::cuckoo_value> load_cuckoo(rdb_reader& in, int encver, const rdb_limits& limits, std::string* why);

/// The records RedisBloom writes (encoding version 4).
void save_bloom(rdb_writer& out, const rb::bloom_value& v);
void save_cuckoo(rdb_writer& out, const rb::cuckoo_value& v);

// ---- RDB records as bytes (tests and fuzzers) ----------------------------------------------------------

/// A module value's fields as Redis encodes them in an RDB file or DUMP payload (RDB_TYPE_MODULE_2):
/// an opcode per field (2 unsigned, 4 double, 5 string) and Redis's length encoding. Strings are
/// written raw; integer-encoded strings are read too, LZF-compressed ones are refused.
class byte_rdb_reader final : public rdb_reader {
 public:
  explicit byte_rdb_reader(std::span<const std::byte> bytes) noexcept : bytes_(bytes) {}
  std::uint64_t load_unsigned() override;
  double load_double() override;
  rdb_buffer load_string() override;
  bool failed() const override { return failed_; }
  /// Bytes not read yet.
  std::size_t remaining() const noexcept { return bytes_.size() - at_; }

 private:
  bool opcode(std::uint8_t expected);
  bool length(std::uint64_t* out, bool* encoded);
  bool take(std::size_t n, const std::byte** out);

  std::span<const std::byte> bytes_;
  std::size_t at_ = 0;
  bool failed_ = false;
  std::string scratch_;  // the decimal text of an integer-encoded string
};

class byte_rdb_writer final : public rdb_writer {
 public:
  void save_unsigned(std::uint64_t v) override;
  void save_double(double v) override;
  void save_string(std::span<const std::byte> bytes) override;
  const std::string& bytes() const noexcept { return out_; }

 private:
  void length(std::uint64_t n);
  std::string out_;
};

}  // namespace blume::redis
