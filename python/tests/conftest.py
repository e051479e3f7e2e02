# SPDX-License-Identifier: Apache-2.0
"""Shared fixtures of the Python tests: the blume tool (when built) and sizes that shrink under sanitizers."""

import math
import os
import pathlib
import shutil

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures"

# Sanitized builds run every call several times slower: the statistical tests use fewer keys there.
SANITIZED = os.environ.get("BLUME_SANITIZED") == "1"
# The sanitizer runtime preloaded into this interpreter is loaded by now. The tool's sanitized build carries
# its own copy, and a second one preloaded into it would abort it: the tools these tests start go without.
os.environ.pop("LD_PRELOAD", None)
SCALE = 0.2 if SANITIZED else 1.0


def sized(n):
    return max(1000, int(n * SCALE))


@pytest.fixture(scope="session")
def cli():
    path = os.environ.get("BLUME_CLI") or shutil.which("blume")
    if not path:
        pytest.skip("the blume tool is not built")
    return path


def within_999(measured_hits, probes, rate):
    """Whether `measured_hits` of `probes` is inside the 99.9% binomial interval of `rate`, plus 1% of it."""
    sigma = math.sqrt(probes * rate * (1 - rate))
    return abs(measured_hits - probes * rate) <= 3.29 * sigma + 0.01 * probes * rate
