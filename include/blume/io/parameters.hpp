// SPDX-License-Identifier: Apache-2.0
// What a serialized filter records about its geometry, besides kind, hash, seed and item count. The fields
// are named for their place in the header, because each kind gives them its own meaning (its header and
// docs/format.md say which); unused fields are zero.
#pragma once

#include <array>
#include <cstdint>

namespace blume {

struct filter_parameters {
  /// The kind's main size: bits, counters, cells, slot bits, a window or a first layer's capacity.
  std::uint64_t primary = 0;
  /// Its second parameter: probes per key, fingerprint, remainder or check bits, P, layers, levels.
  std::uint32_t secondary = 0;
  /// A layout parameter: block bits, counter bits, bucket keys, the layers' or buffers' kind id.
  std::uint32_t layout = 0;
  std::array<std::uint64_t, 6> extra{};  // further kind-specific parameters
  friend constexpr bool operator==(const filter_parameters&, const filter_parameters&) = default;
};

}  // namespace blume
