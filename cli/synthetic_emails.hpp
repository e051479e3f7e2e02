// Deterministic e-mail-like keys for the demo: address i is always the same string, 20–32 bytes, and
// distinct indices give distinct addresses, so "new" addresses are absent by construction.
#pragma once

#include <cstdint>
#include <string>

namespace blume::cli {

inline std::uint64_t splitmix64(std::uint64_t x) noexcept {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

/// Writes address `index` into `out` (reusing its capacity) and returns it.
inline const std::string& synthetic_email(std::uint64_t index, std::string& out) {
  static constexpr const char* first[] = {"anna", "ben", "carla", "dmitri", "emma", "farid", "grace", "hugo",
                                          "ines", "jonas", "kenji", "lena", "marco", "nora", "omar", "priya"};
  static constexpr const char* domain[] = {"example.com", "example.org", "example.net", "mailbox.com"};
  const std::uint64_t r = splitmix64(index);
  out.assign(first[r & 15]);
  out.push_back('.');
  // The index in base 36 makes every address unique (names are at most 6 bytes, the index at most 13 and
  // domains 11, so the base is at most 32 bytes); padding spreads lengths evenly over 20–32 bytes.
  char digits[16];
  int n = 0;
  std::uint64_t v = index;
  do {
    digits[n++] = "0123456789abcdefghijklmnopqrstuvwxyz"[v % 36];
    v /= 36;
  } while (v != 0);
  const std::size_t base = out.size() + static_cast<std::size_t>(n) + 1 + 11;
  const std::size_t target = 20 + (r >> 8) % 13;
  if (target > base) out.append(target - base, 'x');
  while (n > 0) out.push_back(digits[--n]);
  out.push_back('@');
  out.append(domain[(r >> 4) & 3]);
  return out;
}

}  // namespace blume::cli
