// SPDX-License-Identifier: Apache-2.0
// Shared helpers for the blume tests: deterministic keys, temporary directories, the list of filter kinds
// for typed tests, and small valid geometries per kind.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <ranges>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <utility>
#include <vector>

#include "blume/blume.hpp"
#include "blume/detail/index_map_range.hpp"

namespace blume_test {

/// True in the sanitized (and unoptimised) builds, whose code runs ten to thirty times slower.
#if defined(__SANITIZE_ADDRESS__) || !defined(__OPTIMIZE__)
inline constexpr bool slow_build = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(undefined_behavior_sanitizer)
inline constexpr bool slow_build = true;
#else
inline constexpr bool slow_build = false;
#endif
#else
inline constexpr bool slow_build = false;
#endif

/// `n` in the optimised builds, `n / divisor` (at least `floor`) in the slow ones. Only for sizes that tighten a
/// statistical bound or reach a scale: the sanitizers look for memory errors, which a smaller run still
/// walks through; the release build keeps the full size and the tight bound.
constexpr std::uint64_t scaled(std::uint64_t n, std::uint64_t divisor = 10, std::uint64_t floor = 1000) noexcept {
  if (!slow_build) return n;
  return std::max(n / divisor, std::min(n, floor));
}

/// SplitMix64's output function. A bijection on 64-bit integers, so distinct indices give distinct keys.
constexpr std::uint64_t splitmix64(std::uint64_t x) noexcept {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

/// Present keys come from indices below 2^63, absent keys from indices at or above it: disjoint by
/// construction because splitmix64 is a bijection.
constexpr std::uint64_t present_key(std::uint64_t i) noexcept { return splitmix64(i); }

/// Key i of pattern `pattern` (0 … key_patterns − 1), the structured keys a model must hold for as random
/// ones: random, sequential, multiples of 2^16, multiples of 2^32, and the 64-bit images of −1, −2, ….
inline constexpr int key_patterns = 5;
constexpr std::uint64_t pattern_key(int pattern, std::uint64_t i) noexcept {
  switch (pattern) {
    case 0: return splitmix64(i);
    case 1: return i;
    case 2: return i << 16;
    case 3: return i << 32;
    default: return ~std::uint64_t{0} - i;
  }
}
inline constexpr const char* pattern_names[key_patterns] = {"random", "sequential", "×2^16", "×2^32", "negatives"};
constexpr std::uint64_t absent_key(std::uint64_t i) noexcept { return splitmix64(i | (std::uint64_t{1} << 63)); }

inline std::vector<std::uint64_t> present_keys(std::uint64_t count, std::uint64_t first = 0) {
  std::vector<std::uint64_t> keys(count);
  for (std::uint64_t i = 0; i < count; ++i) keys[i] = present_key(first + i);
  return keys;
}

inline std::vector<std::uint64_t> absent_keys(std::uint64_t count, std::uint64_t first = 0) {
  std::vector<std::uint64_t> keys(count);
  for (std::uint64_t i = 0; i < count; ++i) keys[i] = absent_key(first + i);
  return keys;
}

/// `count` absent keys generated on the fly (no memory), for probing with millions of keys.
inline auto absent_key_view(std::uint64_t count, std::uint64_t first = 0) {
  return blume::detail::index_map_range(first, first + count, [](std::uint64_t i) { return absent_key(i); });
}

inline std::string present_string(std::uint64_t i) { return "present:" + std::to_string(i); }
inline std::string absent_string(std::uint64_t i) { return "absent:" + std::to_string(i); }

/// A fresh, uniquely named directory under the system temporary directory, removed with its contents
/// on destruction.
class temp_dir {
 public:
  temp_dir() {
    static std::atomic<unsigned> counter{0};
    std::random_device entropy;
    for (;;) {
      path_ = std::filesystem::temp_directory_path() / ("blume-test-" + std::to_string(::getpid()) + "-" +
                                                        std::to_string(counter++) + "-" + std::to_string(entropy()));
      if (std::filesystem::create_directory(path_)) break;
    }
  }
  temp_dir(const temp_dir&) = delete;
  temp_dir& operator=(const temp_dir&) = delete;
  ~temp_dir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }

  const std::filesystem::path& path() const noexcept { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

  /// Names of everything in the directory, sorted.
  std::vector<std::string> entries() const {
    std::vector<std::string> names;
    for (const auto& e : std::filesystem::directory_iterator(path_)) names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }

 private:
  std::filesystem::path path_;
};

inline std::vector<std::byte> read_file_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<char> chars((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::byte> bytes(chars.size());
  std::transform(chars.begin(), chars.end(), bytes.begin(), [](char c) { return static_cast<std::byte>(c); });
  return bytes;
}

inline void write_file_bytes(const std::filesystem::path& path, const std::vector<std::byte>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

/// The kinds of the library's one list (blume::filter_types) for which Keep<F>::value holds, as a
/// ::testing::Types list for TYPED_TEST_SUITE: a kind added to the list joins the typed tests it qualifies for.
template <template <class> class Keep, class List, class... Kept>
struct kinds_where;
template <template <class> class Keep, class... Kept>
struct kinds_where<Keep, blume::kind_list<>, Kept...> {
  using type = ::testing::Types<Kept...>;
};
template <template <class> class Keep, class F, class... Rest, class... Kept>
struct kinds_where<Keep, blume::kind_list<F, Rest...>, Kept...>
    : std::conditional_t<Keep<F>::value, kinds_where<Keep, blume::kind_list<Rest...>, Kept..., F>,
                         kinds_where<Keep, blume::kind_list<Rest...>, Kept...>> {};

template <class F>
struct is_bit_array : std::bool_constant<blume::bit_array_filter<F>> {};

/// The bit-array kinds (built on basic_bloom_filter), for TYPED_TEST_SUITE.
using filter_types = kinds_where<is_bit_array, blume::filter_types>::type;

/// Names typed tests after the kind ("bloom", "partitioned", "blocked", "split_block").
struct kind_names {
  template <class F>
  static std::string GetName(int) {
    std::string name(blume::kind_name(F::kind));
    std::replace(name.begin(), name.end(), '-', '_');
    return name;
  }
};

/// Small valid geometries per kind, with a second bit count and (where the kind allows one) a second hash
/// count that are also valid, for tests of incompatible filters.
template <class F>
struct small_geometry;

template <>
struct small_geometry<blume::bloom_filter<>> {
  static constexpr std::uint64_t bits = 12'000;
  static constexpr std::uint32_t hashes = 6;
  static constexpr std::uint64_t other_bits = 12'600;
  static constexpr std::uint32_t other_hashes = 4;
};
template <>
struct small_geometry<blume::partitioned_bloom_filter<>> {
  static constexpr std::uint64_t bits = 12'000;  // a multiple of 6 and of 4
  static constexpr std::uint32_t hashes = 6;
  static constexpr std::uint64_t other_bits = 12'600;
  static constexpr std::uint32_t other_hashes = 4;
};
template <>
struct small_geometry<blume::blocked_bloom_filter<>> {
  static constexpr std::uint64_t bits = 512 * 24;
  static constexpr std::uint32_t hashes = 6;
  static constexpr std::uint64_t other_bits = 512 * 25;
  static constexpr std::uint32_t other_hashes = 4;
};
template <>
struct small_geometry<blume::split_block_bloom_filter<>> {
  static constexpr std::uint64_t bits = 256 * 48;
  static constexpr std::uint32_t hashes = 8;
  static constexpr std::uint64_t other_bits = 256 * 50;  // k is fixed at 8: no other hash count
};

template <>
struct small_geometry<blume::counting_bloom_filter<>> {
  static constexpr std::uint64_t bits = 12'000;  // counters
  static constexpr std::uint32_t hashes = 6;
  static constexpr std::uint64_t other_bits = 12'600;
  static constexpr std::uint32_t other_hashes = 4;
};
template <>
struct small_geometry<blume::variable_increment_counting_filter<>> {
  static constexpr std::uint64_t bits = 12'000;  // counters
  static constexpr std::uint32_t hashes = 6;
  static constexpr std::uint64_t other_bits = 12'600;
  static constexpr std::uint32_t other_hashes = 4;
};

template <class F>
F small_filter(std::uint64_t seed = blume::xxh3_hasher::default_seed) {
  return F::with_geometry(small_geometry<F>::bits, small_geometry<F>::hashes, seed);
}

/// |measured − predicted| allowed for a false-positive rate measured with `probes` independent lookups:
/// five binomial standard deviations plus a relative slack for the model.
inline double fpr_tolerance(double predicted, double probes, double model_slack = 0.03) {
  return 5.0 * std::sqrt(predicted * (1.0 - predicted) / probes) + model_slack * predicted;
}

/// Half the width of the 99.9% two-sided binomial interval of a rate p measured over `trials` trials
/// (3.29 standard deviations, normal approximation).
inline double binomial_999_slack(double p, double trials) { return 3.29 * std::sqrt(p * (1.0 - p) / trials); }

/// Whether `hits` of `trials` independent trials agrees with a model rate `predicted`: within the 99.9%
/// two-sided binomial interval (3.29 standard deviations, normal approximation) widened by a relative
/// `model_slack` for the model's own approximations.
inline ::testing::AssertionResult within_binomial_999(double hits, double trials, double predicted,
                                                      double model_slack = 0.03) {
  const double expected = predicted * trials;
  const double allowed = trials * binomial_999_slack(predicted, trials) + model_slack * expected + 1.0;
  if (std::abs(hits - expected) <= allowed) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << hits << " of " << trials << " (" << hits / trials << ") against the model's "
                                       << predicted << " (" << expected << " ± " << allowed << ")";
}

}  // namespace blume_test

namespace blume_test {

/// The what() of the exception of type E that fn throws; records a failure (and returns a placeholder)
/// when fn throws nothing or an exception of another type.
template <class E, class Fn>
std::string message_of(Fn&& fn) {
  try {
    std::forward<Fn>(fn)();
  } catch (const E& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "threw an exception of the wrong type: " << e.what();
    return "<wrong exception type>";
  }
  ADD_FAILURE() << "threw nothing";
  return "<no exception>";
}

/// Whether `message` contains `text`.
inline ::testing::AssertionResult mentions(const std::string& message, std::string_view text) {
  if (message.find(text) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "message \"" << message << "\" does not mention \"" << text << "\"";
}

/// Whether `message` contains a number that reads back as `value` (to 6 significant digits; NaN matches
/// "nan"). Accepts any spelling: 1.5, 1.500000, 1e-09, 0.000000001.
inline ::testing::AssertionResult mentions_number(const std::string& message, double value) {
  const char* text = message.c_str();
  for (std::size_t i = 0; i < message.size(); ++i) {
    if (i > 0 && (std::isalnum(static_cast<unsigned char>(text[i - 1])) || text[i - 1] == '.' || text[i - 1] == '-' ||
                  text[i - 1] == '+'))
      continue;  // only read numbers from their first character
    char* end = nullptr;
    const double parsed = std::strtod(text + i, &end);
    if (end == text + i) continue;
    if ((std::isnan(value) && std::isnan(parsed)) || (parsed == value) ||
        std::fabs(parsed - value) <= 1e-6 * std::fabs(value))
      return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure() << "message \"" << message << "\" does not show the value " << value;
}

}  // namespace blume_test

// ---- user-defined key types ----------------------------------------------------------------------------

// A user type hashed through the ADL customisation point: only `name` identifies it.
namespace app {
struct user {
  std::string name;
  int visits = 0;  // not part of the identity
};
inline std::string_view blume_key_bytes(const user& u) { return u.name; }
}  // namespace app

// A user type hashed through a key_hash specialisation.
namespace geo {
struct point {
  std::int32_t x = 0;
  std::int32_t y = 0;
};
}  // namespace geo

template <>
struct blume::key_hash<geo::point> {
  template <blume::hasher H>
  blume::digest operator()(const H& h, const geo::point& p) const {
    const std::int32_t xy[2] = {p.x, p.y};
    return h(xy, sizeof xy);
  }
};
