"""Value bytes -> Debezium envelope columns, with or without the schema/payload wrapper.

Row images are parsed as ``map<string,variant>``: every declared, undeclared or partial column
is kept with its JSON type, numbers exactly (a variant holds up to 38 digits as a decimal;
``map<string,string>`` would pass fractional numbers through a double), and typed decoding
happens per table afterwards (``logical.py``). ``source`` is ``map<string,string>`` (integers
stay exact there). One ``from_json`` per record; malformed records are diagnosed only when they
occur.
"""

from __future__ import annotations

from functools import lru_cache

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from ..frame import (AFTER, BEFORE, ENVELOPE_TS, ERROR, IS_TOMBSTONE, OLD_KEY, OP, ORIGIN_COLUMNS, RAW_COLUMNS,
                     RAW_OLD_KEY, SCHEMA, SCHEMA_ID, SOURCE, VALUE)

ENVELOPE = ("before map<string,variant>, after map<string,variant>, op string, ts_ms string, "
            "source map<string,string>, transaction map<string,string>")
WRAPPED = f"schema string, payload struct<{ENVELOPE}>, {ENVELOPE}, _corrupt string"
LOOSE = "schema string, payload string, before string, after string, op string, source string"
OPS = ("c", "u", "d", "r", "t", "m")
# from_json keeps the last of repeated keys and ignores text after the first JSON value; the
# strict checks parse again (as a variant, whose size limit is 16 MiB) up to this size
STRICT_JSON_MAX_BYTES = 8 * 1024 * 1024
ENVELOPE_FIELDS = ("before", "after", "op", "ts_ms", "source", "transaction")
END_MARK = "cdc-delta: end of the value"     # the strict check's marker after the value


def parse_envelopes(raw: DataFrame, max_value_bytes: int = 32 * 1024 * 1024) -> DataFrame:
    """Add the envelope (op, before, after, source, …; see frame.py) and the error to raw records.
    Values over ``max_value_bytes`` are not parsed (memory stays bounded) and get a reason."""
    parse, pick = _envelope_columns(RAW_OLD_KEY in raw.columns, max_value_bytes)
    return raw.select(*parse).select(*pick)


@lru_cache(maxsize=16)
def _envelope_columns(has_old_key: bool, max_value_bytes: int) -> tuple[tuple[Column, ...], tuple[Column, ...]]:
    """The two select lists of `parse_envelopes`, built once: built from Python, call by call
    through Py4J, they cost the driver about half a second before each batch's first job."""
    text = F.col("value").cast("string")
    parsed = F.from_json(text, WRAPPED, {"columnNameOfCorruptRecord": "_corrupt", "mode": "PERMISSIVE"})
    old_key = F.col(RAW_OLD_KEY) if has_old_key else F.lit(None).cast("string")
    parse = (
        *[F.col(c).alias(o) for c, o in zip(RAW_COLUMNS, ORIGIN_COLUMNS)],
        F.when(F.col("value").isNotNull() & (F.length("value") <= max_value_bytes) & F.is_valid_utf8("value"),
               parsed).alias("_j"),
        _key_map(old_key).alias(OLD_KEY),
    )
    wrapped = F.col("_j.payload").isNotNull()
    field = {f: F.when(wrapped, F.col(f"_j.payload.{f}")).otherwise(F.col(f"_j.{f}")) for f in ENVELOPE_FIELDS}
    schema_text = F.when(wrapped, F.col("_j.schema"))
    pick = (
        *[F.col(c) for c in ORIGIN_COLUMNS],
        F.col(VALUE).isNull().alias(IS_TOMBSTONE),
        field["op"].alias(OP),
        field["before"].alias(BEFORE), field["after"].alias(AFTER),
        field["source"].alias(SOURCE),
        field["ts_ms"].try_cast("bigint").alias(ENVELOPE_TS),
        schema_text.alias(SCHEMA),
        F.xxhash64(schema_text).alias(SCHEMA_ID),
        _envelope_error(F.col(VALUE).cast("string"), field["op"], max_value_bytes).alias(ERROR),
        F.col(OLD_KEY),
    )
    return parse, pick


def _key_map(text: Column) -> Column:
    """A record key's fields as map<string,string>, with or without the schema/payload wrapper."""
    fields = F.from_json(text, "map<string,string>")
    payload = F.from_json(F.try_element_at(fields, F.lit("payload")), "map<string,string>")
    return F.when(fields.isNotNull() & F.map_contains_key(fields, "payload"), payload).otherwise(fields)


def _envelope_error(text: Column, op: Column, max_value_bytes: int) -> Column:
    """The first thing wrong with a record as an envelope, or null."""
    value = F.col(VALUE)
    loose = F.from_json(text, LOOSE)
    strict = F.length(value) <= STRICT_JSON_MAX_BYTES
    return (
        F.when(value.isNull(), F.lit(None))
        .when(F.length(value) > max_value_bytes, F.format_string(
            "value is %d bytes, over decoding.max_value_bytes (%d); raise that setting to accept it",
            F.length(value), F.lit(max_value_bytes)))
        .when(~F.is_valid_utf8(value), F.lit("value is not valid UTF-8"))
        .when(F.col("_j._corrupt").isNotNull(), _diagnose(loose))
        .when(op.isNull(), F.lit("no 'op' field: not a Debezium change event envelope"))
        .when(~op.isin(*OPS), F.format_string("unknown op '%s'; allowed: %s", op, F.lit(", ".join(OPS))))
        .when(strict & ~_one_strict_value(text), F.when(F.try_parse_json(text).isNull(), F.lit(
            "ambiguous JSON: a key appears twice in one object (or a bare NaN/Infinity number)"))
            .otherwise(F.lit("malformed JSON: text follows the JSON object")))
    )


def _one_strict_value(text: Column) -> Column:
    """The text is one JSON value with no key twice in an object and no bare NaN, and no text
    follows it, in one parse of the text as the first element of an array whose second is a
    marker: text after the value fails that parse or puts something else second, and a ']'
    right after the value, which ends the array early (Spark's JSON readers ignore what follows
    the first value), leaves no second element. Which of the two is wrong is asked only of a
    record that fails: each check alone is a parse of every record, and wrapped events are ~2 KB."""
    array = F.try_parse_json(F.concat(F.lit("["), text, F.lit(f',"{END_MARK}"]')))
    return F.coalesce(F.try_variant_get(array, "$[1]", "string") == END_MARK, F.lit(False))


def _diagnose(loose: Column) -> Column:
    return F.when(loose.isNull() | (loose.op.isNull() & loose.payload.isNull() & loose.after.isNull()),
                  F.lit("malformed JSON: the value does not parse as a JSON object")) \
        .otherwise(F.lit("not a Debezium envelope: before, after and source must be JSON objects "
                         "and op/ts_ms scalars"))
