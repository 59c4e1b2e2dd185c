"""A session cdc-delta starts maps the class archive setup made: Spark's classes come from it,
not from their jars, in a process of its own (the JVM's class-loading log says where each
class came from)."""

import os
import subprocess
import sys

import pytest

from cdc_delta.ops.make_class_archive import make
from cdc_delta.infra.session import JVM_GC

pytestmark = pytest.mark.spark

START_A_SESSION = "from cdc_delta.infra.session import get_spark; get_spark('archive-test').range(3).count()"


def test_a_new_session_loads_sparks_classes_from_the_archive(tmp_path):
    make(JVM_GC)      # made by setup already: then nothing to do
    log = tmp_path / "classes.log"
    env = {**os.environ, "JAVA_TOOL_OPTIONS": f"-Xlog:class+load=info:file={log}"}
    subprocess.run([sys.executable, "-c", START_A_SESSION], env=env, check=True, capture_output=True, timeout=300)
    loaded = [line.split(" source: ")[-1] for line in log.read_text().splitlines()
              if " org.apache.spark.sql.SparkSession source: " in line]
    assert loaded == ["shared objects file (top)"]
