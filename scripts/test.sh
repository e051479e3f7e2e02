#!/usr/bin/env bash
# Installs dependencies, checks the layout of the sources (scripts/check-format.sh), then builds and runs
# every test: the release build, then the same suite under
# AddressSanitizer + UndefinedBehaviorSanitizer, then built by the second compiler (clang-14), then the
# library's unit tests cross-compiled for aarch64 and run under qemu-aarch64 (the portable code paths,
# on a CPU without x86 intrinsics), then the libFuzzer harnesses (clang-14), each for
# BLUME_FUZZ_SECONDS (a cache variable, 30 by default: `cmake --preset fuzz -DBLUME_FUZZ_SECONDS=600` for
# a longer hunt).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
echo "=== format ==="
bash scripts/check-format.sh
for preset in release asan-ubsan clang aarch64 fuzz; do
  echo "=== $preset ==="
  start=$SECONDS
  cmake --preset "$preset" >/dev/null
  cmake --build --preset "$preset"
  ctest --preset "$preset"
  echo "=== $preset: $((SECONDS - start)) s ==="
done
