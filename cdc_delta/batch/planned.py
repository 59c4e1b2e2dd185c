"""How many records a micro-batch will read, known before it reads them: for a batch of Spark's
Kafka source, the sum of the offset ranges its tasks are given.

foreachBatch hands a batch over as a frame over the RDD Spark already planned for it, and each
of that RDD's partitions holds the offset range of one Kafka topic partition (or of a part of
one). The count is an upper bound (transaction markers and compacted records take offsets
too) and serves only to choose how the batch runs (codegen.py): any other frame, or a plan
that is not as expected (another Spark, Spark Connect), gives None, and the batch is counted
by its first job as before."""

from __future__ import annotations

from py4j.protocol import Py4JError
from pyspark.sql import DataFrame


def planned_records(raw: DataFrame) -> int | None:
    """The records the batch `raw` (a Kafka micro-batch, after any projection) will read."""
    try:
        leaves = raw._jdf.queryExecution().logical().collectLeaves()
        if leaves.size() != 1 or leaves.head().getClass().getSimpleName() != "LogicalRDD":
            return None
        return sum(part.inputPartition().get().offsetRange().size()
                   for part in leaves.head().rdd().partitions())
    except (Py4JError, AttributeError, TypeError):
        return None
