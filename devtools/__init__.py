"""What serves the scripts, the tests and the benchmarks but is not shipped in the package: the
source-database sandbox (`python -m devtools.sandbox`), the demo producer (`python -m
devtools.demo`) and the Debezium event encoder (`devtools.encode`). Run from the repository."""
