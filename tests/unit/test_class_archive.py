"""The class archive's name keys what the JVM checks it against, and a session is told of it
only when it is made (tests/spark/test_class_archive.py: that a session maps it)."""

import os

from cdc_delta.infra import class_archive
from cdc_delta.infra.class_archive import archive_file, fingerprint, java_options

FLAGS = "-XX:+UseParallelGC"


def jars_and_java(tmp_path):
    jars = tmp_path / "jars"
    jars.mkdir()
    for name in ("spark-core.jar", "spark-sql.jar"):
        (jars / name).write_bytes(b"classes")
    java = tmp_path / "java"
    java.write_bytes(b"binary")
    return jars, str(java)


def test_the_fingerprint_changes_with_a_jar_the_java_or_the_flags(tmp_path):
    jars, java = jars_and_java(tmp_path)
    first = fingerprint(FLAGS, jars, java)
    assert fingerprint(FLAGS, jars, java) == first
    assert fingerprint("-XX:+UseG1GC", jars, java) != first
    (jars / "spark-sql.jar").write_bytes(b"classes, rebuilt")
    resized = fingerprint(FLAGS, jars, java)
    assert resized != first
    os.utime(jars / "spark-core.jar", ns=(0, 0))
    assert fingerprint(FLAGS, jars, java) != resized
    (jars / "delta.jar").write_bytes(b"more")
    added = fingerprint(FLAGS, jars, java)
    assert fingerprint(FLAGS, jars, str(tmp_path / "jars" / "delta.jar")) != added


def test_a_session_is_told_of_the_archive_only_once_it_is_made(tmp_path, monkeypatch):
    # told of a missing file, the JVM would start without even the JDK's own shared classes
    monkeypatch.setenv("CDC_DELTA_CACHE", str(tmp_path))
    assert java_options(FLAGS) == ""
    made = archive_file(FLAGS)
    assert made.parent == tmp_path / "jvm"
    made.parent.mkdir()
    made.write_bytes(b"archive")
    assert java_options(FLAGS) == f"-XX:SharedArchiveFile={made} {class_archive.QUIET}"


def test_without_java_a_session_starts_without_the_archive(tmp_path, monkeypatch):
    monkeypatch.setenv("CDC_DELTA_CACHE", str(tmp_path))
    monkeypatch.setenv("JAVA_HOME", str(tmp_path / "no-java"))
    assert java_options(FLAGS) == ""
