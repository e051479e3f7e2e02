// SPDX-License-Identifier: Apache-2.0
// Numbers written for people and for JSON, shared by the surfaces' reports (the tool, the Python bindings)
// and the benchmark's (not part of the library).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

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

/// Bytes in B, KiB, MiB, GiB or TiB: `digits` decimals, `byte_digits` below 1 KiB.
inline std::string human_bytes(double bytes, int digits = 2, int byte_digits = 0) {
  static const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (bytes >= 1024 && u < 4) {
    bytes /= 1024;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*f %s", u == 0 ? byte_digits : digits, bytes, units[u]);
  return buf;
}

/// A rate as a percentage, with more decimals below 0.1%.
inline std::string percent(double rate) {
  char buf[32];
  // Below 1e-7, fixed decimals would print 0.00000%: significant digits say what the rate is.
  if (rate > 0 && rate < 1e-7) std::snprintf(buf, sizeof buf, "%.3g%%", rate * 100);
  else std::snprintf(buf, sizeof buf, rate >= 0.001 ? "%.3f%%" : "%.5f%%", rate * 100);
  return buf;
}

inline std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

/// A JSON string literal of `s`.
inline std::string json_string(std::string_view s) {
  std::string out = "\"";
  for (const char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned char>(c));
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

/// A JSON number that reads back as exactly `v`; null for NaN and infinities (JSON has neither).
inline std::string json_number(double v) {
  if (!std::isfinite(v)) return "null";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

}  // namespace blume::text
