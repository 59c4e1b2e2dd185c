"""`cdc-delta`: run, validate, plan, show, status, replay. One error handler: a one-line message and an
exit code; ``--debug`` shows the trace."""

from __future__ import annotations

import argparse
import sys
from typing import Sequence

from .api import Pipeline, RunResult, as_trigger
from .config import PipelineConfig, load_config
from .errors import CdcDeltaError, one_line
from .frame import END_AT, START_AT, is_own_column
from .hooks import from_environment
from .infra.secrets import redact

EXIT_CODES = """exit codes:
  0  done (available-now / once: everything new was applied)
  1  unexpected error
  2  invalid config or arguments
  3  data refused by policy (schema change that would lose data, truncate with 'fail')
  4  set-up problem (Java, Maven, jars)
  5  the streaming query failed
  6  another run is writing the same checkpoint or table"""


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except CdcDeltaError as exc:
        if args.debug:
            raise
        _fail(str(exc))
        return exc.exit_code
    except KeyboardInterrupt:
        _fail("interrupted")
        return 130
    except Exception as exc:  # noqa: BLE001 - the one place that turns anything into one line
        if args.debug:
            raise
        _fail(f"{type(exc).__name__}: {one_line(exc, 500)} (run with --debug for the trace)")
        return 1


def _fail(message: str) -> None:
    red, reset = ("\033[31m", "\033[0m") if sys.stderr.isatty() else ("", "")
    print(f"{red}error: {redact(message)}{reset}", file=sys.stderr, flush=True)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="cdc-delta", description="Debezium change events into Delta tables.",
                                epilog=EXIT_CODES, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--debug", action="store_true", help="show full traces on errors")
    sub = p.add_subparsers(dest="command", required=True)

    def command(name: str, func, help_text: str) -> argparse.ArgumentParser:
        c = sub.add_parser(name, help=help_text)
        c.add_argument("--config", "-c", required=True, help="pipeline YAML file")
        c.add_argument("--debug", action="store_true", default=argparse.SUPPRESS)
        c.set_defaults(func=func)
        return c

    run = command("run", cmd_run, "run the pipeline")
    run.add_argument("--trigger", help="available-now (default for files), once, or an interval like '10 seconds'")
    run.add_argument("--show", action="store_true", help="print the tables when the run ends")
    run.add_argument("--metrics-json", help="append one JSON line per batch to this file")
    command("validate", cmd_validate, "check a config without starting Spark")
    command("plan", cmd_plan, "print what the pipeline will do per table")
    show = command("show", cmd_show, "print the current tables")
    show.add_argument("--table", help="only this table")
    status = command("status", cmd_status, "tables, last batch, quarantine and Kafka lag")
    status.add_argument("--json", action="store_true", help="print one JSON object")
    replay = command("replay", cmd_replay, "re-apply quarantined events once their cause is fixed")
    replay.add_argument("--table", help="only events of this table")
    return p


def cmd_validate(args) -> int:
    config = load_config(args.config)
    print(f"ok: {args.config}: pipeline {config.pipeline}, {len(config.tables)} table(s): "
          f"{', '.join(t.name for t in config.tables)}")
    return 0


def cmd_plan(args) -> int:
    from .ops.plan_report import describe

    print(describe(load_config(args.config)))
    return 0


def cmd_run(args) -> int:
    pipeline = Pipeline.from_yaml(args.config)
    trigger = as_trigger(args.trigger, pipeline.config)
    result = pipeline.run(trigger=trigger, metrics_json=args.metrics_json, hooks=from_environment())
    print(summary(result), flush=True)
    if result.stopped_by:
        print(f"stopped by {result.stopped_by}; the next run continues from {pipeline.config.checkpoint_path}",
              flush=True)
    if args.show:
        _show(pipeline.local_session(), pipeline.config, None)
    return 0


def summary(result: RunResult) -> str:
    if not result.reports:
        return "nothing new: 0 batches"
    n, secs = len(result.reports), sum(r.seconds for r in result.reports)
    return (f"done: {n} batch{'es' if n != 1 else ''}, {result.records_in} records, "
            f"{result.quarantined} quarantined, {secs:.1f} s")


def cmd_show(args) -> int:
    config = load_config(args.config)
    _show(Pipeline(config).local_session(), config, args.table)
    return 0


def cmd_status(args) -> int:
    import json

    config = load_config(args.config)
    from .ops.status import collect_status, render

    status = collect_status(Pipeline(config).local_session(), config)
    print(json.dumps(status, sort_keys=True) if args.json else render(status), flush=True)
    return 0


def cmd_replay(args) -> int:
    config = load_config(args.config)
    from .ops.replay import replay_quarantine

    print(replay_quarantine(Pipeline(config).local_session(), config, args.table), flush=True)
    return 0


def _show(spark, config: PipelineConfig, only: str | None) -> None:
    from .lake.tables import DeltaLocation
    from .infra.names import col

    for spec in config.tables:
        if only and spec.name != only:
            continue
        df = DeltaLocation.of(config.target_of(spec)).read(spark)
        user = [_shown(c) for c in df.columns if not is_own_column(c)]
        order = [*spec.keys, *([START_AT] if START_AT in df.columns else [])]
        rows = df.select(*user).orderBy(*[col(c) for c in order])
        print(f"\ntable {spec.name} ({rows.count()} rows)")
        rows.show(1000, truncate=False)


def _shown(column: str):
    """A column as `show` prints it: a version's start and end by their source time."""
    from .infra.names import col

    if column in (START_AT, END_AT):
        return col(column)["source_ts"].alias(column)
    return col(column)


if __name__ == "__main__":
    sys.exit(main())
