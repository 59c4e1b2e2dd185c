#!/usr/bin/env bash
# Runs the test suite; arguments go to pytest (e.g. -m "not slow" for the quick set).
# Three workers, one test file each at a time: much of an end-to-end test is JVM start-up and
# waiting on services (a test's JVMs use about a third of a core on average here), which the
# other workers overlap. Every module has its own ports.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec python3 -m pytest -n "${CDC_DELTA_TEST_WORKERS:-3}" --dist loadfile "$@"
