#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Chemical structure search with blume filters as molecular fingerprints, beside RDKit: installs RDKit and
# its data sets, builds the Python bindings, then runs examples/chemistry/screen.py on all 5,000 NCI
# molecules, every PAINS pattern and 100 cut substructures. Extra arguments go to screen.py (--help).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh chemistry
cmake --preset release >/dev/null
cmake --build --preset release --target blume_python
PYTHONPATH=build/release/python exec /usr/bin/python3 examples/chemistry/screen.py "$@"
