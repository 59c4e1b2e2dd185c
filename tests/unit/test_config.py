from __future__ import annotations

import copy

import pytest

from cdc_delta.cli import main
from cdc_delta.config import load_config, parse_config
from cdc_delta.config.models import duration_ms
from cdc_delta.errors import ConfigError

BASE = {
    "pipeline": "p", "source": {"kind": "files", "path": "in"},
    "tables": [{"name": "orders", "keys": ["id"],
                "columns": {"id": "bigint", "amount": {"type": "decimal(10,2)", "encoding": "Decimal"},
                            "at": {"type": "timestamp", "encoding": "io.debezium.time.MicroTimestamp"}}}],
}


def broken(mutate) -> ConfigError:
    raw = copy.deepcopy(BASE)
    mutate(raw)
    with pytest.raises(ConfigError) as info:
        parse_config(raw, "p.yaml")
    return info.value


def test_valid_config_defaults():
    config = parse_config(copy.deepcopy(BASE))
    table = config.tables[0]
    assert table.column_specs["at"].encoding == "MicroTimestamp"
    assert table.column_specs["amount"].type == "decimal(10,2)"
    assert config.checkpoint_path == "checkpoints/p"
    assert config.target_of(table).path == "lake/orders"
    assert config.quarantine_location.path == "lake/_quarantine"
    assert table.schema_change == "evolve" and table.truncate == "apply"
    assert table.retention_ms == 7 * 86_400_000


def test_unknown_key_is_refused_with_file_and_field():
    err = broken(lambda r: r["tables"][0].update(primary_key=["id"]))
    assert (err.file, err.field) == ("p.yaml", "tables[0].primary_key")
    assert "unknown key" in str(err)


def test_bad_policy_names_allowed_values():
    err = broken(lambda r: r["tables"][0].update(truncate="drop"))
    assert err.field == "tables[0].truncate" and err.value == "drop"
    assert err.allowed == ["apply", "ignore", "fail"]


def test_bad_type_names_allowed_types():
    err = broken(lambda r: r["tables"][0]["columns"].update(x="varchar(3)"))
    assert err.field == "tables[0].columns.x.type" and "decimal(p,s)" in str(err)


def test_key_must_be_declared():
    err = broken(lambda r: r["tables"][0].update(keys=["order_id"]))
    assert "'order_id' is not a declared column" in str(err)


def test_column_list_and_except_are_exclusive():
    err = broken(lambda r: r["tables"][0].update(column_list=["id"], except_column_list=["at"]))
    assert "not both" in str(err)


def test_unknown_encoding_and_source_kind():
    assert "unknown encoding" in str(broken(lambda r: r["tables"][0]["columns"].update(y={"type": "date", "encoding": "Days"})))
    assert broken(lambda r: r["source"].update(kind="s3")).allowed == ["files", "kafka"]


def test_duplicate_tables_refused():
    err = broken(lambda r: r["tables"].append(copy.deepcopy(r["tables"][0])))
    assert "repeated: orders" in str(err)


def test_kafka_needs_exactly_one_subscription():
    err = broken(lambda r: r.update(source={"kind": "kafka", "bootstrap_servers": "localhost:9092"}))
    assert "topics" in str(err) and "topic_pattern" in str(err)


def test_env_interpolation(tmp_path, monkeypatch):
    path = tmp_path / "p.yaml"
    path.write_text("pipeline: p\nsource: {kind: kafka, bootstrap_servers: '${BROKER}', topics: [t],"
                    " options: {kafka.sasl.jaas.config: '${JAAS:-none}'}}\n"
                    "tables: [{name: t, keys: [id], columns: {id: bigint}}]\n")
    monkeypatch.setenv("BROKER", "localhost:9999")
    config = load_config(path)
    assert config.source.bootstrap_servers == "localhost:9999"
    assert config.source.options["kafka.sasl.jaas.config"] == "none"
    monkeypatch.delenv("BROKER")
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert "BROKER is not set" in str(info.value) and info.value.field == "source.bootstrap_servers"


def test_invalid_yaml_names_line(tmp_path):
    path = tmp_path / "p.yaml"
    path.write_text("pipeline: p\ntables: [\n")
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert info.value.file == str(path) and info.value.field.startswith("line ")


@pytest.mark.parametrize("text,ms", [("500 ms", 500), ("30 seconds", 30_000), ("7 days", 604_800_000), ("2h", 7_200_000)])
def test_durations(text, ms):
    assert duration_ms(text) == ms


def test_cli_validate_one_line_error_and_exit_code(tmp_path, capsys):
    path = tmp_path / "p.yaml"
    path.write_text("pipeline: p\nsource: {kind: files, path: x}\ntables: [{name: t, keys: [id], columns: {id: bigint}, mode: x}]\n")
    assert main(["validate", "--config", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and "\n" not in err and "tables[0].mode" in err


def test_cli_validate_and_plan_ok(capsys):
    assert main(["validate", "--config", "configs/files-demo.yaml"]) == 0
    assert main(["plan", "--config", "configs/files-demo.yaml"]) == 0
    out = capsys.readouterr().out
    assert "keys: order_id" in out and "amount decimal(10,2)" in out


def test_cli_bad_trigger(capsys):
    assert main(["run", "--config", "configs/files-demo.yaml", "--trigger", "soon"]) == 2
    assert "--trigger" in capsys.readouterr().err


def with_history(**history) -> dict:
    raw = copy.deepcopy(BASE)
    raw["tables"].append({"name": "orders_history", "from": "orders", "stored_as": "scd2", **history})
    return raw


def test_a_table_from_another_takes_its_match_keys_and_columns():
    config = parse_config(with_history(track_history_except_column_list=["at"]))
    source, history = config.tables
    assert history.keys == source.keys and history.columns == source.columns
    assert history.source_table == "orders" and history.effective_match == source.effective_match
    assert [t.name for t in config.source_tables] == ["orders"]
    assert [t.name for t in config.fed_by("orders")] == ["orders", "orders_history"]


def test_from_names_a_table_of_the_pipeline_and_takes_no_columns_of_its_own():
    with pytest.raises(ConfigError, match="from: 'order' is not a table of the pipeline"):
        parse_config({**with_history(), "tables": [*BASE["tables"], {"name": "h", "from": "order"}]})
    with pytest.raises(ConfigError, match="keys comes from table 'orders'"):
        parse_config(with_history(keys=["id"]))


def test_tracked_columns_go_with_scd2_and_name_value_columns():
    err = broken(lambda r: r["tables"][0].update(track_history_column_list=["amount"]))
    assert "go with stored_as: scd2" in str(err)
    with pytest.raises(ConfigError, match="'id' is not a written value column"):
        parse_config(with_history(track_history_column_list=["id"]))
    with pytest.raises(ConfigError, match="not both"):
        parse_config(with_history(track_history_column_list=["amount"], track_history_except_column_list=["at"]))


ROUTE = {"name": "big", "topic": "orders.big", "when": "amount > 10000"}


def kafka(raw: dict) -> dict:
    return {**raw, "source": {"kind": "kafka", "bootstrap_servers": "localhost:9092", "topics": ["orders"]}}


def test_routes_need_a_kafka_source_and_a_current_state_table():
    raw = copy.deepcopy(BASE)
    raw["tables"][0]["routes"] = [ROUTE]
    with pytest.raises(ConfigError, match="routes need a kafka source"):
        parse_config(raw)
    assert parse_config(kafka(raw)).tables[0].routes[0].format == "row"
    history = kafka(copy.deepcopy(BASE))
    history["tables"][0].update(stored_as="scd2", routes=[ROUTE])
    with pytest.raises(ConfigError, match="routes go on a current-state table"):
        parse_config(history)
    fed = kafka(with_history())
    fed["tables"][1]["routes"] = [ROUTE]
    with pytest.raises(ConfigError, match="routes go on table 'orders', the table its events are routed to"):
        parse_config(fed)


def test_route_columns_must_be_written_and_names_unique():
    raw = kafka(copy.deepcopy(BASE))
    raw["tables"][0]["routes"] = [{**ROUTE, "key": ["customer"]}]
    with pytest.raises(ConfigError, match="key: 'customer' is not a written column"):
        parse_config(raw)
    raw["tables"][0]["routes"] = [ROUTE, ROUTE]
    with pytest.raises(ConfigError, match="route names must be unique"):
        parse_config(raw)


def test_the_kafka_reader_waits_briefly_for_a_fetch_unless_the_config_says_otherwise():
    from cdc_delta.run.sources import kafka_options

    kafka = {"kind": "kafka", "bootstrap_servers": "b:9092", "topics": ["t"]}
    default = parse_config({**copy.deepcopy(BASE), "source": kafka})
    chosen = parse_config({**copy.deepcopy(BASE), "source": {**kafka, "options": {"kafka.fetch.max.wait.ms": "200"}}})
    assert kafka_options(default.source)["kafka.fetch.max.wait.ms"] == "10"
    assert kafka_options(chosen.source)["kafka.fetch.max.wait.ms"] == "200"
