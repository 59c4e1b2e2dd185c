"""The front door: `Pipeline`, the one API every way of running cdc-delta goes through.

    pipeline = Pipeline.from_yaml("configs/demo.yaml")     # or Pipeline.from_dict({...})
    pipeline.run()                                          # drain what is new and stop
    query = pipeline.start(spark)                           # a service on the caller's session
    stream.writeStream.foreachBatch(pipeline.foreach_batch)  # a stream the caller owns

Given a session, cdc-delta uses it as it is (its settings unchanged); without one it builds its
local session, as the CLI does. Nothing here imports pyspark until a method needs it, so a config
is checked without a JVM.
"""

from __future__ import annotations

from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Callable, Mapping

from .config import PipelineConfig, load_config, parse_config
from .config.loader import interpolate
from .config.models import Trigger
from .errors import ConfigError, SourceColumnsMissing
from .frame import is_own_column

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.streaming import StreamingQuery

    from .batch.runner import BatchHandler
    from .hooks import Hooks
    from .report import BatchReport

# what `foreach_batch` needs of each row, as Spark's Kafka source names it
KAFKA_SOURCE_COLUMNS = ("value", "topic", "partition", "offset", "timestamp")


@dataclass
class RunResult:
    """What a blocking run did: one report per batch, and the signal that stopped it, if any."""

    reports: list["BatchReport"] = field(default_factory=list)
    stopped_by: str | None = None

    @property
    def records_in(self) -> int:
        return sum(r.records_in for r in self.reports)

    @property
    def quarantined(self) -> int:
        return sum(r.quarantined for r in self.reports)


class Pipeline:
    """One configured pipeline. Errors are cdc-delta's own classes (`cdc_delta.errors`), each with
    the fields it names; the CLI turns them into exit codes."""

    def __init__(self, config: PipelineConfig, file: str = "<config>") -> None:
        self.config, self.file = config, file
        self._user_stream: UserStreamBatches | None = None

    @classmethod
    def from_yaml(cls, path: str | Path) -> "Pipeline":
        return cls(load_config(path), str(path))

    @classmethod
    def from_dict(cls, mapping: Mapping[str, Any], name: str = "<dict>") -> "Pipeline":
        """The same checks and messages as a YAML file (`${VAR}` and `${file:…}` included)."""
        if not isinstance(mapping, Mapping):
            raise ConfigError(name, "(top)", "the config must be a mapping of keys to values", type(mapping).__name__)
        return cls(parse_config(interpolate(dict(mapping), name, ""), name), name)

    # --- blocking run: what a scheduled job (and `cdc-delta run`) calls --------------------------

    def run(self, spark: "SparkSession | None" = None, trigger: str | Trigger | None = "available-now",
            metrics_json: str | None = None, out: IO[str] | None = None, hooks: "Hooks | None" = None) -> RunResult:
        """Run until the trigger is done (available-now, once) or a signal stops it (an
        interval): one writer at a time (locks on the checkpoint and each path table), a lost
        checkpoint resumed from the tables, Kafka outages waited out. Progress lines go to `out`
        (stdout), and JSON lines to `metrics_json` when given. `hooks`: called at the batch's
        named points (`cdc_delta.hooks`; the crash tests kill the process there)."""
        from .run.checkpoint import check_and_record
        from .report import ProgressPrinter
        from .run.stream import run_pipeline
        from .run.writer_lock import checkpoint_lock

        config, printer = self.config, ProgressPrinter(out, metrics_json)
        with checkpoint_lock(config, printer.note):
            spark = spark or self.local_session()
            for note in check_and_record(spark, config, self.file):
                printer.note(note)
            handler, start_config = self._handler(spark, printer, hooks)
            stopped_by = run_pipeline(spark, start_config, handler, as_trigger(trigger, config))
        return RunResult(printer.reports, stopped_by)

    # --- a service on the caller's session ---------------------------------------------------

    def start(self, spark: "SparkSession | None" = None, trigger: str | Trigger | None = None,
              metrics_json: str | None = None, out: IO[str] | None = None,
              hooks: "Hooks | None" = None) -> "StreamingQuery":
        """Start the query and return it (`query.stop()`, `query.awaitTermination()`). The
        locks are held, and the routes' producers open, until the query ends. Unlike `run`, a
        Kafka outage fails the query (restart it, or use `run`), and signals are the caller's
        to handle."""
        from .run.checkpoint import check_and_record
        from .report import ProgressPrinter
        from .run.stream import release_when_done, start_query
        from .run.writer_lock import checkpoint_lock, lock_tables

        config, printer = self.config, ProgressPrinter(out, metrics_json)
        locks = ExitStack()
        try:
            locks.enter_context(checkpoint_lock(config, printer.note))
            spark = spark or self.local_session()
            for note in check_and_record(spark, config, self.file):
                printer.note(note)
            handler, start_config = self._handler(spark, printer, hooks)
            handler.prepare()
            locks.enter_context(lock_tables(self.config))
            locks.callback(handler.close)   # first of all when the query ends: a route's producer
            query = start_query(spark, start_config, handler, as_trigger(trigger, config))
        except BaseException:
            locks.close()
            raise
        release_when_done(spark, query, locks)
        return query

    # --- a stream the caller owns --------------------------------------------------------------

    @property
    def foreach_batch(self) -> "UserStreamBatches":
        """A function for `writeStream.foreachBatch` over the rows of Spark's Kafka source as
        they come (`headers` optional). What such a stream gives up: the writer locks (run one
        writer per pipeline yourself), lost-checkpoint recovery, and restarts on Kafka outages;
        the guard reads its positions from the tables at every batch instead of keeping them.
        Delta's idempotent appends are keyed by the pipeline name and the stream's batch id: a
        new checkpoint for the same tables needs a new pipeline name."""
        if self._user_stream is None:
            self._user_stream = UserStreamBatches(self.config)
        return self._user_stream

    def table(self, name: str, spark: "SparkSession | None" = None) -> "DataFrame":
        """A table's current rows, without cdc-delta's own columns."""
        from .lake.tables import DeltaLocation
        from .infra.names import col

        spec = next((t for t in self.config.tables if t.name == name), None)
        if spec is None:
            raise ConfigError(self.file, "tables", f"no table named {name!r}", name, [t.name for t in self.config.tables])
        df = DeltaLocation.of(self.config.target_of(spec)).read(spark or self.local_session())
        return df.select(*[col(c) for c in df.columns if not is_own_column(c)])

    def local_session(self) -> "SparkSession":
        """cdc-delta's own session (local master, Delta and Kafka jars, local defaults); under
        spark-submit the submitted settings win."""
        from .infra.session import get_spark

        return get_spark(self.config.pipeline, self.config.spark, self.config.storage_schemes)

    def _handler(self, spark: "SparkSession", printer: Callable,
                 hooks: "Hooks | None") -> tuple["BatchHandler", PipelineConfig]:
        from .batch.runner import BatchHandler
        from .run.recovery import resume_after_lost_checkpoint

        handler = BatchHandler(spark, self.config, printer, hooks)
        start_config, handler.app_id, resume = resume_after_lost_checkpoint(spark, self.config, handler.locations)
        if resume:
            printer.note(resume.describe(self.config.pipeline))
        return handler, start_config


class UserStreamBatches:
    """`pipeline.foreach_batch`: one batch of a stream the caller owns, checked before any
    Spark work, then through the same batch handler as `run`."""

    def __init__(self, config: PipelineConfig) -> None:
        self.config = config
        self.handler: BatchHandler | None = None

    def __call__(self, batch: "DataFrame", batch_id: int) -> None:
        missing = [c for c in KAFKA_SOURCE_COLUMNS if c not in batch.columns]
        if missing:
            raise SourceColumnsMissing(self.config.pipeline, missing, list(batch.columns), list(KAFKA_SOURCE_COLUMNS))
        from .run.sources import kafka_records

        self._handler(batch.sparkSession)(kafka_records(batch), batch_id)

    def _handler(self, spark: "SparkSession") -> "BatchHandler":
        if self.handler is None:
            from .batch.runner import BatchHandler
            from .report import ProgressPrinter

            # no writer lock: the sinks read the guard's positions again every batch
            handler = BatchHandler(spark, self.config, ProgressPrinter(), locked=False)
            handler.prepare()
            self.handler = handler
        return self.handler


def as_trigger(value: str | Trigger | None, config: PipelineConfig) -> Trigger:
    """A trigger from its CLI spelling ('available-now', 'once', '10 seconds'), a Trigger, or
    None for the config's."""
    if value is None:
        return config.trigger
    if isinstance(value, Trigger):
        return value
    t = value.strip().lower().replace("-", "_")
    if t in ("available_now", "once"):
        return Trigger(kind=t)
    try:
        return Trigger(kind="processing_time", interval=value)
    except ValueError:
        raise ConfigError("--trigger", "--trigger", "not a trigger", value,
                          ["available-now", "once", "an interval like '10 seconds'"]) from None
