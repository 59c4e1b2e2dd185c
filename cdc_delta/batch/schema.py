"""What the events carry against what the tables hold: each table's view for this batch, with
new columns added (or refused) by the table's policy and type changes that would lose data
refused."""

from __future__ import annotations

from pyspark.sql import DataFrame, Row, SparkSession
from pyspark.sql import functions as F

from ..config.models import PipelineConfig, TableSpec
from ..config.types import parse_sql_type
from ..debezium.connect_schema import image_fields, infer_json_type, lossless
from ..errors import SchemaChangeRefused
from ..frame import AFTER, SCHEMA_ID, TABLE
from ..lake.tables import DeltaLocation, add_columns, table_columns
from ..steps.view import TableView
from .field_names import FieldNames

SAMPLE_VALUES = 1000


class TableSchemas:
    def __init__(self, spark: SparkSession, config: PipelineConfig, targets: dict[str, DeltaLocation]) -> None:
        self.spark, self.config, self.targets = spark, config, targets
        self.names = FieldNames(spark.conf.get("spark.sql.caseSensitive", "false").lower() == "true")

    def view(self, spec: TableSpec, origins: list[Row], decoded: DataFrame) -> TableView:
        """A table's view from the batch's origin facts (their schemas and the column names of
        their images); `decoded` is read only to infer types of new columns that come without
        a schema. Tables' views are independent of each other: they may be built side by side."""
        seen = [r for r in origins if r[TABLE] == spec.name and r["schema_keys"] is not None]
        where, names = self.targets[spec.name], self.names
        names.refuse_clashes(spec.name, [image for r in seen for image in r["images"]])
        existing = table_columns(self.spark, where)
        columns = {c: s.sql_type for c, s in spec.column_specs.items()}
        if spec.schema_change == "evolve" and not spec.column_list:
            columns.update({c: t for c, t in existing.items() if not names.among(c, spec.columns)})
        schemas = {r[SCHEMA_ID]: r["schema"] for r in seen if r["schema"]}
        variants = {i: image_fields(text) for i, text in schemas.items()}
        seen_fields = sorted({k for r in seen for k in r["schema_keys"] if k})
        new = names.new_fields(seen_fields, [*spec.columns, *columns])
        if new and spec.schema_change != "ignore" and not spec.column_list:
            columns.update(self._new_columns(spec, where, new, variants, decoded))
        fields = names.spellings(seen_fields, columns)
        _check_types(spec.name, columns, variants, fields)
        encodings = {c: s.encoding for c, s in spec.columns.items()}
        return TableView(spec, columns, encodings, variants, self.config.decoding.decimal_handling, fields)

    def _new_columns(self, spec: TableSpec, where: DeltaLocation, new: list[str],
                     variants: dict, decoded: DataFrame) -> dict:
        types: dict[str, str] = {}
        for name in new:
            info = next((f[name] for f in variants.values() if name in f), None)
            if spec.schema_change == "fail":
                raise SchemaChangeRefused(spec.name, name, None, info.label if info else "an undeclared column",
                                          "the table's policy is 'schema_change: fail'; declare the column "
                                          "in the config, or set schema_change: evolve or ignore")
            types[name] = info.evolved_type() if info else ""
        untyped = [c for c, t in types.items() if not t]
        if untyped:
            types.update(_infer_types(decoded, spec.name, untyped))
        add_columns(self.spark, where, types)
        return {c: parse_sql_type(t) for c, t in types.items()}


def _infer_types(decoded: DataFrame, table: str, cols: list[str]) -> dict[str, str]:
    """Types of columns that appear in events without a schema, from their values."""
    image = F.col(AFTER)
    picked = [F.try_element_at(image, F.lit(c)).cast("string").alias(c) for c in cols]
    sample = (decoded.filter((F.col(TABLE) == table) & image.isNotNull())
              .select(*picked).limit(SAMPLE_VALUES).collect())
    return {c: infer_json_type([r[c] for r in sample]) for c in cols}


def _check_types(table: str, columns: dict, variants: dict, spellings: dict[str, tuple[str, ...]]) -> None:
    """Refuse a batch whose event schema would lose data in a column's current type."""
    column_of = {name: c for c, names in spellings.items() for name in names}
    for fields in variants.values():
        for field_name, info in fields.items():
            column = column_of.get(field_name, field_name)
            if column in columns and not lossless(info, columns[column]):
                raise SchemaChangeRefused(
                    table, column, columns[column].name, info.label,
                    f"converting {info.label} values to {columns[column].name} would lose data; "
                    "change the column's type in the source back, or migrate the Delta table "
                    "and the config to a type that holds both")
