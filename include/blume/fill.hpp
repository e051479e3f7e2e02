// SPDX-License-Identifier: Apache-2.0
// How full a fixed-size filter is against what it was planned for. A bit-array filter given more distinct
// keys than its design keeps answering, but "maybe" loses its meaning; callers (the blume tool's build and
// add) compare `rate` with `target` to refuse an overfilled filter. Other kinds grow (scalable), refuse
// keys they have no room for (cuckoo, quotient), forget (stable, aging) or are built whole (static).
#pragma once

#include <algorithm>

#include "blume/io/format.hpp"
#include "blume/kinds/basic_bloom_filter.hpp"

namespace blume {

struct fill_state {
  double count;     // distinct keys, estimated from the filter's own fill
  double capacity;  // what it was planned for
  double rate;      // its false-positive rate at `count`
  double target;    // its rate at `capacity`
  bool inferred;    // no design record: capacity and target read off the geometry (optimal_load)
};

template <class F>
concept fill_measurable = requires(const F& f) {
  f.estimated_count();
  f.optimal_load();
  f.predicted_fpr_at(1.0);
};

template <fill_measurable F>
fill_state fill_against(const F& f, const filter_design& design) {
  fill_state s{};
  s.inferred = !design.recorded();
  s.capacity = s.inferred ? f.optimal_load() : static_cast<double>(design.items);
  // The filter's own rate at its capacity where the plan could not reach the target (k is capped, so a
  // rate like 1e-30 is beyond it): a filter holding exactly what it was planned for is never overfilled.
  s.target = s.inferred ? f.predicted_fpr_at(s.capacity) : std::max(design.fpr, f.predicted_fpr_at(s.capacity));
  s.count = f.estimated_count();
  if constexpr (requires { requires F::rate_from_cells; }) {
    s.rate = f.predicted_fpr();  // its cells know more than the count (counters stuck after erases)
  } else {
    s.rate = f.predicted_fpr_at(s.count);
  }
  return s;
}

}  // namespace blume
