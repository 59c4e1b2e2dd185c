"""The README's first command, as a user runs it: from a clean copy of the checkout, with no
virtual environment active, so that the demo makes its own."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from ..conftest import REPO
from ..ports import KAFKA

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

HISTORY = ["|1     |100   |500.00   |2026-11-28 12:01:00.25|deposit   |2026-11-18 11:06:40  |NULL                 |true        |",
           "|2     |100   |-120.50  |2026-11-28 12:02:00.25|withdrawal|2026-11-18 11:06:40.1|2026-11-18 11:06:40.3|false       |",
           "|2     |100   |-125.50  |2026-11-28 12:02:00.25|withdrawal|2026-11-18 11:06:40.3|NULL                 |true        |",
           "|3     |101   |99.99    |2026-11-28 12:03:00.25|deposit   |2026-11-18 11:06:40.2|NULL                 |true        |",
           "|4     |101   |12.00    |2026-11-28 12:04:00.25|fee       |2026-11-18 11:06:40.4|2026-11-18 11:06:40.5|false       |",
           "|5     |102   |0.01     |2026-11-28 12:05:00.25|deposit   |2026-11-18 11:06:40.6|NULL                 |true        |"]


def table_lines(out: str) -> list[str]:
    return [line for line in out.splitlines() if line.startswith("|") and not line.startswith(("|order_id", "|customer_id|", "|txn_id"))]


def clean_clone(folder: Path) -> Path:
    """The checkout's tracked files as they are now (a clone of the working tree): no .venv,
    lake or checkpoints."""
    files = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True).stdout
    for name in filter(None, files.decode().split("\0")):
        source = REPO / name
        if source.is_file():
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, folder / name)
    return folder


def without_virtual_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    active = os.environ.get("VIRTUAL_ENV")
    if active:
        env["PATH"] = os.pathsep.join(p for p in env["PATH"].split(os.pathsep) if not p.startswith(active))
    return {**env, "KAFKA_PORT": str(KAFKA["demo"]), "KAFKA_CONTROLLER_PORT": str(KAFKA["demo"] + 1)}


def test_demo_from_a_clean_clone_in_a_fresh_virtual_environment(tmp_path):
    clone = clean_clone(tmp_path / "cdc-delta")
    proc = subprocess.run(["bash", "scripts/demo.sh"], cwd=clone, capture_output=True, text=True, timeout=1500,
                          env=without_virtual_env())
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    out = proc.stdout
    assert "batch 0: in 29 | inserted 11 updated 0 deleted 0 truncates 0 | skipped 14 | quarantined 1 | kafka tombstones 3" in out
    # first batches into empty tables, the history table's too
    assert "| appended orders, customers, transactions, transactions_history |" in out
    assert table_lines(out) == ORDERS + CUSTOMERS + TRANSACTIONS + HISTORY
    assert "route transactions/withdrawals -> pg.bank.transactions.withdrawals (2 messages, read_committed)" in out
    assert "route orders/alerts -> high-priority-alerts (0 messages, read_committed)" in out
    assert "total lag 0" in out and "table orders: version 1, 4 rows, last batch 0" in out
    installed = subprocess.run([str(clone / ".venv/bin/python3"), "-c", "import cdc_delta; print(cdc_delta.__file__)"],
                               capture_output=True, text=True, check=True, cwd="/").stdout.strip()
    assert installed == str(clone / "cdc_delta" / "__init__.py")


def test_files_demo():
    proc = subprocess.run(["python3", "-m", "cdc_delta", "run", "--config", "configs/files-demo.yaml", "--show"],
                          cwd=REPO, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert table_lines(proc.stdout) == ORDERS + CUSTOMERS + TRANSACTIONS
