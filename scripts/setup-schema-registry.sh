#!/usr/bin/env bash
# Unpack the pinned Apicurio Registry (jvm/pom.xml: apicurio.version) into .local/apicurio-<version> for
# `msk-migrate local up --schema-registry` and the schema tests, and check a Java 21+ JDK is there to run it.
# Idempotent: does nothing when quarkus-run.jar of that version is already unpacked.
set -euo pipefail
cd "$(dirname "$0")/.."

log() { printf 'setup-schema-registry: %s\n' "$*" >&2; }

.venv/bin/python - <<'PY'
from msk_migrate import versions
from msk_migrate.local.schema_registry import ensure_installed, find_java

jar = ensure_installed()
print(f"setup-schema-registry: Apicurio Registry {versions.apicurio_version()}: {jar} (java: {find_java()})")
PY
log "ok"
