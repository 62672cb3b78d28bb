#!/usr/bin/env bash
# Idempotent: the cdktf CLI pinned by package.json + package-lock.json (cdktf-cli 0.21.0), so
# `npx cdktf synth|diff|deploy migration-<env>` works from the repository root. Run by scripts/setup.sh.
# node_modules/ is git-ignored; `npm ci` installs exactly the lockfile (no resolution, no lockfile edits).
set -euo pipefail
cd "$(dirname "$0")/.."
STAMPS=".local/stamps"
mkdir -p "$STAMPS"
say() { printf '\033[1m[setup]\033[0m %s\n' "$*"; }

command -v npm >/dev/null 2>&1 || { echo "setup: npm is required for the cdktf CLI: install Node.js >= 20" >&2; exit 2; }
node -e 'process.exit(parseInt(process.versions.node) >= 20 ? 0 : 1)' \
  || { echo "setup: Node.js >= 20 is required for cdktf-cli 0.21.0 (found $(node --version))" >&2; exit 2; }

HASH="$(cat package.json package-lock.json | sha256sum | cut -c1-16)"
if [[ -x node_modules/.bin/cdktf && "$(cat "$STAMPS/cdktf" 2>/dev/null)" == "$HASH" ]]; then
  say "cdktf: up to date ($(node -p 'require("./node_modules/cdktf-cli/package.json").version'))"
  exit 0
fi
say "cdktf: installing cdktf-cli from package-lock.json (npm ci)"
npm ci --no-audit --no-fund --loglevel=error
version="$(node -p 'require("./node_modules/cdktf-cli/package.json").version')"
[[ "$version" == "0.21.0" ]] || { echo "setup: cdktf-cli $version installed, 0.21.0 expected (package-lock.json)" >&2; exit 1; }
echo "$HASH" > "$STAMPS/cdktf"
say "cdktf: cdktf-cli $version (npx cdktf ...)"
