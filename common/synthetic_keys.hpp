// SPDX-License-Identifier: Apache-2.0
// Synthetic keys generated from their index, shared by the benchmark and the tool's `bench` and `demo`
// verbs (not part of the library): 64-bit integers and e-mail-like strings, distinct by construction.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace blume::synthetic {

/// splitmix64's output function (Steele, Lea & Flood 2014). Every step (add, xorshift, multiply by an odd
/// constant) is a bijection on 64-bit values, so distinct indices give distinct keys.
constexpr std::uint64_t splitmix64(std::uint64_t x) noexcept {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

namespace email_parts {
inline constexpr std::array<std::string_view, 16> names = {"ann",   "bob",   "carol",  "dave",  "erin",    "frank",
                                                           "grace", "heidi", "ivan",   "judy",  "mallory", "oscar",
                                                           "peggy", "trent", "victor", "walter"};
inline constexpr std::array<std::string_view, 8> domains = {"gmail.com", "yahoo.com", "outlook.com", "example.org",
                                                            "proton.me", "mail.de",   "web.de",      "icloud.com"};
}  // namespace email_parts

/// Appends the e-mail-like key of `index` to `out` and returns its length, 20 to 32 bytes:
///   <name> "." <index in base 36> "_" <digits> "@" <domain>
/// Names hold only letters and digits only follow the '_', so the base-36 part (between the first '.' and
/// the first '_') reads back as the index: distinct indices give distinct keys. Name, domain, length and
/// digits come from splitmix64(index), so neighbouring indices look unrelated.
/// `Bytes` is std::vector<char> (the benchmark's arena) or std::string (the CLI demo).
template <class Bytes>
std::size_t append_email(std::uint64_t index, Bytes& out) {
  std::uint64_t h = splitmix64(index ^ 0x656d61696cULL);  // "email"
  const std::string_view name = email_parts::names[h & 15];
  const std::string_view domain = email_parts::domains[(h >> 4) & 7];
  const std::size_t target_length = 20 + (h >> 7) % 13;  // 20..32
  h >>= 11;

  char base36[16];
  std::size_t base36_length = 0;
  std::uint64_t v = index;
  do {
    base36[base36_length++] = "0123456789abcdefghijklmnopqrstuvwxyz"[v % 36];
    v /= 36;
  } while (v != 0);

  // Besides the digits: at most 7 + 1 + 7 + 1 + 1 + 11 = 28 bytes (for indices below 36^7 ≈ 7.8e10), so one
  // digit always fits in 32 bytes; at least 3 + 1 + 1 + 1 + 1 + 6 = 13, so 20 bytes are always reachable.
  const std::size_t fixed = name.size() + 1 + base36_length + 1 + 1 + domain.size();
  const std::size_t digits = target_length > fixed ? target_length - fixed : 1;

  const std::size_t start = out.size();
  out.insert(out.end(), name.begin(), name.end());
  out.push_back('.');
  for (std::size_t i = base36_length; i-- > 0;) out.push_back(base36[i]);
  out.push_back('_');
  for (std::size_t i = 0; i < digits; ++i, h /= 10) out.push_back(static_cast<char>('0' + h % 10));
  out.push_back('@');
  out.insert(out.end(), domain.begin(), domain.end());
  return out.size() - start;
}

}  // namespace blume::synthetic
