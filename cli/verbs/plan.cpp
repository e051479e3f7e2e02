// SPDX-License-Identifier: Apache-2.0
// `blume plan`: the size of a filter of each kind (or one) for a number of keys, at a rate or within a
// memory budget, beside a hash set and the information-theoretic minimum.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "blume/kinds.hpp"
#include "shared.hpp"
#include "units.hpp"

namespace blume::cli {

namespace {

struct plan_options {
  std::uint64_t items = 0;
  std::optional<double> fpr;
  std::optional<std::uint64_t> memory_bytes;
  std::optional<filter_kind> kind;
  std::uint64_t key_bytes = 24;
  std::optional<std::uint32_t> value_bits;   // bloomier rows: the values' width
  std::optional<std::uint64_t> excluded;     // cascade rows: |S| (items is |R|)
  std::optional<std::uint32_t> sets;         // spatial rows: the items shared out over this many sets
  std::optional<integer_universe> universe;  // kinds of integer keys (egh): their keys are [0, U)
  std::optional<std::uint64_t> zone;         // … and no false positive while they hold at most this many
  std::optional<cell_layout> cells;          // the kinds of lattice cells (spatial, compact): their layout
  bool json = false;
};

/// The command line as given: text until the callback parses it.
struct plan_args {
  std::string items, fpr, memory, kind, key_bytes = "24", excluded, universe, zone, cells;
  std::uint32_t sets = 0;
  std::uint32_t value_bits = 0;
  bool json = false;
};

/// A budget that buys a rate this high buys nothing useful: half the absent keys would pass.
constexpr double useless_rate = 0.5;

/// A kind whose size depends on its values' width as well (a Bloomier map).
template <class F>
concept planned_with_value_bits = requires(std::uint64_t n, double fpr, std::uint32_t bits) { F::plan(n, fpr, bits); };
/// A kind planned for the sizes of several sets (a spatial filter).
template <class F>
concept planned_per_set = requires(std::span<const std::uint64_t> sizes, double fpr) { F::plan(sizes, fpr); };

/// A kind of lattice cells, planned in either cell layout.
template <class F>
concept planned_in_layouts = requires(std::uint64_t n, double fpr) {
  F::plan(n, fpr, cell_layout{});
} || requires(std::span<const std::uint64_t> sizes, double fpr) { F::plan(sizes, fpr, cell_layout{}); };
bool has_cell_layouts(filter_kind k) {
  bool has = false;
  visit_kind(k, [&](auto type) { has = planned_in_layouts<typename decltype(type)::type>; });
  return has;
}

/// Whether the command line gives what kind `k` needs to be planned beyond a key count and a rate.
bool has_inputs_for(filter_kind k, const plan_options& o) {
  bool given = false;
  visit_kind(k, [&](auto type) {
    using F = typename decltype(type)::type;
    if constexpr (planned_with_value_bits<F>) given = o.value_bits.has_value();
    else if constexpr (planned_per_set<F>) given = o.sets.has_value();
    else if constexpr (F::input == kind_input::included_and_excluded) given = o.excluded.has_value();
    else if constexpr (F::input == kind_input::integers) given = false;  // planned alone: run_integer_plan
    else if constexpr (F::input == kind_input::vectors) given = false;   // sized by its inputs, not planned
    else given = true;
  });
  return given;
}

struct plan_row {
  filter_kind kind;
  std::optional<filter_plan> plan;
  std::string problem;  // why there is no plan
};

/// A kind of integer keys (egh): the primes a zone of --zone keys of [0, U) takes (or the largest zone
/// --memory buys), what the zone costs against a classic filter, and the model's rate past the zone.
int run_integer_plan(const plan_options& o, filter_kind kind) {
  visit_kind(kind, [&](auto type) {
    using F = typename decltype(type)::type;
    if constexpr (F::input == kind_input::integers) {
      const auto p = o.zone ? F::plan_for_zone(*o.universe, *o.zone)
                            : F::plan_for_budget(*o.universe, *o.memory_bytes * 8);
      const double d = static_cast<double>(p.zone), bits = static_cast<double>(p.bits);
      const std::uint64_t past[] = {2, 10, 100};
      std::string primes = std::to_string(p.primes.front()), json_primes = "[";
      if (p.primes.size() > 1) primes += (p.primes.size() > 2 ? " … " : ", ") + std::to_string(p.primes.back());
      for (std::size_t i = 0; i < p.primes.size(); ++i) json_primes += (i ? ", " : "") + std::to_string(p.primes[i]);
      if (o.json) {
        std::string out = "{\"kind\": " + json_string(F::name) + ", \"universe\": " + p.universe.size_text() +
                          ", \"zone\": " + std::to_string(p.zone) +
                          ", \"segments\": " + std::to_string(p.primes.size()) + ", \"primes\": " + json_primes +
                          "], \"bits\": " + std::to_string(p.bits) + ", \"bytes\": " + std::to_string(p.bytes) +
                          ", \"classic_fpr_log2_same_bits\": " + json_number(p.classic_fpr_log2) +
                          ", \"classic_bits_for_universe\": " + std::to_string(p.classic_bits_for_universe) +
                          ", \"fpr_past_zone\": {";
        for (std::size_t i = 0; i < std::size(past); ++i)
          out += (i ? ", " : "") + std::string("\"") + std::to_string(past[i] * p.zone) +
                 "\": " + json_number(F::rate_of(p.primes, d * static_cast<double>(past[i])));
        std::printf("%s}}\n", out.c_str());
        return;
      }
      std::printf("%s filter of keys in [0, %s): no false positive while it holds at most %llu keys\n\n",
                  std::string(F::name).c_str(), p.universe.size_text().c_str(),
                  static_cast<unsigned long long>(p.zone));
      std::printf("  segments  %zu, of %s bits (primes whose product passes (U - 1)^%llu)\n", p.primes.size(),
                  primes.c_str(), static_cast<unsigned long long>(p.zone));
      std::printf("  bits      %llu (%s with the primes), %s bits per key of the zone\n",
                  static_cast<unsigned long long>(p.bits), human_bytes(static_cast<double>(p.bytes)).c_str(),
                  fixed(bits / d, 1).c_str());
      std::printf("\nwhat the zone costs:\n");
      std::printf("  a classic filter of the same %llu bits holding %llu keys: a rate of 2^%s\n",
                  static_cast<unsigned long long>(p.bits), static_cast<unsigned long long>(p.zone),
                  fixed(p.classic_fpr_log2, 1).c_str());
      std::printf(
          "  a classic filter that expects less than one false positive in the whole universe at %llu keys: "
          "%llu bits (the zone takes %sx that, for a guarantee instead of an expectation)\n",
          static_cast<unsigned long long>(p.zone), static_cast<unsigned long long>(p.classic_bits_for_universe),
          fixed(bits / static_cast<double>(std::max<std::uint64_t>(1, p.classic_bits_for_universe)), 1).c_str());
      std::printf("\npast the zone (model, random keys):\n");
      for (const std::uint64_t times : past)
        std::printf("  %llu keys: %s\n", static_cast<unsigned long long>(times * p.zone),
                    percent(F::rate_of(p.primes, d * static_cast<double>(times))).c_str());
    }
  });
  return 0;
}

int run_plan(const plan_options& o) {
  std::vector<filter_kind> kinds;
  if (o.kind) {
    kinds.push_back(*o.kind);
  } else {
    kinds.assign(all_kinds.begin(), all_kinds.end());
    // A kind with inputs of its own is planned when its input's size is given.
    for (const filter_kind k : map_kinds)
      if (has_inputs_for(k, o) && (o.value_bits || o.sets || o.excluded || (o.cells && has_cell_layouts(k))))
        kinds.push_back(k);
    if (o.cells) std::erase_if(kinds, [](filter_kind k) { return !has_cell_layouts(k); });
  }
  const double n = static_cast<double>(o.items);
  // The largest filter blume builds: a bigger budget is capped, and says so.
  const bool capped = o.memory_bytes && *o.memory_bytes > max_filter_bits / 8;
  const std::uint64_t budget_bits = o.memory_bytes ? std::min<std::uint64_t>(*o.memory_bytes, max_filter_bits / 8) * 8
                                                   : 0;
  std::vector<plan_row> rows;
  double best_rate = 1;
  bool any_useful = false;
  for (const filter_kind k : kinds) {
    plan_row row{k, std::nullopt, {}};
    try {
      if (input_of(k) == kind_input::included_and_excluded && o.excluded) {
        visit_kind(k, [&](auto type) {  // its size follows from the two sets alone
          if constexpr (decltype(type)::type::input == kind_input::included_and_excluded)
            row.plan = decltype(type)::type::plan(o.items, *o.excluded);
        });
      } else if (o.memory_bytes) {
        // The budget in the kind's own unit (bits, counters, cells): what its memory buys.
        const std::uint64_t units = std::max<std::uint64_t>(1, plan_units_in(budget_bits / 8, k));
        if (o.cells)
          visit_kind(k, [&](auto type) {
            using F = typename decltype(type)::type;
            if constexpr (requires { F::plan_for_bits(o.items, units, cell_layout{}); })
              row.plan = F::plan_for_bits(o.items, units, *o.cells);
          });
        if (!row.plan) row.plan = plan_for_bits(o.items, units, k);
        if (!(row.plan->predicted_fpr < useless_rate)) {
          row.problem = "budget too small: the rate would be " + percent(row.plan->predicted_fpr);
          row.plan.reset();
        }
      } else if (visit_kind(k,
                            [&](auto type) {
                              using F = typename decltype(type)::type;
                              if constexpr (planned_with_value_bits<F>) {
                                row.plan = F::plan(o.items, *o.fpr, *o.value_bits);
                              } else if constexpr (planned_per_set<F>) {
                                // The items shared out as evenly as whole keys allow, the first sets taking the rest.
                                std::vector<std::uint64_t> sizes(*o.sets, o.items / *o.sets);
                                for (std::uint64_t i = 0; i < o.items % *o.sets; ++i) ++sizes[i];
                                row.plan = F::plan(sizes, *o.fpr, o.cells.value_or(cell_layout::classic));
                              } else if constexpr (planned_in_layouts<F>) {
                                row.plan = F::plan(o.items, *o.fpr, o.cells.value_or(cell_layout::classic));
                              }
                            }) &&
                 row.plan) {
      } else {
        row.plan = plan_for(o.items, *o.fpr, k);
      }
    } catch (const invalid_argument& e) {
      row.problem = e.what();
    }
    if (row.plan) {
      any_useful = true;
      if (input_of(k) != kind_input::included_and_excluded) best_rate = std::min(best_rate, row.plan->predicted_fpr);
    }
    rows.push_back(std::move(row));
  }
  if (o.memory_bytes && !any_useful)
    throw invalid_argument("--memory " + human_bytes(static_cast<double>(*o.memory_bytes)) + " cannot hold " +
                           std::to_string(o.items) + " items at any useful rate (" +
                           fixed(static_cast<double>(budget_bits) / n, 3) +
                           " bits per key; every kind's rate would be " + percent(useless_rate) + " or more)");
  const double rate = o.fpr ? *o.fpr : best_rate;
  // A std::unordered_set<std::string>: a 32-byte string object and an 8-byte hash in a node, malloc's
  // 16-byte chunk header, a bucket pointer, and the key's own heap block once it outgrows the string's
  // 15-byte inline buffer.
  const double key_heap = o.key_bytes > 15 ? std::ceil((static_cast<double>(o.key_bytes) + 1 + 8) / 16) * 16 : 0;
  const double set_bytes = n * (48 + 8 + 8 + key_heap);
  const bool compare = o.fpr || o.memory_bytes;  // a cascade alone: no rate to compare with

  if (o.json) {
    std::string out = "{\"items\": " + std::to_string(o.items);
    if (o.fpr) out += ", \"fpr\": " + json_number(*o.fpr);
    if (o.memory_bytes)
      out += ", \"memory_bytes\": " + std::to_string(*o.memory_bytes) +
             ", \"capped_to_bytes\": " + (capped ? std::to_string(budget_bits / 8) : std::string("null"));
    if (o.excluded) out += ", \"excluded\": " + std::to_string(*o.excluded);
    out += ", \"kinds\": [";
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const plan_row& r = rows[i];
      out += (i ? ", " : "") + std::string("{\"kind\": ") + json_string(kind_name(r.kind));
      if (r.plan) {
        const bool exact = input_of(r.kind) == kind_input::included_and_excluded;
        const size_unit unit = size_unit_of(r.kind);
        out += ", \"bits\": " + std::to_string(r.plan->bits * unit.bits);
        if (unit.bits != 1)
          out += ", " + json_string(unit.name) + ": " + std::to_string(r.plan->bits) + ", " +
                 json_string(std::string(unit.one) + "_bits") + ": " + std::to_string(unit.bits);
        out += ", \"bytes\": " + std::to_string(r.plan->bytes) + ", \"hashes\": " + std::to_string(r.plan->hashes) +
               ", \"bits_per_key\": " + json_number(r.plan->bits_per_key()) +
               ", \"predicted_fpr\": " + (exact ? std::string("0") : json_number(r.plan->predicted_fpr));
      } else {
        out += ", \"error\": " + json_string(r.problem);
      }
      out += "}";
    }
    out += "]";
    if (compare)
      out += ", \"hash_set_bytes\": " + json_number(set_bytes) +
             ", \"minimum_bits_per_key\": " + json_number(std::log2(1 / rate));
    std::printf("%s}\n", out.c_str());
    return 0;
  }

  if (o.memory_bytes) {
    std::printf("%llu items in %s (%s bits per key)%s:\n\n", static_cast<unsigned long long>(o.items),
                human_bytes(static_cast<double>(budget_bits / 8)).c_str(),
                fixed(static_cast<double>(budget_bits) / n, 2).c_str(),
                capped ? (", capped from " + human_bytes(static_cast<double>(*o.memory_bytes)) +
                          ": the largest filter blume builds")
                             .c_str()
                       : "");
  } else if (o.fpr) {
    std::printf("%llu items at a false-positive rate of %s:\n\n", static_cast<unsigned long long>(o.items),
                percent(*o.fpr).c_str());
  } else {
    std::printf("%llu included keys against %llu excluded ones, exact on both:\n\n",
                static_cast<unsigned long long>(o.items), static_cast<unsigned long long>(*o.excluded));
  }
  std::printf("%-12s %16s %12s %4s %9s %14s\n", "kind", "bits", "memory", "k", "bits/key", "predicted FPR");
  for (const plan_row& r : rows) {
    if (!r.plan) {
      std::printf("%-12s %s\n", std::string(kind_name(r.kind)).c_str(), r.problem.c_str());
      continue;
    }
    const filter_plan& p = *r.plan;
    // A cascade's k column is its levels, and it has no false positives on its universe.
    const bool exact = input_of(r.kind) == kind_input::included_and_excluded;
    // The bits column is always bits; a kind sized in wider units gives their count after the rate.
    const size_unit unit = size_unit_of(r.kind);
    const std::string units = unit.bits == 1 ? std::string()
                                             : "  " + std::to_string(p.bits) + " " + std::string(unit.name) + " of " +
                                                   std::to_string(unit.bits) + " bits";
    std::printf("%-12s %16llu %12s %4u %9s %14s%s\n", std::string(kind_name(r.kind)).c_str(),
                static_cast<unsigned long long>(p.bits * unit.bits), human_bytes(static_cast<double>(p.bytes)).c_str(),
                p.hashes, fixed(p.bits_per_key(), 2).c_str(), exact ? "exact" : percent(p.predicted_fpr).c_str(),
                units.c_str());
  }
  if (!compare) return 0;
  std::printf("\nfor comparison:\n");
  std::printf("  a hash set of the keys (std::unordered_set<std::string>, %llu-byte keys): about %s\n",
              static_cast<unsigned long long>(o.key_bytes), human_bytes(set_bytes).c_str());
  std::printf("  the information-theoretic minimum at %s: log2(1/ε) = %s bits per key, %s\n", percent(rate).c_str(),
              fixed(std::log2(1 / rate), 2).c_str(), human_bytes(n * std::log2(1 / rate) / 8).c_str());
  return 0;
}

/// The plan's options from the command line, checked together.
plan_options to_options(const plan_args& a, const CLI::App& plan) {
  plan_options o;
  if (!a.kind.empty()) o.kind = kind_option(a.kind);
  if (o.kind && input_of(*o.kind) == kind_input::integers) {
    if (a.universe.empty())
      throw invalid_argument("--kind " + std::string(kind_name(*o.kind)) + ": give its universe with --universe U");
    o.universe = parse_universe(a.universe, "--universe");
    if (!a.zone.empty()) o.zone = parse_count(a.zone, "--zone", 1.8e19);
    if (!a.memory.empty()) o.memory_bytes = parse_bytes(a.memory, "--memory");
    if (o.zone.has_value() == o.memory_bytes.has_value()) throw invalid_argument("give either --zone or --memory");
    if (!a.items.empty() || !a.fpr.empty())
      throw invalid_argument("--items and --fpr do not size a " + std::string(kind_name(*o.kind)) +
                             " filter: --zone or --memory does");
    o.json = a.json;
    return o;
  }
  if (!a.universe.empty() || !a.zone.empty())
    throw invalid_argument(
        "--universe and --zone are for the kinds of integer keys (--kind " +
        kind_names_where([](auto type) { return decltype(type)::type::input == kind_input::integers; }) + ")");
  if (a.items.empty()) throw invalid_argument("--items is required");
  o.items = parse_count(a.items, "--items", 1e15);
  if (o.items == 0) throw invalid_argument("--items must be at least 1");
  if (!a.fpr.empty()) o.fpr = parse_rate(a.fpr, "--fpr");
  if (!a.memory.empty()) o.memory_bytes = parse_bytes(a.memory, "--memory");
  if (plan.count("--value-bits") != 0) {
    if (a.value_bits == 0 || a.value_bits > 32)
      throw invalid_argument("--value-bits must be in [1, 32], got " + std::to_string(a.value_bits));
    o.value_bits = a.value_bits;
  }
  if (!a.excluded.empty()) o.excluded = parse_count(a.excluded, "--excluded", 1e15);
  const bool cascade_only = o.kind && input_of(*o.kind) == kind_input::included_and_excluded;  // exact: no rate
  if (o.fpr.has_value() == o.memory_bytes.has_value() && !(cascade_only && !o.memory_bytes))
    throw invalid_argument("give either --fpr or --memory");
  if (plan.count("--sets") != 0) {
    if (a.sets == 0 || a.sets > o.items)
      throw invalid_argument("--sets must be in [1, --items], got " + std::to_string(a.sets));
    o.sets = a.sets;
  }
  if (o.kind && !o.memory_bytes && !has_inputs_for(*o.kind, o))
    visit_kind(*o.kind, [](auto type) {
      using F = typename decltype(type)::type;
      if constexpr (planned_with_value_bits<F>)
        throw invalid_argument("--kind " + std::string(F::name) + ": give the values' width with --value-bits");
      else if constexpr (planned_per_set<F>)
        throw invalid_argument("--kind " + std::string(F::name) + ": give the number of sets with --sets");
    });
  if (!a.cells.empty()) o.cells = parse_cell_layout(a.cells, "--cells");
  if (o.cells && o.kind && !has_cell_layouts(*o.kind))
    throw invalid_argument("--cells is for --kind spatial or compact, whose cells hold values");
  if (cascade_only && !o.excluded)
    throw invalid_argument("--kind cascade: give the excluded set's size with --excluded");
  o.key_bytes = parse_count(a.key_bytes, "--key-bytes", 1e6);
  o.json = a.json;
  return o;
}

}  // namespace

void register_plan(CLI::App& app, int& status) {
  const auto a = std::make_shared<plan_args>();
  CLI::App* plan = app.add_subcommand("plan", "Size a filter: bits, memory, k and predicted FPR for each kind");
  plan->add_option("--items", a->items, "keys the filter must hold (e.g. 100M; required but for egh)");
  plan->add_option("--fpr", a->fpr, "target false-positive rate (1% or 0.01)");
  plan->add_option("--memory", a->memory, "memory budget instead of a rate (e.g. 120MiB): what FPR it gives");
  plan->add_option("--kind", a->kind, kinds_help() + " (default: every kind)");
  plan->add_option("--key-bytes", a->key_bytes, "average key length, for the hash-set comparison")
      ->capture_default_str();
  plan->add_option("--value-bits", a->value_bits, "bloomier: bits per value (1-32); adds the bloomier row");
  plan->add_option("--sets", a->sets,
                   "spatial: the number of sets the items are shared out over, in priority order; adds the spatial "
                   "row");
  plan->add_option("--cells", a->cells,
                   "spatial, compact: classic (a key's cells anywhere; default) or blocked (all in one 64-byte block); "
                   "blocked leaves the other kinds out");
  plan->add_option("--excluded", a->excluded,
                   "cascade: keys of the excluded set (--items is the included set); adds the cascade row");
  plan->add_option("--universe", a->universe, "egh: its keys are the integers [0, U) (e.g. 65536, 2^32, 2^64)");
  plan->add_option("--zone", a->zone, "egh: no false positive while it holds at most this many keys");
  plan->add_flag("--json", a->json, "one JSON object");
  plan->callback([a, plan, &status] {
    const plan_options o = to_options(*a, *plan);
    status = o.universe ? run_integer_plan(o, *o.kind) : run_plan(o);
  });
}

}  // namespace blume::cli
