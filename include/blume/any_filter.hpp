// SPDX-License-Identifier: Apache-2.0
// A filter of any kind blume stores in files, chosen at run time: what tools that take a file of
// whatever kind (the blume command-line tool) open, build and query. The alternatives are the kinds of
// kinds.hpp's one list, each its default instantiation; std::visit reaches the typed filter and its
// verbs. Static kinds (xor, binary fuse, Golomb-coded) are built from their whole key set
// (build_static_filter), the others sized up front (make_filter).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <ranges>
#include <span>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "blume/build_stats.hpp"
#include "blume/error.hpp"
#include "blume/io/format.hpp"
#include "blume/kinds.hpp"

namespace blume {

/// A filter of any kind, as its default instantiation or as one of earlier_hash_types (a file written with a
/// kind's earlier default hasher).
using any_filter = detail::stored_types::variant;

/// A filter of `kind` for `items` keys at false-positive rate `fpr`, as the kind builds one for a capacity
/// and a rate (its (capacity, fpr) constructor, or its for_capacity where the rate needs more than a
/// size: a stable filter picks the decrements that hold `fpr` on an endless stream).
inline any_filter make_filter(filter_kind kind, std::uint64_t items, double fpr) {
  std::optional<any_filter> made;
  const bool known = visit_kind(kind, [&](auto type) {
    using F = typename decltype(type)::type;
    if constexpr (F::is_static) {
      throw invalid_argument("a " + std::string(F::name) +
                             " filter is static: it is built from all its keys at once (build_static_filter)");
    } else if constexpr (requires { F::for_capacity(items, fpr); }) {
      made.emplace(F::for_capacity(items, fpr));
    } else if constexpr (std::is_constructible_v<F, std::uint64_t, double>) {
      made.emplace(std::in_place_type<F>, items, fpr);
    } else {
      throw invalid_argument(std::string(F::plan_refusal));
    }
  });
  if (!known) detail::unknown_kind(kind);
  return std::move(*made);
}

/// A static kind built from the low halves of its keys' digests (hash_key(xxh3_hasher(), key).low for each
/// key: what a caller streaming keys can keep, 8 bytes per key), duplicates allowed. `fpr` matters only
/// for the Golomb-coded set, whose rate is the largest 2^−P at or below it.
inline any_filter build_static_filter(filter_kind kind, std::vector<std::uint64_t> digest_lows, double fpr = 0.01,
                                      build_stats* stats = nullptr) {
  std::optional<any_filter> built;
  const bool known = visit_kind(kind, [&](auto type) {
    using F = typename decltype(type)::type;
    if constexpr (requires { F::from_digest_lows(std::move(digest_lows), fpr, stats); }) {
      built.emplace(F::from_digest_lows(std::move(digest_lows), fpr, stats));
    } else if constexpr (F::input != kind_input::keys) {
      throw invalid_argument("a " + std::string(F::name) + " filter takes its own inputs (" +
                             (F::input == kind_input::keys_with_values        ? "keys with values: build_map_filter"
                              : F::input == kind_input::included_and_excluded ? "included and excluded keys: "
                                                                                "cascade_filter::build"
                              : F::input == kind_input::integers ? "integer keys of a universe: make_integer_filter"
                                                                 : "vectors: make_vector_filter") +
                             "), not one key set");
    } else {
      throw invalid_argument("'" + std::string(F::name) + "' is not a static kind");
    }
  });
  if (!known) detail::unknown_kind(kind);
  return std::move(*built);
}

/// A kind built from keys with values (kind_input::keys_with_values) from the pairs keys[i] → values[i],
/// sized for them at `fpr`, as the kind reads the pairs (its from_pairs): a Bloomier map's values, a
/// spatial filter's set numbers, a compact approximator's values. `value_bits` is the Bloomier map's value
/// width (unset: the widest value's); `layout` the cells' layout of the kinds built on lattice cells
/// (unset: classic). Other kinds refuse them.
template <std::ranges::input_range Keys, std::ranges::input_range Values>
any_filter build_map_filter(filter_kind kind, const Keys& keys, const Values& values, double fpr,
                            std::optional<std::uint32_t> value_bits = std::nullopt,
                            std::optional<cell_layout> layout = std::nullopt) {
  std::optional<any_filter> built;
  const bool known = visit_kind(kind, [&](auto type) {
    using F = typename decltype(type)::type;
    if constexpr (F::input != kind_input::keys_with_values) {
      throw invalid_argument("a " + std::string(F::name) + " filter is not built from keys with values");
    } else {
      if (value_bits && !requires { F::from_pairs(keys, values, fpr, value_bits); })
        throw invalid_argument("value bits are for a bloomier map, not a " + std::string(F::name) + " filter");
      if (layout && !requires { F::from_pairs(keys, values, fpr, *layout); })
        throw invalid_argument("a cell layout is for the spatial and compact kinds, not a " + std::string(F::name) +
                               " filter");
      if constexpr (requires { F::from_pairs(keys, values, fpr, value_bits); })
        built.emplace(F::from_pairs(keys, values, fpr, value_bits));
      else if constexpr (requires { F::from_pairs(keys, values, fpr, *layout); })
        built.emplace(F::from_pairs(keys, values, fpr, layout.value_or(cell_layout::classic)));
      else built.emplace(F::from_pairs(keys, values, fpr));
    }
  });
  if (!known) detail::unknown_kind(kind);
  return std::move(*built);
}

/// A kind of integer keys (kind_input::integers: egh) for the universe `u`, with no false positive while it
/// holds at most `zone` keys (the kind's for_zone).
inline any_filter make_integer_filter(filter_kind kind, integer_universe u, std::uint64_t zone) {
  std::optional<any_filter> made;
  const bool known = visit_kind(kind, [&](auto type) {
    using F = typename decltype(type)::type;
    if constexpr (F::input == kind_input::integers) {
      made.emplace(F::for_zone(u, zone));
    } else {
      throw invalid_argument("a " + std::string(F::name) + " filter has no universe or zone");
    }
  });
  if (!known) detail::unknown_kind(kind);
  return std::move(*made);
}

/// A kind of vectors (kind_input::vectors: novelty) for inputs of `dim` values, its other parameters at their
/// defaults (the kind's for_dimension).
inline any_filter make_vector_filter(filter_kind kind, std::uint32_t dim) {
  std::optional<any_filter> made;
  const bool known = visit_kind(kind, [&](auto type) {
    using F = typename decltype(type)::type;
    if constexpr (F::input == kind_input::vectors) {
      made.emplace(F::for_dimension(dim));
    } else {
      throw invalid_argument("a " + std::string(F::name) + " filter takes keys, not vectors");
    }
  });
  if (!known) detail::unknown_kind(kind);
  return std::move(*made);
}

namespace detail {
/// make(std::type_identity<F>{}) for the alternative F of any_filter that reads a file with header `h`: its
/// kind and hash. A hash no type of the kind uses goes to the kind's default type, whose checks say why the
/// file cannot be read (a RedisBloom hash: a file for `blume redis push`).
template <class Make>
any_filter make_as(const file_header& h, Make&& make) {
  std::optional<any_filter> made;
  const bool stored = stored_types::any([&](auto type) {
    using F = typename decltype(type)::type;
    if (F::kind != h.kind || F::hasher_type::id != h.hash) return false;
    made.emplace(make(type));
    return true;
  });
  if (!stored && !visit_kind(h.kind, [&](auto type) { made.emplace(make(type)); }))
    throw format_error("filter kind " + std::to_string(static_cast<int>(h.kind)) + " cannot be read");
  return std::move(*made);
}
}  // namespace detail

/// A filter of any kind from serialized bytes (copied), as from_bytes reads one kind: the header says
/// which. Throws format_error for anything that is not a valid filter.
inline any_filter filter_from_bytes(std::span<const std::byte> bytes) {
  return detail::make_as(decode_header(bytes),
                         [&](auto type) { return any_filter(from_bytes<typename decltype(type)::type>(bytes)); });
}

/// Opens a filter file of any kind through a private mapping (see map_file): its header says which. All
/// of map_file's checks apply; `verify::full` also checks the payload checksum. The file is opened once,
/// so `header` (when given) describes the very file the filter came from, even while writers replace it.
inline any_filter open_filter(const std::filesystem::path& path, verify v = verify::full,
                              file_header* header = nullptr) {
  detail::mapped_file file(path);
  if (header != nullptr) *header = file.header;
  return detail::make_as(file.header,
                         [&](auto type) { return any_filter(file.assemble<typename decltype(type)::type>(v)); });
}

/// Loads a filter file of any kind into memory (see load): its header says which, and `header` (when given)
/// is that header, read in the same open as the payload.
inline any_filter load_filter(const std::filesystem::path& path, file_header* header = nullptr) {
  detail::fd_guard fd;
  const std::uint64_t size = detail::open_for_reading(fd, path);
  const file_header h = detail::read_header_from(fd.fd, size, path);
  if (header != nullptr) *header = h;
  return detail::make_as(h, [&](auto type) {
    return any_filter(detail::load_payload<typename decltype(type)::type>(fd, size, h, path));
  });
}

/// Writes the filter to `path` atomically (see save), with `design` recorded in its header.
inline void save_filter(const any_filter& f, const std::filesystem::path& path, const filter_design& design = {},
                        const write_options& options = {}) {
  std::visit([&](const auto& typed) { save(typed, path, design, options); }, f);
}

/// Writes the filter to an open descriptor such as standard output (see write_to).
inline void write_filter(const any_filter& f, int fd, const std::string& name, const filter_design& design = {}) {
  std::visit([&](const auto& typed) { write_to(typed, fd, name, design); }, f);
}

inline filter_kind kind_of(const any_filter& f) noexcept {
  return std::visit([](const auto& typed) { return std::decay_t<decltype(typed)>::kind; }, f);
}

inline hash_id hash_of(const any_filter& f) noexcept {
  return std::visit([](const auto& typed) { return std::decay_t<decltype(typed)>::hasher_type::id; }, f);
}

/// Why two filters cannot be merged, intersected or compared bit for bit: empty when they are of one type,
/// otherwise "kinds differ" or "hash functions differ (xxh3-64, xxh3-128)".
inline std::string type_mismatch(const any_filter& a, const any_filter& b) {
  if (a.index() == b.index()) return {};
  if (kind_of(a) != kind_of(b)) return "kinds differ";
  return "hash functions differ (" + std::string(hash_name(hash_of(a))) + ", " + std::string(hash_name(hash_of(b))) +
         ")";
}

}  // namespace blume
