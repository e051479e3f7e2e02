// SPDX-License-Identifier: Apache-2.0
// FlyHash: the fruit fly's hash of an odour (Dasgupta, Stevens & Navlakha, "A neural algorithm for a
// fundamental computing problem", Science 358:793, 2017), which the novelty filter takes a vector's tag from
// (Dasgupta, Sheehan, Stevens & Navlakha, PNAS 115(51):13093, 2018). A d-dimensional input is projected onto
// m ≫ d units by a sparse binary matrix (each unit sums s of the inputs, drawn at random: a Kenyon cell sampling
// a few projection neurons), and winner-take-all keeps the k units of largest sum as the input's tag (the top
// 5% in the fly). Near inputs share most of their tag, so the tag is a locality-sensitive hash: unlike a
// Bloom filter's probes, which change entirely when one bit of the key does.
//
// The tag is a function of the seed and the input alone, the same on every platform with IEEE-754 double
// arithmetic (FLT_EVAL_METHOD 0, no flush to zero): a unit's sum adds its inputs in increasing index order
// (additions only, so no contraction to fused multiply-adds changes it), and a tie between equal sums goes to the
// unit of higher priority, a seeded hash of the unit: tie-breaking by unit number would favour the low units
// whenever inputs take few values (pixels, counts), so that unrelated inputs would share them. Adding a constant
// to every input, or scaling all of them by a positive factor, leaves the tag as it is up to rounding (exactly
// when the sums are exact): every unit sums the same number of inputs.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "blume/error.hpp"
#include "blume/hash.hpp"

namespace blume::detail {

class flyhash {
 public:
  flyhash() = default;
  /// m units of s inputs each, out of d, drawn from `seed`; tags of k units. The caller has checked
  /// 1 ≤ s ≤ d and 1 ≤ k ≤ m.
  flyhash(std::uint32_t dim, std::uint32_t units, std::uint32_t samples, std::uint32_t tag, std::uint64_t seed)
      : dim_(dim), units_(units), samples_(samples), tag_(tag) {
    inputs_.resize(std::size_t{units} * samples);
    priority_.resize(units);
    for (std::uint32_t u = 0; u < units; ++u) {
      priority_[u] = splitmix64_mix(seed + splitmix64_mix(std::uint64_t{u} ^ 0x5bd1e9955bd1e995ULL));
      draw(u, seed);
    }
  }

  std::uint32_t dim() const noexcept { return dim_; }
  std::uint32_t units() const noexcept { return units_; }
  std::uint32_t samples() const noexcept { return samples_; }
  std::uint32_t tag_size() const noexcept { return tag_; }
  /// The inputs unit u sums, increasing.
  std::span<const std::uint32_t> inputs_of(std::uint32_t u) const noexcept {
    return {inputs_.data() + std::size_t{u} * samples_, samples_};
  }

  /// The tag of x (dim() values, each finite: the caller checks): k unit numbers, increasing, written to
  /// `out`. `sums`, `scratch` and `ties` are reused buffers, so that a loop over many inputs allocates once.
  void tag(std::span<const double> x, std::span<std::uint32_t> out, std::vector<double>& sums,
           std::vector<double>& scratch, std::vector<std::uint64_t>& ties) const {
    sums.resize(units_);
    const std::uint32_t* in = inputs_.data();
    for (std::uint32_t u = 0; u < units_; ++u, in += samples_) {
      double s = 0;
      for (std::uint32_t j = 0; j < samples_; ++j) s += x[in[j]];
      sums[u] = s;
    }
    // The k-th largest sum is the threshold: the tag is every unit above it, then units at it in increasing
    // order until there are k (ties go to the lower unit). Selecting on the sums themselves, not on indices
    // compared through them, keeps the selection on contiguous doubles.
    scratch.assign(sums.begin(), sums.end());
    std::nth_element(scratch.begin(), scratch.begin() + (tag_ - 1), scratch.end(), std::greater<>());
    const double threshold = scratch[tag_ - 1];
    std::uint32_t above = 0, level = 0;
    for (std::uint32_t u = 0; u < units_; ++u) {
      above += sums[u] > threshold ? 1 : 0;
      level += sums[u] == threshold ? 1 : 0;
    }
    const std::uint32_t at = tag_ - above;  // 1 … level units of the threshold's sum belong to the tag
    // The units at the threshold go in by priority: the `at`-th largest priority among them is the cut.
    std::uint64_t cut = 0;
    if (at < level) {
      ties.clear();
      for (std::uint32_t u = 0; u < units_; ++u)
        if (sums[u] == threshold) ties.push_back(priority_[u]);
      std::nth_element(ties.begin(), ties.begin() + (at - 1), ties.end(), std::greater<>());
      cut = ties[at - 1];
    }
    std::uint32_t n = 0;
    for (std::uint32_t u = 0; u < units_; ++u)
      if (sums[u] > threshold || (sums[u] == threshold && priority_[u] >= cut)) out[n++] = u;
  }
  /// Unit u's priority among units of equal sums (higher first).
  std::uint64_t priority(std::uint32_t u) const noexcept { return priority_[u]; }
  std::vector<std::uint32_t> tag(std::span<const double> x) const {
    std::vector<std::uint32_t> out(tag_);
    std::vector<double> sums, scratch;
    std::vector<std::uint64_t> ties;
    tag(x, out, sums, scratch, ties);
    return out;
  }

 private:
  // Unit u's s inputs: Floyd's sampling of s distinct values of [0, d) from splitmix64's sequence on
  // (seed, u), which needs exactly s draws; then sorted, which fixes the order of the sum. (s is at most 32:
  // the linear search costs at most 32·31/2 comparisons a unit.)
  void draw(std::uint32_t u, std::uint64_t seed) {
    std::uint32_t* chosen = inputs_.data() + std::size_t{u} * samples_;
    std::uint64_t state = splitmix64_mix(seed ^ splitmix64_mix(std::uint64_t{u} + 0x9e3779b97f4a7c15ULL));
    std::uint32_t n = 0;
    for (std::uint32_t i = dim_ - samples_; i < dim_; ++i) {
      const auto t = static_cast<std::uint32_t>(reduce(splitmix64_mix(state += 0x9e3779b97f4a7c15ULL), i + 1ULL));
      const bool taken = std::find(chosen, chosen + n, t) != chosen + n;
      chosen[n++] = taken ? i : t;
    }
    std::sort(chosen, chosen + samples_);
  }

  std::uint32_t dim_ = 0, units_ = 0, samples_ = 0, tag_ = 0;
  std::vector<std::uint32_t> inputs_;    // units × samples, unit-major
  std::vector<std::uint64_t> priority_;  // a seeded hash of each unit: who wins a tie
};

}  // namespace blume::detail
