// SPDX-License-Identifier: Apache-2.0
// The lookup plot behind docs/plots/lookup.svg: every kind's absent-key lookup time against n, one by one
// and batched, with the limit probe (random 32-byte loads over split-block's bytes) as the floor the
// machine sets. Drawn from a timed run over several key counts (--items 1M,10M,100M).
#pragma once

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "blume/kinds/split_block_bloom_filter.hpp"
#include "gnuplot.hpp"
#include "results.hpp"

namespace blume::bench {

/// Writes dir/lookup.dat, lookup.gp and (with gnuplot) lookup.svg; false when there is nothing to draw (fewer
/// than two key counts) or gnuplot failed.
inline bool lookup_plot(const std::filesystem::path& dir, const std::vector<config_result>& configs) {
  std::set<std::uint64_t> counts;
  for (const auto& c : configs) counts.insert(c.items);
  if (counts.size() < 2) return false;
  std::vector<std::string> key_types, kinds;
  for (const auto& c : configs) {
    if (std::find(key_types.begin(), key_types.end(), c.key_short_name) == key_types.end())
      key_types.emplace_back(c.key_short_name);
    for (const auto& r : c.rows)
      if (r.ours && std::find(kinds.begin(), kinds.end(), r.name) == kinds.end()) kinds.push_back(r.name);
  }
  if (kinds.empty()) return false;
  std::filesystem::create_directories(dir);
  // One block per (key type, series): the kinds, then the limit probe; columns n, single ns, batched ns.
  std::ofstream dat(dir / "lookup.dat");
  dat << "# blume_bench: absent-key lookups, ns per key; n single batched\n";
  for (const std::string& keys : key_types) {
    for (std::size_t k = 0; k <= kinds.size(); ++k) {
      dat << "# " << keys << " " << (k < kinds.size() ? kinds[k] : "limit probe") << "\n";
      bool any = false;
      for (const auto& c : configs) {
        if (c.key_short_name != keys) continue;
        const contestant_result* row = nullptr;
        if (k < kinds.size()) {
          for (const auto& r : c.rows)
            if (r.ours && r.name == kinds[k]) row = &r;
          if (row != nullptr)
            dat << c.items << " " << row->ns[negative].median << " " << row->ns[negative_batched].median << "\n";
        } else if ((row = c.find(split_block_bloom_filter<>::kind)) != nullptr || !c.rows.empty()) {
          if (row == nullptr) row = &c.rows.front();
          dat << c.items << " " << row->ns[limit_single].median << " " << row->ns[limit_batched].median << "\n";
        }
        any = any || row != nullptr;
      }
      if (!any) dat << "nan nan nan\n";
      dat << "\n\n";
    }
  }
  dat.close();
  std::ofstream gp(dir / "lookup.gp");
  gp << "# SPDX-License-Identifier: Apache-2.0\n"
     << "# Drawn by blume_bench from lookup.dat (a timed run over several key counts).\n"
     << "set terminal svg size 1400," << 420 * key_types.size() << " font 'sans,10' background '#ffffff'\n"
     << "set output 'lookup.svg'\n"
     << "set multiplot layout " << key_types.size() << ",2 title 'Absent-key lookups, ns per key, against n; "
     << "black: the limit probe (one random 32-byte load per key over the bytes of split-block)'\n"
     << "set logscale xy\nset format x '10^{%L}'\nset xlabel 'n (keys)'\nset ylabel 'ns per key'\nset grid\n"
     << "set key outside right font ',8'\n";
  const std::size_t per_type = kinds.size() + 1;
  for (std::size_t t = 0; t < key_types.size(); ++t) {
    for (const auto& [column, what] : {std::pair{2, "one by one"}, std::pair{3, "batched"}}) {
      gp << "set title '" << key_types[t] << " keys, " << what << "'\nplot ";
      for (std::size_t k = 0; k < per_type; ++k) {
        const std::size_t index = t * per_type + k;
        gp << (k == 0 ? "'lookup.dat'" : ", ''") << " index " << index << " using 1:" << column;
        if (k < kinds.size()) {
          // gnuplot cycles 8 colours: a point shape and a dash pattern per kind keep 20 lines apart.
          gp << " with linespoints pt " << k % 12 + 1 << " ps 0.7 dt " << k / 8 + 1 << " title '" << kinds[k] << "'";
        } else {
          gp << " with linespoints lw 3 dt 2 lc rgb '#000000' title 'limit probe'";
        }
      }
      gp << "\n";
    }
  }
  gp << "unset multiplot\n";
  gp.close();
  return draw_with_gnuplot(dir, "lookup");
}

}  // namespace blume::bench
