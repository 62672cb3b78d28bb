#!/usr/bin/env bash
# Kafka Connect worker entrypoint for MirrorMaker 2.
#
# worker.properties is rendered by Python (msk_migrate.connectors.worker_env.worker_properties, the
# same code that renders the connectors' client settings) and arrives in CONNECT_WORKER_PROPERTIES,
# lines joined by a literal "\n". This script knows no Kafka setting. It only
#   1. checks that every variable named in CONNECT_REQUIRED_ENV is set (one line on stderr, exit 2),
#   2. writes worker.properties (0600), prefixed by what only the running task knows: its address
#      (rest.advertised.host.name) and the REST keystore password,
#   3. writes the secret files Kafka's REST extensions read from disk into CONNECT_CONFIG_DIR (tmpfs):
#      the basic-auth credentials (CONNECT_REST_USERNAME/PASSWORD, JAAS entry CONNECT_REST_JAAS_CONFIG)
#      and the REST keystore (CONNECT_REST_TLS_KEYSTORE, base64 PKCS#12) -- or, with
#      CONNECT_REST_TLS_CA_SEED, makes the REST certificate of this task from the environment's internal
#      CA (serving-cert.sh beside this script: keystore, truststore and a fresh password in rest-tls/),
#   4. starts the JVM with the JMX exporter agent.
# The variable list is documented at the top of python/msk_migrate/connectors/worker_env.py.
#
# Image layout (defaults): CONNECT_CLASSPATH (/opt/kafka-connect/libs/*), CONNECT_CONFIG_DIR (/tmp/connect),
#   JMX_AGENT_JAR (/opt/kafka-connect/jmx_prometheus_javaagent.jar),
#   JMX_EXPORTER_CONFIG (/opt/kafka-connect/jmx-exporter.yaml). Run time: CONNECT_REST_ADVERTISED_HOST
#   (first address of `hostname -i`), CONNECT_METRICS_BIND_HOST (0.0.0.0), CONNECT_LOG_LEVEL (INFO),
#   CONNECT_JVM_EXTRA_OPTS, CONNECT_DRY_RUN (print worker.properties, secrets masked, and exit), JAVA (java).
set -euo pipefail

die() { echo "entrypoint: $*" >&2; exit 2; }

CONFIG_DIR="${CONNECT_CONFIG_DIR:-/tmp/connect}"
CLASSPATH_VALUE="${CONNECT_CLASSPATH:-/opt/kafka-connect/libs/*}"
JMX_AGENT_JAR="${JMX_AGENT_JAR:-/opt/kafka-connect/jmx_prometheus_javaagent.jar}"
JMX_EXPORTER_CONFIG="${JMX_EXPORTER_CONFIG:-/opt/kafka-connect/jmx-exporter.yaml}"
LOG_LEVEL="${CONNECT_LOG_LEVEL:-INFO}"
FROM="set by msk_migrate.connectors.worker_environment(); on ECS the task definition"

for v in CONNECT_WORKER_PROPERTIES CONNECT_HEAP CONNECT_METRICS_PORT; do
  [[ -n "${!v:-}" ]] || die "$v is not set ($FROM sets it)"
done
[[ "$CONNECT_METRICS_PORT" =~ ^[0-9]+$ ]] || die "CONNECT_METRICS_PORT=$CONNECT_METRICS_PORT must be a number"
[[ "$CONNECT_HEAP" =~ ^[0-9]+[mMgG]$ ]] || die "CONNECT_HEAP=$CONNECT_HEAP must look like 512m or 2g"

# 1. Every variable the rendered configuration names must be present (secrets come from ECS `secrets`).
for v in ${CONNECT_REQUIRED_ENV:-}; do
  [[ "$v" =~ ^[A-Za-z_][A-Za-z0-9_]*$ ]] || die "CONNECT_REQUIRED_ENV names '$v', which is not a variable name"
  [[ -n "${!v:-}" ]] || die "$v is not set (worker.properties needs it; on ECS it comes from the task definition's secrets)"
done

if [[ -z "${CONNECT_REST_ADVERTISED_HOST:-}" ]]; then
  CONNECT_REST_ADVERTISED_HOST="$( (hostname -i 2>/dev/null || true) | awk '{print $1}')"
  [[ -n "$CONNECT_REST_ADVERTISED_HOST" ]] || CONNECT_REST_ADVERTISED_HOST="$(hostname)"
fi

mkdir -p "$CONFIG_DIR"
umask 077
WORKER_PROPERTIES="$CONFIG_DIR/worker.properties"
JVM_SECURITY_OPTS=()

# 3. Secret files for the REST extensions (only when the configuration asks for them).
if [[ -n "${CONNECT_REST_USERNAME:-}" && -n "${CONNECT_REST_JAAS_CONFIG:-}" ]]; then
  [[ "$CONNECT_REST_USERNAME" =~ ^[A-Za-z0-9._-]+$ ]] || die "CONNECT_REST_USERNAME may hold only letters, digits and . _ -"
  [[ "${CONNECT_REST_PASSWORD:-}" != *[\\\"$'\n\r']* ]] || die "CONNECT_REST_PASSWORD must not contain a backslash, double quote or line break"
  printf '%s=%s\n' "$CONNECT_REST_USERNAME" "$CONNECT_REST_PASSWORD" > "$CONFIG_DIR/rest-credentials.properties"
  # One line per person (connect.people; ECS injects CONNECT_REST_PERSON_<NAME>): the REST audit line then
  # names who sent a change. The machine login stays first (the auto-restart extension uses the first entry).
  for v in $(compgen -v CONNECT_REST_PERSON_ || true); do
    person="${v#CONNECT_REST_PERSON_}"
    person="${person//_/-}"
    person="${person,,}"
    [[ "$person" =~ ^[a-z][a-z0-9]*(-[a-z0-9]+)*$ ]] || die "$v does not name a person (CONNECT_REST_PERSON_<NAME>, letters, digits and _)"
    [[ "$person" != "$CONNECT_REST_USERNAME" ]] || die "$v names the machine login $CONNECT_REST_USERNAME: a person needs their own name"
    [[ -n "${!v}" && "${!v}" != *[\\\"$'\n\r']* ]] || die "$v must be a non-empty password without a backslash, double quote or line break"
    printf '%s=%s\n' "$person" "${!v}" >> "$CONFIG_DIR/rest-credentials.properties"
  done
  printf '%s\n' "$CONNECT_REST_JAAS_CONFIG" > "$CONFIG_DIR/rest-jaas.conf"
  JVM_SECURITY_OPTS+=("-Djava.security.auth.login.config=$CONFIG_DIR/rest-jaas.conf")
fi
REST_KEYSTORE_PASSWORD_LINE=""
if [[ -n "${CONNECT_REST_TLS_CA_SEED:-}" ]]; then
  # The SAN holds the address other workers use (rest.advertised.host.name): they verify it.
  # An IPv4 address, or an IPv6 one (it has a colon): a hostname of hex digits only (a container id) is a name.
  if [[ "$CONNECT_REST_ADVERTISED_HOST" =~ ^([0-9]{1,3}\.){3}[0-9]{1,3}$|^[0-9a-fA-F]*:[0-9a-fA-F:]*$ ]]; then
    san=(--ip "$CONNECT_REST_ADVERTISED_HOST")
  else
    san=(--dns "$CONNECT_REST_ADVERTISED_HOST")
  fi
  "${SERVING_CERT:-$(dirname "$0")/serving-cert.sh}" --out "$CONFIG_DIR/rest-tls" --seed-env CONNECT_REST_TLS_CA_SEED \
    "${san[@]}" --pkcs12 || die "could not make the REST certificate (see the line above)"
  store_password="$(cat "$CONFIG_DIR/rest-tls/store-password")"
  REST_KEYSTORE_PASSWORD_LINE="listeners.https.ssl.keystore.password=${store_password}"$'\n'"listeners.https.ssl.truststore.password=${store_password}"
elif [[ -n "${CONNECT_REST_TLS_KEYSTORE:-}" ]]; then
  printf '%s' "$CONNECT_REST_TLS_KEYSTORE" | base64 -d > "$CONFIG_DIR/rest-keystore.p12" 2>/dev/null \
    || die "CONNECT_REST_TLS_KEYSTORE is not base64 (expected a base64-encoded PKCS#12 keystore)"
  [[ "${CONNECT_REST_TLS_KEYSTORE_PASSWORD:-}" != *[\\$'\n\r']* ]] || die "CONNECT_REST_TLS_KEYSTORE_PASSWORD must not contain a backslash or line break"
  REST_KEYSTORE_PASSWORD_LINE="listeners.https.ssl.keystore.password=${CONNECT_REST_TLS_KEYSTORE_PASSWORD:-}"
fi

# 2. worker.properties: run-time prefix, then the rendered settings verbatim.
write_worker_properties() {
  echo "# Written by entrypoint.sh from CONNECT_WORKER_PROPERTIES (rendered by msk_migrate.connectors.worker_env)."
  echo "rest.advertised.host.name=${CONNECT_REST_ADVERTISED_HOST}"
  [[ -z "$REST_KEYSTORE_PASSWORD_LINE" ]] || echo "$REST_KEYSTORE_PASSWORD_LINE"
  printf '%s\n' "${CONNECT_WORKER_PROPERTIES//\\n/$'\n'}"
}
write_worker_properties > "$WORKER_PROPERTIES"

if [[ -n "${CONNECT_DRY_RUN:-}" ]]; then
  sed 's/^\(listeners\.https\.ssl\.\(key\|trust\)store\.password\)=.*/\1=*****/' "$WORKER_PROPERTIES"
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

# The secrets above live on in 0600 files of this task only: the worker's JVM (and every connector in it)
# starts without them in its environment. The internal CA's seed in particular could issue a certificate
# every other task trusts. MM2_* stay: the rendered cluster settings reference them (env provider allowlist).
person_vars=$(compgen -v CONNECT_REST_PERSON_ || true)
# shellcheck disable=SC2086  # a list of variable names
unset CONNECT_REST_PASSWORD CONNECT_REST_TLS_CA_SEED CONNECT_REST_TLS_KEYSTORE CONNECT_REST_TLS_KEYSTORE_PASSWORD $person_vars

echo "entrypoint: Kafka Connect worker for target cluster ${CONNECT_BOOTSTRAP_SERVERS:-?} (config $WORKER_PROPERTIES)" >&2
# shellcheck disable=SC2086  # CONNECT_JVM_EXTRA_OPTS is a list of JVM options
exec "${JAVA:-java}" \
  -Xms"$CONNECT_HEAP" -Xmx"$CONNECT_HEAP" \
  -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:+ExitOnOutOfMemoryError \
  -Djava.awt.headless=true \
  -Dlog4j.configuration="file:$CONFIG_DIR/log4j.properties" \
  -javaagent:"$JMX_AGENT_JAR=${CONNECT_METRICS_BIND_HOST:-0.0.0.0}:${CONNECT_METRICS_PORT}:$JMX_EXPORTER_CONFIG" \
  ${JVM_SECURITY_OPTS[@]+"${JVM_SECURITY_OPTS[@]}"} \
  ${CONNECT_JVM_EXTRA_OPTS:-} \
  -cp "$CLASSPATH_VALUE" \
  org.apache.kafka.connect.cli.ConnectDistributed "$WORKER_PROPERTIES"
