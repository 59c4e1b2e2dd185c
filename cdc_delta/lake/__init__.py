"""The Delta side: tables, the MERGE plan, tombstones and commit metadata."""
