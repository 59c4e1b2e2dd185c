"""One error hierarchy. Every error a user meets says what is wrong and how to fix it.

Subclasses carry structured fields (file, table, column, value, allowed values) so tests and
callers can check them without parsing messages. No pyspark import here.
"""

from __future__ import annotations

from typing import Any, Iterable


class CdcDeltaError(Exception):
    """Root of all errors cdc-delta raises on purpose. ``exit_code`` is what the CLI returns."""

    exit_code = 1

    def __init__(self, message: str, **fields: Any) -> None:
        super().__init__(message)
        self.message = message
        self.fields = fields

    def __str__(self) -> str:
        return self.message


class ConfigError(CdcDeltaError):
    """The pipeline YAML is invalid. Raised before Spark starts."""

    exit_code = 2

    def __init__(self, file: str, field: str, problem: str, value: Any = None,
                 allowed: Iterable[str] | None = None) -> None:
        allowed_list = list(allowed) if allowed is not None else None
        text = f"{file}: {field}: {problem}"
        if value is not None:
            text += f" (got {value!r})"
        if allowed_list:
            text += f"; allowed: {', '.join(allowed_list)}"
        super().__init__(text, file=file, field=field, value=value, allowed=allowed_list)
        self.file, self.field, self.value, self.allowed = file, field, value, allowed_list


class SchemaChangeRefused(CdcDeltaError):
    """Events carry a column or type the table's schema-change policy does not accept."""

    exit_code = 3

    def __init__(self, table: str, column: str, table_type: str | None, event_type: str,
                 reason: str) -> None:
        have = f"the table has {table_type}" if table_type else "the column is not declared"
        super().__init__(
            f"table {table}: column {column}: {have}, events now carry {event_type}: {reason}",
            table=table, column=column, table_type=table_type, event_type=event_type)
        self.table, self.column = table, column
        self.table_type, self.event_type = table_type, event_type


class ColumnNameClash(CdcDeltaError):
    """One event carries two fields whose names differ only by case, and names match columns
    case-insensitively (Spark's default)."""

    exit_code = 3

    def __init__(self, table: str, fields: list[str]) -> None:
        shown = ", ".join(repr(f) for f in fields)
        super().__init__(
            f"table {table}: events carry fields {shown}, which differ only by case and so name one "
            "column (spark.sql.caseSensitive is false); rename one in the source, or set "
            "spark.sql.caseSensitive=true to keep them apart", table=table, fields=fields)
        self.table, self.fields_seen = table, fields


class TruncateRefused(CdcDeltaError):
    """A truncate event reached a table whose policy is ``truncate: fail``."""

    exit_code = 3

    def __init__(self, table: str) -> None:
        super().__init__(
            f"table {table}: a truncate event arrived and the table's policy is 'truncate: fail'; "
            "set 'truncate: apply' or 'truncate: ignore' in the config to go on",
            table=table)
        self.table = table


class RouteConditionInvalid(CdcDeltaError):
    """A route's `when` is not a condition Spark can evaluate over the table's changes."""

    exit_code = 2

    def __init__(self, table: str, route: str, condition: str, problem: str, fields: list[str]) -> None:
        super().__init__(
            f"table {table}: route {route}: when {condition!r} does not evaluate: {problem}; a condition "
            f"may use {', '.join(fields)}", table=table, route=route, condition=condition, problem=problem)
        self.table, self.route, self.condition = table, route, condition


class RouteFailed(CdcDeltaError):
    """Kafka refused a route's transaction (fenced by another writer of the route, or an
    unrecoverable producer error); the batch is not committed and is read again on restart."""

    exit_code = 5

    def __init__(self, table: str, route: str, transactional_id: str, problem: str) -> None:
        super().__init__(
            f"table {table}: route {route}: the Kafka transaction of {transactional_id} failed: {problem}; "
            "if another run writes this route, stop it, then restart this one (the batch is read again and "
            "sent once)", table=table, route=route, transactional_id=transactional_id, problem=problem)
        self.table, self.route, self.transactional_id = table, route, transactional_id


class SourceColumnsMissing(CdcDeltaError):
    """A DataFrame handed to `pipeline.foreach_batch` lacks columns of Spark's Kafka source."""

    exit_code = 2

    def __init__(self, pipeline: str, missing: list[str], got: list[str], needed: list[str]) -> None:
        super().__init__(
            f"pipeline {pipeline}: foreach_batch got a DataFrame without {', '.join(missing)} (its columns: "
            f"{', '.join(got) or 'none'}); pass the rows of spark.readStream.format('kafka') as they come "
            f"(needed: {', '.join(needed)}; headers optional)", pipeline=pipeline, missing=missing, got=got)
        self.missing, self.got = missing, got


class TablePropertiesRefused(CdcDeltaError):
    """Delta refused the table properties a table's config sets on the existing table."""

    exit_code = 2

    def __init__(self, table: str, properties: dict[str, str], reason: str) -> None:
        pairs = ", ".join(f"{k} = {v!r}" for k, v in properties.items())
        super().__init__(
            f"table {table}: Delta refused the table_properties {pairs}: {reason}; correct or remove "
            "them under the table's table_properties in the config", table=table, properties=properties,
            reason=reason)
        self.table, self.properties, self.reason = table, properties, reason


class SetupError(CdcDeltaError):
    """A local prerequisite (Java, Maven, jars) is missing or failed."""

    exit_code = 4


class PipelineFailed(CdcDeltaError):
    """The streaming query stopped with an error that is not one of ours."""

    exit_code = 5


class WriterBusy(CdcDeltaError):
    """Another running pipeline holds the checkpoint or a table this run would write."""

    exit_code = 6

    def __init__(self, what: str, holder: str) -> None:
        super().__init__(
            f"{what} is being written by another run ({holder or 'holder unknown'}); stop that "
            "run first, or give this pipeline its own checkpoint and tables", what=what, holder=holder)
        self.what, self.holder = what, holder


def one_line(exc: BaseException, limit: int = 400) -> str:
    """The cause of an error from Spark or the JVM in one line, without Py4J's call header and
    the Java stack."""
    lines = [line.strip() for line in str(exc).strip().splitlines() if line.strip()]
    if lines and lines[0].startswith("An error occurred while calling") and len(lines) > 1:
        lines = lines[1:]
    text = lines[0].lstrip(": ") if lines else type(exc).__name__
    return text[:limit]
