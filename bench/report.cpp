// SPDX-License-Identifier: Apache-2.0
#include "report.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string_view>
#include <tuple>

#include "blume/kinds.hpp"
#include "build_info.hpp"
#include "number_text.hpp"
#include "our_kinds.hpp"

namespace blume::bench {

namespace {

// ---- number formatting -----------------------------------------------------------------------------------

std::string printf_string(const char* format, double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, format, value);
  return buffer;
}

/// Three significant figures for times: 7.43, 12.3, 123.
std::string format_ns(double ns) {
  if (std::isnan(ns)) return "n/a";
  return printf_string(ns < 10 ? "%.2f" : ns < 100 ? "%.1f" : "%.0f", ns);
}

std::string format_ratio(double ratio) { return printf_string(ratio < 10 ? "%.2f×" : "%.1f×", ratio); }

std::string format_mib(std::uint64_t bytes) {
  return printf_string("%.1f", static_cast<double>(bytes) / (1024.0 * 1024.0));
}

std::string format_percent(double fraction) { return printf_string("%.4f%%", fraction * 100); }

std::string format_count(std::uint64_t n) { return text::with_commas(n); }

/// "10M" for round millions, else the count with separators.
std::string format_items(std::uint64_t n) {
  if (n >= 1'000'000 && n % 1'000'000 == 0) return std::to_string(n / 1'000'000) + "M";
  return format_count(n);
}

/// Terminal columns a UTF-8 string takes (every code point counts as one: enough for × and −).
std::size_t display_width(std::string_view s) {
  return static_cast<std::size_t>(std::count_if(s.begin(), s.end(),
                                                [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

std::string pad(std::string_view s, std::size_t width, bool left) {
  const std::string fill(width - std::min(width, display_width(s)), ' ');
  return left ? std::string(s) + fill : fill + std::string(s);
}

// ---- reading the machine's description -------------------------------------------------------------------

std::string read_line(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

std::string describe_cpu() {
  std::ifstream in("/proc/cpuinfo");
  std::string line, model = "unknown CPU";
  int processors = 0;
  while (std::getline(in, line)) {
    if (line.starts_with("processor")) ++processors;
    if (line.starts_with("model name") && processors <= 1) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) model = line.substr(line.find_first_not_of(" \t", colon + 1));
    }
  }
  return model + ", " + std::to_string(processors) + " logical CPUs";
}

std::string describe_caches() {
  std::string out;
  for (int i = 0;; ++i) {
    const std::filesystem::path dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(i);
    if (!std::filesystem::exists(dir)) break;
    const std::string type = read_line(dir / "type");
    std::string name = "L";
    name += read_line(dir / "level");  // (not "L" + ...: GCC 12 warns falsely, -Wrestrict)
    if (type == "Data") name += "d";
    if (type == "Instruction") name += "i";
    if (!out.empty()) out += ", ";
    out += name + " " + read_line(dir / "size");
  }
  return out.empty() ? "cache sizes unknown" : "caches " + out;
}

std::string describe_memory() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  double kib = 0;
  while (in >> key) {
    if (key == "MemTotal:") {
      in >> kib;
      break;
    }
    in.ignore(std::numeric_limits<std::streamsize>::max(), '\n');
  }
  return printf_string("%.1f GiB RAM", kib / (1024.0 * 1024.0));
}

std::string describe_huge_pages() {
  const std::string line = read_line("/sys/kernel/mm/transparent_hugepage/enabled");
  const auto open = line.find('['), close = line.find(']');
  if (open == std::string::npos || close == std::string::npos) return "transparent huge pages: unknown";
  return "transparent huge pages: " + line.substr(open + 1, close - open - 1);
}

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%d %H:%M UTC", &utc);
  return buffer;
}

constexpr std::string_view compiler_name =
#if defined(__clang__)
    "";  // clang's __VERSION__ names itself
#else
    "GCC ";
#endif

// ---- targets ---------------------------------------------------------------------------------------------

// The main targets, for n = 100M 64-bit keys and n = 10M e-mail-like keys at 1%.
constexpr double classic_mib_limit = 114.3;
constexpr double fastest_bits_per_key_limit = 10.6;
constexpr double fastest_fpr_limit = 0.01;
constexpr double batched_negative_ns_limit = 8;
constexpr double single_negative_ns_limit = 14;
constexpr double libbloom_speedup_floor = 9;
constexpr double absl_speedup_floor = 2.4;
constexpr double absl_memory_divisor = 9;
constexpr double email_batched_ns_limit = 12;

const config_result* find_config(const std::vector<config_result>& configs, std::uint64_t items,
                                 std::string_view keys) {
  for (const auto& c : configs)
    if (c.items == items && c.key_short_name == keys) return &c;
  return nullptr;
}

/// Our fastest kind (by batched negative lookups) among those within the memory and FPR limits.
const contestant_result* fastest_qualifying_kind(const config_result& config) {
  const contestant_result* best = nullptr;
  for (const auto& row : config.rows) {
    if (!row.ours || row.bits_per_key > fastest_bits_per_key_limit || row.measured_fpr > fastest_fpr_limit) continue;
    if (!row.ns[negative_batched].applicable()) continue;
    if (best == nullptr || row.ns[negative_batched].median < best->ns[negative_batched].median) best = &row;
  }
  return best;
}

target_check not_run(std::string target, std::string why) { return {std::move(target), std::move(why), std::nullopt}; }

}  // namespace

// ---- tables ----------------------------------------------------------------------------------------------

std::string table::to_text() const {
  std::vector<std::size_t> widths(header.size(), 0);
  for (std::size_t i = 0; i < header.size(); ++i) widths[i] = display_width(header[i]);
  for (const auto& row : rows)
    for (std::size_t i = 0; i < row.size() && i < widths.size(); ++i)
      widths[i] = std::max(widths[i], display_width(row[i]));
  auto line = [&](const std::vector<std::string>& cells) {
    std::string out;
    for (std::size_t i = 0; i < widths.size(); ++i) {
      out += (i == 0 ? "" : "  ") + pad(i < cells.size() ? cells[i] : "", widths[i], i < left_aligned_columns);
    }
    out.erase(out.find_last_not_of(' ') + 1);
    return out + "\n";
  };
  std::string out = line(header);
  std::size_t total = 0;
  for (std::size_t w : widths) total += w + 2;
  out += std::string(total - 2, '-') + "\n";
  for (const auto& row : rows) out += line(row);
  return out;
}

std::string table::to_markdown() const {
  auto line = [](const std::vector<std::string>& cells) {
    std::string out = "|";
    for (const auto& c : cells) out += " " + c + " |";
    return out + "\n";
  };
  std::string out = line(header) + "|";
  for (std::size_t i = 0; i < header.size(); ++i) out += i < left_aligned_columns ? " :--- |" : " ---: |";
  out += "\n";
  for (const auto& row : rows) out += line(row);
  return out;
}

std::string config_title(const config_result& c) {
  return "n = " + format_items(c.items) + ", " + std::string(c.key_description) +
         ", target FPR 1%: " + format_count(c.positive_probes) + " present and " + format_count(c.negative_probes) +
         " absent keys looked up in random order; median of " + std::to_string(c.reps) + " run" +
         (c.reps == 1 ? "" : "s");
}

namespace {
bool shows_erase(const config_result& config) {
  return std::any_of(config.rows.begin(), config.rows.end(),
                     [](const contestant_result& r) { return r.ns[erase_keys].applicable(); });
}
bool shows_false_negatives(const config_result& config) {
  return std::any_of(config.rows.begin(), config.rows.end(),
                     [](const contestant_result& r) { return r.false_negatives_by_design; });
}
}  // namespace

table medians_table(const config_result& config) {
  table t;
  const bool erase_column = shows_erase(config), fn_column = shows_false_negatives(config);
  t.header = {"contestant",           "MiB (÷absl)",         "bits/key",
              "insert ns (÷absl)",    "insert_many ns",      "+ lookup ns (÷absl)",
              "+ batched ns (÷absl)", "− lookup ns (÷absl)", "− batched ns (÷absl)"};
  if (erase_column) t.header.push_back("erase ns (÷absl)");
  t.header.push_back("FPR measured");
  t.header.push_back("FPR predicted");
  if (fn_column) t.header.push_back("FN measured");
  const contestant_result* absl = config.find(names::absl_set);
  auto with_ratio = [&](double value, double baseline, std::string text) {
    if (absl == nullptr || std::isnan(value) || std::isnan(baseline) || baseline == 0) return text;
    return text + " (" + format_ratio(value / baseline) + ")";
  };
  for (const auto& r : config.rows) {
    std::vector<std::string> row;
    row.push_back(r.name + (r.problems.empty() ? "" : " (!)"));
    row.push_back(with_ratio(static_cast<double>(r.bytes), absl ? static_cast<double>(absl->bytes) : not_applicable,
                             format_mib(r.bytes)));
    row.push_back(printf_string("%.2f", r.bits_per_key));
    std::vector<metric> shown = {insert, insert_bulk, positive, positive_batched, negative, negative_batched};
    if (erase_column) shown.push_back(erase_keys);
    for (metric m : shown) {
      const double v = r.ns[m].median;
      // Baselines have no batched call: their batched figure is their one-by-one loop, so compare with that.
      const double base = absl ? absl->ns[m == positive_batched   ? positive
                                          : m == negative_batched ? negative
                                                                  : m]
                                     .median
                               : not_applicable;
      row.push_back(m == insert_bulk ? format_ns(v) : with_ratio(v, base, format_ns(v)));
    }
    row.push_back(format_percent(r.measured_fpr));
    row.push_back(r.predicted_fpr == 0 ? "0 (exact)" : format_percent(r.predicted_fpr));
    if (fn_column) row.push_back(r.false_negatives_by_design ? format_percent(r.false_negative_rate) : "—");
    t.rows.push_back(std::move(row));
  }
  return t;
}

table spread_table(const config_result& config) {
  table t;
  const bool erase_column = shows_erase(config);
  t.header = {
      "contestant (min / median / max ns)", "insert", "insert_many", "+ lookup", "+ batched", "− lookup", "− batched"};
  std::vector<metric> shown = {insert, insert_bulk, positive, positive_batched, negative, negative_batched};
  if (erase_column) {
    t.header.push_back("erase");
    shown.push_back(erase_keys);
  }
  for (const auto& r : config.rows) {
    std::vector<std::string> row{r.name};
    for (metric m : shown) {
      const spread& s = r.ns[m];
      row.push_back(s.applicable() ? format_ns(s.min) + " / " + format_ns(s.median) + " / " + format_ns(s.max) : "n/a");
    }
    t.rows.push_back(std::move(row));
  }
  return t;
}

table limit_table(const config_result& config) {
  table t;
  t.header = {"kind", "− lookup ns", "limit ns", "÷ limit", "− batched ns", "limit batched ns", "÷ limit batched"};
  for (const auto& r : config.rows) {
    if (!r.ours || !r.ns[limit_single].applicable()) continue;
    const double single = r.ns[negative].median, limit = r.ns[limit_single].median;
    const double batched = r.ns[negative_batched].median, limit_b = r.ns[limit_batched].median;
    t.rows.push_back({r.name, format_ns(single), format_ns(limit), format_ratio(single / limit), format_ns(batched),
                      format_ns(limit_b), format_ratio(batched / limit_b)});
  }
  return t;
}

std::string details_text(const config_result& config) {
  std::string out;
  for (const auto& r : config.rows)
    if (!r.details.empty()) out += r.name + ": " + r.details + "\n";
  return out;
}

std::vector<std::string> wide_spreads(const config_result& config) {
  constexpr std::array<std::string_view, metric_count> metric_names = {
      "insert", "insert_many", "+ lookup", "+ batched", "− lookup", "− batched", "erase", "limit", "limit batched"};
  std::vector<std::string> out;
  for (const auto& r : config.rows)
    for (std::size_t m = 0; m < metric_count; ++m)
      if (const spread& s = r.ns[m]; s.applicable() && s.max > 1.25 * s.min)
        out.push_back(r.name + " " + std::string(metric_names[m]) + ": " + format_ns(s.min) + " to " +
                      format_ns(s.max) + " ns");
  return out;
}

// ---- targets ---------------------------------------------------------------------------------------------

std::vector<target_check> evaluate_targets(const std::vector<config_result>& configs) {
  std::vector<target_check> checks;
  const std::string big = "n = 100M, 64-bit keys: ";
  const std::string bloom_name = label_of(bloom_filter<>::kind);
  const config_result* c100 = find_config(configs, 100'000'000, "int");
  if (c100 == nullptr) {
    const std::string why = "not run (needs --items 100M --keys int)";
    checks.push_back(not_run(big + bloom_name + " in ≤ 114.3 MiB", why));
    checks.push_back(not_run(big + "fastest kind at ≤ 10.6 bits/key, measured FPR ≤ 1%", why));
  } else {
    if (const auto* bloom = c100->find(bloom_filter<>::kind)) {
      const double mib = static_cast<double>(bloom->bytes) / (1024.0 * 1024.0);
      checks.push_back({big + bloom_name + " in ≤ 114.3 MiB", printf_string("%.2f MiB", mib),
                        mib <= classic_mib_limit});
    } else {
      checks.push_back(not_run(big + bloom_name + " in ≤ 114.3 MiB", bloom_name + " not run"));
    }
    const contestant_result* fast = fastest_qualifying_kind(*c100);
    const std::string who = big + "fastest kind";
    if (fast == nullptr) {
      checks.push_back({who + " at ≤ 10.6 bits/key, measured FPR ≤ 1%", "no kind run qualifies", false});
    } else {
      const double neg_batched = fast->ns[negative_batched].median;
      const double neg_single = fast->ns[negative].median;
      std::string excluded;
      for (const auto& row : c100->rows)
        if (row.ours && &row != fast && row.ns[negative_batched].median < neg_batched)
          excluded += "; faster but excluded: " + row.name + " at " + printf_string("%.2f bits/key", row.bits_per_key) +
                      ", FPR " + format_percent(row.measured_fpr);
      checks.push_back({who + " at ≤ 10.6 bits/key, measured FPR ≤ 1%",
                        fast->name + ": " + printf_string("%.2f bits/key", fast->bits_per_key) + ", FPR " +
                            format_percent(fast->measured_fpr) + excluded,
                        true});
      checks.push_back({who + ": batched negative lookups ≤ 8 ns/key", format_ns(neg_batched) + " ns/key",
                        neg_batched <= batched_negative_ns_limit});
      checks.push_back({who + ": single negative lookups ≤ 14 ns/key", format_ns(neg_single) + " ns/key",
                        neg_single <= single_negative_ns_limit});
      if (const auto* lb = c100->find(names::libbloom)) {
        const double speedup = lb->ns[negative].median / neg_batched;
        checks.push_back({who + ": ≥ 9× faster than libbloom (negative lookups, batched vs its loop)",
                          format_ratio(speedup) + " (" + format_ns(lb->ns[negative].median) + " vs " +
                              format_ns(neg_batched) + " ns; one-by-one vs its loop: " +
                              format_ratio(lb->ns[negative].median / neg_single) + ")",
                          speedup >= libbloom_speedup_floor});
      } else {
        checks.push_back(not_run(who + ": ≥ 9× faster than libbloom", "libbloom not run"));
      }
      if (const auto* absl = c100->find(names::absl_set)) {
        const double speedup = absl->ns[negative].median / neg_batched;
        const double memory_share = static_cast<double>(fast->bytes) / static_cast<double>(absl->bytes);
        checks.push_back({who + ": ≥ 2.4× faster than absl::flat_hash_set (negative lookups) at ≤ 1/9 of its memory",
                          format_ratio(speedup) + " (" + format_ns(absl->ns[negative].median) + " vs " +
                              format_ns(neg_batched) +
                              " ns; one-by-one: " + format_ratio(absl->ns[negative].median / neg_single) + ") at " +
                              printf_string("1/%.1f", 1.0 / memory_share) + " of its memory",
                          speedup >= absl_speedup_floor && memory_share <= 1.0 / absl_memory_divisor});
      } else {
        checks.push_back(not_run(who + ": ≥ 2.4× faster than absl::flat_hash_set", "absl::flat_hash_set not run"));
      }
    }
  }

  const std::string email = "n = 10M, e-mail-like keys: fastest kind's batched lookups ≤ 12 ns/key";
  const config_result* c10 = find_config(configs, 10'000'000, "email");
  if (c10 == nullptr) {
    checks.push_back(not_run(email, "not run (needs --items 10M --keys email)"));
  } else if (const contestant_result* fast = fastest_qualifying_kind(*c10); fast == nullptr) {
    checks.push_back({email, "no kind at ≤ 10.6 bits/key with FPR ≤ 1%", false});
  } else {
    const double pos = fast->ns[positive_batched].median, neg = fast->ns[negative_batched].median;
    checks.push_back({email, fast->name + ": present " + format_ns(pos) + ", absent " + format_ns(neg) + " ns/key",
                      pos <= email_batched_ns_limit && neg <= email_batched_ns_limit});
  }

  // Issue 33's targets for the blocked layout of the lattice kinds (spatial, compact), each beside the same
  // kind's classic row of the run: absent lookups one at a time at 10M, and the memory condition for making
  // blocked the default (its bits per key within 10% of the classic layout's at the same target).
  for (const auto& c : configs) {
    if (c.items != 10'000'000) continue;
    const std::string at = "n = 10M, " + std::string(c.key_short_name == "int" ? "64-bit" : "e-mail-like") + " keys: ";
    for (const auto& blocked : c.rows) {
      if (!blocked.ours || !blocked.name.ends_with(" (blocked)")) continue;
      const contestant_result* classic = c.find(blocked.kind);
      const double ns = blocked.ns[negative].median;
      checks.push_back({at + blocked.name + " one-by-one absent lookups ≤ 25 ns/key",
                        format_ns(ns) + " ns/key" +
                            (classic != nullptr
                                 ? " (" + classic->name + ": " + format_ns(classic->ns[negative].median) + ", " +
                                       format_ratio(classic->ns[negative].median / ns) + " faster)"
                                 : std::string()),
                        ns <= 25});
      if (classic != nullptr) {
        const double more = blocked.bits_per_key / classic->bits_per_key;
        checks.push_back({at + blocked.name + " bits/key ≤ 1.1× " + classic->name + "'s (to be the default)",
                          format_ratio(more) + printf_string(" (%.2f vs ", blocked.bits_per_key) +
                              printf_string("%.2f bits/key, FPR ", classic->bits_per_key) +
                              format_percent(blocked.measured_fpr) + " vs " + format_percent(classic->measured_fpr) +
                              ")",
                          more <= 1.1});
      }
    }
  }
  return checks;
}

table kinds_against_targets_table(const std::vector<config_result>& configs) {
  table t;
  const config_result* c = find_config(configs, 100'000'000, "int");
  if (c == nullptr) return t;
  const contestant_result* lb = c->find(names::libbloom);
  const contestant_result* absl = c->find(names::absl_set);
  t.header = {"kind (n = 100M, 64-bit keys)",
              "bits/key ≤ 10.6",
              "FPR ≤ 1%",
              "− batched ≤ 8 ns",
              "− single ≤ 14 ns",
              "faster than libbloom ≥ 9×",
              "faster than absl ≥ 2.4×",
              "memory ≤ 1/9 absl"};
  auto mark = [](bool ok) { return ok ? " ✓" : " ✗"; };
  for (const auto& r : c->rows) {
    if (!r.ours) continue;
    const double batched = r.ns[negative_batched].median, single = r.ns[negative].median;
    std::vector<std::string> row{r.name};
    row.push_back(printf_string("%.2f", r.bits_per_key) + mark(r.bits_per_key <= fastest_bits_per_key_limit));
    row.push_back(format_percent(r.measured_fpr) + mark(r.measured_fpr <= fastest_fpr_limit));
    row.push_back(format_ns(batched) + mark(batched <= batched_negative_ns_limit));
    row.push_back(format_ns(single) + mark(single <= single_negative_ns_limit));
    if (lb != nullptr) {
      const double speedup = lb->ns[negative].median / batched;
      row.push_back(format_ratio(speedup) + mark(speedup >= libbloom_speedup_floor));
    } else {
      row.push_back("not run");
    }
    if (absl != nullptr) {
      const double speedup = absl->ns[negative].median / batched;
      const double share = static_cast<double>(r.bytes) / static_cast<double>(absl->bytes);
      row.push_back(format_ratio(speedup) + mark(speedup >= absl_speedup_floor));
      row.push_back(printf_string("1/%.1f", 1.0 / share) + mark(share <= 1.0 / absl_memory_divisor));
    } else {
      row.push_back("not run");
      row.push_back("not run");
    }
    t.rows.push_back(std::move(row));
  }
  return t;
}

table targets_table(const std::vector<target_check>& checks) {
  table t;
  t.header = {"target", "measured (medians)", "result"};
  t.left_aligned_columns = 3;
  for (const auto& c : checks)
    t.rows.push_back({c.target, c.measured, !c.passed ? "not run" : *c.passed ? "PASS" : "MISS"});
  return t;
}

bool any_evaluated(const std::vector<target_check>& checks) {
  return std::any_of(checks.begin(), checks.end(), [](const target_check& c) { return c.passed.has_value(); });
}

// ---- family targets --------------------------------------------------------------------------------------

namespace {
constexpr double counting_memory_limit = 4.1;  // × bloom's bytes
constexpr double cuckoo_bits_limit = 13.5;     // bits/key with 12-bit fingerprints, at its load
constexpr double cuckoo_fpr_limit = 0.002;     // measured
constexpr double cuckoo_speed_limit = 2.0;     // × our fastest blocked kind's negative lookups
constexpr double quotient_bits_limit = 1.2;    // × cuckoo's bits/key, at equal FPR

/// Our fastest blocked kind (blocked or split-block) for metric m, or nullptr if neither ran.
const contestant_result* fastest_blocked(const config_result& c, metric m) {
  const contestant_result* best = nullptr;
  for (filter_kind kind : {blocked_bloom_filter<>::kind, split_block_bloom_filter<>::kind})
    if (const auto* r = c.find(kind);
        r != nullptr && r->ns[m].applicable() && (best == nullptr || r->ns[m].median < best->ns[m].median))
      best = r;
  return best;
}

/// Measured FPR, or the predicted one when no absent key hit (a rate of 0 has no logarithm).
double fpr_for_scaling(const contestant_result& r, bool& used_predicted) {
  if (r.measured_fpr > 0) return r.measured_fpr;
  used_predicted = true;
  return r.predicted_fpr;
}
}  // namespace

std::vector<target_check> evaluate_family_targets(const std::vector<config_result>& configs) {
  std::vector<target_check> checks;
  for (const auto& c : configs) {
    const std::string at =
        "n = " + format_items(c.items) + (c.key_short_name == "int" ? ", 64-bit keys: " : ", e-mail-like keys: ");
    const auto* bloom = c.find(bloom_filter<>::kind);
    const auto* counting = c.find(counting_bloom_filter<>::kind);
    const auto* cuckoo = c.find(cuckoo_filter<>::kind);
    const auto* quotient = c.find(quotient_filter<>::kind);
    const std::string bloom_name = label_of(bloom_filter<>::kind);
    const std::string counting_name = label_of(counting_bloom_filter<>::kind);
    const std::string cuckoo_name = label_of(cuckoo_filter<>::kind);
    const std::string quotient_name = label_of(quotient_filter<>::kind);

    const std::string t1 = at + counting_name + " ≤ 4.1× " + bloom_name + "'s memory";
    if (bloom == nullptr || counting == nullptr) {
      checks.push_back(not_run(t1, "needs bloom and counting in --kinds"));
    } else {
      const double ratio = static_cast<double>(counting->bytes) / static_cast<double>(bloom->bytes);
      checks.push_back({t1,
                        format_ratio(ratio) + " (" + format_mib(counting->bytes) + " vs " + format_mib(bloom->bytes) +
                            " MiB; " + printf_string("%.2f", counting->bits_per_key) + " vs " +
                            printf_string("%.2f", bloom->bits_per_key) + " bits/key)",
                        ratio <= counting_memory_limit});
    }

    const std::string t2 =
        at + cuckoo_name + " with 12-bit fingerprints ≤ 13.5 bits/key at its load, measured FPR ≤ 0.2%";
    if (cuckoo == nullptr) {
      checks.push_back(not_run(t2, "needs cuckoo in --kinds"));
    } else {
      const bool ok = cuckoo->fingerprint_bits == 12 && cuckoo->bits_per_key <= cuckoo_bits_limit &&
                      cuckoo->measured_fpr <= cuckoo_fpr_limit;
      checks.push_back({t2,
                        std::to_string(cuckoo->fingerprint_bits) + "-bit fingerprints at load " +
                            printf_string("%.1f%%", cuckoo->load_factor * 100) + ": " +
                            printf_string("%.2f bits/key", cuckoo->bits_per_key) + ", FPR " +
                            format_percent(cuckoo->measured_fpr) + " (predicted " +
                            format_percent(cuckoo->predicted_fpr) + ")",
                        ok});
    }

    for (const auto& [m, how] :
         {std::pair{negative, "one-by-one contains()"}, std::pair{negative_batched, "batched count_contained()"}}) {
      const std::string t3 = at + cuckoo_name + " negative lookups ≤ 2× our fastest blocked filter's, " + how;
      const contestant_result* fast = fastest_blocked(c, m);
      if (cuckoo == nullptr || fast == nullptr) {
        checks.push_back(not_run(t3, "needs cuckoo and blocked or split-block in --kinds"));
        continue;
      }
      const double ratio = cuckoo->ns[m].median / fast->ns[m].median;
      checks.push_back({t3,
                        format_ratio(ratio) + " (" + format_ns(cuckoo->ns[m].median) + " vs " +
                            format_ns(fast->ns[m].median) + " ns/key, " + fast->name + ")",
                        ratio <= cuckoo_speed_limit});
    }

    const std::string t4 = at + quotient_name + " ≤ 1.2× " + cuckoo_name + "'s bits/key at equal FPR";
    if (cuckoo == nullptr || quotient == nullptr) {
      checks.push_back(not_run(t4, "needs cuckoo and quotient in --kinds"));
    } else {
      bool predicted = false;
      const double q_fpr = fpr_for_scaling(*quotient, predicted), c_fpr = fpr_for_scaling(*cuckoo, predicted);
      // One bit per key halves a fingerprint filter's rate (information-theoretic slope: log2(1/ε) bits).
      const double adjusted = quotient->bits_per_key + std::log2(q_fpr / c_fpr);
      const double ratio = adjusted / cuckoo->bits_per_key;
      checks.push_back({t4,
                        "quotient " + printf_string("%.2f bits/key", quotient->bits_per_key) + " at FPR " +
                            format_percent(q_fpr) + ", cuckoo " + printf_string("%.2f", cuckoo->bits_per_key) + " at " +
                            format_percent(c_fpr) + (predicted ? " (a predicted FPR used: none measured)" : "") +
                            "; quotient scaled to cuckoo's FPR: " + printf_string("%.2f", quotient->bits_per_key) +
                            " + log2(" + format_percent(q_fpr) + " / " + format_percent(c_fpr) + ") = " +
                            printf_string("%.2f bits/key", adjusted) + " = " + format_ratio(ratio) + " cuckoo's",
                        ratio <= quotient_bits_limit});
    }
  }
  return checks;
}

// ---- environment and Markdown ----------------------------------------------------------------------------

run_environment describe_environment(const std::string& command, const std::string& pinning) {
  run_environment env;
  env.command = command;
  env.date = utc_now();
  env.compiler = std::string(compiler_name) + __VERSION__ + ", flags `" + std::string(build_info::cxx_flags) +
                 "` (CMake build type " + std::string(build_info::build_type) + ")";
  env.machine = describe_cpu() + "; " + describe_caches() + "; " + describe_memory() + "; " + describe_huge_pages();
  env.pinning = pinning;
  return env;
}

// ---- static-filter targets ------------------------------------------------------------------------------

std::vector<target_check> evaluate_static_targets(const std::vector<config_result>& configs) {
  std::vector<target_check> checks;
  for (const auto& c : configs) {
    const std::string at =
        "n = " + format_items(c.items) + (c.key_short_name == "int" ? ", 64-bit keys: " : ", e-mail-like keys: ");
    for (const auto& [kind, limit] : {std::pair{fuse8_filter<>::kind, 9.1}, std::pair{xor8_filter<>::kind, 9.9},
                                      std::pair{golomb_coded_set<>::kind, 9.7}}) {
      const std::string t = at + label_of(kind) + " ≤ " + printf_string("%.1f", limit) + " bits/key";
      if (const auto* r = c.find(kind); r == nullptr) {
        checks.push_back(not_run(t, "needs it in --kinds"));
      } else {
        checks.push_back({t, printf_string("%.2f bits/key, FPR ", r->bits_per_key) + format_percent(r->measured_fpr),
                          r->bits_per_key <= limit});
      }
    }
    // Issue 33's targets for the Golomb-coded set, a lookup at a time and in bulk (present and absent keys).
    if (const auto* g = c.find(golomb_coded_set<>::kind); g != nullptr) {
      for (const auto& [one, many, how] :
           {std::tuple{positive, positive_batched, "present"}, std::tuple{negative, negative_batched, "absent"}}) {
        checks.push_back({at + label_of(golomb_coded_set<>::kind) + " one-by-one " + how + " lookups ≤ 300 ns/key",
                          format_ns(g->ns[one].median) + " ns/key", g->ns[one].median <= 300});
        checks.push_back({at + label_of(golomb_coded_set<>::kind) + " batched " + how + " lookups ≤ 60 ns/key",
                          format_ns(g->ns[many].median) + " ns/key", g->ns[many].median <= 60});
      }
    }
    const auto* fuse = c.find(fuse8_filter<>::kind);
    for (const auto& [m, how] :
         {std::pair{negative, "one-by-one contains()"}, std::pair{negative_batched, "batched count_contained()"}}) {
      const std::string t =
          at + label_of(fuse8_filter<>::kind) + " negative lookups ≤ 1.3× our fastest blocked filter's, " + how;
      const contestant_result* fast = fastest_blocked(c, m);
      if (fuse == nullptr || fast == nullptr) {
        checks.push_back(not_run(t, "needs fuse8 and blocked or split-block in --kinds"));
        continue;
      }
      const double ratio = fuse->ns[m].median / fast->ns[m].median;
      checks.push_back({t,
                        format_ratio(ratio) + " (" + format_ns(fuse->ns[m].median) + " vs " +
                            format_ns(fast->ns[m].median) + " ns/key, " + fast->name + ")",
                        ratio <= 1.3});
    }
    if (c.items >= 100'000'000) {
      for (const kind_facts& k : benchmarked_kinds()) {  // every static kind
        if (!k.is_static) continue;
        const std::string t = at + k.label + " build ≤ 100 ns/key";
        if (const auto* r = c.find(k.kind); r == nullptr) {
          checks.push_back(not_run(t, "needs it in --kinds"));
        } else {
          checks.push_back({t, format_ns(r->ns[insert].median) + " ns/key", r->ns[insert].median <= 100});
        }
      }
    }
  }
  return checks;
}

std::string markdown_report(const run_environment& env, const std::vector<config_result>& configs,
                            const std::vector<target_check>& checks, const std::vector<target_check>& family_checks,
                            bool standalone, const std::vector<target_check>& static_checks) {
  std::ostringstream md;
  if (standalone) {
    md << "# blume benchmarks\n\n"
          "Written by `blume_bench` (bench/): one run's tables (`--append` adds a run below). The project's report,\n"
          "docs/benchmarks.md, is assembled by `scripts/bench-report.sh`, which runs this program with `--section`.\n"
          "Build: `cmake --preset release && cmake --build --preset release --target blume_bench`.\n\n"
          "How to read the tables:\n\n"
          "- Times are nanoseconds per key, the median of the runs; the min / median / max table shows the spread.\n"
          "  In parentheses: the figure divided by absl::flat_hash_set's in the same run (below 1 = faster or\n"
          "  smaller). Each run rebuilds every contestant, one at a time, in the same order.\n"
          "- *insert*: construction plus one `insert()` per key, keys in index order. Our filters are built for\n"
          "  n keys at 0.01 as `blume::make_filter` builds their kind: the `(capacity, 0.01)` constructor (sized by\n"
          "  `blume::plan_for`), or the kind's `for_capacity(n, 0.01)` where it has one; the hash sets are\n"
          "  `reserve(n)`ed; libbloom is `bloom_init(n, 0.01)`. *insert_many*: the same through our bulk call.\n"
          "  Our rows are named by kind, as `--kinds` takes them; a rate after the name is the one that kind is\n"
          "  built at instead of 1%.\n"
          "- *+ lookup* / *− lookup*: present / absent keys, one `contains()` call per key, in random order.\n"
          "  *batched*: `count_contained()` over the same keys (hashes and prefetches 32 keys at a time); the\n"
          "  baselines have no batched call, so their ratio column compares our batched figure with their loop.\n"
          "- Memory (MiB, bits/key = bytes × 8 / n): `size_in_bytes()` for our filters (bit array + object);\n"
          "  libbloom's `bytes` field + its struct; for the hash sets the bytes requested through a counting\n"
          "  allocator + the object (malloc's per-chunk overhead is not counted, which flatters\n"
          "  std::unordered_set). With string keys the hash sets hold `std::string_view` into one arena of the\n"
          "  key bytes, and their memory includes the arena's bytes for the n present keys.\n"
          "- Our filters allocate arrays of 2 MiB or more 2 MiB-aligned with `MADV_HUGEPAGE`; the baselines use\n"
          "  malloc. String-key timings include hashing. FPR is measured on the absent keys, next to the\n"
          "  kind's model at n keys where the model takes a key count, else its model in the state after the n\n"
          "  inserts (libbloom: the classic formula at its m and k).\n"
          "- Keys: integers are splitmix64(i); strings are `name.<i in base 36>_<digits>@domain`, 20-32 bytes.\n"
          "  Present keys are i in [0, n), absent keys i in [n, n + probes): distinct by construction.\n"
       << "- The family run (`--family`, or any kind in `--kinds` that can erase, may refuse keys when full, or\n"
          "  forgets: "
       << join(kind_names([](const kind_facts& k) { return k.family; }))
       << "; the default run is the four core kinds,\n"
          "  unchanged): "
       << join(family_preset())
       << ",\n"
          "  and the baselines. The scalable filter's first layer (planned at 0.5%) takes all n keys; the stable\n"
          "  filter's `for_capacity` takes its cells and k from its planner, then the decrements per insert that\n"
          "  hold 1% on an endless stream; the aging filter has window = n, and every call is given one fixed\n"
          "  time point (a count-based window never reads it; the default argument would read the system clock\n"
          "  on every call).\n"
          "- *erase* (family runs only): one `erase()` per present key, in index order, after the lookups, on\n"
          "  the built structure, for every contestant that can delete: "
       << join(kind_names([](const kind_facts& k) { return k.can_erase; }))
       << ", and the\n"
          "  hash sets (`set.erase(key)`; std::unordered_set frees a node per key). n/a elsewhere. Every erase\n"
          "  of an inserted key must succeed. *FN measured* (family runs): "
       << join(kind_names([](const kind_facts& k) { return k.forgets; }), " and ")
       << " forget old keys by\n"
          "  design, so the share of present probes they answer \"absent\" is reported as a rate; for every\n"
          "  other kind (—) a single false negative is a failure, as before.\n"
       << "- The static run (`--static`, or any static kind in `--kinds`: "
       << join(kind_names([](const kind_facts& k) { return k.is_static; }))
       << "):\n"
          "  a static filter's *insert* is its whole construction: one digest half collected per key (pinned, one\n"
          "  thread), then the build from all of them (`from_digest_lows`) with both CPUs allowed, since\n"
          "  construction runs its passes on two threads. `"
       << label_of(golomb_coded_set<>::kind)
       << "` is built at P = 8, the rate of its targets\n"
          "  (1% would round to 2^-7); its bits per key include its bucket index.\n\n";
  }
  md << "## Run of " << env.date << "\n\n"
     << "- Command: `" << env.command << "`\n"
     << "- Compiler: " << env.compiler << "\n"
     << "- Machine: " << env.machine << "\n"
     << "- Pinning: " << env.pinning << "\n\n";
  for (const auto& c : configs) {
    md << "### n = " << format_items(c.items) << ", " << c.key_description << "\n\n"
       << config_title(c) << ".\n\n"
       << medians_table(c).to_markdown() << "\n"
       << spread_table(c).to_markdown() << "\n";
    if (const table limits = limit_table(c); !limits.rows.empty())
      md << "Against the memory limit: the limit probe loads one random 32-byte block per key from an array of the "
            "kind's size (no hashing, no bit tests), one by one and prefetched 32 at a time; ÷ limit is the kind's "
            "absent-key lookup time over the probe's.\n\n"
         << limits.to_markdown() << "\n";
    if (const std::string d = details_text(c); !d.empty()) {
      md << "Geometry after the n inserts:\n\n";
      std::istringstream lines(d);
      for (std::string line; std::getline(lines, line);) md << "- " << line << "\n";
      md << "\n";
    }
    if (const auto wide = wide_spreads(c); !wide.empty()) {
      md << "Wide spread (max > 1.25 × min; the machine was busy during these cells):\n\n";
      for (const auto& w : wide) md << "- " << w << "\n";
      md << "\n";
    }
    for (const auto& r : c.rows)
      for (const auto& p : r.problems) md << "- **Problem** with " << r.name << ": " << p << "\n";
  }
  if (family_checks.empty() || any_evaluated(checks)) {
    md << "### Targets\n\n"
       << "Evaluated from the medians above. \"Fastest kind\": ours with the lowest batched negative lookup time "
          "among those at ≤ 10.6 bits/key with measured FPR ≤ 1%.\n\n"
       << targets_table(checks).to_markdown() << "\n";
  }
  if (!family_checks.empty()) {
    md << "### Family targets\n\n"
       << "Evaluated from the medians above. \"Fastest blocked filter\": " << label_of(blocked_bloom_filter<>::kind)
       << " or " << label_of(split_block_bloom_filter<>::kind)
       << ", whichever is faster for the same kind of lookup (one-by-one against "
          "one-by-one, batched against batched). Quotient against cuckoo at equal FPR: a fingerprint filter "
          "needs one more bit per key for every halving of its rate (the information-theoretic slope, "
          "log2(1/ε) bits), so the quotient filter's bits/key is moved to the cuckoo filter's measured FPR "
          "by adding log2(FPR_quotient / FPR_cuckoo), and that figure is compared with the cuckoo filter's "
          "bits/key.\n\n"
       << targets_table(family_checks).to_markdown() << "\n";
  }
  if (!static_checks.empty()) {
    md << "### Static-filter targets\n\n"
       << "Evaluated from the medians above. A static filter's *insert* column is its whole construction: "
          "collecting each key's digest half (pinned, one thread), then building from all of them with both "
          "CPUs allowed, since construction runs its passes on two threads (lookups stay pinned). \"Fastest "
          "blocked filter\" as for the family targets.\n\n"
       << targets_table(static_checks).to_markdown() << "\n";
  }
  if (const table kinds = kinds_against_targets_table(configs); !kinds.rows.empty())
    md << "Every kind against the same thresholds (speed-ups: the baseline's negative lookup loop ÷ the kind's "
          "batched negative lookups):\n\n"
       << kinds.to_markdown() << "\n";
  return md.str();
}

std::string markdown_section(const run_environment& env, const std::vector<config_result>& configs,
                             const std::vector<target_check>& checks, const std::vector<target_check>& family_checks,
                             const std::vector<target_check>& static_checks) {
  std::ostringstream md;
  md << "Compiler: " << env.compiler << ". Pinning: " << env.pinning << ".\n\n";
  // One sentence when the configurations looked up as many keys, as often (those of one run do, unless n < probes).
  const bool same_lookups = std::all_of(configs.begin(), configs.end(), [&](const config_result& c) {
    return c.positive_probes == configs.front().positive_probes &&
           c.negative_probes == configs.front().negative_probes && c.reps == configs.front().reps;
  });
  if (same_lookups && !configs.empty()) {
    const config_result& c = configs.front();
    md << "Target FPR 1%; " << format_count(c.positive_probes) << " present and " << format_count(c.negative_probes)
       << " absent keys looked up in random order; median of " << c.reps << " run" << (c.reps == 1 ? "" : "s")
       << ".\n\n";
  } else {
    for (const auto& c : configs) md << "- " << config_title(c) << "\n";
    md << "\n";
  }
  // The configurations of one run have the same contestants, hence the same columns: their rows stack into
  // one table, each led by its n and key type.
  table all;
  all.left_aligned_columns = 2;
  for (const auto& c : configs) {
    table t = medians_table(c);
    if (all.header.empty()) {
      all.header = t.header;
      all.header.insert(all.header.begin(), "n, keys");
    }
    for (auto& row : t.rows) {
      row.insert(row.begin(), format_items(c.items) + (c.key_short_name == "int" ? " int" : " e-mail"));
      all.rows.push_back(std::move(row));
    }
  }
  md << all.to_markdown() << "\n";
  std::string problems;
  for (const auto& c : configs)
    for (const auto& r : c.rows)
      for (const auto& p : r.problems)
        problems += "- **Problem** with " + r.name + " (n = " + format_items(c.items) + ", " +
                    std::string(c.key_short_name) + "): " + p + "\n";
  if (!problems.empty()) md << problems << "\n";
  // A kind's geometry depends on n, not on the key type: once per key count.
  std::vector<std::uint64_t> described;
  for (const auto& c : configs) {
    const std::string d = details_text(c);
    if (d.empty() || std::find(described.begin(), described.end(), c.items) != described.end()) continue;
    described.push_back(c.items);
    md << "Geometry after n = " << format_items(c.items) << " inserts:\n\n";
    std::istringstream lines(d);
    for (std::string line; std::getline(lines, line);) md << "- " << line << "\n";
    md << "\n";
  }
  std::vector<target_check> evaluated;
  for (const auto* group : {&checks, &family_checks, &static_checks})
    for (const auto& c : *group)
      if (c.passed) evaluated.push_back(c);
  if (!evaluated.empty()) md << targets_table(evaluated).to_markdown();
  return md.str();
}

}  // namespace blume::bench
