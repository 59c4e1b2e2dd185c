"""What one batch knows of a table: its columns now, and how this batch's events encode them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

from ..config.models import TableSpec
from ..config.types import SqlType
from ..debezium.connect_schema import FieldInfo


@dataclass(frozen=True)
class TableView:
    spec: TableSpec
    columns: Mapping[str, SqlType]                  # written columns, declared then evolved
    encodings: Mapping[str, str | None]             # configured encoding per column
    variants: Mapping[int, Mapping[str, FieldInfo]] = field(default_factory=dict)
    decimal_handling: str = "precise"
    # per column, the field names events of this batch spell it with (Spark's case rule); a
    # column not listed is looked up by its own name
    fields: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def keys(self) -> list[str]:
        return list(self.spec.keys)

    @property
    def values(self) -> list[str]:
        return [c for c in self.columns if c not in self.spec.keys]

    def field_names(self, column: str) -> tuple[str, ...]:
        return self.fields.get(column) or (column,)

    def field_info(self, fields: Mapping[str, FieldInfo], column: str) -> FieldInfo | None:
        """The event schema's description of a column, under the names events spell it with."""
        return next((fields[n] for n in self.field_names(column) if n in fields), None)
