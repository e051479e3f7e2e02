// SPDX-License-Identifier: Apache-2.0
// Parsing the CLI's human units: counts with suffixes (10M, 1.5k, 1e6) and rates (1%, 0.01).
#pragma once

#include <charconv>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "blume/error.hpp"
#include "blume/kind.hpp"

namespace blume::cli {

/// "100M" → 100'000'000. Accepts a decimal or scientific number with an optional k/M/G/T suffix (powers of
/// 1000). Refuses negatives, fractions of an item, and values beyond `max`.
inline std::uint64_t parse_count(std::string_view text, std::string_view what, double max = 1e15) {
  std::string s(text);
  double scale = 1;
  if (!s.empty()) {
    switch (s.back()) {
      case 'k':
      case 'K': scale = 1e3; break;
      case 'm':
      case 'M': scale = 1e6; break;
      case 'g':
      case 'G':
      case 'b':
      case 'B': scale = 1e9; break;
      case 't':
      case 'T': scale = 1e12; break;
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
    throw invalid_argument(std::string(what) + ": '" + std::string(text) +
                           "' must be between 0 and 1 (or 0% and 100%), exclusive");
  return value;
}

/// "120MiB" → 125829120, "1GB" → 10^9, "4096" → 4096 bytes. Suffixes B, kB/MB/GB/TB (powers of 1000),
/// KiB/MiB/GiB/TiB (powers of 1024); K, M, G, T alone are powers of 1024, as in most tools' memory options.
inline std::uint64_t parse_bytes(std::string_view text, std::string_view what) {
  std::string s(text);
  static constexpr struct {
    const char* suffix;
    double scale;
  } units[] = {{"KiB", 1024.0},
               {"MiB", 1048576.0},
               {"GiB", 1073741824.0},
               {"TiB", 1099511627776.0},
               {"kB", 1e3},
               {"KB", 1e3},
               {"MB", 1e6},
               {"GB", 1e9},
               {"TB", 1e12},
               {"K", 1024.0},
               {"k", 1024.0},
               {"M", 1048576.0},
               {"G", 1073741824.0},
               {"T", 1099511627776.0},
               {"B", 1.0}};
  double scale = 1;
  for (const auto& u : units) {
    const std::string_view suffix(u.suffix);
    if (s.size() > suffix.size() && std::string_view(s).substr(s.size() - suffix.size()) == suffix) {
      scale = u.scale;
      s.resize(s.size() - suffix.size());
      break;
    }
  }
  std::size_t used = 0;
  double value = 0;
  try {
    value = std::stod(s, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (s.empty() || used != s.size() || !std::isfinite(value) || value <= 0)
    throw invalid_argument(std::string(what) + ": '" + std::string(text) + "' is not a memory size (e.g. 120MiB, 1GB)");
  value *= scale;
  if (value > 1e15) throw invalid_argument(std::string(what) + ": '" + std::string(text) + "' is too large");
  return static_cast<std::uint64_t>(value);
}

/// An integer key as text: a decimal number below 2^64, digits only. nullopt for anything else.
inline std::optional<std::uint64_t> parse_integer_key(std::string_view text) noexcept {
  std::uint64_t value = 0;
  const char* end = text.data() + text.size();
  const auto [at, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc() || at != end) return std::nullopt;
  return value;
}

/// The universe [0, U) of an integer-keyed kind: "65536", "2^32", "4G" (a count) or "2^64"; U from 2 to 2^64.
inline integer_universe parse_universe(std::string_view text, std::string_view what) {
  if (text.substr(0, 2) == "2^") {
    const auto power = parse_integer_key(text.substr(2));
    if (!power || *power < 1 || *power > 64)
      throw invalid_argument(std::string(what) + ": '" + std::string(text) + "' is not 2^1 … 2^64");
    return *power == 64 ? integer_universe::all_64_bit() : integer_universe::of_size(std::uint64_t{1} << *power);
  }
  if (text == "18446744073709551616") return integer_universe::all_64_bit();
  if (const auto exact = parse_integer_key(text)) return integer_universe::of_size(*exact);
  return integer_universe::of_size(parse_count(text, what, 1.8e19));
}

}  // namespace blume::cli
