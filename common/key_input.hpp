// SPDX-License-Identifier: Apache-2.0
// Keys from files, for the surfaces (the blume tool, the Python bindings): newline- or NUL-delimited, from
// a file (mapped, so no copy) or from standard input (read in large blocks). Callers get whole blocks of
// complete keys as string_views, ready to be split between threads. One reader, so a key file means the
// same keys to every surface.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace blume::surface {

enum class key_format { lines, nul };

/// Splits `block` into keys at `delimiter` and calls fn(key) for each (a trailing '\r' is kept off lines,
/// as it is off keys given as arguments: see line_key; an empty final key after the last delimiter is not
/// a key).
template <class Fn>
void for_each_key(std::string_view block, char delimiter, Fn&& fn) {
  while (!block.empty()) {
    const std::size_t end = block.find(delimiter);
    std::string_view key = block.substr(0, end);
    if (delimiter == '\n' && !key.empty() && key.back() == '\r') key.remove_suffix(1);
    fn(key);
    if (end == std::string_view::npos) break;
    block.remove_prefix(end + 1);
  }
}

/// A key given as an argument, under the same rule as keys read from lines: one trailing '\r' (from a
/// file with CRLF line ends, or a pasted line) is not part of the key.
inline std::string_view line_key(std::string_view key, key_format format) noexcept {
  if (format == key_format::lines && !key.empty() && key.back() == '\r') key.remove_suffix(1);
  return key;
}

/// A source of keys: "-" is standard input, anything else a file path.
class key_source {
 public:
  key_source(const std::string& path, key_format format);
  ~key_source();
  key_source(const key_source&) = delete;
  key_source& operator=(const key_source&) = delete;

  char delimiter() const noexcept { return delimiter_; }
  /// Total bytes when known (a regular file), else 0: what a progress bar's ETA needs.
  std::uint64_t total_bytes() const noexcept { return total_; }
  /// Calls fn(block) for consecutive blocks that hold only complete keys, until the input ends. From a
  /// pipe, `gather` waits for large blocks (throughput: build); without it every read's complete keys
  /// are handed out at once (answers keep up with an interactive stream: query). Throws
  /// blume::io_error naming the input when it cannot be read.
  void for_each_block(const std::function<void(std::string_view)>& fn, bool gather = true);
  /// The number of non-empty keys, counted in a first pass; for_each_block still sees every key after it.
  /// Standard input is read into memory to be counted (a file is read twice instead).
  std::uint64_t count_keys();

 private:
  std::string path_;
  char delimiter_;
  int fd_ = -1;
  std::uint64_t total_ = 0;
  const char* mapped_ = nullptr;
  bool regular_ = false;  // a regular file (mapped unless empty); else a stream read once (a pipe, a FIFO)
  std::string held_;      // standard input, once count_keys has read it
};

}  // namespace blume::surface
