"""python -m devtools.sandbox tables|register|workload|quiet|compare: the steps of scripts/stack.sh.

Databases come from the environment the scripts use (PG_PORT, PG_USER, PG_PASSWORD,
PG_DATABASE; MARIADB_PORT, …), the broker from KAFKA_BOOTSTRAP (127.0.0.1:9092)."""

from __future__ import annotations

import argparse
import os
import sys

from .databases import Database, create_tables, mariadb_from_env, postgres_from_env, read_table


def database(engine: str) -> Database:
    return postgres_from_env() if engine == "postgres" else mariadb_from_env()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m devtools.sandbox", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("tables", help="(re)create the sandbox tables, dropping what they held")
    p.add_argument("--engine", choices=["postgres", "mariadb"], required=True)
    p.add_argument("--replica-identity", choices=["default", "full"], default="default")
    p = sub.add_parser("register", help="connectors/<engine>.json -> Kafka Connect, waiting until it runs")
    p.add_argument("--engine", choices=["postgres", "mariadb"], action="append", required=True)
    p.add_argument("--connect", default="http://127.0.0.1:8083", help="Kafka Connect REST URL")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="replace a setting the connector file has; the value @engine stands for the engine's name")
    p = sub.add_parser("workload", help="concurrent transactions against the sandbox tables")
    p.add_argument("--engine", choices=["postgres", "mariadb"], required=True)
    p.add_argument("--changes", type=int, default=500)
    p.add_argument("--rate", type=float, default=None, help="row changes per second (default: as fast as it goes)")
    p.add_argument("--truncate", metavar="TABLE", help="TRUNCATE this table halfway")
    p.add_argument("--seed", type=int, default=7)
    p = sub.add_parser("quiet", help="wait until the connector's topics stop growing")
    p.add_argument("--config", required=True)
    p = sub.add_parser("compare", help="each Delta table of the config against its source table")
    p.add_argument("--engine", choices=["postgres", "mariadb"], required=True)
    p.add_argument("--config", required=True)
    args = parser.parse_args(argv)
    return COMMANDS[args.command](args)


def tables(args: argparse.Namespace) -> int:
    create_tables(database(args.engine), args.replica_identity)
    print(f"{args.engine}: created {', '.join(t.name for t in database(args.engine).tables)}")
    return 0


def register(args: argparse.Namespace) -> int:
    from .connectors import connector_config, register as put

    for engine in args.engine:
        spec = connector_config(engine)
        for item in args.set:
            key, _, value = item.partition("=")
            if key in spec["config"]:
                spec["config"][key] = engine if value == "@engine" else value
        put(args.connect, spec)
        print(f"connector {spec['name']} running")
    return 0


def workload(args: argparse.Namespace) -> int:
    from .workload import Workload

    load = Workload(database(args.engine), seed=args.seed)
    if args.truncate:
        load.run(args.changes // 2, args.rate)
        load.truncate(args.truncate)
    load.run(args.changes - (args.changes // 2 if args.truncate else 0), args.rate)
    c = load.counts
    print(f"{args.engine}: {c.changes} row changes committed in {c.transactions} transactions "
          f"({c.inserts} inserts, {c.updates} updates, {c.deletes} deletes, {c.truncates} truncates; "
          f"{c.rollbacks} rolled back)")
    return 0


def quiet(args: argparse.Namespace) -> int:
    from cdc_delta.config import load_config
    from .chain import wait_until_quiet

    config = load_config(args.config)
    ends = wait_until_quiet(config.source.bootstrap_servers, list(config.source.topics or []))
    print(f"topics quiet: {sum(sum(p.values()) for p in ends.values())} records")
    return 0


def compare(args: argparse.Namespace) -> int:
    from cdc_delta.config import load_config
    from cdc_delta.lake.tables import DeltaLocation
    from cdc_delta.infra.session import get_spark
    from .compare import diff, lake_rows

    config = load_config(args.config)
    db = database(args.engine)
    spark = get_spark("cdc-delta-sandbox-compare", {})
    equal = True
    for table in db.tables:
        spec = next(t for t in config.tables if t.name == table.name)
        stored = DeltaLocation.of(config.target_of(spec)).read(spark)
        result = diff(table, read_table(db, table), lake_rows(stored, table))
        print(result.report())
        equal &= result.equal
    return 0 if equal else 1


COMMANDS = {"tables": tables, "register": register, "workload": workload, "quiet": quiet, "compare": compare}

if __name__ == "__main__":
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    sys.exit(main())
