// SPDX-License-Identifier: Apache-2.0
// The contract between a kind and the file format (format.hpp): what a filter hands the writer and what
// the reader hands back. Each kind's header static_asserts it for its types.
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <span>

#include "blume/hash.hpp"
#include "blume/io/parameters.hpp"
#include "blume/kind.hpp"
#include "blume/storage.hpp"

namespace blume {

/// A payload whose size the header's parameters fix: checked before the payload is read.
template <class F>
concept sized_by_header = requires(const filter_parameters& p) {
  { F::payload_size(p) } -> std::same_as<std::uint64_t>;
};
/// A payload that describes its own parts (a table of layers): its size is read from the payload, within
/// the bytes given, after the file's size has bounded it.
template <class F>
concept sized_by_payload = requires(const filter_parameters& p, std::span<const std::byte> payload) {
  { F::payload_size(p, payload) } -> std::same_as<std::uint64_t>;
};

/// A filter the file format reads and writes:
///  * parameters(), seed(), inserted(): the header's fields;
///  * for_each_payload_segment(fn): fn(std::span<const std::byte>) for each part of the payload, in order,
///    each span valid until the filter changes;
///  * payload_size(parameters) or payload_size(parameters, payload): the size the parameters (or the
///    payload's own table) call for, invalid_argument when they describe no valid filter;
///  * from_payload(parameters, seed, inserted, storage): the filter, validating the payload's contents
///    (format_error). The storage may be a private mapping of the file: a kind that keeps it opens
///    without copying.
template <class F>
concept serializable_filter =
    described_kind<F> && (sized_by_header<F> || sized_by_payload<F>)&&requires(const F& f, const filter_parameters& p,
                                                                               std::uint64_t n, byte_storage storage) {
      { F::hasher_type::id } -> std::convertible_to<hash_id>;
      { f.parameters() } -> std::same_as<filter_parameters>;
      { f.seed() } -> std::convertible_to<std::uint64_t>;
      { f.inserted() } -> std::convertible_to<std::uint64_t>;
      f.for_each_payload_segment([](std::span<const std::byte>) {});
      { F::from_payload(p, n, n, std::move(storage)) } -> std::same_as<F>;
    };

}  // namespace blume
