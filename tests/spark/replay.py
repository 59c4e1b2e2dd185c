"""Replay event files through `cdc-delta run`, in-process, with a config written to tmp_path."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from cdc_delta import cli
from cdc_delta.config import load_config

from ..conftest import fixture_lines

PRODUCTS = {"id": "int", "name": "string", "description": "string", "weight": "double"}


def products_table(**overrides: Any) -> dict[str, Any]:
    return {"name": "products", "match": {"table": "products"}, "keys": ["id"],
            "columns": dict(PRODUCTS), **overrides}


def write_config(tmp: Path, tables: list[dict], **extra: Any) -> Path:
    config = {"pipeline": "replay", "source": {"kind": "files", "path": str(tmp / "in")},
              "lake": str(tmp / "lake"), "checkpoint": str(tmp / "ck"), "tables": tables, **extra}
    path = tmp / "pipeline.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


def stage(tmp: Path, files: list[Path], topic: str = "topic0", extra_lines: dict[int, list[str]] | None = None) -> None:
    """Copy fixture files, cleaned, into the source folder (names sort in replay order)."""
    folder = tmp / "in" / topic
    folder.mkdir(parents=True, exist_ok=True)
    for i, f in enumerate(files):
        lines = fixture_lines(f) + (extra_lines or {}).get(i, [])
        (folder / f"{i:03d}-{f.name}").write_text("\n".join(lines) + "\n")


def run(config_path: Path, *args: str) -> int:
    return cli.main(["run", "--config", str(config_path), "--metrics-json", str(config_path.parent / "metrics.jsonl"), *args])


def batches(config_path: Path) -> list[dict]:
    path = config_path.parent / "metrics.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def config_of(config_path: Path):
    return load_config(config_path)
