"""The benchmarks' JVM profile (benchmarks/jvm_profile.py): a real JVM recorded the way a run is,
its samples kept only inside warm batches, split between tasks and the driver's own threads by
thread name, and put in buckets by their frames."""

from __future__ import annotations

import os
import shutil
import subprocess
import time

import pytest

from benchmarks.jvm_profile import OTHER, TASK_THREAD, bucket_of, profile_run, recording_env, side_by_side

pytestmark = pytest.mark.skipif(shutil.which("jfr") is None, reason="needs the JDK's jfr tool")

# two threads busy for the same three seconds: one named as Spark names its task threads, one not
SPIN = """
public class Spin {
    static volatile long sink;
    static void spin(long until) { while (System.currentTimeMillis() < until) sink += Math.sqrt(sink + 1); }
    public static void main(String[] args) throws Exception {
        long until = System.currentTimeMillis() + 3000;
        Thread task = new Thread(() -> spin(until), "%s 0.0 in stage 1.0 (TID 7)");
        task.start();
        spin(until);
        task.join();
    }
}
""" % TASK_THREAD


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    """A recording of the program and the second it spun in (epoch seconds)."""
    work = tmp_path_factory.mktemp("jfr")
    (work / "Spin.java").write_text(SPIN)
    started = time.time()
    subprocess.run(["java", "Spin.java"], cwd=work, check=True, capture_output=True,
                   env={**os.environ, **recording_env(work / "jfr")})
    return work / "jfr", started


def batches(*windows: tuple[float, float]) -> list[dict]:
    """Batch lines as a run writes them; the first is the cold batch, which the profile leaves out."""
    return [{"seconds": b - a, "finished_at": b} for a, b in [(0.0, 1.0), *windows]]


def test_samples_of_warm_batches_split_by_thread(recorded):
    folder, started = recorded
    found = profile_run(folder, batches((started - 60, started + 120)))
    assert found.batches == 1
    # JFR samples a thread only while it runs on a core: beside the other test worker the spinning
    # threads got as few as 14 samples of a second and a half, so ask for a few on each side
    assert sum(found.tasks.values()) >= 5 and sum(found.driver.values()) >= 5
    assert found.methods.most_common(1)[0][0] in ("Spin.spin", "java/lang/Math.sqrt", "java/lang/System.currentTimeMillis")


def test_samples_outside_warm_batches_left_out(recorded):
    folder, started = recorded
    found = profile_run(folder, batches((started - 60, started - 30)))
    assert sum(found.tasks.values()) == 0 and sum(found.driver.values()) == 0


def test_a_sample_goes_to_the_first_bucket_its_frames_match():
    parse = ["com/fasterxml/jackson/core/json/ReaderBasedJsonParser.nextToken",
             "org/apache/spark/sql/catalyst/json/JacksonParser.parse",
             "org/apache/spark/sql/execution/columnar/CachedRDDBuilder$$anon$2.next"]
    assert bucket_of(parse) == "parsing JSON (from_json)"
    assert bucket_of(["org/apache/spark/sql/execution/columnar/NullableColumnBuilder.appendFrom", *parse[2:]]) \
        == "cached frames: their columns built, read"
    assert bucket_of(parse[2:]) == OTHER
    assert bucket_of(["java/lang/Thread.run"]) == OTHER


def test_side_by_side_per_warm_batch(recorded):
    folder, started = recorded
    found = profile_run(folder, batches((started - 60, started + 60), (started + 60, started + 120)))
    table = side_by_side({"a": found, "b": found})
    tasks_line = next(line for line in table.splitlines() if line.startswith("tasks, in all"))
    per_batch = sum(found.tasks.values()) * 0.010 / 2
    assert tasks_line.split()[-2:] == [f"{per_batch:.2f}"] * 2
