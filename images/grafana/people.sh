#!/bin/bash
# One Grafana login per person (connect.people), made through Grafana's HTTP API once Grafana answers.
#
# Grafana has no file provisioning for users, so the image's entrypoint (require-admin-password.sh) starts
# this script in the background before it hands over to /run.sh. For every MM2_GRAFANA_PERSON_<NAME>_PASSWORD
# (on ECS: the `password` key of the person's own secret <prefix>/connect-rest/<person>) it makes sure the
# Grafana user <name> exists, has that password and the org role Editor. Idempotent on every start: created
# when missing, else its password is set from the secret again and its role is set to Editor.
#
# The name mapping (the one place in the image; infra/mskinfra/monitoring.py grafana_person_env makes the
# variables): MM2_GRAFANA_PERSON_J_SMITH_PASSWORD -> login j-smith (upper case to lower, _ to -). Person
# names are lower-case with single hyphens (the environment model checks them), so it is one to one.
#
# Grafana's database lives in the task (an ephemeral task volume, nothing persistent), so a person removed
# from connect.people has no login after the next deployment; nothing here deletes users.
#
# HTTP API calls (Grafana 12, legacy /api routes; the admin API needs basic auth of a server admin):
#   GET   /api/health                          -- ready (no authentication)
#   GET   /api/users/lookup?loginOrEmail=LOGIN -- the user's id, 404 when missing       (User HTTP API)
#   POST  /api/admin/users                     -- create {name, login, password}        (Admin HTTP API)
#   PUT   /api/admin/users/:id/password        -- set {password}                        (Admin HTTP API)
#   PATCH /api/org/users/:userId               -- org role {role} in the admin's current
#                                                 organisation (the one the dashboards are provisioned in)
#                                                                                         (Organization HTTP API)
# (grafana.com/docs/grafana/latest/developer-resources/api-reference/http-api/api-legacy/{user,admin,org}/)
#
# Secrets: never printed (no `set -x`, curl without -v, response bodies never echoed); curl gets the admin
# login and every request body (which carries a person's password) as a config on stdin (`-K -`), never on
# its command line where `ps` would show them. curl and bash are in the upstream image (its Dockerfile
# installs ca-certificates, bash, curl, tzdata); the container's own health check uses curl as well.
#
# Environment (besides the people): GF_SECURITY_ADMIN_USER (default admin), GF_SECURITY_ADMIN_PASSWORD or
# GF_SECURITY_ADMIN_PASSWORD__FILE; GF_SERVER_PROTOCOL (http|https), GF_SERVER_HTTP_PORT (default 3000),
# GF_SERVER_CERT_FILE (https: the CA is ca.pem beside it, as images/kafka-connect/serving-cert.sh writes it);
# MM2_GRAFANA_PEOPLE_WAIT_SECONDS: how long to wait for Grafana (default 120).
#
# Exit status: 0 when every person was made or updated (or there is none), 1 when Grafana never answered
# or a request failed, 2 on bad input. It runs beside Grafana: whatever it exits with, Grafana keeps running.
set -uo pipefail

PREFIX=MM2_GRAFANA_PERSON_
SUFFIX=_PASSWORD
ROLE=Editor # Explore (ad-hoc PromQL against the provisioned Prometheus) needs Editor; a Viewer cannot open it

log() { echo "grafana people: $*" >&2; }

# MM2_GRAFANA_PERSON_J_SMITH_PASSWORD -> j-smith (see the header: the one mapping).
person_login() {
  local name=${1#"$PREFIX"}
  name=${name%"$SUFFIX"}
  name=${name//_/-}
  printf '%s' "${name,,}"
}

# A double-quoted value of a curl config line (curl unescapes \\ and \" inside quotes).
cfg_quote() {
  local s=${1//\\/\\\\}
  printf '"%s"' "${s//\"/\\\"}"
}

# api METHOD PATH [JSON]: sets STATUS (HTTP code, 000 when unreachable) and BODY. The credentials and the
# body go to curl as a config on stdin; printf is a shell builtin, so no process list shows them either.
STATUS=000
BODY=
api() {
  local config out
  config="user = $(cfg_quote "$admin_user:$admin_password")"$'\n'
  if [[ $# -ge 3 ]]; then
    config+="header = \"Content-Type: application/json\""$'\n'"data-binary = $(cfg_quote "$3")"$'\n'
  fi
  out=$(printf '%s' "$config" | curl -sS --max-time 10 ${tls[@]+"${tls[@]}"} -X "$1" -K - \
        -H 'Accept: application/json' -w '\n%{http_code}' "$base$2" 2>/dev/null) || true
  STATUS=${out##*$'\n'}
  BODY=${out%$'\n'*}
  [[ "$STATUS" =~ ^[0-9]{3}$ ]] || STATUS=000
}

# Grafana's own "message" of a failed request (never a password: bodies we print come from Grafana's errors).
message() { local m; m=$(sed -n 's/.*"message" *: *"\([^"]*\)".*/\1/p' <<<"$BODY"); printf '%s' "${m:-no message}"; }

# Sourced (tests/images/test_grafana_people.py calls api against a socket that records the request): the
# functions only.
[[ "${BASH_SOURCE[0]}" == "$0" ]] || return 0

people=()
for v in $(compgen -v "$PREFIX" || true); do
  [[ "$v" == *"$SUFFIX" ]] && people+=("$v")
done
[[ ${#people[@]} -gt 0 ]] || exit 0

admin_user=${GF_SECURITY_ADMIN_USER:-admin}
if [[ -n "${GF_SECURITY_ADMIN_PASSWORD__FILE:-}" ]]; then
  admin_password=$(<"$GF_SECURITY_ADMIN_PASSWORD__FILE") || { log "cannot read GF_SECURITY_ADMIN_PASSWORD__FILE; no person's login was made"; exit 2; }
else
  admin_password=${GF_SECURITY_ADMIN_PASSWORD:-}
fi
[[ -n "$admin_password" ]] || { log "GF_SECURITY_ADMIN_PASSWORD is not set; no person's login was made"; exit 2; }

port=${GF_SERVER_HTTP_PORT:-3000}
wait_seconds=${MM2_GRAFANA_PEOPLE_WAIT_SECONDS:-120}
[[ "$port" =~ ^[0-9]+$ ]] || { log "GF_SERVER_HTTP_PORT=$port is not a port number"; exit 2; }
[[ "$wait_seconds" =~ ^[0-9]+$ ]] || { log "MM2_GRAFANA_PEOPLE_WAIT_SECONDS=$wait_seconds is not a whole number of seconds"; exit 2; }
tls=()
if [[ "${GF_SERVER_PROTOCOL:-http}" == https ]]; then
  base="https://127.0.0.1:$port"
  ca="${GF_SERVER_CERT_FILE:-}"
  [[ -r "${ca%/*}/ca.pem" ]] && ca="${ca%/*}/ca.pem"
  [[ -n "$ca" && -r "$ca" ]] || { log "GF_SERVER_PROTOCOL=https but no readable CA beside GF_SERVER_CERT_FILE; no person's login was made"; exit 2; }
  tls=(--cacert "$ca") # the certificate's SAN holds 127.0.0.1 (serving-cert.sh)
else
  base="http://127.0.0.1:$port"
fi

# Bad input first, before any request: each bad variable is one line and skipped; the others go on.
bad=0 # 2 at the end: a variable is not a person or not a usable password
valid=()
for v in "${people[@]}"; do
  login=$(person_login "$v")
  password=${!v}
  if [[ ! "$login" =~ ^[a-z][a-z0-9]*(-[a-z0-9]+)*$ ]]; then
    log "$v does not name a person ($PREFIX<NAME>$SUFFIX: letters, digits and _); skipped"; bad=2
  elif [[ "$login" == "${admin_user,,}" ]]; then
    log "$v names the admin login $admin_user: a person needs their own name; skipped"; bad=2
  elif [[ -z "$password" || "$password" == *[\\\"$'\n\r']* ]]; then
    log "$v must be a non-empty password without a backslash, double quote or line break; $login skipped"; bad=2
  else
    valid+=("$v")
  fi
done
[[ ${#valid[@]} -gt 0 ]] || exit "$bad"

# Microseconds since the epoch (bash 5's EPOCHREALTIME; SECONDS counts whole seconds, a bound of N could end
# after N-1).
now_us() { printf '%s' "${EPOCHREALTIME//[!0-9]/}"; }
deadline=$(($(now_us) + wait_seconds * 1000000))
until curl -fsS --max-time 2 ${tls[@]+"${tls[@]}"} -o /dev/null "$base/api/health" 2>/dev/null; do
  if (($(now_us) >= deadline)); then
    log "Grafana did not answer $base/api/health within ${wait_seconds}s; no person's login was made (${#valid[@]} waiting)"
    exit 1
  fi
  sleep 1
done

failed=0 # 1 at the end: a request failed
for v in "${valid[@]}"; do
  id=
  login=$(person_login "$v")
  password=${!v}
  api GET "/api/users/lookup?loginOrEmail=$login"
  if [[ "$STATUS" == 200 ]]; then
    action=updated
    id=$(grep -o '"id" *: *[0-9]*' <<<"$BODY" | head -n1 | grep -o '[0-9]*$')
    [[ -n "$id" ]] && api PUT "/api/admin/users/$id/password" "{\"password\":\"$password\"}"
  elif [[ "$STATUS" == 404 ]]; then
    action=created
    api POST /api/admin/users "{\"name\":\"$login\",\"login\":\"$login\",\"password\":\"$password\"}"
    id=$(grep -o '"id" *: *[0-9]*' <<<"$BODY" | head -n1 | grep -o '[0-9]*$')
  fi
  if [[ "$STATUS" != 200 || -z "$id" ]]; then
    log "$login: not made or updated (HTTP $STATUS: $(message))"; failed=1; continue
  fi
  api PATCH "/api/org/users/$id" "{\"role\":\"$ROLE\"}"
  if [[ "$STATUS" != 200 ]]; then
    log "$login: $action but its role was not set to $ROLE (HTTP $STATUS: $(message))"; failed=1; continue
  fi
  log "$login $action (password from its secret, role $ROLE)"
done
((bad)) && exit 2
exit "$failed"
