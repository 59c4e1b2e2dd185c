"""The README's first command, as a user runs it: twice, from the repo."""

from __future__ import annotations

import subprocess

import pytest

from ..conftest import REPO

pytestmark = pytest.mark.slow

EXPECTED_TABLE = [
    "|1       |10         |19.99 |delivered|2026-11-01|2026-11-01 09:00:00.123456|",
    "|2       |11         |245.00|shipped  |2026-11-01|2026-11-01 09:05:00.123456|",
    "|3       |10         |6.25  |reordered|2026-11-02|2026-11-02 09:00:00.123456|",
    "|5       |13         |-3.10 |refund   |2026-11-03|2026-11-03 09:09:00.123456|",
]


@pytest.mark.parametrize("attempt", [1, 2])
def test_demo_command(attempt):
    proc = subprocess.run(["bash", "scripts/demo.sh"], cwd=REPO, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = proc.stdout
    assert "batch 0: in 14 | inserted 4 updated 0 deleted 0 truncates 0 | skipped 8 | quarantined 1 | kafka tombstones 1" in out
    assert "table orders (4 rows)" in out
    lines = [line for line in out.splitlines() if line.startswith("|") and not line.startswith("|order_id")]
    assert lines == EXPECTED_TABLE
