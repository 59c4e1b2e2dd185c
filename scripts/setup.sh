#!/usr/bin/env bash
# Installs what cdc-delta needs on a fresh machine (Java, Maven, the Python package, the
# Delta/Kafka jars for Spark, Apache Kafka's jars for the local broker, Kafka Connect with the
# Debezium connectors, cached in ~/.cache/cdc-delta; PostgreSQL and MariaDB from Debian's
# packages). Safe to run again: it only adds what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
missing=()
command -v java >/dev/null 2>&1 || missing+=(openjdk-17-jre-headless)
command -v mvn >/dev/null 2>&1 || missing+=(maven)
command -v curl >/dev/null 2>&1 || missing+=(curl)
ls -d /usr/lib/postgresql/*/bin >/dev/null 2>&1 || missing+=(postgresql)
[ -x /usr/sbin/mariadbd ] || command -v mariadbd >/dev/null 2>&1 || missing+=(mariadb-server)
if ((${#missing[@]})); then
  echo "installing ${missing[*]} (Debian packages)"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi
# (re)install unless this checkout is already the installed package with its test tools:
# reinstalling while tests run elsewhere would pull the package away under them
installed=$(python3 -c 'import cdc_delta, psycopg, pymysql, pytest, xdist, chispa, hypothesis, deltalake, pyarrow, psutil, matplotlib, os; print(os.path.dirname(os.path.dirname(os.path.abspath(cdc_delta.__file__))))' 2>/dev/null || true)
if [ "$installed" != "$PWD" ]; then
  python3 -m pip install -q --disable-pip-version-check -e ".[test]" 2>&1 | grep -v -E "^(WARNING: Running pip as|\[notice\])" || true
fi
python3 -c "from cdc_delta.infra.jars import spark_jars; spark_jars()"
bash scripts/kafka.sh fetch
bash scripts/connect.sh fetch
