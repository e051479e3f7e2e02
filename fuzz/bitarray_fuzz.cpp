// SPDX-License-Identifier: Apache-2.0
// The newer bit-array kinds: layered (L layers, counts up to L), attenuated (D levels per network node)
// and vi-counting (variable-increment counters). The input is a file of one of them (exercise.hpp's
// load_family). A file that loads is exercised (inserts found right after, the accessors, a save that
// loads again, erases), and then: a counting kind counts a key it just took at least once; an attenuated
// filter that absorbs a copy of itself still holds every key at level 0; a merge or an intersection with
// a copy of itself keeps every key inserted.
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <variant>

#include "exercise.hpp"

namespace {

using namespace blume;

constexpr std::array family{layered_bloom_filter<>::kind, attenuated_bloom_filter<>::kind,
                            variable_increment_counting_filter<>::kind};

template <class F>
void with_itself(F& f) {
  if constexpr (takes_inserts<F>) {
    std::uint64_t keys[16];
    for (std::uint64_t i = 0; i < 16; ++i) {
      keys[i] = blume_fuzz::key(500 + i);
      f.insert(keys[i]);
      if constexpr (can_count<F>)
        if (f.count(keys[i]) == 0) blume_fuzz::fail(F::kind, "a key just inserted counts 0");
    }
    const F copy = f;
    if constexpr (can_absorb<F>) {
      if (f.depth() > 1) f.absorb(copy, 1);
      // Beyond the last level nothing would be taken in: refused, and the filter left as it was.
      try {
        f.absorb(copy, f.depth());
        blume_fuzz::fail(F::kind, "absorbing a neighbour past the last level was not refused");
      } catch (const blume::invalid_argument&) {
      }
    }
    if constexpr (can_merge<F>) f.merge(copy);
    if constexpr (can_intersect<F>) f.intersect(copy);
    for (const std::uint64_t k : keys)
      if (!f.contains(k)) blume_fuzz::fail(F::kind, "a key is lost by combining the filter with itself");
    blume_fuzz::round_trip(f);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return blume_fuzz::fuzz_family(data, size, family, [](auto& f) {
    blume_fuzz::exercise(f);
    with_itself(f);
  });
}
