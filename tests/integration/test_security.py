"""Secrets: SASL/PLAIN against a broker that requires it (the source and a route's
transactional producer), the password from a secret file, and a planted password that appears
nowhere cdc-delta writes: output, errors, metrics, status, the quarantine, the tables and the
checkpoint."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from cdc_delta.config import load_config
from cdc_delta.infra.kafka_io import create_topics, produce, read_topic

from ..conftest import REPO
from ..ports import KAFKA
from ..spark.helpers import quarantine_rows, table_rows
from ..workload import TABLE, history, kafka_records, reference

pytestmark = pytest.mark.slow
PORT = KAFKA["security"]
PLANTED = "Planted-pw-5e1f9c"
WRONG = "Wrong-planted-pw-77ab"
SASL = f"127.0.0.1:{PORT + 2}"
ROUTE = {"name": "credits", "topic": "sec.items.credits", "when": "amount > 0 AND op IN ('c', 'u')"}


def jaas(password: str) -> str:
    return f'org.apache.kafka.common.security.plain.PlainLoginModule required username="cdc" password="{password}";'


@pytest.fixture(scope="module")
def sasl_broker():
    env = {**os.environ, "KAFKA_PORT": str(PORT), "KAFKA_CONTROLLER_PORT": str(PORT + 1), "KAFKA_SASL_PASSWORD": PLANTED}
    subprocess.run(["bash", "scripts/kafka.sh", "reset"], cwd=REPO, env=env, check=True, capture_output=True)
    subprocess.run(["bash", "scripts/kafka.sh", "start"], cwd=REPO, env=env, check=True, capture_output=True)
    yield SASL
    subprocess.run(["bash", "scripts/kafka.sh", "reset"], cwd=REPO, env=env, check=False, capture_output=True)


def options(password_ref: str) -> dict[str, str]:
    return {"kafka.security.protocol": "SASL_PLAINTEXT", "kafka.sasl.mechanism": "PLAIN",
            "kafka.sasl.jaas.config": jaas(password_ref)}


def cli(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "cdc_delta", *args], cwd=REPO, capture_output=True, text=True,
                          timeout=600, env={**os.environ, **(env or {})})


def test_sasl_plain_end_to_end_and_the_password_never_shows(spark, sasl_broker, tmp_path):
    secret_file = tmp_path / "kafka-password"
    secret_file.write_text(PLANTED + "\n")
    changes = history(seed=5, events=120, keys=15)
    records = kafka_records(changes, seed=5, malformed=2)
    records.append((b"k", f'{{"op":"c","note":"{PLANTED[:6]}"'.encode()))   # a bad event, not the secret
    create_topics(sasl_broker, {"sec.items": 2}, options(PLANTED))
    produce(sasl_broker, "sec.items", records, options=options(PLANTED))
    config = {"pipeline": "sec", "source": {"kind": "kafka", "bootstrap_servers": sasl_broker, "topics": ["sec.items"],
                                            "options": options(f"${{file:{secret_file}}}")},
              "lake": str(tmp_path / "lake"), "checkpoint": str(tmp_path / "ck"),
              "tables": [{**TABLE, "routes": [ROUTE]}]}
    path = tmp_path / "pipeline.yaml"
    path.write_text(yaml.safe_dump(config))
    assert PLANTED not in path.read_text()

    outputs = [cli("validate", "--config", str(path)), cli("plan", "--config", str(path)),
               cli("run", "--config", str(path), "--metrics-json", str(tmp_path / "metrics.jsonl")),
               cli("status", "--config", str(path), "--json"), cli("show", "--config", str(path))]
    assert all(o.returncode == 0 for o in outputs), [o.stderr[-2000:] for o in outputs]
    assert json.loads(outputs[3].stdout)["total_lag"] == 0

    # the wrong password from an environment variable: refused by the broker, and not echoed
    config["source"]["options"] = options("${KAFKA_PASSWORD}")
    config["checkpoint"] = str(tmp_path / "ck-wrong")
    wrong = tmp_path / "wrong.yaml"
    wrong.write_text(yaml.safe_dump(config))
    refused = cli("run", "--config", str(wrong), env={"KAFKA_PASSWORD": WRONG})
    assert refused.returncode != 0 and refused.stderr.strip()
    outputs.append(refused)

    loaded = load_config(path)
    assert table_rows(spark, loaded, "items") == reference(changes)
    routed = read_topic(sasl_broker, ROUTE["topic"], options=options(PLANTED))
    assert len(routed) == sum(1 for op, _, row in changes if op in ("c", "u") and row["amount"] > 0)
    quarantined = quarantine_rows(spark, loaded)
    assert len(quarantined) == 3
    written = [o.stdout + o.stderr for o in outputs] + [json.dumps(quarantined, default=str)]
    written += [p.read_bytes().decode("utf-8", "replace") for p in _files(tmp_path) if p != secret_file]
    for secret in (PLANTED, WRONG):
        leaks = [text[max(0, text.find(secret) - 80):text.find(secret) + 40] for text in written if secret in text]
        assert not leaks, leaks


def _files(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file() and p.suffix not in (".parquet", ".crc")]
