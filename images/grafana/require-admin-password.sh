#!/bin/sh
# Grafana entrypoint guard: never start with Grafana's built-in admin/admin.
# The password comes from the environment only: GF_SECURITY_ADMIN_PASSWORD (on ECS, the task
# definition's secret) or GF_SECURITY_ADMIN_PASSWORD__FILE (a file Grafana reads itself).
# Usage: require-admin-password.sh COMMAND [ARGS...]  (the image runs /run.sh, Grafana's own entrypoint)
set -eu

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
exec "$@"
