// SPDX-License-Identifier: Apache-2.0
// What a filter is, field by field, for the surfaces that describe one (`blume info`, the Python
// bindings' info()): kind, parameters, design, each kind's own fill and rates, size. One list, so the tool's
// JSON and a Python dict have the same keys and values.
#pragma once

#include <algorithm>
#include <cmath>
#include <concepts>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "blume/any_filter.hpp"
#include "blume/plan.hpp"
#include "blume/version.hpp"
#include "number_text.hpp"

namespace blume::surface {

/// One line of a description: its name ("target FPR"), its text for people, and its JSON value (empty:
/// text only).
struct report_field {
  std::string name;
  std::string text;
  std::string json;
};

/// What the file header's primary field of kind F holds: its size in the kind's size_unit (bits, counters,
/// cells), or what the kind says it holds instead (a quotient filter's slots, a scalable chain's first layer
/// capacity).
template <class F>
constexpr std::string_view primary_field_of() noexcept {
  if constexpr (requires { F::primary_field; }) {
    return F::primary_field;
  } else {
    return size_unit_of<F>().name;
  }
}

/// What the header's secondary field of kind F holds: its hash count, or what the kind says it holds instead
/// (a hash-compaction table's signature bits).
template <class F>
constexpr std::string_view secondary_field_of() noexcept {
  if constexpr (requires { F::secondary_field; }) {
    return F::secondary_field;
  } else {
    return "hashes";
  }
}

/// The fields describing `filter`, whose header (as read from its file, or as saving it would write it)
/// is `h`.
inline std::vector<report_field> describe_filter(const any_filter& filter, const file_header& h) {
  using text::fixed;
  using text::human_bytes;
  using text::json_number;
  using text::json_string;
  using text::percent;
  std::vector<report_field> fields;
  const auto add = [&](std::string name, std::string text, std::string json_value) {
    fields.push_back({std::move(name), std::move(text), std::move(json_value)});
  };
  const auto integer = [&](std::string name, std::uint64_t v) {
    add(std::move(name), std::to_string(v), std::to_string(v));
  };
  add("kind", std::string(kind_name(h.kind)), json_string(kind_name(h.kind)));
  add("version", "blume " + std::string(blume::version), json_string(blume::version));
  integer("format version", h.version);
  if (h.design.recorded()) {
    integer("planned capacity", h.design.items);
    add("target FPR", percent(h.design.fpr), json_number(h.design.fpr));
  } else {
    add("planned capacity", "not recorded (a version-1 file, or saved without it)", "null");
    add("target FPR", "not recorded", "null");
  }
  add("hash", std::string(hash_name(h.hash)), json_string(hash_name(h.hash)));
  integer("seed", h.seed);
  integer(std::string(std::visit([](const auto& f) { return primary_field_of<std::decay_t<decltype(f)>>(); }, filter)),
          h.primary);
  integer(std::string(std::visit([](const auto& f) { return secondary_field_of<std::decay_t<decltype(f)>>(); },
                                 filter)),
          h.secondary);
  integer("layout", h.layout);
  integer("inserted", h.inserted);
  std::visit(
      [&](const auto& f) {
        using F = std::decay_t<decltype(f)>;
        // Each kind's own fields, found by the members that report them.
        if constexpr (requires {
                        { f.layout() } -> std::same_as<cell_layout>;
                      }) {
          const bool blocked = f.layout() == cell_layout::blocked;
          add("cell layout",
              blocked ? "blocked (a key's cells in one 64-byte block)" : "classic (a key's cells anywhere)",
              json_string(blocked ? "blocked" : "classic"));
        }
        if constexpr (requires {
                        f.recall_after(std::uint64_t{});
                        f.half_forgotten_after();
                      }) {
          // Recall of a key as old as the planned capacity, and the age at which half are forgotten.
          const std::uint64_t age = h.design.recorded()
                                        ? h.design.items
                                        : static_cast<std::uint64_t>(static_cast<double>(f.cells()) / f.hashes());
          const double recall = f.recall_after(age);
          add("forgets", "yes: false negatives by design; 'absent' means not seen recently, not never inserted",
              "true");
          add("false-negative rate at capacity",
              percent(1 - recall) + " (model: for a key inserted " + std::to_string(age) + " keys ago)",
              json_number(1 - recall));
          if (const auto half = f.half_forgotten_after())
            add("half forgotten after", std::to_string(*half) + " inserts (model)", std::to_string(*half));
          else add("half forgotten after", "never (model: no decrements)", "null");
        } else if constexpr (requires {
                               f.window();
                               f.window_time();
                             }) {
          add("forgets", "yes: false negatives by design; 'absent' means not seen recently, not never inserted",
              "true");
          const std::string window = std::to_string(f.window());
          add("remembers",
              "every key among the last " + std::to_string(f.window() / 2) + " inserts" +
                  (f.window_time().count() != 0 ? " and the last " + fixed(f.window_time().count() / 2e9, 3) + " s"
                                                : "") +
                  "; none older than " + window + " inserts" +
                  (f.window_time().count() != 0 ? " or " + fixed(f.window_time().count() / 1e9, 3) + " s" : ""),
              "{\"always_within_items\": " + std::to_string(f.window() / 2) + ", \"never_after_items\": " + window +
                  ", \"window_seconds\": " + json_number(f.window_time().count() / 1e9) + "}");
        } else if constexpr (scores_vectors<F>) {
          add("forgets", "yes: an input's novelty rises back with time", "true");
        } else {
          add("forgets", "no: 'no' is certain", "false");
        }
        if constexpr (bit_array_filter<F>) {
          // One pass over the bits serves the fill, the count estimate and the rate now.
          const double set = static_cast<double>(f.set_bits());
          const double fill = set / static_cast<double>(f.bits());
          const double count = F::layout_type::estimate_items(set, static_cast<double>(f.bits()), f.hashes());
          add("estimated count", fixed(count, 0), json_number(count));
          add("fill ratio", percent(fill), json_number(fill));
          // Shown beside the planned capacity (which version-1 files lack): where this k is optimal.
          const double capacity = f.optimal_load();
          add("capacity (k optimal)", fixed(capacity, 0), json_number(capacity));
          add("predicted FPR at capacity", percent(f.predicted_fpr_at(capacity)),
              json_number(f.predicted_fpr_at(capacity)));
          // A kind whose cells know more than the count (vi-counting's stuck counters) reads its rate off them.
          double now = f.predicted_fpr_at(count);
          if constexpr (requires { requires F::rate_from_cells; }) now = f.predicted_fpr();
          add("predicted FPR now", percent(now), json_number(now));
        } else {
          if constexpr (requires { f.estimated_count(); })
            add("estimated count", fixed(f.estimated_count(), 0), json_number(f.estimated_count()));
          if constexpr (requires { f.load_factor(); })
            add("load factor", percent(f.load_factor()), json_number(f.load_factor()));
          if constexpr (requires { f.expected_omissions(); }) {
            add("occupied slots", std::to_string(f.occupied()), std::to_string(f.occupied()));
            add("expected omissions", fixed(f.expected_omissions(), 1) + " (model: new keys taken as seen so far)",
                json_number(f.expected_omissions()));
          }
          if constexpr (requires {
                          f.geometry().subtables;
                          f.geometry().counter_bits;
                        }) {
            const auto& g = f.geometry();
            add("table",
                std::to_string(g.subtables) + " subtables of " + std::to_string(g.buckets) + " buckets of " +
                    std::to_string(g.cells) + " cells (" + std::to_string(g.remainder_bits) + "-bit remainder, " +
                    std::to_string(g.counter_bits) + "-bit counter)",
                "{\"subtables\": " + std::to_string(g.subtables) + ", \"buckets\": " + std::to_string(g.buckets) +
                    ", \"cells\": " + std::to_string(g.cells) + ", \"remainder_bits\": " +
                    std::to_string(g.remainder_bits) + ", \"counter_bits\": " + std::to_string(g.counter_bits) + "}");
          }
          if constexpr (requires {
                          f.value_bits();
                          f.check_bits();
                        }) {
            add("value bits", std::to_string(f.value_bits()), std::to_string(f.value_bits()));
            add("check bits", std::to_string(f.check_bits()), std::to_string(f.check_bits()));
            add("bits per key", fixed(f.bits_per_key(), 2), json_number(f.bits_per_key()));
          }
          if constexpr (requires {
                          f.level_count();
                          f.included();
                          f.excluded();
                        }) {
            add("included keys", std::to_string(f.included()), std::to_string(f.included()));
            add("excluded keys", std::to_string(f.excluded()), std::to_string(f.excluded()));
            add("levels", std::to_string(f.level_count()), std::to_string(f.level_count()));
            std::string sizes, json_sizes = "[";
            for (std::size_t i = 0; i < f.level_count(); ++i) {
              sizes += (i ? ", " : "") + std::to_string(f.level(i).bits());
              json_sizes += (i ? ", " : "") + std::to_string(f.level(i).bits());
            }
            add("level bits", sizes.empty() ? "none" : sizes, json_sizes + "]");
            add("bits per included key", fixed(f.bits_per_included_key(), 2), json_number(f.bits_per_included_key()));
          }
          if constexpr (requires {
                          f.all_set_rates();
                          f.emersion(1u);
                        }) {
            // Each set's keys and its rates under the model; in JSON one array under "sets".
            const auto rates = f.all_set_rates();
            std::string sets_json = "[";
            for (std::uint32_t i = 1; i <= rates.size(); ++i)
              sets_json += std::string(i > 1 ? ", " : "") + "{\"set\": " + std::to_string(i) +
                           ", \"keys\": " + std::to_string(f.set_size(i)) +
                           ", \"false_positive\": " + json_number(rates[i - 1].false_positive) +
                           ", \"misreport\": " + json_number(rates[i - 1].misreport) +
                           ", \"emersion\": " + json_number(f.emersion(i)) +
                           ", \"model_emersion\": " + json_number(rates[i - 1].emersion) + "}";
            add("sets", std::to_string(rates.size()), sets_json + "]");
            for (std::uint32_t i = 1; i <= rates.size(); ++i)
              add("  set " + std::to_string(i),
                  std::to_string(f.set_size(i)) + " keys; absent keys reported as it " +
                      percent(rates[i - 1].false_positive) + ", members reported as a later set " +
                      percent(rates[i - 1].misreport) + "; emersion " + fixed(f.emersion(i), 3) + " (model " +
                      fixed(rates[i - 1].emersion, 3) + ")",
                  "");  // text only: the JSON has them in "sets"
          }
          if constexpr (requires {
                          f.layers();
                          f.layer_fill(0);
                          f.layer_fpr(0);
                        }) {
            // Layers that count: layer i holds the keys seen i times or more, so its rate bounds over-counts.
            std::string fills, rates, json_fills = "[", json_rates = "[";
            for (std::uint32_t i = 0; i < f.layers(); ++i) {
              fills += (i ? ", " : "") + percent(f.layer_fill(i));
              rates += (i ? ", " : "") + percent(f.layer_fpr(i));
              json_fills += (i ? ", " : "") + json_number(f.layer_fill(i));
              json_rates += (i ? ", " : "") + json_number(f.layer_fpr(i));
            }
            add("layers", std::to_string(f.layers()), std::to_string(f.layers()));
            add("layer fill", fills, json_fills + "]");
            add("layer FPR now", rates, json_rates + "]");
          }
          if constexpr (requires {
                          f.depth();
                          f.level_fill(0);
                          f.level_estimated_count(0);
                          f.level_fpr(0);
                        }) {
            add("levels", std::to_string(f.depth()), std::to_string(f.depth()));
            std::string text, json_levels = "[";
            for (std::uint32_t i = 0; i < f.depth(); ++i) {
              text += (i ? "; " : "") + std::to_string(i) + ": " + percent(f.level_fill(i)) + " full, ~" +
                      fixed(f.level_estimated_count(i), 0) + " keys, FPR " + percent(f.level_fpr(i));
              json_levels += std::string(i ? ", " : "") + "{\"fill\": " + json_number(f.level_fill(i)) +
                             ", \"estimated_count\": " + json_number(f.level_estimated_count(i)) +
                             ", \"fpr\": " + json_number(f.level_fpr(i)) + "}";
            }
            add("level fill", text, json_levels + "]");
          }
          if constexpr (requires {
                          f.universe();
                          f.zone();
                          f.primes();
                          f.in_zone();
                        }) {
            add("universe", "[0, " + f.universe().size_text() + ")", f.universe().size_text());
            add("zone", std::to_string(f.zone()) + " keys", std::to_string(f.zone()));
            add("in zone",
                f.in_zone() ? "yes: no key of the universe is a false positive ('maybe' is 'yes')"
                            : "no: " + std::to_string(f.inserted()) + " keys inserted, past the zone",
                f.in_zone() ? "true" : "false");
            const auto primes = f.primes();
            std::string text = std::to_string(primes.size()) + ": " + std::to_string(primes.front()), json = "[";
            if (primes.size() > 1) text += (primes.size() > 2 ? " … " : ", ") + std::to_string(primes.back());
            for (std::size_t i = 0; i < primes.size(); ++i) json += (i ? ", " : "") + std::to_string(primes[i]);
            add("segments", text + " bits", json + "]");
          }
          if constexpr (scores_vectors<F>) {
            const novelty_rules r = f.rules();
            add("dimension", std::to_string(f.dim()) + " values an input", std::to_string(f.dim()));
            add("samples", std::to_string(f.samples()) + " inputs a unit", std::to_string(f.samples()));
            add("depression", fixed(r.depression, 4) + " (an observation multiplies its tag's weights by it)",
                json_number(r.depression));
            add("recovery", fixed(r.recovery, 4) + " of what a weight lacks, each step", json_number(r.recovery));
            add("clock", std::to_string(f.clock()) + " steps (" + std::to_string(f.observed()) + " observations)",
                std::to_string(f.clock()));
            const double mean = f.mean_weight(), unrelated = f.expected_unrelated_novelty();
            add("mean weight", fixed(mean, 4), json_number(mean));
            add("unrelated novelty", fixed(unrelated, 4) + " (model, before recovery)", json_number(unrelated));
          }
          if constexpr (requires { f.predicted_fpr(); })
            add("predicted FPR now", percent(f.predicted_fpr()), json_number(f.predicted_fpr()));
          // At capacity: each kind's own notion of full.
          double at_capacity = NAN;
          if constexpr (requires { f.predicted_fpr_at_capacity(); }) at_capacity = f.predicted_fpr_at_capacity();
          if (std::isfinite(at_capacity))
            add("predicted FPR at capacity", percent(at_capacity), json_number(at_capacity));
        }
        add("size", human_bytes(static_cast<double>(f.size_in_bytes())), std::to_string(f.size_in_bytes()));
      },
      filter);
  return fields;
}

/// The JSON key of a field: its name with spaces as underscores and no parentheses ("capacity (k
/// optimal)" is capacity_k_optimal).
inline std::string report_key(std::string name) {
  std::replace(name.begin(), name.end(), ' ', '_');
  name.erase(std::remove_if(name.begin(), name.end(), [](char c) { return c == '(' || c == ')'; }), name.end());
  return name;
}

/// The fields as one JSON object (text-only fields left out).
inline std::string report_json(const std::vector<report_field>& fields) {
  std::string out = "{";
  bool first = true;
  for (const report_field& f : fields) {
    if (f.json.empty()) continue;
    out += (first ? "" : ", ") + text::json_string(report_key(f.name)) + ": " + f.json;
    first = false;
  }
  return out + "}";
}

}  // namespace blume::surface
