// SPDX-License-Identifier: Apache-2.0
// `blume bench`: every kind timed on this machine (insert, lookups of present and absent keys) with its
// measured false-positive rate. The full benchmark, with baselines, is bench/ in the source tree.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <span>
#include <string>
#include <thread>
#include <type_traits>
#include <variant>
#include <vector>

#include "blume/any_filter.hpp"
#include "filter_ops.hpp"
#include "shared.hpp"
#include "synthetic_keys.hpp"
#include "units.hpp"

namespace blume::cli {

namespace {

using synthetic::splitmix64;

struct bench_options {
  std::uint64_t items = 1'000'000;
  std::vector<filter_kind> kinds;  // empty: every kind
  double fpr = 0.01;
};

struct bench_args {
  std::string items = "1M", kind;
};

int run_bench(const bench_options& o) {
  const std::vector<filter_kind> kinds = o.kinds.empty() ? std::vector<filter_kind>(all_kinds.begin(), all_kinds.end())
                                                         : o.kinds;
  for (const filter_kind k : kinds)
    if (input_of(k) != kind_input::keys)
      throw invalid_argument("blume bench times filters of one key set; a " + std::string(kind_name(k)) +
                             " takes its own inputs (see the library's tests and docs/format.md)");
  std::vector<std::uint64_t> present(o.items), absent(std::min<std::uint64_t>(o.items, 1'000'000));
  for (std::uint64_t i = 0; i < present.size(); ++i) present[i] = splitmix64(i);
  for (std::uint64_t i = 0; i < absent.size(); ++i) absent[i] = splitmix64(o.items + i);
  std::printf("n = %llu 64-bit keys, target %s; ns per key, batched calls; %u hardware threads\n\n",
              static_cast<unsigned long long>(o.items), percent(o.fpr).c_str(), std::thread::hardware_concurrency());
  std::printf("%-12s %9s %11s %12s %12s %12s\n", "kind", "bits/key", "insert ns", "+ lookup ns", "- lookup ns",
              "measured FPR");
  using clock = std::chrono::steady_clock;
  const auto ns_per = [](clock::duration d, std::size_t n) {
    return std::chrono::duration<double, std::nano>(d).count() / static_cast<double>(n);
  };
  for (const filter_kind k : kinds) {
    auto start = clock::now();
    any_filter filter = is_static(k) ? build_static_filter(
                                           k,
                                           [&] {
                                             std::vector<std::uint64_t> lows(present.size());
                                             const xxh3_hasher h;
                                             for (std::size_t i = 0; i < present.size(); ++i)
                                               lows[i] = hash_key(h, present[i]).low;
                                             return lows;
                                           }(),
                                           o.fpr)
                                     : make_filter(k, o.items, o.fpr);
    std::visit(
        [&](auto& f) {
          using F = std::decay_t<decltype(f)>;
          if constexpr (!answers_keys<F>) {
            return;  // refused above: the kinds timed take keys
          } else {
            if constexpr (takes_inserts<F>) {
              start = clock::now();
              f.insert_many(present);
            }
            const double insert = ns_per(clock::now() - start, present.size());
            std::size_t sink = 0;
            start = clock::now();
            sink += f.count_contained(std::span<const std::uint64_t>(present).first(absent.size()));
            const double positive = ns_per(clock::now() - start, absent.size());
            start = clock::now();
            const std::size_t false_positives = f.count_contained(absent);
            const double negative = ns_per(clock::now() - start, absent.size());
            std::printf("%-12s %9s %11s %12s %12s %12s%s\n", std::string(kind_name(k)).c_str(),
                        fixed(static_cast<double>(f.size_in_bytes()) * 8 / static_cast<double>(o.items), 2).c_str(),
                        fixed(insert, 1).c_str(), fixed(positive, 1).c_str(), fixed(negative, 1).c_str(),
                        percent(static_cast<double>(false_positives) / static_cast<double>(absent.size())).c_str(),
                        sink == 0 ? " (?)" : "");
            std::fflush(stdout);
          }
        },
        filter);
  }
  std::printf("\nThe full benchmark, with baselines, is bench/blume_bench in the source tree (docs/benchmarks.md).\n");
  return 0;
}

}  // namespace

void register_bench(CLI::App& app, int& status) {
  const auto a = std::make_shared<bench_args>();
  CLI::App* bench = app.add_subcommand("bench", "Time every kind on this machine (insert, lookups, FPR)");
  bench->add_option("--items", a->items, "keys per filter")->capture_default_str();
  bench->add_option("--kind", a->kind, "one kind (default: every kind)");
  bench->callback([a, &status] {
    bench_options o;
    o.items = parse_count(a->items, "--items", 1e10);
    if (o.items == 0) throw invalid_argument("--items must be at least 1");
    if (!a->kind.empty()) o.kinds.push_back(kind_option(a->kind));
    status = run_bench(o);
  });
}

}  // namespace blume::cli
