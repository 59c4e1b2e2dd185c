"""benchmarks/alone.py: a second benchmark on the machine stops at once, naming the first; the
lock is free again when the first process ends."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from benchmarks.alone import alone
from benchmarks.measure import REPO


def _holder(lock, seconds: float) -> subprocess.Popen:
    code = f"import time; from pathlib import Path; from benchmarks.alone import alone; alone(Path({str(lock)!r})); time.sleep({seconds})"
    return subprocess.Popen([sys.executable, "-c", code], cwd=REPO)


def _wait_for_holder(lock) -> None:
    deadline = time.monotonic() + 30
    while not (lock.exists() and lock.read_text()):
        assert time.monotonic() < deadline, "the first benchmark never took the lock"
        time.sleep(0.05)


def test_a_second_benchmark_stops_naming_the_first_and_runs_once_it_has_ended(tmp_path):
    lock = tmp_path / "benchmark.lock"
    first = _holder(lock, 60)
    try:
        _wait_for_holder(lock)
        with pytest.raises(SystemExit) as refused:
            alone(lock)
        assert f"another benchmark is running (pid {first.pid}: -c)" in str(refused.value)
    finally:
        first.kill()
        first.wait()
    second = _holder(lock, 0)
    assert second.wait(timeout=60) == 0
    assert lock.read_text() == f"pid {second.pid}: -c"
