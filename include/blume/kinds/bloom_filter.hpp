// SPDX-License-Identifier: Apache-2.0
// The classic Bloom filter (Bloom 1970): m bits, k probes per key anywhere in the array.
#pragma once

#include "blume/detail/geometry.hpp"
#include "blume/detail/probe_ops.hpp"
#include "blume/kinds/basic_bloom_filter.hpp"

namespace blume {

/// Probes by enhanced double hashing (Dillinger & Manolios 2004): from the digest halves a, b the i-th
/// probe is g_i = a + i·b + i(i − 1)(i − 2)/6 (mod 2^64), computed incrementally: after probe i, a += b and
/// then b += i (docs/format.md, "Probing", gives the same closed form; files depend on it). Kirsch &
/// Mitzenmacher (2006) show two independent hashes suffice for the classic asymptotic rate. Each g_i is
/// mapped to [0, m) by multiply-high (Lemire), so any m works; since that reduction reads only the high
/// bits, g_i first goes through mix(), or the cubic term (which moves low bits) would be lost and small
/// filters would show double hashing's excess false positives.
class classic_layout : public detail::flat_probe_ops<classic_layout> {
 public:
  static constexpr filter_kind kind{1};
  static constexpr std::string_view name = "bloom";
  static constexpr std::uint32_t block_bits = 0;  // no blocks: probes span the whole array

  static std::uint64_t plan_bytes(std::uint64_t bits) noexcept { return detail::word_bytes(bits); }
  static double model_fpr(double n, double m, double k) noexcept { return math::bloom_fpr(n, m, k); }
  static double estimate_items(double set, double m, double k) noexcept { return math::classic_items(set, m, k); }
  static filter_plan plan(std::uint64_t items, double fpr) { return detail::plan_classic<classic_layout>(items, fpr); }
  static filter_plan plan_for_bits(std::uint64_t items, std::uint64_t bits) {
    return detail::plan_classic_for_bits<classic_layout>(items, bits);
  }

  classic_layout(std::uint64_t bits, std::uint32_t hashes) : bits_(bits), hashes_(hashes) {
    detail::check_geometry(name, bits, hashes, 1);
  }

  std::uint64_t bits() const noexcept { return bits_; }
  std::uint32_t hashes() const noexcept { return hashes_; }

  /// Calls fn(bit position) for each probe while fn returns true; returns whether all returned true.
  template <class Fn>
  bool for_each_probe(digest d, Fn&& fn) const noexcept {
    return detail::double_hashing_probes(d, hashes_, bits_, fn);
  }

 private:
  std::uint64_t bits_;
  std::uint32_t hashes_;
};

/// The classic Bloom filter. `bloom_filter<> f(100'000'000, 0.01);` gives m = 958,505,838 bits, k = 7.
template <hasher Hasher = xxh3_hasher>
using bloom_filter = basic_bloom_filter<classic_layout, Hasher>;

static_assert(serializable_filter<bloom_filter<>>);

}  // namespace blume
