// SPDX-License-Identifier: Apache-2.0
// The WBF type's value and codec (native.hpp over blume's aging filter), apart from the commands so unit
// tests and fuzzers decode with exactly the module's code.
#pragma once

#include <cstddef>
#include <string>

#include "blume/kinds/aging_bloom_filter.hpp"
#include "native.hpp"

namespace blume::redis {

/// Two split-block buffers that take turns: the aging kind as `blume build --kind aging` writes it.
using window_filter = aging_bloom_filter<>;

/// A WBF holds aging filters, nothing else.
struct window_select {
  static std::size_t index(const file_header& h) {
    if (h.kind != window_filter::kind)
      throw format_error("a WBF holds aging filters (kind " + std::to_string(static_cast<int>(window_filter::kind)) +
                         "), not kind " + std::to_string(static_cast<int>(h.kind)));
    return 0;
  }
};

using window_codec = native_codec<window_select, window_filter>;

}  // namespace blume::redis
