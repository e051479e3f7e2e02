// SPDX-License-Identifier: Apache-2.0
// Fuzzes the decoder of the hash packets that distributed filters send each other (detail/hash_packet.hpp,
// over the Golomb code the Golomb-coded set also reads). The input is the range (8 bytes, little-endian)
// and then the packet's words; a trailing partial word is dropped. The packet is copied into an
// allocation of exactly its size, so ASan sees any read past it. A packet must either be refused with a
// format_error or decode into what a packet promises: its count of values, ascending, each below the
// range; and those values, encoded again, must decode to themselves.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "blume/detail/hash_packet.hpp"

namespace {

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "hash_packet_fuzz: %s\n", what);
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 8) return 0;
  std::uint64_t range = 0;
  std::memcpy(&range, data, 8);
  std::vector<std::uint64_t> packet((size - 8) / 8);
  if (!packet.empty()) std::memcpy(packet.data(), data + 8, packet.size() * 8);

  std::vector<std::uint64_t> values;
  try {
    blume::detail::decode_hash_packet(packet, range, values);
  } catch (const blume::format_error&) {
    return 0;
  }
  if (values.size() != packet[0]) fail("the decoded count differs from the packet's");
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (values[i] >= range) fail("a value outside the range");
    if (i != 0 && values[i] < values[i - 1]) fail("values not in ascending order");
  }
  std::vector<std::uint64_t> again, back;
  blume::detail::encode_hash_packet(values, range, again);
  try {
    blume::detail::decode_hash_packet(again, range, back);
  } catch (const blume::format_error&) {
    fail("the encoder's own packet is refused");
  }
  if (back != values) fail("the values encoded again decode to others");
  return 0;
}
