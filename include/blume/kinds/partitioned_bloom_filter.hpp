// SPDX-License-Identifier: Apache-2.0
// The partitioned Bloom filter: k slices of m/k bits, probe i lands in slice i, so a key's probes never
// collide with each other (Almeida et al. 2007 use it as the building block of scalable filters).
#pragma once

#include "blume/detail/geometry.hpp"
#include "blume/detail/probe_ops.hpp"
#include "blume/kinds/basic_bloom_filter.hpp"

namespace blume {

/// Slice i occupies bits [i·s, (i+1)·s) with s = m/k; the probe in slice i is reduce(mix(g_i), s) where
/// g_i is the same enhanced double hashing sequence as the classic layout's.
class partitioned_layout : public detail::flat_probe_ops<partitioned_layout> {
 public:
  static constexpr filter_kind kind{2};
  static constexpr std::string_view name = "partitioned";
  static constexpr std::uint32_t block_bits = 0;

  static std::uint64_t plan_bytes(std::uint64_t bits) noexcept { return detail::word_bytes(bits); }
  static double model_fpr(double n, double m, double k) noexcept { return math::partitioned_fpr(n, m, k); }
  static double estimate_items(double set, double m, double k) noexcept { return math::partitioned_items(set, m, k); }
  static filter_plan plan(std::uint64_t items, double fpr) {
    return detail::plan_partitioned<partitioned_layout>(items, fpr);
  }
  static filter_plan plan_for_bits(std::uint64_t items, std::uint64_t bits) {
    return detail::plan_granular_for_bits<partitioned_layout>(items, bits, 1, 1, 32, true);
  }

  partitioned_layout(std::uint64_t bits, std::uint32_t hashes) : bits_(bits), hashes_(hashes) {
    detail::check_geometry(name, bits, hashes, 1);
    if (bits % hashes != 0)
      throw invalid_argument("partitioned filter: bit count " + std::to_string(bits) +
                             " is not a multiple of the hash count " + std::to_string(hashes));
    slice_ = bits / hashes;
  }

  std::uint64_t bits() const noexcept { return bits_; }
  std::uint32_t hashes() const noexcept { return hashes_; }
  std::uint64_t slice_bits() const noexcept { return slice_; }

  template <class Fn>
  bool for_each_probe(digest d, Fn&& fn) const noexcept {
    std::uint64_t a = d.low;
    std::uint64_t b = d.high;
    std::uint64_t base = 0;
    for (std::uint32_t i = 0; i < hashes_; ++i) {
      if (!fn(base + reduce(mix(a), slice_))) return false;
      base += slice_;
      a += b;
      b += i;
    }
    return true;
  }

 private:
  std::uint64_t bits_;
  std::uint32_t hashes_;
  std::uint64_t slice_ = 0;
};

template <hasher Hasher = xxh3_hasher>
using partitioned_bloom_filter = basic_bloom_filter<partitioned_layout, Hasher>;

static_assert(serializable_filter<partitioned_bloom_filter<>>);

}  // namespace blume
