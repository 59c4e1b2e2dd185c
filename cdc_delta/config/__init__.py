"""Pipeline configuration: pydantic models of the YAML and its loader. No pyspark here."""

from __future__ import annotations

from .loader import load_config, parse_config
from .models import ColumnSpec, PipelineConfig, TableSpec, Target

__all__ = ["ColumnSpec", "PipelineConfig", "TableSpec", "Target", "load_config", "parse_config"]
