#!/usr/bin/env bash
# A local Kafka Connect worker with Debezium, from Maven Central artifacts, on loopback.
#   bash scripts/connect.sh start | stop | status | reset | fetch (jars only)
#   bash scripts/connect.sh register FILE.json   (create or update the connector FILE describes)
#   bash scripts/connect.sh delete NAME | list
# A standalone worker (offsets in a file under its home) against the broker of
# scripts/kafka.sh; connectors are added through its REST API.
# Settings: KAFKA_PORT (9092), CONNECT_PORT (8083), CDC_DELTA_CONNECT_HOME (state, logs),
# CDC_DELTA_CACHE (downloaded jars, ~/.cache/cdc-delta).
set -euo pipefail
source "$(dirname "$0")/process.sh"
KAFKA_VERSION=4.1.1
# Debezium 3.5.0.Final is built against Kafka 4.1.1; the MariaDB connector of 3.6.x is not
# served by Maven Central here, and one Debezium version for both connectors is simpler.
DEBEZIUM_VERSION=3.5.0.Final
LOG4J_VERSION=2.24.3
SLF4J_VERSION=2.0.17   # binds log4j-slf4j2-impl; Kafka's own SLF4J 1.7 would drop every log line
KAFKA_PORT=${KAFKA_PORT:-9092}
PORT=${CONNECT_PORT:-8083}
CACHE=${CDC_DELTA_CACHE:-$HOME/.cache/cdc-delta}
LIBS=$CACHE/connect-$KAFKA_VERSION-slf4j-$SLF4J_VERSION/libs
PLUGINS=$CACHE/debezium-$DEBEZIUM_VERSION
HOME_DIR=${CDC_DELTA_CONNECT_HOME:-/tmp/cdc-delta-connect-$PORT}
PID_FILE=$HOME_DIR/worker.pid
URL=http://127.0.0.1:$PORT

maven_copy() {  # maven_copy OUTPUT_DIR EXCLUDED_GROUPS GROUP:ARTIFACT:VERSION...
  local out=$1 excluded=$2; shift 2
  local tmp deps=""; tmp=$(mktemp -d)
  for coordinate in "$@"; do
    IFS=: read -r g a v <<<"$coordinate"
    deps+="<dependency><groupId>$g</groupId><artifactId>$a</artifactId><version>$v</version></dependency>"
  done
  cat > "$tmp/pom.xml" <<POM
<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion>
<groupId>cdc-delta</groupId><artifactId>connect</artifactId><version>1</version>
<dependencies>$deps</dependencies></project>
POM
  (cd "$tmp" && mvn -q -B dependency:copy-dependencies -DincludeScope=runtime \
    -DexcludeGroupIds="$excluded" -DoutputDirectory="$out")
  rm -rf "$tmp"
}

fetch() {
  command -v mvn >/dev/null || { echo "error: Maven (mvn) is needed to fetch Kafka Connect; run bash scripts/setup.sh" >&2; exit 4; }
  if [ ! -f "$LIBS/.complete" ]; then
    echo "fetching Kafka Connect $KAFKA_VERSION from Maven Central into $LIBS"
    maven_copy "$LIBS" "none" org.apache.kafka:connect-runtime:$KAFKA_VERSION \
      org.apache.kafka:connect-json:$KAFKA_VERSION org.apache.kafka:connect-transforms:$KAFKA_VERSION \
      org.slf4j:slf4j-api:$SLF4J_VERSION org.apache.logging.log4j:log4j-slf4j2-impl:$LOG4J_VERSION \
      org.apache.logging.log4j:log4j-core:$LOG4J_VERSION
    touch "$LIBS/.complete"
  fi
  local connector
  for connector in postgres mariadb; do
    [ -f "$PLUGINS/$connector/.complete" ] && continue
    echo "fetching Debezium $connector connector $DEBEZIUM_VERSION into $PLUGINS/$connector"
    # Kafka's and SLF4J's classes come from the worker; second copies in a plugin would clash.
    maven_copy "$PLUGINS/$connector" "org.apache.kafka,org.slf4j" "io.debezium:debezium-connector-$connector:$DEBEZIUM_VERSION"
    touch "$PLUGINS/$connector/.complete"
  done
}

running() { process_running "$PID_FILE"; }
healthy() { curl -fsS "$URL/connector-plugins" 2>/dev/null | grep -q PostgresConnector; }

configure() {
  mkdir -p "$HOME_DIR"
  cat > "$HOME_DIR/worker.properties" <<PROPS
bootstrap.servers=127.0.0.1:$KAFKA_PORT
listeners=http://127.0.0.1:$PORT
rest.advertised.host.name=127.0.0.1
plugin.path=$PLUGINS
plugin.discovery=hybrid_warn
offset.storage.file.filename=$HOME_DIR/offsets.dat
offset.flush.interval.ms=1000
key.converter=org.apache.kafka.connect.json.JsonConverter
value.converter=org.apache.kafka.connect.json.JsonConverter
# Connector configs name secrets as \${env:NAME}: passwords stay out of the REST API and files.
config.providers=env
config.providers.env.class=org.apache.kafka.common.config.provider.EnvVarConfigProvider
PROPS
  cat > "$HOME_DIR/log4j2.properties" <<'LOG'
rootLogger.level = INFO
rootLogger.appenderRef.out.ref = out
appender.out.type = Console
appender.out.name = out
appender.out.layout.type = PatternLayout
appender.out.layout.pattern = [%d] %p %m (%c)%n
logger.kafka.name = org.apache.kafka
logger.kafka.level = WARN
logger.reflections.name = org.reflections
logger.reflections.level = ERROR
LOG
}

start() {
  if running && healthy; then echo "kafka connect already running on $URL"; return 0; fi
  running && stop
  fetch
  configure
  # the local databases' default passwords, unless the caller's environment sets them
  export PG_PASSWORD=${PG_PASSWORD:-cdc} MARIADB_PASSWORD=${MARIADB_PASSWORD:-cdc}
  nohup java -Xms256m -Xmx1g -Dlog4j2.configurationFile="$HOME_DIR/log4j2.properties" -cp "$LIBS/*" \
    org.apache.kafka.connect.cli.ConnectStandalone "$HOME_DIR/worker.properties" >"$HOME_DIR/worker.log" 2>&1 &
  echo $! > "$PID_FILE"
  process_await "kafka connect" "$PID_FILE" "$HOME_DIR/worker.log" 120 "$URL"
}

stop() { process_stop "kafka connect" "$PID_FILE"; }

register() {  # PUT /connectors/NAME/config creates the connector or updates it
  local file=$1 name
  [ -f "$file" ] || { echo "error: connector file $file not found" >&2; exit 2; }
  name=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["name"])' "$file")
  python3 -c 'import json,sys; print(json.dumps(json.load(open(sys.argv[1]))["config"]))' "$file" |
    curl -fsS -X PUT -H 'Content-Type: application/json' --data @- "$URL/connectors/$name/config" >/dev/null ||
    { echo "error: Kafka Connect refused connector $name from $file; see $HOME_DIR/worker.log" >&2; exit 1; }
  echo "connector $name registered"
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  status) if running && healthy; then echo "kafka connect running on $URL"; else echo "kafka connect not running"; exit 3; fi ;;
  reset) stop; rm -rf "$HOME_DIR"; echo "kafka connect state removed" ;;
  fetch) fetch ;;
  register) register "${2:?usage: $0 register FILE.json}" ;;
  delete) curl -fsS -X DELETE "$URL/connectors/${2:?usage: $0 delete NAME}" && echo "connector $2 deleted" ;;
  list) curl -fsS "$URL/connectors?expand=status"; echo ;;
  *) echo "usage: $0 start|stop|status|reset|fetch|register FILE|delete NAME|list" >&2; exit 2 ;;
esac
