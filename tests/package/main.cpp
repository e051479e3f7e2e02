// SPDX-License-Identifier: Apache-2.0
// A program built against the installed headers: it uses a filter, and prints the version they carry.
#include <blume/blume.hpp>
#include <blume/version.hpp>

#include <cstdio>

int main() {
  blume::split_block_bloom_filter<> filter(1000, 0.01);
  filter.insert("installed");
  if (!filter.contains("installed") || filter.bits() != blume::plan_for(1000, 0.01, filter.kind).bits) return 1;
  std::printf("%s\n", blume::version);
  return 0;
}
