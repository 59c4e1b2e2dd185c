"""Makes the JVM class archive that local sessions map (infra/class_archive.py): a pipeline
over the sample events, into a temporary folder, in a JVM that writes the classes it loaded
when it exits.

    python -m cdc_delta.ops.make_class_archive [--bootstrap HOST:PORT]

With a broker (scripts/class_archive.sh starts one of its own) the events go through Kafka and a
route, so the Kafka client's classes are in the archive too; else they are read from files.
Nothing is done when the archive is made."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ..api import Pipeline
from ..errors import SetupError
from ..infra.class_archive import QUIET, archive_file, install_prefix
from ..infra.kafka_io import create_topics, produce
from ..infra.session import JVM_GC, LOG4J, get_spark

SAMPLES = Path(__file__).parents[1] / "samples"
MAKE_TIMEOUT_S = 600


def make(flags: str, bootstrap: str | None = None) -> Path:
    """The archive for `flags`, made by a run over the sample events when missing
    (through the Kafka broker at `bootstrap` when given, else from their files); the archives
    this Python environment made for other Javas or jars are removed (each is ~200 MB)."""
    target = archive_file(flags)
    if target.is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(f".{os.getpid()}.partial")
    log = target.parent / "make.log"
    with tempfile.TemporaryDirectory(prefix="cdc-delta-classes-") as work, log.open("w") as errors:
        done = subprocess.run([sys.executable, "-m", "cdc_delta.ops.make_class_archive", "--train", str(partial), work,
                               flags, *([bootstrap] if bootstrap else [])],
                              stdout=subprocess.PIPE, stderr=errors, text=True, timeout=MAKE_TIMEOUT_S)
        if done.returncode:
            raise SetupError(f"the run that makes the JVM class archive failed (exit {done.returncode}); see {log}")
        _wait_for_exit(int(done.stdout.split()[-1]))
    if not partial.is_file():
        raise SetupError(f"the JVM wrote no class archive at {partial}; see {log}")
    partial.replace(target)
    for old in target.parent.glob(f"{install_prefix()}-*"):
        if old != target:
            old.unlink(missing_ok=True)
    return target


def _wait_for_exit(pid: int) -> None:
    """The JVM writes the archive as it exits, after the Python process that started it."""
    deadline = time.monotonic() + MAKE_TIMEOUT_S
    while _alive(pid):
        if time.monotonic() > deadline:
            raise SetupError(f"the JVM (process {pid}) did not exit to write its class archive")
        time.sleep(0.2)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def _train(archive: Path, work: Path, flags: str, bootstrap: str | None) -> None:
    """Run a pipeline over the sample events in `work`, in a JVM (given `flags`) that writes
    the classes it loaded to `archive` when it exits; print that JVM's process id."""
    options = f"-Dlog4j.configurationFile={LOG4J} {flags} -XX:ArchiveClassesAtExit={archive} {QUIET}"
    spark = get_spark("cdc-delta-class-archive", {"spark.driver.extraJavaOptions": options})
    if bootstrap:
        _produce_samples(bootstrap)
    Pipeline.from_dict(_training_pipeline(work, bootstrap), name="class archive").run(spark)
    print(spark.sparkContext._jvm.java.lang.ProcessHandle.current().pid())


def _produce_samples(bootstrap: str) -> None:
    for folder in sorted(p for p in SAMPLES.iterdir() if p.is_dir()):
        create_topics(bootstrap, {folder.name: 1})
        lines = [line for f in sorted(folder.glob("*.jsonl")) for line in f.read_bytes().splitlines() if line]
        produce(bootstrap, folder.name, [(None, line) for line in lines])


def _training_pipeline(work: Path, bootstrap: str | None) -> dict:
    """The sample orders and transactions (typed columns, TOAST, truncates), the transactions'
    history, their withdrawals routed (with a broker) and the customers' events quarantined as
    unmatched: most of what a batch runs."""
    topics = sorted(p.name for p in SAMPLES.iterdir() if p.is_dir())
    source = ({"kind": "kafka", "bootstrap_servers": bootstrap, "topics": topics, "starting_offsets": "earliest"}
              if bootstrap else {"kind": "files", "path": str(SAMPLES)})
    routes = [{"name": "withdrawals", "when": "txn_type = 'withdrawal'", "topic": "class-archive.withdrawals"}]
    return {
        "pipeline": "class-archive", "source": source, "trigger": "available_now",
        "lake": str(work / "lake"), "checkpoint": str(work / "checkpoint"),
        "tables": [
            {"name": "orders", "match": {"topic": "dbserver1.shop.orders"}, "keys": ["order_id"],
             "columns": {"order_id": "bigint", "customer_id": "bigint", "amount": "decimal(10,2)",
                         "status": "string", "order_date": "date",
                         "updated_at": {"type": "timestamp", "encoding": "MicroTimestamp"}}},
            {"name": "transactions", "match": {"topic": "pg.bank.transactions"}, "keys": ["txn_id"],
             "columns": {"txn_id": "bigint", "acc_id": "bigint", "txn_value": "decimal(12,2)",
                         "txn_date": "timestamp", "txn_type": "string"},
             "truncate": "apply", **({"routes": routes} if bootstrap else {})},
            {"name": "transactions_history", "from": "transactions", "stored_as": "scd2"},
        ],
    }


def main(argv: list[str]) -> None:
    """`[--bootstrap HOST:PORT]`: make the archive (through that broker); `--made`: exit 0 when
    it is made, else 1."""
    if argv[:1] == ["--train"]:
        _train(Path(argv[1]), Path(argv[2]), argv[3], argv[4] if len(argv) > 4 else None)
    elif argv[:1] == ["--made"]:
        sys.exit(0 if archive_file(JVM_GC).is_file() else 1)
    else:
        bootstrap = argv[1] if argv[:1] == ["--bootstrap"] else None
        try:
            print(f"class archive: {make(JVM_GC, bootstrap)}")
        except SetupError as exc:
            print(f"error: {exc}", file=sys.stderr)
            sys.exit(exc.exit_code)


if __name__ == "__main__":
    main(sys.argv[1:])
