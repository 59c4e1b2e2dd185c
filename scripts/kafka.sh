#!/usr/bin/env bash
# A local single-node Apache Kafka (KRaft) on loopback, from its Maven Central artifacts.
#   bash scripts/kafka.sh start | stop | status | reset (also removes its data) | fetch (jars only)
# Idempotent: starting a running broker or stopping a stopped one is harmless.
# Settings: KAFKA_PORT (9092), KAFKA_CONTROLLER_PORT (9093), CDC_DELTA_KAFKA_HOME (state, logs),
# CDC_DELTA_CACHE (downloaded jars, ~/.cache/cdc-delta). With KAFKA_SASL_PASSWORD set, a second
# listener on KAFKA_SASL_PORT (KAFKA_PORT + 2) takes SASL/PLAIN for user KAFKA_SASL_USER (cdc).
set -euo pipefail
source "$(dirname "$0")/process.sh"
KAFKA_VERSION=4.1.1
LOG4J_VERSION=2.24.3
# Kafka depends on SLF4J 1.7, which finds no binding in log4j-slf4j2-impl and drops every log
# line, a fatal one too: SLF4J 2 binds it, so a broker that exits says why in its log.
SLF4J_VERSION=2.0.17
PORT=${KAFKA_PORT:-9092}
CONTROLLER_PORT=${KAFKA_CONTROLLER_PORT:-9093}
SASL_PORT=${KAFKA_SASL_PORT:-$((PORT + 2))}
CACHE=${CDC_DELTA_CACHE:-$HOME/.cache/cdc-delta}
LIBS=$CACHE/kafka-$KAFKA_VERSION-slf4j-$SLF4J_VERSION/libs
HOME_DIR=${CDC_DELTA_KAFKA_HOME:-/tmp/cdc-delta-kafka-$PORT}
PID_FILE=$HOME_DIR/broker.pid

fetch() {
  [ -f "$LIBS/.complete" ] && return 0
  command -v mvn >/dev/null || { echo "error: Maven (mvn) is needed to fetch Kafka; run bash scripts/setup.sh" >&2; exit 4; }
  local tmp; tmp=$(mktemp -d)
  cat > "$tmp/pom.xml" <<POM
<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion>
<groupId>cdc-delta</groupId><artifactId>kafka-broker</artifactId><version>1</version><dependencies>
<dependency><groupId>org.apache.kafka</groupId><artifactId>kafka_2.13</artifactId><version>$KAFKA_VERSION</version></dependency>
<dependency><groupId>org.apache.kafka</groupId><artifactId>kafka-tools</artifactId><version>$KAFKA_VERSION</version></dependency>
<dependency><groupId>org.slf4j</groupId><artifactId>slf4j-api</artifactId><version>$SLF4J_VERSION</version></dependency>
<dependency><groupId>org.apache.logging.log4j</groupId><artifactId>log4j-slf4j2-impl</artifactId><version>$LOG4J_VERSION</version></dependency>
<dependency><groupId>org.apache.logging.log4j</groupId><artifactId>log4j-core</artifactId><version>$LOG4J_VERSION</version></dependency>
</dependencies></project>
POM
  echo "fetching Apache Kafka $KAFKA_VERSION from Maven Central into $LIBS"
  (cd "$tmp" && mvn -q -B dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$LIBS")
  rm -rf "$tmp"
  touch "$LIBS/.complete"
}

running() { process_running "$PID_FILE"; }

healthy() {
  python3 - "$PORT" <<'PY' >/dev/null 2>&1
import sys
from confluent_kafka.admin import AdminClient
md = AdminClient({"bootstrap.servers": f"127.0.0.1:{sys.argv[1]}"}).list_topics(timeout=2)
sys.exit(0 if md.brokers else 1)
PY
}

listeners() {
  local sasl="" sasl_adv=""
  if [ -n "${KAFKA_SASL_PASSWORD:-}" ]; then
    sasl=",SASL_PLAINTEXT://127.0.0.1:$SASL_PORT" sasl_adv=",SASL_PLAINTEXT://127.0.0.1:$SASL_PORT"
  fi
  cat <<PROPS
listeners=PLAINTEXT://127.0.0.1:$PORT$sasl,CONTROLLER://127.0.0.1:$CONTROLLER_PORT
advertised.listeners=PLAINTEXT://127.0.0.1:$PORT$sasl_adv
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT,CONTROLLER:PLAINTEXT
PROPS
  if [ -n "${KAFKA_SASL_PASSWORD:-}" ]; then
    cat <<PROPS
sasl.enabled.mechanisms=PLAIN
listener.name.sasl_plaintext.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required user_${KAFKA_SASL_USER:-cdc}="$KAFKA_SASL_PASSWORD";
PROPS
  fi
}

configure() {
  mkdir -p "$HOME_DIR/data"
  (umask 077; listeners > "$HOME_DIR/listeners.properties")
  cat > "$HOME_DIR/server.properties" <<PROPS
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:$CONTROLLER_PORT
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
log.dirs=$HOME_DIR/data
num.partitions=1
auto.create.topics.enable=true
offsets.topic.replication.factor=1
offsets.topic.num.partitions=1
transaction.state.log.num.partitions=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
group.initial.rebalance.delay.ms=0
log.retention.hours=-1
PROPS
  cat "$HOME_DIR/listeners.properties" >> "$HOME_DIR/server.properties"
  chmod 600 "$HOME_DIR/server.properties"
  cat > "$HOME_DIR/log4j2.properties" <<'LOG'
rootLogger.level = WARN
rootLogger.appenderRef.out.ref = out
appender.out.type = Console
appender.out.name = out
appender.out.layout.type = PatternLayout
appender.out.layout.pattern = [%d] %p %m (%c)%n
LOG
}

start() {
  if running && healthy; then echo "kafka already running on 127.0.0.1:$PORT"; return 0; fi
  running && stop
  fetch
  configure
  local java=(java -Xms256m -Xmx768m -Dlog4j2.configurationFile="$HOME_DIR/log4j2.properties" -cp "$LIBS/*")
  if [ ! -f "$HOME_DIR/data/meta.properties" ]; then
    # a cluster id as Kafka makes one: url-safe base64 of a random UUID, never starting with '-'
    # (the storage tool would read it as an option: 1 start in 64 failed so)
    local cluster_id
    cluster_id=$(python3 -c 'import base64,uuid
while (i := base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")).startswith("-"): pass
print(i)')
    "${java[@]}" kafka.tools.StorageTool format -t "$cluster_id" \
      -c "$HOME_DIR/server.properties" >"$HOME_DIR/format.log" 2>&1 || { cat "$HOME_DIR/format.log" >&2; exit 1; }
  fi
  nohup "${java[@]}" kafka.Kafka "$HOME_DIR/server.properties" >"$HOME_DIR/broker.log" 2>&1 &
  echo $! > "$PID_FILE"
  process_await kafka "$PID_FILE" "$HOME_DIR/broker.log" 60 "127.0.0.1:$PORT"
}

stop() { process_stop "kafka" "$PID_FILE"; }

status() {
  if running && healthy; then echo "kafka running on 127.0.0.1:$PORT"; else echo "kafka not running"; return 3; fi
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  status) status ;;
  reset) stop; rm -rf "$HOME_DIR"; echo "kafka state removed" ;;
  fetch) fetch ;;
  *) echo "usage: $0 start|stop|status|reset|fetch" >&2; exit 2 ;;
esac
