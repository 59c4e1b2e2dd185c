"""Cold start: the demo's first batch (issue 17's target 5), cdc-delta variants in turns; with
`--copies N`, also the demo's warm batches (its routes, history table and quarantine each batch).

    python -m benchmarks.cold_start --reps 2 before=/tmp/wt-before now=.
    python -m benchmarks.cold_start --reps 2 --copies 8 before=/tmp/wt-before now=.

A variant is NAME=CHECKOUT (`git worktree add /tmp/wt-before HEAD~1`). Each run gets a broker of
its own, new (a route's ledger lives in the broker, so a reused one would leave it less to do),
the demo's sample streams, and an empty lake; it runs `cdc_delta run --config configs/demo.yaml`
from its checkout. Printed per run: the first batch's seconds and its phases (summed over the
tables, which run side by side) and the whole process's seconds (start-up and table creation
included), then each variant's means over the first variant's. `--copies N` produces the demo's
streams N times and reads one copy's worth of records a batch (`max_offsets_per_trigger`): the
later copies are redeliveries, so each batch decides what is news, skips what the tables hold and
quarantines its bad event again; printed then also the mean of the batches after the second.
Starts its brokers on BENCH_KAFKA_PORT (default 19992).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import re
import subprocess
import sys
from pathlib import Path

import yaml

from .alone import alone
from .measure import measured
from .broker import kafka


def variant(text: str) -> tuple[str, Path]:
    name, _, checkout = text.partition("=")
    if not name or not checkout:
        raise argparse.ArgumentTypeError(f"variant '{text}': expected NAME=CHECKOUT")
    return name, Path(checkout).resolve()


def number_of_copies(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"'{text}': expected a number of copies, 1 or more")
    return int(text)


def demo_run(checkout: Path, port: int, work: Path, copies: int) -> tuple[list[dict], float]:
    """One demo run from `checkout` against a new broker, of `copies` copies of its streams:
    its batches' metrics lines and the process's seconds."""
    kafka("reset", port)
    kafka("start", port)
    try:
        for folder in ("lake/demo", "checkpoints/demo"):
            shutil.rmtree(checkout / folder, ignore_errors=True)
        env = {"PYTHONPATH": str(checkout), "KAFKA_BOOTSTRAP": f"127.0.0.1:{port}"}
        for _ in range(copies):
            produced = subprocess.run([sys.executable, "-m", "devtools.demo", "produce", "--bootstrap",
                                       env["KAFKA_BOOTSTRAP"]], cwd=checkout, env={**os.environ, **env},
                                      check=True, capture_output=True, text=True)
        metrics = work / "metrics.jsonl"
        metrics.unlink(missing_ok=True)
        config = demo_config(checkout, work, copies, produced.stdout)
        run = measured([sys.executable, "-m", "cdc_delta", "run", "--config", str(config),
                        "--metrics-json", str(metrics)], work / "run.log", env, cwd=checkout)
        if run.returncode:
            raise SystemExit(f"run failed (exit {run.returncode}); see {run.log}")
        return [json.loads(line) for line in metrics.read_text().splitlines()], run.seconds
    finally:
        kafka("stop", port)


def demo_config(checkout: Path, work: Path, copies: int, produced: str) -> Path:
    """The checkout's demo config, reading one copy's records a batch when there are several
    copies (`produced`: devtools.demo's lines, "produced N records to TOPIC")."""
    config = yaml.safe_load((checkout / "configs" / "demo.yaml").read_text())
    if copies > 1:
        one_copy = sum(int(n) for n in re.findall(r"produced (\d+) records", produced))
        config["source"]["max_offsets_per_trigger"] = one_copy
    path = work / "demo.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=2)
    ap.add_argument("--work", type=Path, default=Path("/tmp/cdc-delta-cold-start"))
    ap.add_argument("--copies", type=number_of_copies, default=1, help="copies of the demo's streams (warm batches)")
    ap.add_argument("variants", nargs="+", type=variant)
    args = ap.parse_args(argv)
    alone()
    port = int(os.environ.get("BENCH_KAFKA_PORT", "19992"))
    figures: dict[str, dict[str, list[float]]] = {label: {name: [] for name, _ in args.variants}
                                                  for label in ("first batch", "warm batch", "process")}
    for rep in range(args.reps):
        for name, checkout in args.variants:
            work = args.work / f"{name}-{rep}"
            work.mkdir(parents=True, exist_ok=True)
            batches, whole = demo_run(checkout, port, work, args.copies)
            batch, warm = batches[0], [b["seconds"] for b in batches[2:]]
            figures["first batch"][name].append(batch["seconds"])
            figures["process"][name].append(whole)
            phases = ", ".join(f"{k} {v:.1f}" for k, v in sorted(batch["phases"].items()))
            print(f"{name:10} run {rep}: first batch {batch['seconds']:.2f} s; phases {phases}; "
                  f"process {whole:.1f} s", flush=True)
            if warm:
                figures["warm batch"][name].append(sum(warm) / len(warm))
                print(f"{name:10} run {rep}: {len(warm)} warm batches, mean {sum(warm) / len(warm):.2f} s: "
                      + " ".join(f"{w:.1f}" for w in warm), flush=True)
    first = args.variants[0][0]
    for label, by_variant in figures.items():
        if not by_variant[first]:
            continue
        means = {name: sum(s) / len(s) for name, s in by_variant.items()}
        for name, mean in means.items():
            print(f"{name:10} {label} mean {mean:.2f} s ({mean / means[first]:.2f}x {first})")


if __name__ == "__main__":
    main()
