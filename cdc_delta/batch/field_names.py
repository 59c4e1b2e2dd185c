"""Event field names matched to table columns as Spark matches names: case-insensitively unless
`spark.sql.caseSensitive` is on. Pure Python: the driver decides once per batch from the field
names the batch's events carry."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from ..errors import ColumnNameClash


@dataclass(frozen=True)
class FieldNames:
    case_sensitive: bool = False

    def fold(self, name: str) -> str:
        return name if self.case_sensitive else name.lower()

    def among(self, name: str, names: Iterable[str]) -> bool:
        return self.fold(name) in {self.fold(n) for n in names}

    def new_fields(self, fields: Iterable[str], columns: Iterable[str]) -> list[str]:
        """Fields that are no column yet, one spelling each (the first in sort order)."""
        known = {self.fold(c) for c in columns}
        out: dict[str, str] = {}
        for f in sorted(fields):
            if self.fold(f) not in known:
                out.setdefault(self.fold(f), f)
        return list(out.values())

    def spellings(self, fields: Iterable[str], columns: Iterable[str]) -> dict[str, tuple[str, ...]]:
        """Per column, the field names that stand for it, its own name first when events use it."""
        by_fold: dict[str, list[str]] = {}
        for f in sorted(set(fields)):
            by_fold.setdefault(self.fold(f), []).append(f)
        out = {}
        for c in columns:
            names = sorted(by_fold.get(self.fold(c), []), key=lambda n: n != c)
            if names and names != [c]:
                out[c] = tuple(names)
        return out

    def refuse_clashes(self, table: str, images: Iterable[Iterable[str]]) -> None:
        """One image with two fields that are one column under the case rule can not be read
        (`images`: the field names of each distinct image)."""
        if self.case_sensitive:
            return
        for names in images:
            groups: dict[str, list[str]] = {}
            for n in names:
                groups.setdefault(self.fold(n), []).append(n)
            clash = next((g for g in groups.values() if len(g) > 1), None)
            if clash:
                raise ColumnNameClash(table, clash)
