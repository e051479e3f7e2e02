// SPDX-License-Identifier: Apache-2.0
#include "shared.hpp"

#include <CLI/CLI.hpp>

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>

namespace blume::cli {

namespace {

std::string known_kinds() {
  std::string s;
  for (const filter_kind k : all_kinds) s += (s.empty() ? "" : ", ") + std::string(kind_name(k));
  for (const filter_kind k : map_kinds) s += ", " + std::string(kind_name(k));
  return s;
}

}  // namespace

// ---- option values ----------------------------------------------------------------------------------

std::string kinds_help() { return "filter kind: " + known_kinds(); }

filter_kind kind_option(const std::string& name) {
  if (const auto kind = parse_kind(name)) return *kind;
  throw invalid_argument("--kind: unknown filter kind '" + name + "' (known: " + known_kinds() + ")");
}

key_format format_option(const std::string& name) {
  if (name == "lines") return key_format::lines;
  if (name == "nul") return key_format::nul;
  throw invalid_argument("--format: '" + name + "' is neither 'lines' nor 'nul'");
}

void add_key_options(CLI::App& cmd, key_args& a) {
  cmd.add_option("file", a.options.file, "filter file")->required();
  cmd.add_option("keys", a.options.keys, "keys (default: read from standard input)");
  cmd.add_option("--format", a.format, "keys: lines (one trailing CR dropped, from arguments too) or nul")
      ->capture_default_str();
}

void output::throw_stdout_error() {
  const int e = errno;
  throw io_error(std::string("cannot write to standard output: ") + (e != 0 ? std::strerror(e) : "write error"));
}

key_value parse_record(std::string_view line, const std::string& where) {
  const std::size_t tab = line.rfind('\t');
  const std::string_view text = tab == std::string_view::npos ? std::string_view() : line.substr(tab + 1);
  std::uint64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (tab == std::string_view::npos || text.empty() || ec != std::errc() || end != text.data() + text.size())
    throw invalid_argument(where + " is not KEY<TAB>VALUE with a decimal value");
  return {line.substr(0, tab), value};
}

}  // namespace blume::cli
