"""Shared fixtures: one local SparkSession with Delta for the whole run; helpers to build
raw records, run batches and read tables."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO.parent / "shared" / "fixtures"
# The files that take longest, longest first (their seconds in a CI run of stop 37). The two
# workers take whole files (scripts/test.sh: --dist loadfile), each the next file when it is
# free: a long file handed out last runs alone at the end, so these go out first and the many
# short files fill in behind them. A file not listed keeps its place after them.
LONGEST_FIRST = [
    "tests/integration/test_faults.py",        # 685 s
    "tests/integration/test_databases.py",     # 423
    "tests/spark/test_property.py",            # 412
    "tests/integration/test_kafka.py",         # ~380
    "tests/spark/test_history.py",             # 331
    "tests/integration/test_object_store.py",  # 325
    "tests/integration/test_demo.py",          # 255
    "tests/integration/test_routes.py",        # 218
    "tests/spark/test_semantics.py",           # ~200
    "tests/spark/test_exact_values.py",        # ~150
    "tests/integration/test_security.py",      # 110
]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests in the order of LONGEST_FIRST by their file, the others after them as collected."""
    rank = {name: i for i, name in enumerate(LONGEST_FIRST)}

    items.sort(key=lambda item: rank.get(item.nodeid.split("::")[0], len(rank)))


@pytest.fixture(scope="session")
def spark():
    from cdc_delta.infra.session import get_spark

    session = get_spark("cdc-delta-tests", {"spark.sql.shuffle.partitions": "1"})
    yield session
    session.stop()


def refuse_listing(monkeypatch: pytest.MonkeyPatch) -> None:
    """From here on, listing a folder (Path.iterdir) fails the test. Call it once the test's
    own folders are made: pytest's tmp_path lists its base folder."""
    def refuse(self: Path) -> None:
        raise AssertionError(f"listed {self}")
    monkeypatch.setattr(Path, "iterdir", refuse)


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
