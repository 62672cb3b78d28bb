#!/usr/bin/env bash
# Install the monitoring tools the tests and `msk-migrate local up --with-monitoring` use:
# Debian's `prometheus` package (2.42) -> /usr/bin/prometheus and /usr/bin/promtool.
#
# Idempotent: does nothing when both binaries are already there. The package's own system service is
# never left running (tests and the local harness start their own Prometheus on 127.0.0.1 free ports):
# the install runs with a policy-rc.d that forbids service starts, and afterwards the service is
# stopped and disabled wherever an init system knows it.
#
# Usage: scripts/setup-monitoring.sh        (as root, or with passwordless sudo)
set -euo pipefail

log() { printf 'setup-monitoring: %s\n' "$*" >&2; }

# shellcheck source=scripts/lib/apt.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/apt.sh"
apt_require_root prometheus

stop_system_service() {
  # The Debian package ships prometheus.service and /etc/init.d/prometheus; neither must run.
  apt_stop_packaged_service prometheus
  # A daemon started by the package despite the above runs as user `prometheus` from /usr/bin/prometheus
  # with the packaged config; stop exactly that one (by pid, never by a broad name match).
  local pid
  for pid in $(pgrep -u prometheus -x prometheus 2>/dev/null || true); do
    if tr '\0' ' ' </proc/"$pid"/cmdline 2>/dev/null | grep -q -- '/etc/prometheus/prometheus.yml\|^/usr/bin/prometheus *$'; then
      log "stopping the packaged prometheus service (pid $pid)"
      $SUDO kill "$pid" 2>/dev/null || true
    fi
  done
}

if [ -x /usr/bin/prometheus ] && [ -x /usr/bin/promtool ]; then
  log "prometheus already installed: $(/usr/bin/prometheus --version 2>&1 | head -1)"
  stop_system_service
  exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
  log "apt-get not found: install Prometheus 2.x so that /usr/bin/prometheus and /usr/bin/promtool exist"
  exit 1
fi

log "apt-get install prometheus (no recommends: no node-exporter service)"
apt_install_without_services prometheus

stop_system_service
log "installed: $(/usr/bin/prometheus --version 2>&1 | head -1)"
