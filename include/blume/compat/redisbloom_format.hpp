// SPDX-License-Identifier: Apache-2.0
// RedisBloom's data formats for BF.* and CF.* filters, so a blume module reads and writes exactly the
// bytes RedisBloom does: the SCANDUMP/LOADCHUNK stream (also what AOF rewrites emit) and the fields of its
// RDB encoding, plus the little state RedisBloom keeps beside a filter (option bits, a delete counter). The Redis API calls that move the fields stay in the module; what the fields mean, how they
// are validated and how chunks map onto layers live here. Facts from RedisBloom's src/sb.c, src/rebloom.c
// and deps/bloom/bloom.c (identical in 2.8 and 8.x):
//
//   SCANDUMP header, packed little-endian: u64 size, u32 nfilters, u32 options, u32 growth, then per layer
//   u64 bytes, u64 bits, u64 size, f64 error, f64 bpe, u32 hashes, u64 entries, u8 n2 (53 bytes each).
//   Chunks: iterator = 1 + byte offset into the layers' bit arrays laid end to end; a chunk never spans
//   layers and holds at most 16 MiB; after a chunk the iterator advances by its length.
//   RDB (encoding version 4): size, nfilters, options, growth, then per layer entries, error (double),
//   hashes, bpe (double), bits, n2, the bit array (string), size.
//
// CF (src/cf.c, src/cuckoo.c, src/rebloom.c):
//   SCANDUMP header, 38 bytes packed: u64 items, u64 buckets (of sub-filter 0), u64 deletes,
//   u64 sub-filters, u16 bucket size, u16 max iterations, u16 expansion. Chunks address the sub-filters'
//   slot bytes laid end to end (iterator = 1 + offset) and never span sub-filters; a sub-filter of at most
//   16 MiB is always returned whole, from its start, whatever offset inside it the iterator names.
//   RDB (encoding version 4): sub-filters, buckets, items, deletes, bucket size, max iterations,
//   expansion, then per sub-filter its buckets and its slots (string).
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "blume/compat/redisbloom.hpp"
#include "blume/error.hpp"

namespace blume::redisbloom {

// Chain option bits (RedisBloom's BLOOM_OPT_*).
inline constexpr std::uint32_t option_noround = 1;  // layers sized exactly, not to a power of two
inline constexpr std::uint32_t option_entries_are_bits = 2;
inline constexpr std::uint32_t option_force64 = 4;  // the 64-bit MurmurHash64A pair
inline constexpr std::uint32_t option_no_scaling = 8;
inline constexpr std::uint32_t known_options = option_noround | option_entries_are_bits | option_force64 |
                                               option_no_scaling;

/// The largest chunk SCANDUMP returns (RedisBloom's MAX_SCANDUMP_SIZE).
inline constexpr std::size_t max_chunk_bytes = std::size_t{16} << 20;

/// Each layer's set bits, counted from its array: what a value built around an existing chain starts with.
inline std::vector<std::uint64_t> layer_set_bits(const redisbloom_bloom_chain& chain) {
  std::vector<std::uint64_t> n;
  for (const redisbloom_bloom_layer& l : chain.layers()) n.push_back(l.set_bits());
  return n;
}

/// A BF filter as RedisBloom keeps it: the chain plus its option bits, which SCANDUMP and RDB carry, and
/// each layer's number of set bits. The counts are ours, never read from a payload: every path that
/// changes bits keeps them (bloom_insert, load_bloom_chunk, recount_bits after a merge or a load), so an
/// estimate costs O(layers) instead of a pass over arrays a forged header can make gigabytes long.
struct bloom_value {
  redisbloom_bloom_chain chain;
  std::uint32_t options = option_noround | option_force64;
  // Counted from the chain unless the builder knows them (make_bloom, value_from: all zero).
  std::vector<std::uint64_t> set_bits = layer_set_bits(chain);
};

/// What BF.RESERVE / BF.ADD create: capacity C at rate ε, growing by `growth` unless non-scaling.
inline bloom_value make_bloom(std::uint64_t capacity, double fpr, std::uint32_t growth, bool scaling) {
  return {redisbloom_bloom_chain(capacity, fpr, redisbloom_options(growth, scaling)),
          option_noround | option_force64 | (scaling ? 0u : option_no_scaling), std::vector<std::uint64_t>(1, 0)};
}

/// The set bits among `bytes` (any length and alignment).
inline std::uint64_t count_set_bits(std::span<const std::byte> bytes) noexcept {
  std::uint64_t n = 0;
  std::size_t i = 0;
  for (; i + 8 <= bytes.size(); i += 8) {
    std::uint64_t w;
    std::memcpy(&w, bytes.data() + i, 8);
    n += static_cast<std::uint64_t>(std::popcount(w));
  }
  for (; i < bytes.size(); ++i) n += static_cast<std::uint64_t>(std::popcount(static_cast<unsigned>(bytes[i])));
  return n;
}

/// Counts layer i's bits again from its array (after a merge: O(bits), as the merge itself).
inline void recount_bits(bloom_value& v, std::size_t i) {
  const auto layers = v.chain.layers();
  v.set_bits.resize(layers.size(), 0);
  v.set_bits[i] = count_set_bits({layers[i].storage().data(), layers[i].storage().size()});
}

/// chain.try_insert that keeps set_bits: a new layer starts at 0 and the newest gains the bits the key set.
inline insert_result bloom_insert(bloom_value& v, const digest& d) {
  std::uint64_t fresh = 0;
  const insert_result r = v.chain.try_insert(d, fresh);
  v.set_bits.resize(v.chain.layers().size(), 0);
  v.set_bits.back() += fresh;
  return r;
}

/// BF.ESTIMATE from the kept counts: the chain's estimated_count() without reading a bit.
inline double bloom_estimated_count(const bloom_value& v) noexcept {
  const auto layers = v.chain.layers();
  double n = 0;
  for (std::size_t i = 0; i < layers.size(); ++i)
    n += redisbloom_layout::estimate_items(static_cast<double>(v.set_bits[i]), static_cast<double>(layers[i].bits()),
                                           layers[i].hashes());
  return n;
}

struct bloom_layer_record {
  std::uint64_t bytes = 0, bits = 0, size = 0;
  double error = 0, bpe = 0;
  std::uint32_t hashes = 0;
  std::uint64_t entries = 0;
  std::uint8_t n2 = 0;
};
struct bloom_chain_record {
  std::uint64_t size = 0;
  std::uint32_t options = 0, growth = 0;
  std::vector<bloom_layer_record> layers;

  std::uint64_t total_bytes() const noexcept {
    std::uint64_t n = 0;
    for (const bloom_layer_record& l : layers) n += l.bytes;
    return n;
  }
};

inline constexpr std::size_t bloom_header_fixed_bytes = 20;
inline constexpr std::size_t bloom_header_layer_bytes = 53;

/// The fields RedisBloom would save for this filter.
inline bloom_chain_record record_of(const bloom_value& v) {
  bloom_chain_record r;
  r.size = v.chain.inserted();
  r.options = v.options;
  r.growth = static_cast<std::uint32_t>(v.chain.options().growth);
  const auto layers = v.chain.layers();
  for (std::size_t i = 0; i < layers.size(); ++i) {
    const redisbloom_layout& g = layers[i].layout();
    const layer_spec spec = v.chain.layer_specs()[i];
    r.layers.push_back({g.storage_bytes(), g.bits(), v.chain.layer_counts()[i], spec.fpr, g.bits_per_entry(),
                        g.hashes(), spec.capacity, static_cast<std::uint8_t>(g.n2())});
  }
  return r;
}

/// Checks a record as RedisBloom does (SB_ValidateIntegrity, bloom_validate_integrity), plus what blume
/// needs: the 64-bit hash (FORCE64; older filters used a 32-bit hash blume does not implement), bit
/// arrays of whole 64-bit words, at most max_filter_bits per layer, a growth ≥ 1 for a scaling chain and
/// at most scalable_max_growth (RedisBloom's own EXPANSION limit) for any.
/// Throws format_error naming the first problem. Allocates nothing.
inline void validate(const bloom_chain_record& r) {
  const auto fail = [](const std::string& what) { throw format_error("RedisBloom filter: " + what); };
  if (r.layers.empty()) fail("no layers");
  if (r.layers.size() > scalable_max_layers) fail(std::to_string(r.layers.size()) + " layers is too many");
  if ((r.options & ~known_options) != 0) fail("unknown option bits " + std::to_string(r.options));
  if ((r.options & option_force64) == 0) fail("32-bit hashing (filters from before RedisBloom 2.0) is not supported");
  if ((r.options & option_no_scaling) == 0 && r.growth == 0) fail("a scaling chain with growth 0");
  if (r.growth > scalable_max_growth) fail("growth " + std::to_string(r.growth) + " is beyond 32768");
  std::uint64_t total = 0;
  for (std::size_t i = 0; i < r.layers.size(); ++i) {
    const bloom_layer_record& l = r.layers[i];
    const std::string at = "layer " + std::to_string(i) + ": ";
    if (!(l.error > 0 && l.error < 1)) fail(at + "error rate " + detail::format_number(l.error) + " is outside (0, 1)");
    if (l.entries == 0) fail(at + "capacity 0");
    if (l.n2 > 63 || (l.n2 != 0 && l.bits < (std::uint64_t{1} << l.n2))) fail(at + "bad power-of-two exponent");
    if (l.bits == 0 || l.bytes > UINT64_MAX / 8 || l.bits != l.bytes * 8) fail(at + "bits do not match bytes");
    if (l.bytes % 8 != 0) fail(at + std::to_string(l.bytes) + " bytes is not whole 64-bit words");
    if (l.bits > max_filter_bits) fail(at + std::to_string(l.bits) + " bits exceed 2^40");
    if (!(l.bpe >= 0) || l.hashes != std::ceil(0.693147180559945 * l.bpe))
      fail(at + "hash count " + std::to_string(l.hashes) + " does not match bits per entry");
    if (l.hashes == 0 || l.hashes > redisbloom_max_hashes) fail(at + "hash count " + std::to_string(l.hashes));
    if (l.size > UINT64_MAX - total) fail("item counts overflow");
    total += l.size;
  }
  if (total != r.size) fail("the layers' item counts do not add up to the chain's");
  const double first = r.layers[0].error;
  const double target = (r.options & option_no_scaling) != 0 ? first : first / 0.5;
  if (!(target < 1)) fail("layer 0's error rate is too large for a scaling chain");
}

/// A filter with the record's geometry and counts and all bits zero (LOADCHUNK fills them). Call after
/// validate(), and after checking total_bytes() against the memory you are willing to spend.
inline bloom_value value_from(const bloom_chain_record& r) {
  validate(r);
  const bool scaling = (r.options & option_no_scaling) == 0;
  const bloom_layer_record& first = r.layers[0];
  const double target = scaling ? first.error / 0.5 : first.error;
  scalable_options o = redisbloom_options(r.growth, scaling);
  std::vector<redisbloom_bloom_layer> layers;
  std::vector<layer_spec> specs;
  std::vector<std::uint64_t> counts;
  layers.reserve(r.layers.size());
  for (const bloom_layer_record& l : r.layers) {
    const redisbloom_layout layout(l.bits, l.hashes, l.n2, l.bpe);
    layers.push_back(redisbloom_bloom_layer::from_parts(layout, murmur64a_pair_hasher(),
                                                        byte_storage::allocate(layout.storage_bytes()), l.size));
    specs.push_back({l.entries, l.error});
    counts.push_back(l.size);
  }
  // All bits are zero until LOADCHUNK or the RDB loader fills them, and those count what they copy.
  return {redisbloom_bloom_chain::from_layers(first.entries, target, o, murmur64a_pair_hasher::default_seed,
                                              std::move(layers), std::move(specs), std::move(counts)),
          r.options, std::vector<std::uint64_t>(r.layers.size(), 0)};
}

namespace detail {
template <class T>
void put_le(std::string& out, T v) {
  char b[sizeof(T)];
  std::memcpy(b, &v, sizeof(T));  // the host is little-endian (hash.hpp)
  out.append(b, sizeof(T));
}
template <class T>
T get_le(const char* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}
}  // namespace detail

/// The SCANDUMP header (iterator 0's answer, and LOADCHUNK's first argument).
inline std::string encode_header(const bloom_chain_record& r) {
  std::string out;
  out.reserve(bloom_header_fixed_bytes + bloom_header_layer_bytes * r.layers.size());
  detail::put_le(out, r.size);
  detail::put_le(out, static_cast<std::uint32_t>(r.layers.size()));
  detail::put_le(out, r.options);
  detail::put_le(out, r.growth);
  for (const bloom_layer_record& l : r.layers) {
    detail::put_le(out, l.bytes);
    detail::put_le(out, l.bits);
    detail::put_le(out, l.size);
    detail::put_le(out, l.error);
    detail::put_le(out, l.bpe);
    detail::put_le(out, l.hashes);
    detail::put_le(out, l.entries);
    detail::put_le(out, l.n2);
  }
  return out;
}

/// Parses a SCANDUMP header; format_error if its length does not match its layer count. Does not
/// validate the fields (validate() does) and allocates only the record.
inline bloom_chain_record decode_header(std::string_view bytes) {
  if (bytes.size() < bloom_header_fixed_bytes)
    throw format_error("RedisBloom header: " + std::to_string(bytes.size()) + " bytes is too short");
  const char* p = bytes.data();
  bloom_chain_record r;
  r.size = detail::get_le<std::uint64_t>(p);
  const auto layers = detail::get_le<std::uint32_t>(p + 8);
  r.options = detail::get_le<std::uint32_t>(p + 12);
  r.growth = detail::get_le<std::uint32_t>(p + 16);
  if (layers == 0) throw format_error("RedisBloom header: no layers");
  if ((bytes.size() - bloom_header_fixed_bytes) / bloom_header_layer_bytes != layers ||
      (bytes.size() - bloom_header_fixed_bytes) % bloom_header_layer_bytes != 0)
    throw format_error("RedisBloom header: " + std::to_string(bytes.size()) + " bytes do not hold " +
                       std::to_string(layers) + " layers");
  r.layers.resize(layers);
  p += bloom_header_fixed_bytes;
  for (bloom_layer_record& l : r.layers) {
    l.bytes = detail::get_le<std::uint64_t>(p);
    l.bits = detail::get_le<std::uint64_t>(p + 8);
    l.size = detail::get_le<std::uint64_t>(p + 16);
    l.error = detail::get_le<double>(p + 24);
    l.bpe = detail::get_le<double>(p + 32);
    l.hashes = detail::get_le<std::uint32_t>(p + 40);
    l.entries = detail::get_le<std::uint64_t>(p + 44);
    l.n2 = detail::get_le<std::uint8_t>(p + 52);
    p += bloom_header_layer_bytes;
  }
  return r;
}

/// One SCANDUMP step: the chunk at `iterator` (≥ 1) and the iterator that follows it; {0, empty} past
/// the end or for an iterator < 1.
struct chunk {
  long long next = 0;
  std::span<const std::byte> bytes;
};
inline chunk bloom_chunk(const bloom_value& v, long long iterator, std::size_t limit = max_chunk_bytes) {
  if (iterator < 1) return {};
  std::uint64_t offset = static_cast<std::uint64_t>(iterator) - 1;
  for (const redisbloom_bloom_layer& layer : v.chain.layers()) {
    const std::span<const std::byte> bytes(layer.storage().data(), layer.storage().size());
    if (offset < bytes.size()) {
      const std::size_t n = std::min<std::uint64_t>(limit, bytes.size() - offset);
      return {iterator + static_cast<long long>(n), bytes.subspan(static_cast<std::size_t>(offset), n)};
    }
    offset -= bytes.size();
  }
  return {};
}

/// Outcome of LOADCHUNK's data step, in RedisBloom's order of checks.
enum class chunk_status {
  ok,
  bad_data,  // iterator ≤ 0 or smaller than the chunk
  no_layer,  // the chunk's start is past the last layer
  too_big,   // the chunk runs past the end of its layer
};

/// Copies a chunk that SCANDUMP returned with `iterator` as its *next* iterator (so it starts at byte
/// iterator − size − 1), as BF.LOADCHUNK does.
inline chunk_status load_bloom_chunk(bloom_value& v, long long iterator, std::span<const std::byte> data) {
  if (iterator <= 0 || static_cast<unsigned long long>(iterator) < data.size()) return chunk_status::bad_data;
  const std::uint64_t start = static_cast<std::uint64_t>(iterator) - data.size();
  if (start < 1) return chunk_status::no_layer;
  std::uint64_t offset = start - 1;
  const auto layers = v.chain.mutable_layers();
  for (std::size_t i = 0; i < layers.size(); ++i) {
    const std::span<std::byte> bytes = layers[i].mutable_bytes();
    if (offset < bytes.size()) {
      if (data.size() > bytes.size() - offset) return chunk_status::too_big;
      // A chunk may overwrite bytes an earlier chunk wrote, so the count moves by the difference.
      const std::span<std::byte> target = bytes.subspan(static_cast<std::size_t>(offset), data.size());
      v.set_bits.resize(layers.size(), 0);
      v.set_bits[i] = v.set_bits[i] - count_set_bits(target) + count_set_bits(data);
      std::memcpy(target.data(), data.data(), data.size());
      return chunk_status::ok;
    }
    offset -= bytes.size();
  }
  return chunk_status::no_layer;
}

// ---- CF ------------------------------------------------------------------------------------------------

/// A CF filter as RedisBloom keeps it: the filter, its item count (inserts minus deletes, as RedisBloom
/// reports it; a dump can state any) and the deletes since the last compaction.
struct cuckoo_value {
  redisbloom_cuckoo_filter filter;
  std::uint64_t items = 0;
  std::uint64_t deletes = 0;
};

/// What CF.RESERVE / CF.ADD create.
inline cuckoo_value make_cuckoo(std::uint64_t capacity, std::uint32_t bucket_size, std::uint32_t max_iterations,
                                std::uint32_t expansion) {
  return {redisbloom_cuckoo_filter(redisbloom_cuckoo_geometry(capacity, bucket_size, max_iterations, expansion)), 0, 0};
}

/// CF.ADD in two steps, so a caller can check a memory budget before the filter grows: first without
/// growing; then, if that answered needs_growth, cuckoo_insert_growing.
enum class cuckoo_add { added, needs_growth, full };
inline cuckoo_add cuckoo_insert_without_growing(cuckoo_value& v, const digest& d) noexcept {
  if (v.filter.insert_without_growing(d)) {
    ++v.items;
    return cuckoo_add::added;
  }
  return v.filter.next_sub_filter_bytes() != 0 ? cuckoo_add::needs_growth : cuckoo_add::full;
}
inline bool cuckoo_insert_growing(cuckoo_value& v, const digest& d) {
  if (!v.filter.insert_into_new_sub_filter(d)) return false;
  ++v.items;
  return true;
}
/// Both steps: stored, or no room (expansion 0, or the filter cannot grow any further).
inline bool cuckoo_insert(cuckoo_value& v, const digest& d) {
  switch (cuckoo_insert_without_growing(v, d)) {
    case cuckoo_add::added: return true;
    case cuckoo_add::needs_growth: return cuckoo_insert_growing(v, d);
    case cuckoo_add::full: return false;
  }
  return false;
}

/// CF.COMPACT (keep_going) and the compaction CF.DEL triggers (not keep_going).
inline void cuckoo_compact(cuckoo_value& v, bool keep_going) {
  v.filter.compact(keep_going);
  v.deletes = 0;
}

/// CF.DEL: removes one copy (newest sub-filter first); after it, when the filter has grown and deletes
/// since the last compaction exceed 10% of the items, compacts it as RedisBloom does.
inline bool cuckoo_delete(cuckoo_value& v, const digest& d) {
  if (!v.filter.erase(d)) return false;
  if (v.items != 0) --v.items;
  ++v.deletes;
  if (v.filter.sub_filters() > 1 && static_cast<double>(v.deletes) > static_cast<double>(v.items) * 0.10)
    cuckoo_compact(v, false);
  return true;
}

struct cuckoo_record {
  std::uint64_t items = 0, buckets = 0, deletes = 0, sub_filters = 0;
  std::uint32_t bucket_size = 0, max_iterations = 0, expansion = 0;

  /// Slot bytes of every sub-filter together (what the dump's chunks carry).
  std::uint64_t total_bytes() const noexcept {
    std::uint64_t n = buckets, total = 0;
    for (std::uint64_t j = 0; j < sub_filters; ++j, n *= expansion) total += n * bucket_size;
    return total;
  }
};
inline constexpr std::size_t cuckoo_header_bytes = 38;

inline cuckoo_record record_of(const cuckoo_value& v) {
  const cuckoo_geometry& g = v.filter.geometry();
  return {v.items, g.buckets, v.deletes, v.filter.sub_filters(), g.bucket_size, g.max_kicks, g.expansion};
}

/// Checks a record before anything is allocated: bucket size 1 … 255, max iterations 1 … 65535, expansion
/// 0 or a power of two ≤ 32768, a power-of-two bucket count, 1 … max_sub_filters sub-filters (only one
/// without expansion), tables within 2^40 bits. Throws format_error naming the first problem.
inline void validate(const cuckoo_record& r, std::uint64_t max_sub_filters = cuckoo_max_filters) {
  const auto fail = [](const std::string& what) { throw format_error("RedisBloom cuckoo filter: " + what); };
  if (r.bucket_size == 0 || r.bucket_size > cuckoo_max_bucket_size)
    fail("bucket size " + std::to_string(r.bucket_size));
  if (r.max_iterations == 0 || r.max_iterations > cuckoo_max_kicks)
    fail("max iterations " + std::to_string(r.max_iterations));
  if (r.expansion > cuckoo_max_expansion || (r.expansion != 0 && !std::has_single_bit(r.expansion)))
    fail("expansion " + std::to_string(r.expansion));
  if (!std::has_single_bit(r.buckets)) fail("bucket count " + std::to_string(r.buckets) + " is not a power of two");
  if (r.sub_filters == 0 || r.sub_filters > std::min<std::uint64_t>(max_sub_filters, cuckoo_max_filters))
    fail(std::to_string(r.sub_filters) + " sub-filters");
  if (r.sub_filters > 1 && r.expansion == 0) fail("several sub-filters without expansion");
  std::uint64_t n = r.buckets;
  for (std::uint64_t j = 0; j < r.sub_filters; ++j) {
    if (n > max_filter_bits / 8 / r.bucket_size) fail("sub-filter " + std::to_string(j) + " exceeds 2^40 bits");
    if (j + 1 < r.sub_filters) n *= r.expansion;
  }
}

/// An empty filter with the record's geometry, sub-filters and counters (LOADCHUNK fills the slots).
/// Call after validate() and after checking total_bytes() against your memory budget.
inline cuckoo_value value_from(const cuckoo_record& r, std::uint64_t max_sub_filters = cuckoo_max_filters) {
  validate(r, max_sub_filters);
  cuckoo_geometry g;
  g.buckets = r.buckets;
  g.bucket_size = r.bucket_size;
  g.fingerprint_bits = 8;
  g.expansion = r.expansion;
  g.max_kicks = r.max_iterations;
  g.max_filters = cuckoo_max_filters;
  return {redisbloom_cuckoo_filter::with_sub_filters(g, static_cast<std::uint32_t>(r.sub_filters)), r.items, r.deletes};
}

inline std::string encode_header(const cuckoo_record& r) {
  std::string out;
  out.reserve(cuckoo_header_bytes);
  detail::put_le(out, r.items);
  detail::put_le(out, r.buckets);
  detail::put_le(out, r.deletes);
  detail::put_le(out, r.sub_filters);
  detail::put_le(out, static_cast<std::uint16_t>(r.bucket_size));
  detail::put_le(out, static_cast<std::uint16_t>(r.max_iterations));
  detail::put_le(out, static_cast<std::uint16_t>(r.expansion));
  return out;
}

/// Parses a 38-byte CF header (format_error for any other length); validate() checks the fields.
inline cuckoo_record decode_cuckoo_header(std::string_view bytes) {
  if (bytes.size() != cuckoo_header_bytes)
    throw format_error("RedisBloom cuckoo header: " + std::to_string(bytes.size()) + " bytes, not 38");
  const char* p = bytes.data();
  cuckoo_record r;
  r.items = detail::get_le<std::uint64_t>(p);
  r.buckets = detail::get_le<std::uint64_t>(p + 8);
  r.deletes = detail::get_le<std::uint64_t>(p + 16);
  r.sub_filters = detail::get_le<std::uint64_t>(p + 24);
  r.bucket_size = detail::get_le<std::uint16_t>(p + 32);
  r.max_iterations = detail::get_le<std::uint16_t>(p + 34);
  r.expansion = detail::get_le<std::uint16_t>(p + 36);
  return r;
}

/// One CF.SCANDUMP step at `iterator` ≥ 1 (RedisBloom's CF_GetEncodedChunk, quirk included: a sub-filter
/// no larger than the limit comes whole from its start); {0, empty} past the end.
inline chunk cuckoo_chunk(const cuckoo_value& v, long long iterator, std::size_t limit = max_chunk_bytes) {
  if (iterator < 1) return {};
  std::uint64_t offset = static_cast<std::uint64_t>(iterator) - 1;
  for (std::size_t j = 0; j < v.filter.sub_filters(); ++j) {
    const std::span<const std::byte> bytes = v.filter.slot_bytes(j);
    if (offset < bytes.size()) {
      if (bytes.size() <= limit) return {iterator + static_cast<long long>(bytes.size()), bytes};
      const std::size_t n = std::min<std::uint64_t>(limit, bytes.size() - offset);
      return {iterator + static_cast<long long>(n), bytes.subspan(static_cast<std::size_t>(offset), n)};
    }
    offset -= bytes.size();
  }
  return {};
}

/// CF.LOADCHUNK's data step: the chunk SCANDUMP returned with `iterator` as its next iterator starts at
/// byte iterator − size − 1. False (changing nothing) for an empty chunk, or one that does not lie within
/// one sub-filter (RedisBloom 2.8 copied such chunks unchecked).
inline bool load_cuckoo_chunk(cuckoo_value& v, long long iterator, std::span<const std::byte> data) {
  if (data.empty() || iterator < 1 || static_cast<unsigned long long>(iterator) <= data.size()) return false;
  std::uint64_t offset = static_cast<std::uint64_t>(iterator) - data.size() - 1;
  for (std::size_t j = 0; j < v.filter.sub_filters(); ++j) {
    const std::uint64_t size = v.filter.slot_bytes(j).size();
    if (offset < size) return v.filter.write_slot_bytes(j, offset, data);
    offset -= size;
  }
  return false;
}

}  // namespace blume::redisbloom
