#!/usr/bin/env bash
# checkov (IaC scanner used by tests/infra/test_infra_checkov.py) in its own virtualenv,
# .local/checkov-venv, from the exact pins in scripts/checkov.lock. checkov pins boto3, packaging and
# networkx to versions that conflict with requirements.lock, so it cannot share .venv.
#
# Every file is checked against the sha256 the lock records (--require-hashes; scripts/lock_hashes.py writes
# them): pip and the build backend from requirements-build.lock first, then checkov's closure, built (should
# a pin be an sdist) by that backend, never by one pip downloads into an isolated environment.
#
# Idempotent: reinstalls only when scripts/checkov.lock or requirements-build.lock changed. Run by scripts/setup.sh.
# The test finds the binary at .local/checkov-venv/bin/checkov (override: MSK_MIGRATE_CHECKOV=/path).
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=.local/checkov-venv
STAMP=.local/stamps/checkov
mkdir -p .local/stamps
HASH="$(cat requirements-build.lock scripts/checkov.lock | sha256sum | cut -c1-16)"
if [[ -x "$VENV/bin/checkov" && "$(cat "$STAMP" 2>/dev/null)" == "$HASH" ]]; then
  printf '\033[1m[setup]\033[0m checkov: up to date\n'
  exit 0
fi
printf '\033[1m[setup]\033[0m checkov: installing the pinned checkov into %s\n' "$VENV"
PY="$(command -v python3.11 || command -v python3)"
[[ -x "$VENV/bin/python" ]] || "$PY" -m venv "$VENV"
"$VENV/bin/python" -m pip install -q --disable-pip-version-check --require-hashes --no-deps --only-binary :all: --no-build-isolation -r requirements-build.lock
"$VENV/bin/pip" install -q --disable-pip-version-check --require-hashes --no-deps --no-build-isolation -r scripts/checkov.lock
"$VENV/bin/pip" check >/dev/null
"$VENV/bin/checkov" --version >/dev/null
echo "$HASH" > "$STAMP"
