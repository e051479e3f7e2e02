// Counts written for people, shared by the tool's reports and the benchmark's (not part of the library).
#pragma once

#include <cstdint>
#include <string>

namespace blume::text {

/// 10000000 as "10,000,000".
inline std::string with_commas(std::uint64_t v) {
  const std::string digits = std::to_string(v);
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i != 0 && (digits.size() - i) % 3 == 0) out.push_back(',');
    out.push_back(digits[i]);
  }
  return out;
}

}  // namespace blume::text
