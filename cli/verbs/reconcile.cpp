// SPDX-License-Identifier: Apache-2.0
// `blume sketch`, `blume diff-sketch` and `blume reconcile`: set reconciliation between two parties that
// each hold a key file. B sends A a sketch of its keys (a strata estimator, 41 KB whatever the set's size);
// A estimates the size of the difference from it and sends B an invertible table of its keys sized for
// that difference; B subtracts a table of its own keys and decodes the difference. B can name its own
// keys that A lacks (it hashes its keys again to find them), but of A's keys it learns only their ids.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "blume/any_filter.hpp"
#include "blume/kinds/strata_estimator.hpp"
#include "filter_ops.hpp"
#include "key_input.hpp"
#include "shared.hpp"

namespace blume::cli {

namespace {

using table = invertible_bloom_filter<>;

struct reconcile_args {
  std::string input = "-", output, estimate, table_file, format = "lines";
  std::optional<std::uint64_t> differences;
  std::uint64_t seed = xxh3_hasher::default_seed;
  bool force = false;
};

/// The ids of the distinct keys of `source`: a key given twice is one key, as it is to a set.
std::vector<std::uint64_t> distinct_ids(key_source& source, std::uint64_t seed) {
  const xxh3_hasher h(seed);
  std::vector<std::uint64_t> ids;
  source.for_each_block([&](std::string_view block) {
    for_each_key(block, source.delimiter(), [&](std::string_view k) {
      if (!k.empty()) ids.push_back(hash_key(h, k).low);
    });
  });
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return ids;
}

template <class T>
void insert_ids(T& t, const std::vector<std::uint64_t>& ids) {
  for (const std::uint64_t id : ids) t.insert(digest{id, 0});  // a table reads only the digest's low half
}

std::string describe(const std::string& path) { return path == "-" ? "standard input" : "'" + path + "'"; }

table open_table(const std::string& path) {
  any_filter f = open_filter(path);
  if (auto* t = std::get_if<table>(&f)) return std::move(*t);
  throw invalid_argument("'" + path + "' holds a '" + std::string(kind_name(kind_of(f))) +
                         "' filter, not an iblt table");
}

int run_sketch(const reconcile_args& a) {
  key_source source(a.input, format_option(a.format));
  strata_estimator<> sketch(a.seed);
  const std::vector<std::uint64_t> ids = distinct_ids(source, a.seed);
  insert_ids(sketch, ids);
  write_output(sketch.table(), a.output, {}, write_options{a.force});
  std::fprintf(stderr, "sketched %zu distinct keys of %s: %s\n", ids.size(), describe(a.input).c_str(),
               human_bytes(static_cast<double>(sketch.table().cells() * table::cell_bytes + header_size)).c_str());
  return 0;
}

int run_diff_sketch(const reconcile_args& a) {
  std::optional<strata_estimator<>> theirs;
  std::uint64_t seed = a.seed;
  if (!a.estimate.empty()) {
    try {
      theirs.emplace(open_table(a.estimate));
    } catch (const invalid_argument& e) {
      throw invalid_argument("'" + a.estimate + "' is not a sketch (blume sketch writes one): " + e.what());
    }
    seed = theirs->seed();  // the sketches and the table must share it; the other side chose it
  }
  key_source source(a.input, format_option(a.format));
  const std::vector<std::uint64_t> ids = distinct_ids(source, seed);
  std::uint64_t planned = 0;
  std::string why;
  if (a.differences) {
    planned = *a.differences;
    why = "as given";
  } else {
    strata_estimator<> ours(seed);
    insert_ids(ours, ids);
    const difference_estimate e = ours.estimate(*theirs);
    planned = strata_estimator<>::differences_to_plan(e);
    why = e.exact ? "counted exactly by the sketches"
                  : "estimated at " + std::to_string(static_cast<std::uint64_t>(e.estimate)) + ", with " +
                        fixed(strata_estimator<>::difference_headroom, 1) + "x headroom";
  }
  table t = table::for_difference(planned, seed);
  insert_ids(t, ids);
  write_output(t, a.output, {}, write_options{a.force});
  std::fprintf(stderr, "table of %zu distinct keys for %" PRIu64 " differences (%s): %" PRIu64 " cells, %s\n",
               ids.size(), planned, why.c_str(), t.cells(),
               human_bytes(static_cast<double>(t.cells() * table::cell_bytes + header_size)).c_str());
  return 0;
}

int run_reconcile(const reconcile_args& a) {
  table difference = open_table(a.table_file);
  if (difference.strata() != 1)
    throw invalid_argument("'" + a.table_file + "' is a sketch (" + std::to_string(difference.strata()) +
                           " strata), not a difference table: blume diff-sketch makes one");
  key_source source(a.input, format_option(a.format));
  source.count_keys();  // standard input is held, so that the keys can be read again to name them
  const std::vector<std::uint64_t> ids = distinct_ids(source, difference.seed());
  table ours = difference.empty_like();
  insert_ids(ours, ids);
  difference.subtract(ours);
  const iblt_listing l = difference.decode();
  if (!l.complete)
    throw error("could not decode the difference: " + std::to_string(l.recovered()) +
                " differences recovered and more remain; the sets differ by more than '" + a.table_file +
                "' was sized for (" + std::to_string(difference.cells()) +
                " cells): make a larger table (blume diff-sketch --differences N, with N above " +
                std::to_string(std::max<std::uint64_t>(l.recovered(), difference.cells())) + ")");
  // The keys here that the table's side lacks are named by hashing this side's keys again.
  std::vector<bool> named(l.only_there.size(), false);
  output out;
  const xxh3_hasher h(difference.seed());
  source.for_each_block([&](std::string_view block) {
    for_each_key(block, source.delimiter(), [&](std::string_view k) {
      if (k.empty()) return;
      const std::uint64_t id = hash_key(h, k).low;
      const auto at = std::lower_bound(l.only_there.begin(), l.only_there.end(), id);
      if (at == l.only_there.end() || *at != id) return;
      const auto i = static_cast<std::size_t>(at - l.only_there.begin());
      if (named[i]) return;
      named[i] = true;
      out.add("+");
      out.add(k);
      out.add(source.delimiter() == '\0' ? std::string_view("\0", 1) : std::string_view("\n"));
    });
  });
  for (const std::uint64_t id : l.only_here) {
    char hex[24];
    std::snprintf(hex, sizeof hex, "-%016" PRIx64 "\n", id);
    out.add(hex);
  }
  out.flush();
  std::fprintf(stderr,
               "reconciled: %zu keys of %s are missing from '%s' (+KEY); '%s' holds %zu keys not in %s, shown as "
               "their 64-bit digests (-DIGEST): only their side can name them\n",
               l.only_there.size(), describe(a.input).c_str(), a.table_file.c_str(), a.table_file.c_str(),
               l.only_here.size(), describe(a.input).c_str());
  return 0;
}

void add_input(CLI::App* verb, reconcile_args& a) {
  verb->add_option("--input", a.input, "keys, one per line (or NUL-separated with --format nul); - is standard input")
      ->capture_default_str();
  verb->add_option("--format", a.format, "lines or nul")->capture_default_str();
}

}  // namespace

void register_sketch(CLI::App& app, int& status) {
  const auto a = std::make_shared<reconcile_args>();
  CLI::App* verb = app.add_subcommand(
      "sketch", "A strata estimator of a key set (41 KB), for the other side's diff-sketch to size its table by");
  add_input(verb, *a);
  verb->add_option("--output", a->output, "the sketch file (- is standard output)")->required();
  add_force_flag(*verb, a->force);
  verb->add_option("--seed", a->seed, "hash seed; both sides must use the same")->capture_default_str();
  verb->callback([a, &status] { status = run_sketch(*a); });
}

void register_diff_sketch(CLI::App& app, int& status) {
  const auto a = std::make_shared<reconcile_args>();
  CLI::App* verb =
      app.add_subcommand("diff-sketch",
                         "An iblt of a key set sized for its difference from the set another side sketched");
  add_input(verb, *a);
  verb->add_option("--estimate", a->estimate, "the other side's sketch (blume sketch), to estimate the difference");
  verb->add_option("--differences", a->differences, "size the table for this many differences instead");
  verb->add_option("--output", a->output, "the table file (- is standard output)")->required();
  add_force_flag(*verb, a->force);
  verb->add_option("--seed", a->seed, "hash seed with --differences (a sketch brings its own)")->capture_default_str();
  verb->callback([a, &status] {
    if (a->estimate.empty() == !a->differences)
      throw invalid_argument("diff-sketch takes --estimate SKETCH or --differences N (one of them)");
    status = run_diff_sketch(*a);
  });
}

void register_reconcile(CLI::App& app, int& status) {
  const auto a = std::make_shared<reconcile_args>();
  CLI::App* verb = app.add_subcommand(
      "reconcile",
      "The difference between a key set and the set of an iblt (diff-sketch): +KEY for each key here that the "
      "table's side lacks, -DIGEST for each key only the table's side holds (this side cannot name those)");
  verb->add_option("table", a->table_file, "the other side's table (blume diff-sketch)")->required();
  add_input(verb, *a);
  verb->callback([a, &status] { status = run_reconcile(*a); });
}

}  // namespace blume::cli
