"""The benchmark: cdc-delta against the seed recipe and a delta-rs merge loop, on the same
Debezium stream in the same command, then sweeps and freshness (freshness.py); results under --out.

    python -m benchmarks.run --profile standard        # about 35 min here
    python -m benchmarks.run --profile targets --out benchmarks/results/targets   # about 15 min
    python -m benchmarks.run --profile smoke --out /tmp/bench    # about 10 min: harness check

Starts its own local broker (scripts/kafka.sh on BENCH_KAFKA_PORT, default 19992) and stops it.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import pyarrow.parquet as pq
import yaml

from cdc_delta.infra.kafka_io import create_topics, produce

from .alone import alone
from .event_log import account_run, event_log_env
from . import freshness
from .broker import PARTITIONS, kafka
from .measure import REPO, jsonl, measured
from .stream import TABLE, Stream
from .tables import pipeline_config, seed_fresh

TABLE_DIRS = {"cdc_delta": f"cdc_delta/{TABLE}", "seed_recipe": "seed_recipe", "delta_rs": "delta_rs"}
PY = sys.executable


@dataclass(frozen=True)
class Scenario:
    rows: int          # table size before the stream
    events: int        # change events in the stream
    batch: int         # maxOffsetsPerTrigger
    wrapped: bool = False
    profile: str = "uniform"   # which keys change, or an initial snapshot (benchmarks/stream.py)

    @property
    def name(self) -> str:
        shape = "" if self.profile == "uniform" else f"-{self.profile}"
        return f"rows{self.rows}-events{self.events}-batch{self.batch}-{'wrapped' if self.wrapped else 'plain'}{shape}"


# the target "≤ 1.5 s per batch of 1k events into a 1M-row table" (6 batches: 1 cold, 5 warm)
SMALL_BATCHES = Scenario(1_000_000, 6_000, 1_000)
# issue 17's targets 3 and 4, cdc-delta and the seed recipe only: a recency-skewed stream into a
# 1M- and a 10M-row table (seconds per batch should grow little between them), and an initial
# snapshot into an empty table
TARGET_SCENARIOS = [Scenario(1_000_000, 30_000, 10_000, profile="recent"),
                    Scenario(10_000_000, 30_000, 10_000, profile="recent"),
                    Scenario(0, 1_000_000, 100_000, profile="snapshot")]
# issue 17's target 6: events per second, seconds between batches, seconds of events (long enough
# for the first warm batches to pass: freshness.py)
FRESHNESS = (2_000, 5, 120)
PROFILES = {
    "smoke": {"base": Scenario(2_000, 3_000, 1_000), "batch": [], "rows": [], "wrapped": [],
              "targets": [Scenario(0, 2_000, 1_000, profile="snapshot")], "phases": False, "freshness": (200, 2, 10)},
    "standard": {"base": Scenario(100_000, 100_000, 10_000), "batch": [100_000], "rows": [1_000_000],
                 "wrapped": [True], "points": [SMALL_BATCHES], "targets": TARGET_SCENARIOS,
                 "freshness": FRESHNESS},
    # the target scenarios alone (about 15 min here)
    "targets": {"base": Scenario(100_000, 30_000, 10_000), "batch": [], "rows": [], "wrapped": [],
                "targets": TARGET_SCENARIOS, "phases": False, "freshness": None},
    "full": {"base": Scenario(1_000_000, 1_000_000, 100_000), "batch": [10_000, 1_000_000],
             "rows": [100_000, 10_000_000], "wrapped": [True], "points": [SMALL_BATCHES], "freshness": FRESHNESS},
}


class Bench:
    def __init__(self, work: Path, bootstrap: str) -> None:
        self.work, self.bootstrap = work, bootstrap

    def scenario(self, sc: Scenario, engines: tuple[str, ...], tag: str = "", env: dict | None = None) -> dict:
        """Produce the scenario's stream to a new topic, seed the tables, run each engine."""
        stream = Stream(sc.rows, wrapped=sc.wrapped, profile=sc.profile)
        topic = f"bench.{sc.name}{tag}.{int(time.time())}"
        create_topics(self.bootstrap, {topic: PARTITIONS})
        records = produce(self.bootstrap, topic, stream.events(sc.events))
        d = seed_fresh(self.work / (sc.name + tag), sc.rows)
        print(f"{sc.name}: {sc.events} events ({records} records) on {topic}, table of {sc.rows} rows", flush=True)
        result = {"scenario": {**asdict(sc), "name": sc.name}, "records": records, "engines": {}}
        for engine in engines:
            run = getattr(self, f"_{engine}")
            result["engines"][engine] = run(sc, d, topic, env) if env else run(sc, d, topic)
        wrong = self._keys_wrong({e: d / TABLE_DIRS[e] for e in engines}, stream, d)
        for engine, figures in result["engines"].items():
            figures["keys_wrong"] = wrong[engine]
            print(f"  {engine}: {figures['events_per_s']:.0f} events/s, {figures['seconds_per_batch']:.2f} s/batch, "
                  f"{figures['batches']} batches, wall {figures['wall_s']:.0f} s, peak {figures['peak_rss_mb']:.0f} MB, "
                  f"keys wrong {figures['keys_wrong']}", flush=True)
        return result

    # --- engines -----------------------------------------------------------------------------

    def _cdc_delta(self, sc: Scenario, d: Path, topic: str, env: dict | None = None) -> dict:
        config = d / "cdc_delta.yaml"
        config.write_text(yaml.safe_dump(pipeline_config(d, topic, self.bootstrap, sc.batch)))
        metrics = d / "cdc_delta.jsonl"
        run = measured([PY, "-m", "cdc_delta", "run", "--config", str(config), "--metrics-json", str(metrics)],
                       d / "cdc_delta.log", {**(env or {}), **event_log_env(d / "cdc_delta.events")})
        batches = jsonl(metrics)
        figures = {**self._figures(sc, run, batches), "accounting": _accounting(d / "cdc_delta.events", batches,
                                                                                   d / "cdc_delta")}
        phases: dict[str, float] = {}
        for b in batches:
            for k, v in b.get("phases", {}).items():
                phases[k] = phases.get(k, 0.0) + v / len(batches)
        return {**figures, "phases_per_batch": {k: round(v, 3) for k, v in phases.items()}}

    def _seed_recipe(self, sc: Scenario, d: Path, topic: str) -> dict:
        times = d / "seed_recipe.jsonl"
        run = measured([PY, "-m", "benchmarks.seed_recipe", self.bootstrap, topic, str(d / "seed_recipe"),
                        str(d / "seed_recipe_ck"), str(sc.batch), "1" if sc.wrapped else "0", str(times)],
                       d / "seed_recipe.log", event_log_env(d / "seed_recipe.events"))
        batches = jsonl(times)
        return {**self._figures(sc, run, batches),
                "accounting": _accounting(d / "seed_recipe.events", batches, d / "seed_recipe")}

    def _delta_rs(self, sc: Scenario, d: Path, topic: str) -> dict:
        times = d / "delta_rs.jsonl"
        run = measured([PY, "-m", "benchmarks.delta_rs_loop", self.bootstrap, topic, str(d / "delta_rs"),
                        str(sc.batch), "1" if sc.wrapped else "0", str(times)], d / "delta_rs.log")
        return self._figures(sc, run, jsonl(times))

    def _figures(self, sc: Scenario, run, batches: list[dict]) -> dict:
        if run.returncode != 0:
            raise SystemExit(f"benchmark run failed (exit {run.returncode}); see {run.log}:\n"
                             + run.log.read_text()[-3000:])
        seconds = [b["seconds"] for b in batches]
        busy, warm = sum(seconds), seconds[1:]   # the first batch pays for the JVM's warm-up
        return {"events_per_s": round(sc.events / busy, 1) if busy else 0.0, "batches": len(batches),
                "seconds_per_batch": round(busy / max(1, len(batches)), 3),
                "warm_seconds_per_batch": round(sum(warm) / len(warm), 3) if warm else None,
                "busy_s": round(busy, 2), "wall_s": run.seconds, "peak_rss_mb": round(run.peak_rss_mb)}

    def _keys_wrong(self, tables: dict[str, Path], stream: Stream, d: Path) -> dict[str, int]:
        """Per engine, the keys its table got wrong (all tables exported by one Spark run)."""
        pairs = [str(p) for table in tables.values() for p in (table, table.with_name(table.name + ".export"))]
        run = measured([PY, "-m", "benchmarks.tables", "export", *pairs], d / "export.log")
        if run.returncode != 0:
            raise SystemExit(f"could not read the result tables; see {run.log}")
        wrong = {}
        for engine, table in tables.items():
            t = pq.read_table(table.with_name(table.name + ".export"))
            found = dict(zip(t.column("id").to_pylist(), zip(t.column("rev").to_pylist(), t.column("head").to_pylist())))
            wrong[engine] = stream.keys_wrong(found)
        return wrong

    # --- phases ------------------------------------------------------------------------------

    def phases(self, sc: Scenario) -> dict:
        """cdc-delta alone, for the split of a batch's seconds. Every run reports its phases on
        the production plan: lazy steps (reduce, guard) run inside the action that needs them,
        so their work is counted where Spark does it (mostly under toast and merge)."""
        result = self.scenario(sc, ("cdc_delta",), "-phases", {})
        return result["engines"]["cdc_delta"]


def _accounting(events: Path, batches: list[dict], tables: Path) -> dict:
    """Jobs, stages, tasks, driver seconds and Delta commits per warm batch."""
    return account_run(events, batches, tables).as_dict() if batches else {}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--profile", choices=sorted(PROFILES), default="standard")
    ap.add_argument("--out", type=Path, default=REPO / "benchmarks" / "results", help="where results go")
    ap.add_argument("--work", type=Path, default=Path("/tmp/cdc-delta-bench"), help="tables, topics' logs")
    args = ap.parse_args(argv)
    alone()
    profile = PROFILES[args.profile]
    port = int(os.environ.get("BENCH_KAFKA_PORT", "19992"))
    kafka("reset", port)
    kafka("start", port)
    bench = Bench(args.work, f"127.0.0.1:{port}")
    base: Scenario = profile["base"]
    everyone = ("cdc_delta", "seed_recipe", "delta_rs")
    results = {"profile": args.profile, "base": bench.scenario(base, everyone), "sweeps": []}
    try:
        for batch in profile["batch"]:
            results["sweeps"].append(bench.scenario(replace(base, batch=batch), everyone))
        for rows in profile["rows"]:
            results["sweeps"].append(bench.scenario(replace(base, rows=rows), everyone))
        for wrapped in profile["wrapped"]:
            results["sweeps"].append(bench.scenario(replace(base, wrapped=wrapped), everyone))
        for point in profile.get("points", []):
            results["sweeps"].append(bench.scenario(point, everyone))
        for point in profile.get("targets", []):
            results["sweeps"].append(bench.scenario(point, ("cdc_delta", "seed_recipe")))
        if profile.get("phases", True):
            results["phases"] = bench.phases(base)
        if profile["freshness"]:
            results["freshness"] = freshness.measure(args.work, bench.bootstrap, base.rows, *profile["freshness"])
    finally:
        kafka("stop", port)
    from .report import write_report
    write_report(results, args.out)
    print(f"results: {args.out / 'results.md'}")


if __name__ == "__main__":
    main()
