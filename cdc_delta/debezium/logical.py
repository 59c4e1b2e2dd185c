"""Debezium value encodings decoded to the declared Spark type, as column expressions.

Every decoder takes the value's JSON text (numbers as their literal text) and returns the typed
value, or null when the text does not decode; the caller turns "text present, value null" into a
quarantine reason. No Python UDF: all of it runs in Spark's code generation.
"""

from __future__ import annotations

from typing import Callable

from pyspark.sql import Column
from pyspark.sql import functions as F

from ..config.types import SqlType

TOAST_PLACEHOLDER = "__debezium_unavailable_value"
TOAST_PLACEHOLDER_B64 = "X19kZWJleml1bV91bmF2YWlsYWJsZV92YWx1ZQ=="
DEFAULT_TIMESTAMP_ENCODING = "MicroTimestamp"
INTEGER_TEXT = r"^-?[0-9]+$"
INSTANT_ENCODINGS = ("Timestamp", "MicroTimestamp", "NanoTimestamp", "ZonedTimestamp")
MICROS_PER_DAY = 86_400_000_000
# an instant's integer encodings, in microseconds per unit ("nanos": a thousandth)
INSTANT_UNITS = {"Timestamp": 1000, "MicroTimestamp": 1, "NanoTimestamp": "nanos", "Date": MICROS_PER_DAY}
# 0001-01-01 00:00 to 9999-12-31 23:59:59.999999 UTC: what Spark and Delta hold
MICROS_WITHIN_YEARS = (-62_135_596_800_000_000, 253_402_300_799_999_999)
# an offset or zone after the time of day ('Z', '+02:00', ' UTC', ' Europe/Paris')
ZONE_TEXT = r"[0-9]{2}:[0-9]{2}.*[A-Za-z+-]"
# a fraction of a second with a non-zero digit after the sixth
PART_OF_MICROSECOND_TEXT = r"\.[0-9]{6}[0-9]*[1-9]"
BASE64_TEXT = r"^([A-Za-z0-9+/]{4})*([A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$"


def decode(text: Column, target: SqlType, encoding: str | None, scale: int | None = None,
           decimal_handling: str = "precise", number: Column | None = None) -> Column:
    """Decode one column's JSON text to ``target`` given the Debezium ``encoding``.

    `number`: true where the JSON value is a number, not a string (a Decimal arrives as base64
    text, or as a JSON number from Kafka's JsonConverter with decimal.format=NUMERIC; base64
    text such as '1234' also reads as digits, so only the JSON type tells them apart)."""
    kind = target.kind
    if encoding is None and kind == "decimal" and decimal_handling == "precise":
        encoding = "Decimal"
    if encoding in ("Decimal", "VariableScaleDecimal"):
        if encoding == "Decimal":
            fits_long = kind == "decimal" and (target.precision or 38) <= 18
            scale = scale if scale is not None else (target.scale or 0)
            within_scale = kind != "decimal" or scale <= (target.scale or 0)
            if fits_long and scale <= LONG_BYTES_MAX_SCALE:
                value = long_bytes_decimal(text, scale)
                typed = value.try_cast(target.name)
                from_bytes = typed if within_scale else F.when(typed == value, typed)
            else:
                digits = decimal_text(text, F.lit(scale))
                from_bytes = (digits.try_cast(target.name) if within_scale
                              else _let(digits, lambda d: _exact_number(d, target)))
            return from_bytes if number is None else F.when(number, _exact_number(text, target)).otherwise(from_bytes)
        digits = decimal_text(F.get_json_object(text, "$.value"), F.get_json_object(text, "$.scale").try_cast("int"))
        return _let(digits, lambda d: _exact_number(d, target))
    if encoding == "Bits":
        return _bits(text, target)
    if kind == "decimal":
        return _exact_number(text, target)
    if kind == "date":
        return _to_date(text, encoding)
    if kind == "timestamp":
        return _to_timestamp(text, encoding, target.name)
    if kind == "string":
        return _time_text(text, encoding) if encoding in ("Time", "MicroTime", "NanoTime") else text
    if kind == "binary":
        return F.try_to_binary(text, F.lit("base64"))
    if kind == "boolean":
        return F.when(text.isin("true", "1"), True).when(text.isin("false", "0"), False)
    if kind == "integral" and encoding in ("Time", "MicroTime", "NanoTime"):
        return _micros_of_day(text, encoding).try_cast(target.name)
    return text.try_cast(target.name)


def decimal_text(b64: Column, scale: Column) -> Column:
    """Base64 big-endian two's-complement unscaled bytes (up to 16) + scale -> exact decimal
    text; null unless the text is strict base64 (Spark's decoder would take 'NaN' as bytes).
    Columns of up to 18 digits take long_bytes_decimal, a shorter expression."""
    strict = F.when(b64.rlike(BASE64_TEXT), b64)

    def from_hex(h: Column) -> Column:
        n = F.length(h) / 2
        negative = F.conv(F.substring(h, 1, 2), 16, 10).cast("int") >= 128
        magnitude = _large_magnitude(h, n, negative)

        def from_digits(digits: Column) -> Column:
            padded = F.lpad(digits, F.greatest(F.length(digits), scale + 1), "0")
            cut = F.length(padded) - scale
            body = F.when(scale <= 0, padded).otherwise(
                F.concat(F.substring(padded, F.lit(1), cut), F.lit("."), F.substring(padded, cut + 1, scale)))
            return F.when(F.length(h) > 0, F.concat(F.when(negative, F.lit("-")).otherwise(F.lit("")), body))

        return _let(magnitude.cast("string"), from_digits)

    return _let(F.hex(F.try_to_binary(strict, F.lit("base64"))), from_hex)


# long_bytes_decimal's product, decimal(19,0) x decimal(s,s), is exact while it has at most 38
# digits: past that, Spark would round it to fewer places without a word
LONG_BYTES_MAX_SCALE = 18
# 2^(8n-1) for n bytes at index n + 2 (n is -1 for a text of one or two characters), null where
# no two's complement of up to 8 bytes has that many
HALF_RANGES = [None, None, *[str(2 ** (8 * n - 1)) for n in range(1, 9)]]


def long_bytes_decimal(b64: Column, scale: int) -> Column:
    """The Decimal encoding of a column of up to 18 digits (up to 8 bytes) as an exact decimal
    of scale `scale`, by arithmetic: the bytes' unsigned value u, as two's complement
    ((u + 2^(8n-1)) mod 2^(8n)) - 2^(8n-1) for n bytes (read from the text's length, so the bytes
    are decoded once), times 10^-scale. Null unless the text is strict base64 of 1 to 8 bytes.
    decimal_text's steps run inside a lambda, which Spark evaluates interpreted: 0.15 s of a
    100k-event batch's tasks for one such column (benchmarks/jvm_profile.py)."""
    padding = F.when(b64.endswith("=="), 2).when(b64.endswith("="), 1).otherwise(0)
    n = (F.length(b64) * 3 / 4).cast("int") - padding
    half = F.try_element_at(F.array(*[F.lit(h).cast("decimal(20,0)") for h in HALF_RANGES]), n + 2)
    strict = F.when(b64.rlike(BASE64_TEXT), b64)
    unsigned = F.conv(F.hex(F.try_to_binary(strict, F.lit("base64"))), 16, 10).cast("decimal(20,0)")
    signed = (F.pmod(unsigned + half, half * 2) - half).cast("decimal(19,0)")    # -2^63 .. 2^63-1
    step = f"0.{'0' * (scale - 1)}1" if scale else "1"      # 10^-scale
    return signed * F.lit(step).cast(f"decimal({max(scale, 1)},{scale})")


def _let(value: Column, body: Callable[[Column], Column]) -> Column:
    """``body(value)`` with `value` computed once per row. Spark does not share a subexpression
    that occurs inside CASE branches, and the decimal decoders refer to their bytes and digits
    a dozen times: computed each time, they made decimals 6-7x slower to decode."""
    return F.transform(F.array(value), body)[0]


def _large_magnitude(h: Column, n: Column, negative: Column) -> Column:
    """|value| of up to 16 bytes, byte by byte (inverted bytes + 1 for negatives), nothing
    overflowing early."""
    unsigned = F.aggregate(
        F.sequence(F.lit(0), (n - 1).cast("int")),
        F.lit(0).cast("decimal(38,0)"),
        lambda acc, i: F.try_add(F.try_multiply(acc, F.lit(256)), _byte(h, i, negative)).try_cast("decimal(38,0)"),
    )
    return F.when(negative, F.try_add(unsigned, F.lit(1))).otherwise(unsigned).try_cast("decimal(38,0)")


def _byte(h: Column, i: Column, negative: Column) -> Column:
    b = F.conv(F.substring(h, i * 2 + 1, 2), 16, 10).cast("int")
    return F.when(negative, 255 - b).otherwise(b)


def _to_date(text: Column, encoding: str | None) -> Column:
    """Days since the epoch, or ISO-8601 text; an instant's encoding gives its UTC day."""
    if encoding in INSTANT_ENCODINGS:
        micros = _instant_micros(text, encoding, whole=False)
        day = F.date_from_unix_date(_floor_div(micros, MICROS_PER_DAY).cast("int"))
        return F.when(micros.between(*MICROS_WITHIN_YEARS), day)
    days = F.date_add(F.lit("1970-01-01").cast("date"), text.try_cast("int"))
    value = F.when(text.rlike(INTEGER_TEXT), days).otherwise(text.try_cast("date"))
    low, high = (F.lit(d).cast("date") for d in ("0001-01-01", "9999-12-31"))
    return F.when(value.between(low, high), value)


def _to_timestamp(text: Column, encoding: str | None, type_name: str) -> Column:
    """An instant as `timestamp`, or as `timestamp_ntz` its UTC wall time: from microseconds,
    never through the session's time zone (a `timestamp_ntz` cast from a `timestamp` takes
    the session's wall time)."""
    micros = _instant_micros(text, encoding)
    micros = F.when(micros.between(*MICROS_WITHIN_YEARS), micros)
    if type_name == "timestamp_ntz":
        return F.timestamp_add("MICROSECOND", micros, _ntz_epoch())
    return F.timestamp_micros(micros)


def _instant_micros(text: Column, encoding: str | None, whole: bool = True) -> Column:
    """Microseconds since the epoch, UTC: integers per encoding (ms, µs, ns, days), text as
    ISO-8601 at its own offset, or at UTC where it names none. `whole`: null for an instant
    with a part of a microsecond (NanoTimestamp, or text of 7 to 9 digits of fraction), which
    no Spark timestamp holds; else that part is dropped."""
    number = text.try_cast("bigint")
    unit = INSTANT_UNITS.get(encoding or DEFAULT_TIMESTAMP_ENCODING)
    if unit == "nanos":
        from_int = _whole_micros(number) if whole else _floor_div(number, 1000)
    else:
        from_int = number if unit in (None, 1) else F.try_multiply(number, F.lit(unit))
    zoned = F.unix_micros(text.try_cast("timestamp"))          # its own offset: no session time zone
    unzoned = wall_micros(text.try_cast("timestamp_ntz"))
    from_text = F.when(text.rlike(ZONE_TEXT), zoned).otherwise(unzoned)
    if whole:
        from_text = F.when(~text.rlike(PART_OF_MICROSECOND_TEXT), from_text)
    return F.when(text.rlike(INTEGER_TEXT), from_int).otherwise(from_text)


def wall_micros(wall: Column) -> Column:
    """A `timestamp_ntz` as microseconds since 1970-01-01 00:00 on the same clock, whatever
    the session's time zone: through its text, read at UTC. A cast to `timestamp`, and Spark's
    own timestamp_diff, read the wall time in the session's zone (in New York, 02:30 on the
    morning clocks spring forward came out as 03:30)."""
    return F.unix_micros(F.concat(wall.cast("string"), F.lit("Z")).try_cast("timestamp"))


def _ntz_epoch() -> Column:
    """1970-01-01 00:00 as `timestamp_ntz`, from text: a Python datetime literal would pass
    through the session's time zone. (Adding microseconds to it reads no zone.)"""
    return F.lit("1970-01-01 00:00:00").cast("timestamp_ntz")


def _micros_of_day(text: Column, encoding: str | None) -> Column:
    """Null for a NanoTime with a part of a microsecond."""
    number = text.try_cast("bigint")
    if encoding == "Time":
        return F.try_multiply(number, F.lit(1000))
    if encoding == "NanoTime":
        return _whole_micros(number)
    return number


def _whole_micros(nanos: Column) -> Column:
    """Nanoseconds as microseconds, null where they have a part of a microsecond."""
    return F.when(F.pmod(nanos, F.lit(1000)) == 0, _floor_div(nanos, 1000))


def _time_text(text: Column, encoding: str | None) -> Column:
    """Time of day as 'HH:MM:SS.ffffff' (Delta has no TIME type); NanoTime to the nanosecond,
    'HH:MM:SS.fffffffff'."""
    number = text.try_cast("bigint")
    digits = 9 if encoding == "NanoTime" else 6
    n = F.try_multiply(number, F.lit(1000)) if encoding == "Time" else number
    ok = (n >= 0) & (n <= 86_400 * 10**digits)
    seconds = (n / 10**digits).cast("bigint")
    return F.when(ok, F.format_string(
        f"%02d:%02d:%02d.%0{digits}d", (seconds / 3600).cast("bigint"), ((seconds / 60) % 60).cast("bigint"),
        (seconds % 60).cast("bigint"), (n % 10**digits).cast("bigint")))


def _floor_div(number: Column, by: int) -> Column:
    """number // by, exactly: in decimals, as the subtraction in bigints overflows near the
    smallest bigint (and under ANSI mode fails the batch)."""
    wide = number.cast("decimal(20,0)")
    exact = (wide - F.pmod(number, F.lit(by)).cast("decimal(20,0)")) / F.lit(by).cast("decimal(20,0)")
    return exact.cast("bigint")


def is_placeholder(text: Column) -> Column:
    """Postgres TOAST: the column was not sent because it did not change (never null: a NULL
    value is a value)."""
    return F.coalesce(text.isin(TOAST_PLACEHOLDER, TOAST_PLACEHOLDER_B64), F.lit(False))


PLAIN_NUMBER = r"^-?[0-9]+(\.[0-9]+)?$"
# a double carries about 15 significant decimal digits exactly
DOUBLE_DIGITS = 15


def _exact_number(text: Column, target: SqlType) -> Column:
    """Decimal text to `target`, or null unless the value is exact in it: Spark's cast rounds
    digits beyond the scale, which would change the value without a word. Plain digits keep
    every digit (a variant holds up to 38); an exponent form ('1E-7', '0E-10', or a number of
    over 38 digits that came through as a double) is taken when it has at most 15 significant
    digits and the rounded value equals it."""
    if target.kind != "decimal":
        return text.try_cast(target.name)
    value = text.try_cast(target.name)
    scale = target.scale or 0
    beyond_scale = text.rlike(r"\.[0-9]{%d}[0-9]*[1-9]" % scale)
    mantissa = F.regexp_replace(F.regexp_extract(text, r"^-?([0-9.]+)", 1), r"\.", "")
    significant = F.length(F.regexp_replace(mantissa, r"^0+|0+$", ""))
    exponent_exact = (significant <= DOUBLE_DIGITS) & (value.cast("double") == text.try_cast("double"))
    return F.when(text.rlike(PLAIN_NUMBER), F.when(~beyond_scale, value)).when(exponent_exact, value)


def _bits(text: Column, target: SqlType) -> Column:
    """io.debezium.data.Bits: base64 of the bits in little-endian byte order. Binary columns get
    the bytes in big-endian order (as the database shows them), integral columns the number
    (null when it does not fit, e.g. BIT(64) with the top bit set into bigint), string columns
    the big-endian hex."""
    little = F.hex(F.try_to_binary(F.when(text.rlike(BASE64_TEXT), text), F.lit("base64")))
    big = F.array_join(F.reverse(F.regexp_extract_all(little, F.lit("(..)"), 1)), "")
    if target.kind == "binary":
        return F.unhex(big)
    if target.kind == "integral":
        return F.when(F.length(big) <= 16, F.conv(big, 16, 10)).try_cast("decimal(20,0)").try_cast(target.name)
    if target.kind == "string":
        return F.lower(big)
    return F.lit(None).cast(target.name)
