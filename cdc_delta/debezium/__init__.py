"""Debezium envelope: parsing, logical-type decoding, per-connector order keys."""
