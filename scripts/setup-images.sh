#!/usr/bin/env bash
# Install the daemonless image tooling `make images`, the image test tier and `./build_images.py
# --builder buildah` use (docs/images.md):
#   buildah          builds the Dockerfiles without a Docker engine (--isolation chroot, vfs storage, as root)
#   skopeo           inspects what was pushed (architecture, digest, labels, user, entrypoint)
#   debootstrap      makes the Debian bookworm rootfs of the stand-in base images (cached in .local/images/)
#   docker-registry  Debian's CNCF distribution registry: the local, htpasswd-protected push target
#   apache2-utils    htpasswd -B (the registry accepts bcrypt entries only)
#
# Idempotent: does nothing when every tool is already there. The docker-registry package's own
# system service is never left running (tests and `make images` start their own registry on a free
# 127.0.0.1 port): the install runs with a policy-rc.d that forbids service starts, and afterwards the
# service is stopped and disabled wherever an init system knows it. Image storage never goes to the
# system's /var/lib/containers: the project passes --root/--runroot under .local/images/ (git-ignored).
#
# Usage: scripts/setup-images.sh        (as root, or with passwordless sudo)
set -euo pipefail

log() { printf 'setup-images: %s\n' "$*" >&2; }

PACKAGES=(buildah skopeo debootstrap docker-registry apache2-utils)
TOOLS=(buildah skopeo debootstrap docker-registry htpasswd)

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
    log "need root (or sudo) to apt-get install ${PACKAGES[*]}"; exit 1
  fi
fi

stop_system_service() {
  # The Debian package ships docker-registry.service and /etc/init.d/docker-registry; neither must run.
  if command -v systemctl >/dev/null 2>&1 && [ -d /run/systemd/system ]; then
    $SUDO systemctl stop docker-registry.service >/dev/null 2>&1 || true
    $SUDO systemctl disable docker-registry.service >/dev/null 2>&1 || true
  fi
  if [ -x /etc/init.d/docker-registry ]; then
    $SUDO /etc/init.d/docker-registry stop >/dev/null 2>&1 || true
  fi
  if command -v update-rc.d >/dev/null 2>&1 && [ -e /etc/init.d/docker-registry ]; then
    $SUDO update-rc.d docker-registry disable >/dev/null 2>&1 || true
  fi
  # A daemon started despite the above runs the packaged config; stop exactly that one (by pid).
  local pid
  for pid in $(pgrep -x docker-registry 2>/dev/null || true); do
    if tr '\0' ' ' </proc/"$pid"/cmdline 2>/dev/null | grep -q -- '/etc/docker/registry/config.yml'; then
      log "stopping the packaged docker-registry service (pid $pid)"
      $SUDO kill "$pid" 2>/dev/null || true
    fi
  done
}

missing=()
for tool in "${TOOLS[@]}"; do
  command -v "$tool" >/dev/null 2>&1 || [ -x "/usr/sbin/$tool" ] || missing+=("$tool")
done
if [ "${#missing[@]}" -eq 0 ]; then
  log "buildah, skopeo, debootstrap, docker-registry, htpasswd: installed ($(buildah --version 2>/dev/null | head -1))"
  stop_system_service
  exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
  log "apt-get not found: install ${PACKAGES[*]} (missing: ${missing[*]})"
  exit 1
fi

# Forbid service starts during the install (restore whatever policy was there before).
POLICY=/usr/sbin/policy-rc.d
BACKUP=""
if [ -e "$POLICY" ]; then BACKUP="$(mktemp)"; $SUDO cp -p "$POLICY" "$BACKUP"; fi
restore_policy() {
  if [ -n "$BACKUP" ]; then $SUDO cp -p "$BACKUP" "$POLICY"; rm -f "$BACKUP"; else $SUDO rm -f "$POLICY"; fi
}
trap restore_policy EXIT
printf '#!/bin/sh\nexit 101\n' | $SUDO tee "$POLICY" >/dev/null
$SUDO chmod 0755 "$POLICY"

export DEBIAN_FRONTEND=noninteractive
log "apt-get update"
$SUDO apt-get update -qq
log "apt-get install ${PACKAGES[*]} (missing: ${missing[*]})"
# dpkg's lock may be held by another setup script running in parallel: wait for it (bounded).
$SUDO apt-get install -y -qq --no-install-recommends -o DPkg::Lock::Timeout=600 "${PACKAGES[@]}" >/dev/null

stop_system_service
log "installed: $(buildah --version | head -1); $(skopeo --version | head -1)"
