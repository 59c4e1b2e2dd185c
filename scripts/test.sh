#!/usr/bin/env bash
# Runs the test suite; arguments go to pytest (e.g. -m "not slow" for the quick set).
# Two workers, one test file each at a time: much of an end-to-end test is JVM start-up and
# waiting on services, which the other worker overlaps. Every module has its own ports, from
# tests/ports.py, checked for overlaps by tests/unit/test_ports.py. (Three
# overloaded these 2 cores: brokers stopped answering Spark's admin client in time.)
# Files go out in the order tests/conftest.py gives them (the longest first), not xdist's
# (the most tests first, which left the long files of one or two tests to run alone at the end).
# The slowest tests are listed at the end: where the suite's time goes.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec python3 -m pytest -n "${CDC_DELTA_TEST_WORKERS:-2}" --dist loadfile --no-loadscope-reorder --durations=25 "$@"
