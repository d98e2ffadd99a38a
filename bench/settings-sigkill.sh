#!/usr/bin/env bash
# What SIGKILLed switched runs leave behind. ROUNDS times: start `schedlab ab` whose side A
# switches a sysctl (kernel.sched_rr_timeslice_ms to 90, or 80 where it is 90) and puts
# its trials in a private cgroup (weight 50), and SIGKILL it at a random moment of its
# first 3 s — at random the command alone or its whole process group (nothing of schedlab
# runs after that) — while the next round's start must restore what the last one left.
# Each round prints whether the sysctl was switched and how many private groups existed
# when the kill came. At the end one short `schedlab latency` (a start like any other),
# then the switched values, `schedlab-set-*` groups and state files left are counted
# (target: 0, 0, 0).
#
#   bench/settings-sigkill.sh [ROUNDS]    (default 20; SEED=N fixes the dice)
#   SCHEDLAB=/path/to/schedlab bench/settings-sigkill.sh   (default: cargo build --release)
# Needs root.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-20}
RANDOM=${SEED:-$$}
if [[ -z ${SCHEDLAB:-} ]]; then
  nice -n 19 cargo build --release --quiet
  SCHEDLAB=${CARGO_TARGET_DIR:-target}/release/schedlab
fi
bin=$(realpath "$(command -v "$SCHEDLAB")")
work=$(mktemp -d -t schedlab-settings-sigkill.XXXXXX)
export SCHEDLAB_STATE_DIR=$work/state SCHEDLAB_NOISE_PROBE=off
name=kernel.sched_rr_timeslice_ms
file=/proc/sys/kernel/sched_rr_timeslice_ms
before=$(cat $file)
switched=$([[ $before == 90 ]] && echo 80 || echo 90)
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT TERM
cat >"$work/suite.toml" <<'TOML'
name = "settings-sigkill"
[[experiment]]
family = "latency"
interval = "1ms"
loops = 2000
repeat = 4
TOML
groups() { find /sys/fs/cgroup -maxdepth 2 -name 'schedlab-set-*' -type d 2>/dev/null | wc -l; }

echo "== $rounds SIGKILLs of schedlab ab --a-set 'sysctl.$name = $switched' --a-set 'cgroup = { weight = 50 }' ($bin)"
for ((i = 1; i <= rounds; i++)); do
  setsid "$bin" ab "$work/suite.toml" --a-set "sysctl.$name = $switched" --a-set 'cgroup = { weight = 50 }' \
    --b-setup true --db "$work/k.db" >/dev/null 2>"$work/round-$i.log" &
  pid=$!
  sleep "$(python3 -c "import random; random.seed($RANDOM); print(round(random.uniform(0.3, 3.0), 2))")"
  now=$(cat $file)
  live=$(groups)
  if ((RANDOM % 2)); then
    how="alone"
    kill -KILL "$pid" 2>/dev/null || true
  else
    how="group"
    kill -KILL -- "-$pid" 2>/dev/null || true
  fi
  wait "$pid" 2>/dev/null || true
  # Its trial process ends on its parent-death signal (or was killed with the group).
  for _ in $(seq 100); do
    pgrep -s "$pid" >/dev/null 2>&1 || break
    sleep 0.05
  done
  recovered=0
  if [[ -n ${prev:-} ]]; then
    recovered=$(grep -c "schedlab $prev, which was killed" "$work/round-$i.log" || true)
  fi
  [[ $now == "$switched" ]] && hits=$((${hits:-0} + 1))
  echo "round $i: killed ($how) with $name at $now and $live private group(s); its start restored $recovered thing(s) the round before left"
  prev=$pid
done
echo "killed while switched: ${hits:-0} of $rounds rounds"
"$bin" latency --loops 5 --interval 1ms >/dev/null 2>"$work/final.log" || { cat "$work/final.log"; exit 2; }
grep "restored\|removed" "$work/final.log" | sed 's/^/  final start: /' || true
left_values=$([[ $(cat $file) == "$before" ]] && echo 0 || echo 1)
left_groups=$(groups)
left_files=$(find "$work/state" -name 'settings-*.json' 2>/dev/null | wc -l)
echo "after $rounds SIGKILLs: $left_values switched value(s), $left_groups private cgroup(s), $left_files state file(s) left ($name $before before, $(cat $file) after)"
((left_values == 0 && left_groups == 0 && left_files == 0))
