// SPDX-License-Identifier: Apache-2.0
// What a static filter's construction reports: the filters built by peeling (xor, binary fuse, Bloomier)
// and the Golomb-coded set fill it in.
#pragma once

#include <cstdint>

namespace blume {

/// What a static filter's construction did, so that its working memory is reported, not guessed.
struct build_stats {
  std::uint64_t keys = 0;        // distinct keys stored
  std::uint64_t duplicates = 0;  // keys dropped because another had the same 64-bit hash
  std::uint32_t attempts = 0;    // seeds tried
  std::uint64_t peak_bytes = 0;  // working memory at the peak, besides the filter itself
};

}  // namespace blume
