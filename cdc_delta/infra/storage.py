"""Paths on local disk or an object store, and the small files cdc-delta keeps beside a
checkpoint, read and written through Hadoop's FileSystem (so `s3a://`, `abfss://`, `gs://`,
`dbfs:/` and local paths take one code path).

A path with a scheme (`s3a://bucket/x`, `dbfs:/x`, `file:/x`) is used as written; a plain path
is made absolute (`/Volumes/...` on Databricks is a plain path)."""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*:/")
MOUNTED_STORE = ("/Volumes/", "/dbfs/")


def is_uri(path: str) -> bool:
    return bool(SCHEME.match(path))


def scheme(path: str) -> str:
    """'s3a' for s3a://…, 'file' for a plain path."""
    return path.split(":", 1)[0].lower() if is_uri(path) else "file"


def local_path(path: str) -> str | None:
    """The path on this machine's disk (`file:/x` -> `/x`), or None on an object store
    (Databricks' `/Volumes/…` and `/dbfs/…` are cloud storage mounted, without file locks)."""
    if not is_uri(path):
        return None if path.startswith(MOUNTED_STORE) else path
    if scheme(path) == "file":
        return "/" + path.split(":", 1)[1].lstrip("/")
    return None


def absolute(path: str) -> str:
    return path if is_uri(path) else os.path.abspath(path)


def join(base: str, *parts: str) -> str:
    out = base
    for part in parts:
        out = f"{out.rstrip('/')}/{part}" if is_uri(out) else os.path.join(out, part)
    return out


class Files:
    """Small text files under one folder, through Hadoop's FileSystem of the session."""

    def __init__(self, spark: "SparkSession", folder: str) -> None:
        self.jvm = spark._jvm
        self.conf = spark._jsc.hadoopConfiguration()
        self.folder = absolute(folder)

    def _path(self, *parts: str):
        path = self.jvm.org.apache.hadoop.fs.Path(join(self.folder, *parts) if parts else self.folder)
        return path, path.getFileSystem(self.conf)

    def exists(self, *parts: str) -> bool:
        path, fs = self._path(*parts)
        return bool(fs.exists(path))

    def read_text(self, *parts: str) -> str:
        path, fs = self._path(*parts)
        stream = fs.open(path)
        try:
            return self.jvm.org.apache.commons.io.IOUtils.toString(stream, "UTF-8")
        finally:
            stream.close()

    def write_text(self, name: str, text: str) -> None:
        """Write whole: to a temporary name, then renamed over the old file (on an object store
        the PUT of the temporary file is itself atomic)."""
        path, fs = self._path(name)
        tmp, _ = self._path(f".{name}.tmp")
        out = fs.create(tmp, True)
        try:
            out.write(bytearray(text.encode("utf-8")))
        finally:
            out.close()
        if fs.exists(path):
            fs.delete(path, False)
        if not fs.rename(tmp, path):
            raise OSError(f"could not rename {tmp} to {path}")

    def names(self, *parts: str) -> list[str]:
        """Names of the entries of a sub-folder ([] when it does not exist)."""
        path, fs = self._path(*parts)
        if not fs.exists(path):
            return []
        return [s.getPath().getName() for s in fs.listStatus(path)]
