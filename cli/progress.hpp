// SPDX-License-Identifier: Apache-2.0
// A progress line on standard error, for long builds at a terminal: keys so far, keys per second and,
// when the input's size is known, the share done and the time left. Silent when not enabled (the tool
// enables it only when standard error is a terminal, so pipes and logs stay clean).
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>

namespace blume::cli {

class progress {
 public:
  /// `unit` names what is counted ("keys", "documents").
  progress(bool enabled, std::uint64_t total_bytes, const char* unit = "keys")
      : enabled_(enabled), unit_(unit), total_(total_bytes) {}

  /// Redraws at most five times a second.
  void update(std::uint64_t keys, std::uint64_t bytes) {
    if (!enabled_) return;
    const auto now = clock::now();
    if (now - last_ < std::chrono::milliseconds(200)) return;
    last_ = now;
    const double seconds = std::chrono::duration<double>(now - start_).count();
    const double rate = seconds > 0 ? static_cast<double>(keys) / seconds : 0;
    if (total_ != 0 && bytes != 0) {
      const double done = static_cast<double>(bytes) / static_cast<double>(total_);
      const double left = done > 0 ? seconds * (1 - done) / done : 0;
      std::fprintf(stderr, "\r%12llu %s  %6.2fM %s/s  %5.1f%%  ETA %4.0f s ", static_cast<unsigned long long>(keys),
                   unit_, rate / 1e6, unit_, done * 100, left);
    } else {
      std::fprintf(stderr, "\r%12llu %s  %6.2fM %s/s ", static_cast<unsigned long long>(keys), unit_, rate / 1e6,
                   unit_);
    }
    std::fflush(stderr);
    drawn_ = true;
  }
  void finish(std::uint64_t keys) {
    if (!enabled_) return;
    const double seconds = std::chrono::duration<double>(clock::now() - start_).count();
    std::fprintf(stderr, "%s%12llu %s in %.1f s (%.2fM %s/s)\n", drawn_ ? "\r" : "",
                 static_cast<unsigned long long>(keys), unit_, seconds,
                 seconds > 0 ? static_cast<double>(keys) / seconds / 1e6 : 0.0, unit_);
  }

 private:
  using clock = std::chrono::steady_clock;
  bool enabled_;
  const char* unit_;
  bool drawn_ = false;
  std::uint64_t total_;
  clock::time_point start_ = clock::now();
  clock::time_point last_ = start_;
};

}  // namespace blume::cli
