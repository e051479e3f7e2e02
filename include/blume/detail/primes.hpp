// SPDX-License-Identifier: Apache-2.0
// Primes for the kinds whose geometry must be prime: the EGH filter's segments (products of distinct primes
// prove its zone) and the hash-compaction table (a prime slot count makes every probe step a generator, so
// a walk visits every slot). Knows nothing about filters.
#pragma once

#include <cstdint>
#include <vector>

#include "blume/hash.hpp"

namespace blume::detail {

/// The primes below `limit`, increasing (a sieve of Eratosthenes over the odd numbers).
inline std::vector<std::uint32_t> primes_below(std::uint32_t limit) {
  std::vector<std::uint32_t> out;
  if (limit > 2) out.push_back(2);
  std::vector<bool> composite(limit / 2 + 1, false);  // composite[i]: 2i + 1
  for (std::uint64_t i = 1; 2 * i + 1 < limit; ++i) {
    if (composite[i]) continue;
    const std::uint64_t p = 2 * i + 1;
    out.push_back(static_cast<std::uint32_t>(p));
    for (std::uint64_t j = p * p; j < limit; j += 2 * p) composite[j / 2] = true;
  }
  return out;
}

/// Whether n is prime: Miller–Rabin with the first twelve primes as bases, which no composite below
/// 3.3·10^24 passes, so the answer is exact for every 64-bit n.
constexpr bool is_prime(std::uint64_t n) noexcept {
  constexpr std::uint64_t bases[] = {2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37};
  if (n < 2) return false;
  for (const std::uint64_t p : bases)
    if (n % p == 0) return n == p;
  std::uint64_t d = n - 1;
  int s = 0;
  while (d % 2 == 0) d /= 2, ++s;
  const auto mulmod = [n](std::uint64_t a, std::uint64_t b) {
    return static_cast<std::uint64_t>(static_cast<uint128_t>(a) * b % n);
  };
  for (const std::uint64_t a : bases) {
    std::uint64_t x = 1, base = a;
    for (std::uint64_t e = d; e != 0; e >>= 1, base = mulmod(base, base))
      if (e & 1) x = mulmod(x, base);
    if (x == 1 || x == n - 1) continue;
    bool witness = true;
    for (int r = 1; r < s && witness; ++r) {
      x = mulmod(x, x);
      if (x == n - 1) witness = false;
    }
    if (witness) return false;
  }
  return true;
}

/// The smallest prime ≥ n (n < 2^64 − 58: primes are at most a few hundred apart there).
constexpr std::uint64_t prime_at_least(std::uint64_t n) noexcept {
  if (n <= 2) return 2;
  for (n |= 1; !is_prime(n); n += 2) {
  }
  return n;
}

/// The largest prime ≤ n, or 0 when n < 2.
constexpr std::uint64_t prime_at_most(std::uint64_t n) noexcept {
  if (n < 2) return 0;
  if (n == 2) return 2;
  for (n -= (n % 2 == 0); !is_prime(n); n -= 2) {
  }
  return n;
}

}  // namespace blume::detail
