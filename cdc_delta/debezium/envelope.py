"""Value bytes -> Debezium envelope columns, with or without the schema/payload wrapper.

Row images are parsed as ``map<string,variant>``: every declared, undeclared or partial column
is kept with its JSON type, numbers exactly (a variant holds up to 38 digits as a decimal;
``map<string,string>`` would pass fractional numbers through a double), and typed decoding
happens per table afterwards (``logical.py``). ``source`` is ``map<string,string>`` (integers
stay exact there). One ``from_json`` per record; malformed records are diagnosed only when they
occur.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

ENVELOPE = ("before map<string,variant>, after map<string,variant>, op string, ts_ms string, "
            "source map<string,string>, transaction map<string,string>")
WRAPPED = f"schema string, payload struct<{ENVELOPE}>, {ENVELOPE}, _corrupt string"
LOOSE = "schema string, payload string, before string, after string, op string, source string"
OPS = ("c", "u", "d", "r", "t", "m")
# from_json keeps the last of repeated keys and ignores text after the first JSON value; the
# strict checks parse again (as a variant, whose size limit is 16 MiB) up to this size
STRICT_JSON_MAX_BYTES = 8 * 1024 * 1024
ENVELOPE_FIELDS = ("before", "after", "op", "ts_ms", "source", "transaction")


def parse_envelopes(raw: DataFrame, max_value_bytes: int = 32 * 1024 * 1024) -> DataFrame:
    """Add the envelope (``_cdc_op``, ``_cdc_before``, …) and ``_cdc_error`` to raw records.
    Values over ``max_value_bytes`` are not parsed (memory stays bounded) and get a reason."""
    text = F.col("value").cast("string")
    parsed = F.from_json(text, WRAPPED, {"columnNameOfCorruptRecord": "_corrupt", "mode": "PERMISSIVE"})
    old_key = F.col("old_key") if "old_key" in raw.columns else F.lit(None).cast("string")
    df = raw.select(
        F.col("value").alias("_cdc_value"), F.col("topic").alias("_cdc_topic"),
        F.col("partition").alias("_cdc_partition"), F.col("offset").alias("_cdc_offset"),
        F.col("origin").alias("_cdc_origin"), F.col("kafka_ts").alias("_cdc_kafka_ts"),
        F.when(F.col("value").isNotNull() & (F.length("value") <= max_value_bytes) & F.is_valid_utf8("value"),
               parsed).alias("_j"),
        _key_map(old_key).alias("_cdc_old_key"),
    )
    wrapped = F.col("_j.payload").isNotNull()
    pick = {f: F.when(wrapped, F.col(f"_j.payload.{f}")).otherwise(F.col(f"_j.{f}")) for f in ENVELOPE_FIELDS}
    schema_text = F.when(wrapped, F.col("_j.schema"))
    return df.select(
        "_cdc_value", "_cdc_topic", "_cdc_partition", "_cdc_offset", "_cdc_origin", "_cdc_kafka_ts",
        F.col("_cdc_value").isNull().alias("_cdc_is_tombstone"),
        pick["op"].alias("_cdc_op"),
        pick["before"].alias("_cdc_before"), pick["after"].alias("_cdc_after"),
        pick["source"].alias("_cdc_source"),
        pick["ts_ms"].try_cast("bigint").alias("_cdc_envelope_ts"),
        schema_text.alias("_cdc_schema"),
        F.xxhash64(schema_text).alias("_cdc_schema_id"),
        _envelope_error(F.col("_cdc_value").cast("string"), pick["op"], max_value_bytes).alias("_cdc_error"),
        "_cdc_old_key",
    )


def _key_map(text: Column) -> Column:
    """A record key's fields as map<string,string>, with or without the schema/payload wrapper."""
    fields = F.from_json(text, "map<string,string>")
    payload = F.from_json(F.try_element_at(fields, F.lit("payload")), "map<string,string>")
    return F.when(fields.isNotNull() & F.map_contains_key(fields, "payload"), payload).otherwise(fields)


def _envelope_error(text: Column, op: Column, max_value_bytes: int) -> Column:
    """The first thing wrong with a record as an envelope, or null."""
    value = F.col("_cdc_value")
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
        .when(strict & F.try_parse_json(text).isNull(), F.lit(
            "ambiguous JSON: a key appears twice in one object (or a bare NaN/Infinity number)"))
        .when(strict & ~F.json_array_length(F.concat(F.lit("["), text, F.lit("]"))).eqNullSafe(1),
              F.lit("malformed JSON: text follows the JSON object"))
    )


def _diagnose(loose: Column) -> Column:
    return F.when(loose.isNull() | (loose.op.isNull() & loose.payload.isNull() & loose.after.isNull()),
                  F.lit("malformed JSON: the value does not parse as a JSON object")) \
        .otherwise(F.lit("not a Debezium envelope: before, after and source must be JSON objects "
                         "and op/ts_ms scalars"))
