"""`cdc-delta plan`: what the pipeline does per table, from the config alone (no JVM)."""

from __future__ import annotations

from ..config.models import PipelineConfig

ORDER_BY_CONNECTOR = ("postgresql: source.lsn (or sequence); mysql/mariadb: binlog file number, pos, "
                      "row; sqlserver: commit_lsn, change_lsn, event_serial_no; oracle: scn")


def describe(config: PipelineConfig) -> str:
    src = config.source
    where = getattr(src, "path", None) or ", ".join(getattr(src, "topics", None) or [getattr(src, "topic_pattern", "")])
    lines = [f"pipeline {config.pipeline}: {src.kind} source {where}",
             f"  checkpoint {config.checkpoint_path}; quarantine {config.quarantine_location.path or config.quarantine_location.table}; "
             f"trigger {config.trigger.kind}{' ' + config.trigger.interval if config.trigger.interval else ''}; "
             f"unmatched events: {config.unmatched}"]
    for t in config.tables:
        target = config.target_of(t)
        m = t.effective_match
        match = ", ".join(f"{k}={v}" for k, v in (("topic", m.topic), ("db", m.db), ("schema", m.schema_), ("table", m.table)) if v)
        cols = ", ".join(f"{c} {s.type}{' [' + s.encoding + ']' if s.encoding else ''}" for c, s in t.column_specs.items())
        lines += [
            f"table {t.name} -> {target.path or target.table}",
            f"  match: {match}",
            f"  keys: {', '.join(t.keys)}",
            f"  order: {', '.join(t.sequence_by) if t.sequence_by else ORDER_BY_CONNECTOR}; then snapshot < streaming, partition/file, offset",
            f"  columns: {cols}",
            f"  schema_change: {t.schema_change}; truncate: {t.truncate}; tombstone_retention: {t.tombstone_retention}",
        ]
        if t.table_properties:
            lines.append("  table_properties: " + ", ".join(f"{k}={v}" for k, v in t.table_properties.items()))
    return "\n".join(lines)
