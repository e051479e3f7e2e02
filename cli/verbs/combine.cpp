// SPDX-License-Identifier: Apache-2.0
// `blume merge` and `blume intersect`: one filter from several of the same kind and geometry, written
// atomically (the output may be one of the inputs) or to standard output.
#include <CLI/CLI.hpp>

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

enum class combine { merge, intersect };

struct combine_args {
  std::vector<std::string> inputs;
  std::string output;
  bool no_wait = false;
  bool force = false;
};

int run_combine(const std::vector<std::string>& inputs, const std::string& output_path, combine how, bool no_wait,
                bool force) {
  if (inputs.size() < 2) throw invalid_argument("give at least two input files");
  std::optional<file_lock> lock;
  lock_target(lock, output_path, no_wait);  // the output may be one of the inputs: lock before reading
  file_header first;
  any_filter result = open_filter(inputs[0], verify::full, &first);
  const filter_design design = first.design;
  for (std::size_t i = 1; i < inputs.size(); ++i) {
    const any_filter other = open_filter(inputs[i]);
    if (const std::string why = type_mismatch(result, other); !why.empty())
      throw incompatible_filters("cannot combine '" + inputs[0] + "' (" + std::string(kind_name(kind_of(result))) +
                                 ") with '" + inputs[i] + "' (" + std::string(kind_name(kind_of(other))) + "): " + why);
    std::visit(
        [&](auto& f) {
          using F = std::decay_t<decltype(f)>;
          const F& g = std::get<F>(other);
          if (how == combine::merge) {
            if constexpr (can_merge<F>) {
              f.merge(g);
            } else {
              throw incompatible_filters("cannot merge " + std::string(F::name) +
                                         " filters: " + std::string(F::merge_refusal));
            }
          } else if constexpr (can_intersect<F>) {
            f.intersect(g);
          } else {
            throw incompatible_filters("intersection is not supported for '" + std::string(F::name) + "' filters");
          }
        },
        result);
  }
  write_output(result, output_path, design, write_options{force});
  return 0;
}

/// The two verbs take the same arguments.
void register_combine(CLI::App& app, int& status, const std::string& name, const std::string& description,
                      combine how) {
  const auto a = std::make_shared<combine_args>();
  CLI::App* cmd = app.add_subcommand(name, description);
  cmd->add_option("inputs", a->inputs, "filter files")->required()->expected(2, -1);
  cmd->add_option("--output", a->output, "file to write (atomically), or - for standard output")->required();
  cmd->add_flag("--no-wait", a->no_wait, "fail at once if another writer holds the output file");
  add_force_flag(*cmd, a->force);
  cmd->callback([a, how, &status] { status = run_combine(a->inputs, a->output, how, a->no_wait, a->force); });
}

}  // namespace

void register_merge(CLI::App& app, int& status) {
  register_combine(app, status, "merge", "Union of filters of the same kind and geometry", combine::merge);
}

void register_intersect(CLI::App& app, int& status) {
  register_combine(app, status, "intersect", "Intersection of bit-array filters of the same geometry",
                   combine::intersect);
}

}  // namespace blume::cli
