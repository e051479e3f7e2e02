// SPDX-License-Identifier: Apache-2.0
// The bit-sliced index file (io/index_format.hpp). The input's last 8 bytes are set to the checksum of the
// rest, as a forger would, so that the fuzzer reaches the decoder's checks behind it. A file that decodes
// must answer queries, its model and its memory accounting without reading out of bounds, and encode back
// to exactly its own bytes.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "blume/io/index_format.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::vector<std::byte> bytes(size);
  if (size != 0) std::memcpy(bytes.data(), data, size);
  if (size >= 8) {
    const std::uint64_t sum = blume::detail::checksum(bytes.data(), size - 8);
    std::memcpy(bytes.data() + size - 8, &sum, 8);
  }
  try {
    const blume::bitsliced_index index = blume::decode_index(bytes);
    if (blume::encode_index(index) != bytes) std::abort();  // the format has one encoding of each index
    (void)index.memory_use();
    const blume::bitsliced_model model(index);
    for (const std::vector<std::string>& q : {std::vector<std::string>{"a"}, {"the", "bloom", "filter"}, {"x", "x"}}) {
      const std::vector<std::uint32_t> candidates = index.candidates(q);
      for (std::uint32_t d : candidates)
        if (d >= index.documents()) std::abort();
      (void)model.expected_false_candidates(q);
    }
  } catch (const blume::format_error&) {
  }
  return 0;
}
