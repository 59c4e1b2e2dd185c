"""Secrets read from files or secret-named environment variables are masked in every line the
CLI writes, even when a misplaced secret ends up in an error message."""

from __future__ import annotations

import yaml

from cdc_delta import cli
from cdc_delta.infra.kafka_io import _common

SECRET = "s3cr3t-Planted-Value"


def write(tmp_path, interval: str):
    path = tmp_path / "p.yaml"
    path.write_text(yaml.safe_dump({
        "pipeline": "p", "source": {"kind": "files", "path": str(tmp_path)},
        "trigger": {"kind": "processing_time", "interval": interval},
        "tables": [{"name": "t", "keys": ["id"], "columns": {"id": "bigint"}}]}))
    return path


def test_a_secret_from_a_file_is_masked_in_errors(tmp_path, capsys):
    (tmp_path / "secret").write_text(SECRET + "\n")
    assert cli.main(["validate", "--config", str(write(tmp_path, f"${{file:{tmp_path / 'secret'}}}"))]) == 2
    err = capsys.readouterr().err
    assert SECRET not in err and "not a duration: '***'" in err


def test_a_secret_named_environment_variable_is_masked(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("DB_PASSWORD", SECRET + "2")
    assert cli.main(["validate", "--config", str(write(tmp_path, "${DB_PASSWORD}"))]) == 2
    err = capsys.readouterr().err
    assert SECRET + "2" not in err and "***" in err


def test_a_missing_secret_file_is_named_not_read(tmp_path, capsys):
    assert cli.main(["validate", "--config", str(write(tmp_path, f"${{file:{tmp_path / 'nope'}}}"))]) == 2
    assert f"secret file {tmp_path / 'nope'} can not be read" in capsys.readouterr().err


def test_java_kafka_security_settings_become_librdkafka_ones():
    jaas = 'org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="p w";'
    conf = _common("b:1", {"kafka.security.protocol": "SASL_SSL", "kafka.sasl.mechanism": "PLAIN",
                           "kafka.sasl.jaas.config": jaas, "kafka.ssl.truststore.location": "/x.jks",
                           "kafka.metadata.max.age.ms": "1000"})
    assert conf == {"bootstrap.servers": "b:1", "log_level": "3", "security.protocol": "SASL_SSL",
                    "sasl.mechanisms": "PLAIN", "sasl.username": "u", "sasl.password": "p w",
                    "metadata.max.age.ms": "1000"}
