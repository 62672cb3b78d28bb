#!/usr/bin/env bash
# Idempotent setup of everything msk-migrate needs on a fresh machine of this kind
# (Debian 12, Python 3.11, Java 17, Maven, Node 20 preinstalled). Safe to run repeatedly:
# each step is skipped when its inputs have not changed.
#   scripts/setup.sh           python venv + JVM artefacts + Debian packages (Prometheus)
set -euo pipefail
cd "$(dirname "$0")/.."
STAMPS=".local/stamps"
mkdir -p "$STAMPS"

say() { printf '\033[1m[setup]\033[0m %s\n' "$*"; }
need() { command -v "$1" >/dev/null 2>&1 || { echo "setup: $1 is required: $2" >&2; exit 2; }; }

need python3.11 "install Python 3.11" 2>/dev/null || need python3 "install Python 3.11"
need java "install a Java 17 JDK"
need mvn "install Maven 3.8+ (apt-get install maven)"

PY="$(command -v python3.11 || command -v python3)"
"$PY" -c 'import sys; assert sys.version_info[:2] == (3, 11), sys.version' \
  || { echo "setup: Python 3.11 is required (found $("$PY" --version))" >&2; exit 2; }

# 1. Python: pinned dependencies (requirements.lock) + the package in editable mode.
PY_HASH="$(cat pyproject.toml requirements-build.lock requirements.lock | sha256sum | cut -c1-16)"
if [[ ! -x .venv/bin/python || "$(cat "$STAMPS/python" 2>/dev/null)" != "$PY_HASH" ]]; then
  say "python: creating .venv and installing pinned dependencies (pyspark, cdktf, moto, ...)"
  [[ -x .venv/bin/python ]] || "$PY" -m venv .venv
  # Every file checked against the sha256 its lock records (scripts/lock_hashes.py writes them): first pip and
  # the build backend (requirements-build.lock, wheels only), then the dependencies, then the package itself
  # without dependencies. Nothing is built in an isolated environment (--no-build-isolation): an sdist
  # (pyspark) and the package are built by the hash-checked setuptools, so pip downloads no build backend
  # of its own. pip check proves the lock covers everything the package needs.
  .venv/bin/python -m pip install -q --disable-pip-version-check --require-hashes --no-deps --only-binary :all: --no-build-isolation -r requirements-build.lock
  .venv/bin/pip install -q --disable-pip-version-check --require-hashes --no-build-isolation -r requirements.lock
  .venv/bin/pip install -q --disable-pip-version-check --no-deps --no-build-isolation -e '.[spark,infra,dev]'
  .venv/bin/pip check >/dev/null || { .venv/bin/pip check >&2; echo "setup: requirements.lock misses a dependency (add it, run scripts/lock_hashes.py)" >&2; exit 2; }
  echo "$PY_HASH" > "$STAMPS/python"
else
  say "python: up to date"
fi

# 2-4 run side by side (each is mostly downloads), one lane each, output kept per lane and printed in order:
#   jvm    the policy JAR and every classpath (Connect runtime 3.9 and 4.1, brokers, Spark Kafka jars)
#   apt    Debian packages (Prometheus + promtool, buildah...): one lane, as dpkg takes one lock
#   <part> anything else a part of the project adds (scripts/setup-*.sh, one script per part, idempotent)
setup_jvm() {
  local hash
  hash="$(find jvm -name pom.xml -o -name '*.java' | sort | xargs cat | sha256sum | cut -c1-16)"
  if [[ "$(cat "$STAMPS/jvm" 2>/dev/null)" != "$hash" || ! -f .local/classpath/connect.txt ]]; then
    say "jvm: resolving Maven artefacts and building the replication policy JAR"
    .venv/bin/python - <<'PY'
from msk_migrate.local.classpath import classpath
from msk_migrate import versions
for name in ("kafka-source", "kafka-target", "kafka-zk", "connect", "spark-kafka"):
    classpath(name)
    print(f"  classpath {name}: ok")
classpath("connect", versions.kafka_target_version())
print(f"  classpath connect (Kafka {versions.kafka_target_version()}): ok")
PY
    echo "$hash" > "$STAMPS/jvm"
  else
    say "jvm: up to date"
  fi
}

# Lanes that must not run side by side with each other's kind: dpkg takes one lock; two Maven processes on one
# local repository can race on the same plugin download.
APT_PARTS=(setup-monitoring setup-images setup-deploy-tools)
MAVEN_PARTS=(setup-schema-registry)

run_parts() {
  local part
  for part in "$@"; do
    if [[ -x "scripts/$part.sh" ]]; then "scripts/$part.sh"; fi
  done
}

LANES=".local/setup-logs"
mkdir -p "$LANES"
declare -A lane_pid=()
lanes=(jvm apt)
{ setup_jvm && run_parts "${MAVEN_PARTS[@]}"; } >"$LANES/jvm.log" 2>&1 & lane_pid[jvm]=$!
run_parts "${APT_PARTS[@]}" >"$LANES/apt.log" 2>&1 & lane_pid[apt]=$!
for extra in scripts/setup-*.sh; do
  name="$(basename "$extra" .sh)"
  [[ " ${APT_PARTS[*]} ${MAVEN_PARTS[*]} " == *" $name "* || ! -x "$extra" ]] && continue
  lanes+=("$name")
  "$extra" >"$LANES/$name.log" 2>&1 & lane_pid[$name]=$!
done
failed=()
for name in "${lanes[@]}"; do
  wait "${lane_pid[$name]}" || failed+=("$name")
  cat "$LANES/$name.log"
done
if (( ${#failed[@]} )); then
  echo "setup: failed: ${failed[*]} (their output is above; logs in $LANES/)" >&2
  exit 2
fi
say "done"
