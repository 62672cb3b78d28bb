#!/bin/sh
# Entrypoint of the Prometheus image: render prometheus.yml from the task environment, check it, exec
# Prometheus. Prometheus 2.x cannot expand environment variables in its config, and the Cloud Map name
# of the Connect service differs per environment (connect.<prefix>.internal), hence this step.
#
#   MM2_CONNECT_DNS_NAME      Cloud Map DNS name resolving to every Connect task (A records)
#   MM2_CONNECT_METRICS_PORT  the JMX agent port of the Connect tasks (9404)
#   MM2_ENVIRONMENT           environment name, added as external label `environment`
#   MM2_PROOF_DNS_NAME        Cloud Map DNS name of the proof follower service (proof.<namespace>), when it runs
#   MM2_MSK_BROKERS           comma-separated MSK broker DNS names: adds the jobs msk-jmx (:11001) and
#                             msk-node (:11002), MSK open monitoring's JMX and node exporters
#   MM2_PROMETHEUS_WEB_USER, MM2_PROMETHEUS_WEB_PASSWORD_BCRYPT, MM2_PROMETHEUS_WEB_PASSWORD
#                             basic auth of every Prometheus endpoint (web config with the bcrypt hash;
#                             the plain password only for Prometheus' scrape of itself). Required:
#                             without them the entrypoint refuses to start, unless
#                             MM2_PROMETHEUS_WEB_AUTH=none says so explicitly (tests, a laptop).
#   MM2_PROMETHEUS_PERSON_<NAME>_BCRYPT
#                             one more login per person (connect.people): <NAME> upper-case with '_' for '-'
#                             (ALICE -> alice, J_SMITH -> j-smith), the value the bcrypt hash of that person's
#                             own secret. People sign in as themselves; the machine login stays for Grafana's
#                             datasource and the health check.
#   MM2_PROMETHEUS_TLS_DIR    directory with cert.pem, key.pem and ca.pem (on ECS: written at task start by
#                             the serving-cert init container): Prometheus serves HTTPS only, scrapes itself
#                             over HTTPS verifying ca.pem, and promtool-http.yml (beside the rendered config)
#                             lets the health check (`promtool check healthy`) do the same with basic auth.
# Unset variables keep the defaults baked into the template. Usage (the image's ENTRYPOINT):
#   entrypoint.sh [--config.file=TEMPLATE] [other prometheus flags...]
# Test hooks: PROMETHEUS_BIN (default /bin/prometheus), PROMTOOL_BIN (default /bin/promtool),
# PROMETHEUS_RENDERED_CONFIG (default: prometheus.rendered.yml beside the template, else /tmp).
set -eu

TEMPLATE="${PROMETHEUS_CONFIG_TEMPLATE:-/etc/prometheus/prometheus.yml}"
for arg do
  shift
  case "$arg" in
    --config.file=*) TEMPLATE="${arg#--config.file=}" ;;
    *) set -- "$@" "$arg" ;;
  esac
done

die() { echo "prometheus-entrypoint: $*" >&2; exit 2; }

[ -r "$TEMPLATE" ] || die "config template $TEMPLATE not readable"
DIR=$(cd "$(dirname "$TEMPLATE")" && pwd)

DNS_NAME="${MM2_CONNECT_DNS_NAME:-}"
PORT="${MM2_CONNECT_METRICS_PORT:-}"
ENV_NAME="${MM2_ENVIRONMENT:-}"
case "$DNS_NAME" in
  *[!A-Za-z0-9.-]*) die "MM2_CONNECT_DNS_NAME=$DNS_NAME is not a DNS name" ;;
esac
case "$PORT" in
  *[!0-9]*) die "MM2_CONNECT_METRICS_PORT=$PORT is not a port number" ;;
esac
PROOF_DNS_NAME="${MM2_PROOF_DNS_NAME:-}"
case "$PROOF_DNS_NAME" in
  *[!A-Za-z0-9.-]*) die "MM2_PROOF_DNS_NAME=$PROOF_DNS_NAME is not a DNS name" ;;
esac
case "$ENV_NAME" in
  *[!A-Za-z0-9_.-]*) die "MM2_ENVIRONMENT=$ENV_NAME may only contain letters, digits, '_', '.', '-'" ;;
esac

# Basic auth (never an open Prometheus by accident).
WEB_USER="${MM2_PROMETHEUS_WEB_USER:-}"
WEB_HASH="${MM2_PROMETHEUS_WEB_PASSWORD_BCRYPT:-}"
WEB_PASSWORD="${MM2_PROMETHEUS_WEB_PASSWORD:-}"
if [ -z "$WEB_USER$WEB_HASH$WEB_PASSWORD" ]; then
  [ "${MM2_PROMETHEUS_WEB_AUTH:-}" = "none" ] \
    || die "MM2_PROMETHEUS_WEB_USER, MM2_PROMETHEUS_WEB_PASSWORD_BCRYPT and MM2_PROMETHEUS_WEB_PASSWORD are not set (ECS injects them from the prometheus-web secret); set MM2_PROMETHEUS_WEB_AUTH=none to run without authentication"
else
  if [ -z "$WEB_USER" ] || [ -z "$WEB_HASH" ] || [ -z "$WEB_PASSWORD" ]; then
    die "MM2_PROMETHEUS_WEB_USER, MM2_PROMETHEUS_WEB_PASSWORD_BCRYPT and MM2_PROMETHEUS_WEB_PASSWORD go together"
  fi
  case "$WEB_USER" in
    *[!A-Za-z0-9_.-]*) die "MM2_PROMETHEUS_WEB_USER may only contain letters, digits, '_', '.', '-'" ;;
  esac
  # shellcheck disable=SC2016  # a literal regex: the $ are bcrypt's separators, not expansions
  printf '%s' "$WEB_HASH" | grep -Eq '^\$2[aby]?\$[0-9]{2}\$[./A-Za-z0-9]{53}$' \
    || die "MM2_PROMETHEUS_WEB_PASSWORD_BCRYPT is not a bcrypt hash"
fi

NL='
'
# People: every MM2_PROMETHEUS_PERSON_<NAME>_BCRYPT variable, as "name hash" lines (names checked, hashes checked).
PEOPLE=$(env | sed -n 's/^MM2_PROMETHEUS_PERSON_\([A-Z0-9_]*\)_BCRYPT=\(.*\)$/\1 \2/p' | sort)
if [ -n "$PEOPLE" ]; then
  [ -n "$WEB_USER" ] || die "MM2_PROMETHEUS_PERSON_*_BCRYPT needs the machine login too (MM2_PROMETHEUS_WEB_USER, ..._BCRYPT, ..._PASSWORD)"
  PEOPLE_LINES=""
  while read -r upper hash; do
    person=$(printf '%s' "$upper" | tr 'A-Z_' 'a-z-')
    case "$person" in
      ""|-*|*-|*--*|*[!a-z0-9-]*) die "MM2_PROMETHEUS_PERSON_${upper}_BCRYPT: '$person' is not a person's name (lower-case letters, digits, single hyphens)" ;;
    esac
    [ "$person" != "$WEB_USER" ] || die "MM2_PROMETHEUS_PERSON_${upper}_BCRYPT: '$person' is the machine login's name"
    # shellcheck disable=SC2016  # a literal regex: the $ are bcrypt's separators, not expansions
    printf '%s' "$hash" | grep -Eq '^\$2[aby]?\$[0-9]{2}\$[./A-Za-z0-9]{53}$' \
      || die "MM2_PROMETHEUS_PERSON_${upper}_BCRYPT is not a bcrypt hash"
    PEOPLE_LINES="$PEOPLE_LINES$(printf '  "%s": "%s"' "$person" "$hash")$NL"
  done <<EOF_PEOPLE
$PEOPLE
EOF_PEOPLE
fi

BROKERS="${MM2_MSK_BROKERS:-}"
case "$BROKERS" in
  *[!A-Za-z0-9.,-]*) die "MM2_MSK_BROKERS=$BROKERS must be a comma-separated list of broker DNS names" ;;
esac

OUT="${PROMETHEUS_RENDERED_CONFIG:-}"
if [ -z "$OUT" ]; then
  if [ -w "$DIR" ]; then OUT="$DIR/prometheus.rendered.yml"; else OUT="/tmp/prometheus.rendered.yml"; fi
fi

# Only the lines that end with a variable's name change; rule_files become absolute so the rendered
# file may live anywhere.
SCRIPT="s|^  - rules/|  - $DIR/rules/|"
[ -z "$DNS_NAME" ] || SCRIPT="$SCRIPT$NL/# MM2_CONNECT_DNS_NAME\$/s|\"[^\"]*\"|\"$DNS_NAME\"|"
[ -z "$PORT" ] || SCRIPT="$SCRIPT$NL/# MM2_CONNECT_METRICS_PORT\$/s|port: [0-9]*|port: $PORT|"
[ -z "$ENV_NAME" ] || SCRIPT="$SCRIPT$NL/# MM2_ENVIRONMENT\$/s|\"[^\"]*\"|\"$ENV_NAME\"|"
[ -z "$PROOF_DNS_NAME" ] || SCRIPT="$SCRIPT$NL/# MM2_PROOF_DNS_NAME\$/s|\"[^\"]*\"|\"$PROOF_DNS_NAME\"|"
sed -e "$SCRIPT" "$TEMPLATE" > "$OUT"

if [ -n "$DNS_NAME" ]; then grep -q "\"$DNS_NAME\" *# MM2_CONNECT_DNS_NAME" "$OUT" || die "could not set the Connect DNS name in $OUT"; fi
if [ -n "$PORT" ]; then grep -q "port: $PORT *# MM2_CONNECT_METRICS_PORT" "$OUT" || die "could not set the metrics port in $OUT"; fi

# MSK open monitoring: every broker's JMX exporter and node exporter (static targets, one per broker).
if [ -n "$BROKERS" ]; then
  for job in "msk-jmx 11001" "msk-node 11002"; do
    name=${job% *}; port=${job#* }
    list=$(printf '%s' "$BROKERS" | sed "s/[^,][^,]*/\"&:$port\"/g; s/,/, /g")
    printf '\n  - job_name: %s\n    static_configs:\n      - targets: [%s]\n    relabel_configs:\n      # b-1.<cluster>.<id>.c2.kafka.<region>.amazonaws.com:11001 -> broker="b-1"\n      - source_labels: [__address__]\n        regex: "([^.]+)\\\\..*"\n        target_label: broker\n' \
      "$name" "$list" >> "$OUT"
  done
fi

# TLS (optional) and basic auth: web config beside the rendered file; Prometheus scrapes itself the way
# clients reach it (same user, same scheme), and promtool-http.yml gives the health check the same.
TLS_DIR="${MM2_PROMETHEUS_TLS_DIR:-}"
if [ -n "$TLS_DIR" ]; then
  for f in cert.pem key.pem ca.pem; do
    [ -r "$TLS_DIR/$f" ] || die "MM2_PROMETHEUS_TLS_DIR=$TLS_DIR has no readable $f (on ECS the serving-cert container writes it)"
  done
fi
WEB_CONFIG="$(dirname "$OUT")/web.yml"
PASSWORD_FILE="$(dirname "$OUT")/web-password"
CLIENT_CONFIG="$(dirname "$OUT")/promtool-http.yml"
if [ -n "$WEB_USER$TLS_DIR" ]; then
  ( umask 077
    : > "$WEB_CONFIG"; : > "$CLIENT_CONFIG"
    if [ -n "$WEB_USER" ]; then
      printf 'basic_auth_users:\n  "%s": "%s"\n' "$WEB_USER" "$WEB_HASH" >> "$WEB_CONFIG"
      [ -z "${PEOPLE_LINES:-}" ] || printf '%s' "$PEOPLE_LINES" >> "$WEB_CONFIG"
      printf '%s' "$WEB_PASSWORD" > "$PASSWORD_FILE"
      printf 'basic_auth:\n  username: "%s"\n  password_file: "%s"\n' "$WEB_USER" "$PASSWORD_FILE" >> "$CLIENT_CONFIG"
    fi
    if [ -n "$TLS_DIR" ]; then
      printf 'tls_server_config:\n  cert_file: "%s"\n  key_file: "%s"\n  min_version: TLS12\n' \
        "$TLS_DIR/cert.pem" "$TLS_DIR/key.pem" >> "$WEB_CONFIG"
      printf 'tls_config:\n  ca_file: "%s"\n' "$TLS_DIR/ca.pem" >> "$CLIENT_CONFIG"
    fi )
  awk -v u="$WEB_USER" -v f="$PASSWORD_FILE" -v ca="${TLS_DIR:+$TLS_DIR/ca.pem}" '{ print }
    /^  - job_name: prometheus$/ {
      if (u != "") { print "    basic_auth:"; print "      username: \"" u "\""; print "      password_file: \"" f "\"" }
      if (ca != "") { print "    scheme: https"; print "    tls_config:"; print "      ca_file: \"" ca "\"" }
    }' "$OUT" > "$OUT.tmp" && mv "$OUT.tmp" "$OUT"
  if [ -n "$WEB_USER" ]; then
    grep -q "password_file: \"$PASSWORD_FILE\"" "$OUT" || die "could not add basic auth to the self-scrape job in $OUT"
  fi
  if [ -n "$TLS_DIR" ]; then
    grep -q "ca_file: \"$TLS_DIR/ca.pem\"" "$OUT" || die "could not add TLS to the self-scrape job in $OUT"
  fi
  set -- "--web.config.file=$WEB_CONFIG" "$@"
fi

# Paging: route alerts to the operators' Alertmanager(s) when the task names them.
AM_TARGETS="${MM2_ALERTMANAGER_TARGETS:-}"
AM_PREFIX="${MM2_ALERTMANAGER_PATH_PREFIX:-/}"
if [ -n "$AM_TARGETS" ]; then
  case "$AM_TARGETS" in
    *[!A-Za-z0-9.,:-]*) die "MM2_ALERTMANAGER_TARGETS=$AM_TARGETS must be a comma-separated host:port list" ;;
  esac
  case "$AM_PREFIX" in
    /*) ;;
    *) die "MM2_ALERTMANAGER_PATH_PREFIX=$AM_PREFIX must start with /" ;;
  esac
  case "$AM_PREFIX" in
    *[!A-Za-z0-9_./-]*) die "MM2_ALERTMANAGER_PATH_PREFIX=$AM_PREFIX may only contain letters, digits, _ . / -" ;;
  esac
  AM_LIST=$(printf '%s' "$AM_TARGETS" | sed 's/[^,][^,]*/"&"/g; s/,/, /g')
  printf '\nalerting:\n  alertmanagers:\n    - path_prefix: "%s"\n      static_configs:\n        - targets: [%s]\n' \
    "$AM_PREFIX" "$AM_LIST" >> "$OUT"
fi

PROMTOOL="${PROMTOOL_BIN:-/bin/promtool}"
if [ -x "$PROMTOOL" ]; then
  "$PROMTOOL" check config "$OUT" >&2 || die "rendered config $OUT is invalid"
  if [ -n "$WEB_USER$TLS_DIR" ]; then
    "$PROMTOOL" check web-config "$WEB_CONFIG" >&2 || die "web config $WEB_CONFIG is invalid"
  fi
fi

echo "prometheus-entrypoint: scraping ${DNS_NAME:-the default Connect DNS name} (port ${PORT:-9404}), config $OUT" >&2
exec "${PROMETHEUS_BIN:-/bin/prometheus}" "--config.file=$OUT" "$@"
