// SPDX-License-Identifier: Apache-2.0
// Turning results into something a person reads: aligned text tables for the terminal, the same tables in
// Markdown for docs/benchmarks.md, the environment (machine, compiler, date), and the targets evaluation.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "results.hpp"

namespace blume::bench {

/// A table of strings, rendered either as aligned text or as a Markdown pipe table.
struct table {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  std::size_t left_aligned_columns = 1;  // the first columns hold words, the rest numbers

  std::string to_text() const;
  std::string to_markdown() const;
};

/// Where and how the run happened; printed at the top of the output and of the Markdown section.
struct run_environment {
  std::string command;   // the exact command line
  std::string date;      // UTC
  std::string compiler;  // compiler, flags and build type
  std::string machine;   // CPU model, cores, cache sizes, memory, transparent huge pages
  std::string pinning;   // what sched_setaffinity did
};
run_environment describe_environment(const std::string& command, const std::string& pinning);

/// Medians with their ratio to absl::flat_hash_set, and the min/median/max spread, for one configuration.
table medians_table(const config_result& config);
table spread_table(const config_result& config);
/// Each of our kinds' absent-key lookups against the limit probe over its own bytes.
table limit_table(const config_result& config);
/// Cells whose max exceeds their min by more than a quarter: the machine was busy, run again.
std::vector<std::string> wide_spreads(const config_result& config);
/// One line per contestant that describes its geometry (family kinds), or "" when none does.
std::string details_text(const config_result& config);
/// One line saying what a configuration measured (n, key type, probes, repetitions).
std::string config_title(const config_result& config);

/// One target, evaluated from the measured medians.
struct target_check {
  std::string target;
  std::string measured;        // the figure, or why it could not be evaluated
  std::optional<bool> passed;  // empty: not measured in this run
};
std::vector<target_check> evaluate_targets(const std::vector<config_result>& configs);
table targets_table(const std::vector<target_check>& checks);
/// True if at least one check could be evaluated in this run.
bool any_evaluated(const std::vector<target_check>& checks);
/// The family targets (counting, cuckoo and quotient against the Bloom kinds), per configuration run.
std::vector<target_check> evaluate_family_targets(const std::vector<config_result>& configs);
/// Each of our kinds against the n = 100M thresholds (empty when that configuration was not run).
table kinds_against_targets_table(const std::vector<config_result>& configs);

/// The Markdown report of a run. `standalone` adds the document title and the how-to-read notes.
/// `family_checks` is empty unless the run had family kinds in it.
std::string markdown_report(const run_environment& env, const std::vector<config_result>& configs,
                            const std::vector<target_check>& checks, const std::vector<target_check>& family_checks,
                            bool standalone, const std::vector<target_check>& static_checks = {});
/// One section of docs/benchmarks.md, for scripts/bench-report.sh to place under its heading and stamp with the
/// date, commit and machine: the medians of every configuration in one table, then the targets the run could
/// evaluate. Spreads and the limit probe stay on the terminal, where a busy run shows.
std::string markdown_section(const run_environment& env, const std::vector<config_result>& configs,
                             const std::vector<target_check>& checks, const std::vector<target_check>& family_checks,
                             const std::vector<target_check>& static_checks);
/// The static-filter targets (xor, binary fuse, Golomb-coded set), per configuration run.
std::vector<target_check> evaluate_static_targets(const std::vector<config_result>& configs);

}  // namespace blume::bench
