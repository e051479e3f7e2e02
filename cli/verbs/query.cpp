// SPDX-License-Identifier: Apache-2.0
// `blume query`: maybe or no (yes for a cascade, absent for a filter that forgets, the value for a kind that
// answers with one, the count with --count) for each key given as an argument or read from standard input.
#include <CLI/CLI.hpp>

#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

#include "blume/any_filter.hpp"
#include "filter_ops.hpp"
#include "shared.hpp"

namespace blume::cli {

namespace {

int run_query(const query_options& o) {
  const any_filter filter = open_filter(o.file);
  if (o.count)
    std::visit(
        [](const auto& f) {
          using F = std::decay_t<decltype(f)>;
          if constexpr (!can_count<F>)
            throw invalid_argument(
                "a " + std::string(F::name) + " filter keeps no counts (--count is for " +
                kind_names_where([](auto type) { return can_count<typename decltype(type)::type>; }) + ")");
        },
        filter);
  bool any_no = false;
  output out;
  std::vector<char> answers;
  std::visit(
      [&](const auto& f) {
        if constexpr (!answers_keys<std::decay_t<decltype(f)>>) {
          throw invalid_argument("a " + std::string(std::decay_t<decltype(f)>::name) +
                                 " filter scores vectors, not keys: query it from the library or Python");
        } else {
          for_each_batch(o, [&](const std::vector<std::string_view>& batch) {
            answers.assign(batch.size(), 0);
            using F = std::decay_t<decltype(f)>;
            if constexpr (can_find<F>) {
              // A kind that answers with a value prints it: a map's value, a spatial filter's set, a compact
              // approximator's bound, an attenuated filter's nearest level.
              std::vector<decltype(f.find(batch[0]))> found(batch.size());
              if constexpr (requires { f.find_many(batch, found.begin()); }) {
                f.find_many(batch, found.begin());
              } else {
                for (std::size_t i = 0; i < batch.size(); ++i) found[i] = f.find(batch[i]);
              }
              for (std::size_t i = 0; i < batch.size(); ++i) {
                any_no |= !found[i].has_value();
                if (o.quiet) continue;
                out.add(batch[i]);
                out.add(found[i] ? "\t" + std::to_string(*found[i]) + "\n" : std::string("\tno\n"));
              }
              out.flush();
              return;
            }
            if constexpr (can_count<F>) {
              if (o.count) {
                for (const std::string_view k : batch) {
                  const auto n = f.count(k);
                  any_no |= n == 0;
                  if (o.quiet) continue;
                  out.add(k);
                  out.add("\t" + std::to_string(n) + "\n");
                }
                out.flush();
                return;
              }
            }
            integer_keys scratch;
            const std::vector<std::string_view>& keys = keys_for<F>(batch, scratch);
            if constexpr (requires { f.contains_many(keys, answers.begin()); }) {
              f.contains_many(keys, answers.begin());
            } else {
              for (std::size_t i = 0; i < keys.size(); ++i) answers[i] = f.contains(keys[i]);
            }
            // A cascade is exact on the keys it was built from, and a filter inside its zone on its whole
            // universe: "yes" rather than "maybe". A filter that forgets cannot say "no", only that the key was
            // not seen recently.
            bool exact = F::input == kind_input::included_and_excluded;
            if constexpr (requires { f.in_zone(); }) exact = f.in_zone();
            for (std::size_t i = 0; i < batch.size(); ++i) {
              any_no |= answers[i] == 0;
              if (o.quiet) continue;
              out.add(batch[i]);
              out.add(answers[i] != 0 ? (exact ? "\tyes\n" : "\tmaybe\n") : (forgets_v<F> ? "\tabsent\n" : "\tno\n"));
            }
            out.flush();  // answers keep pace with an interactive stream
          });
        }
      },
      filter);
  return any_no ? 1 : 0;
}

}  // namespace

void register_query(CLI::App& app, int& status) {
  const auto a = std::make_shared<key_args>();
  CLI::App* query = app.add_subcommand(
      "query",
      "Answer KEY<tab>maybe or KEY<tab>no for each key (arguments or stdin); stable and aging filters "
      "answer KEY<tab>absent for keys not seen recently (they forget by design); kinds that answer with a "
      "value print it (a map's value, a spatial filter's set, a compact approximator's bound, an attenuated "
      "filter's nearest level)");
  add_key_options(*query, *a);
  query->add_flag("--count", a->options.count,
                  "print KEY<tab>N, how many times the key was inserted at most (kinds that count)");
  query->add_flag("--quiet,-q", a->options.quiet,
                  "print nothing; exit 0 if every key may be present, 1 if one is certainly absent (for stable "
                  "and aging filters: not seen recently)");
  query->callback([a, &status] {
    a->options.format = format_option(a->format);
    status = run_query(a->options);
  });
}

}  // namespace blume::cli
