// A filter of any kind blume stores in files, chosen at run time: what tools that take a file of
// whatever kind (the blume command-line tool) open, build and query. Each alternative is the kind's
// default instantiation (XXH3 hashing; 4-bit counters for counting, 2-bit cells for stable, split-block
// buffers for aging); std::visit reaches the typed filter and its verbs. Static kinds (xor, binary fuse)
// are built from their whole key set (build_static_filter), the others sized up front (make_filter).
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "blume/aging_bloom_filter.hpp"
#include "blume/blocked_bloom_filter.hpp"
#include "blume/bloomier_filter.hpp"
#include "blume/bloom_filter.hpp"
#include "blume/cascade_filter.hpp"
#include "blume/counting_bloom_filter.hpp"
#include "blume/cuckoo_filter.hpp"
#include "blume/error.hpp"
#include "blume/format.hpp"
#include "blume/golomb_coded_set.hpp"
#include "blume/kind.hpp"
#include "blume/partitioned_bloom_filter.hpp"
#include "blume/plan.hpp"
#include "blume/quotient_filter.hpp"
#include "blume/scalable_bloom_filter.hpp"
#include "blume/stable_bloom_filter.hpp"
#include "blume/xor_filter.hpp"

namespace blume {

using any_filter =
    std::variant<bloom_filter<>, partitioned_bloom_filter<>, blocked_bloom_filter<>, split_block_bloom_filter<>,
                 counting_bloom_filter<>, cuckoo_filter<>, quotient_filter<>, scalable_bloom_filter<>,
                 stable_bloom_filter<>, aging_bloom_filter<>, xor8_filter<>, xor16_filter<>, fuse8_filter<>,
                 fuse16_filter<>, golomb_coded_set<>, bloomier_filter<>, cascade_filter>;

/// A filter of `kind` for `items` keys at false-positive rate `fpr`, built as each kind's (capacity, rate)
/// constructor builds it: sized by plan_for, except that a stable filter takes plan_for's cells and k and
/// then the decrement rate that holds `fpr` on an endless stream, and an aging filter remembers a window
/// of `items` keys.
inline any_filter make_filter(filter_kind kind, std::uint64_t items, double fpr) {
  switch (kind) {
    case filter_kind::bloom: return bloom_filter<>(items, fpr);
    case filter_kind::partitioned: return partitioned_bloom_filter<>(items, fpr);
    case filter_kind::blocked: return blocked_bloom_filter<>(items, fpr);
    case filter_kind::split_block: return split_block_bloom_filter<>(items, fpr);
    case filter_kind::counting: return counting_bloom_filter<>(items, fpr);
    case filter_kind::cuckoo: return cuckoo_filter<>(items, fpr);
    case filter_kind::quotient: return quotient_filter<>(items, fpr);
    case filter_kind::scalable: return scalable_bloom_filter<>(items, fpr);
    case filter_kind::stable: {
      const filter_plan plan = plan_for(items, fpr, filter_kind::stable);
      return stable_bloom_filter<>::for_rate(plan.bits, plan.hashes, fpr);
    }
    case filter_kind::aging: return aging_bloom_filter<>(items, fpr);
    case filter_kind::xor8:
    case filter_kind::xor16:
    case filter_kind::fuse8:
    case filter_kind::fuse16:
    case filter_kind::gcs:
    case filter_kind::bloomier:
    case filter_kind::cascade:
      throw invalid_argument("a " + std::string(kind_name(kind)) +
                             " filter is static: it is built from all its keys at once (build_static_filter)");
  }
  throw invalid_argument("unknown filter kind " + std::to_string(static_cast<int>(kind)));
}

/// A static kind built from the low halves of its keys' digests (hash_key(xxh3_hasher(), key).low for each
/// key: what a caller streaming keys can keep, 8 bytes per key), duplicates allowed. `fpr` matters only
/// for the Golomb-coded set, whose rate is the largest 2^−P at or below it.
inline any_filter build_static_filter(filter_kind kind, std::vector<std::uint64_t> digest_lows, double fpr = 0.01,
                                      build_stats* stats = nullptr) {
  const std::uint64_t seed = xxh3_hasher::default_seed;
  switch (kind) {
    case filter_kind::xor8: return xor8_filter<>::build_from_hashes(std::move(digest_lows), seed, stats);
    case filter_kind::xor16: return xor16_filter<>::build_from_hashes(std::move(digest_lows), seed, stats);
    case filter_kind::fuse8: return fuse8_filter<>::build_from_hashes(std::move(digest_lows), seed, stats);
    case filter_kind::fuse16: return fuse16_filter<>::build_from_hashes(std::move(digest_lows), seed, stats);
    case filter_kind::gcs: {
      const std::uint32_t p = plan_for(std::max<std::size_t>(digest_lows.size(), 1), fpr, kind).hashes;
      return golomb_coded_set<>::build_from_hashes(std::move(digest_lows), p, seed);
    }
    case filter_kind::bloomier:
    case filter_kind::cascade:
      throw invalid_argument("a " + std::string(kind_name(kind)) + " filter takes its own inputs (" +
                             (kind == filter_kind::bloomier ? "keys with values: bloomier_filter::build"
                                                            : "included and excluded keys: cascade_filter::build") +
                             "), not one key set");
    default: break;
  }
  throw invalid_argument("'" + std::string(kind_name(kind)) + "' is not a static kind");
}

namespace detail {
/// make(std::type_identity<F>{}) for the alternative F of any_filter whose kind is `kind`.
template <std::size_t I = 0, class Make>
any_filter make_as(filter_kind kind, Make&& make) {
  if constexpr (I < std::variant_size_v<any_filter>) {
    using F = std::variant_alternative_t<I, any_filter>;
    if (F::kind == kind) return make(std::type_identity<F>{});
    return make_as<I + 1>(kind, make);
  } else {
    throw format_error("filter kind " + std::string(kind_name(kind)) + " cannot be read");
  }
}
}  // namespace detail

/// A filter of any kind from serialized bytes (copied), as from_bytes reads one kind: the header says
/// which. Throws format_error for anything that is not a valid filter.
inline any_filter filter_from_bytes(std::span<const std::byte> bytes) {
  return detail::make_as(decode_header(bytes).kind,
                         [&](auto type) { return any_filter(from_bytes<typename decltype(type)::type>(bytes)); });
}

/// Opens a filter file of any kind through a private mapping (see map_file): its header says which. All
/// of map_file's checks apply; `verify::full` also checks the payload checksum. The file is opened once,
/// so `header` (when given) describes the very file the filter came from, even while writers replace it.
inline any_filter open_filter(const std::filesystem::path& path, verify v = verify::full, file_header* header = nullptr) {
  detail::mapped_file file(path);
  if (header != nullptr) *header = file.header;
  return detail::make_as(file.header.kind,
                         [&](auto type) { return any_filter(file.assemble<typename decltype(type)::type>(v)); });
}

/// Writes the filter to `path` atomically (see save), with `design` recorded in its header.
inline void save_filter(const any_filter& f, const std::filesystem::path& path, const filter_design& design = {}) {
  std::visit([&](const auto& typed) { save(typed, path, design); }, f);
}

/// Writes the filter to an open descriptor such as standard output (see write_to).
inline void write_filter(const any_filter& f, int fd, const std::string& name, const filter_design& design = {}) {
  std::visit([&](const auto& typed) { write_to(typed, fd, name, design); }, f);
}

inline filter_kind kind_of(const any_filter& f) noexcept {
  return std::visit([](const auto& typed) { return std::decay_t<decltype(typed)>::kind; }, f);
}

}  // namespace blume
