# shellcheck shell=bash
# Shared by the scripts/setup-*.sh that apt-get install Debian packages whose own system service must
# never run (the tests start their own daemons on 127.0.0.1 free ports). Source it after defining
# `log`; it sets SUDO ("" as root, "sudo" otherwise) or exits when neither is available.
#
#   apt_require_root WHAT              exit 1 naming WHAT unless root or sudo is there
#   apt_stop_packaged_service NAME     stop and disable NAME's systemd unit / init.d script, if any
#   apt_install_without_services PKG.. apt-get update + install with a policy-rc.d that forbids service
#                                      starts (the previous policy is restored on exit)

SUDO=""

apt_require_root() {
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
      log "need root (or sudo) to apt-get install $1"; exit 1
    fi
  fi
}

apt_stop_packaged_service() {
  local name="$1"
  if command -v systemctl >/dev/null 2>&1 && [ -d /run/systemd/system ]; then
    $SUDO systemctl stop "$name.service" >/dev/null 2>&1 || true
    $SUDO systemctl disable "$name.service" >/dev/null 2>&1 || true
  fi
  if [ -x "/etc/init.d/$name" ]; then
    $SUDO "/etc/init.d/$name" stop >/dev/null 2>&1 || true
  fi
  if command -v update-rc.d >/dev/null 2>&1 && [ -e "/etc/init.d/$name" ]; then
    $SUDO update-rc.d "$name" disable >/dev/null 2>&1 || true
  fi
}

APT_POLICY=/usr/sbin/policy-rc.d
APT_POLICY_BACKUP=""

apt_restore_policy() {
  if [ -n "$APT_POLICY_BACKUP" ]; then
    $SUDO cp -p "$APT_POLICY_BACKUP" "$APT_POLICY"; rm -f "$APT_POLICY_BACKUP"
  else
    $SUDO rm -f "$APT_POLICY"
  fi
}

apt_install_without_services() {
  # Forbid service starts during the install (restore whatever policy was there before).
  if [ -e "$APT_POLICY" ]; then APT_POLICY_BACKUP="$(mktemp)"; $SUDO cp -p "$APT_POLICY" "$APT_POLICY_BACKUP"; fi
  trap apt_restore_policy EXIT
  printf '#!/bin/sh\nexit 101\n' | $SUDO tee "$APT_POLICY" >/dev/null
  $SUDO chmod 0755 "$APT_POLICY"

  export DEBIAN_FRONTEND=noninteractive
  log "apt-get update"
  $SUDO apt-get update -qq
  # dpkg's lock may be held by another setup script running in parallel: wait for it (bounded).
  $SUDO apt-get install -y -qq --no-install-recommends -o DPkg::Lock::Timeout=600 "$@" >/dev/null
}
