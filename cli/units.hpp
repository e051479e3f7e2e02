// Parsing the CLI's human units: counts with suffixes (10M, 1.5k, 1e6) and rates (1%, 0.01).
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>

#include "blume/error.hpp"

namespace blume::cli {

/// "100M" → 100'000'000. Accepts a decimal or scientific number with an optional k/M/G/T suffix (powers of
/// 1000). Refuses negatives, fractions of an item, and values beyond `max`.
inline std::uint64_t parse_count(std::string_view text, std::string_view what, double max = 1e15) {
  std::string s(text);
  double scale = 1;
  if (!s.empty()) {
    switch (s.back()) {
      case 'k': case 'K': scale = 1e3; break;
      case 'm': case 'M': scale = 1e6; break;
      case 'g': case 'G': case 'b': case 'B': scale = 1e9; break;
      case 't': case 'T': scale = 1e12; break;
      default: break;
    }
    if (scale != 1) s.pop_back();
  }
  std::size_t used = 0;
  double value = 0;
  try {
    value = std::stod(s, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (s.empty() || used != s.size() || !std::isfinite(value))
    throw invalid_argument(std::string(what) + ": '" + std::string(text) + "' is not a number");
  value *= scale;
  if (value < 0) throw invalid_argument(std::string(what) + ": '" + std::string(text) + "' is negative");
  if (value != std::floor(value))
    throw invalid_argument(std::string(what) + ": '" + std::string(text) + "' is not a whole number");
  if (value > max)
    throw invalid_argument(std::string(what) + ": '" + std::string(text) + "' is larger than the maximum " +
                           std::to_string(static_cast<std::uint64_t>(max)));
  return static_cast<std::uint64_t>(value);
}

/// "1%" → 0.01, "0.01" → 0.01. Must lie in (0, 1).
inline double parse_rate(std::string_view text, std::string_view what) {
  std::string s(text);
  double scale = 1;
  if (!s.empty() && s.back() == '%') {
    scale = 0.01;
    s.pop_back();
  }
  std::size_t used = 0;
  double value = 0;
  try {
    value = std::stod(s, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (s.empty() || used != s.size())
    throw invalid_argument(std::string(what) + ": '" + std::string(text) + "' is not a number");
  value *= scale;
  if (!(value > 0 && value < 1))
    throw invalid_argument(std::string(what) + ": '" + std::string(text) + "' must be between 0 and 1 (or 0% and 100%), exclusive");
  return value;
}

}  // namespace blume::cli
