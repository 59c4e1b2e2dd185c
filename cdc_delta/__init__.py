"""cdc-delta: Debezium change streams merged into current-state Delta Lake tables.

    from cdc_delta import Pipeline
    Pipeline.from_yaml("configs/files-demo.yaml").run()
"""

from __future__ import annotations

from .api import Pipeline, RunResult

__version__ = "0.1.0"
__all__ = ["Pipeline", "RunResult", "__version__"]
