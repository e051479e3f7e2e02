// SPDX-License-Identifier: Apache-2.0
// The kinds that take keys with values into lattice cells: spatial (which of s sets) and compact (an upper
// bound in a lattice). The input is a file of one of them (exercise.hpp's load_family). A file that loads
// is exercised (valued inserts that must be found right after, the accessors, a save that loads again),
// then merged with a copy of itself: a union with itself answers every key as before, and saves and loads.
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <variant>
#include <vector>

#include "exercise.hpp"

namespace {

using namespace blume;

constexpr std::array family{spatial_bloom_filter<>::kind, compact_approximator<>::kind};

template <class F>
void self_merge(F& f) {
  if constexpr (can_merge<F> && can_find<F>) {
    // Every key, inserted or not, answers as before: a cell joined with itself is unchanged (the counts of
    // keys per value add, so the bytes may not stay the same).
    std::vector<decltype(f.find(std::uint64_t{1}))> before;
    for (std::uint64_t i = 0; i < 64; ++i) before.push_back(f.find(blume_fuzz::key(i)));
    const F copy = f;
    f.merge(copy);
    for (std::uint64_t i = 0; i < 64; ++i)
      if (f.find(blume_fuzz::key(i)) != before[i]) blume_fuzz::fail(F::kind, "a merge with itself changed an answer");
    blume_fuzz::round_trip(f);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return blume_fuzz::fuzz_family(data, size, family, [](auto& f) {
    blume_fuzz::exercise(f);
    self_merge(f);
  });
}
