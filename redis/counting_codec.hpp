// SPDX-License-Identifier: Apache-2.0
// The CBF type's value and codec (native.hpp over blume's counting filters), apart from the commands so
// unit tests and fuzzers decode with exactly the module's code.
#pragma once

#include <cstddef>
#include <string>

#include "blume/kinds/counting_bloom_filter.hpp"
#include "native.hpp"

namespace blume::redis {

using counting4 = counting_bloom_filter<4>;
using counting8 = counting_bloom_filter<8>;

/// A CBF holds counting filters with 4- or 8-bit counters, nothing else.
struct counting_select {
  static std::size_t index(const file_header& h) {
    if (h.kind != counting4::kind)
      throw format_error("a CBF holds counting filters (kind " + std::to_string(static_cast<int>(counting4::kind)) +
                         "), not kind " + std::to_string(static_cast<int>(h.kind)));
    if (h.layout == 4) return 0;
    if (h.layout == 8) return 1;
    throw format_error("a CBF's counters are 4 or 8 bits wide, not " + std::to_string(h.layout));
  }
};

using counting_codec = native_codec<counting_select, counting4, counting8>;

}  // namespace blume::redis
