// SPDX-License-Identifier: Apache-2.0
// `blume estimate`: the sizes of two key sets, their union and intersection and the Jaccard index, read
// off two bit-array filters of the same geometry.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <memory>
#include <string>
#include <type_traits>
#include <variant>

#include "blume/any_filter.hpp"
#include "filter_ops.hpp"
#include "shared.hpp"

namespace blume::cli {

namespace {

struct estimate_args {
  std::string a, b;
  bool json = false;
};

int run_estimate(const std::string& a_path, const std::string& b_path, bool json) {
  const any_filter a = open_filter(a_path);
  const any_filter b = open_filter(b_path);
  if (const std::string why = type_mismatch(a, b); !why.empty())
    throw incompatible_filters("cannot compare a '" + std::string(kind_name(kind_of(a))) + "' filter with a '" +
                               std::string(kind_name(kind_of(b))) + "' filter: " + why);
  double na = 0, nb = 0, both = 0, either = 0, jaccard = 0;
  std::visit(
      [&](const auto& x) {
        using F = std::decay_t<decltype(x)>;
        if constexpr (bit_array_filter<F>) {
          const F& y = std::get<F>(b);
          na = x.estimated_count();
          nb = y.estimated_count();
          either = estimate_union(x, y);
          both = estimate_intersection(x, y);
          jaccard = estimate_jaccard(x, y);
        } else {
          throw incompatible_filters("set-size estimates need a bit-array filter (" + kind_names_where([](auto t) {
                                       return bit_array_filter<typename decltype(t)::type>;
                                     }) +
                                     "), not '" + std::string(F::name) + "'");
        }
      },
      a);
  if (json) {
    std::printf("{\"a\": %s, \"b\": %s, \"union\": %s, \"intersection\": %s, \"jaccard\": %s}\n",
                json_number(na).c_str(), json_number(nb).c_str(), json_number(either).c_str(),
                json_number(both).c_str(), json_number(jaccard).c_str());
  } else {
    std::printf("A        %s\nB        %s\nA ∪ B    %s\nA ∩ B    %s\nJaccard  %s\n", fixed(na, 0).c_str(),
                fixed(nb, 0).c_str(), fixed(either, 0).c_str(), fixed(both, 0).c_str(), fixed(jaccard, 4).c_str());
  }
  return 0;
}

}  // namespace

void register_estimate(CLI::App& app, int& status) {
  const auto a = std::make_shared<estimate_args>();
  CLI::App* estimate = app.add_subcommand("estimate", "Estimated sizes of A, B, A∪B, A∩B and the Jaccard index");
  estimate->add_option("a", a->a, "filter file")->required();
  estimate->add_option("b", a->b, "filter file")->required();
  estimate->add_flag("--json", a->json, "one JSON object");
  estimate->callback([a, &status] { status = run_estimate(a->a, a->b, a->json); });
}

}  // namespace blume::cli
