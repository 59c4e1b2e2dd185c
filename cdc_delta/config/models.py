"""Frozen, typed models of a pipeline YAML. Unknown keys are refused.

The vocabulary follows Spark's declarative pipelines: ``keys``, ``sequence_by``,
``column_list``, ``except_column_list``.
"""

from __future__ import annotations

import re
from typing import Annotated, Literal, Union

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, field_validator, model_validator

from ..infra.storage import scheme
from .types import SqlType, normalise_encoding, parse_sql_type

NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_\-]*$")
DURATION_RE = re.compile(r"^\s*(\d+)\s*(ms|milliseconds?|s|seconds?|m|minutes?|h|hours?|d|days?)\s*$")
DURATION_MS = {"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000}
SEQUENCE_PREFIXES = ("source.", "after.", "ts_ms")


def duration_ms(text: str) -> int:
    """'7 days' -> milliseconds; raise ValueError with the accepted forms."""
    m = DURATION_RE.match(str(text))
    if not m:
        raise ValueError(f"not a duration: {text!r}; write e.g. '500 ms', '30 seconds', '7 days'")
    unit = m.group(2)
    key = "ms" if unit.startswith("milli") or unit == "ms" else unit[0]
    return int(m.group(1)) * DURATION_MS[key]


def _plain_name(v: str) -> str:
    if not NAME_RE.match(v):
        raise ValueError(f"name {v!r} must start with a letter or '_' and hold only letters, digits, '_' or '-'")
    return v


Name = Annotated[str, AfterValidator(_plain_name)]


class Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


class FilesSource(Model):
    """Directories of archived Kafka record values, one per line (Kafka Connect file sinks)."""

    kind: Literal["files"]
    path: str
    max_files_per_trigger: int | None = Field(default=None, ge=1)


class KafkaSource(Model):
    """A Kafka subscription; ``options`` pass ``kafka.*`` settings (SASL/SSL) through."""

    kind: Literal["kafka"]
    bootstrap_servers: str
    topics: list[str] | None = None
    topic_pattern: str | None = None
    starting_offsets: Union[Literal["earliest", "latest"], dict[str, dict[str, int]]] = "earliest"
    starting_timestamp: int | None = Field(default=None, ge=0)
    max_offsets_per_trigger: int | None = Field(default=None, ge=1)
    min_offsets_per_trigger: int | None = Field(default=None, ge=1)
    max_trigger_delay: str | None = None
    fail_on_data_loss: bool = True
    # restarts of the query from its checkpoint when the brokers can not be reached (pauses of
    # 5, 10, 20, 40, 60 s); a committed batch starts the count again; 0 fails at once
    reconnect_attempts: int = Field(default=5, ge=0)
    options: dict[str, str] = Field(default_factory=dict)

    @field_validator("starting_offsets", mode="before")
    @classmethod
    def _partition_keys(cls, v: object) -> object:
        """YAML reads partition numbers as ints; Spark's JSON wants them as strings."""
        if isinstance(v, dict):
            return {t: {str(p): o for p, o in parts.items()} if isinstance(parts, dict) else parts
                    for t, parts in v.items()}
        return v

    @model_validator(mode="after")
    def _consistent(self) -> "KafkaSource":
        if bool(self.topics) == bool(self.topic_pattern):
            raise ValueError("give exactly one of 'topics' (a list) or 'topic_pattern' (a regex)")
        if self.max_trigger_delay is not None:
            duration_ms(self.max_trigger_delay)
            if self.min_offsets_per_trigger is None:
                raise ValueError("max_trigger_delay goes with min_offsets_per_trigger")
        if self.starting_timestamp is not None and self.starting_offsets != "earliest":
            raise ValueError("give starting_offsets or starting_timestamp, not both")
        for key in self.options:
            if not key.startswith("kafka.") or key == "kafka.bootstrap.servers":
                raise ValueError(f"options: {key!r} is not a pass-through Kafka setting; "
                                 "write kafka.<setting> (e.g. kafka.security.protocol), and "
                                 "bootstrap_servers for the brokers")
        return self


Source = Annotated[Union[FilesSource, KafkaSource], Field(discriminator="kind")]


class ColumnSpec(Model):
    type: str
    encoding: str | None = None

    @field_validator("type")
    @classmethod
    def _type(cls, v: str) -> str:
        return parse_sql_type(v).name

    @field_validator("encoding")
    @classmethod
    def _encoding(cls, v: str | None) -> str | None:
        return None if v is None else normalise_encoding(v)

    @property
    def sql_type(self) -> SqlType:
        return parse_sql_type(self.type)


class Match(Model):
    """How an event is routed to a table: by topic, or by its source db/schema/table."""

    topic: str | None = None
    db: str | None = None
    schema_: str | None = Field(default=None, alias="schema")
    table: str | None = None

    @model_validator(mode="after")
    def _something(self) -> "Match":
        if not any((self.topic, self.db, self.schema_, self.table)):
            raise ValueError("name at least one of topic, db, schema, table")
        return self


class Target(Model):
    path: str | None = None
    table: str | None = None

    @model_validator(mode="after")
    def _exactly_one(self) -> "Target":
        if bool(self.path) == bool(self.table):
            raise ValueError("give exactly one of 'path' (a Delta table directory) or 'table' (catalog name)")
        return self


ROUTE_FIELDS = ("op", "source", "ts_ms")     # what a route's condition sees beside the row's columns


class Route(Model):
    """Selected changes of a table forwarded to a Kafka topic, exactly once (sinks/route.py)."""

    name: Name
    topic: str = Field(min_length=1)
    # a Spark SQL condition over the row image's columns, `op`, `source` (the source block: a
    # map, e.g. source.db) and `ts_ms`; every change when absent
    when: str | None = None
    column_list: list[str] | None = None       # the row's columns in a message; all when absent
    key: list[str] | None = None               # the message key's columns; the table's keys when absent
    format: Literal["row", "envelope"] = "row"


# what a table given `from:` takes from the table it names: it is fed the same changes
FROM_FIELDS = ("match", "keys", "columns", "sequence_by", "column_list", "except_column_list",
               "schema_change", "truncate")


class TableSpec(Model):
    name: Name
    # another table of the pipeline whose changes this one keeps too (its match, keys and columns)
    from_: Name | None = Field(default=None, alias="from")
    match: Match | None = None
    target: Target | None = None
    # how the table is kept: scd1, one row per key as the source has it now; scd2, one row per
    # version of a key (sinks/ holds one room per kind)
    stored_as: Literal["scd1", "scd2"] = "scd1"
    track_history_column_list: list[str] | None = None
    track_history_except_column_list: list[str] | None = None
    routes: list[Route] = Field(default_factory=list)
    keys: list[str] = Field(min_length=1)
    columns: dict[str, ColumnSpec] = Field(min_length=1)
    sequence_by: list[str] | None = Field(default=None, min_length=1, max_length=3)
    column_list: list[str] | None = None
    except_column_list: list[str] | None = None
    schema_change: Literal["evolve", "ignore", "fail"] = "evolve"
    truncate: Literal["apply", "ignore", "fail"] = "apply"
    tombstone_retention: str = "7 days"
    table_properties: dict[str, str] = Field(default_factory=dict)

    @field_validator("columns", mode="before")
    @classmethod
    def _columns(cls, v: object) -> object:
        if isinstance(v, dict):
            return {k: ({"type": t} if isinstance(t, str) else t) for k, t in v.items()}
        return v

    @field_validator("tombstone_retention")
    @classmethod
    def _retention(cls, v: str) -> str:
        duration_ms(v)
        return v

    @field_validator("sequence_by")
    @classmethod
    def _sequence_by(cls, v: list[str] | None) -> list[str] | None:
        for path in v or []:
            if not path.startswith(SEQUENCE_PREFIXES):
                raise ValueError(f"sequence_by entry {path!r} must start with source., after. or be ts_ms")
        return v

    @model_validator(mode="after")
    def _consistent(self) -> "TableSpec":
        declared = list(self.columns)
        for field in ("keys", "column_list", "except_column_list"):
            for col in getattr(self, field) or []:
                if col not in self.columns:
                    raise ValueError(f"{field}: {col!r} is not a declared column (declared: {', '.join(declared)})")
        if self.column_list and self.except_column_list:
            raise ValueError("give column_list or except_column_list, not both")
        for key in self.keys:
            if key in (self.except_column_list or []) or (self.column_list and key not in self.column_list):
                raise ValueError(f"key column {key!r} must be written to the table")
        for path in self.sequence_by or []:
            if path.startswith("after.") and path[6:] not in self.columns:
                raise ValueError(f"sequence_by: {path!r} names an undeclared column")
        self._check_history()
        self._check_routes()
        return self

    def _check_history(self) -> None:
        tracked = ("track_history_column_list", "track_history_except_column_list")
        if self.stored_as != "scd2" and any(getattr(self, f) is not None for f in tracked):
            raise ValueError("track_history_column_list and track_history_except_column_list go with "
                             "stored_as: scd2")
        if all(getattr(self, f) is not None for f in tracked):
            raise ValueError("give track_history_column_list or track_history_except_column_list, not both")
        written = list(self.column_specs)
        for field in tracked:
            for c in getattr(self, field) or []:
                if c not in written or c in self.keys:
                    raise ValueError(f"{field}: {c!r} is not a written value column "
                                     f"(value columns: {', '.join(v for v in written if v not in self.keys)})")

    def _check_routes(self) -> None:
        if self.routes and self.stored_as != "scd1":
            raise ValueError("routes go on a current-state table (stored_as: scd1): the table whose stored "
                             "positions decide which changes are new; put them on the table this one is from")
        names = [r.name for r in self.routes]
        if len(set(names)) < len(names):
            raise ValueError(f"route names must be unique within a table; got {', '.join(names)}")
        written = list(self.column_specs)
        for route in self.routes:
            for field in ("column_list", "key"):
                for c in getattr(route, field) or []:
                    if c not in written:
                        raise ValueError(f"routes {route.name}: {field}: {c!r} is not a written column "
                                         f"(written: {', '.join(written)})")
        clash = [c for c in written if c.lower() in ROUTE_FIELDS]
        if self.routes and clash:
            raise ValueError(f"column {clash[0]!r} has the name of a route condition's own field "
                             f"({', '.join(ROUTE_FIELDS)}); rename it with column_list, or drop the routes")

    @property
    def source_table(self) -> str:
        """The table whose events feed this one: itself, or the one named by `from`."""
        return self.from_ or self.name

    @property
    def column_specs(self) -> dict[str, ColumnSpec]:
        """Declared columns that are written, in declaration order."""
        cols = self.columns
        if self.column_list:
            return {k: cols[k] for k in cols if k in self.column_list}
        return {k: cols[k] for k in cols if k not in (self.except_column_list or [])}

    @property
    def retention_ms(self) -> int:
        return duration_ms(self.tombstone_retention)

    @property
    def effective_match(self) -> Match:
        return self.match or Match(table=self.name)


class Trigger(Model):
    kind: Literal["available_now", "once", "processing_time"] = "available_now"
    interval: str | None = None

    @model_validator(mode="after")
    def _interval(self) -> "Trigger":
        if self.kind == "processing_time":
            duration_ms(self.interval or "")
        elif self.interval:
            raise ValueError("'interval' goes only with kind: processing_time")
        return self


class Decoding(Model):
    """How values of events without a schema wrapper are read (Debezium's connector options),
    and the largest record value decoded (bigger ones are quarantined whole, not parsed)."""

    decimal_handling: Literal["precise", "double", "string"] = "precise"
    max_value_bytes: int = Field(default=32 * 1024 * 1024, ge=1024)


class Quarantine(Model):
    path: str | None = None
    table: str | None = None


class PipelineConfig(Model):
    pipeline: Name
    source: Source
    lake: str = "lake"
    checkpoint: str | None = None
    trigger: Trigger = Field(default_factory=Trigger)
    quarantine: Quarantine = Field(default_factory=Quarantine)
    unmatched: Literal["quarantine", "skip"] = "quarantine"
    decoding: Decoding = Field(default_factory=Decoding)
    spark: dict[str, str] = Field(default_factory=dict)
    tables: list[TableSpec] = Field(min_length=1)

    @field_validator("trigger", mode="before")
    @classmethod
    def _trigger(cls, v: object) -> object:
        return {"kind": v} if isinstance(v, str) else v

    @model_validator(mode="before")
    @classmethod
    def _from_tables(cls, v: object) -> object:
        """A table with `from: X` takes X's match, keys and columns (its events are X's)."""
        if not isinstance(v, dict) or not isinstance(v.get("tables"), list):
            return v
        by_name = {t.get("name"): t for t in v["tables"] if isinstance(t, dict) and not t.get("from")}
        tables = []
        for t in v["tables"]:
            source = t.get("from") if isinstance(t, dict) else None
            if source is not None:
                given = [f for f in FROM_FIELDS if f in t]
                if source not in by_name:
                    raise ValueError(f"table {t.get('name')!r}: from: {source!r} is not a table of the pipeline "
                                     f"without a 'from' of its own (tables: {', '.join(map(str, by_name))})")
                if given:
                    raise ValueError(f"table {t.get('name')!r}: {given[0]} comes from table {source!r} "
                                     f"(from: {source}); remove it here")
                if t.get("routes"):
                    raise ValueError(f"table {t.get('name')!r}: routes go on table {source!r}, the table its "
                                     "events are routed to")
                t = {**{f: by_name[source][f] for f in FROM_FIELDS if f in by_name[source]}, **t}
                t.setdefault("match", by_name[source].get("match") or {"table": source})
            tables.append(t)
        return {**v, "tables": tables}

    @model_validator(mode="after")
    def _unique_tables(self) -> "PipelineConfig":
        names = [t.name for t in self.tables]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"table names must be unique; repeated: {', '.join(dupes)}")
        routed = [t.name for t in self.tables if t.routes]
        if routed and self.source.kind != "kafka":
            raise ValueError(f"table {routed[0]}: routes need a kafka source: the source's offsets, committed in "
                             "each route's Kafka transaction, are what makes a replayed batch send nothing twice")
        return self

    @property
    def source_tables(self) -> list[TableSpec]:
        """The tables events are routed to: every table without `from`."""
        return [t for t in self.tables if t.from_ is None]

    def fed_by(self, source: str) -> list[TableSpec]:
        """The tables a source table's changes are written to: itself, then those `from` it."""
        return [t for t in self.tables if t.source_table == source]

    @property
    def checkpoint_path(self) -> str:
        return self.checkpoint or f"checkpoints/{self.pipeline}"

    @property
    def quarantine_location(self) -> Target:
        q = self.quarantine
        if q.table:
            return Target(table=q.table)
        return Target(path=q.path or f"{self.lake}/_quarantine")

    def target_of(self, table: TableSpec) -> Target:
        return table.target or Target(path=f"{self.lake}/{table.name}")

    @property
    def storage_schemes(self) -> tuple[str, ...]:
        """The schemes of every path the pipeline reads or writes ('s3a', 'abfss', …; 'file')."""
        paths = [self.lake, self.checkpoint_path, self.quarantine_location.path or "",
                 *[self.target_of(t).path or "" for t in self.tables], getattr(self.source, "path", "")]
        return tuple(sorted({scheme(p) for p in paths if p}))
