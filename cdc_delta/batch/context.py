"""The one value a batch's steps and sinks are given about the batch itself."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .report import BatchReport


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
