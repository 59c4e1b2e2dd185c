"""Producing, topic admin and end offsets through confluent-kafka (librdkafka): for the demo,
the tests and `cdc-delta status`. The pipeline itself reads Kafka only through Spark."""

from __future__ import annotations

import contextlib
import re
import time
import warnings
from typing import Iterable

from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from ..errors import SetupError


# Java client settings with another name in librdkafka, and those it has no equivalent for
RENAMED = {"sasl.mechanism": "sasl.mechanisms"}
JAVA_ONLY = re.compile(r"^(sasl\.jaas\.config|sasl\.login\..*|ssl\.(truststore|keystore)\..*|.*\.class)$")
UNKNOWN_PROPERTY = re.compile(r'No such configuration property: "([^"]+)"')
JAAS_FIELD = re.compile(r'\b(username|password)\s*=\s*"([^"]*)"')


def _common(bootstrap: str, options: dict[str, str] | None) -> dict[str, str]:
    """librdkafka settings from the pipeline's `kafka.*` Spark options (the Java client's names):
    SASL and SSL settings carry over, a PLAIN/SCRAM JAAS line becomes sasl.username/password."""
    conf = {"bootstrap.servers": bootstrap, "log_level": "3"}
    for key, value in (options or {}).items():
        if not key.startswith("kafka.") or key == "kafka.bootstrap.servers":
            continue
        name = key[len("kafka."):]
        if name == "sasl.jaas.config":
            conf.update({f"sasl.{field}": v for field, v in JAAS_FIELD.findall(value)})
        elif not JAVA_ONLY.match(name):
            conf[RENAMED.get(name, name)] = value
    return conf


def _client(factory, conf: dict[str, str]):
    """A librdkafka client from settings written for the Java client: those librdkafka has no
    property for (default.api.timeout.ms, max.poll.records, …) only tune Spark's reader."""
    conf = dict(conf)
    while True:
        try:
            return factory(conf)
        except KafkaException as exc:
            unknown = UNKNOWN_PROPERTY.search(str(exc))
            if not unknown or unknown.group(1) not in conf:
                raise
            del conf[unknown.group(1)]


def create_topics(bootstrap: str, topics: dict[str, int], options: dict[str, str] | None = None) -> None:
    """Create topics (name -> partitions) that do not exist yet."""
    admin = _client(AdminClient, _common(bootstrap, options))
    existing = set(admin.list_topics(timeout=10).topics)
    wanted = [NewTopic(t, num_partitions=n, replication_factor=1) for t, n in topics.items() if t not in existing]
    for topic, future in (admin.create_topics(wanted) if wanted else {}).items():
        try:
            future.result(timeout=30)
        except Exception as exc:  # noqa: BLE001 - a topic created meanwhile is fine
            if "TOPIC_ALREADY_EXISTS" not in str(exc):
                raise SetupError(f"could not create topic {topic} on {bootstrap}: {exc}") from None


def produce(bootstrap: str, topic: str, records: Iterable[tuple[bytes | None, bytes | None]],
            partition: int | None = None, options: dict[str, str] | None = None) -> int:
    """Send (key, value) records in order and wait until all are acknowledged."""
    producer = _client(Producer, {**_common(bootstrap, options), "enable.idempotence": True, "linger.ms": 5})
    count = 0
    for key, value in records:
        kwargs = {"partition": partition} if partition is not None else {}
        while True:
            try:
                producer.produce(topic, value=value, key=key, **kwargs)
                break
            except BufferError:
                producer.poll(0.1)
        count += 1
    remaining = producer.flush(60)
    if remaining:
        raise SetupError(f"{remaining} records to {topic} were not acknowledged by {bootstrap}")
    return count


def end_offsets(bootstrap: str, topics: list[str], options: dict[str, str] | None = None) -> dict[str, dict[int, int]]:
    """The next offset to be written, per topic and partition."""
    conf = {**_common(bootstrap, options), "group.id": "cdc-delta-status", "enable.auto.commit": False}
    consumer = _client(Consumer, conf)
    try:
        meta = consumer.list_topics(timeout=10)
        out: dict[str, dict[int, int]] = {}
        for topic in topics:
            if topic not in meta.topics:
                continue
            for p in meta.topics[topic].partitions:
                _, high = consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=10)
                out.setdefault(topic, {})[p] = high
        return out
    finally:
        consumer.close()


def read_topic(bootstrap: str, topic: str, isolation: str = "read_committed",
               options: dict[str, str] | None = None, timeout_s: float = 60) -> list:
    """Every message of a topic as a consumer of that isolation level sees it (a route's
    consumer: read_committed), in each partition's order."""
    conf = {**_common(bootstrap, options), "group.id": f"cdc-delta-read-{isolation}",
            "isolation.level": isolation, "enable.auto.commit": False}
    consumer = _client(Consumer, conf)
    try:
        parts = [TopicPartition(topic, p, 0) for p in consumer.list_topics(topic, timeout=10).topics[topic].partitions]
        consumer.assign(parts)
        ends = {p.partition: consumer.get_watermark_offsets(p, timeout=10)[1] for p in parts}
        out, deadline = [], time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if all(consumer.position([TopicPartition(topic, p)])[0].offset >= end for p, end in ends.items() if end):
                return out
            msg = consumer.poll(1)
            if msg is not None and not msg.error():
                out.append(msg)
        raise SetupError(f"{topic} on {bootstrap} was not read to its end {ends} in {timeout_s:.0f} s")
    finally:
        consumer.close()


def topics_matching(bootstrap: str, pattern: str, options: dict[str, str] | None = None) -> list[str]:
    names = _client(AdminClient, _common(bootstrap, options)).list_topics(timeout=10).topics
    return sorted(t for t in names if re.fullmatch(pattern, t))


class TransactionalProducer:
    """One transactional id's producer and the ledger it commits with each transaction: the
    source offsets it has forwarded, kept as the committed offsets of a consumer group of the
    same name (Kafka's consume-transform-produce pattern), so what a transaction sent and the
    offsets it sent them for land together or not at all."""

    def __init__(self, bootstrap: str, options: dict[str, str] | None, transactional_id: str) -> None:
        common = _common(bootstrap, options)
        self.transactional_id = transactional_id
        self.producer = _client(Producer, {**common, "transactional.id": transactional_id,
                                           "enable.idempotence": True, "linger.ms": 5,
                                           "partitioner": "murmur2_random"})   # the Java client's key hash
        self.ledger = _client(Consumer, {**common, "group.id": transactional_id, "enable.auto.commit": False,
                                         "isolation.level": "read_committed"})
        # a new producer of this id fences the last one and aborts what it left open (a killed run)
        try:
            self.producer.init_transactions(60)
        except BaseException:
            self.discard()
            raise

    def forwarded(self, partitions: list[tuple[str, int]]) -> dict[tuple[str, int], int]:
        """Per source topic-partition, the offset up to which records were forwarded (0: none)."""
        if not partitions:
            return {}
        committed = self.ledger.committed([TopicPartition(t, p) for t, p in partitions], timeout=30)
        return {(tp.topic, tp.partition): max(tp.offset, 0) for tp in committed}

    def send(self, topic: str, messages: Iterable[tuple[bytes, bytes | None, list[tuple[str, bytes]]]],
             forwarded_to: dict[tuple[str, int], int]) -> int:
        """In one transaction: the messages (key, value, headers) in order, and the source
        offsets they were forwarded up to. Returns the number sent."""
        self.producer.begin_transaction()
        sent = 0
        try:
            for key, value, headers in messages:
                while True:
                    try:
                        self.producer.produce(topic, value=value, key=key, headers=headers)
                        break
                    except BufferError:
                        self.producer.poll(0.1)
                sent += 1
            offsets = [TopicPartition(t, p, o) for (t, p), o in sorted(forwarded_to.items())]
            self.producer.send_offsets_to_transaction(offsets, self.ledger.consumer_group_metadata(), 60)
            self.producer.commit_transaction(120)
        except BaseException:
            self._abort()
            raise
        return sent

    def _abort(self) -> None:
        try:
            self.producer.abort_transaction(60)
        except KafkaException:
            pass      # fenced or fatal: the next producer of this id aborts it when it starts

    def close(self) -> None:
        self.producer.flush(10)
        self.discard()

    def discard(self) -> None:
        """Close both clients, sending nothing more: after a refusal or a fatal error no client
        is left polling the broker. A failed producer, closed, says it could not abort (a
        warning, or its error again, by the warnings filter in force)."""
        self.ledger.close()
        with warnings.catch_warnings(), contextlib.suppress(KafkaException):
            warnings.simplefilter("ignore", RuntimeWarning)
            self.producer.close()
