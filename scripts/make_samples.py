"""Regenerate cdc_delta/samples/: the demo's Debezium events, one folder per topic.

`orders` and `customers` as a MySQL connector sends them, `transactions` (seed 004) as the
Postgres connector sends them with the schema wrapper: snapshots, inserts, updates, deletes,
a re-insert, a Kafka tombstone ('null' line, as Kafka Connect's file sink writes it), a late
redelivery and one malformed event.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from pathlib import Path

from devtools.encode import EventWriter

COLUMNS = {"order_id": "bigint", "customer_id": "bigint", "amount": "decimal(10,2)",
           "status": "string", "order_date": "date", "updated_at": "timestamp"}
SAMPLES = Path(__file__).resolve().parents[1] / "cdc_delta" / "samples"
CUSTOMERS = {"customer_id": "bigint", "name": "string", "email": "string", "city": "string"}
TRANSACTIONS = {"txn_id": "bigint", "acc_id": "bigint", "txn_value": "decimal(12,2)",
                "txn_date": "timestamp", "txn_type": "string"}


def order(oid: int, cust: int, amount: str, status: str, day: int, minute: int) -> dict:
    return {"order_id": oid, "customer_id": cust, "amount": Decimal(amount), "status": status,
            "order_date": dt.date(2026, 11, day), "updated_at": dt.datetime(2026, 11, day, 9, minute, 0, 123456)}


def write(topic: str, lines: list[str]) -> None:
    folder = SAMPLES / topic
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{topic}-000.jsonl").write_text("\n".join(lines) + "\n")


def customers() -> list[str]:
    w = EventWriter("mysql", "customers", CUSTOMERS)
    ts = 1_795_000_000_000
    ada = {"customer_id": 10, "name": "Ada", "email": "ada@example.com", "city": "London"}
    bob = {"customer_id": 11, "name": "Bob", "email": "bob@example.com", "city": "Paris"}
    cy = {"customer_id": 12, "name": "Cy", "email": "cy@example.com", "city": "Rome"}
    return [
        w.event("r", None, ada, 100, ts, snapshot=True), w.event("r", None, bob, 100, ts, snapshot=True),
        w.event("c", None, cy, 250, ts + 500),
        w.event("u", bob, {**bob, "city": "Lyon"}, 350, ts + 2500),
        w.event("c", None, {"customer_id": 13, "name": "Dee", "email": "dee@example.com", "city": "Oslo"}, 550, ts + 4500),
        w.event("d", cy, None, 650, ts + 5500), "null",
    ]


def transactions() -> list[str]:
    w = EventWriter("postgresql", "transactions", TRANSACTIONS, wrapped=True, db="bank")
    ts = 1_795_000_000_000
    day = dt.datetime(2026, 11, 28, 12, 0, 0, 250000)
    t = lambda i, acc, v, kind: {"txn_id": i, "acc_id": acc, "txn_value": Decimal(v), "txn_date": day + dt.timedelta(minutes=i), "txn_type": kind}  # noqa: E731
    return [
        w.event("r", None, t(1, 100, "500.00", "deposit"), 5000, ts, snapshot=True),
        w.event("c", None, t(2, 100, "-120.50", "withdrawal"), 5100, ts + 100),
        w.event("c", None, t(3, 101, "99.99", "deposit"), 5200, ts + 200),
        w.event("u", None, t(2, 100, "-125.50", "withdrawal"), 5300, ts + 300),
        w.event("c", None, t(4, 101, "12.00", "fee"), 5400, ts + 400),
        w.event("d", {"txn_id": 4}, None, 5500, ts + 500), "null",
        w.event("c", None, t(5, 102, "0.01", "deposit"), 5600, ts + 600),
    ]


def main() -> None:
    write("dbserver1.shop.customers", customers())
    write("pg.bank.transactions", transactions())
    plain = EventWriter("mysql", "orders", COLUMNS, wrapped=False)
    wrapped = EventWriter("mysql", "orders", COLUMNS, wrapped=True)
    ts = 1_795_000_000_000
    o1, o2, o3 = order(1, 10, "19.99", "new", 1, 0), order(2, 11, "250.00", "new", 1, 5), order(3, 10, "5.50", "new", 2, 0)
    o4, o5 = order(4, 12, "1200.75", "new", 3, 0), order(5, 13, "-3.10", "refund", 3, 9)
    lines = [
        plain.event("r", None, o1, 100, ts, snapshot=True),
        plain.event("r", None, o2, 100, ts, snapshot=True),
        plain.event("r", None, o3, 100, ts, snapshot=True),
        wrapped.event("c", None, o4, 200, ts + 1000),
        plain.event("u", o1, {**o1, "status": "paid"}, 300, ts + 2000),
        wrapped.event("u", o2, {**o2, "status": "shipped", "amount": Decimal("245.00")}, 400, ts + 3000),
        plain.event("d", o3, None, 500, ts + 4000),
        "null",
        plain.event("c", None, o5, 600, ts + 5000),
        plain.event("u", {**o1, "status": "paid"}, {**o1, "status": "delivered"}, 700, ts + 6000),
        '{"before":null,"after":{"order_id":6,"amount":"AeI="},"op":"c","source":{"connector":"mysql"',
        plain.event("c", None, {**o3, "amount": Decimal("6.25"), "status": "reordered"}, 800, ts + 7000),
        plain.event("d", o4, None, 900, ts + 8000),
        # a late redelivery of order 1's first update: older than what the table holds
        plain.event("u", o1, {**o1, "status": "paid"}, 300, ts + 2000),
    ]
    write("dbserver1.shop.orders", lines)


if __name__ == "__main__":
    main()
