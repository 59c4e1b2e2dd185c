"""The README's first command, as a user runs it, from the repo."""

from __future__ import annotations

import subprocess

import pytest

from ..conftest import REPO

pytestmark = pytest.mark.slow

ORDERS = [
    "|1       |10         |19.99 |delivered|2026-11-01|2026-11-01 09:00:00.123456|",
    "|2       |11         |245.00|shipped  |2026-11-01|2026-11-01 09:05:00.123456|",
    "|3       |10         |6.25  |reordered|2026-11-02|2026-11-02 09:00:00.123456|",
    "|5       |13         |-3.10 |refund   |2026-11-03|2026-11-03 09:09:00.123456|",
]
CUSTOMERS = ["|10         |Ada |ada@example.com|London|", "|11         |Bob |bob@example.com|Lyon  |",
             "|13         |Dee |dee@example.com|Oslo  |"]
TRANSACTIONS = ["|1     |100   |500.00   |2026-11-28 12:01:00.25|deposit   |",
                "|2     |100   |-125.50  |2026-11-28 12:02:00.25|withdrawal|",
                "|3     |101   |99.99    |2026-11-28 12:03:00.25|deposit   |",
                "|5     |102   |0.01     |2026-11-28 12:05:00.25|deposit   |"]


def table_lines(out: str) -> list[str]:
    return [line for line in out.splitlines() if line.startswith("|") and not line.startswith(("|order_id", "|customer_id|", "|txn_id"))]


def test_demo_command():
    proc = subprocess.run(["bash", "scripts/demo.sh"], cwd=REPO, capture_output=True, text=True, timeout=900,
                          env=None)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    out = proc.stdout
    assert "batch 0: in 29 | inserted 11 updated 0 deleted 0 truncates 0 | skipped 14 | quarantined 1 | kafka tombstones 3" in out
    assert table_lines(out) == ORDERS + CUSTOMERS + TRANSACTIONS
    assert "total lag 0" in out and "table orders: version 1, 4 rows, last batch 0" in out


def test_files_demo():
    proc = subprocess.run(["python3", "-m", "cdc_delta", "run", "--config", "configs/files-demo.yaml", "--show"],
                          cwd=REPO, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert table_lines(proc.stdout) == ORDERS + CUSTOMERS + TRANSACTIONS
