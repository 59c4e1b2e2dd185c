"""The benchmarks' own Kafka broker (scripts/kafka.sh on a port of their own) and the shape of
their topics."""

from __future__ import annotations

import os
import subprocess

from .measure import REPO

PARTITIONS = 3     # each benchmark stream's topic


def kafka(command: str, port: int) -> None:
    """`reset`, `start` or `stop` the broker on `port` (its controller on the next port)."""
    env = {**os.environ, "KAFKA_PORT": str(port), "KAFKA_CONTROLLER_PORT": str(port + 1)}
    subprocess.run(["bash", "scripts/kafka.sh", command], cwd=REPO, env=env, check=True, capture_output=True)
