// blume-mpi: the distributed filters from the command line, run under mpirun. Every rank reads its share of
// the input files (a byte range of their concatenation, cut at line starts); rank 0 writes the output.
//
//   mpirun -np 4 blume-mpi dedup --input 'part-*.txt' [--approximate] [--stats] [--passes 0.2,0.01]
//   mpirun -np 4 blume-mpi build --input 'part-*.txt' --output users.blume [--kind split-block] [--fpr 0.01]
//   mpirun -np 4 blume-mpi query --filter users.blume --input 'queries-*.txt'
#include <glob.h>
#include <mpi.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "blume/blume.hpp"
#include "blume/distributed/duplicates.hpp"
#include "blume/distributed/replicate.hpp"

namespace {

using blume::distributed::place;

/// The files a pattern names, sorted (the order every rank agrees on); an error when there are none.
std::vector<std::string> expand(const std::string& pattern) {
  glob_t g{};
  const int rc = ::glob(pattern.c_str(), 0, nullptr, &g);
  std::vector<std::string> files;
  if (rc == 0)
    for (std::size_t i = 0; i < g.gl_pathc; ++i) files.emplace_back(g.gl_pathv[i]);
  ::globfree(&g);
  if (files.empty()) throw blume::io_error("no input file matches '" + pattern + "'");
  std::sort(files.begin(), files.end());
  return files;
}

/// This rank's lines: those whose first byte lies in its share [r·T/P, (r+1)·T/P) of the files'
/// concatenation (T bytes). Empty lines are not keys; a final line without a newline is one.
std::vector<std::string> read_share(const std::vector<std::string>& files, const place& where) {
  std::vector<std::uint64_t> sizes;
  std::uint64_t total = 0;
  for (const std::string& f : files) {
    std::ifstream in(f, std::ios::binary | std::ios::ate);
    if (!in) throw blume::io_error("cannot open '" + f + "'");
    sizes.push_back(static_cast<std::uint64_t>(in.tellg()));
    total += sizes.back();
  }
  const auto share = [&](int r) {
    return static_cast<std::uint64_t>((static_cast<blume::uint128_t>(total) * static_cast<unsigned>(r)) /
                                      static_cast<unsigned>(where.ranks));
  };
  const std::uint64_t begin = share(where.rank), end = share(where.rank + 1);
  std::vector<std::string> keys;
  std::uint64_t file_start = 0;
  for (std::size_t i = 0; i < files.size(); file_start += sizes[i], ++i) {
    if (file_start + sizes[i] <= begin || file_start >= end) continue;
    std::ifstream in(files[i], std::ios::binary);
    std::uint64_t at = begin > file_start ? begin - file_start : 0;
    if (at > 0) {  // start at the first line that begins at or after `at`
      in.seekg(static_cast<std::streamoff>(at - 1));
      std::string rest;
      std::getline(in, rest);
      at += rest.size();
    }
    std::string line;
    while (file_start + at < end && std::getline(in, line)) {
      at += line.size() + 1;
      if (!line.empty()) keys.push_back(line);
    }
  }
  return keys;
}

int run_dedup(const std::string& input, bool approximate, bool stats, const std::vector<double>& passes) {
  const place where = place::of(MPI_COMM_WORLD);
  const double start = MPI_Wtime();
  const std::vector<std::string> keys = read_share(expand(input), where);
  const double read_seconds = MPI_Wtime() - start;
  blume::distributed::duplicate_options options;
  options.exact = !approximate;
  options.pass_rates = passes;
  const auto result = blume::distributed::find_duplicates(MPI_COMM_WORLD, keys, options);
  std::vector<std::string> found = blume::distributed::gather_keys(MPI_COMM_WORLD, result.keys);
  found.erase(std::unique(found.begin(), found.end()), found.end());  // approximate: a key from several ranks
  if (stats) {
    std::uint64_t local_keys = keys.size(), all_keys = 0, candidates = result.candidates, all_candidates = 0;
    MPI_Reduce(&local_keys, &all_keys, 1, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Reduce(&candidates, &all_candidates, 1, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
    double slowest_read = 0;
    MPI_Reduce(&read_seconds, &slowest_read, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (where.rank == 0)
      std::fprintf(stderr, "%d ranks, %llu keys read in %.3f s; %llu candidates after the filter passes\n", where.ranks,
                   static_cast<unsigned long long>(all_keys), slowest_read,
                   static_cast<unsigned long long>(all_candidates));
    for (const auto& phase : result.phases) {
      std::uint64_t v[4] = {phase.keys, phase.sent_bytes, phase.raw_hash_bytes, phase.key_bytes};
      std::uint64_t sum[4] = {};
      double seconds = 0;
      MPI_Reduce(v, sum, 4, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
      MPI_Reduce(&phase.seconds, &seconds, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
      if (where.rank == 0) {
        const double per = sum[0] == 0 ? 0.0 : 8.0 / static_cast<double>(sum[0]);
        std::fprintf(stderr,
                     "%-14s %12llu keys  sent %14llu bytes (%.2f bits/key; 64-bit hashes %.0f, the keys %.1f)  "
                     "%.3f s\n",
                     phase.name.c_str(), static_cast<unsigned long long>(sum[0]),
                     static_cast<unsigned long long>(sum[1]), per * static_cast<double>(sum[1]),
                     per * static_cast<double>(sum[2]), per * static_cast<double>(sum[3]), seconds);
      }
    }
  }
  if (where.rank == 0) {
    std::string out;
    for (const std::string& k : found) out.append(k).push_back('\n');
    std::fwrite(out.data(), 1, out.size(), stdout);
    std::fflush(stdout);
  }
  return 0;
}

int run_build(const std::string& input, const std::string& output, const std::string& kind_name, double fpr) {
  const place where = place::of(MPI_COMM_WORLD);
  const std::vector<std::string> keys = read_share(expand(input), where);
  std::uint64_t total = keys.size();
  MPI_Allreduce(MPI_IN_PLACE, &total, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
  const std::optional<blume::filter_kind> kind = blume::parse_kind(kind_name);
  if (!kind) throw blume::invalid_argument("blume-mpi build: unknown kind '" + kind_name + "'");
  blume::any_filter filter = blume::make_filter(*kind, std::max<std::uint64_t>(total, 1), fpr);
  std::visit(
      [&](auto& f) {
        using F = std::decay_t<decltype(f)>;
        if constexpr (blume::bit_array_filter<F> && requires { F::from_parts(f.layout(), f.hasher(), {}, 0); }) {
          for (const std::string& k : keys) f.insert(k);
          blume::distributed::replicate(MPI_COMM_WORLD, f);
        } else {
          throw blume::invalid_argument("blume-mpi build: '" + kind_name +
                                        "' is not a bit-array kind (bloom, partitioned, blocked, split-block, "
                                        "counting, vi-counting), which the hypercube merges");
        }
      },
      filter);
  if (where.rank == 0) {
    blume::file_lock lock(output);
    blume::save_filter(filter, output, {total, fpr});
    std::fprintf(stderr, "%llu keys from %d ranks into '%s'\n", static_cast<unsigned long long>(total), where.ranks,
                 output.c_str());
  }
  return 0;
}

int run_query(const std::string& filter_path, const std::string& input) {
  const place where = place::of(MPI_COMM_WORLD);
  const blume::any_filter filter = blume::open_filter(filter_path);
  const std::vector<std::string> keys = read_share(expand(input), where);
  std::vector<std::string> lines;
  int absent = 0;
  std::visit(
      [&](const auto& f) {
        using F = std::decay_t<decltype(f)>;
        for (const std::string& k : keys) {
          const bool hit = f.contains(k);
          absent |= !hit;
          lines.push_back(k + (hit ? "\tmaybe" : (blume::forgets_v<F> ? "\tabsent" : "\tno")));
        }
      },
      filter);
  // Gathered in rank order, which is the files' order.
  const std::vector<std::string> out =
      blume::distributed::gather_keys(MPI_COMM_WORLD, lines, 0, blume::distributed::gathered::in_rank_order);
  MPI_Allreduce(MPI_IN_PLACE, &absent, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (where.rank == 0) {
    std::string text;
    for (const std::string& l : out) text.append(l).push_back('\n');
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fflush(stdout);
  }
  return absent;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  CLI::App app(
      "blume-mpi: distributed Bloom filters over MPI; run it under mpirun (every rank reads its share "
      "of the inputs, rank 0 writes the output)");
  app.require_subcommand(1);
  int status = 0;
  std::string input, output, filter, kind = "split-block";
  double fpr = 0.01;
  bool approximate = false, stats = false;
  std::vector<double> passes{0.01};

  CLI::App* dedup = app.add_subcommand(
      "dedup",
      "Print the keys (lines; empty lines are not keys) that occur more than once across all inputs, once each, "
      "sorted bytewise: what LC_ALL=C sort | uniq -d prints");
  dedup->add_option("--input", input, "input files, a glob pattern (quote it)")->required();
  dedup->add_flag("--approximate", approximate,
                  "skip the exact phase: print the filter's candidates (every duplicate, and unique keys at the "
                  "last pass's rate)");
  dedup->add_flag("--stats", stats, "each phase's keys, traffic and time on stderr");
  dedup
      ->add_option("--passes", passes,
                   "the rate of each filter pass, comma-separated (0.2,0.01: a cheap pass, then one on its survivors)")
      ->delimiter(',');
  dedup->callback([&] { status = run_dedup(input, approximate, stats, passes); });

  CLI::App* build = app.add_subcommand(
      "build", "Build one filter of the keys of all inputs (each rank its share, merged by hypercube exchange)");
  build->add_option("--input", input, "input files, a glob pattern (quote it)")->required();
  build->add_option("--output", output, "the filter file rank 0 writes (atomically)")->required();
  build->add_option("--kind", kind, "a bit-array kind (default split-block)");
  build->add_option("--fpr", fpr, "target false-positive rate (default 0.01)");
  build->callback([&] { status = run_build(input, output, kind, fpr); });

  CLI::App* query = app.add_subcommand(
      "query", "Look up the keys of the inputs (each rank its share) in a filter file; exit status 1 if one is absent");
  query->add_option("--filter", filter, "a blume filter file")->required();
  query->add_option("--input", input, "input files, a glob pattern (quote it)")->required();
  query->callback([&] { status = run_query(filter, input); });

  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = rank == 0 ? app.exit(e) : (e.get_exit_code() == 0 ? 0 : 2);
    MPI_Finalize();
    return code == 0 ? 0 : 2;
  } catch (const std::exception& e) {
    // The other ranks may be waiting in a collective this one will never reach: end them all.
    std::fprintf(stderr, "blume-mpi (rank %d): %s\n", rank, e.what());
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  MPI_Finalize();
  return status;
}
