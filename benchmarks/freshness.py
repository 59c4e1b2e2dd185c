"""Freshness (issue 17's target 6): each engine as a service with a processing-time trigger while
events arrive at a steady rate; seconds from an event's source time (its ts_ms, the moment it
was sent) to the end of the batch that made it visible. cdc-delta and the seed recipe one after
the other, each on its own topic with the same stream, into a table seeded with the same rows.

    python -m benchmarks.freshness --rate 2000 --trigger 5 --seconds 120 --rows 100000

Each engine first gets 1,000 events and the time to apply them (its cold batch is not counted),
then `rate` events per second for `seconds`, and is stopped once it has read them all. Starts
its own broker (BENCH_KAFKA_PORT, default 19992) unless given --bootstrap.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable

import yaml

from cdc_delta.infra.kafka_io import create_topics, produce

from .alone import alone
from .broker import PARTITIONS, kafka
from .event_log import event_log_env
from .measure import REPO, freshness, jsonl, percentile
from .stream import Stream
from .tables import pipeline_config, seed_fresh

PY = sys.executable
WARM_EVENTS = 1000
ENGINES = ("cdc_delta", "seed_recipe")


def measure(work: Path, bootstrap: str, rows: int, rate: int, trigger_s: int, seconds: int) -> dict:
    """Both engines at `rate` events/s with a `trigger_s`-second trigger; their figures."""
    work = seed_fresh(work / f"freshness-{rate}-{trigger_s}s", rows)
    engines = {name: _one_engine(name, work, bootstrap, rows, rate, trigger_s, seconds) for name in ENGINES}
    return {"rows": rows, "rate": rate, "trigger_s": trigger_s, "seconds": seconds, "engines": engines}


def _one_engine(name: str, work: Path, bootstrap: str, rows: int, rate: int, trigger_s: int, seconds: int) -> dict:
    topic = f"bench.freshness.{name}.{int(time.time())}"
    create_topics(bootstrap, {topic: PARTITIONS})
    stream = Stream(rows)
    service, batches = SERVICES[name](work, topic, bootstrap, f"{trigger_s} seconds", rate * trigger_s * 20)
    try:
        warm = produce(bootstrap, topic, stream.events(WARM_EVENTS))
        _wait(name, lambda: _records_in(batches()) >= warm, service, 600)
        produced = _paced(bootstrap, topic, stream, rate, seconds)
        _wait(name, lambda: _records_in(batches()) >= warm + len(produced), service, 1800)
    finally:
        service.send_signal(signal.SIGTERM)
        service.wait(300)
    changes = [p[:3] for p in produced if p[3]]
    lags = freshness(changes, batches(), topic)
    return {"events": len(changes), "achieved_rate": round(len(changes) / seconds),
            "p50_s": round(percentile(lags, 0.5), 2), "p95_s": round(percentile(lags, 0.95), 2),
            "max_s": round(max(lags, default=float("nan")), 2), "batches": len(batches())}


def _cdc_delta(work: Path, topic: str, bootstrap: str, trigger: str, max_offsets: int
               ) -> tuple[subprocess.Popen, Callable[[], list[dict]]]:
    """cdc-delta's service; its batches from its metrics lines."""
    config, metrics = work / "cdc_delta.yaml", work / "cdc_delta.jsonl"
    trigger_config = {"kind": "processing_time", "interval": trigger}
    config.write_text(yaml.safe_dump(pipeline_config(work, topic, bootstrap, max_offsets, trigger_config)))
    with open(work / "cdc_delta.log", "w") as log:
        service = subprocess.Popen([PY, "-m", "cdc_delta", "run", "--config", str(config), "--metrics-json",
                                    str(metrics)], cwd=REPO, stdout=log, stderr=subprocess.STDOUT,
                                   env=_with_event_log(work / "cdc_delta.events"))
    return service, lambda: jsonl(metrics)


def _seed_recipe(work: Path, topic: str, bootstrap: str, trigger: str, max_offsets: int
                 ) -> tuple[subprocess.Popen, Callable[[], list[dict]]]:
    """The seed recipe's service; its batches: the end of each batch's foreachBatch, with the
    records and end offsets of its query progress (read without an extra job)."""
    times, progress = work / "seed_recipe.jsonl", work / "seed_recipe.progress.jsonl"
    with open(work / "seed_recipe.log", "w") as log:
        service = subprocess.Popen([PY, "-m", "benchmarks.seed_recipe", bootstrap, topic, str(work / "seed_recipe"),
                                    str(work / "seed_recipe_ck"), str(max_offsets), "0", str(times), trigger,
                                    str(progress)], cwd=REPO, stdout=log, stderr=subprocess.STDOUT,
                                   env=_with_event_log(work / "seed_recipe.events"))

    def batches() -> list[dict]:
        ended = {b["batch_id"]: b["finished_at"] for b in jsonl(times)}
        return [{**p, "finished_at": ended[p["batch_id"]]} for p in jsonl(progress) if p["batch_id"] in ended]

    return service, batches


def _with_event_log(folder: Path) -> dict[str, str]:
    """The service's environment, writing Spark's event log into `folder` (for
    `python -m benchmarks.event_log`)."""
    return {**os.environ, **event_log_env(folder)}


SERVICES = {"cdc_delta": _cdc_delta, "seed_recipe": _seed_recipe}


def _paced(bootstrap: str, topic: str, stream: Stream, rate: int, seconds: int) -> list[tuple]:
    """Produce `rate` events per second for `seconds`, ts_ms = the moment of sending; returns
    (partition, offset, ts seconds, is_change) per record as acknowledged."""
    from confluent_kafka import Producer
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5, "log_level": "3"})
    acked: list[tuple] = []

    def delivered(err, msg):
        if err is None:
            acked.append((msg.partition(), msg.offset(), msg.timestamp()[1] / 1000, msg.value() is not None))

    started = time.time()
    sent = 0
    while (now := time.time()) < started + seconds:
        due = int((now - started) * rate)
        for key, value in stream.events(max(0, due - sent), ts_ms=int(now * 1000)):
            producer.produce(topic, key=key, value=value, on_delivery=delivered, timestamp=int(now * 1000))
        sent = max(sent, due)
        producer.poll(0)
        time.sleep(0.02)
    producer.flush(60)
    return acked


def _records_in(batches: list[dict]) -> int:
    return sum(b["records_in"] for b in batches)


def _wait(engine: str, condition: Callable[[], bool], process: subprocess.Popen, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if process.poll() is not None:
            raise SystemExit(f"{engine} stopped (exit {process.returncode}) before catching up")
        if time.monotonic() > deadline:
            raise SystemExit(f"{engine} did not catch up in {timeout:.0f} s")
        time.sleep(0.5)


def describe(result: dict) -> list[str]:
    """One line per engine."""
    return [f"{name}: {e['events']:,} events ({e['achieved_rate']:,}/s produced), p50 {e['p50_s']} s, "
            f"p95 {e['p95_s']} s, max {e['max_s']} s, {e['batches']} batches"
            for name, e in result["engines"].items()]


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rate", type=int, default=2000, help="events per second")
    ap.add_argument("--trigger", type=int, default=5, help="seconds between batches")
    ap.add_argument("--seconds", type=int, default=120, help="how long events arrive")
    ap.add_argument("--rows", type=int, default=100_000, help="rows in the table before the stream")
    ap.add_argument("--work", type=Path, default=Path("/tmp/cdc-delta-bench"))
    ap.add_argument("--bootstrap", help="a running broker (else one of its own)")
    args = ap.parse_args(argv)
    alone()
    port = int(os.environ.get("BENCH_KAFKA_PORT", "19992"))
    if not args.bootstrap:
        kafka("reset", port)
        kafka("start", port)
    try:
        result = measure(args.work, args.bootstrap or f"127.0.0.1:{port}", args.rows, args.rate, args.trigger,
                         args.seconds)
    finally:
        if not args.bootstrap:
            kafka("stop", port)
    print("\n".join(describe(result)))
    print(json.dumps(result))


if __name__ == "__main__":
    main()
