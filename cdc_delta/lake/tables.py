"""Create, locate and evolve the Delta tables a pipeline writes."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping

from delta.tables import DeltaTable
from py4j.protocol import Py4JError
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.types import StructType

from ..config.types import SqlType, parse_sql_type
from ..errors import TablePropertiesRefused, one_line
from ..frame import SEQ_COLUMN, SEQ_TYPE, TS_COLUMN, companion_folder, companion_name, is_own_column
from ..infra.names import quote  # noqa: F401 (re-exported)
from ..infra.storage import absolute, join, local_path
from .local_log import commit_file, commit_info, commits_newest_first, newest_commit

META_COLUMNS = f"`{SEQ_COLUMN}` {SEQ_TYPE}, `{TS_COLUMN}` bigint"


@dataclass(frozen=True)
class DeltaLocation:
    """A Delta table by path or catalog name."""

    path: str | None = None
    name: str | None = None

    @classmethod
    def of(cls, target: Any) -> "DeltaLocation":
        """From a config's target (anything with `path` or `table`)."""
        return cls(path=absolute(target.path)) if target.path else cls(name=target.table)

    @property
    def sql(self) -> str:
        if self.path:
            return f"delta.{quote(self.path)}"
        return ".".join(quote(p) for p in (self.name or "").split("."))

    @property
    def local_folder(self) -> str | None:
        """The folder of a table on this machine's disk (a file lock can hold it), else None."""
        return local_path(self.path) if self.path else None

    @property
    def label(self) -> str:
        return self.path or self.name or "?"

    def child(self, suffix: str) -> "DeltaLocation":
        """A companion table: a hidden folder inside a path table, or a sibling catalog table."""
        if self.path:
            return DeltaLocation(path=join(self.path, companion_folder(suffix)))
        return DeltaLocation(name=companion_name(self.name or "", suffix))

    def table(self, spark: SparkSession) -> DeltaTable:
        if self.path:
            return DeltaTable.forPath(spark, self.path)
        return DeltaTable.forName(spark, self.name)

    def read(self, spark: SparkSession, version: int | None = None) -> DataFrame:
        reader = spark.read.format("delta")
        if version is not None:
            reader = reader.option("versionAsOf", version)
        return reader.load(self.path) if self.path else reader.table(self.name)

    def recent_rows(self, spark: SparkSession, versions: int) -> DataFrame:
        """The rows of the last `versions` versions together (a row once per version it is in)."""
        latest = self.table(spark).history(1).first()["version"]
        frames = [self.read(spark, v) for v in range(latest, max(-1, latest - versions), -1)]
        out = frames[0]
        for frame in frames[1:]:
            out = out.unionByName(frame, allowMissingColumns=True)
        return out

    def as_created(self) -> bool:
        """A table on local disk whose log holds only the commit that created it: no row was
        ever written (read from the folder, without a Spark job)."""
        log = self._local_log()
        return log is not None and newest_commit(log) == 0

    def newest_version(self) -> int | None:
        """The newest commit of a table on local disk (read from the folder, without a Spark
        job), else None."""
        log = self._local_log()
        return newest_commit(log) if log else None

    def stored_bytes(self) -> int | None:
        """The size of the files of a table on local disk at its newest version (without a
        Spark job); 0 before the table is created; None when it is not known here (a table
        elsewhere, a commit without its checksum)."""
        if self.local_folder is not None and self.newest_version() is None:
            return 0
        size = self.checksum().get("tableSizeBytes")
        return None if size is None else int(size)

    def checksum(self, spark: SparkSession | None = None) -> dict[str, Any]:
        """The checksum Delta writes beside each commit (tableSizeBytes, numFiles,
        numDeletedRecordsOpt: the rows deletion vectors mark, …) with the `version` it is of: of a
        table on local disk, its newest version's, read without a Spark job; given `spark`, of a
        table elsewhere (an object store, a catalog), the newest version's as Delta in this JVM
        reads the log (after its own commits, from memory). {} when it is not known here."""
        if self.local_folder is None:
            return {} if spark is None else _snapshot_checksum(self.table(spark))
        version = self.newest_version()
        if version is None:
            return {}
        try:
            figures = json.loads(commit_file(self._local_log(), version).with_suffix(".crc").read_text())
        except (OSError, ValueError):
            return {}
        return {**figures, "version": version} if isinstance(figures, dict) else {}

    def commits_newest_first(self) -> Iterator[dict[str, Any]] | None:
        """The commitInfo of each commit of a table on local disk, newest first (read from the
        folder, without a Spark job), else None."""
        log = self._local_log()
        return None if log is None else (commit_info(commit) for commit in commits_newest_first(log))

    def _local_log(self) -> Path | None:
        folder = self.local_folder
        log = Path(folder, "_delta_log") if folder else None
        return log if log is not None and log.is_dir() else None

    def exists(self, spark: SparkSession) -> bool:
        if self.path:   # its own _delta_log: DeltaTable.isDeltaTable also says yes inside a table
            log = spark._jvm.org.apache.hadoop.fs.Path(self.path, "_delta_log")
            return bool(log.getFileSystem(spark._jsc.hadoopConfiguration()).exists(log))
        return spark.catalog.tableExists(self.name)


def _snapshot_checksum(table: DeltaTable) -> dict[str, Any]:
    """The checksum of the snapshot Delta holds of `table` (refreshed when the table was looked
    up), through Delta's own classes: its Python API does not give it. {} when Delta has none
    (a log without checksums), or its classes are not reached (a session without a JVM of its
    own) or answer otherwise than this version of Delta does."""
    try:
        snapshot = table._jdt.deltaLog().unsafeVolatileSnapshot()
        found = snapshot.checksumOpt()
        if not found.isDefined():
            return {}
        checksum = found.get()
        marked = checksum.numDeletedRecordsOpt()
        return {"version": int(snapshot.version()), "numFiles": int(checksum.numFiles()),
                "tableSizeBytes": int(checksum.tableSizeBytes()),
                "numDeletedRecordsOpt": int(marked.get()) if marked.isDefined() else None}
    except (Py4JError, AttributeError):
        return {}


# Delta refuses these in column names unless the table maps columns by name
NEEDS_MAPPING = re.compile(r"[ ,;{}()\n\t=]")
COLUMN_MAPPING = {"delta.columnMapping.mode": "name"}


def create_if_missing(spark: SparkSession, where: DeltaLocation, columns_ddl: str,
                      properties: dict[str, str] | None = None, column_names: Iterable[str] = ()) -> bool:
    """CREATE TABLE IF NOT EXISTS with the given columns and table properties; column mapping
    by name when a column name has characters Delta allows only that way. An existing table is
    left as it is without a statement (a restart does not pay for one per table). True when
    it created the table."""
    if where.exists(spark):
        return False
    if any(NEEDS_MAPPING.search(n) for n in column_names):
        properties = {**COLUMN_MAPPING, **(properties or {})}
    props = f" TBLPROPERTIES ({_pairs(properties)})" if properties else ""
    spark.sql(f"CREATE TABLE IF NOT EXISTS {where.sql} ({columns_ddl}) USING delta{props}")
    return True


def configure(spark: SparkSession, where: DeltaLocation, table: str, wanted: Mapping[str, str]) -> dict[str, str]:
    """Bring the config's table properties onto an existing table (CREATE sets them only on a
    new one): one ALTER, a metadata commit, for those it lacks or holds with another value (as
    compared ignoring case: 'true' and 'TRUE' are one value to Delta); none when all match, and
    no read when the config sets none. Returns the properties it set."""
    if not wanted:
        return {}
    stored = table_properties(spark, where)
    changed = {k: v for k, v in wanted.items() if stored.get(k, "").lower() != v.lower()}
    if changed:
        try:
            set_table_properties(spark, where, changed)
        except Exception as exc:   # Delta's AnalysisException through Py4J: an unknown or refused property
            raise TablePropertiesRefused(table, changed, one_line(exc)) from exc
    return changed


def table_properties(spark: SparkSession, where: DeltaLocation) -> dict[str, str]:
    return {r["key"]: r["value"] for r in spark.sql(f"SHOW TBLPROPERTIES {where.sql}").collect()}


def set_table_properties(spark: SparkSession, where: DeltaLocation, properties: dict[str, str]) -> None:
    spark.sql(f"ALTER TABLE {where.sql} SET TBLPROPERTIES ({_pairs(properties)})")


def columns_ddl(columns: dict[str, SqlType]) -> str:
    return ", ".join(f"{quote(c)} {t.name}" for c, t in columns.items())


def table_columns(spark: SparkSession, where: DeltaLocation) -> dict[str, SqlType]:
    """User columns of a table as it is now (metadata columns left out)."""
    schema: StructType = where.read(spark).schema
    return {f.name: parse_sql_type(f.dataType.simpleString()) for f in schema.fields
            if not is_own_column(f.name)}


def add_columns(spark: SparkSession, where: DeltaLocation, columns: dict[str, str]) -> None:
    ddl = ", ".join(f"{quote(c)} {t}" for c, t in columns.items())
    spark.sql(f"ALTER TABLE {where.sql} ADD COLUMNS ({ddl})")


def _pairs(properties: dict[str, str]) -> str:
    return ", ".join(f"'{_lit(k)}' = '{_lit(v)}'" for k, v in properties.items())


def _lit(text: str) -> str:
    return text.replace("\\", "\\\\").replace("'", "\\'")
