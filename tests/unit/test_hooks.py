"""Hooks are injected, not read from the environment in the batch: the CLI reads
CDC_DELTA_FAULT once, and a misspelt point is refused before anything runs."""

from __future__ import annotations

import pytest

from cdc_delta import cli
from cdc_delta.errors import ConfigError
from cdc_delta.hooks import Hooks, KillAt, from_environment


def test_no_fault_means_no_op_hooks():
    hooks = from_environment({})
    assert type(hooks) is Hooks
    hooks.point("committed")
    with hooks.during("merge"):
        pass


def test_fault_names_its_point_and_visit():
    hooks = from_environment({"CDC_DELTA_FAULT": "merge@3", "CDC_DELTA_FAULT_SEED": "7"})
    assert isinstance(hooks, KillAt) and (hooks.name, hooks.visit) == ("merge", 3)
    hooks.point("read")                # another point: passes, and is not counted
    assert hooks.visits == 0


@pytest.mark.parametrize("text", ["merg@1", "merge@x"])
def test_a_misspelt_fault_is_refused(text):
    with pytest.raises(ConfigError) as info:
        from_environment({"CDC_DELTA_FAULT": text})
    assert info.value.allowed == ["read", "merge", "quarantine", "route", "committed"]


def test_cli_refuses_a_misspelt_fault_before_spark(tmp_path, monkeypatch, capsys):
    config = tmp_path / "p.yaml"
    config.write_text("pipeline: p\nsource: {kind: files, path: in}\ntables:\n"
                      "  - {name: t, match: {table: t}, keys: [id], columns: {id: bigint}}\n")
    monkeypatch.setenv("CDC_DELTA_FAULT", "comitted@2")
    assert cli.main(["run", "--config", str(config)]) == 2
    assert "unknown fault point (got 'comitted')" in capsys.readouterr().err
