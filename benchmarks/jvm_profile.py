"""Where an engine's JVM spends its CPU in warm batches: Java Flight Recorder's execution
samples of the driver JVM (tasks run there in local mode), kept when they fall in a warm batch
(not the first), put in one bucket each by what the sampled stack is doing, and its busiest
methods. The event log says how long jobs and stages took; this says what their code did.

    python -m benchmarks.ab --jvm-profile … recipe=seed now=.    (a table per variant and side by side)
    python -m benchmarks.jvm_profile RECORDINGS_DIR BATCHES_JSONL   (one run again)

A run records with `JAVA_TOOL_OPTIONS=-XX:StartFlightRecording=…` (`recording_env`), which every
JVM of the run picks up; the largest recording is the driver's. A sample is taken every 10 ms of
a thread running Java code, so samples x 10 ms estimates CPU seconds (native code and garbage
collection are not sampled).
"""

from __future__ import annotations

import argparse
import json
import subprocess
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

SAMPLE_SECONDS = 0.010      # jdk.ExecutionSample's period for Java code in the `profile` settings
STACK_DEPTH = 512           # frames recorded per sample (JFR's default, 64, cuts Catalyst's deep stacks)
TASK_THREAD = "Executor task launch worker"
# a sample goes to the first bucket any of its frames matches ("package/Class.method")
BUCKETS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("compiling generated code (Janino)", ("org/codehaus/janino", "org/codehaus/commons")),
    ("reading Kafka", ("kafka010/", "org/apache/kafka/")),
    ("parsing JSON (from_json)", ("json/JacksonParser", "JsonToStructs")),
    ("parsing JSON (parse_json, variants)", ("VariantExpressionEvalUtils", "variant/VariantBuilder")),
    ("reading variants (variant_get, casts)", ("variant/VariantGet", "types/variant/Variant.")),
    ("writing JSON (to_json)", ("StructsToJson", "JacksonGenerator")),
    ("writing Parquet", ("parquet/hadoop/ParquetRecordWriter", "ParquetOutputWriter", "parquet/column/impl")),
    ("reading Parquet", ("VectorizedParquetRecordReader", "ParquetFileFormat", "parquet/hadoop/ParquetFileReader")),
    ("shuffle write", ("shuffle/sort/", "ShuffleExternalSorter", "ShuffleWriteProcessor")),
    ("shuffle read", ("ShuffleBlockFetcherIterator", "BlockStoreShuffleReader")),
    ("sorting", ("UnsafeExternalSorter", "UnsafeInMemorySorter", "execution/SortExec", "UnsafeExternalRowSorter")),
    ("hash aggregates and joins", ("aggregate/", "joins/")),
    ("cached frames: their columns built, read", ("ColumnBuilder", "columnar/compression/", "columnar/ColumnType",
                                                 "Stats.gatherStats", "ColumnAccessor", "InMemoryTableScan")),
    ("Delta (log, snapshot, commit)", ("sql/delta/Snapshot", "sql/delta/DeltaLog", "sql/delta/Optimistic",
                                       "sql/delta/commands/", "sql/delta/actions/", "sql/delta/stats/",
                                       "sql/delta/util/", "io/delta/storage/")),
    ("planning queries", ("catalyst/analysis/", "catalyst/optimizer/", "catalyst/rules/", "QueryExecution",
                          "SparkStrategies", "catalyst/trees/", "catalyst/planning/")),
    ("other generated code (expressions)", ("expressions/GeneratedClass", "expressions/codegen/", "catalyst/expressions/")),
    ("Py4J (calls from Python)", ("py4j/",)),
    ("scheduling, RPC, event log", ("scheduler/DAGScheduler", "scheduler/TaskSchedulerImpl", "scheduler/TaskSetManager",
                                    "scheduler/AsyncEventQueue", "spark/rpc/", "io/netty/", "util/JsonProtocol",
                                    "spark/status/")),
)
OTHER = "other"


@dataclass
class Profile:
    """Samples of a run's warm batches: per bucket, for tasks and for the driver's own threads,
    and the busiest methods of tasks (the top frame of their samples)."""

    tasks: Counter = field(default_factory=Counter)
    driver: Counter = field(default_factory=Counter)
    methods: Counter = field(default_factory=Counter)
    batches: int = 0

    def seconds(self, counter: Counter, bucket: str) -> float:
        return counter[bucket] * SAMPLE_SECONDS / max(self.batches, 1)


def recording_env(folder: Path) -> dict[str, str]:
    """The environment that makes every JVM of a run record into `folder` (one file per JVM)."""
    folder.mkdir(parents=True, exist_ok=True)
    return {"JAVA_TOOL_OPTIONS": f"-XX:FlightRecorderOptions=stackdepth={STACK_DEPTH} "
                                 f"-XX:StartFlightRecording=filename={folder}/,settings=profile"}


def profile_run(folder: Path, batches: list[dict]) -> Profile:
    """The driver's samples (the largest recording in `folder`) in the warm batches of
    `batches` (lines with `seconds` and `finished_at`, the first batch left out)."""
    warm = [(b["finished_at"] - b["seconds"], b["finished_at"]) for b in batches[1:]]
    recording = max(folder.glob("*.jfr"), key=lambda p: p.stat().st_size)
    found = Profile(batches=len(warm))
    for thread, frames, at in _samples(recording):
        if not any(a <= at <= b for a, b in warm):
            continue
        tasks = thread.startswith(TASK_THREAD)
        (found.tasks if tasks else found.driver)[bucket_of(frames)] += 1
        if tasks and frames:
            found.methods[frames[0]] += 1
    return found


def bucket_of(frames: list[str]) -> str:
    for name, marks in BUCKETS:
        if any(mark in frame for frame in frames for mark in marks):
            return name
    return OTHER


def _samples(recording: Path):
    """(thread name, frames innermost first as "package/Class.method", epoch seconds) per sample."""
    printed = subprocess.run(["jfr", "print", "--json", "--stack-depth", str(STACK_DEPTH), "--events",
                              "jdk.ExecutionSample", str(recording)], capture_output=True, text=True, check=True)
    for event in json.loads(printed.stdout)["recording"]["events"]:
        values = event["values"]
        stack = values["stackTrace"]["frames"] if values["stackTrace"] else []
        frames = [f"{f['method']['type']['name']}.{f['method']['name']}" for f in stack]
        at = datetime.fromisoformat(values["startTime"].replace("Z", "+00:00")).timestamp()
        yield values["sampledThread"]["javaName"] or "", frames, at


def side_by_side(profiles: dict[str, Profile], top: int = 12) -> str:
    """Sampled CPU seconds per warm batch, by bucket, tasks then the driver's own threads, one
    column per run; then each run's busiest methods in tasks."""
    names = list(profiles)
    lines = [f"{'sampled CPU s per warm batch':44}" + "".join(f"{n:>12}" for n in names)]
    for part in ("tasks", "driver"):
        counters = {n: getattr(p, part) for n, p in profiles.items()}
        buckets = sorted({b for c in counters.values() for b in c}, key=lambda b: -max(c[b] for c in counters.values()))
        total = "".join(f"{sum(c.values()) * SAMPLE_SECONDS / max(profiles[n].batches, 1):12.2f}"
                        for n, c in counters.items())
        lines.append(f"{part + ', in all':44}{total}")
        for bucket in buckets:
            lines.append(f"  {bucket:42}" + "".join(f"{profiles[n].seconds(counters[n], bucket):12.2f}" for n in names))
    for name, found in profiles.items():
        lines.append(f"{name}: busiest methods in tasks (share of task samples)")
        all_samples = sum(found.tasks.values()) or 1
        lines += [f"  {count / all_samples:6.1%} {method}" for method, count in found.methods.most_common(top)]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("recordings", type=Path, help="the folder a run recorded into")
    ap.add_argument("batches", type=Path, help="the run's batches: metrics.jsonl or times.jsonl")
    args = ap.parse_args(argv)
    batches = [json.loads(line) for line in args.batches.read_text().splitlines() if line.strip()]
    print(side_by_side({"run": profile_run(args.recordings, batches)}))


if __name__ == "__main__":
    main()
