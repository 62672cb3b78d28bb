#!/bin/sh
# Grafana entrypoint guard: never start with Grafana's built-in admin/admin.
# The password comes from the environment only: GF_SECURITY_ADMIN_PASSWORD (on ECS, the task
# definition's secret) or GF_SECURITY_ADMIN_PASSWORD__FILE (a file Grafana reads itself).
# Then, with any MM2_GRAFANA_PERSON_<NAME>_PASSWORD set (connect.people), starts grafana-people.sh in the
# background (it makes one Grafana login per person once Grafana answers; its failure never stops Grafana)
# and removes those passwords from the environment Grafana starts with.
# Usage: require-admin-password.sh COMMAND [ARGS...]  (the image runs /run.sh, Grafana's own entrypoint)
set -eu

PEOPLE_SCRIPT=${MM2_GRAFANA_PEOPLE_SCRIPT:-/usr/local/bin/grafana-people.sh}

refuse() {
  echo "grafana: $1; refusing to start (on ECS the password comes from the task definition's secrets)" >&2
  exit 2
}

if [ -n "${GF_SECURITY_ADMIN_PASSWORD__FILE:-}" ]; then
  [ -r "$GF_SECURITY_ADMIN_PASSWORD__FILE" ] || refuse "GF_SECURITY_ADMIN_PASSWORD__FILE=$GF_SECURITY_ADMIN_PASSWORD__FILE is not a readable file"
  [ -s "$GF_SECURITY_ADMIN_PASSWORD__FILE" ] || refuse "GF_SECURITY_ADMIN_PASSWORD__FILE=$GF_SECURITY_ADMIN_PASSWORD__FILE is empty"
elif [ -z "${GF_SECURITY_ADMIN_PASSWORD:-}" ]; then
  refuse "GF_SECURITY_ADMIN_PASSWORD is not set"
elif [ "$GF_SECURITY_ADMIN_PASSWORD" = "admin" ]; then
  refuse "GF_SECURITY_ADMIN_PASSWORD is Grafana's default"
fi

[ "$#" -gt 0 ] || refuse "no command given"

person_vars=$(env | sed -n 's/^\(MM2_GRAFANA_PERSON_[A-Za-z0-9_]*_PASSWORD\)=.*/\1/p')
if [ -n "$person_vars" ]; then
  # Started from a subshell that exits at once: the script is orphaned to the task's init process, which
  # reaps it when it ends (Grafana, which this shell becomes, would leave a zombie).
  ( "$PEOPLE_SCRIPT" </dev/null & )
  # shellcheck disable=SC2086  # a list of variable names
  unset $person_vars
fi
exec "$@"
