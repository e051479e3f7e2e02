// SPDX-License-Identifier: Apache-2.0
// The kinds that grow after they are loaded: scalable chains (a layer), d-left tables (doubling) and cuckoo
// filters with sub-filters (one more). The input is a file of one of them (exercise.hpp's load_family). A
// file that loads takes keys one at a time, and each insert may add to what the filter holds at most X,
// a bound that follows from what the filter held before it (for the first insert, the file's own size):
//
//   scalable  one new layer: at most 2g·c + 1 keys (g = max(1, growth), c the newest layer's capacity, the
//             loader's check), c at most 2·36.8·m + 64 for the newest layer's m bits (a bit holds at most
//             ln(1/(1 − ε)) ≤ 36.7 keys at a rate ε below 1, and the loader allows twice that plus 64), at
//             a rate of at least min_fpr, where a partitioned layer takes at most 128 bits per key (92.3
//             for many keys): X = (128·(2g·(73.6·m + 64) + 1) + 512) / 8 bytes, plus 4 KiB for the
//             chain's own vectors;
//   dleft     at most max_doublings_per_insert (2) doublings: X = 3 × the table;
//   cuckoo    one sub-filter of e × the newest's buckets (e = expansion): X = e × what it held + 4 KiB.
//
// A growth that X allows but that would take more than 256 MiB (a fresh chain with growth 32768 may) is
// checked against X and then not made, to stay within the fuzzer's 1 GiB allocation limit. What grew must
// save and load again into the same bytes.
#include <algorithm>
#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <variant>

#include "exercise.hpp"

namespace {

using namespace blume;

constexpr std::array family{scalable_bloom_filter<>::kind, dleft_counting_filter<>::kind, cuckoo_filter<>::kind};
constexpr double budget = 256.0 * 1024 * 1024;

[[noreturn]] void beyond(filter_kind kind, double grew, double bound) {
  std::fprintf(stderr, "growing_fuzz: one insert added %.0f bytes, beyond X = %.0f\n", grew, bound);
  blume_fuzz::fail(kind, "one insert allocated beyond what the file accounts for");
}

/// X for the next insert into `f`, in bytes; 0 for a kind that does not grow.
template <class F>
double one_insert_bound(const F& f) {
  if constexpr (std::is_same_v<F, scalable_bloom_filter<>>) {
    const double g = std::max(1.0, f.options().growth);
    const double m = static_cast<double>(f.layers().back().bits());
    const double keys = 2 * g * (2 * 36.8 * m + 64) + 1;
    return (128 * keys + 512) / 8 + 4096;
  } else if constexpr (std::is_same_v<F, dleft_counting_filter<>>) {
    return 3.0 * static_cast<double>(f.size_in_bytes());
  } else if constexpr (std::is_same_v<F, cuckoo_filter<>>) {
    return std::max<double>(1, f.geometry().expansion) * static_cast<double>(f.size_in_bytes()) + 4096;
  } else {
    return 0;
  }
}

/// What the insert of `key` will allocate at most as the filter says beforehand, checked against X; false
/// when that is more than the run may spend.
template <class F>
bool affordable(const F& f, double bound) {
  double next = 0;
  if constexpr (std::is_same_v<F, scalable_bloom_filter<>>) {
    if (!f.needs_new_layer() || !f.can_grow()) return true;
    try {
      next = static_cast<double>(f.next_layer_bytes());
    } catch (const invalid_argument&) {
      return true;  // the chain is full: the insert allocates nothing
    }
  } else if constexpr (std::is_same_v<F, cuckoo_filter<>>) {
    next = static_cast<double>(f.next_sub_filter_bytes());
  } else {
    next = bound;
  }
  if (next > bound) beyond(F::kind, next, bound);
  return next <= budget;
}

template <class F>
void grow(F& f) {
  if constexpr (requires { f.insert(std::uint64_t{1}); }) {
    const auto now = std::chrono::system_clock::now();
    for (std::uint64_t i = 0; i < 64; ++i) {
      const double bound = one_insert_bound(f);
      if (!affordable(f, bound)) return;
      const double before = static_cast<double>(f.size_in_bytes());
      const std::uint64_t k = blume_fuzz::key(1000 + i);
      const bool stored = blume_fuzz::insert(f, k, now);
      const double after = static_cast<double>(f.size_in_bytes());
      if (after - before > bound) beyond(F::kind, after - before, bound);
      if (stored && !f.contains(k)) blume_fuzz::fail(F::kind, "a key just inserted is not found");
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // Not exercise(): its inserts are not held to the budget. The generic file fuzzer exercises these kinds.
  return blume_fuzz::fuzz_family(data, size, family, [](auto& f) {
    grow(f);
    blume_fuzz::round_trip(f);
  });
}
