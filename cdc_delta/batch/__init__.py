"""One batch: its facts, its tables' schemas, the short runner that hands it to the sinks."""

from .runner import BatchHandler

__all__ = ["BatchHandler"]
