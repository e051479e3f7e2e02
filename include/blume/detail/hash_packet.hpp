// SPDX-License-Identifier: Apache-2.0
// A packet of sorted hash values, Golomb-coded: what one processing element sends another when a filter is
// spread over several (the distributed filters: Sanders, Schlag & Müller, "Communication efficient
// algorithms for fundamental big data problems", 2013). n values spread over a range R have gaps of mean
// R/n, close to geometric, so they cost about log2(e·R/n) bits each instead of 64 (detail/golomb_code.hpp).
//
// Layout, in 64-bit words: the value count n, the Golomb parameter M, then the codes of the gaps
// (v_0 − 0, v_1 − v_0, …: repeated values are gaps of 0) as a little-endian bit string, then one zero word.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "blume/detail/golomb_code.hpp"
#include "blume/error.hpp"

namespace blume::detail {

/// The packet of `sorted` (ascending, each below `range`), appended to `out`; returns its word count.
inline std::size_t encode_hash_packet(std::span<const std::uint64_t> sorted, std::uint64_t range,
                                      std::vector<std::uint64_t>& out) {
  const std::size_t start = out.size();
  const double p =
      sorted.empty() ? 0.5 : std::clamp(static_cast<double>(sorted.size()) / static_cast<double>(range), 1e-18, 0.5);
  const golomb_code code = golomb_code::for_probability(p);
  out.push_back(sorted.size());
  out.push_back(code.m());
  std::vector<std::uint64_t> bits;
  bits.reserve(sorted.size() * 12 / 64 + 2);
  std::uint64_t at = 0, previous = 0;
  for (const std::uint64_t v : sorted) {
    code.put(bits, at, v - previous);
    previous = v;
  }
  bits.resize((at + 63) / 64);
  out.insert(out.end(), bits.begin(), bits.end());
  out.push_back(0);  // slack for the decoder's two-word reads
  return out.size() - start;
}

/// The values of one packet, appended to `out`; throws format_error for a packet that is not one (a count
/// its bits cannot hold, a parameter the encoder would not choose, no zero word at its end, a code running
/// past its end, a value outside [0, range)). The packet comes from another process: nothing in it is
/// trusted, and nothing outside it is read.
inline void decode_hash_packet(std::span<const std::uint64_t> packet, std::uint64_t range,
                               std::vector<std::uint64_t>& out) {
  if (packet.size() < 3) throw format_error("hash packet: " + std::to_string(packet.size()) + " words, at least 3");
  const std::uint64_t n = packet[0];
  const std::uint64_t m = packet[1];
  const std::span<const std::uint64_t> bits = packet.subspan(2);
  const std::uint64_t end = (bits.size() - 1) * 64;
  if (m == 0 || n > end) throw format_error("hash packet: " + std::to_string(n) + " values cannot fit its bits");
  // The encoder's M is about ln 2 · range / n, at most the range (1 for an empty packet).
  if (m > std::max<std::uint64_t>(range, 1))
    throw format_error("hash packet: Golomb parameter " + std::to_string(m) + " above the range " +
                       std::to_string(range));
  if (bits.back() != 0) throw format_error("hash packet: no zero word at its end");
  const golomb_code code(m);
  if (n != 0 && range == 0) throw format_error("hash packet: values in an empty range");
  out.reserve(out.size() + n);
  std::uint64_t at = 0, value = 0;
  for (std::uint64_t i = 0; i < n; ++i) {
    std::uint64_t gap = 0;
    if (!code.get(bits, at, end, gap))
      throw format_error("hash packet: value " + std::to_string(i) + " runs past its end or past 2^64");
    if (gap >= range - value)  // value < range throughout, so this cannot wrap
      throw format_error("hash packet: value " + std::to_string(i) + " is outside the range " + std::to_string(range));
    value += gap;
    out.push_back(value);
  }
}

}  // namespace blume::detail
