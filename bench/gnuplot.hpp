// SPDX-License-Identifier: Apache-2.0
// The benchmark's pictures: a gnuplot script and its data are always written, so a machine without gnuplot
// still leaves what it takes to draw them elsewhere.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <string>

namespace blume::bench {

/// Runs dir/NAME.gp in dir, which draws NAME.svg from NAME.dat; false (and a message) when gnuplot is
/// missing or fails.
inline bool draw_with_gnuplot(const std::filesystem::path& dir, const std::string& name) {
  const std::string command = "cd '" + dir.string() + "' && gnuplot " + name + ".gp 2>/dev/null";
  if (std::system(command.c_str()) != 0) {
    std::cerr << "gnuplot not found or failed: " << (dir / (name + ".dat")) << " and " << name
              << ".gp written, no picture\n";
    return false;
  }
  std::cerr << "wrote " << (dir / (name + ".svg")) << "\n";
  return true;
}

}  // namespace blume::bench
