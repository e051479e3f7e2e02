// What a serialized filter records about its geometry, besides kind, hash, seed and item count. Each
// kind documents the meaning of its fields (docs/format.md); unused fields are zero.
#pragma once

#include <array>
#include <cstdint>

namespace blume {

struct filter_parameters {
  std::uint64_t bits = 0;    // the main size: bits, counters, slots or buckets, as the kind defines
  std::uint32_t hashes = 0;  // probes per key, or the kind's equivalent
  std::uint32_t layout = 0;  // a kind-specific layout parameter: block bits, counter bits, fingerprint bits
  std::array<std::uint64_t, 6> extra{};  // further kind-specific parameters
  friend constexpr bool operator==(const filter_parameters&, const filter_parameters&) = default;
};

}  // namespace blume
