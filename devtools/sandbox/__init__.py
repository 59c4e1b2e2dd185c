"""A local source-database sandbox: the tables, workload and comparison behind the end-to-end
tests and `bash scripts/stack.sh` (database -> Debezium -> Kafka -> cdc-delta -> Delta).

Needs the `sandbox` extra (psycopg, PyMySQL); the pipeline itself never imports this package.
"""
