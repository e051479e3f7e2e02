// SPDX-License-Identifier: Apache-2.0
#include <blume/blume.hpp>

int main() {
  blume::split_block_bloom_filter<> filter(1000, 0.01);
  filter.insert("installed");
  return filter.contains("installed") && filter.bits() == blume::plan_for(1000, 0.01, filter.kind).bits ? 0 : 1;
}
