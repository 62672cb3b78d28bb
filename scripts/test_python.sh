#!/usr/bin/env bash
# `make test-python`: the pytest suite as two sessions side by side, so CI's wall clock is the longer of the two
# rather than their sum. The split is by what a suite spends its time on: one session drives the shared local
# Kafka/Connect harness and Spark (mostly waiting on brokers and workers), the other builds and deploys
# (buildah, cdktf/terraform against moto, Prometheus) and runs the fault rig on its own clusters. Each session
# has its own harness, ports and directories (tests/conftest.py: one directory per pytest process), so neither
# can stop the other's clusters.
#
# MSK_MIGRATE_TEST_SERIAL=1 runs one session instead (the same tests, one after the other).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2

PYTEST=.venv/bin/pytest
BUILDS=(tests/images tests/infra tests/monitoring tests/faults)
CLUSTERS=(tests/integration tests/validation tests/unit)

if [[ "${MSK_MIGRATE_TEST_SERIAL:-0}" == "1" ]]; then
  exec "$PYTEST" "$@"
fi

# Every test directory belongs to exactly one session: a new one must be placed, never silently skipped.
for d in tests/*/; do
  d=${d%/}
  if [[ ! " ${BUILDS[*]} ${CLUSTERS[*]} " == *" $d "* ]]; then
    echo "scripts/test_python.sh: $d is in neither session: add it to BUILDS or CLUSTERS" >&2
    exit 2
  fi
done

logs=.local/test-logs
mkdir -p "$logs"
builds_log="$logs/builds.log"
echo "[test] session 'builds' (${BUILDS[*]}) runs beside this one; its output follows when both are done ($builds_log)"
"$PYTEST" -p no:cacheprovider "${BUILDS[@]}" "$@" >"$builds_log" 2>&1 &
builds_pid=$!
# A stopped make (Ctrl-C, CI timeout) stops the background session too.
trap 'kill "$builds_pid" 2>/dev/null' EXIT INT TERM

"$PYTEST" "${CLUSTERS[@]}" "$@"
clusters_rc=$?
wait "$builds_pid"
builds_rc=$?
trap - EXIT INT TERM

echo
echo "==================== session 'builds' (${BUILDS[*]}) ===================="
cat "$builds_log"
echo
echo "[test] session 'clusters': pytest exit $clusters_rc; session 'builds': pytest exit $builds_rc"
# pytest's 5 (no test collected) in either session fails the run, like any other failure.
if [[ $clusters_rc -ne 0 ]]; then exit "$clusters_rc"; fi
exit "$builds_rc"
