"""After every Spark test: the literal TOAST placeholder is in no Delta table it wrote (the
quarantine, which keeps raw events as they came, aside)."""

from __future__ import annotations

from pathlib import Path

import pytest
from pyspark.sql import functions as F

from cdc_delta.debezium.logical import TOAST_PLACEHOLDER
from cdc_delta.infra.names import col

from .helpers import PLACEHOLDER_VALUES


@pytest.fixture(autouse=True)
def no_placeholder_lands(request, tmp_path):
    yield
    if "spark" not in request.fixturenames:
        return
    spark = request.getfixturevalue("spark")
    for table in tables_under(tmp_path):
        df = spark.read.format("delta").load(str(table))
        checked = [f.name for f in df.schema.fields if f.dataType.typeName() in ("string", "binary")]
        if not checked:
            continue
        hits = df.filter(F.greatest(*[col(c).cast("string").isin(*PLACEHOLDER_VALUES) for c in checked],
                                    F.lit(False))).count()
        assert hits == 0, f"{hits} rows of {table} hold {TOAST_PLACEHOLDER!r}"


def tables_under(root: Path) -> list[Path]:
    return [log.parent for log in root.rglob("_delta_log") if "_quarantine" not in log.parent.name]
