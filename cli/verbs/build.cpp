// SPDX-License-Identifier: Apache-2.0
// `blume build`: a filter file from keys (a file or standard input), sized by --items or by counting them
// first; kinds of keys with values (bloomier, spatial, compact) from KEY<TAB>VALUE records, cascades from an
// included and an excluded key file.
#include <CLI/CLI.hpp>

#include <unistd.h>

#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <type_traits>
#include <variant>
#include <vector>

#include "blume/any_filter.hpp"
#include "blume/compat/redisbloom.hpp"
#include "blume/plan.hpp"
#include "filter_ops.hpp"
#include "key_input.hpp"
#include "progress.hpp"
#include "shared.hpp"
#include "units.hpp"

namespace blume::cli {

namespace {

struct build_options {
  std::optional<filter_kind> kind;  // unset: the fastest kind that meets the rate
  std::uint64_t items = 0;          // 0: the keys in the input, counted first
  double fpr = 0.01;
  bool allow_overfill = false;
  bool allow_empty = false;
  bool no_wait = false;
  bool force = false;
  std::string input = "-";
  std::string output;
  key_format format = key_format::lines;
  unsigned threads = 2;
  bool progress = true;                      // shown only on a terminal either way
  std::optional<std::uint32_t> value_bits;   // bloomier: unset means the widest value's width
  std::optional<cell_layout> cells;          // spatial, compact: where a key's cells lie (unset: classic)
  std::string included, excluded;            // cascade: the two key files
  bool redisbloom = false;                   // RedisBloom's own filter, for `blume redis push`
  std::optional<integer_universe> universe;  // kinds of integer keys (egh): their keys are [0, U)
  std::optional<std::uint64_t> zone;         // … and no false positive while they hold at most this many
  std::optional<std::uint64_t> memory;       // … or the largest zone this many bytes of bits buy
};

/// The command line as given: the options, and text the callback parses into them.
struct build_args {
  build_options options;
  std::string items, fpr = "1%", kind, format = "lines", universe, zone, memory, cells;
};

/// The kind `build` uses when none is given: split-block, the fastest, when it can meet the rate;
/// otherwise the blocked filter; otherwise the classic one.
filter_kind default_kind(std::uint64_t items, double fpr) {
  for (const filter_kind k : {blume::split_block_bloom_filter<>::kind, blume::blocked_bloom_filter<>::kind}) {
    try {
      const filter_plan p = plan_for(items, fpr, k);
      // A blocked layout pays in memory at low rates; past 1.5 × the classic size the classic filter is
      // the better default.
      if (static_cast<double>(p.bits) <= 1.5 * math::optimal_bits(static_cast<double>(items), fpr)) return k;
    } catch (const invalid_argument&) {
    }
  }
  return blume::bloom_filter<>::kind;
}

/// A static kind: the keys' digests (8 bytes each) are collected, hashed on every thread, then the filter
/// is built from all of them.
any_filter build_static(const build_options& o, filter_kind kind, key_source& source, progress& bar,
                        std::uint64_t& keys, build_stats& stats) {
  plan_for(std::max<std::uint64_t>(o.items, 1), o.fpr, kind);  // refuses a target the kind cannot meet
  std::vector<std::uint64_t> lows;
  lows.reserve(o.items);
  std::uint64_t bytes = 0;
  const xxh3_hasher hasher;
  const unsigned threads = std::max(1u, o.threads);
  source.for_each_block([&](std::string_view block) {
    const std::vector<std::string_view> parts = split(block, source.delimiter(), threads);
    std::vector<std::vector<std::uint64_t>> hashed(parts.size());
    const auto hash_part = [&](std::size_t i) {
      for_each_key(parts[i], source.delimiter(), [&](std::string_view k) {
        if (!k.empty()) hashed[i].push_back(hash_key(hasher, k).low);
      });
    };
    std::vector<std::thread> workers;
    for (std::size_t i = 1; i < parts.size(); ++i) workers.emplace_back(hash_part, i);
    if (!parts.empty()) hash_part(0);
    for (std::thread& w : workers) w.join();
    for (const auto& h : hashed) lows.insert(lows.end(), h.begin(), h.end());
    bytes += block.size();
    bar.update(lows.size(), bytes);
  });
  keys = lows.size();
  return build_static_filter(kind, std::move(lows), o.fpr, &stats);
}

/// Every key of a file (or stdin), copied: the map kinds build from whole sets held at once.
std::vector<std::string> read_keys(const std::string& path, key_format format) {
  key_source source(path, format);
  std::vector<std::string> keys;
  source.for_each_block([&](std::string_view block) {
    for_each_key(block, source.delimiter(), [&](std::string_view k) {
      if (!k.empty()) keys.emplace_back(k);
    });
  });
  return keys;
}

/// A kind built from keys with values, from KEY<TAB>VALUE records (the value after the last tab, a decimal
/// integer: a Bloomier map's value, a spatial filter's set, a compact approximator's value); the kind reads
/// the pairs (build_map_filter).
any_filter build_map(const build_options& o, filter_kind kind, std::uint64_t& keys) {
  if (!o.included.empty() || !o.excluded.empty())
    throw invalid_argument("--included and --excluded are for a cascade; a " + std::string(kind_name(kind)) +
                           " filter reads KEY<TAB>VALUE records");
  key_source source(o.input, o.format);
  std::vector<std::string> names;
  std::vector<std::uint64_t> values;
  std::uint64_t record = 0;
  source.for_each_block([&](std::string_view block) {
    for_each_key(block, source.delimiter(), [&](std::string_view line) {
      ++record;
      if (line.empty()) return;
      const key_value r =
          parse_record(line, "record " + std::to_string(record) + " of " + (o.input == "-" ? "stdin" : o.input));
      if (o.value_bits && (r.value >> *o.value_bits) != 0)
        throw invalid_argument("record " + std::to_string(record) + ": value " + std::to_string(r.value) +
                               " does not fit in " + std::to_string(*o.value_bits) + " bits");
      names.emplace_back(r.key);
      values.push_back(r.value);
    });
  });
  keys = names.size();
  return build_map_filter(kind, names, values, o.fpr, o.value_bits, o.cells);
}

/// A cascade from the two key files.
any_filter build_cascade(const build_options& o, std::uint64_t& keys) {
  if (o.included.empty() || o.excluded.empty())
    throw invalid_argument("a cascade needs --included FILE and --excluded FILE (the keys to answer yes and no for)");
  if (o.input != "-") throw invalid_argument("a cascade reads --included and --excluded, not --input");
  const std::vector<std::string> included = read_keys(o.included, o.format);
  const std::vector<std::string> excluded = read_keys(o.excluded, o.format);
  keys = included.size();
  return cascade_filter::build(included, excluded);
}

void refuse_empty(const build_options& o, std::uint64_t keys, const std::string& input) {
  if (keys == 0 && !o.allow_empty)
    throw invalid_argument("no keys in " + (input == "-" ? std::string("standard input") : "'" + input + "'") +
                           ": refusing to build an empty filter (--allow-empty builds one anyway)");
}

/// Reports a finished build on a terminal.
void report_build(const build_options& o, filter_kind kind, std::uint64_t keys) {
  if (::isatty(STDERR_FILENO) != 0 && o.output != "-")
    std::fprintf(stderr, "wrote %s: %s filter, %llu keys\n", o.output.c_str(), std::string(kind_name(kind)).c_str(),
                 static_cast<unsigned long long>(keys));
}

/// A kind of integer keys (egh), for --universe U: its zone is --zone, or the largest --memory buys, or else
/// the number of keys in the input (counted first), so that every answer about the universe is exact.
int build_integer_keyed(const build_options& o, filter_kind kind, std::optional<file_lock>& lock) {
  const std::string name(kind_name(kind));
  if (!o.universe) throw invalid_argument("a " + name + " filter needs --universe U: its keys are the integers [0, U)");
  if (o.zone && o.memory) throw invalid_argument("--zone and --memory both size the filter: give one");
  if (o.items != 0) throw invalid_argument("--items does not size a " + name + " filter: --zone (or --memory) does");
  if (!o.included.empty() || !o.excluded.empty() || o.value_bits || o.cells)
    throw invalid_argument("--included, --excluded, --value-bits and --cells are not for a " + name + " filter");
  key_source source(o.input, o.format);
  std::uint64_t zone = 0;
  if (o.zone) {
    zone = *o.zone;
  } else if (o.memory) {
    visit_kind(kind, [&](auto type) {
      using F = typename decltype(type)::type;
      if constexpr (F::input == kind_input::integers) zone = F::plan_for_budget(*o.universe, *o.memory * 8).zone;
    });
  } else {
    const std::uint64_t counted = source.count_keys();
    refuse_empty(o, counted, o.input);
    zone = std::max<std::uint64_t>(counted, 1);
  }
  any_filter filter = make_integer_filter(kind, *o.universe, zone);
  progress bar(o.progress && ::isatty(STDERR_FILENO) != 0, source.total_bytes());
  std::uint64_t keys = 0, bytes = 0;
  std::visit(
      [&](auto& f) {
        using F = std::decay_t<decltype(f)>;
        if constexpr (F::input == kind_input::integers) {
          source.for_each_block([&](std::string_view block) {
            keys += insert_block(f, block, source.delimiter(), false).first;
            bytes += block.size();
            bar.update(keys, bytes);
          });
          bar.finish(keys);
          refuse_empty(o, keys, o.input);
          if (!f.in_zone() && !o.allow_overfill)
            throw invalid_argument("the " + name + " filter's zone is " + std::to_string(zone) +
                                   " keys and it was given " + std::to_string(keys) +
                                   ": past its zone it has false positives (rate now " + percent(f.predicted_fpr()) +
                                   "); give a larger --zone, or --allow-overfill to keep it");
        }
      },
      filter);
  lock_target(lock, o.output, o.no_wait);
  write_output(filter, o.output, filter_design{}, write_options{o.force});
  report_build(o, kind, keys);
  return 0;
}

/// What BF.RESERVE key <fpr> <items> and then BF.MADD of every key make, bit for bit and count for count
/// (RedisBloom's hashing, geometry and growth): keys are hashed on `threads` threads and inserted in
/// input order, as BF.MADD inserts them.
void build_redisbloom(const build_options& o, key_source& source, progress& bar, std::optional<file_lock>& lock) {
  redisbloom_bloom_chain chain(o.items, std::min(o.fpr, 0.25), redisbloom_options(2, true));
  std::uint64_t keys = 0, bytes = 0, refused = 0;
  std::vector<digest> digests;
  source.for_each_block([&](std::string_view block) {
    const std::vector<std::string_view> parts = split(block, source.delimiter(), std::max(1u, o.threads));
    std::vector<std::vector<digest>> hashed(parts.size());
    const auto hash_part = [&](std::size_t i) {
      for_each_key(parts[i], source.delimiter(), [&](std::string_view k) {
        if (!k.empty()) hashed[i].push_back(chain.hash(k));
      });
    };
    std::vector<std::thread> workers;
    for (std::size_t i = 1; i < parts.size(); ++i) workers.emplace_back(hash_part, i);
    if (!parts.empty()) hash_part(0);
    for (std::thread& w : workers) w.join();
    for (const std::vector<digest>& part : hashed) {
      refused += chain.try_insert_digests(part);
      keys += part.size();
    }
    bytes += block.size();
    bar.update(keys, bytes);
  });
  bar.finish(keys);
  refuse_empty(o, keys, o.input);
  if (refused != 0)
    throw invalid_argument("the RedisBloom filter could not grow for " + std::to_string(refused) + " keys");
  lock_target(lock, o.output, o.no_wait);
  const filter_design design{o.items, std::min(o.fpr, 0.25)};  // the rate RedisBloom builds for (it caps it)
  if (o.output == "-") {
    write_to(chain, STDOUT_FILENO, "standard output", design);
  } else {
    with_force_hint([&] { save(chain, o.output, design, write_options{o.force}); });
  }
  if (::isatty(STDERR_FILENO) != 0 && o.output != "-")
    std::fprintf(stderr, "wrote %s: RedisBloom filter (BF.RESERVE %g %llu), %llu keys\n", o.output.c_str(),
                 std::min(o.fpr, 0.25), static_cast<unsigned long long>(o.items),
                 static_cast<unsigned long long>(keys));
}

int run_build(const build_options& options) {
  build_options o = options;
  check_output(o.output, write_options{o.force});  // refused now rather than after reading every key
  std::optional<file_lock> lock;
  if (o.redisbloom && o.kind)
    throw invalid_argument("--redisbloom builds RedisBloom's own scalable filter: leave out --kind");
  if (o.kind && input_of(*o.kind) == kind_input::vectors)
    throw invalid_argument("a " + std::string(kind_name(*o.kind)) +
                           " filter observes vectors, not keys: make it with the library or Python");
  if (o.kind && input_of(*o.kind) == kind_input::integers) return build_integer_keyed(o, *o.kind, lock);
  if (o.universe || o.zone || o.memory)
    throw invalid_argument(
        "--universe, --zone and --memory are for the kinds of integer keys (--kind " +
        kind_names_where([](auto type) { return decltype(type)::type::input == kind_input::integers; }) + ")");
  if (o.cells && !(o.kind && input_of(*o.kind) == kind_input::keys_with_values))
    throw invalid_argument("--cells is for --kind spatial or compact, whose cells hold values");
  if (o.kind && input_of(*o.kind) != kind_input::keys) {
    std::uint64_t keys = 0;
    const bool keys_with_values = input_of(*o.kind) == kind_input::keys_with_values;
    const any_filter filter = keys_with_values ? build_map(o, *o.kind, keys) : build_cascade(o, keys);
    refuse_empty(o, keys, keys_with_values ? o.input : o.included);
    // The rate asked for, as every other kind records it; what a map delivers (2^-f for f check bits, a
    // spatial filter's worst set) is its own, and info shows that beside it. A cascade is exact: no rate.
    filter_design design;
    if (keys != 0 && keys_with_values) design = {keys, o.fpr};
    lock_target(lock, o.output, o.no_wait);
    write_output(filter, o.output, design, write_options{o.force});
    report_build(o, *o.kind, keys);
    return 0;
  }
  if (o.value_bits || !o.included.empty() || !o.excluded.empty())
    throw invalid_argument("--value-bits is for --kind bloomier, --included and --excluded for --kind cascade");
  key_source source(o.input, o.format);
  const bool sized_by_input = o.items == 0;
  if (sized_by_input) {
    const std::uint64_t counted = source.count_keys();
    refuse_empty(o, counted, o.input);
    o.items = std::max<std::uint64_t>(counted, 1);
  }
  if (o.redisbloom) {
    progress bar(o.progress && ::isatty(STDERR_FILENO) != 0, source.total_bytes());
    build_redisbloom(o, source, bar, lock);
    return 0;
  }
  const filter_kind kind = o.kind ? *o.kind : default_kind(o.items, o.fpr);
  const filter_design design{o.items, o.fpr};
  progress bar(o.progress && ::isatty(STDERR_FILENO) != 0, source.total_bytes());
  std::uint64_t keys = 0, refused = 0, bytes = 0;
  if (is_static(kind)) {
    build_stats stats;
    const any_filter filter = build_static(o, kind, source, bar, keys, stats);
    bar.finish(keys);
    refuse_empty(o, keys, o.input);
    lock_target(lock, o.output, o.no_wait);
    write_output(filter, o.output, {std::max<std::uint64_t>(stats.keys != 0 ? stats.keys : keys, 1), o.fpr},
                 write_options{o.force});
    if (::isatty(STDERR_FILENO) != 0 && stats.attempts != 0 && o.output != "-")
      std::fprintf(stderr,
                   "wrote %s: %s filter, %llu keys (%llu duplicates dropped); %u seed(s) tried, %s of working memory\n",
                   o.output.c_str(), std::string(kind_name(kind)).c_str(), static_cast<unsigned long long>(stats.keys),
                   static_cast<unsigned long long>(stats.duplicates), stats.attempts,
                   human_bytes(static_cast<double>(stats.peak_bytes)).c_str());
    return 0;
  }
  any_filter filter = make_filter(kind, o.items, o.fpr);
  std::visit(
      [&](auto& f) {
        using F = std::decay_t<decltype(f)>;
        if constexpr (!takes_inserts<F>) {
          throw invalid_argument("a static filter cannot take inserts");
        } else {
          const unsigned threads = can_insert_concurrently<F> ? std::max(1u, o.threads) : 1u;
          source.for_each_block([&](std::string_view block) {
            if (threads == 1) {
              const auto [k, r] = insert_block(f, block, source.delimiter(), false);
              keys += k;
              refused += r;
            } else {
              const std::vector<std::string_view> parts = split(block, source.delimiter(), threads);
              std::vector<std::pair<std::uint64_t, std::uint64_t>> counts(parts.size());
              std::vector<std::thread> workers;
              for (std::size_t i = 1; i < parts.size(); ++i)
                workers.emplace_back([&, i] { counts[i] = insert_block(f, parts[i], source.delimiter(), true); });
              if (!parts.empty()) counts[0] = insert_block(f, parts[0], source.delimiter(), true);
              for (std::thread& w : workers) w.join();
              for (const auto& [k, r] : counts) {
                keys += k;
                refused += r;
              }
            }
            bytes += block.size();
            bar.update(keys, bytes);
          });
        }
      },
      filter);
  bar.finish(keys);
  refuse_empty(o, keys, o.input);
  if (refused != 0)
    throw invalid_argument("the " + std::string(kind_name(kind)) + " filter is full: " + std::to_string(refused) +
                           " of " + std::to_string(keys) + " keys did not fit; build it with a larger --items" +
                           (sized_by_input ? "" : " (or without --items: build then counts the input)"));
  if (!o.allow_overfill)
    std::visit(
        [&](const auto& f) {
          refuse_overfill(f, design,
                          "the " + std::string(kind_name(kind)) + " filter was sized for --items " +
                              std::to_string(o.items) + " and given " + std::to_string(keys) + " keys",
                          "build it with a larger --items (or without --items: build then counts the input)");
        },
        filter);
  lock_target(lock, o.output, o.no_wait);
  write_output(filter, o.output, design, write_options{o.force});
  report_build(o, kind, keys);
  return 0;
}

}  // namespace

void register_build(CLI::App& app, int& status) {
  const auto a = std::make_shared<build_args>();
  build_options& opts = a->options;
  CLI::App* build = app.add_subcommand("build", "Build a filter file from newline- or NUL-delimited keys");
  build->add_option("--items", a->items,
                    "keys the filter is sized for (e.g. 100M; default: the keys in the input, counted first; "
                    "not for the kinds of KEY<TAB>VALUE records or cascade)");
  build->add_option("--fpr", a->fpr, "target false-positive rate (1% or 0.01)")->capture_default_str();
  build->add_option("--kind", a->kind, kinds_help() + " (default: the fastest that meets the rate)");
  build->add_option("--input", opts.input, "key file, or - for standard input")->capture_default_str();
  build->add_option("--output", opts.output, "filter file to write (atomically), or - for standard output")->required();
  build->add_flag("--allow-overfill", opts.allow_overfill,
                  "keep a filter given more keys than --items (its rate then exceeds --fpr)");
  build->add_flag("--allow-empty", opts.allow_empty, "build a filter from empty input instead of failing");
  build->add_flag("--no-wait", opts.no_wait, "fail at once if another writer holds the output file");
  add_force_flag(*build, opts.force);
  build->add_option("--format", a->format, "lines or nul")->capture_default_str();
  build->add_option("--threads", opts.threads, "insert threads (bit-array kinds)")
      ->capture_default_str()
      ->check(CLI::Range(1, 64));
  build->add_flag(
      "--no-progress", [a](std::int64_t) { a->options.progress = false; }, "no progress line even on a terminal");
  build
      ->add_option("--value-bits", opts.value_bits,
                   "bloomier: bits per value, 1-32 (default: the widest value's); input lines are KEY<TAB>VALUE")
      ->check(CLI::Range(1, 32));
  build->add_option("--cells", a->cells,
                    "spatial, compact: classic (a key's cells anywhere; default) or blocked (all in one 64-byte "
                    "block: one cache miss a lookup, for more cells at the same rate)");
  build->footer(
      "Keys, wherever they come from (a file, standard input, the command line): with --format lines one "
      "trailing CR is not part of a key, and empty keys are skipped. A fixed-size filter given keys past "
      "1.5x its target rate is refused (--allow-overfill keeps it).");
  build->add_flag("--redisbloom", opts.redisbloom,
                  "RedisBloom's own filter, as BF.RESERVE KEY <fpr> <items> and BF.MADD of the keys make it, for "
                  "`blume redis push`");
  build->add_option("--universe", a->universe, "egh: its keys are the integers [0, U) (e.g. 65536, 2^32, 2^64)");
  build->add_option("--zone", a->zone,
                    "egh: no false positive while it holds at most this many keys (default: the keys in the input)");
  build->add_option("--memory", a->memory, "egh: instead of --zone, the largest zone this many bytes buy (e.g. 4KiB)");
  build->add_option("--included", opts.included, "cascade: file of the keys it must answer yes for");
  build->add_option("--excluded", opts.excluded, "cascade: file of the keys it must answer no for");
  build->callback([a, &status] {
    build_options& o = a->options;
    o.fpr = parse_rate(a->fpr, "--fpr");
    if (!a->kind.empty()) o.kind = kind_option(a->kind);
    if (!a->items.empty()) {
      o.items = parse_count(a->items, "--items", 1e13);
      if (o.items == 0) throw invalid_argument("--items must be at least 1");
    }
    o.format = format_option(a->format);
    if (!a->universe.empty()) o.universe = parse_universe(a->universe, "--universe");
    if (!a->zone.empty()) o.zone = parse_count(a->zone, "--zone", 1.8e19);
    if (!a->memory.empty()) o.memory = parse_bytes(a->memory, "--memory");
    if (!a->cells.empty()) o.cells = parse_cell_layout(a->cells, "--cells");
    status = run_build(o);
  });
}

}  // namespace blume::cli
