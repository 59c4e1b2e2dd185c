"""Cold start: the demo's first batch (issue 17's target 5), cdc-delta variants in turns.

    python -m benchmarks.cold_start --reps 2 before=/tmp/wt-before now=.

A variant is NAME=CHECKOUT (`git worktree add /tmp/wt-before HEAD~1`). Each run gets a broker of
its own, new (a route's ledger lives in the broker, so a reused one would leave it less to do),
the demo's sample streams, and an empty lake; it runs `cdc_delta run --config configs/demo.yaml`
from its checkout. Printed per run: the first batch's seconds and its phases (summed over the
tables, which run side by side) and the whole process's seconds (start-up and table creation
included), then each variant's means over the first variant's. Starts its
brokers on BENCH_KAFKA_PORT (default 19992).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from .alone import alone
from .measure import measured
from .broker import kafka


def variant(text: str) -> tuple[str, Path]:
    name, _, checkout = text.partition("=")
    if not name or not checkout:
        raise argparse.ArgumentTypeError(f"variant '{text}': expected NAME=CHECKOUT")
    return name, Path(checkout).resolve()


def first_batch(checkout: Path, port: int, work: Path) -> tuple[dict, float]:
    """One demo run from `checkout` against a new broker: its first batch's metrics line and
    the process's seconds."""
    kafka("reset", port)
    kafka("start", port)
    try:
        for folder in ("lake/demo", "checkpoints/demo"):
            shutil.rmtree(checkout / folder, ignore_errors=True)
        env = {"PYTHONPATH": str(checkout), "KAFKA_BOOTSTRAP": f"127.0.0.1:{port}"}
        subprocess.run([sys.executable, "-m", "devtools.demo", "produce", "--bootstrap", env["KAFKA_BOOTSTRAP"]],
                       cwd=checkout, env={**os.environ, **env}, check=True, capture_output=True)
        metrics = work / "metrics.jsonl"
        metrics.unlink(missing_ok=True)
        run = measured([sys.executable, "-m", "cdc_delta", "run", "--config", "configs/demo.yaml",
                        "--metrics-json", str(metrics)], work / "run.log", env, cwd=checkout)
        if run.returncode:
            raise SystemExit(f"run failed (exit {run.returncode}); see {run.log}")
        return json.loads(metrics.read_text().splitlines()[0]), run.seconds
    finally:
        kafka("stop", port)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=2)
    ap.add_argument("--work", type=Path, default=Path("/tmp/cdc-delta-cold-start"))
    ap.add_argument("variants", nargs="+", type=variant)
    args = ap.parse_args(argv)
    alone()
    port = int(os.environ.get("BENCH_KAFKA_PORT", "19992"))
    seconds: dict[str, list[float]] = {name: [] for name, _ in args.variants}
    process: dict[str, list[float]] = {name: [] for name, _ in args.variants}
    for rep in range(args.reps):
        for name, checkout in args.variants:
            work = args.work / f"{name}-{rep}"
            work.mkdir(parents=True, exist_ok=True)
            batch, whole = first_batch(checkout, port, work)
            seconds[name].append(batch["seconds"])
            process[name].append(whole)
            phases = ", ".join(f"{k} {v:.1f}" for k, v in sorted(batch["phases"].items()))
            print(f"{name:10} run {rep}: first batch {batch['seconds']:.2f} s; phases {phases}; "
                  f"process {whole:.1f} s", flush=True)
    first = args.variants[0][0]
    for label, figures in (("first batch", seconds), ("process", process)):
        means = {name: sum(s) / len(s) for name, s in figures.items()}
        for name, mean in means.items():
            print(f"{name:10} {label} mean {mean:.2f} s ({mean / means[first]:.2f}x {first})")


if __name__ == "__main__":
    main()
