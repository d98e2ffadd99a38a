#!/usr/bin/env bash
# `cargo test` N times beside planted interference (bench/noise.py), counting the runs that
# pass: the tests must hold on a machine noisier than this one.
#
#   bench/tests-under-noise.sh [RUNS] [MODE]     (default 5 steal)
#     steal   a SCHED_FIFO 99 spinner on each CPU, 1 ms spins at random moments, 6 % of
#             each CPU (NOISE_SPIN_MS, NOISE_SHARE change them): a hypervisor's steal
#     tenant  a nice-0 process on each CPU busy 30 % of the time in 5-20 ms bursts
#     quiet   nothing planted
#
# The noise floor schedlab's own probe reads (with the interferers running) is printed
# before the runs and beside the count. The interferers are removed on exit, SIGINT and
# SIGTERM (and by the kernel if this script is killed). Needs root for steal.
set -uo pipefail
cd "$(dirname "$0")/.."
runs=${1:-5}
mode=${2:-steal}
case $mode in steal | tenant | quiet) ;; *)
  echo "bench/tests-under-noise.sh: MODE is steal, tenant or quiet, not '$mode'" >&2
  exit 2
  ;;
esac
noise=(python3 bench/noise.py "$mode" --spin-ms "${NOISE_SPIN_MS:-1}")
[[ -n ${NOISE_SHARE:-} ]] && noise+=(--share "$NOISE_SHARE")
logs=$(mktemp -d -t schedlab-tests-under-noise.XXXXXX)
trap 'rm -rf "$logs"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

cargo test --no-run --quiet 2>/dev/null || { echo "the tests do not build"; exit 2; }
bin=${CARGO_TARGET_DIR:-target}/debug/schedlab

# The noise floor as `schedlab run` probes it, beside the interferers: a one-trial suite.
floor() {
  cat >"$logs/floor.toml" <<'TOML'
name = "floor"
[[experiment]]
family = "ring"
procs = 2
laps = 100
repeat = 1
TOML
  "${noise[@]}" -- "$bin" run "$logs/floor.toml" --db "$logs/floor.db" --noise-probe on 2>&1 |
    grep -o 'noise floor: .*' | head -1
  rm -f "$logs/floor.db"*
}
floor_line=$(floor)
echo "mode $mode: ${floor_line:-noise floor: not measured}"

passed=0
for ((i = 1; i <= runs; i++)); do
  start=$(date +%s)
  rc=0
  "${noise[@]}" -- cargo test >"$logs/run-$i.log" 2>&1 || rc=$?
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
echo "== cargo test beside '$mode' noise passed $passed of $runs runs (${floor_line:-noise floor: not measured})"
((passed == runs))
