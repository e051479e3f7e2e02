// SPDX-License-Identifier: Apache-2.0
#include "codec.hpp"

#include <algorithm>
#include <charconv>
#include <climits>
#include <cstring>
#include <exception>
#include <limits>
#include <vector>

#include "blume/error.hpp"

namespace blume::redis {

namespace {

std::uint64_t saturating_add(std::uint64_t a, std::uint64_t b) noexcept {
  return b > UINT64_MAX - a ? UINT64_MAX : a + b;
}
std::uint64_t saturating_mul(std::uint64_t a, std::uint64_t b) noexcept {
  return a != 0 && b > UINT64_MAX / a ? UINT64_MAX : a * b;
}

}  // namespace

std::uint64_t filter_memory(const rb::bloom_chain_record& r) noexcept {
  std::uint64_t n = saturating_add(bloom_fixed_bytes, saturating_mul(bloom_layer_bytes, r.layers.size()));
  for (const rb::bloom_layer_record& l : r.layers) n = saturating_add(n, l.bytes);
  return n;
}

std::uint64_t filter_memory(const rb::cuckoo_record& r) noexcept {
  std::uint64_t n = saturating_add(cuckoo_fixed_bytes, saturating_mul(cuckoo_sub_filter_bytes, r.sub_filters));
  std::uint64_t buckets = r.buckets;
  // Once the sum saturates no later sub-filter can bring it back, so a forged count costs no more work.
  for (std::uint64_t j = 0; j < r.sub_filters && n != UINT64_MAX; ++j) {
    n = saturating_add(n, saturating_mul(buckets, r.bucket_size));
    buckets = saturating_mul(buckets, r.expansion);
  }
  return n;
}

over_limit::over_limit(std::uint64_t needed, std::uint64_t limit)
    : std::runtime_error(over_limit_reply(needed, limit)), needed_(needed), limit_(limit) {}

namespace {
std::string over_limit_text(std::uint64_t needed, std::uint64_t limit) {
  return "filter needs " + (needed == UINT64_MAX ? std::string("more than 2^64") : std::to_string(needed)) +
         " bytes, more than bf.max-filter-memory (" + std::to_string(limit) + ")";
}
}  // namespace

std::string over_limit_reply(std::uint64_t needed, std::uint64_t limit) {
  return "ERR " + over_limit_text(needed, limit);
}

rb::bloom_chain_record bloom_header(std::string_view bytes, std::uint64_t limit) {
  rb::bloom_chain_record r = rb::decode_header(bytes);
  rb::validate(r);
  if (const std::uint64_t needed = filter_memory(r); needed > limit) throw over_limit(needed, limit);
  return r;
}

rb::cuckoo_record cuckoo_header(std::string_view bytes, std::uint64_t limit, std::uint64_t max_sub_filters) {
  const rb::cuckoo_record r = rb::decode_cuckoo_header(bytes);
  rb::validate(r, max_sub_filters);
  if (const std::uint64_t needed = filter_memory(r); needed > limit) throw over_limit(needed, limit);
  return r;
}

// ---- RDB records -------------------------------------------------------------------------------------

namespace {

/// How a loader refuses a record: the reason, named by its data type, in *why, and no value.
template <class Value>
auto refusal(std::string* why, const char* type) {
  return [why, type](std::string reason) {
    if (why != nullptr) *why = std::string(type) + " record: " + std::move(reason);
    return std::unique_ptr<Value>();
  };
}

}  // namespace

std::unique_ptr<rb::bloom_value> load_bloom(rdb_reader& in, int encver, const rdb_limits& limits, std::string* why) {
  const auto fail = refusal<rb::bloom_value>(why, "MBbloom--");
  if (encver < 0 || encver > bloom_encoding_version) return fail("encoding version " + std::to_string(encver));
  rb::bloom_chain_record r;
  r.size = in.load_unsigned();
  const std::uint64_t layers = in.load_unsigned();
  const std::uint64_t options = encver >= 2 ? in.load_unsigned() : 0;
  const std::uint64_t growth = encver >= 4 ? in.load_unsigned() : 2;
  if (in.failed()) return fail("truncated");
  if (layers == 0 || layers > scalable_max_layers) return fail(std::to_string(layers) + " layers");
  if (options > UINT32_MAX || growth > UINT32_MAX) return fail("options or growth beyond 32 bits");
  r.options = static_cast<std::uint32_t>(options);
  r.growth = static_cast<std::uint32_t>(growth);
  // Every size is checked as soon as the record states it, before the array that follows is read (the
  // server allocates a string as long as its prefix says), and the sum never exceeds the limit.
  std::uint64_t memory = bloom_fixed_bytes + bloom_layer_bytes * layers;
  if (memory > limits.max_filter_memory) return fail(over_limit_text(memory, limits.max_filter_memory));
  r.layers.resize(static_cast<std::size_t>(layers));
  std::vector<rdb_buffer> arrays;
  arrays.reserve(r.layers.size());
  for (rb::bloom_layer_record& l : r.layers) {
    l.entries = in.load_unsigned();
    l.error = in.load_double();
    const std::uint64_t hashes = in.load_unsigned();
    l.bpe = in.load_double();
    if (encver == 0) {
      // The oldest encoding stores no bit count; RedisBloom derived it as entries × bpe. A corrupt
      // record's NaN, negative or oversized product has no integer value (converting it is undefined).
      const double bits = static_cast<double>(l.entries) * l.bpe;
      if (!(bits >= 0 && bits < 18446744073709551616.0)) return fail("entries × bits per entry is not a bit count");
      l.bits = static_cast<std::uint64_t>(bits);
    } else {
      l.bits = in.load_unsigned();
      const std::uint64_t n2 = in.load_unsigned();
      if (n2 > 63) return fail("power-of-two exponent " + std::to_string(n2));
      l.n2 = static_cast<std::uint8_t>(n2);
    }
    if (in.failed()) return fail("truncated");
    if (hashes > UINT32_MAX) return fail("hash count " + std::to_string(hashes));
    l.hashes = static_cast<std::uint32_t>(hashes);
    const std::uint64_t declared = l.bits / 8 + (l.bits % 8 != 0 ? 1 : 0);
    if (declared > limits.max_filter_memory - memory)
      return fail(over_limit_text(saturating_add(memory, declared), limits.max_filter_memory));
    memory += declared;
    rdb_buffer bits = in.load_string();
    if (in.failed() || !bits.valid()) return fail("truncated");
    l.bytes = bits.bytes().size();
    if (l.bytes != declared)
      return fail("a layer of " + std::to_string(l.bits) + " bits holds " + std::to_string(l.bytes) + " bytes");
    arrays.push_back(std::move(bits));
    l.size = in.load_unsigned();
    if (in.failed()) return fail("truncated");
  }
  try {
    auto v = std::make_unique<rb::bloom_value>(rb::value_from(r));  // validates first
    auto out = v->chain.mutable_layers();
    for (std::size_t i = 0; i < arrays.size(); ++i) {
      const std::span<std::byte> dst = out[i].mutable_bytes();
      std::memcpy(dst.data(), arrays[i].bytes().data(), dst.size());
      // The load reads every byte anyway; counting here keeps the first estimate after it O(layers).
      v->set_bits[i] = rb::count_set_bits({dst.data(), dst.size()});
    }
    return v;
  } catch (const std::exception& e) {
    return fail(e.what());
  }
}

std::unique_ptr<rb::cuckoo_value> load_cuckoo(rdb_reader& in, int encver, const rdb_limits& limits, std::string* why) {
  const auto fail = refusal<rb::cuckoo_value>(why, "MBbloomCF");
  if (encver < 0 || encver > cuckoo_encoding_version) return fail("encoding version " + std::to_string(encver));
  rb::cuckoo_record r;
  r.sub_filters = in.load_unsigned();
  r.buckets = in.load_unsigned();
  r.items = in.load_unsigned();
  if (encver < cuckoo_encoding_version) {  // before 4: no deletes; bucket, iterations and expansion as configured
    r.bucket_size = limits.cf_bucket_size;
    r.max_iterations = limits.cf_max_iterations;
    r.expansion = limits.cf_expansion;
  } else {
    // Clamped rather than truncated, so a huge stored value cannot wrap round to a valid one.
    const auto field = [&in] {
      return static_cast<std::uint32_t>(std::min<std::uint64_t>(in.load_unsigned(), 1u << 20));
    };
    r.deletes = in.load_unsigned();
    r.bucket_size = field();
    r.max_iterations = field();
    r.expansion = field();
  }
  if (in.failed()) return fail("truncated");
  // The header alone describes the whole filter: refuse it before building anything, and build it with
  // its tables at once, so a record's work is bounded by the limit and cuckoo_max_filters.
  std::unique_ptr<rb::cuckoo_value> v;
  try {
    rb::validate(r);
    if (const std::uint64_t needed = filter_memory(r); needed > limits.max_filter_memory)
      return fail(over_limit_text(needed, limits.max_filter_memory));
    v = std::make_unique<rb::cuckoo_value>(rb::value_from(r));
  } catch (const std::exception& e) {
    return fail(e.what());
  }
  for (std::size_t j = 0; j < r.sub_filters; ++j) {
    if (encver >= cuckoo_encoding_version) {
      const std::uint64_t buckets = in.load_unsigned();
      if (buckets != v->filter.sub_filter_buckets(j))
        return fail("sub-filter " + std::to_string(j) + "'s bucket count");
    }
    const rdb_buffer slots = in.load_string();
    if (in.failed() || !slots.valid()) return fail("truncated");
    if (slots.bytes().size() != v->filter.slot_bytes(j).size() || !v->filter.write_slot_bytes(j, 0, slots.bytes()))
      return fail("sub-filter " + std::to_string(j) + " holds " + std::to_string(slots.bytes().size()) + " bytes");
  }
  return v;
}

void save_bloom(rdb_writer& out, const rb::bloom_value& v) {
  const rb::bloom_chain_record r = rb::record_of(v);
  out.save_unsigned(r.size);
  out.save_unsigned(r.layers.size());
  out.save_unsigned(r.options);
  out.save_unsigned(r.growth);
  const auto layers = v.chain.layers();
  for (std::size_t i = 0; i < r.layers.size(); ++i) {
    const rb::bloom_layer_record& l = r.layers[i];
    out.save_unsigned(l.entries);
    out.save_double(l.error);
    out.save_unsigned(l.hashes);
    out.save_double(l.bpe);
    out.save_unsigned(l.bits);
    out.save_unsigned(l.n2);
    out.save_string({layers[i].storage().data(), layers[i].storage().size()});
    out.save_unsigned(l.size);
  }
}

void save_cuckoo(rdb_writer& out, const rb::cuckoo_value& v) {
  const rb::cuckoo_record r = rb::record_of(v);
  out.save_unsigned(r.sub_filters);
  out.save_unsigned(r.buckets);
  out.save_unsigned(r.items);
  out.save_unsigned(r.deletes);
  out.save_unsigned(r.bucket_size);
  out.save_unsigned(r.max_iterations);
  out.save_unsigned(r.expansion);
  for (std::size_t j = 0; j < v.filter.sub_filters(); ++j) {
    out.save_unsigned(v.filter.sub_filter_buckets(j));
    out.save_string(v.filter.slot_bytes(j));
  }
}

// ---- Redis's encoding of module values (rdb.c: rdbSaveLen, rdbSaveRawString, RDB_MODULE_OPCODE_*) ----

namespace {
constexpr std::uint8_t opcode_uint = 2, opcode_double = 4, opcode_string = 5;
constexpr std::uint8_t len_6bit = 0, len_14bit = 1, len_32bit = 0x80, len_64bit = 0x81, len_encoded = 3;
constexpr std::uint8_t enc_int8 = 0, enc_int16 = 1, enc_int32 = 2;
}  // namespace

bool byte_rdb_reader::take(std::size_t n, const std::byte** out) {
  if (failed_ || n > remaining()) {
    failed_ = true;
    return false;
  }
  *out = bytes_.data() + at_;
  at_ += n;
  return true;
}

bool byte_rdb_reader::length(std::uint64_t* out, bool* encoded) {
  const std::byte* p = nullptr;
  if (!take(1, &p)) return false;
  const auto first = static_cast<std::uint8_t>(*p);
  *encoded = false;
  const auto big_endian = [&](std::size_t n) {
    const std::byte* q = nullptr;
    if (!take(n, &q)) return false;
    std::uint64_t v = 0;
    for (std::size_t i = 0; i < n; ++i) v = (v << 8) | static_cast<std::uint8_t>(q[i]);
    *out = v;
    return true;
  };
  switch (first >> 6) {
    case len_6bit: *out = first & 0x3F; return true;
    case len_14bit: {
      const std::byte* q = nullptr;
      if (!take(1, &q)) return false;
      *out = (std::uint64_t{first & 0x3Fu} << 8) | static_cast<std::uint8_t>(*q);
      return true;
    }
    case len_encoded:
      *encoded = true;
      *out = first & 0x3F;
      return true;
    default:
      if (first == len_32bit) return big_endian(4);
      if (first == len_64bit) return big_endian(8);
      failed_ = true;
      return false;
  }
}

bool byte_rdb_reader::opcode(std::uint8_t expected) {
  std::uint64_t op = 0;
  bool encoded = false;
  if (!length(&op, &encoded) || encoded || op != expected) failed_ = true;
  return !failed_;
}

std::uint64_t byte_rdb_reader::load_unsigned() {
  std::uint64_t v = 0;
  bool encoded = false;
  if (!opcode(opcode_uint) || !length(&v, &encoded)) return 0;
  return v;  // an "encoded" length byte reads as its low six bits, as rdbLoadLen does
}

double byte_rdb_reader::load_double() {
  const std::byte* p = nullptr;
  if (!opcode(opcode_double) || !take(sizeof(double), &p)) return 0;
  double v;
  std::memcpy(&v, p, sizeof v);  // little-endian on disk and here (hash.hpp requires it)
  return v;
}

rdb_buffer byte_rdb_reader::load_string() {
  std::uint64_t len = 0;
  bool encoded = false;
  if (!opcode(opcode_string) || !length(&len, &encoded)) return {};
  const std::byte* p = nullptr;
  if (!encoded) {
    if (len > remaining() || !take(static_cast<std::size_t>(len), &p)) {
      failed_ = true;
      return {};
    }
    return {reinterpret_cast<const char*>(p), static_cast<std::size_t>(len), nullptr};
  }
  long long value = 0;
  const auto little_endian = [&](std::size_t n) -> bool {
    if (!take(n, &p)) return false;
    std::uint32_t u = 0;
    for (std::size_t i = n; i-- > 0;) u = (u << 8) | static_cast<std::uint8_t>(p[i]);
    if (n == 1) value = static_cast<std::int8_t>(u);
    if (n == 2) value = static_cast<std::int16_t>(u);
    if (n == 4) value = static_cast<std::int32_t>(u);
    return true;
  };
  const bool ok = (len == enc_int8 && little_endian(1)) || (len == enc_int16 && little_endian(2)) ||
                  (len == enc_int32 && little_endian(4));
  if (!ok) {  // LZF (3) or unknown: not produced by our writer
    failed_ = true;
    return {};
  }
  scratch_ = std::to_string(value);
  return {scratch_.data(), scratch_.size(), nullptr};
}

void byte_rdb_writer::length(std::uint64_t n) {
  if (n < 64) {
    out_.push_back(static_cast<char>(n));
  } else if (n < 16384) {
    out_.push_back(static_cast<char>(0x40 | (n >> 8)));
    out_.push_back(static_cast<char>(n & 0xFF));
  } else {
    const int bytes = n <= UINT32_MAX ? 4 : 8;
    out_.push_back(static_cast<char>(bytes == 4 ? len_32bit : len_64bit));
    for (int i = bytes - 1; i >= 0; --i) out_.push_back(static_cast<char>((n >> (8 * i)) & 0xFF));
  }
}

void byte_rdb_writer::save_unsigned(std::uint64_t v) {
  length(opcode_uint);
  length(v);
}

void byte_rdb_writer::save_double(double v) {
  length(opcode_double);
  char b[sizeof v];
  std::memcpy(b, &v, sizeof v);
  out_.append(b, sizeof v);
}

void byte_rdb_writer::save_string(std::span<const std::byte> bytes) {
  length(opcode_string);
  const std::string_view s(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  // rdbTryIntegerEncoding: a short string that is the canonical text of a 32-bit integer is stored as it.
  long long value = 0;
  if (s.size() <= 11 && !s.empty()) {
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
    if (ec == std::errc() && end == s.data() + s.size() && std::to_string(value) == s && value >= INT32_MIN &&
        value <= INT32_MAX) {
      const int n = value >= INT8_MIN && value <= INT8_MAX ? 1 : value >= INT16_MIN && value <= INT16_MAX ? 2 : 4;
      out_.push_back(static_cast<char>(0xC0 | (n == 1 ? enc_int8 : n == 2 ? enc_int16 : enc_int32)));
      const auto u = static_cast<std::uint32_t>(static_cast<std::int32_t>(value));
      for (int i = 0; i < n; ++i) out_.push_back(static_cast<char>((u >> (8 * i)) & 0xFF));
      return;
    }
  }
  length(bytes.size());
  out_.append(s);
}

}  // namespace blume::redis
