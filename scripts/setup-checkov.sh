#!/usr/bin/env bash
# checkov (IaC scanner used by tests/infra/test_infra_checkov.py) in its own virtualenv,
# .local/checkov-venv, from the exact pins in scripts/checkov.lock. checkov pins boto3, packaging and
# networkx to versions that conflict with requirements.lock, so it cannot share .venv.
#
# Idempotent: reinstalls only when scripts/checkov.lock changed. Run by scripts/setup.sh.
# The test finds the binary at .local/checkov-venv/bin/checkov (override: MSK_MIGRATE_CHECKOV=/path).
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=.local/checkov-venv
STAMP=.local/stamps/checkov
mkdir -p .local/stamps
HASH="$(sha256sum scripts/checkov.lock | cut -c1-16)"
if [[ -x "$VENV/bin/checkov" && "$(cat "$STAMP" 2>/dev/null)" == "$HASH" ]]; then
  printf '\033[1m[setup]\033[0m checkov: up to date\n'
  exit 0
fi
printf '\033[1m[setup]\033[0m checkov: installing the pinned checkov into %s\n' "$VENV"
PY="$(command -v python3.11 || command -v python3)"
[[ -x "$VENV/bin/python" ]] || "$PY" -m venv "$VENV"
"$VENV/bin/pip" install -q --disable-pip-version-check --upgrade pip==24.3.1
"$VENV/bin/pip" install -q --disable-pip-version-check --no-deps -r scripts/checkov.lock
"$VENV/bin/pip" check >/dev/null
"$VENV/bin/checkov" --version >/dev/null
echo "$HASH" > "$STAMP"
