// SPDX-License-Identifier: Apache-2.0
// What the verbs share: the registration every verb provides, option values (--kind, --format), number and
// JSON text, buffered standard output, and batches of keys from the command line or standard input.
// Each verb lives in verbs/<name>.cpp; cli/CMakeLists.txt lists them.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "blume/error.hpp"
#include "blume/kinds.hpp"
#include "key_input.hpp"
#include "number_text.hpp"
#include "verb.hpp"

namespace blume::cli {

using surface::for_each_key;
using surface::key_format;
using surface::key_source;
using surface::line_key;

// ---- kinds ------------------------------------------------------------------------------------------
// The tool keys nothing on a kind's name: it asks the capabilities the kind's members give it (kind.hpp).

/// The names of the kinds for which pred(std::type_identity<F>{}) holds, comma-separated, for messages.
template <class Pred>
std::string kind_names_where(Pred pred) {
  std::string names;
  for_each_kind([&](auto type) {
    if (pred(type)) names += (names.empty() ? "" : ", ") + std::string(decltype(type)::type::name);
  });
  return names;
}

// ---- option values ----------------------------------------------------------------------------------

/// The help of a --kind option that takes every kind: "filter kind: " and the kinds' names.
std::string kinds_help();
/// A --kind value; throws blume::invalid_argument naming the known kinds.
filter_kind kind_option(const std::string& name);
/// A --format value: lines or nul.
key_format format_option(const std::string& name);

// ---- formatting -------------------------------------------------------------------------------------

using text::fixed;
using text::human_bytes;
using text::json_number;
using text::json_string;
using text::percent;

/// Buffered standard output: one write per megabyte rather than one per answer. A verb calls flush() when
/// it is done, which throws io_error if the output failed (a full disk, a closed pipe). The destructor
/// only tries, without throwing (it may run while an exception unwinds), and main checks standard output
/// before it reports success, so a failed write never ends in exit status 0.
class output {
 public:
  ~output() {
    if (!buffer_.empty()) std::fwrite(buffer_.data(), 1, buffer_.size(), stdout);
  }
  void add(std::string_view s) {
    buffer_ += s;
    if (buffer_.size() >= (1u << 20)) flush();
  }
  void flush() {
    if (buffer_.empty()) return;
    const bool written = std::fwrite(buffer_.data(), 1, buffer_.size(), stdout) == buffer_.size();
    buffer_.clear();
    if (!written || std::fflush(stdout) != 0) throw_stdout_error();
  }
  /// Throws io_error for a failed write to standard output, with the system's reason.
  [[noreturn]] static void throw_stdout_error();

 private:
  std::string buffer_;
};

// ---- keys of query, add and erase -------------------------------------------------------------------

/// A KEY<TAB>VALUE record: the key, and the value after the last tab as a decimal integer. `where` names
/// the record in the error ("record 7 of users.tsv").
struct key_value {
  std::string_view key;
  std::uint64_t value;
};
key_value parse_record(std::string_view line, const std::string& where);

struct query_options {
  std::string file;
  std::vector<std::string> keys;  // empty: keys from standard input
  key_format format = key_format::lines;
  bool quiet = false;
  bool count = false;           // query: print counts
  bool allow_overfill = false;  // add
  bool no_wait = false;         // add, erase
  bool force = false;           // add, erase: replace a read-only or hard-linked file (write_options)
};

/// The command line of query, add and erase: the options, and the keys' --format as text until the
/// callback parses it (format_option).
struct key_args {
  query_options options;
  std::string format = "lines";
};

/// Adds the arguments query, add and erase share: the filter file, the keys and --format.
void add_key_options(CLI::App& cmd, key_args& a);

/// Calls fn(batch) with batches of keys: the command line's, or standard input's as they arrive. Empty
/// keys are never in a filter (build skips empty lines): an empty argument is an error, an empty line of
/// standard input is skipped.
template <class Fn>
void for_each_batch(const query_options& o, Fn&& fn) {
  std::vector<std::string_view> batch;
  if (!o.keys.empty()) {
    for (std::size_t i = 0; i < o.keys.size(); ++i) {
      const std::string_view k = line_key(o.keys[i], o.format);
      if (k.empty())
        throw invalid_argument("key " + std::to_string(i + 1) +
                               " is empty: empty keys are never stored (build skips empty lines)");
      batch.push_back(k);
    }
    fn(batch);
    return;
  }
  key_source source("-", o.format);
  batch.reserve(4096);
  source.for_each_block(
      [&](std::string_view block) {
        for_each_key(block, source.delimiter(), [&](std::string_view k) {
          if (k.empty()) return;
          batch.push_back(k);
          if (batch.size() == 4096) {
            fn(batch);
            batch.clear();
          }
        });
        if (!batch.empty()) fn(batch);
        batch.clear();
      },
      /*gather=*/false);
}

}  // namespace blume::cli
