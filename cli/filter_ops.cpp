// SPDX-License-Identifier: Apache-2.0
#include "filter_ops.hpp"

#include <CLI/CLI.hpp>

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <string>

namespace blume::cli {

std::vector<std::string_view> split(std::string_view block, char delimiter, unsigned parts) {
  std::vector<std::string_view> out;
  for (unsigned i = parts; i > 1 && !block.empty(); --i) {
    std::size_t cut = block.size() / i;
    const std::size_t d = block.find(delimiter, cut);
    cut = d == std::string_view::npos ? block.size() : d + 1;
    out.push_back(block.substr(0, cut));
    block.remove_prefix(cut);
  }
  if (!block.empty()) out.push_back(block);
  return out;
}

void lock_target(std::optional<file_lock>& lock, const std::string& path, bool no_wait) {
  if (path == "-") return;
  try {
    lock.emplace(path, no_wait ? file_lock::mode::no_wait : file_lock::mode::wait);
  } catch (const file_locked& e) {
    throw file_locked(std::string(e.what()) + " (--no-wait)");
  }
}

void check_output(const std::string& path, const write_options& options) {
  if (path != "-") with_force_hint([&] { check_write_target(path, options); });
}

void write_output(const any_filter& f, const std::string& path, const filter_design& design,
                  const write_options& options) {
  if (path != "-") {
    with_force_hint([&] { save_filter(f, path, design, options); });
    return;
  }
  if (::isatty(STDOUT_FILENO) != 0)
    throw invalid_argument(
        "refusing to write a binary filter to a terminal: redirect standard output or give --output FILE");
  std::fflush(stdout);
  write_filter(f, STDOUT_FILENO, "standard output", design);
}

void add_force_flag(CLI::App& cmd, bool& force) {
  cmd.add_flag("--force", force,
               "replace an output file that is read-only, and rewrite one with other hard links in place (every "
               "name then sees the new filter); never replaces what is not a regular file");
}

std::string count_text(double count) {
  return std::isfinite(count)
             ? "about " + std::to_string(static_cast<std::uint64_t>(std::llround(count))) + " distinct keys"
             : "enough distinct keys to set every bit";
}

}  // namespace blume::cli
