"""The progress line: history versions, routed messages and the tables whose changes were
appended appear for batches that have them, and leave the line as it was for those that do not."""

from __future__ import annotations

import json

from cdc_delta.report import BatchReport, TableFigures


def test_a_current_state_pipeline_keeps_its_line():
    report = BatchReport("p", 3, records_in=2, seconds=1.5, tables={"orders": TableFigures(inserted=2)})
    assert report.line() == ("batch 3: in 2 | inserted 2 updated 0 deleted 0 truncates 0 | skipped 0 | quarantined 0 "
                             "| kafka tombstones 0 | toast unresolved 0 | lag - | 1.50 s")


def test_history_and_routes_are_counted_apart_from_what_landed():
    report = BatchReport("p", 0, records_in=3, seconds=2.0, tables={
        "transactions": TableFigures(inserted=2, updated=1),
        "transactions/withdrawals": TableFigures(routed=0),
        "transactions_history": TableFigures(versions_written=4, versions_removed=1)})
    assert "| toast unresolved 0 | versions written 4 | routed 0 | lag -" in report.line()
    assert report.skipped == 0       # versions and messages are not records applied


def test_tables_whose_changes_were_appended_are_named():
    report = BatchReport("p", 1, records_in=5, seconds=1.0, tables={
        "orders": TableFigures(inserted=3, written_by="appended"),
        "customers": TableFigures(updated=2, written_by="merged"),
        "lines": TableFigures(inserted=0, written_by="appended")})
    assert report.line().endswith("| toast unresolved 0 | appended orders, lines | lag - | 1.00 s")
    assert json.loads(report.as_json())["tables"]["customers"]["written_by"] == "merged"
