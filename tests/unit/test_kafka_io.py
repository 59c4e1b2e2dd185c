"""librdkafka clients built from a pipeline's Java-client options (no broker needed)."""

from __future__ import annotations

import pytest
from confluent_kafka import Consumer, KafkaException

from cdc_delta.infra.kafka_io import _client, _common


def test_java_only_settings_are_left_to_spark():
    options = {"kafka.default.api.timeout.ms": "5000", "kafka.max.poll.records": "5",
               "kafka.request.timeout.ms": "3000", "kafka.security.protocol": "PLAINTEXT"}
    conf = {**_common("127.0.0.1:1", options), "group.id": "t"}
    assert "default.api.timeout.ms" in conf
    _client(Consumer, conf).close()      # built: the two Java-only names are dropped


def test_a_bad_value_of_a_known_setting_still_fails():
    with pytest.raises(KafkaException, match="security.protocol"):
        _client(Consumer, {**_common("127.0.0.1:1", {"kafka.security.protocol": "NOPE"}), "group.id": "t"})
