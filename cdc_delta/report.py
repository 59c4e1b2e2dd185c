"""A batch as the steps and sinks are given it (`BatchContext`) and what it reports: per-table
figures, the progress line a person reads and the JSON line monitoring scrapes."""

from __future__ import annotations

import json
import sys
import threading
import time
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from typing import IO, Any, Iterator

_UPDATES = threading.Lock()      # tables of a batch are applied from several threads


@dataclass
class TableFigures:
    events: int = 0
    inserted: int = 0
    updated: int = 0
    deleted: int = 0
    truncates: int = 0
    truncated_rows: int = 0
    quarantined: int = 0
    tombstones_collected: int = 0
    # NULLs written for TOAST placeholders with no earlier value known, per column
    toast_unresolved_columns: dict[str, int] = field(default_factory=dict)
    # a history table (scd2): versions written (new, closed, re-linked around a late change or
    # changed in place) and versions removed (their start moved by a late change)
    versions_written: int = 0
    versions_removed: int = 0
    routed: int = 0            # a route: messages committed to its topic
    # a current-state table: its changes were "merged", or "appended" when none could match a
    # stored row (sinks/current_state/key_span.py); None when none was written
    written_by: str | None = None

    @property
    def toast_unresolved(self) -> int:
        return sum(self.toast_unresolved_columns.values())


@dataclass
class BatchReport:
    """Every record of a batch is counted in exactly one of: inserted, updated, deleted,
    truncates, skipped (superseded, duplicate, no effect), quarantined, kafka_tombstones."""

    pipeline: str
    batch_id: int
    records_in: int = 0
    kafka_tombstones: int = 0
    quarantined: int = 0
    seconds: float = 0.0
    tables: dict[str, TableFigures] = field(default_factory=dict)
    offsets: dict[str, Any] = field(default_factory=dict)
    phases: dict[str, float] = field(default_factory=dict)     # seconds per step, summed over tables
    newest_source_ms: int | None = None     # the latest source ts_ms among the batch's changes

    @contextmanager
    def phase(self, name: str) -> Iterator[None]:
        started = time.monotonic()
        try:
            yield
        finally:
            with _UPDATES:
                self.phases[name] = round(self.phases.get(name, 0.0) + time.monotonic() - started, 3)

    def saw_source_time(self, ts_ms: int) -> None:
        with _UPDATES:
            self.newest_source_ms = max(ts_ms, self.newest_source_ms or ts_ms)

    def total(self, name: str) -> int:
        return sum(getattr(t, name) for t in self.tables.values())

    @property
    def skipped(self) -> int:
        landed = sum(self.total(n) for n in ("inserted", "updated", "deleted", "truncates"))
        return self.records_in - landed - self.quarantined - self.kafka_tombstones

    def line(self) -> str:
        return (f"batch {self.batch_id}: in {self.records_in} | inserted {self.total('inserted')} "
                f"updated {self.total('updated')} deleted {self.total('deleted')} "
                f"truncates {self.total('truncates')} | skipped {self.skipped} | "
                f"quarantined {self.quarantined} | kafka tombstones {self.kafka_tombstones} | "
                f"toast unresolved {self.total('toast_unresolved')}{self._outputs()} | lag {self._lag()} | "
                f"{self.seconds:.2f} s")

    def _outputs(self) -> str:
        """History versions and routed messages, for pipelines that have them, and the tables
        whose changes were appended, not merged, when there are such."""
        versions, routed = self.total("versions_written"), self.total("routed")
        routes = any("/" in name for name in self.tables)
        history = any(t.versions_written or t.versions_removed for t in self.tables.values())
        appended = [name for name, t in self.tables.items() if t.written_by == "appended"]
        return ((f" | versions written {versions}" if history else "") +
                (f" | routed {routed}" if routes else "") +
                (f" | appended {', '.join(appended)}" if appended else ""))

    def _lag(self) -> str:
        """Seconds from the newest source change of the batch to now (its tables committed)."""
        if self.newest_source_ms is None:
            return "-"
        return f"{max(0.0, time.time() - self.newest_source_ms / 1000):.1f} s"

    def as_json(self) -> str:
        data = asdict(self)
        data["skipped"] = self.skipped
        data["toast_unresolved"] = self.total("toast_unresolved")
        for name, figures in self.tables.items():
            data["tables"][name]["toast_unresolved"] = figures.toast_unresolved
        data["finished_at"] = time.time()
        if self.newest_source_ms is not None:
            data["lag_s"] = round(max(0.0, data["finished_at"] - self.newest_source_ms / 1000), 3)
        return json.dumps(data, sort_keys=True)


class ProgressPrinter:
    """Writes one progress line per batch, and JSON lines to a file when asked."""

    def __init__(self, out: IO[str] | None = None, json_path: str | None = None) -> None:
        self.out = out or sys.stdout
        self.json_path = json_path
        self.reports: list[BatchReport] = []

    def note(self, text: str) -> None:
        print(f"note: {text}", file=self.out, flush=True)

    def __call__(self, report: BatchReport) -> None:
        self.reports.append(report)
        print(report.line(), file=self.out, flush=True)
        if self.json_path:
            with open(self.json_path, "a", encoding="utf-8") as fh:
                fh.write(report.as_json() + "\n")


@dataclass(frozen=True)
class BatchContext:
    pipeline: str
    batch_id: int
    # the id appends are made idempotent under: the pipeline, another after a lost checkpoint
    # (run/recovery.py), "<pipeline>:replay" for replays of the quarantine
    app_id: str
    report: BatchReport

    @property
    def metadata(self) -> dict[str, Any]:
        """What each Delta commit of the batch records (recovery reads it back)."""
        return {"pipeline": self.pipeline, "batch_id": self.batch_id, "app_id": self.app_id,
                "offsets": self.report.offsets}

    def append_id(self, what: str) -> str:
        """The txnAppId of one kind of append of the batch (tombstones, quarantine, …)."""
        return f"{self.app_id}:{what}"
