// SPDX-License-Identifier: Apache-2.0
// The terms of a text, as the bit-sliced index (and the tool's `blume index`) reads documents and queries:
// maximal runs of ASCII letters and digits and of non-ASCII bytes, with ASCII letters lower-cased. These
// are the rules of SQLite FTS5's `ascii` tokenizer, so an FTS5 table made with tokenize='ascii' sees the
// same terms, and its matches can be checked against the index's candidates term for term.
#pragma once

#include <string>
#include <string_view>

namespace blume {

/// Whether byte c belongs to a term.
constexpr bool is_term_byte(unsigned char c) noexcept {
  return c >= 0x80 || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/// Calls fn(std::string_view term) for each term of `text`, in order (repeats included), the term
/// lower-cased in a buffer that the next call reuses.
template <class Fn>
void for_each_term(std::string_view text, Fn&& fn) {
  std::string term;
  std::size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && !is_term_byte(static_cast<unsigned char>(text[i]))) ++i;
    const std::size_t start = i;
    while (i < text.size() && is_term_byte(static_cast<unsigned char>(text[i]))) ++i;
    if (i == start) break;
    term.assign(text.substr(start, i - start));
    for (char& c : term)
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    fn(std::string_view(term));
  }
}

}  // namespace blume
