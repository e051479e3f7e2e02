#!/usr/bin/env bash
# Installs everything blume needs to build, test and benchmark on a fresh Debian 12 machine.
set -euo pipefail
packages=(
  build-essential cmake ninja-build pkg-config git
  libxxhash-dev          # hashing: XXH3-128 for keys, XXH64 for file checksums
  libgtest-dev           # unit tests
  libbenchmark-dev       # micro-benchmarks
  libcli11-dev           # the blume command-line tool
  libsqlite3-dev         # examples/semi_join (skipped without it)
  libopenmpi-dev openmpi-bin  # the distributed filters (distributed/) and their tests under mpirun
  help2man               # its man page, generated from --help
  gnuplot-nox            # the benchmark's plots (docs/plots/)
  libabsl-dev libbloom-dev  # benchmark baselines: absl::flat_hash_set and libbloom
  python3                # integration-test helpers
  python3-dev pybind11-dev python3-pybind11  # the Python bindings (python/), built by CMake or by pip
  python3-numpy python3-pytest               # ... their NumPy arrays and their tests
  python3-venv python3-setuptools python3-wheel  # ... `pip install .` into a virtual environment, offline
  python3-bitarray       # bench/python: the post's pure-Python Bloom filter
  postgresql python3-psycopg2  # examples/signup: the sign-up gate in front of a real database
  redis-server redis-tools python3-redis  # the Redis module's integration tests and benchmark
  python3-xxhash         # the sharded filters' redis-py recipe (docs/redis.md) and its test
  libhiredis-dev         # blume redis: the CLI's client for Redis and Redis Cluster
  clang-14 libclang-rt-14-dev  # the clang and fuzz presets (-fsanitize=fuzzer links libclang_rt.fuzzer from the latter)
  llvm-14                # llvm-symbolizer, so sanitizer reports from the fuzzers name files and lines
  g++-aarch64-linux-gnu qemu-user         # the aarch64 preset: cross compiler, and user-mode emulation to run its tests
  libxxhash-dev:arm64 libgtest-dev:arm64  # ... and its target's libraries (Debian multiarch, beside the host's)
  clang-format-16        # scripts/check-format.sh: the newest in Debian 12 (14 mis-formats requires-clauses)
)
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
# The :arm64 packages need the architecture known to dpkg before apt's lists are fetched.
dpkg --print-foreign-architectures | grep -qx arm64 || $SUDO dpkg --add-architecture arm64
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
