"""The benchmarks' accounting of a batch from Spark's event log (benchmarks/event_log.py): jobs,
tasks, the seconds some job ran, and the task time, CPU and GC summed over the batch's tasks."""

from __future__ import annotations

import json

import pytest

from benchmarks.event_log import account, read_jobs


def job(job_id: int, stages: list[int], start: float, end: float, description: str) -> list[dict]:
    return [
        {"Event": "SparkListenerJobStart", "Job ID": job_id, "Submission Time": start * 1000, "Stage IDs": stages,
         "Stage Infos": [{"Stage ID": s, "Stage Name": f"stage {s}"} for s in stages],
         "Properties": {"spark.job.description": description}},
        *[{"Event": "SparkListenerStageCompleted", "Stage Info": {"Stage ID": s, "Number of Tasks": 2}}
          for s in stages],
        {"Event": "SparkListenerJobEnd", "Job ID": job_id, "Completion Time": end * 1000},
    ]


def task(stage: int, run_ms: int, cpu_ms: int, gc_ms: int, records: int = 0) -> dict:
    return {"Event": "SparkListenerTaskEnd", "Stage ID": stage,
            "Task Metrics": {"Executor Run Time": run_ms, "Executor CPU Time": cpu_ms * 1_000_000,
                             "JVM GC Time": gc_ms, "Input Metrics": {"Records Read": records}}}


@pytest.fixture
def events(tmp_path):
    lines = [
        task(0, 500, 300, 100, 40), task(0, 700, 400, 100, 60),  # job 0, in the batch
        *job(0, [0], 100.0, 101.0, "batch = 3: decode"),
        task(1, 200, 100, 0),                                  # job 1, in the batch; its stage 2 reports no task
        *job(1, [1, 2], 101.5, 102.0, "batch = 3 - MERGE operation"),
        task(3, 9000, 9000, 9000),                             # job 2, after the batch
        *job(2, [3], 110.0, 111.0, "later"),
    ]
    folder = tmp_path / "events"
    folder.mkdir()
    (folder / "app-1").write_text("\n".join(json.dumps(e) for e in lines))
    return folder


def test_a_batch_gets_its_jobs_task_time_cpu_and_gc(events):
    jobs = read_jobs(events)
    assert [j.name for j in jobs] == ["decode", "MERGE operation", "later"]
    assert (jobs[0].task.run, jobs[0].task.cpu, jobs[0].task.gc) == pytest.approx((1.2, 0.7, 0.2))
    assert [j.records_read for j in jobs] == [100, 0, 0]

    acc = account(jobs, [{"seconds": 4.0, "finished_at": 103.0}])
    assert (acc.jobs_per_batch, acc.jobs_between_batches) == (2, 1)
    assert acc.job_seconds_per_batch == pytest.approx(1.5)
    assert acc.driver_seconds_per_batch == pytest.approx(2.5)
    assert acc.task_seconds_per_batch == pytest.approx(1.4)
    assert acc.task_cpu_seconds_per_batch == pytest.approx(0.8)
    assert acc.task_gc_seconds_per_batch == pytest.approx(0.2)
