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

# shellcheck source=scripts/lib/apt.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/apt.sh"
apt_require_root "${PACKAGES[*]}"

stop_system_service() {
  # The Debian package ships docker-registry.service and /etc/init.d/docker-registry; neither must run.
  apt_stop_packaged_service docker-registry
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

log "apt-get install ${PACKAGES[*]} (missing: ${missing[*]})"
apt_install_without_services "${PACKAGES[@]}"

stop_system_service
log "installed: $(buildah --version | head -1); $(skopeo --version | head -1)"
