"""A class-data archive of the JVM classes a cdc-delta run loads (Java's AppCDS), made once by
setup and mapped by each local session cdc-delta starts. The JVM then maps those classes from
one file, parsed and verified, instead of reading them from some 250 jars: the demo's process
took 8 s less and its first batch 2.4 s less (`python -m benchmarks.cold_start`).

    python -m cdc_delta.infra.class_archive      make it, unless made (scripts/setup.sh does)

The archive is made by a pipeline over the sample events into a temporary folder, in a JVM that
writes the classes it loaded when it exits. It fits one Java and one set of pyspark's jars, and its
name is a digest of them: after an upgrade a session starts without one until setup makes the
new one. A JVM given an archive that does not fit starts without it, silently."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pyspark

from ..errors import SetupError
from .jars import cache_root

# the JVM's own lines about the archive (one that does not fit) stay off the user's output
QUIET = "-Xlog:cds=off,cds+dynamic=off"
SAMPLES = Path(__file__).parents[1] / "samples"
MAKE_TIMEOUT_S = 600


def java_options(flags: str) -> str:
    """The option that maps the archive made for `flags` (the JVM flags it must share with
    the session: its garbage collector), or "" when none is made: a JVM told of a missing
    file starts without sharing even the JDK's own classes."""
    try:
        made = archive_file(flags)
    except FileNotFoundError:     # no Java found here: Spark says so when it starts
        return ""
    return f"-XX:SharedArchiveFile={made} {QUIET}" if made.is_file() else ""


def archive_file(flags: str) -> Path:
    """`classes-<pyspark install>-<fingerprint>.jsa`: each Python environment keeps its own."""
    install = hashlib.sha256(str(_pyspark_jars()).encode()).hexdigest()[:8]
    return cache_root() / "jvm" / f"classes-{install}-{fingerprint(flags)}.jsa"


def fingerprint(flags: str, jars: Path | None = None, java: str | None = None) -> str:
    """A digest of what the archive must match: the java binary, pyspark's jars (the JVM's
    class path: names, sizes and times) and the JVM flags."""
    jars = jars or _pyspark_jars()
    java = java or _java_binary()
    digest = hashlib.sha256(flags.encode())
    for path in [Path(java), *sorted(jars.glob("*.jar"))]:
        stat = path.stat()
        digest.update(f"{path}|{stat.st_size}|{stat.st_mtime_ns}\n".encode())
    return digest.hexdigest()[:16]


def _pyspark_jars() -> Path:
    return Path(pyspark.__file__).parent / "jars"


def _java_binary() -> str:
    home = os.environ.get("JAVA_HOME")
    found = str(Path(home) / "bin" / "java") if home else shutil.which("java")
    if not found:
        raise FileNotFoundError("no java on PATH and JAVA_HOME is not set; run scripts/setup.sh")
    return os.path.realpath(found)


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
        done = subprocess.run([sys.executable, "-m", "cdc_delta.infra.class_archive", "--train", str(partial), work,
                               flags, *([bootstrap] if bootstrap else [])],
                              stdout=subprocess.PIPE, stderr=errors, text=True, timeout=MAKE_TIMEOUT_S)
        if done.returncode:
            raise SetupError(f"the run that makes the JVM class archive failed (exit {done.returncode}); see {log}")
        _wait_for_exit(int(done.stdout.split()[-1]))
    if not partial.is_file():
        raise SetupError(f"the JVM wrote no class archive at {partial}; see {log}")
    partial.replace(target)
    install = target.name.split("-")[1]
    for old in target.parent.glob(f"classes-{install}-*"):
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
    from ..api import Pipeline
    from .session import LOG4J, get_spark

    options = f"-Dlog4j.configurationFile={LOG4J} {flags} -XX:ArchiveClassesAtExit={archive} {QUIET}"
    spark = get_spark("cdc-delta-class-archive", {"spark.driver.extraJavaOptions": options})
    if bootstrap:
        _produce_samples(bootstrap)
    Pipeline.from_dict(_training_pipeline(work, bootstrap), name="class archive").run(spark)
    print(spark.sparkContext._jvm.java.lang.ProcessHandle.current().pid())


def _produce_samples(bootstrap: str) -> None:
    from .kafka_io import create_topics, produce

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
    from .session import JVM_GC

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
