#!/usr/bin/env bash
# The tools docs/runbooks/deploy.md's teardown runs, for tests/infra/deploy_rehearsal.py (make
# deploy-rehearse, and the deploy rehearsal in make test): the AWS CLI in its own virtualenv,
# .local/awscli-venv (awscli pins botocore exactly, which conflicts with requirements.lock), and jq from
# Debian. Idempotent: reinstalls the CLI only when its pin changes. Run by scripts/setup.sh.
set -euo pipefail
log() { printf 'setup-deploy-tools: %s\n' "$*" >&2; }
cd "$(dirname "$0")/.."
AWSCLI_PIN="awscli==1.45.11"
VENV=.local/awscli-venv
STAMP=.local/stamps/awscli
mkdir -p .local/stamps
if [[ -x "$VENV/bin/aws" && "$(cat "$STAMP" 2>/dev/null)" == "$AWSCLI_PIN" ]]; then
  printf '\033[1m[setup]\033[0m aws cli: up to date\n'
else
  printf '\033[1m[setup]\033[0m aws cli: installing %s into %s\n' "$AWSCLI_PIN" "$VENV"
  PY="$(command -v python3.11 || command -v python3)"
  [[ -x "$VENV/bin/python" ]] || "$PY" -m venv "$VENV"
  "$VENV/bin/pip" install -q --disable-pip-version-check "$AWSCLI_PIN"
  "$VENV/bin/aws" --version >/dev/null
  echo "$AWSCLI_PIN" > "$STAMP"
fi
if ! command -v jq >/dev/null 2>&1; then
  # shellcheck source=scripts/lib/apt.sh
  # shellcheck source=scripts/lib/apt.sh
  . "$(dirname "${BASH_SOURCE[0]}")/lib/apt.sh"
  apt_require_root jq
  apt_install_without_services jq
fi
