"""A local Kafka broker per test module (scripts/kafka.sh), on the module's KAFKA_PORT, so
modules can run side by side."""

from __future__ import annotations

import os
import subprocess

import pytest

from ..conftest import REPO


def kafka_env(port: int) -> dict[str, str]:
    return {**os.environ, "KAFKA_PORT": str(port), "KAFKA_CONTROLLER_PORT": str(port + 1)}


@pytest.fixture(scope="module")
def broker(request):
    env = kafka_env(request.module.KAFKA_PORT)
    subprocess.run(["bash", "scripts/kafka.sh", "reset"], cwd=REPO, env=env, check=True, capture_output=True)
    subprocess.run(["bash", "scripts/kafka.sh", "start"], cwd=REPO, env=env, check=True)
    yield f"127.0.0.1:{request.module.KAFKA_PORT}"
    subprocess.run(["bash", "scripts/kafka.sh", "reset"], cwd=REPO, env=env, check=False, capture_output=True)
