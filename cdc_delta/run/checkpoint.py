"""What a checkpoint was made with, kept beside it, so that a config change that would corrupt
the checkpointed state (a removed table, changed keys or target) is refused at start."""

from __future__ import annotations

import json
from typing import Any

from pyspark.sql import SparkSession

from ..config.models import PipelineConfig
from ..errors import ConfigError
from ..infra.storage import Files, absolute

FINGERPRINT = "cdc_delta_tables.json"


def fingerprint(config: PipelineConfig) -> dict[str, Any]:
    return {t.name: {"keys": list(t.keys), "target": _target(config, t)} for t in config.tables}


def check_and_record(spark: SparkSession, config: PipelineConfig, config_file: str = "<config>") -> list[str]:
    """Refuse a start that the checkpoint can not serve; return notes for tables added since."""
    files = Files(spark, config.checkpoint_path)
    now = fingerprint(config)
    notes: list[str] = []
    if files.exists(FINGERPRINT):
        before = json.loads(files.read_text(FINGERPRINT))
        for name, was in before.items():
            _compare(config_file, config.checkpoint_path, name, was, now.get(name))
        notes = [f"table {n} is new: it gets only events read from now on; replay older ones from "
                 "an archive or start a new checkpoint" for n in now if n not in before]
    files.write_text(FINGERPRINT, json.dumps(now, indent=2, sort_keys=True))
    return notes


def _compare(file: str, checkpoint: str, name: str, was: dict, now: dict | None) -> None:
    fresh = f"to start over, delete {checkpoint} (or set another 'checkpoint:') and rebuild the tables"
    if now is None:
        raise ConfigError(file, "tables", f"table {name} was removed, but checkpoint {checkpoint} "
                          f"has read its events; put it back, or {fresh}")
    if now["keys"] != was["keys"]:
        raise ConfigError(file, f"tables[{name}].keys", f"keys changed from {was['keys']} to {now['keys']} "
                          f"but the table was built by key; restore the keys, or {fresh}")
    if now["target"] != was["target"]:
        raise ConfigError(file, f"tables[{name}].target", f"target changed from {was['target']} to "
                          f"{now['target']}; the checkpoint has already written to the old one: restore it, or {fresh}")


def _target(config: PipelineConfig, table) -> str:
    target = config.target_of(table)
    return absolute(target.path) if target.path else str(target.table)
