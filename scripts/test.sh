#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs every dependency, checks the layout of the sources (scripts/check-format.sh), then builds and runs
# every test, one preset per stage, printing each stage's time:
#   release     GCC, optimised: the whole suite at full size, the tool, the Redis module, Python, MPI, the
#               benchmarks' smoke runs, the examples, `pip install .`
#   asan-ubsan  clang-14 at -O0 under AddressSanitizer + UndefinedBehaviorSanitizer: the same suite (its
#               statistical tests smaller, see tests/test_support.hpp) and every libFuzzer harness for
#               BLUME_FUZZ_SECONDS each (10 here; `cmake --preset fuzz` hunts longer)
#   aarch64     the library's portable code paths cross-compiled for aarch64 and run under qemu-aarch64
# Give preset names to run only those stages (after the same install and check): scripts/test.sh release
# Where ccache is installed it serves every compile, from a cache outside the clone (CCACHE_DIR, by default
# ~/.cache/ccache): a machine that built before rebuilds in minutes; a new one passes, just slower.
set -euo pipefail
cd "$(dirname "$0")/.."
total=$SECONDS
bash scripts/install-deps.sh test
echo "=== install: $((SECONDS - total)) s ==="
echo "=== format ==="
bash scripts/check-format.sh
if command -v ccache >/dev/null; then
  export CMAKE_CXX_COMPILER_LAUNCHER=ccache CMAKE_C_COMPILER_LAUNCHER=ccache
  # Every clone hits the same entries: paths under the clone are hashed relative to it, and the working
  # directory a -g compile records is left out of the hash (debug info may then name another clone's path).
  export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=true
  ccache --max-size=8G >/dev/null
fi
presets=("$@")
((${#presets[@]})) || presets=(release asan-ubsan aarch64)
for preset in "${presets[@]}"; do
  echo "=== $preset ==="
  start=$SECONDS
  cmake --preset "$preset" >/dev/null
  cmake --build --preset "$preset"
  built=$((SECONDS - start))
  ctest --preset "$preset"
  echo "=== $preset: $((SECONDS - start)) s (build $built s, tests $((SECONDS - start - built)) s) ==="
done
echo "=== all stages: $((SECONDS - total)) s ==="
