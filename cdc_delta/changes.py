"""Pure ``DataFrame -> DataFrame`` steps from envelopes to the changes a MERGE applies.

route -> table_changes (key, typed columns, order, reason) -> reduce_to_last_change.
Nothing here writes or runs an action.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from .config.models import Match, TableSpec
from .config.types import SqlType
from .debezium.connect_schema import FieldInfo
from .debezium.logical import decode, is_placeholder
from .debezium.order import seq_struct, source_position
from .frame import ORIGIN_COLUMNS, toast_column
from .names import col

ROW_OPS = ("c", "u", "r", "d")
MAX_SHOWN = 60


@dataclass(frozen=True)
class TableView:
    """What one batch needs to know of a table: its columns now, and how events encode them."""

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


def route(envelopes: DataFrame, tables: list[TableSpec]) -> DataFrame:
    """Add ``_cdc_table``: the first configured table whose match the record meets."""
    name = F.lit(None).cast("string")
    for table in reversed(tables):
        name = F.when(_matches(table.effective_match), F.lit(table.name)).otherwise(name)
    return envelopes.withColumn("_cdc_table", name)


def _matches(match: Match) -> Column:
    cond = F.lit(True)
    src = F.col("_cdc_source")
    if match.topic:
        cond = cond & (F.col("_cdc_topic") == match.topic)
    for key, want in (("db", match.db), ("schema", match.schema_), ("table", match.table)):
        if want:
            cond = cond & (src.getItem(key) == want)
    return cond


def unmatched_reason() -> Column:
    src = F.col("_cdc_source")
    return F.when(src.isNull(), F.format_string(
        "no 'source' block and no configured table matches topic '%s'", F.col("_cdc_topic"))).otherwise(F.format_string(
        "no configured table matches topic '%s', source %s.%s.%s; add a table whose match "
        "names it, or set unmatched: skip", F.col("_cdc_topic"), F.coalesce(src.db, F.lit("-")),
        F.coalesce(src.schema, F.lit("-")), F.coalesce(src.table, F.lit("-"))))


def table_changes(routed: DataFrame, view: TableView) -> DataFrame:
    """One table's records: key, typed columns, TOAST flags, op, order and the first error.

    Four projections, so each column's text is looked up and decoded once: a decoder refers
    to its input many times and the error and order refer to the decoded value, and inlined
    into one projection these copies made generated code grow past the JVM's 64 KB method
    limit (Spark then falls back to slower interpreted code after a failed compile)."""
    rows = routed.filter((F.col("_cdc_table") == view.name) & ~F.col("_cdc_is_tombstone"))
    for projection in _change_columns(view):
        rows = rows.select(*projection)
    return rows


_COLUMNS_CACHE: dict[tuple, list[list[Column]]] = {}


def _change_columns(view: TableView) -> list[list[Column]]:
    """The select lists of `table_changes`, built once per table shape: its decoders are large
    expression trees, and building them from Python costs about a second per table."""
    key = (id(view.spec), tuple(view.columns.items()), tuple(view.encodings.items()),
           tuple(sorted(view.variants)), view.decimal_handling, tuple(sorted(view.fields.items())))
    if key not in _COLUMNS_CACHE:
        if len(_COLUMNS_CACHE) > 256:
            _COLUMNS_CACHE.clear()
        _COLUMNS_CACHE[key] = _build_change_columns(view)
    return _COLUMNS_CACHE[key]


def _build_change_columns(view: TableView) -> list[list[Column]]:
    """The image's texts, then the text each column takes (a TOAST placeholder answered by the
    event's own `before` under REPLICA IDENTITY FULL), then typed values, then the change."""
    op = F.col("_cdc_op")
    image = F.when(op == "d", F.col("_cdc_before")).otherwise(F.col("_cdc_after"))
    index = {c: i for i, c in enumerate(view.columns)}
    numbers = [c for c in view.columns if _may_be_number(c, view)]
    looked_up = [
        *[_field(image, c, view).cast("string").alias(f"_cdc_a_{index[c]}") for c in view.columns],
        *[_field(F.col("_cdc_before"), c, view).cast("string").alias(f"_cdc_b_{index[c]}") for c in view.values],
        *[_in_before(c, view).alias(f"_cdc_hb_{index[c]}") for c in view.values],
        *[_is_number(_field(image, c, view)).alias(f"_cdc_na_{index[c]}") for c in numbers],
        *[_is_number(_field(F.col("_cdc_before"), c, view)).alias(f"_cdc_nb_{index[c]}") for c in numbers if c in view.values],
    ]
    chosen = [col for c in view.columns for col in _chosen_text(index[c], c in numbers, c in view.values)]
    raw = {c: F.col(f"_cdc_t_{index[c]}") for c in view.columns}
    number = {c: F.col(f"_cdc_n_{index[c]}") if c in numbers else None for c in view.columns}
    typed = [_decode_column(raw[c], c, view, number[c]).alias(f"_cdc_v_{index[c]}") for c in view.columns]
    value = {c: F.col(f"_cdc_v_{index[c]}") for c in view.columns}
    after_value = lambda c: _as_order_number(value[c], view.columns[c])  # noqa: E731
    position = source_position(F.col("_cdc_source"), view.spec.sequence_by, after_value)
    error = F.coalesce(
        F.col("_cdc_error"), position.missing, _image_error(view),
        *[_key_error(raw[k], k) for k in view.keys],
        *[_decode_error(raw[c], value[c], c, view) for c in view.columns],
    )
    ts = F.coalesce(F.col("_cdc_envelope_ts"), F.col("_cdc_source").getItem("ts_ms").try_cast("bigint"))
    unavailable = {c: F.col(f"_cdc_p_{index[c]}") for c in view.values}
    final = [
        *[F.col(c) for c in ORIGIN_COLUMNS],
        *[value[c].alias(c) for c in view.keys],
        *[F.when(~unavailable[c], value[c]).alias(c) for c in view.values],
        *[unavailable[c].alias(f"_cdc_u_{c}") for c in view.values],
        *[_old_key_column(k, view).alias(f"_cdc_ok_{k}") for k in view.keys],
        op.alias("_cdc_op"), seq_struct(position, op, F.col("_cdc_source")).alias("_cdc_seq"),
        ts.alias("_cdc_source_ts"), error.alias("_cdc_error"),
    ]
    return [[F.col("*"), *looked_up], [F.col("*"), *chosen], [F.col("*"), *typed], final]


def _chosen_text(i: int, has_number: bool, is_value: bool) -> list[Column]:
    """A value column's text: the image's, or, where that is a TOAST placeholder on an update,
    its own `before` value when the event has one that is not a placeholder itself (NULL is a
    value); `_cdc_p_`: still a placeholder."""
    after = F.col(f"_cdc_a_{i}")
    if not is_value:
        out = [after.alias(f"_cdc_t_{i}")]
        return out + ([F.col(f"_cdc_na_{i}").alias(f"_cdc_n_{i}")] if has_number else [])
    before = F.col(f"_cdc_b_{i}")
    from_before = ((F.col("_cdc_op") == "u") & is_placeholder(after) & F.col(f"_cdc_hb_{i}")
                   & ~is_placeholder(before))
    out = [F.when(from_before, before).otherwise(after).alias(f"_cdc_t_{i}"),
           (is_placeholder(after) & ~from_before).alias(f"_cdc_p_{i}")]
    if has_number:
        out.append(F.when(from_before, F.col(f"_cdc_nb_{i}")).otherwise(F.col(f"_cdc_na_{i}")).alias(f"_cdc_n_{i}"))
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
    before = F.col("_cdc_before")
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
    text = F.try_element_at(F.col("_cdc_old_key"), F.lit(key))
    decoded = decode(text, view.columns[key], view.encodings.get(key), None, view.decimal_handling)
    return F.when(F.col("_cdc_op") == "c", decoded)


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
        cond = F.col("_cdc_schema_id").isin(*ids)
        expr = F.when(cond, decoded) if expr is None else expr.when(cond, decoded)
    return default if expr is None else expr.otherwise(default)


def _image_error(view: TableView) -> Column:
    op = F.col("_cdc_op")
    before_null = F.col("_cdc_before").isNull()
    return (
        F.when((op == "d") & before_null, F.lit(
            f"delete without a key for table {view.name}: 'before' is null. The source table "
            "sends no old key (Postgres: REPLICA IDENTITY NOTHING or no primary key); set "
            "REPLICA IDENTITY DEFAULT with a primary key, or REPLICA IDENTITY FULL"))
        .when(op.isin("c", "u", "r") & F.col("_cdc_after").isNull(),
              F.format_string("op '%s' without an 'after' image", op))
    )


def _key_error(text: Column, key: str) -> Column:
    op = F.col("_cdc_op")
    where = F.when(op == "d", F.lit("before")).otherwise(F.lit("after"))
    return F.when(op.isin(*ROW_OPS) & text.isNull(),
                  F.format_string("key column '%s' is null or missing in '%s'", F.lit(key), where))


def _decode_error(text: Column, typed: Column, column: str, view: TableView) -> Column:
    """'column x: value v does not decode as T' when text is present and the value is not."""
    needed = F.col("_cdc_op").isin("c", "u", "r") if column not in view.keys else F.col("_cdc_op").isin(*ROW_OPS)
    bad = needed & text.isNotNull() & typed.isNull() & ~is_placeholder(text)
    shown = F.when(F.length(text) > MAX_SHOWN, F.concat(F.substring(text, 1, MAX_SHOWN), F.lit("…"))).otherwise(text)
    return F.when(bad, F.format_string("column '%s': value '%s' does not decode as %s",
                                       F.lit(column), shown, F.lit(view.columns[column].name)))


def _as_order_number(value: Column, sql_type: SqlType) -> Column:
    if sql_type.kind == "timestamp":
        return F.unix_micros(value.cast("timestamp"))
    if sql_type.kind == "date":
        return F.unix_date(value).cast("bigint")
    return value.try_cast("bigint")


def reduce_to_last_change(changes: DataFrame, view: TableView) -> DataFrame:
    """Per key, the last change of the batch. Where its value of a column is a TOAST
    placeholder, the value comes from the newest earlier change of the key in the batch that
    has one (a delete between them leaves no value), and `_cdc_toast_<c>` says where it came
    from: {seq: that change's position or null, known: it had a value}. The MERGE takes the
    stored value instead when the stored row is newer than that change (see `lake.plan`), so a
    value is never carried from a change the table would reject. Changes reach this step
    already guarded against tombstones and truncates."""
    values = view.values
    last = F.max_by(F.struct(
        "_cdc_op", "_cdc_seq", "_cdc_source_ts", *[col(c) for c in values], *[col(f"_cdc_u_{c}") for c in values]),
        "_cdc_seq")
    deleted = F.col("_cdc_op") == "d"
    donors = [F.max_by(F.struct(col(c).alias("v"), F.col("_cdc_seq").alias("seq"), (~deleted).alias("known")),
                       F.when(deleted | ~col(f"_cdc_u_{c}"), F.col("_cdc_seq"))).alias(f"_cdc_c_{c}") for c in values]
    grouped = changes.groupBy(*[col(k) for k in view.keys]).agg(last.alias("_cdc_last"), *donors)
    out = [col(k) for k in view.keys] + [F.col(f"_cdc_last.{n}").alias(n) for n in
                                           ("_cdc_op", "_cdc_seq", "_cdc_source_ts")]
    for c in values:
        unavailable = F.col("_cdc_last").getField(f"_cdc_u_{c}")
        donor = col(f"_cdc_c_{c}")
        known = F.coalesce(donor.getField("known"), F.lit(False))
        out.append(F.when(unavailable, F.when(known, donor.getField("v")))
                   .otherwise(F.col("_cdc_last").getField(c)).alias(c))
        out.append(F.when(unavailable, F.struct(donor.getField("seq").alias("seq"), known.alias("known")))
                   .alias(toast_column(c)))
    return grouped.select(*out)


def carry_across_key_change(changes: DataFrame, stored: DataFrame, view: TableView,
                            max_chain: int = 8) -> DataFrame:
    """A primary-key change reaches Debezium as a delete of the old key and a create of the new
    one, and Postgres sends the row's unchanged out-of-line (TOAST) values as placeholders. Such
    a placeholder takes the old key's value from just before the change: from the batch's
    earlier changes of the old key, else from `stored` (recent versions of the table, since the
    delete may have landed in an earlier batch). A chain of key changes (a -> b -> c) resolves
    one link per pass (only batches with key changes pay for these passes); what no pass
    resolves stays flagged."""
    values = view.values
    moved = (F.col("_cdc_op") == "c") & col(f"_cdc_ok_{view.keys[0]}").isNotNull()
    waiting = moved & F.greatest(*[col(f"_cdc_u_{c}") for c in values])
    kept = stored.select(*[col(k).alias(f"_cdc_s_{k}") for k in view.keys],
                         F.col("_cdc_seq").alias("_cdc_s_seq"), *[col(c).alias(f"_cdc_s_{c}") for c in values])
    left = changes.filter(waiting).count()
    for _ in range(max_chain):
        if not left:
            break
        filled = _fill_from_old_key(changes.filter(waiting), changes, kept, view)
        changes = changes.filter(~waiting).unionByName(filled).localCheckpoint()  # keeps plans flat
        before, left = left, changes.filter(waiting).count()
        if left == before:   # nothing resolved: the rest has no donor in reach
            break
    return changes


def _fill_from_old_key(todo: DataFrame, changes: DataFrame, kept: DataFrame, view: TableView) -> DataFrame:
    keys, values = view.keys, view.values
    earlier = changes.filter(F.col("_cdc_op").isin("c", "u", "r")).select(
        *[col(k).alias(f"_cdc_d_{k}") for k in keys], F.col("_cdc_seq").alias("_cdc_d_seq"),
        *[col(c).alias(f"_cdc_d_{c}") for c in values],
        *[col(f"_cdc_u_{c}").alias(f"_cdc_du_{c}") for c in values])
    t = _donors(todo, earlier, "_cdc_d_", keys, [F.max_by(F.struct(col(f"_cdc_d_{c}").alias("v")), F.when(
        ~col(f"_cdc_du_{c}"), F.col("_cdc_d_seq"))).alias(f"_cdc_b_{c}") for c in values])
    t = _donors(t, kept, "_cdc_s_", keys, [F.max_by(F.struct(*[col(f"_cdc_s_{c}").alias(c) for c in values]),
                                                     F.col("_cdc_s_seq")).alias("_cdc_s")])
    filled = {}
    for c in values:
        unavailable, in_batch, in_store = (col(f"_cdc_u_{c}"), col(f"_cdc_b_{c}").isNotNull(),
                                           F.col("_cdc_s").isNotNull())
        filled[c] = F.when(unavailable & in_batch, col(f"_cdc_b_{c}").getField("v")) \
            .when(unavailable & in_store, F.col("_cdc_s").getField(c)).otherwise(col(c))
        filled[f"_cdc_u_{c}"] = unavailable & ~in_batch & ~in_store
    return t.select(*[filled.get(c, col(c)).alias(c) for c in todo.columns])


def _donors(todo: DataFrame, donors: DataFrame, prefix: str, keys: list[str], picks: list[Column]) -> DataFrame:
    """`todo` with `picks` aggregated over the donor rows of its old key older than the change."""
    same_key = [todo[f"_cdc_ok_{k}"] == donors[f"{prefix}{k}"] for k in keys]
    older = donors[f"{prefix}seq"] < todo["_cdc_seq"]
    return todo.join(donors, _all(same_key) & older, "left").groupBy(*[col(c) for c in todo.columns]).agg(*picks)


def _all(conditions: list[Column]) -> Column:
    out = conditions[0]
    for c in conditions[1:]:
        out = out & c
    return out
