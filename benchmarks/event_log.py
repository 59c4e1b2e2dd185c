"""Where a batch's seconds go, from Spark's event log: jobs, stages and tasks per batch, the
seconds in which some job ran, the rest (driver time: planning, Delta's log, commits, Python),
and the Delta commits per batch from the tables' logs. The same accounting for every Spark
engine of a run, so that they can be set side by side.

    python -m benchmarks.event_log EVENT_LOG_DIR BATCHES_JSONL [TABLES_DIR]   (per warm batch)
    python -m benchmarks.event_log --jobs EVENT_LOG_DIR BATCHES_JSONL BATCH_ID  (one batch's jobs)
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Iterable


def event_log_env(folder: Path) -> dict[str, str]:
    """Environment that makes a pyspark driver write its event log into `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    conf = {"spark.eventLog.enabled": "true", "spark.eventLog.dir": folder.resolve().as_uri(),
            "spark.eventLog.compress": "false", "spark.eventLog.rolling.enabled": "false"}
    return {"PYSPARK_SUBMIT_ARGS": " ".join(f"--conf {k}={v}" for k, v in conf.items()) + " pyspark-shell"}


@dataclass
class TaskTime:
    """Seconds summed over tasks: running (as the executor counts it), on the CPU, in the JVM's
    garbage collection (a pause of the local driver's JVM counts in each task it stopped)."""
    run: float = 0.0
    cpu: float = 0.0
    gc: float = 0.0

    @classmethod
    def total(cls, parts: Iterable[TaskTime]) -> TaskTime:
        parts = list(parts)
        return cls(sum(p.run for p in parts), sum(p.cpu for p in parts), sum(p.gc for p in parts))


@dataclass
class Job:
    started: float   # epoch seconds
    ended: float
    stages: int
    tasks: int
    name: str        # what it was for: Delta's description of it, else the action
    task: TaskTime   # its tasks' seconds
    records_read: int = 0   # by its tasks from their inputs: Kafka records, file rows, a cached frame's column batches


@dataclass
class Accounting:
    batches: int
    jobs_per_batch: float
    stages_per_batch: float
    tasks_per_batch: float
    job_seconds_per_batch: float      # some job running
    driver_seconds_per_batch: float   # the batch's seconds with no job running
    jobs_between_batches: int         # outside the counted batches: start-up, the stream's own, a cold batch
    task_seconds_per_batch: float = 0.0       # summed over tasks (two cores: up to twice the batch)
    task_cpu_seconds_per_batch: float = 0.0
    task_gc_seconds_per_batch: float = 0.0
    delta_commits_per_batch: float | None = None

    def as_dict(self) -> dict:
        return {k: (round(v, 3) if isinstance(v, float) else v) for k, v in asdict(self).items()}


def read_jobs(folder: Path) -> list[Job]:
    """Every job of the event logs in `folder` (one file per application)."""
    starts: dict[tuple[str, int], dict] = {}
    jobs: list[Job] = []
    stage_tasks: dict[tuple[str, int], int] = {}
    stage_time: dict[tuple[str, int], list[TaskTime]] = {}
    stage_records: dict[tuple[str, int], int] = {}
    for log in sorted(p for p in folder.rglob("*") if p.is_file() and not p.name.startswith((".", "appstatus"))):
        for line in log.open():
            event = json.loads(line)
            kind = event["Event"]
            if kind == "SparkListenerJobStart":
                starts[(log.name, event["Job ID"])] = event
            elif kind == "SparkListenerStageCompleted":
                info = event["Stage Info"]
                stage_tasks[(log.name, info["Stage ID"])] = info["Number of Tasks"]
            elif kind == "SparkListenerTaskEnd" and event.get("Task Metrics"):
                m = event["Task Metrics"]
                stage = (log.name, event["Stage ID"])
                stage_time.setdefault(stage, []).append(TaskTime(
                    m["Executor Run Time"] / 1e3, m["Executor CPU Time"] / 1e9, m["JVM GC Time"] / 1e3))
                stage_records[stage] = stage_records.get(stage, 0) + m.get("Input Metrics", {}).get("Records Read", 0)
            elif kind == "SparkListenerJobEnd":
                start = starts.pop((log.name, event["Job ID"]), None)
                if start is None:
                    continue
                ran = [s for s in start["Stage IDs"] if (log.name, s) in stage_tasks]
                task = TaskTime.total(t for s in ran for t in stage_time.get((log.name, s), []))
                jobs.append(Job(start["Submission Time"] / 1000, event["Completion Time"] / 1000, len(ran),
                                sum(stage_tasks[(log.name, s)] for s in ran), job_name(start), task,
                                sum(stage_records.get((log.name, s), 0) for s in ran)))
    return jobs


def job_name(start: dict) -> str:
    props = start.get("Properties", {})
    described = props.get("spark.job.description", "").splitlines()
    # a streaming batch's jobs: "batch = N: what" (or "batch = N - what", from Delta)
    said = re.sub(r"^batch = \d+(: | - )?", "", described[-1]) if described else ""
    if said:
        return said
    scope = json.loads(props.get("spark.rdd.scope", "{}")).get("name", "")
    return scope or min(start["Stage Infos"], key=lambda i: i["Stage ID"])["Stage Name"]


def busy_seconds(intervals: list[tuple[float, float]]) -> float:
    """Length of the union of the intervals."""
    total, end = 0.0, float("-inf")
    for a, b in sorted(intervals):
        if b > end:
            total += b - max(a, end)
            end = b
    return total


def account(jobs: list[Job], batches: list[dict]) -> Accounting:
    """Per batch (`batches`: lines with `seconds` and `finished_at`), the jobs that started in it."""
    windows = [(b["finished_at"] - b["seconds"], b["finished_at"]) for b in batches]
    n = max(1, len(windows))
    inside = [[j for j in jobs if a <= j.started <= b] for a, b in windows]
    busy = [busy_seconds([(max(j.started, a), min(j.ended, b)) for j in js]) for js, (a, b) in zip(inside, windows)]
    counted = sum(len(js) for js in inside)
    task = TaskTime.total(j.task for js in inside for j in js)
    return Accounting(
        batches=len(windows),
        jobs_per_batch=counted / n,
        stages_per_batch=sum(j.stages for js in inside for j in js) / n,
        tasks_per_batch=sum(j.tasks for js in inside for j in js) / n,
        job_seconds_per_batch=sum(busy) / n,
        driver_seconds_per_batch=sum(b - a - s for (a, b), s in zip(windows, busy)) / n,
        jobs_between_batches=len(jobs) - counted,
        task_seconds_per_batch=task.run / n, task_cpu_seconds_per_batch=task.cpu / n,
        task_gc_seconds_per_batch=task.gc / n,
    )


def delta_commits(folder: Path, since: float) -> int:
    """Commits written after `since` (epoch seconds) to the Delta tables under `folder`."""
    return sum(1 for log in folder.rglob("_delta_log") for f in log.glob("*.json") if f.stat().st_mtime >= since)


def account_run(events: Path, batches: list[dict], tables: Path | None = None) -> Accounting:
    """A run's warm batches (all but the first, which pays for the JVM's warm-up): its event
    log in `events`; its Delta commits from the tables under `tables`, when given."""
    warm = batches[1:] or batches
    acc = account(read_jobs(events), warm)
    if tables is not None and warm:
        acc.delta_commits_per_batch = delta_commits(tables, warm[0]["finished_at"] - warm[0]["seconds"]) / len(warm)
    return acc


def list_jobs(events: Path, batch: dict) -> None:
    """One batch's jobs in the order they started: offset from the batch's start, seconds,
    tasks, the records they read from their inputs (not from shuffles) and what each was for."""
    start = batch["finished_at"] - batch["seconds"]
    for j in sorted((j for j in read_jobs(events) if start <= j.started <= batch["finished_at"]),
                    key=lambda j: j.started):
        print(f"{j.started - start:7.2f} s  {j.ended - j.started:6.2f} s  {j.tasks:4d} tasks  "
              f"task {j.task.run:5.2f} s, cpu {j.task.cpu:5.2f} s, gc {j.task.gc:4.2f} s  "
              f"{j.records_read:8d} in  {j.name[:100]}")


def main(argv: list[str]) -> None:
    if argv[0] == "--jobs":
        batches = {b["batch_id"]: b for b in map(json.loads, Path(argv[2]).read_text().splitlines())}
        return list_jobs(Path(argv[1]), batches[int(argv[3])])
    batches = [json.loads(line) for line in Path(argv[1]).read_text().splitlines()]
    print(json.dumps(account_run(Path(argv[0]), batches, Path(argv[2]) if len(argv) > 2 else None).as_dict(), indent=1))

if __name__ == "__main__":
    main(sys.argv[1:])
