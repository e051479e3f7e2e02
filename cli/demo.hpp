// `blume demo`: the practitioner's sign-up scenario on the embedded default (no server needed).
#pragma once

#include <cstdint>
#include <string>

#include "blume/kinds.hpp"

namespace blume::cli {

struct demo_options {
  std::uint64_t items = 10'000'000;   // registered addresses in the filter
  std::uint64_t probes = 1'000'000;   // new sign-ups checked
  double fpr = 0.01;
  filter_kind kind = blume::split_block_bloom_filter<>::kind;
  unsigned threads = 2;
};

int run_demo(const demo_options& options);

}  // namespace blume::cli
