// SPDX-License-Identifier: Apache-2.0
// blume_reconcile_bench: set reconciliation at n keys per side (10M by default) for several differences d:
// the bytes exchanged (B's sketch, then A's table) against shipping A's keys or a Bloom filter of them at
// 1%, the time of each step, and the decode success rate over many trials at the planned cells and at the
// asymptotic peeling thresholds. Prints a markdown table (docs/benchmarks.md, "Set reconciliation").
//
// One full-size exchange per d is timed and checked against the true difference. The trials rest on the
// fact that the keys both sides hold cancel exactly (cell-wise sums and XORs): A − B is, cell for cell, the
// table of the difference alone, which the full-size run checks; so each trial builds the sketches and the
// tables from d fresh differing keys under a fresh seed.
#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "blume/blume.hpp"
#include "synthetic_keys.hpp"

namespace {

using namespace blume;
using table = invertible_bloom_filter<>;
using clock_type = std::chrono::steady_clock;

double seconds_since(clock_type::time_point t0) {
  return std::chrono::duration<double>(clock_type::now() - t0).count();
}

/// The e-mail-like keys of indices [first, first + count), in one arena.
struct key_arena {
  std::vector<char> bytes;
  std::vector<std::uint32_t> ends;
  void add(std::uint64_t first, std::uint64_t count) {
    for (std::uint64_t i = first; i < first + count; ++i) {
      synthetic::append_email(i, bytes);
      ends.push_back(static_cast<std::uint32_t>(bytes.size()));
    }
  }
  std::string_view key(std::size_t i) const {
    const std::uint32_t start = i == 0 ? 0 : ends[i - 1];
    return {bytes.data() + start, ends[i] - start};
  }
  std::size_t size() const { return ends.size(); }
};

std::vector<std::uint64_t> ids_of(const key_arena& common, const key_arena& own, std::uint64_t seed) {
  const xxh3_hasher h(seed);
  std::vector<std::uint64_t> ids;
  ids.reserve(common.size() + own.size());
  for (std::size_t i = 0; i < common.size(); ++i) ids.push_back(hash_key(h, common.key(i)).low);
  for (std::size_t i = 0; i < own.size(); ++i) ids.push_back(hash_key(h, own.key(i)).low);
  return ids;
}

template <class T>
void insert_ids(T& t, const std::vector<std::uint64_t>& ids) {
  for (const std::uint64_t id : ids) t.insert(digest{id, 0});
}

std::uint64_t file_bytes(const table& t) { return header_size + t.cells() * table::cell_bytes; }

table at_threshold(std::uint64_t d, std::uint32_t k, std::uint64_t seed) {
  const auto cells = static_cast<std::uint64_t>(std::ceil(math::iblt_peeling_threshold(k) * static_cast<double>(d)));
  return table::with_geometry(std::max<std::uint64_t>((cells + k - 1) / k * k, k), k, 1, seed);
}

struct trial_counts {
  int protocol = 0, planned = 0, k3 = 0, k4 = 0;
  std::uint64_t protocol_cells = 0;
};

/// `trials` exchanges of d differences (half on each side), from the differing keys alone.
trial_counts run_trials(std::uint64_t d, int trials, std::mt19937_64& rng) {
  trial_counts c;
  for (int t = 0; t < trials; ++t) {
    const std::uint64_t seed = rng();
    std::vector<std::uint64_t> a_ids, b_ids;
    for (std::uint64_t i = 0; i < d; ++i) (i % 2 == 0 ? a_ids : b_ids).push_back(rng());
    strata_estimator<> sa(seed), sb(seed);
    insert_ids(sa, a_ids);
    insert_ids(sb, b_ids);
    const std::uint64_t plan = strata_estimator<>::differences_to_plan(sa.estimate(sb));
    const auto decodes = [&](table ta) {
      table tb = ta.empty_like();
      insert_ids(ta, a_ids);
      insert_ids(tb, b_ids);
      ta.subtract(tb);
      const iblt_listing l = ta.decode();
      return l.complete && l.recovered() == d;
    };
    const table protocol = table::for_difference(plan, seed);
    c.protocol_cells += protocol.cells();
    c.protocol += decodes(protocol);
    c.planned += decodes(table::for_difference(d, seed));
    c.k3 += decodes(at_threshold(d, 3, seed));
    c.k4 += decodes(at_threshold(d, 4, seed));
  }
  return c;
}

}  // namespace

int main(int argc, char** argv) {
  const std::uint64_t n = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 10'000'000;
  const int trials = argc > 2 ? std::atoi(argv[2]) : 100;
  std::vector<std::uint64_t> differences = {10, 1000, 100'000};
  if (argc > 3) {
    differences.clear();
    for (int i = 3; i < argc; ++i) differences.push_back(std::strtoull(argv[i], nullptr, 10));
  }
  const std::uint64_t bloom_bytes = header_size + plan_for(n, 0.01, bloom_filter<>::kind).bytes;
  std::printf("n = %" PRIu64 " keys per side, %d trials per d\n\n", n, trials);
  std::printf(
      "| d | estimate | planned for | sketch + table | keys of A | Bloom filter 1%% | B sketch | A sketch + estimate | "
      "A table | B table + subtract + decode | exact |\n|---|---|---|---|---|---|---|---|---|---|---|\n");
  std::vector<std::string> trial_rows;
  std::mt19937_64 rng(20261201);
  for (const std::uint64_t d : differences) {
    // A and B share n − d/2 keys and each holds d/2 of its own (d − d/2 for B).
    key_arena common, a_own, b_own;
    common.add(0, n - d / 2);
    a_own.add(n, d / 2);
    b_own.add(n + d, d - d / 2);
    const std::uint64_t key_bytes = common.bytes.size() + a_own.bytes.size() + n;  // and a newline each
    const std::uint64_t seed = xxh3_hasher::default_seed;

    auto t0 = clock_type::now();
    const std::vector<std::uint64_t> b_ids = ids_of(common, b_own, seed);
    strata_estimator<> sb(seed);
    insert_ids(sb, b_ids);
    const double b_sketch = seconds_since(t0);

    t0 = clock_type::now();
    const std::vector<std::uint64_t> a_ids = ids_of(common, a_own, seed);
    strata_estimator<> sa(seed);
    insert_ids(sa, a_ids);
    const difference_estimate e = sa.estimate(sb);
    const std::uint64_t plan = strata_estimator<>::differences_to_plan(e);
    const double a_sketch = seconds_since(t0);

    t0 = clock_type::now();
    table ta = table::for_difference(plan, seed);
    insert_ids(ta, a_ids);
    const double a_table = seconds_since(t0);

    t0 = clock_type::now();
    table tb = ta.empty_like();
    insert_ids(tb, b_ids);
    table diff = ta;
    diff.subtract(tb);
    const iblt_listing l = diff.decode();
    const double b_decode = seconds_since(t0);

    // Checked against the true difference, and A − B against the table of the differing keys alone.
    const std::vector<std::uint64_t> a_only = ids_of(key_arena{}, a_own, seed),
                                     b_only = ids_of(key_arena{}, b_own, seed);
    std::vector<std::uint64_t> sa_sorted = a_only, sb_sorted = b_only;
    std::sort(sa_sorted.begin(), sa_sorted.end());
    std::sort(sb_sorted.begin(), sb_sorted.end());
    const bool exact = l.complete && l.only_here == sa_sorted && l.only_there == sb_sorted;
    table only_b = ta.empty_like();
    insert_ids(only_b, b_only);
    table only_a = ta.empty_like();
    insert_ids(only_a, a_only);
    only_a.subtract(only_b);
    const bool same_cells = std::memcmp(to_bytes(only_a).data() + header_size, to_bytes(diff).data() + header_size,
                                        diff.cells() * table::cell_bytes) == 0;

    const std::uint64_t exchanged =
        header_size + strata_estimator<>::strata * strata_estimator<>::cells_per_stratum * table::cell_bytes +
        file_bytes(ta);
    std::printf("| %" PRIu64 " | %.0f%s | %" PRIu64 " (%" PRIu64 " cells, k = %u) | %" PRIu64 " | %" PRIu64
                " | %" PRIu64 " | %.3f s | %.3f s | %.3f s | %.3f s | %s%s |\n",
                d, e.estimate, e.exact ? " (exact)" : "", plan, ta.cells(), ta.hashes(), exchanged, key_bytes,
                bloom_bytes, b_sketch, a_sketch, a_table, b_decode, exact ? "yes" : "NO",
                same_cells ? "" : " (A − B differs from the difference's table!)");
    std::fflush(stdout);

    const trial_counts c = run_trials(d, trials, rng);
    char row[512];
    std::snprintf(row, sizeof row,
                  "| %" PRIu64 " | %d/%d (mean %.0f cells, %.2f per difference) | %d/%d (%" PRIu64
                  " cells, %.2f) | %d/%d (%" PRIu64 " cells) | %d/%d (%" PRIu64 " cells) |",
                  d, c.protocol, trials, static_cast<double>(c.protocol_cells) / trials,
                  static_cast<double>(c.protocol_cells) / trials / static_cast<double>(d), c.planned, trials,
                  table::for_difference(d).cells(),
                  static_cast<double>(table::for_difference(d).cells()) / static_cast<double>(d), c.k3, trials,
                  at_threshold(d, 3, 0).cells(), c.k4, trials, at_threshold(d, 4, 0).cells());
    trial_rows.push_back(row);
  }
  std::printf(
      "\n| d | protocol: sketch estimate → planned table | planned for the true d | 1.222·d, k = 3 | 1.295·d, k = 4 |\n"
      "|---|---|---|---|---|\n");
  for (const std::string& r : trial_rows) std::printf("%s\n", r.c_str());
  return 0;
}
