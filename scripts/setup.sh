#!/usr/bin/env bash
# Installs what cdc-delta needs on a fresh machine (Java, Maven, the Python package, the
# Delta/Kafka jars for Spark, Apache Kafka's jars for the local broker, Kafka Connect with the
# Debezium connectors, the S3A jars and a SeaweedFS object store built from its Go module,
# cached in ~/.cache/cdc-delta, and the JVM class archive Spark's sessions start from; PostgreSQL
# and MariaDB from Debian's packages). Safe to run again: it only adds what is missing.
#   bash scripts/setup.sh        everything the tests use
#   bash scripts/setup.sh demo   only what the demo uses: Java, Maven, the package, the Delta/Kafka
#                                jars and the broker's jars (a first run spends no minute on the
#                                class archive, which saves ~3.5 s per Spark session)
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-test}
missing=()
command -v java >/dev/null 2>&1 || missing+=(openjdk-17-jre-headless)
command -v mvn >/dev/null 2>&1 || missing+=(maven)
command -v curl >/dev/null 2>&1 || missing+=(curl)
if [ "$mode" = test ]; then
  command -v go >/dev/null 2>&1 || missing+=(golang-go)
  ls -d /usr/lib/postgresql/*/bin >/dev/null 2>&1 || missing+=(postgresql)
  [ -x /usr/sbin/mariadbd ] || command -v mariadbd >/dev/null 2>&1 || missing+=(mariadb-server)
fi
if ((${#missing[@]})) && ! command -v apt-get >/dev/null 2>&1; then
  echo "error: this machine has no apt-get; install ${missing[*]} (or their equivalents), then run this again" >&2
  exit 4
fi
if ((${#missing[@]})); then
  echo "installing ${missing[*]} (Debian packages)"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi
# (re)install unless this checkout is already the installed package with its test tools:
# reinstalling while tests run elsewhere would pull the package away under them
tools="psycopg, pymysql, pytest, xdist, chispa, hypothesis, deltalake, pyarrow, psutil, matplotlib, boto3, build, "
extra="[test]"
[ "$mode" = demo ] && tools="pyspark, delta, pyarrow, " extra="[local]"
installed=$(python3 -c "import cdc_delta, ${tools}os; print(os.path.dirname(os.path.dirname(os.path.abspath(cdc_delta.__file__))))" 2>/dev/null || true)
if [ "$installed" != "$PWD" ]; then
  python3 -m pip install -q --disable-pip-version-check -e ".$extra" 2>&1 | grep -v -E "^(WARNING: Running pip as|\[notice\])" || true
fi
bash scripts/kafka.sh fetch
if [ "$mode" = demo ]; then
  python3 -c "from cdc_delta.infra.jars import spark_jars; spark_jars()"
  exit 0
fi
python3 -c "from cdc_delta.infra.jars import spark_jars; spark_jars(('s3a',))"
bash scripts/class_archive.sh
bash scripts/connect.sh fetch
bash scripts/seaweedfs.sh build
