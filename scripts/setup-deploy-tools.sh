#!/usr/bin/env bash
# The tools docs/runbooks/deploy.md's teardown runs, for tests/infra/deploy_rehearsal.py (make
# deploy-rehearse, and the deploy rehearsal in make test): the AWS CLI in its own virtualenv,
# .local/awscli-venv (awscli pins botocore exactly, which conflicts with requirements.lock), and jq from
# Debian. The CLI and its whole closure come from scripts/awscli.lock, every file checked against its sha256
# (--require-hashes), after pip and the build backend from requirements-build.lock (--no-build-isolation:
# pip downloads no build backend of its own). Idempotent: reinstalls the CLI only when a lock changes. Run by
# scripts/setup.sh.
set -euo pipefail
log() { printf 'setup-deploy-tools: %s\n' "$*" >&2; }
cd "$(dirname "$0")/.."
AWSCLI_PIN="$(grep -o '^awscli==[^ ]*' scripts/awscli.lock)"
VENV=.local/awscli-venv
STAMP=.local/stamps/awscli
mkdir -p .local/stamps
HASH="$(cat requirements-build.lock scripts/awscli.lock | sha256sum | cut -c1-16)"
if [[ -x "$VENV/bin/aws" && "$(cat "$STAMP" 2>/dev/null)" == "$HASH" ]]; then
  printf '\033[1m[setup]\033[0m aws cli: up to date\n'
else
  printf '\033[1m[setup]\033[0m aws cli: installing %s into %s\n' "$AWSCLI_PIN" "$VENV"
  PY="$(command -v python3.11 || command -v python3)"
  [[ -x "$VENV/bin/python" ]] || "$PY" -m venv "$VENV"
  "$VENV/bin/python" -m pip install -q --disable-pip-version-check --require-hashes --no-deps --only-binary :all: --no-build-isolation -r requirements-build.lock
  "$VENV/bin/pip" install -q --disable-pip-version-check --require-hashes --no-deps --no-build-isolation -r scripts/awscli.lock
  "$VENV/bin/pip" check >/dev/null
  "$VENV/bin/aws" --version >/dev/null
  echo "$HASH" > "$STAMP"
fi
if ! command -v jq >/dev/null 2>&1; then
  # shellcheck source=scripts/lib/apt.sh
  # shellcheck source=scripts/lib/apt.sh
  . "$(dirname "${BASH_SOURCE[0]}")/lib/apt.sh"
  apt_require_root jq
  apt_install_without_services jq
fi
