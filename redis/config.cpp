// SPDX-License-Identifier: Apache-2.0
#include "config.hpp"

#include <algorithm>
#include <charconv>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <string>
#include <string_view>

#include "surface.hpp"

namespace blume::redis {

module_config& config() noexcept {
  static module_config c;
  return c;
}

namespace {

/// The shortest text that reads back as the same double.
std::string shortest(double v) {
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

RedisModuleString* message(const std::string& s) { return api::CreateString(nullptr, s.data(), s.size()); }

/// A numeric setting with bounds that may depend on other settings (RedisBloom ties cf-bucket-size and
/// cf-initial-size together). Bounds are checked here, not by the server, so the refusal carries
/// RedisBloom's wording.
struct numeric_setting {
  const char* name;
  long long module_config::*field;
  long long (*min)();
  long long (*max)();
  long long fallback;
};

long long one() { return 1; }
long long zero() { return 0; }
long long max_capacity() { return config().max_capacity; }
long long max_expansion() { return 32768; }
long long max_iterations() { return 65535; }
long long max_expansions() { return 65536; }
long long max_bucket_size() { return std::min<long long>(config().cf_initial_size / 2, 255); }
long long min_cf_initial_size() { return 2 * config().cf_bucket_size; }
long long max_capacity_ceiling() { return max_capacity_limit; }
long long min_filter_memory() { return min_max_filter_memory; }
long long max_filter_memory() { return max_max_filter_memory; }

const numeric_setting settings[] = {
    {"bf-initial-size", &module_config::bf_initial_size, one, max_capacity, 100},
    {"bf-expansion-factor", &module_config::bf_expansion_factor, zero, max_expansion, 2},
    {"cf-bucket-size", &module_config::cf_bucket_size, one, max_bucket_size, 2},
    {"cf-initial-size", &module_config::cf_initial_size, min_cf_initial_size, max_capacity, 1024},
    {"cf-max-iterations", &module_config::cf_max_iterations, one, max_iterations, 20},
    {"cf-expansion-factor", &module_config::cf_expansion_factor, zero, max_expansion, 1},
    {"cf-max-expansions", &module_config::cf_max_expansions, one, max_expansions, 32},
    {"max-capacity", &module_config::max_capacity, one, max_capacity_ceiling, 1LL << 30},
    {"max-filter-memory", &module_config::max_filter_memory, min_filter_memory, max_filter_memory,
     default_max_filter_memory},
};

std::string range_error(const numeric_setting& s) {
  return "Value for `" + std::string(s.name) + "` must be in the range [" + std::to_string(s.min()) + ", " +
         std::to_string(s.max()) + "]";
}

bool set_numeric(const numeric_setting& s, long long value, std::string* error) {
  if (value < s.min() || value > s.max()) {
    *error = range_error(s);
    return false;
  }
  config().*s.field = value;
  return true;
}

long long get_numeric(const char*, void* privdata) {
  return config().*static_cast<const numeric_setting*>(privdata)->field;
}
int set_numeric_callback(const char*, long long value, void* privdata, RedisModuleString** err) {
  std::string error;
  if (set_numeric(*static_cast<const numeric_setting*>(privdata), value, &error)) return api::ok;
  *err = message(error);
  return api::err;
}

/// bf-error-rate: a double, so a string setting; (0, 1), and above 0.25 stored as 0.25.
bool set_error_rate(std::string_view text, std::string* error) {
  const std::string s(text);
  char* end = nullptr;
  const double v = s.empty() ? NAN : std::strtod(s.c_str(), &end);
  if (s.empty() || end != s.c_str() + s.size() || std::isnan(v)) {
    *error = "Invalid value for `bf-error-rate`";
    return false;
  }
  if (!(v > 0 && v < 1)) {
    *error = "Value for `bf-error-rate` must be in the range (0.000000, 1.000000)";
    return false;
  }
  config().bf_error_rate = std::min(v, max_error_rate);
  return true;
}

RedisModuleString* error_rate_text = nullptr;  // what CONFIG GET shows; owned here

RedisModuleString* get_error_rate(const char*, void*) {
  if (error_rate_text != nullptr) api::FreeString(nullptr, error_rate_text);
  error_rate_text = message(shortest(config().bf_error_rate));
  return error_rate_text;
}
int set_error_rate_callback(const char*, RedisModuleString* value, void*, RedisModuleString** err) {
  std::string error;
  if (set_error_rate(text(value), &error)) return api::ok;
  *err = message(error);
  return api::err;
}

}  // namespace

bool register_configs(RedisModuleCtx* ctx) {
  if (api::RegisterStringConfig(ctx, "bf-error-rate", "0.01", api::config_default, get_error_rate,
                                set_error_rate_callback, nullptr, nullptr) != api::ok)
    return false;
  for (const numeric_setting& s : settings) {
    if (api::RegisterNumericConfig(ctx, s.name, s.fallback, api::config_default, LLONG_MIN, LLONG_MAX, get_numeric,
                                   set_numeric_callback, nullptr, const_cast<numeric_setting*>(&s)) != api::ok)
      return false;
  }
  return true;
}

bool apply_load_arguments(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  if (argc % 2 != 0) {
    api::Log(ctx, api::log_warning, "Invalid number of arguments passed");
    return false;
  }
  for (int i = 0; i < argc; i += 2) {
    const RedisModuleString* name = argv[i];
    const RedisModuleString* value = argv[i + 1];
    std::string error;
    bool done = false;
    if (is_word(name, "ERROR_RATE") || is_word(name, "bf-error-rate")) {
      done = set_error_rate(text(value), &error);
    } else {
      const numeric_setting* target = nullptr;
      if (is_word(name, "INITIAL_SIZE") || is_word(name, "bf-initial-size")) target = &settings[0];
      if (is_word(name, "CF_MAX_EXPANSIONS") || is_word(name, "cf-max-expansions")) target = &settings[6];
      if (is_word(name, "max-capacity")) target = &settings[7];
      if (is_word(name, "max-filter-memory")) target = &settings[8];
      if (target == nullptr) {
        api::Log(ctx, api::log_warning, "Unrecognized option: %.*s", static_cast<int>(text(name).size()),
                 text(name).data());
        return false;
      }
      const auto v = to_integer(value);
      if (!v) {
        error = "Invalid value for `" + std::string(target->name) + "`";
      } else {
        done = set_numeric(*target, *v, &error);
      }
    }
    if (!done) {
      api::Log(ctx, api::log_warning, "%s", error.c_str());
      return false;
    }
  }
  return true;
}

}  // namespace blume::redis
