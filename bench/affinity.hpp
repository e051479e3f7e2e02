// SPDX-License-Identifier: Apache-2.0
// The benchmark pins itself to one CPU so that lookups are timed without migrations; a static filter's
// construction is the exception. It runs its passes on two threads by design, and a thread created
// while the process is pinned inherits the one CPU, which would time the two threads taking turns.
#pragma once

#include <sched.h>

namespace blume::bench {

/// The CPUs the process could use before it pinned itself (call once before pinning).
inline const cpu_set_t& unpinned_cpus() {
  static const cpu_set_t set = [] {
    cpu_set_t s;
    CPU_ZERO(&s);
    if (sched_getaffinity(0, sizeof s, &s) != 0) CPU_SET(0, &s);
    return s;
  }();
  return set;
}

/// Runs fn() with the calling thread (and so every thread fn starts) allowed on all of unpinned_cpus(),
/// then restores the calling thread's pinning.
template <class Fn>
void on_all_cpus(Fn&& fn) {
  cpu_set_t pinned;
  CPU_ZERO(&pinned);
  const bool known = sched_getaffinity(0, sizeof pinned, &pinned) == 0;
  if (known) sched_setaffinity(0, sizeof(cpu_set_t), &unpinned_cpus());
  struct restore {
    bool known;
    cpu_set_t mask;
    ~restore() {
      if (known) sched_setaffinity(0, sizeof mask, &mask);
    }
  } guard{known, pinned};
  fn();
}

}  // namespace blume::bench
