// SPDX-License-Identifier: Apache-2.0
// `blume absorb`: a node's attenuated filter takes in its neighbours' (their level i joins its level
// i + hops), written back atomically under the target's lock, as a distance-vector round would.
#include <CLI/CLI.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "blume/any_filter.hpp"
#include "filter_ops.hpp"
#include "shared.hpp"

namespace blume::cli {

namespace {

struct absorb_args {
  std::string target;
  std::vector<std::string> neighbours;
  std::uint32_t hops = 1;
  std::string output;
  bool no_wait = false;
  bool force = false;
  bool allow_overfill = false;
};

int run_absorb(const absorb_args& a) {
  const std::string& output = a.output.empty() ? a.target : a.output;
  std::optional<file_lock> lock;
  lock_target(lock, output, a.no_wait);  // the output is usually the target: lock before reading
  file_header first;
  any_filter result = open_filter(a.target, verify::full, &first);
  std::visit(
      [&](auto& f) {
        using F = std::decay_t<decltype(f)>;
        if constexpr (can_absorb<F>) {
          for (const std::string& path : a.neighbours) {
            const any_filter other = open_filter(path);
            if (!std::holds_alternative<F>(other))
              throw incompatible_filters("cannot absorb '" + path + "' (" + std::string(kind_name(kind_of(other))) +
                                         ") into '" + a.target + "' (" + std::string(F::name) + "): kinds differ");
            f.absorb(std::get<F>(other), a.hops);
          }
          // Deeper levels hold the union of more nodes: the first past the tolerance is refused.
          if (!a.allow_overfill && first.design.recorded())
            for (std::uint32_t i = 0; i < f.depth(); ++i)
              if (f.level_fpr(i) > overfill_tolerance * first.design.fpr)
                throw invalid_argument("absorbing into '" + a.target + "': level " + std::to_string(i) +
                                       " would hold " + count_text(f.level_estimated_count(i)) +
                                       " against a capacity of " + std::to_string(first.design.items) +
                                       ", a false-positive rate of " + percent(f.level_fpr(i)) + " (target " +
                                       percent(first.design.fpr) +
                                       "); build the nodes for more keys, or pass --allow-overfill");
        } else {
          throw incompatible_filters("cannot absorb into '" + a.target + "': a " + std::string(F::name) +
                                     " filter has no levels for what its neighbours know (kinds that do: " +
                                     kind_names_where([](auto t) { return can_absorb<typename decltype(t)::type>; }) +
                                     ")");
        }
      },
      result);
  write_output(result, output, first.design, write_options{a.force});
  return 0;
}

}  // namespace

void register_absorb(CLI::App& app, int& status) {
  const auto a = std::make_shared<absorb_args>();
  CLI::App* cmd =
      app.add_subcommand("absorb",
                         "Take neighbours' attenuated filters into a node's: their level i joins its level i + hops");
  cmd->add_option("target", a->target, "the node's filter file (rewritten atomically unless --output)")->required();
  cmd->add_option("neighbours", a->neighbours, "the neighbours' filter files")->required()->expected(1, -1);
  cmd->add_option("--hops", a->hops, "how far away the neighbours are")->check(CLI::Range(1, 64));
  cmd->add_option("--output", a->output, "file to write instead of the target, or - for standard output");
  cmd->add_flag("--no-wait", a->no_wait, "fail at once if another writer holds the output file");
  add_force_flag(*cmd, a->force);
  cmd->add_flag("--allow-overfill", a->allow_overfill,
                "write the filter even when a level's false-positive rate passes 1.5x its target");
  cmd->callback([a, &status] { status = run_absorb(*a); });
}

}  // namespace blume::cli
