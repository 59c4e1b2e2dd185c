"""docker-compose.yml can not run here (no Docker engine), so its structure is checked against
what does run: the service scripts, the connector files and the pipeline configs."""

from __future__ import annotations

import json
import re

import pytest
import yaml

from cdc_delta.config import load_config
from devtools.sandbox.chain import pipeline_config
from devtools.sandbox.databases import mariadb_from_env, postgres_from_env

from ..conftest import REPO

COMPOSE = yaml.safe_load((REPO / "docker-compose.yml").read_text())
SERVICES = COMPOSE["services"]


def script_setting(script: str, name: str) -> str:
    """NAME=value or NAME=${ENV:-value} in scripts/<script>.sh."""
    text = (REPO / "scripts" / f"{script}.sh").read_text()
    m = re.search(rf"^{name}=(?:\$\{{\w+:-)?([^}}\s]+)\}}?$", text, re.M)
    assert m, f"{name} not set in scripts/{script}.sh"
    return m.group(1)


def connector(engine: str) -> dict:
    return json.loads((REPO / "connectors" / f"{engine}.json").read_text())["config"]


def test_compose_has_the_whole_chain():
    assert {"kafka", "postgres", "mariadb", "connect", "register", "cdc-delta-postgres",
            "cdc-delta-mariadb"} <= set(SERVICES)
    assert set(SERVICES["connect"]["depends_on"]) == {"kafka", "postgres", "mariadb"}


@pytest.mark.parametrize("service,script,setting", [
    ("kafka", "kafka", "KAFKA_VERSION"), ("connect", "connect", "DEBEZIUM_VERSION")])
def test_compose_images_are_the_versions_the_scripts_run(service, script, setting):
    assert SERVICES[service]["image"].rsplit(":", 1)[1] == script_setting(script, setting)


@pytest.mark.parametrize("service,script", [
    ("kafka", "kafka"), ("postgres", "postgres"), ("mariadb", "mariadb"), ("connect", "connect")])
def test_compose_ports_are_the_scripts_defaults(service, script):
    assert SERVICES[service]["ports"] == [f"{script_setting(script, 'PORT')}:{script_setting(script, 'PORT')}"]


def test_databases_are_configured_for_debezium_as_the_scripts_do():
    pg_conf = (REPO / "scripts" / "postgres.sh").read_text()
    assert "wal_level=logical" in SERVICES["postgres"]["command"] and "wal_level = logical" in pg_conf
    maria_conf = (REPO / "scripts" / "mariadb.sh").read_text()
    for flag, setting in [("--binlog-format=ROW", "binlog_format = ROW"),
                          ("--binlog-row-image=FULL", "binlog_row_image = FULL"), ("--server-id=1", "server-id = 1")]:
        assert flag in SERVICES["mariadb"]["command"] and setting in maria_conf
    grants = (REPO / "docker" / "mariadb-grants.sql").read_text()
    assert "REPLICATION SLAVE, BINLOG MONITOR" in grants and "REPLICATION SLAVE, BINLOG MONITOR" in maria_conf


@pytest.mark.parametrize("engine,db_env,user_env", [
    ("postgres", "POSTGRES_DB", "POSTGRES_USER"), ("mariadb", "MARIADB_DATABASE", "MARIADB_USER")])
def test_connectors_reach_the_compose_databases(engine, db_env, user_env):
    config, env = connector(engine), SERVICES[engine]["environment"]
    assert config["database.user"] == env[user_env] == script_setting(engine, "DB_USER")
    database = config.get("database.dbname") or config["database.include.list"]
    assert database == env[db_env] == script_setting(engine, "DATABASE")
    assert config["database.port"] == script_setting(engine, "PORT")
    assert config["database.password"].startswith("${env:")      # never a literal secret
    assert config["database.password"][6:-1] in SERVICES["connect"]["environment"]
    assert config["decimal.handling.mode"] == "precise"
    assert config["skipped.operations"] == "none"                 # truncates reach the pipeline
    assert SERVICES["connect"]["environment"]["CONNECT_CONFIG_PROVIDERS"] == "env"


def test_registration_names_existing_connectors():
    command = SERVICES["register"]["command"]
    engines = [command[i + 1] for i, arg in enumerate(command) if arg == "--engine"]
    assert engines and all((REPO / "connectors" / f"{e}.json").exists() for e in engines)


@pytest.mark.parametrize("engine,prefix,db", [("postgres", "pg", postgres_from_env), ("mariadb", "maria", mariadb_from_env)])
def test_pipeline_configs_read_the_connectors_topics(engine, prefix, db, monkeypatch):
    for name in ("PG_PORT", "PG_DATABASE", "MARIADB_PORT", "MARIADB_DATABASE", "KAFKA_BOOTSTRAP"):
        monkeypatch.delenv(name, raising=False)
    assert connector(engine)["topic.prefix"] == prefix
    config = load_config(REPO / "configs" / f"{engine}.yaml")
    expected = pipeline_config(db(), prefix, "127.0.0.1:9092", f"lake/{engine}")
    assert config.source.topics == expected["source"]["topics"]
    assert [t.model_dump(by_alias=True, exclude_defaults=True) for t in config.tables] == \
        [load_config_table(t) for t in expected["tables"]]
    included = connector(engine)["table.include.list"].split(",")
    assert [t.split(".")[-1] for t in included] == [t.name for t in config.tables]
    compose_job = SERVICES[f"cdc-delta-{engine}"]["command"]
    assert f"configs/{engine}.yaml" in compose_job


def load_config_table(raw: dict) -> dict:
    from cdc_delta.config.models import TableSpec

    return TableSpec.model_validate(raw).model_dump(by_alias=True, exclude_defaults=True)
