"""A route's condition is checked against the table's columns when the pipeline prepares,
before any Kafka or batch work; the error names the table, the route, the condition and what a
condition may use."""

from __future__ import annotations

import pytest

from cdc_delta.batch import BatchHandler
from cdc_delta.config import parse_config
from cdc_delta.errors import RouteConditionInvalid

pytestmark = pytest.mark.spark


def pipeline(tmp_path, when: str):
    return parse_config({
        "pipeline": "r", "lake": str(tmp_path / "lake"), "checkpoint": str(tmp_path / "ck"),
        # nothing listens here: a check that reached Kafka would fail differently
        "source": {"kind": "kafka", "bootstrap_servers": "127.0.0.1:1", "topics": ["bank"]},
        "tables": [{"name": "transactions", "keys": ["txn_id"],
                    "columns": {"txn_id": "bigint", "txn_type": "string"},
                    "routes": [{"name": "withdrawals", "topic": "w", "when": when}]}]})


@pytest.mark.parametrize("when, problem", [("txn_kind = 'withdrawal'", "txn_kind"), ("txn_type = = 'x'", "yntax")])
def test_a_condition_that_does_not_analyse_is_refused_before_kafka(spark, tmp_path, when, problem):
    with pytest.raises(RouteConditionInvalid) as info:
        BatchHandler(spark, pipeline(tmp_path, when)).prepare()
    err = info.value
    assert (err.table, err.route, err.condition) == ("transactions", "withdrawals", when)
    assert problem in str(err) and "may use txn_id, txn_type, op, source, ts_ms" in str(err)
    assert "\n" not in str(err)
    assert not (tmp_path / "lake" / "transactions").exists()      # refused before any table was made
