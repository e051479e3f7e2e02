// SPDX-License-Identifier: Apache-2.0
// blume-mpi: the distributed filters from the command line, run under mpirun. Every rank reads its share of
// the input files (a byte range of their concatenation, cut at line starts); rank 0 writes the output.
// Before any rank reads, the ranks check that they all see the same input files (input.hpp) and refuse,
// exit status 2, when they do not.
//
//   mpirun -np 4 blume-mpi dedup --input 'part-*.txt' [--approximate] [--stats] [--passes 0.2,0.01]
//                                 [--input-check sampled|full]
//   mpirun -np 4 blume-mpi build --input 'part-*.txt' --output users.blume [--kind split-block] [--fpr 0.01]
//   mpirun -np 4 blume-mpi query --filter users.blume --input 'queries-*.txt'
//   mpirun -np 2 blume-mpi aggregate --peers 10000 [--fpr 0.01] [--change-at R --leave-at R --share 0.1] [--every K]
#include <mpi.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include <unistd.h>

#include "blume/blume.hpp"
#include "blume/distributed/aggregate.hpp"
#include "blume/distributed/duplicates.hpp"
#include "blume/distributed/replicate.hpp"
#include "input.hpp"

namespace {

using blume::distributed::place;
using blume_mpi::input_check;
using blume_mpi::refusal;

/// Every rank's agreed inputs, its share of them read, and the inputs checked unchanged after the read.
std::vector<std::string> read_agreed_share(const std::string& pattern, input_check check,
                                           const std::vector<std::string>& also = {}) {
  const place where = place::of(MPI_COMM_WORLD);
  const std::vector<blume_mpi::input_file> files = blume_mpi::agree_on_inputs(MPI_COMM_WORLD, pattern, also, check);
  std::vector<std::string> keys = blume_mpi::read_share(files, where);
  blume_mpi::check_unchanged(MPI_COMM_WORLD, files);
  return keys;
}

int run_dedup(const std::string& input, input_check check, bool approximate, bool stats,
              const std::vector<double>& passes) {
  const place where = place::of(MPI_COMM_WORLD);
  const double start = MPI_Wtime();
  const std::vector<std::string> keys = read_agreed_share(input, check);
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

int run_build(const std::string& input, input_check check, const std::string& output, const std::string& kind_name,
              double fpr) {
  const place where = place::of(MPI_COMM_WORLD);
  const std::vector<std::string> keys = read_agreed_share(input, check);
  std::uint64_t total = keys.size();
  MPI_Allreduce(MPI_IN_PLACE, &total, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
  // Every rank has the same total, so all refuse together. A filter planned for no keys has no design.
  if (total == 0)
    throw refusal("no keys in input '" + input + "' (its files are empty, or hold only empty lines, which are not " +
                  "keys): nothing to build a filter of");
  const std::optional<blume::filter_kind> kind = blume::parse_kind(kind_name);
  if (!kind) throw blume::invalid_argument("blume-mpi build: unknown kind '" + kind_name + "'");
  blume::any_filter filter = blume::make_filter(*kind, total, fpr);
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

int run_query(const std::string& filter_path, const std::string& input, input_check check) {
  const place where = place::of(MPI_COMM_WORLD);
  // The filter too: ranks that answer from different filters answer for different sets.
  const std::vector<std::string> keys = read_agreed_share(input, check, {filter_path});
  const blume::any_filter filter = blume::open_filter(filter_path);
  std::vector<std::string> lines;
  int absent = 0;
  std::visit(
      [&](const auto& f) {
        using F = std::decay_t<decltype(f)>;
        if constexpr (!blume::answers_keys<F>) {
          throw blume::invalid_argument("a " + std::string(F::name) + " filter scores vectors, not keys");
        } else {
          for (const std::string& k : keys) {
            const bool hit = f.contains(k);
            absent |= !hit;
            lines.push_back(k + (hit ? "\tmaybe" : (blume::forgets_v<F> ? "\tabsent" : "\tno")));
          }
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

struct aggregate_options {
  blume::distributed::gossip_options gossip;
  std::uint64_t change_at = 0, leave_at = 0, max_rounds = 100000, every = 1;
  double share = 0.1;
  bool summary = false;  // one markdown row at the end, no table of rounds
};

/// A value in [0, 100) drawn from (seed, peer, draw): the same on every rank.
double value_of(std::uint64_t seed, std::uint64_t peer, std::uint64_t draw) {
  const std::uint64_t h = blume::detail::splitmix64_mix(seed ^ blume::detail::splitmix64_mix(peer * 4 + draw + 1));
  return 100.0 * static_cast<double>(h >> 11) / 9007199254740992.0;
}

/// Whether peer i is among the `share` that change or leave: drawn from (seed, peer), the same on every rank.
bool chosen(std::uint64_t seed, std::uint64_t peer, std::uint64_t draw, double share) {
  return value_of(seed, peer, draw) < 100.0 * share;
}

/// DIAS's state is quadratic: every peer ends up with filters for every other. A run whose peers' filters would
/// not fit in the memory of the node that holds them is refused before anything is allocated (one peer's
/// filters, allocated to measure them, are a fraction of the whole). Every rank agrees, so all refuse together.
void refuse_beyond_memory(const blume::distributed::gossip_options& g, const place& where) {
  const double per_peer = static_cast<double>(blume::aggregation::dias_peer(0, 0.0, g.filters).filter_bytes());
  MPI_Comm node = MPI_COMM_NULL;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, where.rank, MPI_INFO_NULL, &node);
  int node_ranks = 1;
  MPI_Comm_size(node, &node_ranks);
  MPI_Comm_free(&node);
  const double block = std::ceil(static_cast<double>(g.peers) / where.ranks);
  const double memory = static_cast<double>(sysconf(_SC_PHYS_PAGES)) * static_cast<double>(sysconf(_SC_PAGE_SIZE));
  double need[2] = {per_peer * block * node_ranks / memory, per_peer * block * node_ranks};
  MPI_Allreduce(MPI_IN_PLACE, need, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  if (need[0] > 0.8) {
    char text[400];
    std::snprintf(text, sizeof text,
                  "%llu peers need %.3g GB of filters on one node (%.0f bytes per peer: every peer keeps filters "
                  "for all %llu), more than 80%% of its %.3g GB of memory; use fewer peers, a higher --fpr or more "
                  "nodes",
                  static_cast<unsigned long long>(g.peers), need[1] / 1e9, per_peer,
                  static_cast<unsigned long long>(g.peers), need[1] / need[0] / 1e9);
    throw refusal(text);
  }
}

/// Gossip rounds until every peer's aggregates are exact after the last scheduled event (or until no value is newly
/// counted or replaced for long enough, when the filters' false positives keep some values out for good),
/// printing the errors per round as a markdown table, then a summary.
int run_aggregate(const aggregate_options& o) {
  const place where = place::of(MPI_COMM_WORLD);
  const std::uint64_t seed = o.gossip.seed;
  refuse_beyond_memory(o.gossip, where);
  blume::distributed::gossip_aggregation net(MPI_COMM_WORLD, o.gossip,
                                             [&](std::uint64_t i) { return value_of(seed, i, 0); });
  // Every format is a literal of this function; a text without arguments goes out as it is.
  const auto print = [&](const char* format, auto... args) {
    if (where.rank != 0) return;
    if constexpr (sizeof...(args) == 0) {
      std::fputs(format, stdout);
    } else {
      std::printf(format, args...);
    }
  };
  const auto& g = o.gossip;
  const auto table = [&](const char* format, auto... args) {
    if (!o.summary) print(format, args...);
  };
  table("%llu peers over %d ranks, %u pushes per peer a round among %u sampled, filters for %llu entries at %g",
        static_cast<unsigned long long>(g.peers), where.ranks, g.pushes, g.sampled,
        static_cast<unsigned long long>(g.filters.peers), g.filters.fpr);
  if (o.change_at != 0)
    table("; %g%% of the values change at round %llu", 100 * o.share, static_cast<unsigned long long>(o.change_at));
  if (o.leave_at != 0)
    table("; %g%% of the peers leave at round %llu", 100 * o.share, static_cast<unsigned long long>(o.leave_at));
  table(
      ".\n\n| round | SUM error (mean / max) | COUNT | AVERAGE | MIN | MAX | bytes per peer | exact |\n"
      "|--:|--:|--:|--:|--:|--:|--:|:-:|\n");
  const std::uint64_t last_event = std::max(o.change_at, o.leave_at);
  std::uint64_t exact_at = 0, settled_at = 0, quiet = 0, within_at = 0, last_counted = 0;
  double bytes = 0;
  blume::distributed::round_report r;
  for (std::uint64_t round = 1; round <= o.max_rounds; ++round) {
    if (round == o.change_at)
      for (std::uint64_t i = 0; i < g.peers; ++i)
        if (chosen(seed, i, 1, o.share)) net.change(i, value_of(seed, i, 2));
    if (round == o.leave_at)
      for (std::uint64_t i = 0; i < g.peers; ++i)
        if (chosen(seed, i, 3, o.share)) net.leave(i);
    r = net.round();
    bytes += r.bytes_per_peer;
    // Settled: no value newly counted or replaced for as many rounds as a disseminator takes to push to every
    // peer once more, which is also what MIN and MAX need to be rebuilt after a removal.
    if (r.outcomes[0] + r.outcomes[1] != 0) last_counted = round;
    // Within 1%: every aggregate of every peer present, for the first time since the last scheduled event.
    const double worst = std::max({r.sum.max, r.count.max, r.average.max, r.min.max, r.max.max});
    if (round < last_event || worst > 0.01) within_at = 0;
    else if (within_at == 0) within_at = round;
    quiet = r.outcomes[0] + r.outcomes[1] == 0 && round > last_event ? quiet + 1 : 0;
    const bool settled = quiet >= 2 * g.peers / g.pushes + 1;
    const bool last = (r.exact || settled) && round >= last_event;
    if (round % o.every == 0 || round == o.change_at || round == o.leave_at || last)
      table("| %llu | %.2e / %.2e | %.2e / %.2e | %.2e / %.2e | %.2e / %.2e | %.2e / %.2e | %.0f | %s |\n",
            static_cast<unsigned long long>(round), r.sum.mean, r.sum.max, r.count.mean, r.count.max, r.average.mean,
            r.average.max, r.min.mean, r.min.max, r.max.mean, r.max.max, r.bytes_per_peer, r.exact ? "yes" : "no");
    if (last) {
      (r.exact ? exact_at : settled_at) = round;
      break;
    }
  }
  // The filters' bias: the share of values never counted, against its model (aggregation::expected_shortfall).
  std::uint64_t missing = 0, filter_bytes = 0, counted_peers = 0;
  const auto e = net.exact();
  for (const auto& p : net.local_peers()) {
    filter_bytes += p.filter_bytes();
    if (p.has_left()) continue;
    missing += static_cast<std::uint64_t>(std::max<std::int64_t>(0, e.count - p.aggregate().count));
    ++counted_peers;
  }
  MPI_Allreduce(MPI_IN_PLACE, &missing, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &filter_bytes, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &counted_peers, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
  const auto plan = blume::bloom_filter<>::plan(g.filters.peers, g.filters.fpr);
  const double model =
      blume::aggregation::expected_shortfall(static_cast<double>(g.peers), static_cast<double>(plan.bits), plan.hashes);
  const double lost = 100.0 * static_cast<double>(missing) /
                      (static_cast<double>(counted_peers) * static_cast<double>(std::max<std::int64_t>(e.count, 1)));
  const std::uint64_t rounds = exact_at != 0 ? exact_at : settled_at != 0 ? settled_at : o.max_rounds;
  const double per_round = bytes / static_cast<double>(std::max<std::uint64_t>(r.round, 1));
  const double filters = static_cast<double>(filter_bytes) / static_cast<double>(g.peers);
  if (o.summary) {
    // | peers | pushes | rate | rounds to 1% | last counted | rounds | exact | bytes per peer a round | in all |
    // filter bytes per peer | lost | model |
    const std::string within = within_at != 0 ? std::to_string(within_at) : "never";
    print("| %llu | %u | %g | %s | %llu | %llu | %s | %.0f | %.0f | %.0f | %.3g%% | %.3g%% |\n",
          static_cast<unsigned long long>(g.peers), g.pushes, g.filters.fpr, within.c_str(),
          static_cast<unsigned long long>(last_counted), static_cast<unsigned long long>(rounds),
          exact_at != 0 ? "yes" : "no", per_round, bytes, filters, lost, 100.0 * model);
  } else {
    print(
        "\nEvery aggregate within 1%% of exact from round %s; the last value newly counted at round %llu.\n"
        "%s after %llu rounds; %.0f bytes per peer sent in all (%.0f a round); filters %.0f bytes per peer; "
        "values never counted: %.3g%% of the pairs (model of the filters' bias %.3g%%); outcomes of the last "
        "round: %llu first, %llu replaced, %llu already counted, %llu unsuccessful.\n",
        within_at != 0 ? std::to_string(within_at).c_str() : "no round", static_cast<unsigned long long>(last_counted),
        exact_at != 0     ? "Exact"
        : settled_at != 0 ? "Settled (no value newly counted)"
                          : "Stopped",
        static_cast<unsigned long long>(rounds), bytes, per_round, filters, lost, 100.0 * model,
        static_cast<unsigned long long>(r.outcomes[0]), static_cast<unsigned long long>(r.outcomes[1]),
        static_cast<unsigned long long>(r.outcomes[2]), static_cast<unsigned long long>(r.outcomes[3]));
  }
  if (where.rank == 0) std::fflush(stdout);
  return exact_at != 0 || settled_at != 0 ? 0 : 1;
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
  std::string check = "sampled";
  // Every verb reads a share of the same inputs on every rank, so each checks that the ranks agree on them.
  const auto add_input = [&](CLI::App* verb) {
    verb->add_option("--input", input, "input files, a glob pattern (quote it)")->required();
    verb->add_option("--input-check", check,
                     "how the ranks check that they see the same input files before reading them: each file's size "
                     "and the XXH3-64 of 16 blocks of 64 KiB spread over it (sampled, the default: at most 1 MiB "
                     "read per file), or of every byte (full: one more read of all the input on every rank)")
        ->check(CLI::IsMember({"sampled", "full"}));
  };
  const auto checked = [&] { return check == "full" ? input_check::full : input_check::sampled; };

  CLI::App* dedup = app.add_subcommand(
      "dedup",
      "Print the keys (lines; empty lines are not keys) that occur more than once across all inputs, once each, "
      "sorted bytewise: what LC_ALL=C sort | uniq -d prints");
  add_input(dedup);
  dedup->add_flag("--approximate", approximate,
                  "skip the exact phase: print the filter's candidates (every duplicate, and unique keys at the "
                  "last pass's rate)");
  dedup->add_flag("--stats", stats, "each phase's keys, traffic and time on stderr");
  dedup
      ->add_option("--passes", passes,
                   "the rate of each filter pass, comma-separated (0.2,0.01: a cheap pass, then one on its survivors)")
      ->delimiter(',');
  dedup->callback([&] { status = run_dedup(input, checked(), approximate, stats, passes); });

  CLI::App* build = app.add_subcommand(
      "build", "Build one filter of the keys of all inputs (each rank its share, merged by hypercube exchange)");
  add_input(build);
  build->add_option("--output", output, "the filter file rank 0 writes (atomically)")->required();
  build->add_option("--kind", kind, "a bit-array kind (default split-block)");
  build->add_option("--fpr", fpr, "target false-positive rate (default 0.01)");
  build->callback([&] { status = run_build(input, checked(), output, kind, fpr); });

  CLI::App* query = app.add_subcommand(
      "query", "Look up the keys of the inputs (each rank its share) in a filter file; exit status 1 if one is absent");
  query->add_option("--filter", filter, "a blume filter file")->required();
  add_input(query);
  query->callback([&] { status = run_query(filter, input, checked()); });

  aggregate_options agg;
  CLI::App* aggregate = app.add_subcommand(
      "aggregate",
      "Decentralised aggregation: simulated peers spread over the ranks gossip their values until each one's SUM, "
      "COUNT, AVERAGE, MIN and MAX are exact, with Bloom filters of what each has counted so that none counts a "
      "value twice (DIAS); prints the errors per round, then the rounds, the traffic and the filters' bias");
  aggregate->add_option("--peers", agg.gossip.peers, "the number of peers (default 1000)")
      ->check(CLI::Range(2, 1000000));
  aggregate->add_option("--pushes", agg.gossip.pushes, "pushes per peer a round (default 4)")
      ->check(CLI::Range(1, 1000));
  aggregate->add_option("--sampled", agg.gossip.sampled, "peers the sampling offers per push (default 15)")
      ->check(CLI::Range(1, 1000));
  aggregate->add_option("--fpr", agg.gossip.filters.fpr, "the filters' rate when full (default 0.01)")
      ->check(CLI::Range(1e-12, 0.5));
  aggregate->add_option("--change-at", agg.change_at, "the round at which --share of the values change (0: none)");
  aggregate->add_option("--leave-at", agg.leave_at, "the round at which --share of the peers leave (0: none)");
  aggregate->add_option("--share", agg.share, "the share of values that change and of peers that leave (default 0.1)")
      ->check(CLI::Range(0.0, 0.9));
  aggregate->add_option("--max-rounds", agg.max_rounds, "stop after this many rounds (default 100000)");
  aggregate->add_option("--every", agg.every, "print every this many rounds (default 1)")
      ->check(CLI::Range(1, 1000000));
  aggregate->add_option("--seed", agg.gossip.seed, "the values' and the samples' seed (default 1)");
  aggregate->add_flag("--summary", agg.summary,
                      "print one markdown row at the end (peers, pushes, rate, rounds until every aggregate is within "
                      "1%, round of the last value newly counted, rounds, exact, bytes per peer a round and in all, "
                      "filter bytes per peer, values never counted and the model's share) instead of the table of "
                      "rounds");
  aggregate->callback([&] {
    agg.gossip.filters.peers = agg.gossip.peers;
    status = run_aggregate(agg);
  });

  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = rank == 0 ? app.exit(e) : (e.get_exit_code() == 0 ? 0 : 2);
    MPI_Finalize();
    return code == 0 ? 0 : 2;
  } catch (const refusal& e) {
    if (rank == 0) std::fprintf(stderr, "blume-mpi: %s\n", e.what());
    MPI_Finalize();
    return 2;
  } catch (const std::exception& e) {
    // The other ranks may be waiting in a collective this one will never reach: end them all.
    std::fprintf(stderr, "blume-mpi (rank %d): %s\n", rank, e.what());
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  MPI_Finalize();
  return status;
}
