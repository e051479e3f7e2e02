// SPDX-License-Identifier: Apache-2.0
// What the distributed filters send, measured under mpirun: for N e-mail-like keys (a share of them
// repeated), the bits per key of the Golomb-coded packets against 64-bit hashes and the keys themselves,
// for one insert into a partitioned filter at 1% and for duplicate detection (one pass, and the iterated
// variant), with each phase's time; the duplicates found are checked exactly against the truth, which the
// generator knows.
//
//   mpirun -np 4 blume-mpi-traffic [total keys, default 10M] [repeated share, default 0.01]
//
// Occurrence o < D is key o (D distinct keys); occurrence o ≥ D repeats key splitmix(o) mod D. Rank r takes
// the occurrences [r·N/P, (r+1)·N/P), so repeats land on any rank.
#include <mpi.h>

#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "blume/distributed/duplicates.hpp"
#include "blume/distributed/partitioned_filter.hpp"
#include "synthetic_keys.hpp"

namespace {

using blume::distributed::place;

std::string key_of(std::uint64_t id) {
  std::string s;
  blume::synthetic::append_email(id, s);
  return s;
}
/// The id back from a key: the base-36 digits between the first '.' and the first '_'.
std::uint64_t id_of(const std::string& key) {
  const std::size_t dot = key.find('.'), underscore = key.find('_');
  return std::strtoull(key.substr(dot + 1, underscore - dot - 1).c_str(), nullptr, 36);
}

struct totals {
  double keys = 0, sent = 0, raw = 0, key_bytes = 0, seconds = 0;
};
totals sum_phase(const blume::distributed::phase_stats& p) {
  double v[4] = {static_cast<double>(p.keys), static_cast<double>(p.sent_bytes), static_cast<double>(p.raw_hash_bytes),
                 static_cast<double>(p.key_bytes)};
  double s[4] = {};
  MPI_Allreduce(v, s, 4, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  double seconds = 0;
  MPI_Allreduce(&p.seconds, &seconds, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return {s[0], s[1], s[2], s[3], seconds};
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const place where = place::of(MPI_COMM_WORLD);
  const std::uint64_t n = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 10'000'000;
  const double repeated = argc > 2 ? std::strtod(argv[2], nullptr) : 0.01;
  const auto distinct = static_cast<std::uint64_t>(static_cast<double>(n) / (1 + repeated));
  const auto share = [&](int r) { return n / static_cast<std::uint64_t>(where.ranks) * static_cast<std::uint64_t>(r); };
  const std::uint64_t begin = share(where.rank), end = where.rank + 1 == where.ranks ? n : share(where.rank + 1);
  std::vector<std::string> keys;
  keys.reserve(end - begin);
  for (std::uint64_t o = begin; o < end; ++o)
    keys.push_back(key_of(o < distinct ? o : blume::synthetic::splitmix64(o) % distinct));
  const bool root = where.rank == 0;
  if (root)
    std::printf("%d ranks, %" PRIu64 " keys (%" PRIu64
                " distinct)\n\n| what | keys | bits/key sent | 64-bit hashes | "
                "the keys | time s |\n|---|---|---|---|---|---|\n",
                where.ranks, n, distinct);
  const auto row = [&](const char* what, const totals& t) {
    if (root)
      std::printf("| %s | %.0f | %.2f | %.0f | %.1f | %.3f |\n", what, t.keys, 8 * t.sent / t.keys, 8 * t.raw / t.keys,
                  8 * t.key_bytes / t.keys, t.seconds);
  };
  for (const bool blocked : {false, true}) {
    auto f = blocked ? blume::distributed::partitioned_filter<>::blocked_for_capacity(MPI_COMM_WORLD, n, 0.01)
                     : blume::distributed::partitioned_filter<>::for_capacity(MPI_COMM_WORLD, n, 0.01);
    MPI_Barrier(MPI_COMM_WORLD);
    const double start = MPI_Wtime();
    f.insert_many(keys);
    blume::distributed::phase_stats p;
    p.keys = f.last_traffic().items;
    p.sent_bytes = f.last_traffic().packet_bytes;
    p.raw_hash_bytes = f.last_traffic().raw_hash_bytes();
    for (const std::string& k : keys) p.key_bytes += k.size();
    p.seconds = MPI_Wtime() - start;
    char name[96];
    std::snprintf(name, sizeof name, "%s filter at 1%% (%.1f bits/key of memory): insert",
                  blocked ? "blocked" : "single-shot", static_cast<double>(f.global_bits()) / static_cast<double>(n));
    row(name, sum_phase(p));
  }
  // The truth: the ids some repeat chose.
  std::vector<bool> repeated_id;
  std::uint64_t truth = 0;
  if (root) {
    repeated_id.assign(distinct, false);
    for (std::uint64_t o = distinct; o < n; ++o) {
      const std::uint64_t id = blume::synthetic::splitmix64(o) % distinct;
      truth += !repeated_id[id];
      repeated_id[id] = true;
    }
  }
  for (const auto& rates : {std::vector<double>{0.01}, std::vector<double>{0.1, 0.01}}) {
    blume::distributed::duplicate_options options;
    options.pass_rates = rates;
    MPI_Barrier(MPI_COMM_WORLD);
    const double start = MPI_Wtime();
    const auto result = blume::distributed::find_duplicates(MPI_COMM_WORLD, keys, options);
    const double seconds = MPI_Wtime() - start;
    double slowest = 0;
    MPI_Allreduce(&seconds, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    totals all{};
    for (const auto& phase : result.phases) {
      const totals t = sum_phase(phase);
      const std::string name =
          "dedup (" + std::to_string(rates.size()) + " pass" + (rates.size() > 1 ? "es" : "") + "): " + phase.name;
      row(name.c_str(), t);
      all.sent += t.sent;
    }
    const std::vector<std::string> found = blume::distributed::gather_keys(MPI_COMM_WORLD, result.keys);
    if (root) {
      std::uint64_t right = 0;
      for (const std::string& k : found) right += repeated_id[id_of(k)];
      std::printf("| dedup (%zu pass%s): all phases | %" PRIu64 " | %.2f | 64 | | %.3f |\n", rates.size(),
                  rates.size() > 1 ? "es" : "", n, 8 * all.sent / static_cast<double>(n), slowest);
      std::printf("\n%zu duplicates found, %" PRIu64 " true, %" PRIu64 " of the found true: %s\n\n", found.size(),
                  truth, right, found.size() == truth && right == truth ? "exact" : "WRONG");
      if (found.size() != truth || right != truth) MPI_Abort(MPI_COMM_WORLD, 1);
    }
  }
  MPI_Finalize();
  return 0;
}
