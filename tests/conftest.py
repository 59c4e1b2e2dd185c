"""Shared fixtures: one local SparkSession with Delta for the whole run; helpers to build
raw records, run batches and read tables."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO.parent / "shared" / "fixtures"


@pytest.fixture(scope="session")
def spark():
    from cdc_delta.infra.session import get_spark

    session = get_spark("cdc-delta-tests", {"spark.sql.shuffle.partitions": "1"})
    yield session
    session.stop()


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def fixture_lines(path: Path) -> list[str]:
    """Event lines of a fixture file: licence comments and blank lines left out, pretty-printed
    JSON (the debezium/ folder) folded onto one line."""
    text = path.read_text()
    if path.suffix == ".json":
        return [json.dumps(json.loads(text))]
    return [line for line in text.splitlines()
            if line.strip() and not line.startswith(("/*", " *", " */"))]
