// SPDX-License-Identifier: Apache-2.0
// The one collective the distributed filters are built on: every rank sends one vector of 64-bit words to
// every rank (MPI_Alltoallv), after telling each how many (MPI_Alltoall). Only this directory includes
// <mpi.h>: the library's core headers stay free of MPI.
#pragma once

#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "blume/error.hpp"

namespace blume::distributed {

/// What arrived from every rank: rank p's words are words[displacements[p] … + counts[p]).
struct received {
  std::vector<std::uint64_t> words;
  std::vector<int> counts;
  std::vector<int> displacements;
  std::span<const std::uint64_t> from(int rank) const noexcept {
    return {words.data() + displacements[rank], static_cast<std::size_t>(counts[rank])};
  }
};

/// This rank's place in a communicator.
struct place {
  int rank = 0;
  int ranks = 1;
  static place of(MPI_Comm comm) {
    place p;
    MPI_Comm_rank(comm, &p.rank);
    MPI_Comm_size(comm, &p.ranks);
    return p;
  }
};

/// Sends outgoing[p] to rank p, for every p; collective. Throws (on every rank alike, after agreeing) when a
/// rank would send or receive more than MPI's int counts address.
inline received all_to_all(MPI_Comm comm, const std::vector<std::vector<std::uint64_t>>& outgoing) {
  const int ranks = static_cast<int>(outgoing.size());
  std::vector<int> send_counts(ranks), send_displacements(ranks);
  std::uint64_t total = 0;
  int too_big = 0;
  for (int p = 0; p < ranks; ++p) {
    if (outgoing[p].size() > static_cast<std::size_t>(INT_MAX) || total + outgoing[p].size() > INT_MAX) too_big = 1;
    send_counts[p] = static_cast<int>(outgoing[p].size());
    send_displacements[p] = static_cast<int>(total);
    total += outgoing[p].size();
  }
  received in;
  in.counts.resize(ranks);
  in.displacements.resize(ranks);
  MPI_Alltoall(send_counts.data(), 1, MPI_INT, in.counts.data(), 1, MPI_INT, comm);
  std::uint64_t incoming = 0;
  for (int p = 0; p < ranks; ++p) {
    in.displacements[p] = static_cast<int>(std::min<std::uint64_t>(incoming, INT_MAX));
    incoming += static_cast<std::uint64_t>(in.counts[p]);
  }
  if (incoming > INT_MAX) too_big = 1;
  MPI_Allreduce(MPI_IN_PLACE, &too_big, 1, MPI_INT, MPI_MAX, comm);
  if (too_big != 0)
    throw invalid_argument("distributed exchange: a rank would send or receive more than 2^31 words at once");
  std::vector<std::uint64_t> flat;
  flat.reserve(total);
  for (const auto& v : outgoing) flat.insert(flat.end(), v.begin(), v.end());
  in.words.resize(incoming);
  MPI_Alltoallv(flat.data(), send_counts.data(), send_displacements.data(), MPI_UINT64_T, in.words.data(),
                in.counts.data(), in.displacements.data(), MPI_UINT64_T, comm);
  return in;
}

/// Throws invalid_argument on every rank unless all ranks passed the same value.
inline void check_same(MPI_Comm comm, std::uint64_t value, const std::string& what) {
  std::uint64_t low = value, high = value;
  MPI_Allreduce(MPI_IN_PLACE, &low, 1, MPI_UINT64_T, MPI_MIN, comm);
  MPI_Allreduce(MPI_IN_PLACE, &high, 1, MPI_UINT64_T, MPI_MAX, comm);
  if (low != high)
    throw invalid_argument("distributed filter: the ranks disagree on " + what + " (" + std::to_string(low) + " … " +
                           std::to_string(high) + ")");
}

}  // namespace blume::distributed
