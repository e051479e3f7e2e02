// SPDX-License-Identifier: Apache-2.0
// `blume add` and `blume erase`: keys (arguments or standard input) inserted into or removed from a filter
// file in place, under the file's lock. The two share everything but the step taken for each key.
#include <CLI/CLI.hpp>

#include <cstdint>
#include <memory>
#include <optional>
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

enum class update { add, erase };

std::string erasing_kinds() {
  return kind_names_where([](auto type) { return can_erase<typename decltype(type)::type>; });
}

int run_update(const query_options& o, update what) {
  std::optional<file_lock> lock;
  lock_target(lock, o.file, o.no_wait);  // held until the new file has replaced the old one
  file_header header;
  any_filter filter = open_filter(o.file, verify::full, &header);
  const filter_design design = header.design;
  std::uint64_t done = 0, total = 0, refused = 0;
  std::string why_full;  // what a chain that cannot grow says about its next layer
  output out;
  std::visit(
      [&](auto& f) {
        using F = std::decay_t<decltype(f)>;
        if constexpr (!answers_keys<F>)
          throw invalid_argument("a '" + std::string(kind_name(F::kind)) +
                                 "' filter scores vectors, not keys: change it from the library or Python");
        if (what == update::erase && !can_erase<F>)
          throw invalid_argument("erase is not sound for a '" + std::string(kind_name(F::kind)) +
                                 "' filter (it cannot forget keys): use one of " + erasing_kinds());
        for_each_batch(o, [&](const std::vector<std::string_view>& batch) {
          integer_keys scratch;
          const std::vector<std::string_view>& keys = keys_for<F>(batch, scratch);
          for (std::size_t i = 0; i < keys.size(); ++i) {
            const std::string_view k = keys[i];
            ++total;
            if (what == update::add) {
              if constexpr (takes_valued_inserts<F>) {
                // Keys with values come as KEY<TAB>VALUE records.
                const key_value r = parse_record(k, "key " + std::to_string(total));
                if (r.value > F::max_value)
                  throw invalid_argument("key " + std::to_string(total) + ": value " + std::to_string(r.value) +
                                         " is above the " + std::string(F::name) + " filter's largest, " +
                                         std::to_string(F::max_value) + " (nothing was written)");
                f.insert(r.key, static_cast<std::uint32_t>(r.value));
                ++done;
              } else if constexpr (takes_inserts<F>) {
                if constexpr (may_be_full<F>) {
                  const bool stored = insert_stored(f, k);
                  refused += !stored;
                  if constexpr (requires { f.growth_refusal(); })
                    if (!stored && why_full.empty()) why_full = f.growth_refusal();
                } else {
                  f.insert(k);
                }
                ++done;
              } else {
                throw invalid_argument("a '" + std::string(kind_name(F::kind)) +
                                       "' filter is static: build it again from all the keys (blume build)");
              }
            } else if constexpr (can_erase<F>) {
              const bool erased = f.erase(k);
              done += erased;
              if (!o.quiet) {
                out.add(batch[i]);
                out.add(erased ? "\terased\n" : "\tnot found\n");
              }
            }
          }
        });
      },
      filter);
  if (refused != 0)
    throw invalid_argument("the filter is full: " + std::to_string(refused) + " of " + std::to_string(total) +
                           " keys did not fit (nothing was written)" + (why_full.empty() ? "" : ": " + why_full));
  if (what == update::add && !o.allow_overfill)
    std::visit(
        [&](const auto& f) {
          if constexpr (requires { f.in_zone(); }) {
            if (!f.in_zone())
              throw invalid_argument("adding " + std::to_string(total) + " keys to '" + o.file +
                                     "' takes it past its zone of " + std::to_string(f.zone()) +
                                     " keys, where it has false positives (nothing was "
                                     "written; --allow-overfill adds them anyway)");
          }
          refuse_overfill(f, design, "adding " + std::to_string(total) + " keys to '" + o.file + "'",
                          "nothing was written; build a larger filter from all the keys");
        },
        filter);
  write_output(filter, o.file, design, write_options{o.force});
  out.flush();
  return what == update::erase && done != total ? 1 : 0;
}

}  // namespace

void register_add(CLI::App& app, int& status) {
  const auto a = std::make_shared<key_args>();
  CLI::App* add = app.add_subcommand("add", "Insert keys (arguments or stdin) into a filter file, in place");
  add_key_options(*add, *a);
  add->add_flag("--allow-overfill", a->options.allow_overfill,
                "add keys past the capacity the filter was planned for (its rate then exceeds the target)");
  add->add_flag("--no-wait", a->options.no_wait, "fail at once if another writer holds the file");
  add_force_flag(*add, a->options.force);
  add->callback([a, &status] {
    a->options.format = format_option(a->format);
    a->options.quiet = true;
    status = run_update(a->options, update::add);
  });
}

void register_erase(CLI::App& app, int& status) {
  const auto a = std::make_shared<key_args>();
  CLI::App* erase =
      app.add_subcommand("erase", "Remove keys from a filter file of a kind that erases (" + erasing_kinds() + ")");
  add_key_options(*erase, *a);
  erase->add_flag("--quiet,-q", a->options.quiet, "print nothing; exit 1 if a key was not found");
  erase->footer(
      "Erase only keys that were added. A key the filter answers 'no' for is 'not found', changes nothing, and "
      "makes the exit status 1. A key never added that is a false positive cannot be told from one that was: "
      "it is 'erased', and what it takes away belonged to keys that were added, which then answer 'no'. With "
      "100,000 keys at 1%, erasing 100,000 keys never added made about 4.5% of the keys added answer 'no' in a "
      "counting, vi-counting or iblt filter (each false positive erased damages about 0.69 x k keys), and "
      "0.19% in cuckoo, 0.69% in quotient and 0.58% in dleft (one key per false positive erased).");
  erase->add_flag("--no-wait", a->options.no_wait, "fail at once if another writer holds the file");
  add_force_flag(*erase, a->options.force);
  erase->callback([a, &status] {
    a->options.format = format_option(a->format);
    status = run_update(a->options, update::erase);
  });
}

}  // namespace blume::cli
