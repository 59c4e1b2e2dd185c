"""`python -m devtools.demo produce`: send the bundled sample streams to a broker, one topic
per sample folder, keyed by primary key as Debezium does (so each key keeps one partition).
`python -m devtools.demo routes`: print what a read_committed consumer of each route topic of
configs/demo.yaml sees."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import cdc_delta
from cdc_delta.config import load_config
from cdc_delta.infra.kafka_io import create_topics, produce, read_topic

SAMPLES = Path(cdc_delta.__file__).with_name("samples")
KEYS = {"dbserver1.shop.orders": "order_id", "dbserver1.shop.customers": "customer_id",
        "pg.bank.transactions": "txn_id"}


def records(lines: list[str], key_column: str) -> list[tuple[bytes | None, bytes | None]]:
    out: list[tuple[bytes | None, bytes | None]] = []
    last_key: bytes | None = None
    for line in lines:
        if line == "null":  # the tombstone follows its delete, with the same key
            out.append((last_key, None))
            continue
        try:
            event = json.loads(line)
            env = event.get("payload") or event
            image = env.get("after") or env.get("before") or {}
            last_key = json.dumps({key_column: image.get(key_column)}).encode()
        except (ValueError, AttributeError):
            last_key = None  # a malformed sample goes out as it is, unkeyed
        out.append((last_key, line.encode()))
    return out


def produce_samples(bootstrap: str, partitions: int = 2) -> dict[str, int]:
    create_topics(bootstrap, {topic: partitions for topic in KEYS})
    sent = {}
    for topic, key in KEYS.items():
        lines = [l for f in sorted((SAMPLES / topic).glob("*.jsonl")) for l in f.read_text().splitlines() if l.strip()]
        sent[topic] = produce(bootstrap, topic, records(lines, key))
    return sent


def show_routes(bootstrap: str, config_path: str = "configs/demo.yaml") -> None:
    for table in load_config(config_path).tables:
        for route in table.routes:
            messages = read_topic(bootstrap, route.topic)
            print(f"\nroute {table.name}/{route.name} -> {route.topic} ({len(messages)} messages, read_committed)")
            for m in messages:
                print(f"  key {m.key().decode()}  value {m.value().decode()}")


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m devtools.demo")
    parser.add_argument("command", choices=["produce", "routes"])
    parser.add_argument("--bootstrap", default="127.0.0.1:9092")
    args = parser.parse_args()
    if args.command == "routes":
        show_routes(args.bootstrap)
        return
    for topic, n in produce_samples(args.bootstrap).items():
        print(f"produced {n} records to {topic}")


if __name__ == "__main__":
    main()
