// SPDX-License-Identifier: Apache-2.0
// Replicating Bloom filters (Sanders, Schlag & Müller 2013): every PE builds a filter of the same geometry
// from its own keys, then all end with the filter of all keys, through a hypercube exchange: in step i a PE
// swaps its filter with the PE across dimension i (rank ⊕ 2^i) and merges it in, so after log2 P steps each
// holds the union, having sent log2 P filters. Worth it when queries far outnumber keys: lookups are then
// local, with no traffic at all.
//
// With P not a power of two, the ranks from 2^⌊log2 P⌋ on first send their filters to the rank 2^⌊log2 P⌋
// below them and take no part in the hypercube; at the end that rank sends each of them the result: two
// more filter transfers, on the ranks that have a partner.
//
// The merge is the kind's own union (OR for bit arrays, saturating sums for counting filters), so the
// result equals, bit for bit, the filter one PE would build from all the keys.
#pragma once

#include <mpi.h>

#include <bit>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>

#include "blume/distributed/exchange.hpp"
#include "blume/error.hpp"
#include "blume/storage.hpp"

namespace blume::distributed {

namespace transfer {

template <class F>
F receive_filter(MPI_Comm comm, const F& like, int from, int tag) {
  std::uint64_t inserted = 0;
  MPI_Recv(&inserted, 1, MPI_UINT64_T, from, tag, comm, MPI_STATUS_IGNORE);
  byte_storage bytes = byte_storage::allocate(like.storage().size());
  MPI_Recv(bytes.data(), static_cast<int>(bytes.size()), MPI_BYTE, from, tag + 1, comm, MPI_STATUS_IGNORE);
  return F::from_parts(like.layout(), like.hasher(), std::move(bytes), inserted);
}

template <class F>
void send_filter(MPI_Comm comm, const F& f, int to, int tag) {
  std::uint64_t inserted = f.inserted();
  MPI_Send(&inserted, 1, MPI_UINT64_T, to, tag, comm);
  MPI_Send(const_cast<std::byte*>(f.storage().data()), static_cast<int>(f.storage().size()), MPI_BYTE, to, tag + 1,
           comm);
}

}  // namespace transfer

/// Leaves the union of every rank's `filter` on every rank (a bit-array kind: basic_bloom_filter of any
/// layout). Collective; throws invalid_argument on every rank when their geometries or seeds differ.
template <class F>
void replicate(MPI_Comm comm, F& filter) {
  const place where = place::of(comm);
  check_same(comm, filter.bits(), "the filter's size");
  check_same(comm, filter.hashes(), "the filter's hash count");
  check_same(comm, filter.seed(), "the seed");
  if (filter.storage().size() > static_cast<std::size_t>(INT_MAX))
    throw invalid_argument("replicate: a filter of " + std::to_string(filter.storage().size()) +
                           " bytes exceeds one MPI message (2^31 bytes)");
  constexpr int tag = 0x626c;
  const int cube = static_cast<int>(std::bit_floor(static_cast<unsigned>(where.ranks)));
  if (where.rank >= cube) {  // outside the hypercube: hand the filter in, take the result back
    transfer::send_filter(comm, filter, where.rank - cube, tag);
    filter = transfer::receive_filter(comm, filter, where.rank - cube, tag + 4);
    return;
  }
  if (where.rank + cube < where.ranks) filter.merge(transfer::receive_filter(comm, filter, where.rank + cube, tag));
  for (int dimension = 1; dimension < cube; dimension <<= 1) {
    const int partner = where.rank ^ dimension;
    // Both send first and receive second: MPI_Sendrecv keeps a pair from waiting on each other.
    std::uint64_t mine = filter.inserted(), theirs = 0;
    MPI_Sendrecv(&mine, 1, MPI_UINT64_T, partner, tag + 2, &theirs, 1, MPI_UINT64_T, partner, tag + 2, comm,
                 MPI_STATUS_IGNORE);
    byte_storage bytes = byte_storage::allocate(filter.storage().size());
    MPI_Sendrecv(const_cast<std::byte*>(filter.storage().data()), static_cast<int>(filter.storage().size()), MPI_BYTE,
                 partner, tag + 3, bytes.data(), static_cast<int>(bytes.size()), MPI_BYTE, partner, tag + 3, comm,
                 MPI_STATUS_IGNORE);
    filter.merge(F::from_parts(filter.layout(), filter.hasher(), std::move(bytes), theirs));
  }
  if (where.rank + cube < where.ranks) transfer::send_filter(comm, filter, where.rank + cube, tag + 4);
}

}  // namespace blume::distributed
