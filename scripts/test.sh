#!/usr/bin/env bash
# Runs the test suite; arguments go to pytest (e.g. -m "not slow" for the quick set).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec python3 -m pytest "$@"
