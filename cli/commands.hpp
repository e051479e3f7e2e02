// The tool's subcommands. Each takes its parsed options, calls the library, prints, and returns the exit
// status; errors are thrown as blume::error and reported by main (one line on stderr, exit status 2).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "blume/kind.hpp"
#include "key_input.hpp"

namespace blume::cli {

struct plan_options {
  std::uint64_t items = 0;
  std::optional<double> fpr;
  std::optional<std::uint64_t> memory_bytes;
  std::optional<filter_kind> kind;
  std::uint64_t key_bytes = 24;
  std::optional<std::uint32_t> value_bits;  // bloomier rows: the values' width
  std::optional<std::uint64_t> excluded;    // cascade rows: |S| (items is |R|)
  bool json = false;
};
int run_plan(const plan_options& o);

struct build_options {
  std::optional<filter_kind> kind;  // unset: the fastest kind that meets the rate
  std::uint64_t items = 0;  // 0: the keys in the input, counted first
  double fpr = 0.01;
  bool allow_overfill = false;
  bool allow_empty = false;
  bool no_wait = false;
  std::string input = "-";
  std::string output;
  key_format format = key_format::lines;
  unsigned threads = 2;
  bool progress = true;  // shown only on a terminal either way
  std::optional<std::uint32_t> value_bits;  // bloomier: unset means the widest value's width
  std::string included, excluded;           // cascade: the two key files
};
int run_build(const build_options& o);

struct query_options {
  std::string file;
  std::vector<std::string> keys;  // empty: keys from standard input
  key_format format = key_format::lines;
  bool quiet = false;
  bool allow_overfill = false;  // add
  bool no_wait = false;         // add, erase
};
int run_query(const query_options& o);

enum class update { add, erase };
int run_update(const query_options& o, update what);

int run_info(const std::string& file, bool json);

enum class combine { merge, intersect };
int run_combine(const std::vector<std::string>& inputs, const std::string& output, combine how, bool no_wait);
int run_estimate(const std::string& a, const std::string& b, bool json);

struct bench_options {
  std::uint64_t items = 1'000'000;
  std::vector<filter_kind> kinds;  // empty: every kind
  double fpr = 0.01;
};
int run_bench(const bench_options& o);

/// The kind `build` uses when none is given: split-block, the fastest, when it can meet the rate;
/// otherwise the blocked filter; otherwise the classic one.
filter_kind default_kind(std::uint64_t items, double fpr);

}  // namespace blume::cli
