// SPDX-License-Identifier: Apache-2.0
// blume_streaming_bench: the streaming lower bound. Any duplicate detector with m bits of state, on a stream of
// items drawn uniformly from an alphabet of L ≥ m, has FP + FN ≥ 1 − (1 − (1 − 1/L)^m) / (1 − (1 − 1/L)^n) at its
// n-th item (math::streaming_error_floor). This program runs the kinds that forget (stable, aging) and the fruit
// fly's novelty filter on such streams up to n = 100·m, each asked "seen before?" of every item before taking it,
// and measures FP (items new to the stream called duplicates) and FN (duplicates called new) in a window at each
// checkpoint, against the bound for the detector's own state bits. It prints markdown (docs/benchmarks.md,
// "The streaming lower bound"), and with --plots DIR writes DIR/streaming.dat, .gp and, where gnuplot is
// installed, .svg. With --check it fails (exit 1) when a measurement is below the bound by more than its
// 99.9% sampling interval: a measurement below the bound is a bug in the measurement or the filter.
//
//   blume_streaming_bench [--memory BITS] [--check] [--plots DIR]
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "blume/blume.hpp"
#include "gnuplot.hpp"

namespace {

using namespace blume;

/// One detector under test: its name, its state in bits, and "seen before?" then take the item.
struct detector {
  std::string name;
  double state_bits = 0;
  std::function<bool(std::uint64_t)> seen_then_take;
};

/// An item's vector for the novelty filter: 16 values in [0, 1) drawn from the item's id, so equal items are
/// equal vectors and different items independent ones.
std::vector<double> vector_of(std::uint64_t item) {
  std::vector<double> x(16);
  for (std::size_t j = 0; j < x.size(); ++j)
    x[j] = static_cast<double>(detail::splitmix64_mix(item * 16 + j + 1) >> 11) / 9007199254740992.0;
  return x;
}

std::vector<detector> detectors(std::uint64_t m) {
  std::vector<detector> out;
  {
    // m/2 cells of 2 bits, 3 probes, the decrements that hold a 2% rate on an endless stream.
    auto f = std::make_shared<stable_bloom_filter<>>(stable_bloom_filter<>::for_rate(m / 2, 3, 0.02));
    out.push_back({"stable (2-bit cells, k = 3, 2%)", static_cast<double>(m), [f](std::uint64_t item) {
                     const bool seen = f->contains(item);
                     f->insert(item);
                     return seen;
                   }});
  }
  {
    // Two buffers; the window is the one whose plan at 2% fills m bits.
    std::uint64_t window = m / 16;
    while (aging_bloom_filter<>::plan(window + 1, 0.02).bits <= m) ++window;
    auto f = std::make_shared<aging_bloom_filter<>>(window, 0.02);
    const double bits = static_cast<double>(aging_bloom_filter<>::plan(window, 0.02).bits);
    out.push_back({"aging (window " + std::to_string(window) + ", 2%)", bits, [f](std::uint64_t item) {
                     const bool seen = f->contains(item);
                     f->insert(item);
                     return seen;
                   }});
  }
  {
    // Units of 128 bits of state (a weight and a step), tags of 5%; "seen" below 0.5. The paper's rules
    // (δ = 0.4, ε = 0.01) call every item seen on a uniform stream, whose steady mean weight is below 0.5: a
    // weight that recovers by a fifth a step keeps new items above it.
    auto f = std::make_shared<novelty_filter>(novelty_geometry{16, static_cast<std::uint32_t>(m / 128)},
                                              novelty_rules{0, 0.2});
    out.push_back({"novelty (" + std::to_string(m / 128) + " units, δ = 0, ε = 0.2, seen below 0.5)",
                   static_cast<double>(m), [f](std::uint64_t item) { return f->observe(vector_of(item)) < 0.5; }});
  }
  return out;
}

struct point {
  double n_over_m = 0, fp = NAN, fn = NAN, floor = 0, slack = 0;
  std::uint64_t fresh = 0, duplicates = 0;
};

/// One detector on one stream: FP and FN in a window of `window` items from each checkpoint n.
std::vector<point> run(detector& d, std::uint64_t m, double alphabet, const std::vector<double>& checkpoints,
                       std::uint64_t seed) {
  std::vector<point> out;
  std::vector<std::uint64_t> seen_bits((static_cast<std::uint64_t>(alphabet) + 63) / 64);
  std::uint64_t state = seed, i = 0;
  for (const double c : checkpoints) {
    const auto start = static_cast<std::uint64_t>(c * static_cast<double>(m));
    const std::uint64_t window = start / 4;  // [n, 1.25·n): windows of checkpoints 1.25× apart never overlap
    point p;
    p.n_over_m = c;
    std::uint64_t fp = 0, fn = 0;
    for (; i < start + window; ++i) {
      const std::uint64_t item =
          reduce(detail::splitmix64_mix(state += 0x9e3779b97f4a7c15ULL), static_cast<std::uint64_t>(alphabet));
      const bool duplicate = (seen_bits[item / 64] >> (item % 64) & 1) != 0;
      seen_bits[item / 64] |= std::uint64_t{1} << (item % 64);
      const bool called = d.seen_then_take(item);
      if (i < start) continue;
      if (duplicate) {
        ++p.duplicates;
        fn += called ? 0 : 1;
      } else {
        ++p.fresh;
        fp += called ? 1 : 0;
      }
    }
    // The bound at the window's first item: it rises with n, so this is the least of the window's bounds.
    p.floor = math::streaming_error_floor(static_cast<double>(start), d.state_bits, alphabet);
    if (p.fresh >= 100 && p.duplicates >= 100) {
      p.fp = static_cast<double>(fp) / static_cast<double>(p.fresh);
      p.fn = static_cast<double>(fn) / static_cast<double>(p.duplicates);
      // The 99.9% interval of the sum, from the binomial spread of each share (at least one event each).
      const auto var = [](double r, std::uint64_t count) {
        const double q = std::max(r, 1.0 / static_cast<double>(count));
        return q * (1 - q) / static_cast<double>(count);
      };
      p.slack = 3.29 * std::sqrt(var(p.fp, p.fresh) + var(p.fn, p.duplicates));
    }
    out.push_back(p);
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  std::uint64_t m = 1 << 16;
  bool check = false;
  std::string plots;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (a == "--memory" && i + 1 < argc) m = std::strtoull(argv[++i], nullptr, 10);
    else if (a == "--check") check = true;
    else if (a == "--plots" && i + 1 < argc) plots = argv[++i];
    else {
      std::fprintf(stderr, "usage: blume_streaming_bench [--memory BITS] [--check] [--plots DIR]\n");
      return 2;
    }
  }
  if (m < 1024 || m % 128 != 0) {
    std::fprintf(stderr, "blume_streaming_bench: --memory must be a multiple of 128 bits, at least 1024\n");
    return 2;
  }
  const std::vector<double> checkpoints{1.5, 2, 3, 5, 10, 20, 50, 100};
  const std::vector<double> alphabets{2, 16};  // L = 2m, 16m
  std::printf(
      "Streams of items drawn uniformly from L items, each detector asked \"seen before?\" of every item "
      "before taking it; FP and FN over the items n to 1.25·n of each checkpoint n, against the bound at n; "
      "m = %llu bits of state (each detector's own, in the bound). A dash: fewer than 100 new items or "
      "duplicates in the window.\n\n",
      static_cast<unsigned long long>(m));
  int below = 0;
  std::ofstream dat;
  if (!plots.empty()) {
    std::filesystem::create_directories(plots);
    dat.open(std::filesystem::path(plots) / "streaming.dat");
    dat << "# blume_streaming_bench: n/m FP FN FP+FN floor, one block per detector and alphabet\n";
  }
  std::vector<std::string> series;
  for (const double l : alphabets) {
    const double alphabet = l * static_cast<double>(m);
    std::printf(
        "**L = %g·m** (an item is new with probability (1 − 1/L)^n: %.1f%% at n = m, %.2g%% at n = "
        "100·m)\n\n",
        l, 100 * std::exp(-1 / l), 100 * std::exp(-100 / l));
    std::printf("| detector | state bits |");
    for (const double c : checkpoints) std::printf(" n = %g·m |", c);
    std::printf("\n|---|--:|");
    for (std::size_t c = 0; c < checkpoints.size(); ++c) std::printf("--:|");
    std::printf("\n");
    std::uint64_t seed = 1;
    for (detector& d : detectors(m)) {
      const std::vector<point> points = run(d, m, alphabet, checkpoints, seed++);
      std::printf("| %s | %.0f |", d.name.c_str(), d.state_bits);
      for (const point& p : points) {
        if (std::isnan(p.fp)) {
          std::printf(" — (≥ %.3f) |", p.floor);
          continue;
        }
        const bool fails = p.fp + p.fn + p.slack < p.floor;
        below += fails ? 1 : 0;
        std::printf(" %.3f + %.3f = **%.3f** (≥ %.3f)%s |", p.fp, p.fn, p.fp + p.fn, p.floor, fails ? " BELOW" : "");
      }
      std::printf("\n");
      if (dat.is_open()) {
        series.push_back(d.name + ", L = " + (l == 2 ? std::string("2m") : std::string("16m")));
        dat << "# " << series.back() << "\n";
        for (const point& p : points)
          dat << p.n_over_m << " " << p.fp << " " << p.fn << " " << p.fp + p.fn << " " << p.floor << "\n";
        dat << "\n\n";
      }
    }
    std::printf("\nEach cell: FP + FN = **sum** (≥ the bound at that n).\n\n");
  }
  std::fflush(stdout);
  if (dat.is_open()) {
    dat.close();
    std::ofstream gp(std::filesystem::path(plots) / "streaming.gp");
    gp << "# SPDX-License-Identifier: Apache-2.0\n"
       << "# Drawn by blume_streaming_bench --plots from streaming.dat: FP + FN against n, beside the lower bound.\n"
       << "set terminal svg size 1000,480 font 'sans,11' background '#ffffff'\n"
       << "set output 'streaming.svg'\n"
       << "set multiplot layout 1,2 title 'FP + FN of the forgetting filters on a stream, against the lower bound "
          "for their state (m = "
       << m << " bits)'\n"
       << "set logscale x\nset xlabel 'n / m'\nset ylabel 'FP + FN'\nset yrange [0:1.05]\nset grid\n"
       << "set key bottom right font ',9'\n";
    const char* colours[] = {"#4477aa", "#cc3311", "#228833"};
    for (std::size_t a = 0; a < alphabets.size(); ++a) {
      gp << "set title 'L = " << alphabets[a] << "·m'\nplot ";
      for (std::size_t k = 0; k < 3; ++k) {
        const std::size_t block = a * 3 + k;
        gp << (k ? ", " : "") << "'streaming.dat' index " << block << " using 1:4 with linespoints lw 2 pt 7 lc rgb '"
           << colours[k] << "' title '" << series[block].substr(0, series[block].find(" (")) << "', '' index " << block
           << " using 1:5 with lines dt 2 lc rgb '" << colours[k] << "' notitle";
      }
      gp << "\n";
    }
    gp << "unset multiplot\n";
    gp.close();
    blume::bench::draw_with_gnuplot(plots, "streaming");
  }
  if (below != 0) std::printf("**%d measurements below the bound.**\n", below);
  return check && below != 0 ? 1 : 0;
}
