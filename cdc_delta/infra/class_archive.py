"""A class-data archive of the JVM classes a cdc-delta run loads (Java's AppCDS), made once by
setup and mapped by each local session cdc-delta starts. The JVM then maps those classes from
one file, parsed and verified, instead of reading them from some 250 jars: a new session was
ready in 3.5 s instead of 6, and the demo's process took 3.3 s less (`python -m
benchmarks.cold_start`; its first batch took as long).

The archive is made by ops/make_class_archive.py (scripts/class_archive.sh runs it). It fits one
Java and one set of pyspark's jars, and its name is a digest of them: after an upgrade a session
starts without one until setup makes the new one. A JVM given an archive that does not fit
starts without it, silently."""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

import pyspark

from .jars import cache_root

# the JVM's own lines about the archive (one that does not fit) stay off the user's output
QUIET = "-Xlog:cds=off,cds+dynamic=off"


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
    """`<install_prefix>-<fingerprint>.jsa`."""
    return cache_root() / "jvm" / f"{install_prefix()}-{fingerprint(flags)}.jsa"


def install_prefix() -> str:
    """`classes-<digest of pyspark's place>`: each Python environment keeps its own archives."""
    return f"classes-{hashlib.sha256(str(_pyspark_jars()).encode()).hexdigest()[:8]}"


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
