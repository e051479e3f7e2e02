// SPDX-License-Identifier: Apache-2.0
// The invertible Bloom lookup table (iblt, and the strata sketch, which is an iblt file of 32 strata). The
// input is an iblt file (exercise.hpp's load_family). A file that loads is exercised (inserts, the
// accessors, a save that loads again, erases), decoded as it is (whatever it holds, the peeling must end),
// and subtracted from a copy of itself: the difference is empty, so it decodes completely to nothing, and
// the strata's estimate of it is 0.
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <variant>

#include "exercise.hpp"

namespace {

using namespace blume;
using iblt = invertible_bloom_filter<>;

constexpr std::array family{iblt::kind};

void decode(iblt& f) {
  (void)f.decode();
  for (std::uint32_t s = 0; s < f.strata(); ++s) (void)f.decode_stratum(s);
  iblt none = f;
  none.subtract(f);
  const iblt_listing l = none.decode();
  if (!l.complete || l.recovered() != 0) blume_fuzz::fail(iblt::kind, "a table less itself is not empty");
  if (estimate_difference(f, f).estimate != 0) blume_fuzz::fail(iblt::kind, "a table differs from itself");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return blume_fuzz::fuzz_family(data, size, family, [](auto& f) {
    if constexpr (std::is_same_v<std::decay_t<decltype(f)>, iblt>) {
      decode(f);
      blume_fuzz::exercise(f);
      decode(f);
    }
  });
}
