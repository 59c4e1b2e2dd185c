"""Whether a batch's Spark expressions run compiled or interpreted, and its queries adaptively.

Spark compiles each new plan's expressions to Java classes before it runs them, and a batch
has some 100 plans (decode, reduce, guard, Delta's MERGE and log queries). A JVM compiles them
once; in a run's first batch that is about a quarter of the time (the demo's first batch of 29
records, runs in turns: 39 and 46 s compiled, 29 and 37 s interpreted). Interpreted expressions
cost more per row: 1.39x the seconds of 10k-event batches into a 100k-row table, 3.2x of
1k-event batches into a 1M-row one (the MERGE reads the table). So a batch runs interpreted
only when it has fewer records than `spark.cdcdelta.interpretBelowRecords` and its tables hold
under SMALL_TABLES_BYTES together at their newest versions (a size known only of a table on this
machine's disk, from the checksum Delta writes beside each commit); else compiled. cdc-delta's
own local session sets it (infra/session.py); a session given to cdc-delta is left as it is
unless it sets it. A batch of Spark's Kafka source is counted from its offsets before its first
job (planned.py); another, until its records are counted, runs as the last batch chose
(interpreted before the first: decoding its records is the first job).

Compiled, a batch's queries run adaptively only when its tables hold ADAPTIVE_FROM_BYTES or
more at their newest versions, or a size is not known here (see ADAPTIVE below), unless the
session sets `spark.sql.adaptive.enabled` itself.
"""

from __future__ import annotations

from typing import Callable, Iterable

from pyspark.sql import SparkSession

from ..errors import ConfigError
from ..lake.tables import DeltaLocation

INTERPRET_BELOW = "spark.cdcdelta.interpretBelowRecords"
SMALL_TABLES_BYTES = 4 * 1024 * 1024
# Spark's switches: expression classes (an internal setting: its interpreted path is the
# reference its compiled one is tested against) and whole-stage code; and adaptive execution,
# which runs each stage of a query as a job of its own and plans the rest again after it: for
# so few records, time and no better plan (200-event batches into a 10k-row table: 29 -> 20 jobs,
# 0.88x the seconds, benchmarks/ab.py). Into small tables, compiled batches gain from it being
# off too: half their jobs; 10k-event batches into 100k rows 0.93x the seconds, 100k-event
# snapshot batches 0.92x, 1k-event batches into 1M rows (34 MB) 0.97x; into 10M rows (336 MB),
# whose MERGE rewrites them, 1.03x with shuffled hash joins preferred (benchmarks/ab.py; README)
FACTORY_MODE, WHOLE_STAGE = "spark.sql.codegen.factoryMode", "spark.sql.codegen.wholeStage"
ADAPTIVE = "spark.sql.adaptive.enabled"
INTERPRETED = {FACTORY_MODE: "NO_CODEGEN", WHOLE_STAGE: "false", ADAPTIVE: "false"}
ADAPTIVE_FROM_BYTES = 128 * 1024 * 1024    # between the 34 MB that gained and the 336 MB that lost


class Codegen:
    """`tables`: the Delta tables a batch reads and writes, asked at each batch."""

    def __init__(self, spark: SparkSession, tables: Callable[[], Iterable[DeltaLocation]]) -> None:
        self.spark, self.tables = spark, tables
        self.below = _records(spark.conf.get(INTERPRET_BELOW, "0"))
        self.interpreted: bool | None = None     # this batch's choice; None: the switch is off
        if self.below:    # (a Spark Connect session, which has no sparkContext, does not set it)
            started = spark.sparkContext.getConf()   # the session's own settings, before any batch
            self.compiled = {FACTORY_MODE: started.get(FACTORY_MODE, "FALLBACK"),
                             WHOLE_STAGE: started.get(WHOLE_STAGE, "true"),
                             ADAPTIVE: started.get(ADAPTIVE, "true")}
            self.adaptive_chosen = not started.contains(ADAPTIVE)
            self._use(interpreted=True)

    def fit(self, records: int, batch_session: SparkSession) -> None:
        """Interpreted for a batch of few records into small tables, else compiled. A stream's
        batches come in a copy of the session the stream started in (its settings copied then):
        both are set."""
        if self.below:
            sizes = [table.stored_bytes() for table in self.tables()]
            self._use(records < self.below and _under(sizes, SMALL_TABLES_BYTES), batch_session,
                      adaptive=not _under(sizes, ADAPTIVE_FROM_BYTES))

    def _use(self, interpreted: bool, batch_session: SparkSession | None = None,
             adaptive: bool = True) -> None:
        self.interpreted = interpreted
        wanted = INTERPRETED if interpreted else self.compiled
        if not interpreted and self.adaptive_chosen:
            wanted = {**wanted, ADAPTIVE: "true" if adaptive else "false"}
        for session in {id(s): s for s in (self.spark, batch_session) if s is not None}.values():
            if any(session.conf.get(key) != value for key, value in wanted.items()):
                for key, value in wanted.items():
                    session.conf.set(key, value)


def _under(sizes: list[int | None], limit: int) -> bool:
    """The tables' newest versions hold under `limit` together, each size known (not known: a
    catalog table, one on an object store, a commit without its checksum)."""
    return None not in sizes and sum(sizes) < limit


def _records(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise ConfigError("spark settings", INTERPRET_BELOW,
                          "must be a number of records (0: compile every batch's expressions)", text)
    return value
