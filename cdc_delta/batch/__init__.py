"""One batch: the context value, the one job of batch facts, schema evolution, the short runner."""

from .runner import BatchHandler

__all__ = ["BatchHandler"]
