"""cdc-delta: Debezium change streams merged into current-state Delta Lake tables."""

from __future__ import annotations

__version__ = "0.1.0"
