// SPDX-License-Identifier: Apache-2.0
// Validation shared by the layouts: every geometry is checked before anything is allocated.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "blume/error.hpp"
#include "blume/plan.hpp"

namespace blume::detail {

inline void check_geometry(std::string_view name, std::uint64_t bits, std::uint32_t hashes, std::uint32_t granule,
                           std::uint32_t max_k = max_hashes) {
  const std::string who = std::string(name) + " filter: ";
  if (bits == 0) throw invalid_argument(who + "bit count must be at least 1, got 0");
  if (bits > max_filter_bits)
    throw invalid_argument(who + "bit count " + std::to_string(bits) + " exceeds the maximum of 2^40");
  if (granule > 1 && bits % granule != 0)
    throw invalid_argument(who + "bit count " + std::to_string(bits) + " is not a multiple of " +
                           std::to_string(granule));
  if (hashes == 0 || hashes > max_k)
    throw invalid_argument(who + "hash count must be in [1, " + std::to_string(max_k) + "], got " +
                           std::to_string(hashes));
}

}  // namespace blume::detail
