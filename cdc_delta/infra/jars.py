"""The Delta and Kafka connector jars, resolved once with Maven into a cache outside the repo.

Spark's own ``spark.jars.packages`` resolution (Ivy) fails on this network where Maven
succeeds, so the jars are resolved with ``mvn dependency:copy-dependencies`` and handed to Spark
as ``spark.jars``. Jars that pyspark already ships are left out to avoid two versions of one
library on the classpath.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from ..errors import SetupError

DELTA_ARTIFACT = "io.delta:delta-spark_4.2_2.13:4.4.0"
KAFKA_ARTIFACT = "org.apache.spark:spark-sql-kafka-0-10_2.13:4.2.0"
ARTIFACTS = (DELTA_ARTIFACT, KAFKA_ARTIFACT)
# S3A for s3a:// paths (Hadoop 3.5.0, as pyspark ships): with the AWS SDK bundle it is ~690 MB,
# so it is resolved only for a pipeline whose paths need it
S3A_ARTIFACT = "org.apache.hadoop:hadoop-aws:3.5.0"
EXTRA_ARTIFACTS = {"s3a": (S3A_ARTIFACT,)}
VERSION_SUFFIX = re.compile(r"-\d[\w.\-]*$")


def cache_root() -> Path:
    return Path(os.environ.get("CDC_DELTA_CACHE", Path.home() / ".cache" / "cdc-delta"))


def spark_jars(schemes: tuple[str, ...] = ()) -> list[str]:
    """Paths of the jars Spark needs beyond pyspark's own, and those of the file systems of
    `schemes` (`s3a`); each set resolved on its first use."""
    override = os.environ.get("CDC_DELTA_JARS")
    if override:
        return [p for p in override.split(",") if p]
    sets = [ARTIFACTS, *(EXTRA_ARTIFACTS[s] for s in sorted(set(schemes)) if s in EXTRA_ARTIFACTS)]
    return [jar for artifacts in sets for jar in _resolved(artifacts)]


def _resolved(artifacts: tuple[str, ...]) -> list[str]:
    folder = cache_root() / "jars" / "_".join(a.split(":")[1] + "-" + a.split(":")[2] for a in artifacts)
    listing = folder / "selected.txt"
    if not listing.exists():
        _resolve(folder, artifacts)
    jars = [str(folder / name) for name in listing.read_text().split()]
    if not all(os.path.exists(j) for j in jars):
        listing.unlink()
        return _resolved(artifacts)
    return jars


def _resolve(folder: Path, artifacts: tuple[str, ...]) -> None:
    if not shutil.which("mvn"):
        raise SetupError("Maven (mvn) is not installed: it resolves the Delta and Kafka jars once; "
                         "install it (apt-get install maven) or set CDC_DELTA_JARS to jar paths")
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "pom.xml").write_text(_pom(artifacts))
        out = Path(tmp) / "jars"
        proc = subprocess.run(
            ["mvn", "-q", "-B", "dependency:copy-dependencies", "-DincludeScope=runtime",
             f"-DoutputDirectory={out}"], cwd=tmp, capture_output=True, text=True)
        if proc.returncode != 0:
            tail = " ".join((proc.stdout + proc.stderr).split()[-40:])
            raise SetupError(f"mvn could not resolve {', '.join(artifacts)} from Maven Central: {tail}")
        shipped = _pyspark_artifacts() | ({_artifact(Path(j).name) for j in _resolved(ARTIFACTS)}
                                          if artifacts != ARTIFACTS else set())
        chosen = sorted(p.name for p in out.glob("*.jar") if _artifact(p.name) not in shipped)
        for name in chosen:
            shutil.move(out / name, folder / name)
    (folder / "selected.txt").write_text("\n".join(chosen) + "\n")


def _pom(artifacts: tuple[str, ...]) -> str:
    deps = "".join(
        f"<dependency><groupId>{g}</groupId><artifactId>{a}</artifactId><version>{v}</version></dependency>"
        for g, a, v in (x.split(":") for x in artifacts))
    return ('<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion>'
            '<groupId>cdc-delta</groupId><artifactId>spark-jars</artifactId><version>1</version>'
            f'<dependencies>{deps}</dependencies></project>')


def _pyspark_artifacts() -> set[str]:
    import pyspark

    jars = Path(pyspark.__file__).parent / "jars"
    return {_artifact(p.name) for p in jars.glob("*.jar")}


def _artifact(jar_name: str) -> str:
    return VERSION_SUFFIX.sub("", jar_name.removesuffix(".jar"))
