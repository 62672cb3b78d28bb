#!/usr/bin/env bash
# Kafka Connect worker entrypoint for MirrorMaker 2: the single source of worker.properties.
#
# The ECS task definition (infra) and the local harness (msk_migrate.local) both run this script;
# the variables are built by msk_migrate.connectors.worker_environment(). Secrets are never written
# to the file: the worker resolves ${env:MM2_TARGET_...} through Kafka's EnvVarConfigProvider.
#
# Required: CONNECT_BOOTSTRAP_SERVERS
# Optional (default): CONNECT_AUTH_MODE (plaintext: iam|scram|mtls|plaintext), CONNECT_SCRAM_MECHANISM
#   (SCRAM-SHA-512), CONNECT_SCRAM_TLS (true), CONNECT_TRUSTSTORE_PEM (false: use MM2_TARGET_TLS_CA),
#   CONNECT_GROUP_ID (mm2-connect), CONNECT_{CONFIG,OFFSET,STATUS}_STORAGE_TOPIC (mm2-connect-*),
#   CONNECT_REPLICATION_FACTOR (3), CONNECT_REST_PORT (8083), CONNECT_REST_BIND_HOST (0.0.0.0),
#   CONNECT_REST_ADVERTISED_HOST (first address of `hostname -i`), CONNECT_METRICS_PORT (9404),
#   CONNECT_METRICS_BIND_HOST (0.0.0.0), CONNECT_HEAP (1g), CONNECT_OFFSET_FLUSH_INTERVAL_MS (10000),
#   CONNECT_CLASSPATH (/opt/kafka-connect/libs/*), CONNECT_CONFIG_DIR (/tmp/connect),
#   JMX_AGENT_JAR (/opt/kafka-connect/jmx_prometheus_javaagent.jar),
#   JMX_EXPORTER_CONFIG (/opt/kafka-connect/jmx-exporter.yaml), CONNECT_LOG_LEVEL (INFO),
#   CONNECT_DRY_RUN (print worker.properties and exit), JAVA (java),
#   CONNECT_EXACTLY_ONCE_SOURCE_SUPPORT (disabled: enabled|preparing|disabled, KIP-618),
#   CONNECT_AUTO_RESTART (true), CONNECT_AUTO_RESTART_{INITIAL_BACKOFF_MS,MAX_BACKOFF_MS,MAX_RESTARTS}
#   (10000, 300000, 10), CONNECT_REST_BASIC_AUTH_USER (+ secret CONNECT_REST_BASIC_AUTH_PASSWORD: the
#   auto-restart extension's credentials for the worker's own REST API when basic auth is on).
set -euo pipefail

die() { echo "entrypoint: $*" >&2; exit 2; }

: "${CONNECT_BOOTSTRAP_SERVERS:?entrypoint: CONNECT_BOOTSTRAP_SERVERS is required (target cluster host:port list)}"
AUTH_MODE="${CONNECT_AUTH_MODE:-plaintext}"
SCRAM_MECHANISM="${CONNECT_SCRAM_MECHANISM:-SCRAM-SHA-512}"
SCRAM_TLS="${CONNECT_SCRAM_TLS:-true}"
TRUSTSTORE_PEM="${CONNECT_TRUSTSTORE_PEM:-false}"
REST_PORT="${CONNECT_REST_PORT:-8083}"
METRICS_PORT="${CONNECT_METRICS_PORT:-9404}"
RF="${CONNECT_REPLICATION_FACTOR:-3}"
CONFIG_DIR="${CONNECT_CONFIG_DIR:-/tmp/connect}"
CLASSPATH_VALUE="${CONNECT_CLASSPATH:-/opt/kafka-connect/libs/*}"
JMX_AGENT_JAR="${JMX_AGENT_JAR:-/opt/kafka-connect/jmx_prometheus_javaagent.jar}"
JMX_EXPORTER_CONFIG="${JMX_EXPORTER_CONFIG:-/opt/kafka-connect/jmx-exporter.yaml}"
LOG_LEVEL="${CONNECT_LOG_LEVEL:-INFO}"

case "$AUTH_MODE" in iam|scram|mtls|plaintext) ;; *) die "CONNECT_AUTH_MODE=$AUTH_MODE is not one of iam, scram, mtls, plaintext";; esac
case "$SCRAM_MECHANISM" in SCRAM-SHA-512|SCRAM-SHA-256) ;; *) die "CONNECT_SCRAM_MECHANISM=$SCRAM_MECHANISM is not SCRAM-SHA-512 or SCRAM-SHA-256";; esac
for v in REST_PORT METRICS_PORT RF; do
  [[ "${!v}" =~ ^[0-9]+$ ]] || die "CONNECT_${v/RF/REPLICATION_FACTOR}=${!v} must be a number"
done
case "${CONNECT_EXACTLY_ONCE_SOURCE_SUPPORT:-disabled}" in enabled|preparing|disabled) ;; *) die "CONNECT_EXACTLY_ONCE_SOURCE_SUPPORT=${CONNECT_EXACTLY_ONCE_SOURCE_SUPPORT} is not one of enabled, preparing, disabled";; esac
[[ "${CONNECT_HEAP:-1g}" =~ ^[0-9]+[mMgG]$ ]] || die "CONNECT_HEAP=${CONNECT_HEAP} must look like 512m or 2g"

if [[ -z "${CONNECT_REST_ADVERTISED_HOST:-}" ]]; then
  CONNECT_REST_ADVERTISED_HOST="$( (hostname -i 2>/dev/null || true) | awk '{print $1}')"
  [[ -n "$CONNECT_REST_ADVERTISED_HOST" ]] || CONNECT_REST_ADVERTISED_HOST="$(hostname)"
fi

# Security properties of the worker's clients towards the target cluster (no secret values).
security_props() {
  case "$AUTH_MODE" in
    plaintext)
      echo "security.protocol=PLAINTEXT" ;;
    iam)
      echo "security.protocol=SASL_SSL"
      echo "sasl.mechanism=AWS_MSK_IAM"
      echo "sasl.jaas.config=software.amazon.msk.auth.iam.IAMLoginModule required;"
      echo "sasl.client.callback.handler.class=software.amazon.msk.auth.iam.IAMClientCallbackHandler" ;;
    scram)
      if [[ "$SCRAM_TLS" == "true" ]]; then echo "security.protocol=SASL_SSL"; else echo "security.protocol=SASL_PLAINTEXT"; fi
      echo "sasl.mechanism=$SCRAM_MECHANISM"
      echo 'sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="${env:MM2_TARGET_SASL_USERNAME}" password="${env:MM2_TARGET_SASL_PASSWORD}";' ;;
    mtls)
      echo "security.protocol=SSL"
      echo "ssl.keystore.type=PEM"
      echo 'ssl.keystore.certificate.chain=${env:MM2_TARGET_TLS_CERTIFICATE_CHAIN}'
      echo 'ssl.keystore.key=${env:MM2_TARGET_TLS_PRIVATE_KEY}' ;;
  esac
  if [[ "$TRUSTSTORE_PEM" == "true" && "$AUTH_MODE" != "plaintext" ]]; then
    echo "ssl.truststore.type=PEM"
    echo 'ssl.truststore.certificates=${env:MM2_TARGET_TLS_CA}'
  fi
}

# Secrets the chosen mode references must be present, or the worker would fail later and obscurely.
require_env() { [[ -n "${!1:-}" ]] || die "$1 is not set (auth mode $AUTH_MODE needs it; on ECS it comes from the task definition's secrets)"; }
case "$AUTH_MODE" in
  scram) require_env MM2_TARGET_SASL_USERNAME; require_env MM2_TARGET_SASL_PASSWORD ;;
  mtls) require_env MM2_TARGET_TLS_CERTIFICATE_CHAIN; require_env MM2_TARGET_TLS_PRIVATE_KEY ;;
esac
[[ "$TRUSTSTORE_PEM" == "true" ]] && require_env MM2_TARGET_TLS_CA

# Exactly-once source support (KIP-618) and the auto-restart REST extension (jvm/connect-extensions).
mm2_worker_props() {
  echo "exactly.once.source.support=${CONNECT_EXACTLY_ONCE_SOURCE_SUPPORT:-disabled}"
  if [[ "${CONNECT_AUTO_RESTART:-true}" == "true" ]]; then
    echo "rest.extension.classes=io.mskmigrate.connect.autorestart.AutoRestartExtension"
    echo "msk.migrate.auto.restart.initial.backoff.ms=${CONNECT_AUTO_RESTART_INITIAL_BACKOFF_MS:-10000}"
    echo "msk.migrate.auto.restart.max.backoff.ms=${CONNECT_AUTO_RESTART_MAX_BACKOFF_MS:-300000}"
    echo "msk.migrate.auto.restart.max.restarts=${CONNECT_AUTO_RESTART_MAX_RESTARTS:-10}"
    if [[ -n "${CONNECT_REST_BASIC_AUTH_USER:-}" ]]; then
      echo "msk.migrate.auto.restart.rest.user=${CONNECT_REST_BASIC_AUTH_USER}"
      echo 'msk.migrate.auto.restart.rest.password=${env:CONNECT_REST_BASIC_AUTH_PASSWORD}'
    fi
  fi
}

render_worker_properties() {
  cat <<PROPS
# Rendered by entrypoint.sh at $(date -u +%Y-%m-%dT%H:%M:%SZ). Do not edit: set CONNECT_* variables.
bootstrap.servers=${CONNECT_BOOTSTRAP_SERVERS}
group.id=${CONNECT_GROUP_ID:-mm2-connect}
config.storage.topic=${CONNECT_CONFIG_STORAGE_TOPIC:-mm2-connect-configs}
offset.storage.topic=${CONNECT_OFFSET_STORAGE_TOPIC:-mm2-connect-offsets}
status.storage.topic=${CONNECT_STATUS_STORAGE_TOPIC:-mm2-connect-status}
config.storage.replication.factor=${RF}
offset.storage.replication.factor=${RF}
status.storage.replication.factor=${RF}
offset.flush.interval.ms=${CONNECT_OFFSET_FLUSH_INTERVAL_MS:-10000}
key.converter=org.apache.kafka.connect.converters.ByteArrayConverter
value.converter=org.apache.kafka.connect.converters.ByteArrayConverter
header.converter=org.apache.kafka.connect.converters.ByteArrayConverter
listeners=http://${CONNECT_REST_BIND_HOST:-0.0.0.0}:${REST_PORT}
rest.advertised.host.name=${CONNECT_REST_ADVERTISED_HOST}
rest.advertised.port=${REST_PORT}
rest.advertised.listener=http
# MM2 connectors may set per-connector client overrides (e.g. source consumer isolation level).
connector.client.config.override.policy=All
# Secrets stay outside this file: env = EnvVarConfigProvider, file = FileConfigProvider.
config.providers=env,file
config.providers.env.class=org.apache.kafka.common.config.provider.EnvVarConfigProvider
config.providers.file.class=org.apache.kafka.common.config.provider.FileConfigProvider
PROPS
  mm2_worker_props
  local line
  while IFS= read -r line; do
    echo "$line"
    echo "producer.$line"
    echo "consumer.$line"
    echo "admin.$line"
  done < <(security_props)
}

mkdir -p "$CONFIG_DIR"
WORKER_PROPERTIES="$CONFIG_DIR/worker.properties"
render_worker_properties > "$WORKER_PROPERTIES"
chmod 600 "$WORKER_PROPERTIES"

if [[ -n "${CONNECT_DRY_RUN:-}" ]]; then
  cat "$WORKER_PROPERTIES"
  exit 0
fi

# Logging: the Connect classpath binds SLF4J to reload4j (log4j 1.x syntax) for Kafka 3.x and 4.x alike.
cat > "$CONFIG_DIR/log4j.properties" <<LOG
log4j.rootLogger=${LOG_LEVEL}, stdout
log4j.appender.stdout=org.apache.log4j.ConsoleAppender
log4j.appender.stdout.layout=org.apache.log4j.PatternLayout
log4j.appender.stdout.layout.ConversionPattern=[%d] %p %m (%c)%n
log4j.logger.org.reflections=ERROR
log4j.logger.org.apache.kafka.clients=WARN
LOG

[[ -f "$JMX_AGENT_JAR" ]] || die "JMX_AGENT_JAR=$JMX_AGENT_JAR does not exist"
[[ -f "$JMX_EXPORTER_CONFIG" ]] || die "JMX_EXPORTER_CONFIG=$JMX_EXPORTER_CONFIG does not exist"

exec "${JAVA:-java}" \
  -Xms"${CONNECT_HEAP:-1g}" -Xmx"${CONNECT_HEAP:-1g}" \
  -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:+ExitOnOutOfMemoryError \
  -Djava.awt.headless=true \
  -Dlog4j.configuration="file:$CONFIG_DIR/log4j.properties" \
  -javaagent:"$JMX_AGENT_JAR=${CONNECT_METRICS_BIND_HOST:-0.0.0.0}:${METRICS_PORT}:$JMX_EXPORTER_CONFIG" \
  ${CONNECT_JVM_EXTRA_OPTS:-} \
  -cp "$CLASSPATH_VALUE" \
  org.apache.kafka.connect.cli.ConnectDistributed "$WORKER_PROPERTIES"
