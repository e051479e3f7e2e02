// The blume command-line tool. A thin surface: it parses arguments, calls the library and prints.
// Every failure is one line on stderr ("blume: ...") and exit status 2; query --quiet answers with 0 / 1.
#include <CLI/CLI.hpp>

#include <csignal>
#include <cstdio>
#include <algorithm>
#include <exception>
#include <new>
#include <string>
#include <vector>

#include "blume/error.hpp"
#include "blume/format.hpp"
#include "blume/kind.hpp"
#include "commands.hpp"
#include "demo.hpp"
#include "units.hpp"

namespace {

std::string known_kinds() {
  std::string s;
  for (const blume::filter_kind k : blume::all_kinds) s += (s.empty() ? "" : ", ") + std::string(blume::kind_name(k));
  for (const blume::filter_kind k : blume::map_kinds) s += ", " + std::string(blume::kind_name(k));
  return s;
}

blume::filter_kind kind_option(const std::string& name) {
  if (const auto kind = blume::parse_kind(name)) return *kind;
  throw blume::invalid_argument("--kind: unknown filter kind '" + name + "' (known: " + known_kinds() + ")");
}

blume::cli::key_format format_option(const std::string& name) {
  if (name == "lines") return blume::cli::key_format::lines;
  if (name == "nul") return blume::cli::key_format::nul;
  throw blume::invalid_argument("--format: '" + name + "' is neither 'lines' nor 'nul'");
}

/// An interrupted write leaves nothing behind: the temporary file goes, then the signal takes its default
/// course (so the shell sees 130 for SIGINT, 143 for SIGTERM). The target is untouched until the rename.
extern "C" void on_terminating_signal(int sig) {
  blume::remove_pending_temp_files();
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

void install_signal_handlers() {
  for (const int sig : {SIGINT, SIGTERM, SIGHUP}) {
    // A signal the parent ignores (nohup, a background job of a script) stays ignored.
    struct sigaction old {};
    if (::sigaction(sig, nullptr, &old) == 0 && old.sa_handler == SIG_IGN) continue;
    struct sigaction action {};
    action.sa_handler = on_terminating_signal;
    sigemptyset(&action.sa_mask);
    ::sigaction(sig, &action, nullptr);
  }
}

}  // namespace

int main(int argc, char** argv) {
  install_signal_handlers();
  CLI::App app{"blume: probabilistic membership filters (Bloom filters and their family), stored as files", "blume"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("blume ") + BLUME_VERSION + " (file format " +
                                        std::to_string(blume::format_version) + ")");
  app.footer(
      "Answers: 'no' is certain for every kind except the forgetting ones (stable, aging), which answer "
      "'absent' for keys not seen recently. Exit status: 0 success (query: every key may be present), "
      "1 query: a key is absent (erase: a key was not found), 2 error (one line on stderr, 'blume: ...').");
  const std::string kinds_help = "filter kind: " + known_kinds();

  // plan
  std::string plan_items, plan_fpr, plan_memory, plan_kind, plan_key_bytes = "24", plan_excluded;
  std::uint32_t plan_value_bits = 0;
  CLI::App* plan = app.add_subcommand("plan", "Size a filter: bits, memory, k and predicted FPR for each kind");
  plan->add_option("--items", plan_items, "keys the filter must hold (e.g. 100M)")->required();
  plan->add_option("--fpr", plan_fpr, "target false-positive rate (1% or 0.01)");
  plan->add_option("--memory", plan_memory, "memory budget instead of a rate (e.g. 120MiB): what FPR it gives");
  plan->add_option("--kind", plan_kind, kinds_help + " (default: every kind)");
  plan->add_option("--key-bytes", plan_key_bytes, "average key length, for the hash-set comparison")->capture_default_str();
  plan->add_option("--value-bits", plan_value_bits, "bloomier: bits per value (1-32); adds the bloomier row");
  plan->add_option("--excluded", plan_excluded,
                   "cascade: keys of the excluded set (--items is the included set); adds the cascade row");
  bool plan_json = false;
  plan->add_flag("--json", plan_json, "one JSON object");

  // build
  std::string build_items, build_fpr = "1%", build_kind, build_format = "lines";
  blume::cli::build_options build_opts;
  CLI::App* build = app.add_subcommand("build", "Build a filter file from newline- or NUL-delimited keys");
  build->add_option("--items", build_items,
                    "keys the filter is sized for (e.g. 100M; default: the keys in the input, counted first; "
                    "not for bloomier or cascade)");
  build->add_option("--fpr", build_fpr, "target false-positive rate (1% or 0.01)")->capture_default_str();
  build->add_option("--kind", build_kind, kinds_help + " (default: the fastest that meets the rate)");
  build->add_option("--input", build_opts.input, "key file, or - for standard input")->capture_default_str();
  build->add_option("--output", build_opts.output, "filter file to write (atomically), or - for standard output")
      ->required();
  build->add_flag("--allow-overfill", build_opts.allow_overfill,
                  "keep a filter given more keys than --items (its rate then exceeds --fpr)");
  build->add_flag("--allow-empty", build_opts.allow_empty, "build a filter from empty input instead of failing");
  build->add_flag("--no-wait", build_opts.no_wait, "fail at once if another writer holds the output file");
  build->add_option("--format", build_format, "lines or nul")->capture_default_str();
  build->add_option("--threads", build_opts.threads, "insert threads (bit-array kinds)")
      ->capture_default_str()->check(CLI::Range(1, 64));
  build->add_flag("--no-progress", [&](std::int64_t) { build_opts.progress = false; }, "no progress line even on a terminal");
  build->add_option("--value-bits", build_opts.value_bits,
                    "bloomier: bits per value, 1-32 (default: the widest value's); input lines are KEY<TAB>VALUE")
      ->check(CLI::Range(1, 32));
  build->footer(
      "Keys, wherever they come from (a file, standard input, the command line): with --format lines one "
      "trailing CR is not part of a key, and empty keys are skipped. A fixed-size filter given keys past "
      "1.5x its target rate is refused (--allow-overfill keeps it).");
  build->add_option("--included", build_opts.included, "cascade: file of the keys it must answer yes for");
  build->add_option("--excluded", build_opts.excluded, "cascade: file of the keys it must answer no for");

  // query, add, erase
  blume::cli::query_options query_opts, add_opts, erase_opts;
  std::string query_format = "lines", add_format = "lines", erase_format = "lines";
  CLI::App* query = app.add_subcommand(
      "query", "Answer KEY<tab>maybe or KEY<tab>no for each key (arguments or stdin); stable and aging filters "
               "answer KEY<tab>absent for keys not seen recently (they forget by design)");
  query->add_option("file", query_opts.file, "filter file")->required();
  query->add_option("keys", query_opts.keys, "keys (default: read from standard input)");
  query->add_option("--format", query_format, "keys: lines (one trailing CR dropped, from arguments too) or nul")
      ->capture_default_str();
  query->add_flag("--quiet,-q", query_opts.quiet,
                  "print nothing; exit 0 if every key may be present, 1 if one is certainly absent (for stable "
                  "and aging filters: not seen recently)");
  CLI::App* add = app.add_subcommand("add", "Insert keys (arguments or stdin) into a filter file, in place");
  add->add_option("file", add_opts.file, "filter file")->required();
  add->add_option("keys", add_opts.keys, "keys (default: read from standard input)");
  add->add_option("--format", add_format, "keys: lines (one trailing CR dropped, from arguments too) or nul")
      ->capture_default_str();
  add->add_flag("--allow-overfill", add_opts.allow_overfill,
                "add keys past the capacity the filter was planned for (its rate then exceeds the target)");
  add->add_flag("--no-wait", add_opts.no_wait, "fail at once if another writer holds the file");
  CLI::App* erase = app.add_subcommand("erase", "Remove keys from a counting, cuckoo or quotient filter file");
  erase->add_option("file", erase_opts.file, "filter file")->required();
  erase->add_option("keys", erase_opts.keys, "keys (default: read from standard input)");
  erase->add_option("--format", erase_format, "keys: lines (one trailing CR dropped, from arguments too) or nul")
      ->capture_default_str();
  erase->add_flag("--quiet,-q", erase_opts.quiet, "print nothing; exit 1 if a key was not found");
  erase->add_flag("--no-wait", erase_opts.no_wait, "fail at once if another writer holds the file");

  // info, merge, intersect, estimate
  std::string info_file;
  bool info_json = false;
  CLI::App* info = app.add_subcommand("info", "Describe a filter file: kind, parameters, fill, predicted FPR, size");
  info->add_option("file", info_file, "filter file")->required();
  info->add_flag("--json", info_json, "one JSON object");
  std::vector<std::string> merge_inputs, intersect_inputs;
  std::string merge_output, intersect_output;
  CLI::App* merge = app.add_subcommand("merge", "Union of filters of the same kind and geometry");
  merge->add_option("inputs", merge_inputs, "filter files")->required()->expected(2, -1);
  merge->add_option("--output", merge_output, "file to write (atomically), or - for standard output")->required();
  bool merge_no_wait = false, intersect_no_wait = false;
  merge->add_flag("--no-wait", merge_no_wait, "fail at once if another writer holds the output file");
  CLI::App* intersect = app.add_subcommand("intersect", "Intersection of bit-array filters of the same geometry");
  intersect->add_option("inputs", intersect_inputs, "filter files")->required()->expected(2, -1);
  intersect->add_option("--output", intersect_output, "file to write (atomically), or - for standard output")
      ->required();
  intersect->add_flag("--no-wait", intersect_no_wait, "fail at once if another writer holds the output file");
  std::string estimate_a, estimate_b;
  bool estimate_json = false;
  CLI::App* estimate = app.add_subcommand("estimate", "Estimated sizes of A, B, A∪B, A∩B and the Jaccard index");
  estimate->add_option("a", estimate_a, "filter file")->required();
  estimate->add_option("b", estimate_b, "filter file")->required();
  estimate->add_flag("--json", estimate_json, "one JSON object");

  // bench, demo
  std::string bench_items = "1M", bench_kinds;
  CLI::App* bench = app.add_subcommand("bench", "Time every kind on this machine (insert, lookups, FPR)");
  bench->add_option("--items", bench_items, "keys per filter")->capture_default_str();
  bench->add_option("--kind", bench_kinds, "one kind (default: every kind)");
  blume::cli::demo_options demo;
  std::string demo_items = "10M", demo_probes = "1M", demo_fpr = "1%", demo_kind = "split-block";
  CLI::App* demo_cmd = app.add_subcommand(
      "demo", "The sign-up check: build a filter of synthetic registered e-mail addresses, probe new ones, and "
              "report memory, false positives, speed and database lookups saved");
  demo_cmd->add_option("--items", demo_items, "registered addresses in the filter (e.g. 10M, 100M)")->capture_default_str();
  demo_cmd->add_option("--probes", demo_probes, "new sign-ups to check")->capture_default_str();
  demo_cmd->add_option("--fpr", demo_fpr, "target false-positive rate (1% or 0.01)")->capture_default_str();
  demo_cmd->add_option("--kind", demo_kind, "filter kind: bloom, partitioned, blocked, split-block")->capture_default_str();
  demo_cmd->add_option("--threads", demo.threads, "insert threads")->capture_default_str()->check(CLI::Range(1, 64));

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // One line, like every other error (CLI11's own report spans several).
    std::string what = e.what();
    std::replace(what.begin(), what.end(), '\n', ' ');
    std::fprintf(stderr, "blume: %s (see blume --help)\n", what.c_str());
    return 2;
  }

  namespace cli = blume::cli;
  try {
    if (*plan) {
      cli::plan_options o;
      o.items = cli::parse_count(plan_items, "--items", 1e15);
      if (o.items == 0) throw blume::invalid_argument("--items must be at least 1");
      if (!plan_fpr.empty()) o.fpr = cli::parse_rate(plan_fpr, "--fpr");
      if (!plan_memory.empty()) o.memory_bytes = cli::parse_bytes(plan_memory, "--memory");
      if (!plan_kind.empty()) o.kind = kind_option(plan_kind);
      if (plan->count("--value-bits") != 0) {
        if (plan_value_bits == 0 || plan_value_bits > 32)
          throw blume::invalid_argument("--value-bits must be in [1, 32], got " + std::to_string(plan_value_bits));
        o.value_bits = plan_value_bits;
      }
      if (!plan_excluded.empty()) o.excluded = cli::parse_count(plan_excluded, "--excluded", 1e15);
      const bool cascade_only = o.kind == blume::cascade_filter::kind;  // exact: no rate to give
      if (o.fpr.has_value() == o.memory_bytes.has_value() && !(cascade_only && !o.memory_bytes))
        throw blume::invalid_argument("give either --fpr or --memory");
      if (o.kind == blume::bloomier_filter<>::kind && !o.value_bits)
        throw blume::invalid_argument("--kind bloomier: give the values' width with --value-bits");
      if (cascade_only && !o.excluded) throw blume::invalid_argument("--kind cascade: give the excluded set's size with --excluded");
      o.key_bytes = cli::parse_count(plan_key_bytes, "--key-bytes", 1e6);
      o.json = plan_json;
      return cli::run_plan(o);
    }
    if (*build) {
      build_opts.fpr = cli::parse_rate(build_fpr, "--fpr");
      if (!build_kind.empty()) build_opts.kind = kind_option(build_kind);
      if (!build_items.empty()) {
        build_opts.items = cli::parse_count(build_items, "--items", 1e13);
        if (build_opts.items == 0) throw blume::invalid_argument("--items must be at least 1");
      }
      build_opts.format = format_option(build_format);
      return cli::run_build(build_opts);
    }
    if (*query) {
      query_opts.format = format_option(query_format);
      return cli::run_query(query_opts);
    }
    if (*add) {
      add_opts.format = format_option(add_format);
      add_opts.quiet = true;
      return cli::run_update(add_opts, cli::update::add);
    }
    if (*erase) {
      erase_opts.format = format_option(erase_format);
      return cli::run_update(erase_opts, cli::update::erase);
    }
    if (*info) return cli::run_info(info_file, info_json);
    if (*merge) return cli::run_combine(merge_inputs, merge_output, cli::combine::merge, merge_no_wait);
    if (*intersect)
      return cli::run_combine(intersect_inputs, intersect_output, cli::combine::intersect, intersect_no_wait);
    if (*estimate) return cli::run_estimate(estimate_a, estimate_b, estimate_json);
    if (*bench) {
      cli::bench_options o;
      o.items = cli::parse_count(bench_items, "--items", 1e10);
      if (o.items == 0) throw blume::invalid_argument("--items must be at least 1");
      if (!bench_kinds.empty()) o.kinds.push_back(kind_option(bench_kinds));
      return cli::run_bench(o);
    }
    if (*demo_cmd) {
      demo.items = cli::parse_count(demo_items, "--items", 2e9);
      demo.probes = cli::parse_count(demo_probes, "--probes", 1e9);
      if (demo.items == 0 || demo.probes == 0) throw blume::invalid_argument("--items and --probes must be at least 1");
      demo.fpr = cli::parse_rate(demo_fpr, "--fpr");
      demo.kind = kind_option(demo_kind);
      return cli::run_demo(demo);
    }
  } catch (const blume::error& e) {
    std::fprintf(stderr, "blume: %s\n", e.what());
    return 2;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "blume: out of memory\n");
    return 2;
  } catch (const std::system_error& e) {
    std::fprintf(stderr, "blume: %s\n", e.what());
    return 2;
  }
  return 0;
}
