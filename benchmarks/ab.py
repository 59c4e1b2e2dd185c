"""Seconds per batch of cdc-delta variants on one stream, run in turns: the A/B used to judge
an optimisation (the full profile in run.py is too slow and too noisy for that).

    python -m benchmarks.ab --rows 100000 --events 50000 --batch 10000 --reps 2 \\
        before=/tmp/wt-before now=. now4=.:spark.sql.shuffle.partitions=4

A variant is NAME=CHECKOUT[:KEY=VALUE,...]: a checkout of this repository (`git worktree add
/tmp/wt-before HEAD~1`) to run cdc-delta from, and Spark settings for its run; a key that starts
with `delta.` is a table property, set on the variant's copy of the seeded table before its run
(`dv=.:delta.enableDeletionVectors=true`), and one that starts with `kafka.` a setting of the
pipeline's Kafka reader (`source.options`: `wait=.:kafka.fetch.max.wait.ms=10`). The stream is
produced once; each run starts from a copy of the same seeded table, and the variants take turns
so that drift of the machine touches them alike. Reported: the first (cold) batch, the mean of
the other (warm) batches, and each variant's warm mean over the first variant's; with
`--settled K`, the same of each run's last K batches too. `recipe=seed` runs the seed recipe
(benchmarks/seed_recipe.py) as one of the variants. Each run's Spark event log gives its jobs,
stages and driver seconds per batch, and its tables' logs its Delta commits per batch
(benchmarks/event_log.py).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import time
from pathlib import Path

import yaml

from cdc_delta.infra.kafka_io import create_topics, produce

from .alone import alone
from .broker import PARTITIONS, kafka
from .event_log import Accounting, account_run, event_log_env
from .jvm_profile import Profile, profile_run, recording_env, side_by_side
from .measure import Run, jsonl, measured
from .stream import PROFILES, TABLE, Stream
from .tables import pipeline_config, seeded


RECIPE = Path("seed")   # the checkout of a variant that runs the seed recipe instead
TABLE_PROPERTY = "delta."   # a variant's setting that is a property of its table, not of Spark
READER_OPTION = "kafka."    # ... or of the pipeline's Kafka reader


def variant(text: str) -> tuple[str, Path, dict[str, str]]:
    name, _, rest = text.partition("=")
    checkout, _, settings = rest.partition(":")
    if not name or not checkout:
        raise argparse.ArgumentTypeError(f"variant '{text}': expected NAME=CHECKOUT[:KEY=VALUE,...] or NAME=seed")
    if checkout == str(RECIPE):
        return name, RECIPE, {}
    return name, Path(checkout).resolve(), dict(kv.split("=", 1) for kv in settings.split(",") if kv)


def run_once(work: Path, seed: Path, topic: str, bootstrap: str, batch: int, checkout: Path,
             spark: dict[str, str], jvm_profile: bool = False) -> tuple[Run, list[dict], Accounting, Profile | None]:
    """One run over the whole topic: cdc-delta from `checkout`, or the seed recipe; the run,
    its batches (seconds, finished_at), the accounting of its event log and, when asked, the
    profile of its JVM in warm batches."""
    shutil.rmtree(work, ignore_errors=True)
    env = {**event_log_env(work / "events"), **(recording_env(work / "jfr") if jvm_profile else {})}
    if checkout == RECIPE:
        shutil.copytree(seed / "seed_recipe", work / "tables" / "seed_recipe")
        times = work / "times.jsonl"
        cmd = [sys.executable, "-m", "benchmarks.seed_recipe", bootstrap, topic, str(work / "tables" / "seed_recipe"),
               str(work / "checkpoint"), str(batch), "0", str(times)]
        run = measured(cmd, work / "run.log", env)
    else:
        shutil.copytree(seed / "cdc_delta", work / "tables")
        table_properties = [f"{k}={v}" for k, v in spark.items() if k.startswith(TABLE_PROPERTY)]
        if table_properties:
            set_on = measured([sys.executable, "-m", "benchmarks.tables", "properties", str(work / "tables" / TABLE),
                               *table_properties], work / "properties.log")
            if set_on.returncode:
                raise SystemExit(f"setting {table_properties} failed; see {set_on.log}")
        config = pipeline_config(work, topic, bootstrap, batch)
        config["lake"] = str(work / "tables")
        config["spark"] = {k: v for k, v in spark.items() if not k.startswith((TABLE_PROPERTY, READER_OPTION))}
        config["source"]["options"] = {k: v for k, v in spark.items() if k.startswith(READER_OPTION)}
        (work / "config.yaml").write_text(yaml.safe_dump(config))
        times = work / "metrics.jsonl"
        run = measured([sys.executable, "-m", "cdc_delta", "run", "--config", str(work / "config.yaml"),
                        "--metrics-json", str(times)], work / "run.log", {**env, "PYTHONPATH": str(checkout)},
                       cwd=checkout)
    if run.returncode:
        raise SystemExit(f"run failed (exit {run.returncode}); see {run.log}")
    batches = jsonl(times)
    profile = profile_run(work / "jfr", batches) if jvm_profile else None
    return run, batches, account_run(work / "events", batches, work / "tables"), profile


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=100_000, help="table size before the stream")
    ap.add_argument("--events", type=int, default=50_000)
    ap.add_argument("--batch", type=int, default=10_000, help="maxOffsetsPerTrigger")
    ap.add_argument("--reps", type=int, default=2)
    ap.add_argument("--profile", choices=PROFILES, default="uniform",
                    help="which keys the updates and deletes go to, or an initial snapshot (benchmarks/stream.py)")
    ap.add_argument("--work", type=Path, default=Path("/tmp/cdc-delta-ab"))
    ap.add_argument("--settled", type=int, default=0, metavar="K",
                    help="also report the mean of each run's last K batches: the JVM's compiler still works through "
                         "the first twenty or so warm batches, so a long stream's last batches show the settled cost")
    ap.add_argument("--jvm-profile", action="store_true",
                    help="record each run's JVM with Java Flight Recorder and print where its CPU went in warm "
                         "batches, the variants' last runs side by side (benchmarks/jvm_profile.py)")
    ap.add_argument("variants", nargs="+", type=variant)
    args = ap.parse_args(argv)
    alone()
    port = int(os.environ.get("BENCH_KAFKA_PORT", "19992"))
    bootstrap = f"127.0.0.1:{port}"
    seed = seeded(args.work, args.rows)
    kafka("start", port)
    try:
        warm, settled, profiles = compare(args, bootstrap, seed)
    finally:
        kafka("stop", port)
    if profiles:
        print(side_by_side(profiles))
    first = args.variants[0][0]
    for label, runs in (("warm", warm), (f"last {args.settled}", settled)):
        means = {name: sum(r) / len(r) for name, r in runs.items() if r}
        for name, mean in means.items():
            print(f"{name:10} {label} mean {mean:.2f} s ({mean / means[first]:.2f}x {first})")


def compare(args: argparse.Namespace, bootstrap: str, seed: Path
            ) -> tuple[dict[str, list[float]], dict[str, list[float]], dict[str, Profile]]:
    """Produce the stream once, then run the variants in turns; each one's warm means, the
    means of its last `--settled` batches (none when not asked), and its last run's JVM
    profile (with --jvm-profile)."""
    topic = f"ab.{args.profile}.{args.rows}.{args.events}.{int(time.time())}"
    create_topics(bootstrap, {topic: PARTITIONS})
    produce(bootstrap, topic, Stream(args.rows, profile=args.profile).events(args.events))
    warm: dict[str, list[float]] = {name: [] for name, _, _ in args.variants}
    settled: dict[str, list[float]] = {name: [] for name, _, _ in args.variants}
    profiles: dict[str, Profile] = {}
    for rep in range(args.reps):
        for name, checkout, spark in args.variants:
            run, batches, acc, profile = run_once(args.work / f"{name}-{rep}", seed, topic, bootstrap, args.batch,
                                                  checkout, spark, args.jvm_profile)
            if profile is not None:
                profiles[name] = profile
            seconds = [b["seconds"] for b in batches]
            rest = seconds[1:] or seconds
            warm[name].append(sum(rest) / len(rest))
            last = rest[-args.settled:] if args.settled else []
            if last:
                settled[name].append(sum(last) / len(last))
            print(f"{name:10} run {rep}: wall {run.seconds:6.1f} s, peak {run.peak_rss_mb:.0f} MB, "
                  f"{len(batches)} batches, first {seconds[0]:.2f} s, warm mean {warm[name][-1]:.2f} s"
                  f"{f', last {len(last)} {settled[name][-1]:.2f} s' if last else ''}; per warm batch "
                  f"{acc.jobs_per_batch:.1f} jobs, {acc.stages_per_batch:.1f} stages, {acc.tasks_per_batch:.0f} tasks, "
                  f"jobs running {acc.job_seconds_per_batch:.2f} s, driver alone {acc.driver_seconds_per_batch:.2f} s, "
                  f"task time {acc.task_seconds_per_batch:.2f} s (cpu {acc.task_cpu_seconds_per_batch:.2f} s, "
                  f"gc {acc.task_gc_seconds_per_batch:.2f} s), "
                  f"{acc.delta_commits_per_batch:.1f} Delta commits", flush=True)
    return warm, settled, profiles


if __name__ == "__main__":
    main()
