// The blume command-line tool. A thin surface: it parses arguments, calls the library and prints.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <exception>
#include <string>

#include "blume/error.hpp"
#include "blume/kind.hpp"
#include "demo.hpp"
#include "units.hpp"

namespace {

blume::filter_kind kind_option(const std::string& name) {
  if (const auto kind = blume::parse_kind(name)) return *kind;
  throw blume::invalid_argument("--kind: unknown filter kind '" + name +
                                "' (known: bloom, partitioned, blocked, split-block, counting)");
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"blume: probabilistic membership filters (Bloom filters and their family)"};
  app.require_subcommand(1);

  blume::cli::demo_options demo;
  std::string demo_items = "10M", demo_probes = "1M", demo_fpr = "1%", demo_kind = "split-block";
  CLI::App* demo_cmd = app.add_subcommand(
      "demo", "The sign-up check: build a filter of synthetic registered e-mail addresses, probe new ones, and "
              "report memory, false positives, speed and database lookups saved");
  demo_cmd->add_option("--items", demo_items, "registered addresses in the filter (e.g. 10M, 100M)")
      ->capture_default_str();
  demo_cmd->add_option("--probes", demo_probes, "new sign-ups to check")->capture_default_str();
  demo_cmd->add_option("--fpr", demo_fpr, "target false-positive rate (1% or 0.01)")->capture_default_str();
  demo_cmd->add_option("--kind", demo_kind, "filter kind: bloom, partitioned, blocked, split-block")
      ->capture_default_str();
  demo_cmd->add_option("--threads", demo.threads, "insert threads")->capture_default_str()->check(CLI::Range(1, 64));

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }

  try {
    if (*demo_cmd) {
      demo.items = blume::cli::parse_count(demo_items, "--items", 2e9);
      demo.probes = blume::cli::parse_count(demo_probes, "--probes", 1e9);
      if (demo.items == 0 || demo.probes == 0) throw blume::invalid_argument("--items and --probes must be at least 1");
      demo.fpr = blume::cli::parse_rate(demo_fpr, "--fpr");
      demo.kind = kind_option(demo_kind);
      return blume::cli::run_demo(demo);
    }
  } catch (const blume::error& e) {
    std::fprintf(stderr, "blume: %s\n", e.what());
    return 2;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "blume: out of memory\n");
    return 2;
  }
  return 0;
}
