// SPDX-License-Identifier: Apache-2.0
// Distributed duplicate detection (Sanders, Schlag & Müller 2013, §4): which keys occur more than once
// across the inputs of all PEs, with little traffic when most keys are unique.
//
// Filter phase: each PE hashes its keys to positions of a global single-shot filter of s bits (rank p owns
// [p·s/P, (p+1)·s/P)), sorts them, and sends each owner one Golomb-coded packet of its distinct positions.
// An owner that receives a position from more than one PE returns it to those PEs (one bit per position
// sent, as query answers). A key whose position came back, or that shares its position with another of its
// PE's keys, is a candidate; every other key is certainly unique. A unique key becomes a candidate when
// another key lands on its position, at about the rate 1 − e^{−N/s} for N keys in all.
//
// Iterated, the filter phase runs again on the candidates only, with a new hash: a first pass at a high
// rate costs few bits per key (the gaps are small), and the second sees only the survivors.
//
// Exact phase: the candidates are sent, as bytes, to the PE a hash of the key names, which counts them:
// the keys counted more than once are exactly the duplicates (a key occurring twice is a candidate on
// every PE that holds it). Without it, the candidates are reported as they are: every duplicate, plus the
// unique keys flagged at the filter's rate.
//
// Every call is collective.
#pragma once

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "blume/detail/hash_packet.hpp"
#include "blume/distributed/exchange.hpp"
#include "blume/error.hpp"
#include "blume/hash.hpp"

namespace blume::distributed {

/// How to look for duplicates.
struct duplicate_options {
  /// The rate at which each filter pass flags a unique key; several rates, several passes (the iterated
  /// variant: a high rate first, a low one on the survivors).
  std::vector<double> pass_rates{0.01};
  /// Check the candidates exactly (by repartitioning them by key); false reports the candidates.
  bool exact = true;
  std::uint64_t seed = xxh3_hasher::default_seed;
};

/// One phase's cost on this rank.
struct phase_stats {
  std::string name;
  std::uint64_t keys = 0;            // keys this rank took into the phase
  std::uint64_t sent_bytes = 0;      // bytes this rank sent (packets, answers, key bytes)
  std::uint64_t raw_hash_bytes = 0;  // what 64-bit hashes of the same keys would have taken
  std::uint64_t key_bytes = 0;       // what the keys themselves would have taken
  double seconds = 0;
};

/// This rank's part of the answer.
struct duplicate_result {
  /// Exact: the duplicates this rank was responsible for counting (each duplicate on exactly one rank,
  /// once). Approximate: this rank's candidates, each once (a duplicate appears on every rank holding it).
  std::vector<std::string> keys;
  std::vector<phase_stats> phases;
  std::uint64_t candidates = 0;  // this rank's keys left after the filter passes
};

namespace dedup {

/// The local key indexes whose position another rank also sent, or that share their position with
/// another local key, in one filter pass of s bits over `indexes`.
inline std::vector<std::uint32_t> filter_pass(MPI_Comm comm, const place& where, const std::vector<std::string>& keys,
                                              const std::vector<std::uint32_t>& indexes, std::uint64_t s,
                                              std::uint64_t seed, phase_stats& stats) {
  const auto ranks = static_cast<std::uint64_t>(where.ranks);
  const std::uint64_t local_bits = (s + ranks - 1) / ranks;
  const xxh3_hasher hasher(seed);
  std::vector<std::vector<std::pair<std::uint64_t, std::uint32_t>>> buckets(ranks);
  for (const std::uint32_t i : indexes) {
    const std::uint64_t bit = reduce(hash_key(hasher, keys[i]).low, local_bits * ranks);
    buckets[bit / local_bits].emplace_back(bit % local_bits, i);
    stats.key_bytes += keys[i].size();
  }
  stats.keys += indexes.size();
  stats.raw_hash_bytes += 8 * indexes.size();
  std::vector<std::vector<std::uint64_t>> packets(ranks);
  std::vector<std::uint32_t> candidates;
  std::vector<std::uint64_t> distinct;
  for (std::uint64_t q = 0; q < ranks; ++q) {
    auto& b = buckets[q];
    std::sort(b.begin(), b.end());
    distinct.clear();
    for (std::size_t j = 0; j < b.size(); ++j) {
      const bool shared = (j > 0 && b[j - 1].first == b[j].first) || (j + 1 < b.size() && b[j + 1].first == b[j].first);
      if (shared) candidates.push_back(b[j].second);  // another local key here: a duplicate or a collision
      if (distinct.empty() || distinct.back() != b[j].first) distinct.push_back(b[j].first);
    }
    stats.sent_bytes += 8 * blume::detail::encode_hash_packet(distinct, local_bits, packets[q]);
  }
  const received in = all_to_all(comm, packets);
  // The positions more than one rank sent: each rank sent its distinct positions, so a value seen twice in
  // all the packets together came from two ranks. Sorting them all and walking each sender's sorted list
  // beside the sorted shared ones beats a hash map of senders by an order of magnitude at millions.
  std::vector<std::vector<std::uint64_t>> positions(ranks);
  std::vector<std::uint64_t> all;
  for (std::uint64_t p = 0; p < ranks; ++p) {
    blume::detail::decode_hash_packet(in.from(static_cast<int>(p)), local_bits, positions[p]);
    all.insert(all.end(), positions[p].begin(), positions[p].end());
  }
  std::sort(all.begin(), all.end());
  std::vector<std::uint64_t> shared;
  for (std::size_t j = 1; j < all.size(); ++j)
    if (all[j] == all[j - 1] && (shared.empty() || shared.back() != all[j])) shared.push_back(all[j]);
  std::vector<std::uint64_t>().swap(all);
  std::vector<std::vector<std::uint64_t>> answers(ranks);
  for (std::uint64_t p = 0; p < ranks; ++p) {
    auto& bits = answers[p];
    const auto& mine = positions[p];
    bits.assign((mine.size() + 63) / 64, 0);
    std::size_t k = 0;
    for (std::size_t j = 0; j < mine.size(); ++j) {
      while (k < shared.size() && shared[k] < mine[j]) ++k;
      if (k < shared.size() && shared[k] == mine[j]) bits[j / 64] |= std::uint64_t{1} << (j % 64);
    }
    stats.sent_bytes += 8 * bits.size();
  }
  const received back = all_to_all(comm, answers);
  for (std::uint64_t q = 0; q < ranks; ++q) {
    const std::span<const std::uint64_t> bits = back.from(static_cast<int>(q));
    const auto& b = buckets[q];
    std::size_t distinct_index = 0;
    for (std::size_t j = 0; j < b.size(); ++j) {
      if (j > 0 && b[j - 1].first != b[j].first) ++distinct_index;
      if (distinct_index / 64 >= bits.size())
        throw format_error("duplicate detection: rank " + std::to_string(q) + " answered too few positions");
      if ((bits[distinct_index / 64] >> (distinct_index % 64)) & 1) candidates.push_back(b[j].second);
    }
  }
  std::sort(candidates.begin(), candidates.end());
  candidates.erase(std::unique(candidates.begin(), candidates.end()), candidates.end());
  return candidates;
}

/// Packs strings as [length, bytes in whole words] into `out`.
inline void pack(std::string_view s, std::vector<std::uint64_t>& out) {
  out.push_back(s.size());
  const std::size_t at = out.size();
  out.resize(at + (s.size() + 7) / 8, 0);
  if (!s.empty()) std::memcpy(out.data() + at, s.data(), s.size());
}
inline void unpack(std::span<const std::uint64_t> words, std::vector<std::string>& out) {
  std::size_t i = 0;
  while (i < words.size()) {
    const std::uint64_t n = words[i++];
    if (n > 8 * (words.size() - i)) throw format_error("duplicate detection: a key runs past its packet");
    out.emplace_back(reinterpret_cast<const char*>(words.data() + i), static_cast<std::size_t>(n));
    i += (n + 7) / 8;
  }
}

}  // namespace dedup

enum class gathered { sorted, in_rank_order };

/// Every rank's `keys` on rank `root` (empty elsewhere): sorted, or in rank order (each rank's in its own
/// order). Collective.
inline std::vector<std::string> gather_keys(MPI_Comm comm, const std::vector<std::string>& keys, int root = 0,
                                            gathered order = gathered::sorted) {
  const place where = place::of(comm);
  std::vector<std::uint64_t> packed;
  for (const std::string& k : keys) dedup::pack(k, packed);
  if (packed.size() > static_cast<std::size_t>(INT_MAX))
    throw invalid_argument("gather_keys: more than 2^31 words from one rank");
  int count = static_cast<int>(packed.size());
  std::vector<int> counts(where.rank == root ? where.ranks : 0), displacements(counts.size());
  MPI_Gather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, root, comm);
  std::uint64_t total = 0;
  for (std::size_t p = 0; p < counts.size(); ++p) {
    displacements[p] = static_cast<int>(std::min<std::uint64_t>(total, INT_MAX));
    total += static_cast<std::uint64_t>(counts[p]);
  }
  int too_big = total > INT_MAX ? 1 : 0;
  MPI_Bcast(&too_big, 1, MPI_INT, root, comm);
  if (too_big != 0) throw invalid_argument("gather_keys: more than 2^31 words in all");
  std::vector<std::uint64_t> all(total);
  MPI_Gatherv(packed.data(), count, MPI_UINT64_T, all.data(), counts.data(), displacements.data(), MPI_UINT64_T, root,
              comm);
  std::vector<std::string> out;
  dedup::unpack(all, out);
  if (order == gathered::sorted) std::sort(out.begin(), out.end());
  return out;
}

/// Finds the keys that occur more than once across the `keys` of all ranks. Collective.
inline duplicate_result find_duplicates(MPI_Comm comm, const std::vector<std::string>& keys,
                                        const duplicate_options& options = {}) {
  using clock = std::chrono::steady_clock;
  const place where = place::of(comm);
  if (options.pass_rates.empty()) throw invalid_argument("duplicate detection: at least one filter pass");
  for (const double rate : options.pass_rates)
    if (!(rate > 0 && rate < 1))
      throw invalid_argument("duplicate detection: pass rates must be in (0, 1), got " + std::to_string(rate));
  if (keys.size() > 0xffffffffULL) throw invalid_argument("duplicate detection: more than 2^32 keys on one rank");
  duplicate_result result;
  std::vector<std::uint32_t> alive(keys.size());
  for (std::uint32_t i = 0; i < alive.size(); ++i) alive[i] = i;
  for (std::size_t pass = 0; pass < options.pass_rates.size(); ++pass) {
    const auto start = clock::now();
    std::uint64_t total = alive.size();
    MPI_Allreduce(MPI_IN_PLACE, &total, 1, MPI_UINT64_T, MPI_SUM, comm);
    phase_stats stats;
    stats.name = "filter pass " + std::to_string(pass + 1);
    // ε = 1 − e^{−N/s}: s = N / −ln(1 − ε), at least one bit per rank.
    const auto s = std::max<std::uint64_t>(
        static_cast<std::uint64_t>(where.ranks),
        static_cast<std::uint64_t>(std::ceil(static_cast<double>(total) / -std::log1p(-options.pass_rates[pass]))));
    alive = dedup::filter_pass(comm, where, keys, alive, s, options.seed + 0x9e3779b97f4a7c15ULL * pass, stats);
    stats.seconds = std::chrono::duration<double>(clock::now() - start).count();
    result.phases.push_back(std::move(stats));
  }
  result.candidates = alive.size();
  if (!options.exact) {
    std::vector<std::string> out;
    out.reserve(alive.size());
    for (const std::uint32_t i : alive) out.push_back(keys[i]);
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    result.keys = std::move(out);
    return result;
  }
  const auto start = clock::now();
  phase_stats stats;
  stats.name = "exact check";
  const xxh3_hasher hasher(options.seed ^ 0x5bd1e995ULL);
  std::vector<std::vector<std::uint64_t>> outgoing(static_cast<std::size_t>(where.ranks));
  for (const std::uint32_t i : alive) {
    const auto owner = reduce(hash_key(hasher, keys[i]).low, static_cast<std::uint64_t>(where.ranks));
    dedup::pack(keys[i], outgoing[owner]);
    stats.key_bytes += keys[i].size();
  }
  stats.keys = alive.size();
  stats.raw_hash_bytes = 8 * alive.size();
  for (const auto& v : outgoing) stats.sent_bytes += 8 * v.size();
  const received in = all_to_all(comm, outgoing);
  std::vector<std::string> arrived;
  for (int p = 0; p < where.ranks; ++p) dedup::unpack(in.from(p), arrived);
  std::sort(arrived.begin(), arrived.end());
  for (std::size_t j = 0; j + 1 < arrived.size();) {
    std::size_t k = j + 1;
    while (k < arrived.size() && arrived[k] == arrived[j]) ++k;
    if (k - j > 1) result.keys.push_back(arrived[j]);
    j = k;
  }
  stats.seconds = std::chrono::duration<double>(clock::now() - start).count();
  result.phases.push_back(std::move(stats));
  return result;
}

}  // namespace blume::distributed
