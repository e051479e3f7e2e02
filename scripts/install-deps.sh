#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs the Debian 12 packages blume needs for what you are about to do, and nothing else:
#
#   bash scripts/install-deps.sh [PROFILE...]      (default: all)
#
#   demo     the library and the tool: a compiler, CMake, Ninja, xxHash, CLI11 (scripts/demo.sh)
#   python   the Python bindings (pip or CMake) and their tests
#   redis    the Redis module, `blume redis` and their tests
#   mpi      the distributed filters over MPI
#   signup   examples/signup: the sign-up gate in front of PostgreSQL, Redis and Python
#   statespace  examples/state_space: SPIN beside blume's visited sets
#   chemistry   examples/chemistry: RDKit and its data sets beside blume's fingerprints
#   textsearch  examples/text_search: SQLite FTS5 and the manual pages beside blume's bit-sliced index
#   test     everything scripts/test.sh (and CI) builds and runs: every profile above, the sanitizers,
#            the fuzzers, the aarch64 cross build, the benchmark baselines, the format check
#   all      the same as test
#
# Packages already installed are skipped; apt runs only when something is missing.
set -euo pipefail

demo=(
  g++ cmake ninja-build
  libxxhash-dev          # hashing: XXH3-128 for keys, XXH64 for file checksums
  libcli11-dev           # the blume command-line tool
)
python=(
  "${demo[@]}"
  python3-dev pybind11-dev python3-pybind11  # the Python bindings (python/), built by CMake or by pip
  python3-numpy python3-pytest               # ... their NumPy arrays and their tests
  python3-venv python3-setuptools python3-wheel  # ... `pip install .` into a virtual environment, offline
)
redis=(
  "${demo[@]}" pkg-config
  redis-server redis-tools python3-redis  # the Redis module's integration tests and benchmark
  libhiredis-dev         # blume redis: the CLI's client for Redis and Redis Cluster
  python3-xxhash         # the sharded filters' redis-py recipe (docs/redis.md) and its test
)
mpi=(
  "${demo[@]}"
  libopenmpi-dev openmpi-bin  # the distributed filters (distributed/) and their tests under mpirun
)
signup=(
  "${python[@]}" "${redis[@]}"
  postgresql python3-psycopg2  # examples/signup: the sign-up gate in front of a real database
)
statespace=(
  "${demo[@]}"
  spin gcc               # examples/state_space: the SPIN model checker, and the C compiler its verifiers need
)
chemistry=(
  "${python[@]}"
  python3-rdkit rdkit-data  # examples/chemistry: RDKit's exact matcher and PatternFingerprint, the NCI and PAINS sets
)
textsearch=(
  "${demo[@]}"
  libsqlite3-dev         # examples/text_search: SQLite FTS5, the peer
  manpages manpages-dev groff-base  # ... and the corpus: the Linux man-pages project's pages, rendered to text
)
test=(
  "${python[@]}" "${redis[@]}" "${mpi[@]}" "${signup[@]}" "${statespace[@]}" "${chemistry[@]}" "${textsearch[@]}"
  build-essential git ccache
  libgtest-dev           # unit tests
  libbenchmark-dev       # micro-benchmarks
  libsqlite3-dev         # examples/semi_join (skipped without it)
  help2man               # the man page, generated from --help
  dpkg-dev pkg-config    # the Debian package (cpack, dpkg-shlibdeps) and its install test (pkg-config)
  gnuplot-nox            # the benchmark's plots (docs/plots/)
  libabsl-dev libbloom-dev  # benchmark baselines: absl::flat_hash_set and libbloom
  python3-bitarray       # bench/python: the post's pure-Python Bloom filter
  python3-sklearn        # bench/novelty.cpp's real data set: scikit-learn's handwritten digits, shipped in the package
  clang-14 libclang-rt-14-dev  # the sanitized preset and the fuzzers (libclang_rt's ASan, UBSan, libFuzzer)
  llvm-14                # llvm-symbolizer, so sanitizer reports name files and lines
  g++-aarch64-linux-gnu qemu-user         # the aarch64 preset: cross compiler, and user-mode emulation to run its tests
  libxxhash-dev:arm64 libgtest-dev:arm64  # ... and its target's libraries (Debian multiarch, beside the host's)
  clang-format-16        # scripts/check-format.sh: the newest in Debian 12 (14 mis-formats requires-clauses)
)

profiles=("$@")
((${#profiles[@]})) || profiles=(all)
packages=()
for profile in "${profiles[@]}"; do
  case "$profile" in
    demo) packages+=("${demo[@]}") ;;
    python) packages+=("${python[@]}") ;;
    redis) packages+=("${redis[@]}") ;;
    mpi) packages+=("${mpi[@]}") ;;
    signup) packages+=("${signup[@]}") ;;
    statespace) packages+=("${statespace[@]}") ;;
    chemistry) packages+=("${chemistry[@]}") ;;
    textsearch) packages+=("${textsearch[@]}") ;;
    test | all) packages+=("${test[@]}") ;;
    *)
      echo "install-deps.sh: unknown profile '$profile' (demo, python, redis, mpi, signup, statespace, chemistry, textsearch, test, all)" >&2
      exit 2
      ;;
  esac
done

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
missing=()
for p in $(printf '%s\n' "${packages[@]}" | sort -u); do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
((${#missing[@]})) || exit 0
# The :arm64 packages need the architecture known to dpkg before apt's lists are fetched.
if printf '%s\n' "${missing[@]}" | grep -q ':arm64$'; then
  dpkg --print-foreign-architectures | grep -qx arm64 || $SUDO dpkg --add-architecture arm64
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
