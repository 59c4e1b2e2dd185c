"""A table's decoded records -> its changes: key, typed columns, TOAST flags, op, position,
source time and the first reason a change can not apply. Runs no action."""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from ..config.models import TableSpec
from ..config.types import SqlType
from ..debezium.logical import decode, is_placeholder, wall_micros
from ..debezium.order import seq_struct, source_position
from ..frame import (AFTER, BEFORE, ENVELOPE_TS, ERROR, IS_TOMBSTONE, OLD_KEY, OP, ORIGIN_COLUMNS, SCHEMA_ID,
                     SEQ_COLUMN, SOURCE, TABLE, TS_COLUMN, VALUE_HASH, previous_key, scratch, unavailable)
from .view import TableView

ROW_OPS = ("c", "u", "r", "d")
MAX_SHOWN = 60


def table_changes(routed: DataFrame, view: TableView) -> DataFrame:
    """One table's records: key, typed columns, TOAST flags, op, order and the first error.

    Four projections, so each column's text is looked up and decoded once: a decoder refers
    to its input many times and the error and order refer to the decoded value, and inlined
    into one projection these copies made generated code grow past the JVM's 64 KB method
    limit (Spark then falls back to slower interpreted code after a failed compile)."""
    rows = routed.filter((F.col(TABLE) == view.name) & ~F.col(IS_TOMBSTONE))
    for projection in _change_columns(view):
        rows = rows.select(*projection)
    return rows


_COLUMNS_CACHE: dict[tuple, tuple[TableSpec, list[list[Column]]]] = {}


def _change_columns(view: TableView) -> list[list[Column]]:
    """The select lists of `table_changes`, built once per table shape: its decoders are large
    expression trees, and building them from Python costs about a second per table. The entry
    holds its spec, so the spec's id in the key is not reused by another spec while it lives."""
    key = (id(view.spec), tuple(view.columns.items()), tuple(view.encodings.items()),
           tuple(sorted(view.variants)), view.decimal_handling, tuple(sorted(view.fields.items())))
    if key not in _COLUMNS_CACHE:
        if len(_COLUMNS_CACHE) > 256:
            _COLUMNS_CACHE.clear()
        _COLUMNS_CACHE[key] = (view.spec, _build_change_columns(view))
    return _COLUMNS_CACHE[key][1]


def _build_change_columns(view: TableView) -> list[list[Column]]:
    """The image's texts, then the text each column takes (a TOAST placeholder answered by the
    event's own `before` under REPLICA IDENTITY FULL), then typed values, then the change."""
    op = F.col(OP)
    image = F.when(op == "d", F.col(BEFORE)).otherwise(F.col(AFTER))
    index = {c: i for i, c in enumerate(view.columns)}
    numbers = [c for c in view.columns if _may_be_number(c, view)]
    looked_up = [
        *[_field(image, c, view).cast("string").alias(scratch("a", index[c])) for c in view.columns],
        *[_field(F.col(BEFORE), c, view).cast("string").alias(scratch("b", index[c])) for c in view.values],
        *[_in_before(c, view).alias(scratch("hb", index[c])) for c in view.values],
        *[_is_number(_field(image, c, view)).alias(scratch("na", index[c])) for c in numbers],
        *[_is_number(_field(F.col(BEFORE), c, view)).alias(scratch("nb", index[c])) for c in numbers if c in view.values],
    ]
    chosen = [col for c in view.columns for col in _chosen_text(index[c], c in numbers, c in view.values)]
    raw = {c: F.col(scratch("t", index[c])) for c in view.columns}
    number = {c: F.col(scratch("n", index[c])) if c in numbers else None for c in view.columns}
    typed = [_decode_column(raw[c], c, view, number[c]).alias(scratch("v", index[c])) for c in view.columns]
    value = {c: F.col(scratch("v", index[c])) for c in view.columns}
    after_value = lambda c: _as_order_number(value[c], view.columns[c])  # noqa: E731
    position = source_position(F.col(SOURCE), view.spec.sequence_by, after_value)
    error = F.coalesce(
        F.col(ERROR), position.missing, _image_error(view),
        *[_key_error(raw[k], k) for k in view.keys],
        *[_decode_error(raw[c], value[c], c, view) for c in view.columns],
    )
    ts = F.coalesce(F.col(ENVELOPE_TS), F.col(SOURCE).getItem("ts_ms").try_cast("bigint"))
    placeholder = {c: F.col(scratch("p", index[c])) for c in view.values}
    final = [
        *[F.col(c) for c in ORIGIN_COLUMNS],    # the raw value where the decode kept it
        F.when(error.isNotNull(), F.col(VALUE_HASH)).alias(VALUE_HASH),   # the quarantine reads it again
        *[value[c].alias(c) for c in view.keys],
        *[F.when(~placeholder[c], value[c]).alias(c) for c in view.values],
        *[placeholder[c].alias(unavailable(c)) for c in view.values],
        *[_old_key_column(k, view).alias(previous_key(k)) for k in view.keys],
        op.alias(OP), seq_struct(position, op, F.col(SOURCE)).alias(SEQ_COLUMN),
        ts.alias(TS_COLUMN), error.alias(ERROR),
        *([F.col(SOURCE)] if view.spec.routes else []),     # a route's condition may ask it
    ]
    return [[F.col("*"), *looked_up], [F.col("*"), *chosen], [F.col("*"), *typed], final]


def _chosen_text(i: int, has_number: bool, is_value: bool) -> list[Column]:
    """A value column's text: the image's, or, where that is a TOAST placeholder on an update,
    its own `before` value when the event has one that is not a placeholder itself (NULL is a
    value); scratch `p`: still a placeholder."""
    after = F.col(scratch("a", i))
    if not is_value:
        out = [after.alias(scratch("t", i))]
        return out + ([F.col(scratch("na", i)).alias(scratch("n", i))] if has_number else [])
    before = F.col(scratch("b", i))
    from_before = ((F.col(OP) == "u") & is_placeholder(after) & F.col(scratch("hb", i))
                   & ~is_placeholder(before))
    out = [F.when(from_before, before).otherwise(after).alias(scratch("t", i)),
           (is_placeholder(after) & ~from_before).alias(scratch("p", i))]
    if has_number:
        out.append(F.when(from_before, F.col(scratch("nb", i))).otherwise(F.col(scratch("na", i))).alias(scratch("n", i)))
    return out


def _field(image: Column, column: str, view: TableView) -> Column:
    """The image's value (a variant) for a column, under the names events spell it with."""
    names = view.field_names(column)
    value = F.try_element_at(image, F.lit(names[-1]))
    for name in reversed(names[:-1]):
        value = F.when(F.map_contains_key(image, F.lit(name)), F.try_element_at(image, F.lit(name))).otherwise(value)
    return value


def _in_before(column: str, view: TableView) -> Column:
    """The `before` image holds the column (its value may be NULL)."""
    before = F.col(BEFORE)
    found = F.lit(False)
    for name in view.field_names(column):
        found = found | F.coalesce(F.map_contains_key(before, F.lit(name)), F.lit(False))
    return found


def _is_number(value: Column) -> Column:
    """The JSON value is a number (a variant of a numeric type), not text."""
    kind = F.schema_of_variant(value)
    return kind.startswith("DECIMAL") | kind.isin("BIGINT", "INT", "SMALLINT", "TINYINT", "DOUBLE", "FLOAT")


def _may_be_number(column: str, view: TableView) -> bool:
    """Whether a column's decoding depends on the JSON type of its value: a Decimal by the
    table's configuration or by an event schema of this batch."""
    target = view.columns[column]
    configured = view.encodings.get(column)
    if configured == "Decimal" or (configured is None and target.kind == "decimal" and view.decimal_handling == "precise"):
        return True
    return any((info := view.field_info(f, column)) is not None and info.encoding == "Decimal"
               for f in view.variants.values())


def _old_key_column(key: str, view: TableView) -> Column:
    """On a create that follows a primary-key change, this key column's previous value."""
    text = F.try_element_at(F.col(OLD_KEY), F.lit(key))
    decoded = decode(text, view.columns[key], view.encodings.get(key), None, view.decimal_handling)
    return F.when(F.col(OP) == "c", decoded)


def _decode_column(text: Column, column: str, view: TableView, number: Column | None) -> Column:
    """Decode by the event's schema where it names an encoding, else by the configured one."""
    target = view.columns[column]
    default = decode(text, target, view.encodings.get(column), None, view.decimal_handling, number)
    by_encoding: dict[tuple[str | None, int | None], list[int]] = {}
    for schema_id, fields in view.variants.items():
        info = view.field_info(fields, column)
        if info is not None:
            by_encoding.setdefault((info.encoding, info.scale), []).append(schema_id)
    expr = None
    for (encoding, scale), ids in by_encoding.items():
        decoded = decode(text, target, encoding, scale, "double" if encoding is None else "precise", number)
        cond = F.col(SCHEMA_ID).isin(*ids)
        expr = F.when(cond, decoded) if expr is None else expr.when(cond, decoded)
    return default if expr is None else expr.otherwise(default)


def _image_error(view: TableView) -> Column:
    op = F.col(OP)
    before_null = F.col(BEFORE).isNull()
    return (
        F.when((op == "d") & before_null, F.lit(
            f"delete without a key for table {view.name}: 'before' is null. The source table "
            "sends no old key (Postgres: REPLICA IDENTITY NOTHING or no primary key); set "
            "REPLICA IDENTITY DEFAULT with a primary key, or REPLICA IDENTITY FULL"))
        .when(op.isin("c", "u", "r") & F.col(AFTER).isNull(),
              F.format_string("op '%s' without an 'after' image", op))
    )


def _key_error(text: Column, key: str) -> Column:
    op = F.col(OP)
    where = F.when(op == "d", F.lit("before")).otherwise(F.lit("after"))
    return F.when(op.isin(*ROW_OPS) & text.isNull(),
                  F.format_string("key column '%s' is null or missing in '%s'", F.lit(key), where))


def _decode_error(text: Column, typed: Column, column: str, view: TableView) -> Column:
    """'column x: value v does not decode as T' when text is present and the value is not."""
    needed = F.col(OP).isin("c", "u", "r") if column not in view.keys else F.col(OP).isin(*ROW_OPS)
    bad = needed & text.isNotNull() & typed.isNull() & ~is_placeholder(text)
    shown = F.when(F.length(text) > MAX_SHOWN, F.concat(F.substring(text, 1, MAX_SHOWN), F.lit("…"))).otherwise(text)
    return F.when(bad, F.format_string("column '%s': value '%s' does not decode as %s",
                                       F.lit(column), shown, F.lit(view.columns[column].name)))


def _as_order_number(value: Column, sql_type: SqlType) -> Column:
    if sql_type.kind == "timestamp":   # the wall time of a timestamp_ntz, in no time zone
        return wall_micros(value) if sql_type.name == "timestamp_ntz" else F.unix_micros(value)
    if sql_type.kind == "date":
        return F.unix_date(value).cast("bigint")
    return value.try_cast("bigint")
