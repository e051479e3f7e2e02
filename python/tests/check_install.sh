#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The two ways docs/python.md installs the Python package, each into a fresh temporary place, then
# `import blume` from outside the source tree:
#   check_install.sh cmake BUILD_DIR PYTHON RELATIVE_SITE_DIR   cmake --install into a prefix, on PYTHONPATH
#   check_install.sh pip SOURCE_DIR PYTHON                       pip install --no-build-isolation . into a venv
set -euo pipefail
mode=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
smoke='import blume, sys
f = blume.SplitBlockBloomFilter(1000)
f.add("anna@example.com")
assert "anna@example.com" in f and f.contains_many(["anna@example.com", "bob"]).tolist() == [True, False]
print("imported", blume.__version__, "from", blume.__file__)'
case "$mode" in
  cmake)
    cmake --install "$2" --prefix "$work/prefix" >/dev/null
    cd "$work"
    PYTHONPATH="$work/prefix/$4" "$3" -c "$smoke"
    ;;
  pip)
    "$3" -m venv --system-site-packages "$work/venv"
    # Offline, with Debian's setuptools, wheel and pybind11; the build is the project's CMake build.
    (cd "$2" && "$work/venv/bin/pip" install --no-build-isolation --no-index --quiet .)
    cd "$work"
    "$work/venv/bin/python" -c "$smoke"
    ;;
  *)
    echo "usage: check_install.sh cmake|pip ..." >&2
    exit 2
    ;;
esac
