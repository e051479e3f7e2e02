// SPDX-License-Identifier: Apache-2.0
// The FPR sweep behind docs/plots/fpr.svg: every benchmarked kind built for n keys at a range of target
// rates, its measured false-positive rate against its bits per key, beside the curve its planner predicts
// (plan_for at a finer range of rates). A kind whose points leave its curve has a model that is wrong.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "blume/kinds.hpp"
#include "contestants.hpp"
#include "gnuplot.hpp"
#include "keys.hpp"
#include "our_kinds.hpp"

namespace blume::bench {

struct sweep_point {
  double bits_per_key = 0, measured = 0, predicted = 0;
};
struct sweep_series {
  std::string name;
  std::vector<sweep_point> measured;  // one per target rate
  std::vector<sweep_point> model;     // the planner's curve
};

template <class F>
sweep_series sweep_kind(const workload<int_keys>& w, const std::vector<double>& rates) {
  sweep_series s;
  s.name = std::string(F::name);
  const std::uint64_t n = w.present.size();
  for (const double rate : rates) {
    try {
      kind_contestant<F> c(n, rate);
      for (std::size_t i = 0; i < n; ++i) c.insert(w.present[i]);
      if constexpr (requires { c.finish(); }) c.finish();
      std::size_t hits = 0;
      for (std::size_t i = 0; i < w.negative_probes.size(); ++i) hits += c.contains(w.negative_probes[i]);
      s.measured.push_back({8.0 * static_cast<double>(c.memory_bytes()) / static_cast<double>(n),
                            static_cast<double>(hits) / static_cast<double>(w.negative_probes.size()),
                            c.predicted_fpr()});
    } catch (const std::exception& e) {
      std::cerr << "  " << F::name << " at " << rate << ": " << e.what() << " (skipped)\n";
    }
  }
  // The planner's curve over the measured range of bits per key. Kinds given keys with values are built
  // for four sets here, which the planner's (n, rate) does not describe: their own prediction stands alone.
  if constexpr (takes_valued_inserts<F>) return s;
  double low = 1e300, high = 0;
  for (const sweep_point& p : s.measured) {
    low = std::min(low, p.bits_per_key);
    high = std::max(high, p.bits_per_key);
  }
  for (double rate = 0.5; rate > 1e-6; rate /= 1.25) {
    try {
      const filter_plan p = plan_for(n, rate, F::kind);
      const double bits = 8.0 * static_cast<double>(p.bytes) / static_cast<double>(n);
      if (bits >= 0.8 * low && bits <= 1.25 * high) s.model.push_back({bits, 0, p.predicted_fpr});
    } catch (const std::exception&) {
      // a rate the kind cannot plan (a Golomb-coded set's rates are powers of two, for one)
    }
  }
  return s;
}

/// Runs the sweep over n keys and writes dir/fpr.dat, dir/fpr.gp and, where gnuplot is installed,
/// dir/fpr.svg. Returns false when the picture could not be drawn.
inline bool fpr_sweep(const std::filesystem::path& dir, std::uint64_t n, std::uint64_t probes) {
  const std::vector<double> rates = {0.2, 0.1, 0.05, 0.02, 0.01, 0.005, 0.002, 0.001, 0.0005};
  std::cerr << "FPR sweep: " << n << " int keys, " << probes << " absent probes, " << rates.size()
            << " rates per kind\n";
  const workload<int_keys> w = make_workload<int_keys>(n, probes);
  std::vector<sweep_series> all;
  for_each_benchmarked_kind([&](auto type) {
    using F = typename decltype(type)::type;
    if constexpr (!kind_setup<F>::in_presets) return;  // a kind too slow to time with the rest
    std::cerr << "  " << F::name << "\n";
    all.push_back(sweep_kind<F>(w, rates));
  });

  std::filesystem::create_directories(dir);
  {
    // Two blocks per kind (gnuplot's `index`): its measured points, then its model's curve.
    std::ofstream dat(dir / "fpr.dat");
    dat << "# blume_bench FPR sweep: " << n << " int keys, " << probes << " absent probes\n"
        << "# bits_per_key measured_fpr predicted_fpr\n";
    for (const sweep_series& s : all) {
      // An empty block would end the data set early in gnuplot's count of `index`: a row of NaN keeps it.
      dat << "# " << s.name << " measured\n";
      for (const sweep_point& p : s.measured) dat << p.bits_per_key << " " << p.measured << " " << p.predicted << "\n";
      if (s.measured.empty()) dat << "nan nan nan\n";
      dat << "\n\n# " << s.name << " model\n";
      for (const sweep_point& p : s.model) dat << p.bits_per_key << " " << p.predicted << " " << p.predicted << "\n";
      if (s.model.empty()) dat << "nan nan nan\n";
      dat << "\n\n";
    }
  }
  const std::size_t columns = 5, rows = (all.size() + columns - 1) / columns;
  {
    std::ofstream gp(dir / "fpr.gp");
    gp << "# SPDX-License-Identifier: Apache-2.0\n"
       << "# Drawn by blume_bench --fpr-plot from fpr.dat: one panel per kind, measured points on the model's curve.\n"
       << "set terminal svg size " << 300 * columns << "," << 260 * rows << " font 'sans,10' background '#ffffff'\n"
       << "set output 'fpr.svg'\n"
       << "set multiplot layout " << rows << "," << columns << " title 'False-positive rate against bits per key, " << n
       << " keys: measured (dots), as the built filter predicts it (circles), as the planner does (line)'\n"
       << "set logscale y\nset format y '10^{%L}'\nset yrange [1e-6:0.6]\nset autoscale x\n"
       << "set offsets graph 0.05, graph 0.05, 0, 0\n"
       << "set xlabel 'bits per key'\nset key off\nset grid\n";
    for (std::size_t i = 0; i < all.size(); ++i) {
      // A kind of fixed bits per key (xor and fuse: their fingerprints) gets a range around its one value.
      double low = 1e300, high = 0;
      for (const sweep_point& p : all[i].measured) {
        low = std::min(low, p.bits_per_key);
        high = std::max(high, p.bits_per_key);
      }
      if (high >= low && high - low < 1) {
        gp << "set xrange [" << std::max(0.0, low - 5) << ":" << high + 5 << "]\n";
      } else {
        gp << "set autoscale x\n";
      }
      gp << "set title '" << all[i].name << "'\n"
         << "plot 'fpr.dat' index " << 2 * i + 1 << " using 1:2 with lines lw 2 lc rgb '#4477aa', '' index " << 2 * i
         << " using 1:3 with points pt 6 ps 1.1 lc rgb '#4477aa', '' index " << 2 * i
         << " using 1:2 with points pt 7 ps 0.5 lc rgb '#cc3311'\n";
    }
    gp << "unset multiplot\n";
  }
  return draw_with_gnuplot(dir, "fpr");
}

}  // namespace blume::bench
