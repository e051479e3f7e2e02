// SPDX-License-Identifier: Apache-2.0
// The distributed filters, run by mpirun on several ranks (every rank runs every test, and each test's
// collectives in the same order). Each rank derives the whole data set from the same seed, so it can check
// the distributed result against what one PE would compute from all the keys.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "blume/blume.hpp"
#include "blume/distributed/aggregate.hpp"
#include "blume/distributed/duplicates.hpp"
#include "blume/distributed/partitioned_filter.hpp"
#include "blume/distributed/replicate.hpp"

namespace {

using blume::distributed::partitioned_filter;
using blume::distributed::place;

constexpr std::uint64_t splitmix(std::uint64_t x) noexcept {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}
std::uint64_t present(std::uint64_t i) { return splitmix(i); }
std::uint64_t absent(std::uint64_t i) { return splitmix(i | (std::uint64_t{1} << 62)); }

/// Keys i in [0, n) with i mod P = rank: this rank's share.
std::vector<std::uint64_t> share(std::uint64_t n, const place& where, std::uint64_t (*key)(std::uint64_t)) {
  std::vector<std::uint64_t> keys;
  for (std::uint64_t i = static_cast<std::uint64_t>(where.rank); i < n; i += static_cast<std::uint64_t>(where.ranks))
    keys.push_back(key(i));
  return keys;
}

// Every rank's slice is exactly the bits one PE would set from all the keys, every key of every rank is
// found from any rank, and absent keys are false positives at 1 − e^{−n/s}.
TEST(PartitionedFilter, HoldsExactlyTheBitsOfAllKeysAndMeetsItsRate) {
  const place where = place::of(MPI_COMM_WORLD);
  constexpr std::uint64_t n = 200'000;
  auto f = partitioned_filter<>::for_capacity(MPI_COMM_WORLD, n, 0.01);
  f.insert_many(share(n, where, present));
  std::vector<std::uint64_t> expected(f.local_bits() / 64, 0);
  for (std::uint64_t i = 0; i < n; ++i) {
    const std::uint64_t bit = f.position(present(i));
    if (bit >= f.first_bit() && bit < f.first_bit() + f.local_bits()) {
      const std::uint64_t local = bit - f.first_bit();
      expected[local / 64] |= std::uint64_t{1} << (local % 64);
    }
  }
  EXPECT_TRUE(std::equal(expected.begin(), expected.end(), f.local_words().begin()));
  // This rank asks for the next rank's keys (all of them present) and for absent keys.
  const place next{(where.rank + 1) % where.ranks, where.ranks};
  const std::vector<std::uint8_t> found = f.contains_many(share(n, next, present));
  for (std::size_t i = 0; i < found.size(); ++i) ASSERT_EQ(found[i], 1) << "key " << i;
  const std::vector<std::uint64_t> probes = share(2'000'000, where, absent);
  const std::vector<std::uint8_t> answers = f.contains_many(probes);
  std::uint64_t hits = 0;
  for (const std::uint8_t a : answers) hits += a;
  std::uint64_t all_hits = hits, all_probes = probes.size();
  MPI_Allreduce(MPI_IN_PLACE, &all_hits, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &all_probes, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
  const double p = f.predicted_fpr(static_cast<double>(n));
  const double expected_hits = p * static_cast<double>(all_probes);
  EXPECT_NEAR(static_cast<double>(all_hits), expected_hits,
              3.29 * std::sqrt(expected_hits * (1 - p)) + 0.03 * expected_hits + 1)
      << "measured " << static_cast<double>(all_hits) / static_cast<double>(all_probes) << " against " << p;
}

// The blocked option: every key of every rank found, absent keys at the blocked filter's rate, in a tenth
// of the single-shot filter's memory.
TEST(PartitionedFilter, BlockedOptionFindsEveryKeyAndMeetsTheBlockedRate) {
  const place where = place::of(MPI_COMM_WORLD);
  constexpr std::uint64_t n = 200'000;
  auto f = partitioned_filter<>::blocked_for_capacity(MPI_COMM_WORLD, n, 0.01);
  EXPECT_GT(f.probes(), 1u);
  EXPECT_LT(f.global_bits(), 12 * n);
  f.insert_many(share(n, where, present));
  const place next{(where.rank + 1) % where.ranks, where.ranks};
  const std::vector<std::uint8_t> found = f.contains_many(share(n, next, present));
  for (std::size_t i = 0; i < found.size(); ++i) ASSERT_EQ(found[i], 1) << "key " << i;
  const std::vector<std::uint8_t> answers = f.contains_many(share(2'000'000, where, absent));
  std::uint64_t hits = 0, probes = answers.size();
  for (const std::uint8_t a : answers) hits += a;
  MPI_Allreduce(MPI_IN_PLACE, &hits, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &probes, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
  const double p = f.predicted_fpr(static_cast<double>(n));
  const double expected = p * static_cast<double>(probes);
  EXPECT_NEAR(static_cast<double>(hits), expected, 3.29 * std::sqrt(expected * (1 - p)) + 0.03 * expected + 1);
  EXPECT_LE(p, 0.0101);
}

// A key is one Golomb code on the wire: a rank's n/P keys lie among s positions, so about log2(e·s·P/n)
// bits each, far below a 64-bit hash.
TEST(PartitionedFilter, SendsAboutLog2OfETimesBitsPerLocalKeyPerKey) {
  const place where = place::of(MPI_COMM_WORLD);
  constexpr std::uint64_t n = 400'000;
  auto f = partitioned_filter<>::for_capacity(MPI_COMM_WORLD, n, 0.01);
  f.insert_many(share(n, where, present));
  const double bits_per_key =
      8.0 * static_cast<double>(f.last_traffic().packet_bytes) / static_cast<double>(f.last_traffic().items);
  const double ideal = std::log2(std::exp(1.0) * static_cast<double>(f.global_bits()) * where.ranks / n);
  EXPECT_GT(bits_per_key, ideal - 0.5);
  EXPECT_LT(bits_per_key, ideal + 0.5) << "packets of " << f.last_traffic().items << " keys";
}

TEST(PartitionedFilter, RanksThatDisagreeOnTheSizeAreRefusedOnEveryRank) {
  const place where = place::of(MPI_COMM_WORLD);
  if (where.ranks == 1) GTEST_SKIP() << "needs two ranks";
  EXPECT_THROW(partitioned_filter<>(MPI_COMM_WORLD, 1000 + static_cast<std::uint64_t>(where.rank)),
               blume::invalid_argument);
  EXPECT_THROW(partitioned_filter<>(MPI_COMM_WORLD, 1000, 1 + static_cast<std::uint32_t>(where.rank % 2)),
               blume::invalid_argument);
}

// The hypercube leaves on every rank the filter one PE builds from all keys, bit for bit: for bit arrays
// (OR) and for counting filters (sums).
template <class F>
void replicated_equals_one_filter_of_all_keys(F local, F whole) {
  const place where = place::of(MPI_COMM_WORLD);
  constexpr std::uint64_t n = 100'000;
  for (const std::uint64_t k : share(n, where, present)) local.insert(k);
  for (std::uint64_t i = 0; i < n; ++i) whole.insert(present(i));
  blume::distributed::replicate(MPI_COMM_WORLD, local);
  EXPECT_TRUE(local == whole) << "rank " << where.rank << " of " << where.ranks;
  EXPECT_EQ(local.inserted(), n);
}
TEST(Replicate, SplitBlockFilterEqualsTheFilterOfAllKeys) {
  using F = blume::split_block_bloom_filter<>;
  replicated_equals_one_filter_of_all_keys(F(100'000, 0.01), F(100'000, 0.01));
}
TEST(Replicate, CountingFilterEqualsTheFilterOfAllKeys) {
  using F = blume::counting_bloom_filter<4>;
  replicated_equals_one_filter_of_all_keys(F(100'000, 0.01), F(100'000, 0.01));
}
TEST(Replicate, FiltersOfOtherGeometriesAreRefusedOnEveryRank) {
  const place where = place::of(MPI_COMM_WORLD);
  if (where.ranks == 1) GTEST_SKIP() << "needs two ranks";
  blume::split_block_bloom_filter<> f(1000 + 1000 * static_cast<std::uint64_t>(where.rank), 0.01);
  EXPECT_THROW(blume::distributed::replicate(MPI_COMM_WORLD, f), blume::invalid_argument);
}

// A data set with duplicates inside one rank, across ranks and many times over; every rank derives it
// and checks the gathered answer against a sort of all the keys (what sort | uniq -d prints).
struct dedup_data {
  std::vector<std::string> mine;
  std::vector<std::string> duplicates;  // the truth, sorted
  std::uint64_t unique = 0;             // keys occurring once, in all
  std::uint64_t total = 0;              // keys with their repeats, in all
};
dedup_data make_dedup_data(const place& where) {
  constexpr std::uint64_t n = 60'000;
  std::vector<std::pair<std::string, int>> all;  // key, rank holding this copy
  for (std::uint64_t i = 0; i < n; ++i) {
    const std::string key = "user" + std::to_string(splitmix(i) % 1'000'000'000) + "@example.com";
    const int copies = i % 10 == 0 ? 2 : (i % 97 == 0 ? 5 : 1);
    for (int c = 0; c < copies; ++c) all.emplace_back(key, static_cast<int>(splitmix(i * 7 + c) % where.ranks));
  }
  dedup_data d;
  std::vector<std::string> keys;
  for (const auto& [key, rank] : all) {
    if (rank == where.rank) d.mine.push_back(key);
    keys.push_back(key);
  }
  std::sort(keys.begin(), keys.end());
  d.total = keys.size();
  for (std::size_t j = 0; j < keys.size();) {
    std::size_t k = j + 1;
    while (k < keys.size() && keys[k] == keys[j]) ++k;
    if (k - j > 1) d.duplicates.push_back(keys[j]);
    else ++d.unique;
    j = k;
  }
  return d;
}

TEST(Duplicates, TheExactPhaseFindsExactlyTheDuplicates) {
  const place where = place::of(MPI_COMM_WORLD);
  const dedup_data d = make_dedup_data(where);
  for (const auto& rates : {std::vector<double>{0.01}, std::vector<double>{0.2, 0.01}}) {
    blume::distributed::duplicate_options options;
    options.pass_rates = rates;
    const auto result = blume::distributed::find_duplicates(MPI_COMM_WORLD, d.mine, options);
    const std::vector<std::string> found = blume::distributed::gather_keys(MPI_COMM_WORLD, result.keys);
    if (where.rank == 0) {
      EXPECT_EQ(found, d.duplicates) << rates.size() << " pass(es)";
    }
  }
}

// Without the exact phase: every duplicate is reported, and unique keys at about the filter's rate.
TEST(Duplicates, ApproximateCandidatesHoldEveryDuplicateAndUniqueKeysAtTheRate) {
  const place where = place::of(MPI_COMM_WORLD);
  const dedup_data d = make_dedup_data(where);
  blume::distributed::duplicate_options options;
  options.pass_rates = {0.05};
  options.exact = false;
  const auto result = blume::distributed::find_duplicates(MPI_COMM_WORLD, d.mine, options);
  std::vector<std::string> found = blume::distributed::gather_keys(MPI_COMM_WORLD, result.keys);
  found.erase(std::unique(found.begin(), found.end()), found.end());
  if (where.rank == 0) {
    EXPECT_TRUE(std::includes(found.begin(), found.end(), d.duplicates.begin(), d.duplicates.end()));
    const double flagged = static_cast<double>(found.size() - d.duplicates.size());
    // A unique key is flagged when another key lands on its position: 1 − e^{−D/s} for D distinct keys,
    // where s was sized for 5% at N keys with repeats (1 − e^{−N/s} = 5%).
    const double distinct = static_cast<double>(d.unique + d.duplicates.size());
    const double rate = 1 - std::pow(0.95, distinct / static_cast<double>(d.total));
    const double expected = rate * static_cast<double>(d.unique);
    EXPECT_NEAR(flagged, expected, 3.29 * std::sqrt(expected) + 0.05 * expected) << "of " << d.unique;
  }
}

// Gossip aggregation with peers spread over the ranks: every aggregate of every peer becomes exact, follows values
// that change and peers that leave, and no peer ever counts more values than there are peers.
TEST(GossipAggregation, EveryPeerReachesTheExactAggregatesAndFollowsChangesAndDepartures) {
  blume::distributed::gossip_options o;
  o.peers = 150;
  o.filters = {256, 1e-9};
  blume::distributed::gossip_aggregation net(MPI_COMM_WORLD, o,
                                             [](std::uint64_t i) { return 0.5 * static_cast<double>(i % 97); });
  const auto converge = [&](const char* phase) {
    for (int r = 0; r < 600; ++r) {
      const auto report = net.round();
      for (const auto& p : net.local_peers()) {
        if (!p.has_left()) {
          EXPECT_LE(p.aggregate().count, 150) << phase;
        }
      }
      if (report.exact) return report.round;
    }
    ADD_FAILURE() << phase << ": not exact after 600 rounds";
    return std::uint64_t{0};
  };
  EXPECT_GT(converge("start"), 0u);
  for (std::uint64_t i = 0; i < 150; i += 10) net.change(i, 100.0 + static_cast<double>(i));  // a new MAX too
  EXPECT_GT(converge("after changes"), 0u);
  for (std::uint64_t i = 5; i < 150; i += 10) net.leave(i);
  EXPECT_EQ(net.present(), 135u);
  EXPECT_GT(converge("after departures"), 0u);
  const auto exact = net.exact();
  EXPECT_EQ(exact.count, 135);
  for (const auto& p : net.local_peers()) {
    if (!p.has_left()) {
      EXPECT_EQ(p.aggregate().count, 135);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  ::testing::InitGoogleTest(&argc, argv);
  // Every rank runs every test and prints its own results; the exit status is the worst rank's.
  int failed = RUN_ALL_TESTS();
  MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return failed;
}
