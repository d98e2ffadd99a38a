#!/usr/bin/env bash
# `cargo test` N times in a row, exactly as the README runs it: how many runs passed, each
# run's wall time, and every failing test by name. The suite is built once first, so the
# runs time the tests, not the compiler.
#
#   bench/tests-in-a-row.sh [N]      (default 10)
#
# Run it with nothing else busy on the machine: that is what CI gets, and a build beside
# it is exactly the neighbour the tests are not meant to share CPUs with.
set -uo pipefail
cd "$(dirname "$0")/.."
runs=${1:-10}
logs=$(mktemp -d -t schedlab-tests-in-a-row.XXXXXX)
trap 'rm -rf "$logs"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

cargo test --no-run --quiet 2>/dev/null || { echo "the tests do not build"; exit 2; }
passed=0
for ((i = 1; i <= runs; i++)); do
  start=$(date +%s)
  rc=0
  cargo test >"$logs/run-$i.log" 2>&1 || rc=$?
  took=$(($(date +%s) - start))
  if ((rc == 0)); then
    passed=$((passed + 1))
    echo "run $i: passed in ${took} s"
  else
    failing=$(grep -E '^test .* FAILED$' "$logs/run-$i.log" | sed -E 's/^test (.*) \.\.\. FAILED$/\1/' | paste -sd, -)
    echo "run $i: FAILED in ${took} s (exit $rc): ${failing:-see below}"
    grep -E 'panicked at|^error' -A2 "$logs/run-$i.log" | head -12 | sed 's/^/    /'
    # The whole log outlives the script: a rare failure must be readable afterwards.
    kept=$(mktemp -t schedlab-failed-test-run.XXXXXX.log)
    cp "$logs/run-$i.log" "$kept" && echo "    whole log: $kept"
  fi
done
echo "== cargo test passed $passed of $runs runs in a row"
((passed == runs))
