"""Each Debezium value decoder on edge values, compared with Python's own arithmetic."""

from __future__ import annotations

import base64
import datetime as dt
import random
from decimal import Decimal

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from pyspark.sql import functions as F

from cdc_delta.config.types import parse_sql_type
from devtools.encode import decimal_b64
from cdc_delta.debezium.logical import decode

from .helpers import TIMESTAMP_EDGES, session_setting

pytestmark = pytest.mark.spark
UTC = dt.timezone.utc


def decoded(spark, texts, sql_type, encoding, scale=None, decimal_handling="precise"):
    df = spark.createDataFrame([(i, t) for i, t in enumerate(texts)], "i int, t string")
    out = df.select("i", decode(F.col("t"), parse_sql_type(sql_type), encoding, scale, decimal_handling).alias("v"))
    return [r["v"] for r in out.orderBy("i").collect()]


def test_precise_decimals(spark):
    values = [Decimal("0.00"), Decimal("-0.01"), Decimal("123.45"), Decimal("-123.45"), Decimal("-1.28"),
              Decimal("1.28"), Decimal("999999999999999999999999999999999999.99"),
              Decimal("-999999999999999999999999999999999999.99")]
    got = decoded(spark, [decimal_b64(v, 2) for v in values], "decimal(38,2)", "Decimal", 2)
    assert got == values


@pytest.mark.parametrize("precision,scale", [(12, 2), (18, 0), (18, 9), (38, 2), (38, 17)])
def test_precise_decimals_random_and_at_byte_edges(spark, precision, scale):
    """Both decoders (up to 8 bytes, and up to 16) against Python, at random and where the
    two's-complement bytes change length or sign."""
    rng = random.Random(precision * 100 + scale)
    top = 10 ** precision - 1
    unscaled = [0, 1, -1, 127, 128, -128, -129, 255, 256, -256, 2 ** 63 - 1, -(2 ** 63), top, -top]
    unscaled += [rng.randrange(-top, top + 1) for _ in range(300)]
    values = [Decimal(f"{u}E-{scale}") for u in unscaled if abs(u) <= top]   # exact: no context rounding
    got = decoded(spark, [decimal_b64(v, scale) for v in values], f"decimal({precision},{scale})", "Decimal", scale)
    assert got == values


def test_precise_decimal_scale_from_schema_and_overflow(spark):
    assert decoded(spark, [decimal_b64(Decimal("-7.125"), 3)], "decimal(10,3)", "Decimal", 3) == [Decimal("-7.125")]
    # 12345.678 does not fit decimal(5,3): null, which the caller quarantines
    assert decoded(spark, [decimal_b64(Decimal("12345.678"), 3), "not base64!"], "decimal(5,3)", "Decimal", 3) == [None, None]


def test_precise_decimals_of_every_scale_a_long_holds(spark):
    """Columns of up to 18 digits (at most 8 bytes): at each scale, the byte edges and values
    with more scale than the column (exact or null, never rounded)."""
    for scale in range(0, 19):
        unscaled = [0, 1, -1, 127, -128, 32767, -32769, 10 ** 17 + 1, -(10 ** 18 - 1)]
        values = [Decimal(f"{u}E-{scale}") for u in unscaled]
        assert decoded(spark, [decimal_b64(v, scale) for v in values], f"decimal(18,{scale})", "Decimal",
                       scale) == values, scale
    more_scale = [decimal_b64(Decimal(v), 3) for v in ("-7.120", "7.125", "123.000", "0.001")]
    assert decoded(spark, more_scale, "decimal(10,2)", "Decimal", 3) == [Decimal("-7.12"), None, Decimal("123.00"), None]


def test_precise_decimal_of_more_bytes_than_a_long_is_null(spark):
    """Nine bytes (a value sign-extended past 8, or one of over 19 digits) into a column of
    up to 18 digits: null, which the caller quarantines, and the batch runs on."""
    nine = [base64.b64encode(v.to_bytes(9, "big", signed=True)).decode() for v in (5, -5, 2 ** 70)]
    assert decoded(spark, nine, "decimal(18,2)", "Decimal", 2) == [None, None, None]


def test_variable_scale_and_number_decimals(spark):
    vsd = '{"scale":3,"value":"' + decimal_b64(Decimal("-123.456"), 3) + '"}'
    assert decoded(spark, [vsd], "decimal(20,3)", "VariableScaleDecimal") == [Decimal("-123.456")]
    assert decoded(spark, ["12.5", "-0.001"], "decimal(10,3)", None, decimal_handling="double") == \
        [Decimal("12.500"), Decimal("-0.001")]


def test_dates_before_and_after_1970(spark):
    days = [-1, -719162, 0, 18000, 2932896]
    want = [dt.date(1970, 1, 1) + dt.timedelta(days=d) for d in days]
    assert decoded(spark, [str(d) for d in days], "date", "Date") == want
    assert decoded(spark, ["2020-02-29", "2020-02-30"], "date", None) == [dt.date(2020, 2, 29), None]


def micros_of(t: dt.datetime) -> int:
    delta = t - dt.datetime(1970, 1, 1, tzinfo=UTC)
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def naive(t: dt.datetime) -> dt.datetime:
    return t.astimezone(UTC).replace(tzinfo=None)


def test_timestamps_ms_micro_nano(spark):
    times = [dt.datetime(1969, 12, 31, 23, 59, 59, 999999, tzinfo=UTC), dt.datetime(1900, 1, 1, tzinfo=UTC),
             dt.datetime(2026, 11, 29, 13, 37, 3, 123456, tzinfo=UTC)]
    micros = [micros_of(t) for t in times]
    spark_now = [naive(t) for t in times]
    assert decoded(spark, [str(m) for m in micros], "timestamp_ntz", "MicroTimestamp") == spark_now
    assert decoded(spark, [str(m * 1000) for m in micros], "timestamp_ntz", "NanoTimestamp") == spark_now
    # a part of a microsecond no Spark timestamp holds: null, which the caller quarantines
    assert decoded(spark, [str(m * 1000 + 789) for m in micros], "timestamp_ntz", "NanoTimestamp") == [None] * 3
    ms = [m // 1000 for m in micros]
    assert decoded(spark, [str(v) for v in ms], "timestamp_ntz", "Timestamp") == \
        [naive(dt.datetime(1970, 1, 1, tzinfo=UTC) + dt.timedelta(milliseconds=v)) for v in ms]


# an instant as Debezium sends it, in nanoseconds since the epoch: each encoding at its own
# precision (text, with or without an offset, with 0 to 9 digits of fraction), from year 1 to
# 9999 (NanoTimestamp: what an int64 holds), now and then an edge of the calendar or of a
# session zone's clock plus some nanoseconds. "text": ISO-8601 without an offset, no encoding.
ENCODED_UNITS = {"Timestamp": 10**6, "MicroTimestamp": 10**3, "NanoTimestamp": 1, "ZonedTimestamp": 1, "text": 1}
FIRST_NANOS, LAST_NANOS = -62135596800 * 10**9, 253402300800 * 10**9 - 1
SESSION_ZONES = ["UTC", "America/New_York", "Asia/Kolkata", "Pacific/Chatham", "America/St_Johns"]


@st.composite
def encoded_instants(draw) -> tuple[str, str, int]:
    """(text, encoding, nanoseconds since the epoch)."""
    encoding = draw(st.sampled_from(list(ENCODED_UNITS)))
    low, high = (-(2**63), 2**63 - 1) if encoding == "NanoTimestamp" else (FIRST_NANOS, LAST_NANOS)
    edge = st.builds(lambda t, n: micros_of(t.replace(tzinfo=UTC)) * 1000 + n,
                     st.sampled_from(TIMESTAMP_EDGES), st.integers(0, 999))
    nanos = draw(st.one_of(edge, st.integers(low, high)).filter(lambda n: low <= n <= high))
    unit = ENCODED_UNITS[encoding]
    if encoding not in ("ZonedTimestamp", "text"):
        return str(nanos // unit), encoding, nanos - nanos % unit
    digits = draw(st.integers(0, 9))
    nanos -= nanos % 10 ** (9 - digits)
    offset = dt.timedelta(minutes=draw(st.integers(-18 * 4, 18 * 4)) * 15) if encoding != "text" else dt.timedelta(0)
    seconds, fraction = divmod(nanos, 10**9)
    try:
        wall = (dt.datetime(1970, 1, 1) + dt.timedelta(seconds=seconds) + offset)
    except OverflowError:      # the offset takes the wall time past year 1 or 9999
        wall, offset = dt.datetime(1970, 1, 1) + dt.timedelta(seconds=seconds), dt.timedelta(0)
    zone = "" if encoding == "text" else dt.timezone(offset).tzname(None)[3:] or "Z"
    separator = draw(st.sampled_from("T ")) if encoding == "text" else "T"
    text = wall.isoformat(sep=separator, timespec="seconds") + (f".{fraction:09d}"[:digits + 1] if digits else "") + zone
    return text, encoding, nanos


@settings(max_examples=20, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(instants=st.lists(encoded_instants(), min_size=1, max_size=40), zone=st.sampled_from(SESSION_ZONES))
@example(instants=[("2026-03-08T02:30:00", "text", 1772937000 * 10**9),    # the hour New York's clock skips
                   ("2026-11-01 01:30:00.000001", "text", 1793496600000001000)], zone="America/New_York")
def test_instants_decode_exactly_or_not_at_all(spark, instants, zone):
    """Into `timestamp` and `timestamp_ntz` (the UTC wall time), whatever the session's time
    zone: the instant's microsecond, or null (quarantined) where it has a part of a microsecond
    a Spark timestamp can not hold; into `date`, the instant's UTC day."""
    df = spark.createDataFrame([(i, t, e) for i, (t, e, _) in enumerate(instants)], "i int, t string, e string")
    by_encoding = lambda sql_type: F.coalesce(*[   # noqa: E731
        F.when(F.col("e") == e, decode(F.col("t"), parse_sql_type(sql_type), None if e == "text" else e))
        for e in ENCODED_UNITS])
    with session_setting(spark, "spark.sql.session.timeZone", zone):
        got = df.select("i", F.unix_micros(by_encoding("timestamp")).alias("ts"),
                        by_encoding("timestamp_ntz").cast("string").alias("ntz"),   # as text: no zone
                        F.unix_date(by_encoding("date")).alias("date")).orderBy("i").collect()
    for (text, encoding, nanos), row in zip(instants, got):
        micros = nanos // 1000 if nanos % 1000 == 0 else None
        wall = None if row["ntz"] is None else micros_of(dt.datetime.fromisoformat(row["ntz"]).replace(tzinfo=UTC))
        assert (row["ts"], wall, row["date"]) == (micros, micros, nanos // (86_400 * 10**9)), (text, encoding, zone)


def test_zoned_timestamps(spark):
    got = decoded(spark, ["2018-06-20T13:37:03Z", "2018-06-20T13:37:03.123456+02:00", "1965-01-01T00:00:00-05:00", "yesterday"],
                  "timestamp_ntz", "ZonedTimestamp")
    assert got == [dt.datetime(2018, 6, 20, 13, 37, 3), dt.datetime(2018, 6, 20, 11, 37, 3, 123456),
                   dt.datetime(1965, 1, 1, 5, 0), None]


def test_times(spark):
    assert decoded(spark, ["0", "49023123456", "86399999999", "-5"], "string", "MicroTime") == \
        ["00:00:00.000000", "13:37:03.123456", "23:59:59.999999", None]
    assert decoded(spark, ["49023123"], "string", "Time") == ["13:37:03.123000"]
    assert decoded(spark, ["49023123456789", "0", "86399999999999"], "string", "NanoTime") == \
        ["13:37:03.123456789", "00:00:00.000000000", "23:59:59.999999999"]
    # as microseconds of the day, a part of a microsecond is not held: null, quarantined
    assert decoded(spark, ["49023123456000", "49023123456789"], "bigint", "NanoTime") == [49023123456, None]


def test_plain_values_and_range(spark):
    assert decoded(spark, ["2147483647", "2147483648", "x", "-1"], "int", None) == [2147483647, None, None, -1]
    assert decoded(spark, ["true", "false", "maybe"], "boolean", None) == [True, False, None]
    assert decoded(spark, ["AQID", "%%"], "binary", None) == [bytearray(b"\x01\x02\x03"), None]
    assert decoded(spark, ['{"a":[1,2]}'], "string", "Json") == ['{"a":[1,2]}']


def test_decimal_beyond_38_digits_is_null_not_a_crash(spark):
    too_big = decimal_b64(Decimal(10) ** 38, 0)  # 39 digits
    assert decoded(spark, [too_big, decimal_b64(-(Decimal(10) ** 39), 0)], "decimal(38,0)", "Decimal", 0) == [None, None]
