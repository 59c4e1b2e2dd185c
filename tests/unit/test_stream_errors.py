"""A failed query's message, as a run prints it: the cause, not Spark's wrapper."""

from __future__ import annotations

from cdc_delta.run.stream import failure_cause


def test_failure_cause_drops_sparks_stream_failed_prefix():
    spark_message = ("[STREAM_FAILED] Query [id = 3f2c, runId = 9a1b] terminated with exception: "
                     "org.apache.kafka.common.errors.TimeoutException: Timed out waiting for a node assignment.\n"
                     "\tat org.apache.spark.sql.execution.streaming.StreamExecution.runStream")
    assert failure_cause(Exception(spark_message)) == ("org.apache.kafka.common.errors.TimeoutException: "
                                                       "Timed out waiting for a node assignment.")


def test_failure_cause_keeps_other_messages_and_names_an_empty_one():
    assert failure_cause(ValueError("bad value\nmore")) == "bad value"
    assert failure_cause(ValueError("")) == "ValueError"


def test_a_partition_not_hosted_yet_is_waited_out_like_an_unreachable_broker():
    from cdc_delta.run.stream import _kafka_unreachable

    new_topic = ("[STREAM_FAILED] Query [id = 1, runId = 2] terminated with exception: "
                 "org.apache.kafka.common.errors.UnknownTopicOrPartitionException: This server does not host "
                 "this topic-partition. SQLSTATE: XXKST")
    assert _kafka_unreachable(new_topic)
    assert not _kafka_unreachable("[CANNOT_PARSE_JSON_FIELD] Cannot parse the field name 'x'")
