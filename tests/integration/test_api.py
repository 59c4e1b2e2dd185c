"""The README's foreachBatch example, as written, on a real broker: a stream the user owns
gives the same table as `cdc-delta run` on the same topic."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
import yaml

from cdc_delta import cli
from cdc_delta.config import load_config

from ..conftest import REPO
from ..ports import KAFKA
from ..readme_examples import python_examples
from ..spark.helpers import table_rows

pytestmark = pytest.mark.slow
KAFKA_PORT = int(os.environ.get("CDC_DELTA_TEST_API_KAFKA_PORT", str(KAFKA["api"])))


def test_user_owned_foreach_batch_equals_cdc_delta_run(spark, broker, tmp_path, monkeypatch):
    from devtools.demo import produce_samples   # noqa: the sample producer

    produce_samples(broker)
    monkeypatch.setenv("KAFKA_BOOTSTRAP", broker)
    monkeypatch.chdir(tmp_path)
    # Spark resolves the example's relative checkpoint against the JVM's folder (the repo's)
    shutil.rmtree(REPO / "checkpoints" / "orders-stream", ignore_errors=True)
    scope: dict = {"spark": spark}
    exec(python_examples()[1], scope)
    user_owned = scope["pipeline"].config

    config = yaml.safe_load((REPO / "configs" / "demo.yaml").read_text())
    config.update(pipeline="orders-cli", lake=str(tmp_path / "cli-lake"), checkpoint=str(tmp_path / "cli-ck"),
                  tables=[t for t in config["tables"] if t["name"] == "orders"])
    config["source"]["topics"] = ["dbserver1.shop.orders"]
    path = Path(tmp_path / "cli.yaml")
    path.write_text(yaml.safe_dump(config))
    assert cli.main(["run", "--config", str(path)]) == 0
    expected = table_rows(spark, load_config(path), "orders")
    assert [r["order_id"] for r in expected] == [1, 2, 3, 5]
    assert table_rows(spark, user_owned, "orders") == expected
    shutil.rmtree(REPO / "checkpoints" / "orders-stream", ignore_errors=True)
