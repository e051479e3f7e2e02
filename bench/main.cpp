// SPDX-License-Identifier: Apache-2.0
// blume_bench: blume's filters against std::unordered_set, absl::flat_hash_set and libbloom, in one run.
// Prints the tables and the targets evaluation; with --output, writes them as Markdown too (with --section, the
// one section of docs/benchmarks.md that scripts/bench-report.sh asks for).
// Run `blume_bench --help` for the options; docs/benchmarks.md says why it measures as it does.

#include <sched.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "affinity.hpp"
#include "build_info.hpp"
#include "fpr_sweep.hpp"
#include "key_quality.hpp"
#include "keys.hpp"
#include "lookup_plot.hpp"
#include "measure.hpp"
#include "our_kinds.hpp"
#include "report.hpp"
#include "results.hpp"

namespace blume::bench {
namespace {

/// `text` wrapped at 110 columns for a paragraph that starts at column `indent`, every line after the
/// first indented by as many spaces.
std::string wrap(std::string_view text, std::size_t indent) {
  constexpr std::size_t width = 110;
  std::string out;
  std::size_t column = indent;
  bool line_start = true;
  while (!text.empty()) {
    const std::size_t space = text.find(' ');
    const std::string_view word = text.substr(0, space);
    text.remove_prefix(space == std::string_view::npos ? text.size() : space + 1);
    if (!line_start && column + 1 + word.size() > width) {
      out += "\n" + std::string(indent, ' ');
      column = indent;
      line_start = true;
    }
    if (!line_start) {
      out += ' ';
      ++column;
    }
    out += word;
    column += word.size();
    line_start = false;
  }
  return out;
}

/// --help. The lists of kinds come from blume's list of kinds, grouped by what each kind declares.
std::string usage() {
  const auto plain = kind_names([](const kind_facts& k) { return !k.is_static && !k.family; });
  const auto family = kind_names([](const kind_facts& k) { return k.family; });
  const auto statics = kind_names([](const kind_facts& k) { return k.is_static; });
  const auto forgetting = kind_names([](const kind_facts& k) { return k.forgets; });
  const std::string defaults = plain == core_kinds() ? "" : ": " + join(core_kinds());
  std::string notes;
  for (const kind_facts& k : benchmarked_kinds())
    if (!k.note.empty()) notes += " (" + std::string(k.name) + ": " + std::string(k.note) + ")";

  auto option = [](std::string_view name, const std::string& text) {
    std::string line = "  " + std::string(name);
    line.resize(21, ' ');
    return line + wrap(text, 21) + "\n";
  };
  return "usage: blume_bench [options]\n\n"
         "Builds each contestant for n keys, times inserts and lookups of present and absent keys (one call per key,\n"
         "and batched for our filters), repeats, and prints medians with their ratio to absl::flat_hash_set.\n\n" +
         option("--items LIST", "key counts, comma-separated; suffixes k, M, G or 1e7 style (default 10M,100M)") +
         option("--keys LIST", "int, email (default int,email)") +
         option("--reps N", "repetitions of every cell (default 3)") +
         option("--probes N", "absent keys looked up, and at most that many present keys (default 10M)") +
         option("--kinds LIST", "our kinds: " + join(plain) + " (the default" + defaults +
                                    "), the rest of the family: " + join(family) +
                                    ", and the static kinds: " + join(statics) + notes) +
         option("--baselines LIST", "unordered_set, absl, libbloom (default all; \"none\" for none)") +
         option("--family", "the filter-family run: --kinds " + join(family_preset(), ",") +
                                " and every baseline (an explicit --kinds or --baselines wins). Any run with a family "
                                "kind in it (one that can erase, may refuse keys when full, or forgets) also times "
                                "erase (one erase() per present key, after the lookups, for every contestant that has "
                                "one, the hash sets included), reports the measured false-negative rate of the kinds "
                                "that forget (" +
                                join(forgetting) +
                                "; misses are possible by design there, so they "
                                "are not failures), and evaluates the family targets") +
         option("--static", "the static-filter run: --kinds " + join(static_preset(), ",") +
                                " and every baseline (an explicit --kinds or --baselines wins); evaluates the static "
                                "targets") +
         option("--output PATH",
                "also write the run as a Markdown report to PATH (default none: the terminal only; "
                "scripts/bench-report.sh assembles docs/benchmarks.md from --section runs)") +
         option("--append", "add this run to the report instead of replacing it") +
         option("--section",
                "write --output (required) as one section of docs/benchmarks.md, which "
                "scripts/bench-report.sh assembles: every configuration's medians in one table and the "
                "targets evaluated; no title, spreads or plots") +
         option("--cpu N", "pin to CPU N with sched_setaffinity (default 1; -1: do not pin)") +
         option("--fpr-plot",
                "instead of the timed run: every kind built for n keys (default 1M) at rates from 20% to "
                "0.05%, measured FPR against bits per key beside its model's curve, drawn with "
                "gnuplot into --plots DIR (default <source>/docs/plots): fpr.dat, fpr.gp, fpr.svg. A timed run over "
                "several --items with a report also draws lookup.svg there (lookups against n)") +
         option("--quality",
                "instead of the timed run: every kind (or --kinds) filled with n integer keys (default 1M) of each "
                "pattern (sequential, multiples of 2^8, 2^16, 2^32, 2^40, random, small negatives) and probed with the "
                "next --probes keys of the pattern (default 1M); prints measured against predicted FPR as Markdown "
                "and exits 1 unless every row is within the 99.9% binomial interval with no false negatives") +
         option("--quick", "smoke test: n = 1M, 1M probes, 1 repetition, no report unless --output is given") +
         option("--help", "this text");
}

struct options {
  std::vector<std::uint64_t> items = {10'000'000, 100'000'000};
  std::vector<std::string> keys = {"int", "email"};
  int reps = 3;
  std::uint64_t probes = 10'000'000;
  std::vector<std::string> kinds = core_kinds();
  std::vector<std::string> baselines = {"unordered_set", "absl", "libbloom"};
  // Never docs/benchmarks.md by default: that report is assembled from sections, which a whole run would replace.
  std::string output = "none";
  bool output_given = false;
  bool append = false;
  bool section = false;
  int cpu = 1;
  bool quick = false;
  bool family = false;
  bool static_run = false;
  bool fpr_plot = false;
  bool quality = false;
  bool kinds_given = false;
  std::string plots = std::string(build_info::source_dir) + "/docs/plots";
};

std::vector<std::string> split_list(std::string_view text) {
  std::vector<std::string> parts;
  while (!text.empty()) {
    const auto comma = text.find(',');
    if (comma != 0) parts.emplace_back(text.substr(0, comma));
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  return parts;
}

/// "10M", "100M", "1e6", "250k", "2G", "12345".
std::uint64_t parse_count(std::string_view text) {
  double value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end == text.data())
    throw std::invalid_argument("not a count: '" + std::string(text) + "'");
  const std::string_view suffix(end, static_cast<std::size_t>(text.data() + text.size() - end));
  if (suffix == "k" || suffix == "K") value *= 1e3;
  else if (suffix == "M" || suffix == "m") value *= 1e6;
  else if (suffix == "G" || suffix == "g") value *= 1e9;
  else if (!suffix.empty()) throw std::invalid_argument("unknown suffix in count '" + std::string(text) + "'");
  if (!(value >= 1 && value <= 2e9 && value == std::floor(value)))
    throw std::invalid_argument("count must be a whole number in [1, 2e9], got '" + std::string(text) + "'");
  return static_cast<std::uint64_t>(value);
}

/// Whether any kind selected with --kinds is one `keep` picks.
template <class Keep>
bool any_selected(const options& o, Keep keep) {
  const auto names = kind_names(keep);
  return std::any_of(o.kinds.begin(), o.kinds.end(),
                     [&](const std::string& k) { return std::find(names.begin(), names.end(), k) != names.end(); });
}

/// A run with any family kind in it: it times erase, reports false negatives and the family targets.
bool family_run(const options& o) {
  return any_selected(o, [](const kind_facts& k) { return k.family; });
}

/// --kinds takes the name of every kind built from one key set; the others are refused with the reason.
void check_kinds(const std::vector<std::string>& words) {
  const auto known = kind_names([](const kind_facts&) { return true; });
  for (const auto& w : words) {
    if (std::find(known.begin(), known.end(), w) != known.end()) continue;
    if (const auto kind = parse_kind(w))
      throw std::invalid_argument("'" + w + "' for --kinds: a " + w + " filter is built from inputs of its own (" +
                                  (input_of(*kind) == kind_input::keys_with_values ? "keys with values"
                                                                                   : "included and excluded keys") +
                                  "), not from one key set, so the benchmark does not measure it");
    throw std::invalid_argument("unknown value '" + w + "' for --kinds (one of: " + join(known) + ")");
  }
}

template <class Allowed = std::initializer_list<std::string_view>>
void check_words(const std::vector<std::string>& words, const Allowed& allowed, std::string_view option) {
  for (const auto& w : words)
    if (std::find(allowed.begin(), allowed.end(), w) == allowed.end())
      throw std::invalid_argument("unknown value '" + w + "' for " + std::string(option));
}

options parse_options(int argc, char** argv) {
  options o;
  bool items_given = false, probes_given = false, reps_given = false, kinds_given = false, baselines_given = false;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    auto value = [&]() -> std::string_view {
      if (i + 1 >= argc) throw std::invalid_argument(std::string(arg) + " needs a value");
      return argv[++i];
    };
    if (arg == "--help" || arg == "-h") {
      std::cout << usage();
      std::exit(0);
    } else if (arg == "--items") {
      o.items.clear();
      for (const auto& s : split_list(value())) o.items.push_back(parse_count(s));
      items_given = true;
    } else if (arg == "--keys") {
      o.keys = split_list(value());
      check_words(o.keys, {"int", "email"}, "--keys");
    } else if (arg == "--reps") {
      o.reps = static_cast<int>(parse_count(value()));
      reps_given = true;
    } else if (arg == "--probes") {
      o.probes = parse_count(value());
      probes_given = true;
    } else if (arg == "--kinds") {
      o.kinds = split_list(value());
      check_kinds(o.kinds);
      kinds_given = true;
    } else if (arg == "--baselines") {
      const std::string_view v = value();
      o.baselines = v == "none" ? std::vector<std::string>{} : split_list(v);
      check_words(o.baselines, {"unordered_set", "absl", "libbloom"}, "--baselines");
      baselines_given = true;
    } else if (arg == "--output") {
      o.output = value();
      o.output_given = true;
    } else if (arg == "--append") {
      o.append = true;
    } else if (arg == "--section") {
      o.section = true;
    } else if (arg == "--cpu") {
      o.cpu = std::stoi(std::string(value()));
    } else if (arg == "--quick") {
      o.quick = true;
    } else if (arg == "--family") {
      o.family = true;
    } else if (arg == "--static") {
      o.static_run = true;
    } else if (arg == "--fpr-plot") {
      o.fpr_plot = true;
    } else if (arg == "--quality") {
      o.quality = true;
    } else if (arg == "--plots") {
      o.plots = value();
    } else {
      throw std::invalid_argument("unknown option '" + std::string(arg) + "' (see --help)");
    }
  }
  if (o.family) {
    if (!kinds_given) o.kinds = family_preset();
    if (!baselines_given) o.baselines = {"unordered_set", "absl", "libbloom"};
  }
  if (o.static_run) {
    if (!kinds_given) o.kinds = static_preset();
    if (!baselines_given) o.baselines = {"unordered_set", "absl", "libbloom"};
  }
  o.kinds_given = kinds_given;
  if (o.fpr_plot || o.quality) {
    if (!items_given) o.items = {1'000'000};
    if (!probes_given) o.probes = 1'000'000;
  }
  // Its default output is the whole report, which a section would replace.
  if (o.section && !o.output_given) throw std::invalid_argument("--section needs --output");
  if (o.quick) {
    if (!items_given) o.items = {1'000'000};
    if (!probes_given) o.probes = 1'000'000;
    if (!reps_given) o.reps = 1;
  }
  return o;
}

/// Pins the process to one CPU so the scheduler cannot move the run between cores (like `taskset -c N`).
std::string pin_to_cpu(int cpu) {
  if (cpu < 0) return "not pinned (--cpu -1)";
  cpu_set_t allowed;
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0 || !CPU_ISSET(cpu, &allowed))
    return "not pinned: CPU " + std::to_string(cpu) + " is not available to this process";
  cpu_set_t only;
  CPU_ZERO(&only);
  CPU_SET(cpu, &only);
  if (sched_setaffinity(0, sizeof only, &only) != 0) return "not pinned: " + std::string(std::strerror(errno));
  return "pinned to CPU " + std::to_string(cpu) + " with sched_setaffinity (as `taskset -c " + std::to_string(cpu) +
         "` would)";
}

/// The command line as the report records it. An absolute path inside the source tree is written relative
/// to the tree's top (the program as ./build/...), as if run from there; a program outside it by its file
/// name: the report is read on other machines, where this one's directories mean nothing.
std::string command_line(int argc, char** argv) {
  const std::filesystem::path source(build_info::source_dir);
  std::string out;
  for (int i = 0; i < argc; ++i) {
    std::string a = argv[i];
    if (const std::filesystem::path p(a); p.is_absolute()) {
      const std::filesystem::path inside = p.lexically_normal().lexically_relative(source);
      if (!inside.empty() && *inside.begin() != "..") a = (i == 0 ? "./" : "") + inside.string();
      else if (i == 0) a = p.filename().string();
    }
    out += (i == 0 ? "" : " ") + (a.find(' ') == std::string::npos ? a : "'" + a + "'");
  }
  return out;
}

bool selected(const options& o, std::string_view option, bool ours) {
  const auto& list = ours ? o.kinds : o.baselines;
  return std::find(list.begin(), list.end(), option) != list.end();
}

template <class Keys>
config_result run_config(const options& o, std::uint64_t items, std::uint64_t& checksum) {
  std::cerr << "generating " << items << " " << Keys::short_name << " keys and " << o.probes << " probes...\n";
  const workload<Keys> w = make_workload<Keys>(items, o.probes);

  std::vector<contestant_entry<Keys>> contestants;
  for (const auto& e : all_contestants<Keys>())
    if (selected(o, e.option, e.ours)) contestants.push_back(e);

  // Repetitions outermost: each round measures every contestant once, so a busy spell on the machine spreads
  // over all of them instead of spoiling one. Only one contestant is alive at a time.
  const bool with_erase = family_run(o);
  std::vector<std::vector<sample>> samples(contestants.size());
  for (int rep = 1; rep <= o.reps; ++rep) {
    for (std::size_t i = 0; i < contestants.size(); ++i) {
      sample s = contestants[i].measure(w, with_erase);
      std::fprintf(stderr, "  [n=%llu %s, run %d/%d] %-28s insert %7.1f  +%7.1f  -%7.1f  -batched %7.1f ns/key",
                   static_cast<unsigned long long>(items), std::string(Keys::short_name).c_str(), rep, o.reps,
                   contestants[i].name.c_str(), s.ns_per_key[insert], s.ns_per_key[positive], s.ns_per_key[negative],
                   s.ns_per_key[negative_batched]);
      if (with_erase && !std::isnan(s.ns_per_key[erase_keys]))
        std::fprintf(stderr, "  erase %7.1f", s.ns_per_key[erase_keys]);
      if (contestants[i].false_negatives_by_design)
        std::fprintf(stderr, "  false negatives %llu", static_cast<unsigned long long>(s.false_negatives));
      std::fprintf(stderr, "\n");
      checksum += s.positive_hits * 31 + s.negative_hits;
      samples[i].push_back(std::move(s));
    }
  }

  config_result result;
  result.items = items;
  result.key_description = Keys::description;
  result.key_short_name = Keys::short_name;
  result.positive_probes = w.positive_probes.size();
  result.negative_probes = w.negative_probes.size();
  result.reps = o.reps;
  result.keys_are_views = std::same_as<typename Keys::key_type, std::string_view>;
  for (std::size_t i = 0; i < contestants.size(); ++i) {
    const auto& runs = samples[i];
    contestant_result r;
    r.name = contestants[i].name;
    r.ours = contestants[i].ours;
    r.kind = contestants[i].kind;
    r.bytes = runs.front().bytes;
    r.bits_per_key = static_cast<double>(r.bytes) * 8.0 / static_cast<double>(items);
    r.measured_fpr = static_cast<double>(runs.front().negative_hits) / static_cast<double>(result.negative_probes);
    r.predicted_fpr = runs.front().predicted_fpr;
    r.false_negatives_by_design = contestants[i].false_negatives_by_design;
    r.false_negative_rate =
        static_cast<double>(runs.front().false_negatives) / static_cast<double>(result.positive_probes);
    r.details = runs.front().details;
    r.fingerprint_bits = runs.front().fingerprint_bits;
    r.load_factor = runs.front().load_factor;
    for (std::size_t m = 0; m < metric_count; ++m) {
      std::vector<double> values;
      for (const auto& s : runs) values.push_back(s.ns_per_key[m]);
      r.ns[m] = summarise(std::move(values));
    }
    for (const auto& s : runs) {
      if (s.negative_hits != runs.front().negative_hits) r.problems.push_back("false positives differ between runs");
      if (s.false_negatives != runs.front().false_negatives)
        r.problems.push_back("false negatives differ between runs");
      r.problems.insert(r.problems.end(), s.problems.begin(), s.problems.end());
    }
    result.rows.push_back(std::move(r));
  }
  return result;
}

int run(int argc, char** argv) {
  const options o = parse_options(argc, argv);
  bench::unpinned_cpus();  // remembered before pinning: static constructions run on all of them
  const std::string pinning = pin_to_cpu(o.cpu);
  const run_environment env = describe_environment(command_line(argc, argv), pinning);
  std::cout << "blume_bench, " << env.date << "\n"
            << "compiler: " << env.compiler << "\n"
            << "machine:  " << env.machine << "\n"
            << "pinning:  " << env.pinning << "\n\n";

  if (o.fpr_plot) return fpr_sweep(o.plots, o.items.front(), o.probes) ? 0 : 1;
  if (o.quality) {
    bool all = true;
    for (const std::uint64_t n : o.items)
      all = key_quality(n, o.probes,
                        [&](const std::string& name) {
                          return !o.kinds_given || std::find(o.kinds.begin(), o.kinds.end(), name) != o.kinds.end();
                        }) &&
            all;
    return all ? 0 : 1;
  }

  std::vector<config_result> configs;
  std::uint64_t checksum = 0;
  for (std::uint64_t items : o.items) {
    for (const auto& keys : o.keys) {
      configs.push_back(keys == "int" ? run_config<int_keys>(o, items, checksum)
                                      : run_config<email_keys>(o, items, checksum));
      const config_result& c = configs.back();
      std::cout << config_title(c) << "\n"
                << "medians; in parentheses the ratio to absl::flat_hash_set in this run (below 1 = faster/smaller)"
                << (c.keys_are_views ? "; hash sets hold std::string_view into the key arena, counted in their memory"
                                     : "")
                << "\n\n"
                << medians_table(c).to_text() << "\n"
                << spread_table(c).to_text() << "\n";
      if (const table limits = limit_table(c); !limits.rows.empty())
        std::cout << "against the memory limit (one random 32-byte load per key over the kind's bytes):\n"
                  << limits.to_text() << "\n";
      if (const std::string d = details_text(c); !d.empty()) std::cout << d << "\n";
      for (const auto& w : wide_spreads(c)) std::cout << "wide spread (busy machine?): " << w << "\n";
      for (const auto& r : c.rows)
        for (const auto& p : r.problems) std::cout << "PROBLEM with " << r.name << ": " << p << "\n";
      std::cout.flush();
    }
  }

  const auto checks = evaluate_targets(configs);
  const auto family_checks = family_run(o) ? evaluate_family_targets(configs) : std::vector<target_check>{};
  if (family_checks.empty() || any_evaluated(checks))
    std::cout << "targets\n" << targets_table(checks).to_text() << "\n";
  if (!family_checks.empty()) std::cout << "family targets\n" << targets_table(family_checks).to_text() << "\n";
  const bool static_kinds = any_selected(o, [](const kind_facts& k) { return k.is_static; });
  const auto static_checks = static_kinds ? evaluate_static_targets(configs) : std::vector<target_check>{};
  if (!static_checks.empty()) std::cout << "static-filter targets\n" << targets_table(static_checks).to_text() << "\n";
  if (const table kinds = kinds_against_targets_table(configs); !kinds.rows.empty())
    std::cout << kinds.to_text() << "\n";
  std::cout << "checksum of all hit counts: " << checksum << "\n";

  if (o.output != "none" && o.section) {
    std::ofstream out(o.output, std::ios::trunc);
    if (!out) throw std::runtime_error("cannot write " + o.output);
    out << markdown_section(env, configs, checks, family_checks, static_checks);
    std::cout << "section written to " << o.output << "\n";
  } else if (o.output != "none") {
    const bool standalone = !o.append || !std::filesystem::exists(o.output);
    std::ofstream out(o.output, o.append ? std::ios::app : std::ios::trunc);
    if (!out) throw std::runtime_error("cannot write " + o.output);
    out << (standalone ? "" : "\n") << markdown_report(env, configs, checks, family_checks, standalone, static_checks);
    std::cout << "report " << (standalone ? "written to " : "appended to ") << o.output << "\n";
    lookup_plot(o.plots, configs);  // beside it, when the run covered several key counts
  }

  for (const auto& c : configs)
    for (const auto& r : c.rows)
      if (!r.problems.empty()) return 1;
  return 0;
}

}  // namespace
}  // namespace blume::bench

int main(int argc, char** argv) {
  try {
    return blume::bench::run(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "blume_bench: " << e.what() << "\n";
    return 2;
  }
}
