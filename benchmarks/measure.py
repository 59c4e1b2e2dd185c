"""Measuring an engine's run: wall time and peak memory of its process tree (Python and JVM),
and freshness from per-batch offsets."""

from __future__ import annotations

import json
import os
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import psutil

REPO = Path(__file__).resolve().parents[1]


@dataclass
class Run:
    seconds: float
    peak_rss_mb: float
    returncode: int
    log: Path


def measured(cmd: list[str], log: Path, env: dict[str, str] | None = None, timeout: float = 7200,
             cwd: Path = REPO) -> Run:
    """Run `cmd` from `cwd` (the repository), its output in `log`, sampling the tree's RSS."""
    started = time.monotonic()
    with open(log, "w") as out:
        proc = subprocess.Popen(cmd, cwd=cwd, stdout=out, stderr=subprocess.STDOUT,
                                env={**os.environ, **(env or {})})
        peak = _PeakMemory(proc.pid)
        try:
            rc = proc.wait(timeout)
        finally:
            peak.stop()
        seconds = round(time.monotonic() - started, 2)
        peak.wait_for_tree()
    return Run(seconds, peak.mb, rc, log)


class _PeakMemory:
    def __init__(self, pid: int, every: float = 0.2) -> None:
        self.pid, self.every, self.mb = pid, every, 0.0
        self.tree: dict[int, psutil.Process] = {}   # every process of the tree seen
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()

    def _sample(self) -> None:
        while not self._done.is_set():
            try:
                root = psutil.Process(self.pid)
                tree = [root, *root.children(recursive=True)]
                self.tree.update((p.pid, p) for p in tree)
                self.mb = max(self.mb, sum(p.memory_info().rss for p in tree) / 2 ** 20)
            except psutil.Error:
                pass
            self._done.wait(self.every)

    def stop(self) -> None:
        self._done.set()
        self._thread.join()

    def wait_for_tree(self, timeout: float = 60) -> None:
        """Until every process of the tree has exited: a JVM outlives the Python process that
        started it by a few seconds, writing its recordings and cleaning up, and the next run
        should neither compete with it nor read its files half written."""
        psutil.wait_procs(list(self.tree.values()), timeout=timeout)


def jsonl(path: Path) -> list[dict]:
    """A measurement file's lines (one JSON object each); none when it does not exist yet."""
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def freshness(produced: list[tuple[int, int, float]], batches: list[dict], topic: str) -> list[float]:
    """Seconds from each event's source commit time to the end of the batch that made it
    visible. `produced`: (partition, offset, ts seconds); `batches`: cdc-delta's metrics lines
    (end offset per topic/partition, finished_at)."""
    ends: dict[int, list[tuple[int, float]]] = {}
    for b in sorted(batches, key=lambda b: b["batch_id"]):
        for where, last in b["offsets"].items():
            t, _, p = where.rpartition("/")
            if t == topic:
                ends.setdefault(int(p), []).append((last, b["finished_at"]))
    out = []
    for partition, offset, ts in produced:
        visible = next((at for last, at in ends.get(partition, []) if last >= offset), None)
        if visible is not None:
            out.append(visible - ts)
    return out
