// SPDX-License-Identifier: Apache-2.0
// `blume demo`: the practitioner's sign-up scenario on the embedded default (no server needed).
#include <CLI/CLI.hpp>

#include <malloc.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <unordered_set>
#include <vector>

#include "blume/kinds.hpp"
#include "number_text.hpp"
#include "shared.hpp"
#include "synthetic_keys.hpp"
#include "units.hpp"

namespace blume::cli {
namespace {

using synthetic::append_email;
using synthetic::splitmix64;

struct demo_options {
  std::uint64_t items = 10'000'000;  // registered addresses in the filter
  std::uint64_t probes = 1'000'000;  // new sign-ups checked
  double fpr = 0.01;
  filter_kind kind = blume::split_block_bloom_filter<>::kind;
  unsigned threads = 2;
};

/// The command line as given: the options, and text the callback parses into them.
struct demo_args {
  demo_options options;
  std::string items = "10M", probes = "1M", fpr = "1%", kind = "split-block";
};

using clock_type = std::chrono::steady_clock;

/// Address `index` of the demo (the benchmark's e-mail-like keys: 20–32 bytes, distinct per index).
const std::string& synthetic_email(std::uint64_t index, std::string& out) {
  out.clear();
  append_email(index, out);
  return out;
}

double seconds_since(clock_type::time_point start) {
  return std::chrono::duration<double>(clock_type::now() - start).count();
}

using text::with_commas;

/// Bytes a std::unordered_set<std::string> needs per address, measured with the allocator's own
/// statistics on a sample (nodes, buckets, string buffers and malloc overhead all included).
double hash_set_bytes_per_key(std::uint64_t sample) {
  const auto in_use = [] {
    const struct mallinfo2 m = ::mallinfo2();
    return static_cast<double>(m.uordblks + m.hblkhd);
  };
  const double before = in_use();
  double after = before;
  {
    std::unordered_set<std::string> set;
    std::string email;
    for (std::uint64_t i = 0; i < sample; ++i) set.insert(synthetic_email(i, email));
    after = in_use();
  }
  return (after - before) / static_cast<double>(sample);
}

/// Inserts addresses [0, items) with `threads` threads through the lock-free concurrent insert path,
/// showing progress on a terminal.
template <class Filter>
double build(Filter& filter, std::uint64_t items, unsigned threads) {
  std::atomic<std::uint64_t> done{0};
  const bool show_progress = ::isatty(STDOUT_FILENO) != 0;
  const auto start = clock_type::now();
  {
    std::vector<std::jthread> workers;
    for (unsigned t = 0; t < threads; ++t) {
      workers.emplace_back([&, t] {
        constexpr std::uint64_t chunk = 4096;
        std::vector<std::string> keys(chunk);
        for (std::uint64_t first = t * chunk; first < items; first += chunk * threads) {
          const std::uint64_t n = std::min(chunk, items - first);
          for (std::uint64_t i = 0; i < n; ++i) synthetic_email(first + i, keys[i]);
          filter.insert_many_concurrent(std::span<const std::string>(keys.data(), n));
          done.fetch_add(n, std::memory_order_relaxed);
        }
      });
    }
    while (show_progress && done.load(std::memory_order_relaxed) < items) {
      const std::uint64_t d = done.load(std::memory_order_relaxed);
      const double elapsed = seconds_since(start);
      const double rate = d / std::max(elapsed, 1e-9);
      std::printf("\r  %5.1f%%  %s addresses  %.1f M/s  ETA %.0f s   ", 100.0 * d / items, with_commas(d).c_str(),
                  rate / 1e6, rate > 0 ? (items - d) / rate : 0.0);
      std::fflush(stdout);
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
  if (show_progress) std::printf("\r%60s\r", "");
  return seconds_since(start);
}

template <class Filter>
int run(Filter filter, const demo_options& o) {
  std::printf(
      "blume demo: checking sign-ups against registered e-mail addresses.\n"
      "A Bloom filter answers \"no\" with certainty and \"maybe\" otherwise, so only the \"maybe\"s\n"
      "need the database query (SELECT ... WHERE email = ?).\n\n");
  std::printf("Building a %s filter for %s registered addresses at %.3g%% false positives\n",
              std::string(kind_name(Filter::kind)).c_str(), with_commas(o.items).c_str(), o.fpr * 100);
  const double build_seconds = build(filter, o.items, o.threads);
  std::printf("  built in %.2f s (%.1f M addresses/s on %u threads)\n\n", build_seconds, o.items / build_seconds / 1e6,
              o.threads);

  const double filter_bytes = static_cast<double>(filter.size_in_bytes());
  const std::uint64_t sample = std::min<std::uint64_t>(o.items, 1'000'000);
  const double set_bytes = hash_set_bytes_per_key(sample) * static_cast<double>(o.items);
  std::printf("Memory\n");
  const std::string label =
      "Bloom filter (" + std::string(kind_name(Filter::kind)) + ", k = " + std::to_string(filter.hashes()) + ")";
  std::printf("  %-34s %10s  (%.2f bits per address)\n", label.c_str(), human_bytes(filter_bytes, 1, 1).c_str(),
              filter_bytes * 8 / o.items);
  std::printf("  %-34s %10s  (%.0f bytes per address, measured on %s)\n", "std::unordered_set<std::string>",
              human_bytes(set_bytes, 1, 1).c_str(), set_bytes / o.items, with_commas(sample).c_str());
  std::printf("  the filter is %.0fx smaller\n\n", set_bytes / filter_bytes);

  // New sign-ups: addresses past the registered range, absent by construction.
  std::vector<std::string> fresh(o.probes);
  for (std::uint64_t i = 0; i < o.probes; ++i) synthetic_email(o.items + i, fresh[i]);
  auto start = clock_type::now();
  std::uint64_t maybe = 0;
  for (const std::string& email : fresh) maybe += filter.contains(email);
  const double single_ns = seconds_since(start) * 1e9 / static_cast<double>(o.probes);
  start = clock_type::now();
  const std::uint64_t maybe_batched = filter.count_contained(fresh);
  const double batched_ns = seconds_since(start) * 1e9 / static_cast<double>(o.probes);
  if (maybe_batched != maybe) {
    std::fprintf(stderr, "blume: internal error: batched and single lookups disagree\n");
    return 1;
  }

  const std::uint64_t skipped = o.probes - maybe;
  std::printf("Checking %s new sign-ups (none registered yet)\n", with_commas(o.probes).c_str());
  std::printf("  \"no\"    → database skipped   %12s\n", with_commas(skipped).c_str());
  std::printf("  \"maybe\" → database asked     %12s   measured false-positive rate %.3f%% (planned %.3f%%)\n",
              with_commas(maybe).c_str(), 100.0 * maybe / o.probes,
              100.0 * filter.predicted_fpr_at(static_cast<double>(o.items)));
  std::printf("  lookups: %.1f ns each one by one, %.1f ns batched (%.1f M lookups/s)\n\n", single_ns, batched_ns,
              1e3 / batched_ns);

  // Registered addresses must always get "maybe": a Bloom filter has no false negatives.
  const std::uint64_t check = std::min<std::uint64_t>(o.items, 100'000);
  std::uint64_t found = 0;
  std::string email;
  for (std::uint64_t i = 0; i < check; ++i) found += filter.contains(synthetic_email(splitmix64(i) % o.items, email));
  std::printf("Checking %s registered addresses: %s answered \"maybe\" (%s false negatives)\n\n",
              with_commas(check).c_str(), with_commas(found).c_str(), with_commas(check - found).c_str());

  std::printf("Database lookups saved: %s of %s (%.1f%%)\n", with_commas(skipped).c_str(),
              with_commas(o.probes).c_str(), 100.0 * skipped / o.probes);
  return found == check ? 0 : 1;
}

int run_demo(const demo_options& o) {
  // The demo measures a bit array's memory, fill and speed: the kinds that are one.
  const auto bit_array = [](auto t) { return bit_array_filter<typename decltype(t)::type>; };
  int status = -1;
  visit_kind(o.kind, [&](auto type) {
    using F = typename decltype(type)::type;
    if constexpr (bit_array_filter<F>) status = run(F(o.items, o.fpr), o);
  });
  if (status >= 0) return status;
  throw invalid_argument("demo: the '" + std::string(kind_name(o.kind)) + "' kind is not available here (" +
                         kind_names_where(bit_array) + ")");
}

}  // namespace

void register_demo(CLI::App& app, int& status) {
  const auto a = std::make_shared<demo_args>();
  CLI::App* demo = app.add_subcommand(
      "demo",
      "The sign-up check: build a filter of synthetic registered e-mail addresses, probe new ones, and "
      "report memory, false positives, speed and database lookups saved");
  demo->add_option("--items", a->items, "registered addresses in the filter (e.g. 10M, 100M)")->capture_default_str();
  demo->add_option("--probes", a->probes, "new sign-ups to check")->capture_default_str();
  demo->add_option("--fpr", a->fpr, "target false-positive rate (1% or 0.01)")->capture_default_str();
  demo->add_option("--kind", a->kind, "filter kind: bloom, partitioned, blocked, split-block")->capture_default_str();
  demo->add_option("--threads", a->options.threads, "insert threads")->capture_default_str()->check(CLI::Range(1, 64));
  demo->callback([a, &status] {
    demo_options& o = a->options;
    o.items = parse_count(a->items, "--items", 2e9);
    o.probes = parse_count(a->probes, "--probes", 1e9);
    if (o.items == 0 || o.probes == 0) throw invalid_argument("--items and --probes must be at least 1");
    o.fpr = parse_rate(a->fpr, "--fpr");
    o.kind = kind_option(a->kind);
    status = run_demo(o);
  });
}

}  // namespace blume::cli
