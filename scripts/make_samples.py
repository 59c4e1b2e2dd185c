"""Regenerate cdc_delta/samples/orders/: the demo's archived Debezium events of `orders`.

A MySQL connector stream: a snapshot, inserts, updates, deletes, a re-insert, a Kafka
tombstone ('null' line, as Kafka Connect's file sink writes it) and one malformed event.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from pathlib import Path

from cdc_delta.debezium.encode import EventWriter

COLUMNS = {"order_id": "bigint", "customer_id": "bigint", "amount": "decimal(10,2)",
           "status": "string", "order_date": "date", "updated_at": "timestamp"}
OUT = Path(__file__).resolve().parents[1] / "cdc_delta" / "samples" / "orders" / "dbserver1.shop.orders"


def order(oid: int, cust: int, amount: str, status: str, day: int, minute: int) -> dict:
    return {"order_id": oid, "customer_id": cust, "amount": Decimal(amount), "status": status,
            "order_date": dt.date(2026, 11, day), "updated_at": dt.datetime(2026, 11, day, 9, minute, 0, 123456)}


def main() -> None:
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
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "orders-000.jsonl").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
