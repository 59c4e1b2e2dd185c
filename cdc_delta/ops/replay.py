"""Re-apply quarantined events once their cause is fixed (config, table, or upstream)."""

from __future__ import annotations

from pyspark.sql import SparkSession

from ..batch.runner import BatchHandler
from ..config.models import PipelineConfig
from ..lake.tables import DeltaLocation
from ..run.writer_lock import lock_tables, print_note
from ..sinks.quarantine import as_raw_records, mark_replayed, pending


def replay_quarantine(spark: SparkSession, config: PipelineConfig, table: str | None = None) -> str:
    handler = BatchHandler(spark, config)
    handler.prepare()
    with lock_tables(config, print_note):
        return _replay(spark, config, handler, table)


def _replay(spark: SparkSession, config: PipelineConfig, handler: BatchHandler, table: str | None) -> str:
    where = DeltaLocation.of(config.quarantine_location)
    waiting = pending(spark, where, config.pipeline, table).persist()
    total = waiting.count()
    if not total:
        return "nothing to replay: no quarantined events are waiting"
    replay_id = where.table(spark).history(1).first()["version"]
    report, still_bad = handler.process(as_raw_records(waiting), replay_id,
                                        app_id=f"{config.pipeline}:replay", quarantine=False)
    mark_replayed(spark, where, waiting, still_bad if still_bad is not None else waiting.limit(0), replay_id)
    for df in (waiting, still_bad):
        if df is not None:
            df.unpersist()
    return (f"replayed {total} quarantined event(s): {total - report.quarantined} applied or superseded, "
            f"{report.quarantined} still failing (left in quarantine); {report.line()}")
