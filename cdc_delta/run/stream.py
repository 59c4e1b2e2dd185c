"""The query: a source kind's stream into the batch handler, triggers, the checkpoint,
reconnects and a graceful stop."""

from __future__ import annotations

import signal
import threading

from contextlib import ExitStack

from pyspark.errors import StreamingQueryException
from pyspark.sql import SparkSession
from pyspark.sql.streaming import StreamingQuery, StreamingQueryListener

from ..batch.runner import BatchHandler
from ..config.models import PipelineConfig, Trigger, duration_ms
from ..errors import PipelineFailed, one_line
from ..infra.storage import absolute
from .sources import source_of
from .writer_lock import lock_tables

RECONNECT_PAUSES_S = (5, 10, 20, 40, 60)
KAFKA_UNREACHABLE = ("Timed out waiting for a node assignment", "org.apache.kafka.common.errors.TimeoutException",
                     "org.apache.kafka.common.errors.DisconnectException", "Connection refused",
                     # a subscribed topic just created (by a connector), whose partition the broker
                     # does not host yet when the offsets of the next batch are asked
                     "org.apache.kafka.common.errors.UnknownTopicOrPartitionException")


def run_pipeline(spark: SparkSession, config: PipelineConfig, handler: BatchHandler,
                 trigger: Trigger | None = None) -> str | None:
    """Start the query and wait for it; turn a failure into one of our errors. When the Kafka
    brokers become unreachable, restart the query from its checkpoint after a pause (nothing
    is lost or applied twice: the checkpoint and the tables' positions say where to go on).

    Returns the name of the signal that stopped it, if one did."""
    handler.prepare()
    tables = lock_tables(config)
    stopper = GracefulStop(handler)
    attempts = source_of(config).reconnect_attempts
    failed_in_a_row = 0
    try:
        while True:
            done_before = handler.batches_done
            handler.crash = None
            try:
                _run_query(spark, config, handler, trigger, stopper)
                return stopper.signal_name
            except StreamingQueryException as exc:
                if handler.failure is not None:
                    raise handler.failure from None
                if stopper.signal_name:
                    return stopper.signal_name
                failed_in_a_row = 1 if handler.batches_done > done_before else failed_in_a_row + 1
                if not _kafka_unreachable(str(exc)) or failed_in_a_row > attempts:
                    cause = one_line(handler.crash) if handler.crash is not None else failure_cause(exc)[:400]
                    raise PipelineFailed(f"pipeline {config.pipeline} stopped: {cause} "
                                         "(run with --debug for the trace)") from exc
                pause = RECONNECT_PAUSES_S[min(failed_in_a_row, len(RECONNECT_PAUSES_S)) - 1]
                print(f"warning: pipeline {config.pipeline}: Kafka unreachable ({failure_cause(exc)[:200]}); "
                      f"restarting from the checkpoint in {pause} s (attempt {failed_in_a_row} of {attempts})",
                      flush=True)
                if stopper.wait(pause):
                    return stopper.signal_name
    finally:
        stopper.restore()
        tables.close()
        handler.close()


def _run_query(spark: SparkSession, config: PipelineConfig, handler: BatchHandler,
               trigger: Trigger | None, stopper: "GracefulStop") -> None:
    stopper.watch(start_query(spark, config, handler, trigger))
    try:
        stopper.query.awaitTermination()
    finally:
        stopper.watch(None)


def start_query(spark: SparkSession, config: PipelineConfig, handler: BatchHandler,
                trigger: Trigger | None) -> StreamingQuery:
    source = source_of(config)
    writer = (source.open(spark).writeStream
              .foreachBatch(lambda df, batch_id: handler(source.raw(df), batch_id))
              .option("checkpointLocation", absolute(config.checkpoint_path))
              .queryName(config.pipeline))
    return _with_trigger(writer, trigger or config.trigger).start()


def release_when_done(spark: SparkSession, query: StreamingQuery, held: ExitStack) -> None:
    """Close `held` (the run's handler, then its locks) when `query` ends, however it ends."""

    class Release(StreamingQueryListener):
        def onQueryStarted(self, event) -> None:
            pass

        def onQueryProgress(self, event) -> None:
            pass

        def onQueryIdle(self, event) -> None:
            pass

        def onQueryTerminated(self, event) -> None:
            if str(event.id) == str(query.id):
                held.close()
                spark.streams.removeListener(self)

    spark.streams.addListener(Release())
    if not query.isActive:      # it may have ended before the listener was in place
        held.close()


def failure_cause(exc: Exception) -> str:
    """The first line of a query's failure, without Spark's `[STREAM_FAILED] Query [id = …,
    runId = …] terminated with exception:` prefix."""
    text = str(exc).strip()
    first = text.splitlines()[0] if text else type(exc).__name__
    return first.partition("terminated with exception: ")[2] or first


def _kafka_unreachable(message: str) -> bool:
    """A failure of the Kafka clients to reach the brokers, or a partition not hosted yet (not
    of the data or of our code)."""
    return any(sign in message for sign in KAFKA_UNREACHABLE)


def _with_trigger(writer, trigger: Trigger):
    if trigger.kind == "available_now":
        return writer.trigger(availableNow=True)
    if trigger.kind == "once":
        return writer.trigger(once=True)
    return writer.trigger(processingTime=f"{duration_ms(trigger.interval or '')} milliseconds")


class GracefulStop:
    """SIGTERM/SIGINT: let the running batch finish and commit, then stop the query (or end a
    pause between queries)."""

    def __init__(self, handler: BatchHandler) -> None:
        self.query, self.handler = None, handler
        self.signal_name: str | None = None
        self._signalled = threading.Event()
        self.previous = {}
        if threading.current_thread() is threading.main_thread():
            self.previous = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGINT)}
            for s in self.previous:
                signal.signal(s, self._on_signal)
        handler.after_batch = self._after_batch

    def _on_signal(self, signum, _frame) -> None:
        self.signal_name = signal.Signals(signum).name
        self._signalled.set()
        busy = self.handler.busy
        print(f"received {self.signal_name}: stopping {'after the current batch' if busy else 'now'}", flush=True)
        if not busy:
            self._stop()

    def watch(self, query) -> None:
        self.query = query
        if query is not None and self.signal_name:    # signalled while it was starting
            self._stop()

    def wait(self, seconds: float) -> bool:
        """Pause; True when a signal ended the pause."""
        return self._signalled.wait(seconds)

    def _after_batch(self) -> None:
        if self.signal_name:
            self._stop()

    def _stop(self) -> None:
        # never from the batch's own thread: stop() waits for that thread to end
        if self.query is not None:
            threading.Thread(target=self.query.stop, daemon=True).start()

    def restore(self) -> None:
        for s, h in self.previous.items():
            signal.signal(s, h)
