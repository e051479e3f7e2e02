// The kinds of filter blume knows, with the one name each goes by everywhere (library docs, the CLI's
// --kind, `blume info`, the file header).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

namespace blume {

/// Stored in every file header: values are part of the format and never reused.
enum class filter_kind : std::uint16_t {
  bloom = 1,        // classic: m bits, k probes anywhere in the array
  partitioned = 2,  // k slices of m/k bits, one probe per slice
  blocked = 3,      // k probes inside one 512-bit (64-byte) cache line
  split_block = 4,  // 256-bit blocks of eight 32-bit words, one probe per word (Parquet's layout)
  counting = 5,     // the classic filter with small saturating counters instead of bits: supports erase
  cuckoo = 6,       // buckets of fingerprints, partial-key cuckoo hashing (Fan et al. 2014)
  quotient = 7,     // quotienting with three metadata bits per slot (Bender et al. 2012)
  scalable = 8,     // a growing chain of Bloom filters with tightening rates (Almeida et al. 2007)
  stable = 9,       // cells that decay at random: a fixed rate on an endless stream (Deng & Rafiei 2006)
  aging = 10,       // two buffers that take turns: "seen among roughly the last w items"
  xor8 = 11,        // static: 8-bit fingerprints XORed over three slots (Graf & Lemire 2020)
  xor16 = 12,       // the same with 16-bit fingerprints
  fuse8 = 13,       // static: binary fuse filter, 8-bit fingerprints (Graf & Lemire 2022)
  fuse16 = 14,      // the same with 16-bit fingerprints
  gcs = 15,         // static: Golomb-coded sorted hashes (Putze, Sanders & Singler 2007)
  bloomier = 16,    // static map: keys to small values, built by peeling (Chazelle et al. 2004)
  cascade = 17,     // static and exact on a finite universe: a chain of Bloom filters (CRLite, 2017)
};

/// Every kind, in id order.
inline constexpr std::array<filter_kind, 15> all_kinds = {
    filter_kind::bloom,    filter_kind::partitioned, filter_kind::blocked,  filter_kind::split_block,
    filter_kind::counting, filter_kind::cuckoo,      filter_kind::quotient, filter_kind::scalable,
    filter_kind::stable,   filter_kind::aging,       filter_kind::xor8,     filter_kind::xor16,
    filter_kind::fuse8,    filter_kind::fuse16,      filter_kind::gcs};

/// Kinds with inputs of their own (keys with values; included and excluded keys): not in all_kinds, which
/// lists the kinds built from one key set.
inline constexpr std::array<filter_kind, 2> map_kinds = {filter_kind::bloomier, filter_kind::cascade};

/// Static kinds are built once from the whole key set and take no inserts afterwards.
constexpr bool is_static(filter_kind k) noexcept {
  return k == filter_kind::xor8 || k == filter_kind::xor16 || k == filter_kind::fuse8 || k == filter_kind::fuse16 ||
         k == filter_kind::gcs || k == filter_kind::bloomier || k == filter_kind::cascade;
}

/// Kinds that forget by design (stable, aging) declare `static constexpr bool forgets = true`. Their
/// "false" means "not seen recently", not "never inserted": surfaces say "absent", never "no".
template <class F>
inline constexpr bool forgets_v = requires { requires F::forgets; };

constexpr std::string_view kind_name(filter_kind k) noexcept {
  switch (k) {
    case filter_kind::bloom: return "bloom";
    case filter_kind::partitioned: return "partitioned";
    case filter_kind::blocked: return "blocked";
    case filter_kind::split_block: return "split-block";
    case filter_kind::counting: return "counting";
    case filter_kind::cuckoo: return "cuckoo";
    case filter_kind::quotient: return "quotient";
    case filter_kind::scalable: return "scalable";
    case filter_kind::stable: return "stable";
    case filter_kind::aging: return "aging";
    case filter_kind::xor8: return "xor8";
    case filter_kind::xor16: return "xor16";
    case filter_kind::fuse8: return "fuse8";
    case filter_kind::fuse16: return "fuse16";
    case filter_kind::gcs: return "gcs";
    case filter_kind::bloomier: return "bloomier";
    case filter_kind::cascade: return "cascade";
  }
  return "unknown";
}

constexpr std::optional<filter_kind> parse_kind(std::string_view name) noexcept {
  for (filter_kind k : all_kinds)
    if (kind_name(k) == name) return k;
  for (filter_kind k : map_kinds)
    if (kind_name(k) == name) return k;
  return std::nullopt;
}

}  // namespace blume
