#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The sign-up gate with a real database: installs dependencies, builds what it needs (the tool, the Python
# bindings, the Redis module), then runs examples/signup/signup.py, which starts its own PostgreSQL and
# redis-server on loopback ports. Extra arguments go to `signup.py run` (default: 1M users, 100k attempts,
# every mode, the crash test), for example --items 10M.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake --preset release >/dev/null
cmake --build --preset release --target blume_cli blume_python blume_redis
PYTHONPATH=build/release/python exec /usr/bin/python3 examples/signup/signup.py run --crash-test \
  --blume-cli build/release/cli/blume --module build/release/redis/blume_redis.so "$@"
