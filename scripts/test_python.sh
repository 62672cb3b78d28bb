#!/usr/bin/env bash
# `make test-python`: the pytest suite as two sessions side by side, so CI's wall clock is the longer of them
# rather than their sum. Most of the suite waits on JVMs (brokers, workers, Spark, terraform providers) more than
# it uses the CPU, so two sessions overlap well on two cores; a third was tried and made the suites' waits for
# live metrics and containers time out (the machine's load stayed above 8). The split, by what a suite drives:
#   clusters  the runbook commands and rehearsals on the shared local Kafka/Connect harness, validation and the
#             follower (Spark), the unit and CLI tiers
#   builds    image builds (buildah), the stacks (cdktf, terraform against moto, checkov), monitoring
#             (Prometheus on its own clusters), the fault rig, and the topology rehearsals (each starts its own
#             clusters and workers, so it runs beside the shared harness as well as on it: it balances the two),
#             the worker sizing test, the rehearsal on the ZooKeeper/SCRAM shape and the producer config fence's
#             client matrix (each on brokers of its own)
# Each session has its own harness, ports and directories (tests/conftest.py: one directory per pytest
# process), so none can stop another's clusters.
#
# MSK_MIGRATE_TEST_SERIAL=1 runs one session instead (the same tests, one after the other).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2

PYTEST=.venv/bin/pytest
NAMES=(clusters builds)
declare -A DIRS=(
  [clusters]="tests/integration tests/validation tests/unit"
  [builds]="tests/images tests/infra tests/monitoring tests/faults tests/integration/test_rehearsal_topologies.py tests/integration/test_worker_sizing.py tests/integration/test_rehearsal_zk_source.py tests/integration/test_producer_config_fence.py"
)
# A file placed in a session while its directory is in another one: that other session leaves it out.
declare -A IGNORE=(
  [clusters]="--ignore=tests/integration/test_rehearsal_topologies.py --ignore=tests/integration/test_worker_sizing.py --ignore=tests/integration/test_rehearsal_zk_source.py --ignore=tests/integration/test_producer_config_fence.py"
  [builds]=""
)

if [[ "${MSK_MIGRATE_TEST_SERIAL:-0}" == "1" ]]; then
  exec "$PYTEST" "$@"
fi

# Every test directory belongs to exactly one session: a new one must be placed, never silently skipped; a file
# placed apart from its directory is left out of the directory's session, or it would run twice.
for name in "${!DIRS[@]}"; do
  for entry in ${DIRS[$name]}; do
    [[ -f "$entry" ]] || continue
    for other in "${!DIRS[@]}"; do
      [[ "$other" == "$name" ]] && continue
      if [[ " ${DIRS[$other]} " == *" $(dirname "$entry") "* && " ${IGNORE[$other]} " != *" --ignore=$entry "* ]]; then
        echo "scripts/test_python.sh: $entry runs in '$name' and in '$other': add --ignore=$entry to IGNORE[$other]" >&2
        exit 2
      fi
    done
  done
done
all=" ${DIRS[*]} "
for d in tests/*/; do
  d=${d%/}
  if [[ "$all" != *" $d "* ]]; then
    echo "scripts/test_python.sh: $d is in no session: add it to DIRS" >&2
    exit 2
  fi
done

logs=.local/test-logs
mkdir -p "$logs"
rm -f "$logs"/faulthandler-*.log "$logs"/failures-*.log "$logs"/threads-*.log "$logs"/current-*
declare -A pid=() rc=()
# A stopped make (Ctrl-C, CI timeout) stops the sessions too.
trap 'kill "${pid[@]}" 2>/dev/null' EXIT INT TERM
for name in "${NAMES[@]:1}"; do
  echo "[test] session '$name' (${DIRS[$name]}) runs beside this one; its output follows when all are done ($logs/$name.log)"
  # shellcheck disable=SC2086  # DIRS holds space-separated directories
  "$PYTEST" -p no:cacheprovider ${DIRS[$name]} ${IGNORE[$name]} "$@" >"$logs/$name.log" 2>&1 &
  pid[$name]=$!
done

first=${NAMES[0]}
echo "[test] session '$first' (${DIRS[$first]})"
# In the background too (its output still comes straight here), so every session's pid is known: the files a
# session keeps are named by it.
# shellcheck disable=SC2086
"$PYTEST" ${DIRS[$first]} ${IGNORE[$first]} "$@" &
pid[$first]=$!
for name in "${NAMES[@]}"; do
  wait "${pid[$name]}"
  rc[$name]=$?
done
trap - EXIT INT TERM

for name in "${NAMES[@]:1}"; do
  echo
  echo "==================== session '$name' (${DIRS[$name]}) ===================="
  cat "$logs/$name.log"
done
# A session killed by a signal (128+N: 134 an abort, 139 a segfault) printed no summary. Shown for it: its
# failures as they were recorded, where every thread was, and last (what a truncated log still shows) the test
# it died in, the crashing thread and the threads alive after each of its last modules.
for name in "${NAMES[@]}"; do
  (( rc[$name] > 128 )) || continue
  p=${pid[$name]}
  for log in "$logs/failures-$p.log" "$logs/faulthandler-$p.log"; do
    if [[ -s "$log" ]]; then echo "==================== $log ===================="; cat "$log"; fi
  done
done
for name in "${NAMES[@]}"; do
  (( rc[$name] > 128 )) || continue
  p=${pid[$name]}
  echo "==================== session '$name' died of signal $(( rc[$name] - 128 )) ===================="
  echo "[test] in: $(cat "$logs/current-$p" 2>/dev/null || echo '(no test started)')"
  echo "[test] threads after its last modules:"
  tail -n 5 "$logs/threads-$p.log" 2>/dev/null | sed 's/^/  /'
  echo "[test] every thread's innermost frames ($logs/faulthandler-$p.log; the current one crashed):"
  awk '/^Fatal Python error/ {print; next}
       /^(Current thread|Thread) 0x/ {print; left = 4; next}
       left > 0 && /^  (File|<no Python)/ {print; left--}' "$logs/faulthandler-$p.log" 2>/dev/null | head -n 80 | sed 's/^/  /'
done
summary=""
for name in "${NAMES[@]}"; do summary+=" $name: pytest exit ${rc[$name]};"; done
echo "[test]$summary"
# pytest's 5 (no test collected) in any session fails the run, like any other failure.
for name in "${NAMES[@]}"; do
  if (( rc[$name] != 0 )); then exit "${rc[$name]}"; fi
done
exit 0
