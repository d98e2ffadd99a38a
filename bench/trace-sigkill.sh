#!/usr/bin/env bash
# What SIGKILLed traced runs leave in tracefs. ROUNDS times: start a traced run on one
# CPU — `schedlab latency --policy fifo --duration 10s --trace on`, or every other round
# `schedlab run` of a one-experiment suite with `trace = "on"` — in a session of its own,
# and SIGKILL it at a random moment of its first 3 s: at random, the command alone (its
# trial process gets SIGTERM, its parent-death signal, and removes its instance itself) or
# its whole process group (`kill -9 -PGID`, the OOM killer: nothing of schedlab runs to
# remove the instance, the next traced run's start must). Each round waits for every
# process of the run to end and says how many stale instances were there before it
# started, whether its trial's instance was made and whether it is left; the next round
# starts at once. At the end one 1 s traced run, then the
# `schedlab-*` instances under tracefs whose owner has ended are counted (target 0).
#
#   bench/trace-sigkill.sh [ROUNDS]     (default 20; CPU=N picks the CPU, default the last;
#                                        SEED=N fixes the dice)
# Needs root (SCHED_FIFO, tracefs). Prints one line a round, then
# "instances left after N SIGKILLs: K".
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-20}
cpu=${CPU:-$(python3 -c 'import os; print(max(os.sched_getaffinity(0)))')}
RANDOM=${SEED:-$$}
nice -n 19 cargo build --release --quiet
bin=$(realpath "${CARGO_TARGET_DIR:-target}/release/schedlab")
tracefs=/sys/kernel/tracing
work=$(mktemp -d -t schedlab-trace-sigkill.XXXXXX)
mounted_before=$(grep -c ' tracefs ' /proc/mounts || true)
sid="" # the session of the run in progress

cleanup() {
  if [[ -n $sid ]]; then
    kill -KILL -- "-$sid" 2>/dev/null || true # the run's process group, trial included
  fi
  # A run SIGKILLed with its trial leaves the tracefs it mounted: unmount what we caused.
  if [[ $mounted_before == 0 ]] && grep -q " $tracefs tracefs " /proc/mounts; then
    umount -l "$tracefs" || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

cat >"$work/suite.toml" <<TOML
name = "trace-sigkill"
[[experiment]]
family = "latency"
policy = "fifo"
cpus = "$cpu"
duration = "10s"
trace = "on"
TOML

# The schedlab instances whose owner (the pid in the name) has ended or is a zombie, one a
# line; with -a, every schedlab instance. tracefs is mounted for the look if it is not
# (instances outlive their mount) and unmounted after.
instances() {
  local all=${1:-} mounted_here=""
  if ! grep -q ' tracefs ' /proc/mounts; then
    mount -t tracefs nodev "$tracefs"
    mounted_here=1
  fi
  local dir
  dir=$(awk '$3 == "tracefs" { print $2; exit }' /proc/mounts)/instances
  python3 - "$dir" "$all" <<'PY'
import os, re, sys
for name in sorted(os.listdir(sys.argv[1])):
    m = re.fullmatch(r"schedlab-(\d+)-\d+", name)
    if not m:
        continue
    try:
        with open(f"/proc/{m.group(1)}/stat") as f:
            ended = f.read().rsplit(")", 1)[1].split()[0] in "ZXx"
    except OSError:
        ended = True
    if ended or sys.argv[2]:
        print(name)
PY
  if [[ -n $mounted_here ]]; then
    umount -l "$tracefs"
  fi
}

# Pids in session $1 that have not ended (zombies have).
alive_in() {
  ps -o pid=,stat= -s "$1" 2>/dev/null | awk '$2 !~ /^Z/ { print $1 }' || true
}

exec 9>/tmp/schedlab-measure.lock
echo "round  stale  command  killed   at      its trial's instance"
for ((i = 1; i <= rounds; i++)); do
  flock 9 # one measurement at a time on this machine (bench/ and other sessions)
  stale=$(instances | wc -l) # left by earlier rounds: the next start removes them
  if ((i % 2)); then
    kind=latency
    setsid "$bin" latency --policy fifo --cpus "$cpu" --duration 10s --trace on >/dev/null 2>&1 9>&- &
  else
    kind=run
    setsid "$bin" run "$work/suite.toml" --db "$work/r.db" >/dev/null 2>&1 9>&- &
  fi
  sid=$!
  at=$(awk -v r=$RANDOM 'BEGIN { printf "%.2f", 0.05 + 2.95 * r / 32768 }')
  sleep "$at"
  # The run's processes and the instances they own, just before the kill.
  pids=$(alive_in "$sid" | tr '\n' ' ')
  made=$(instances -a | while read -r name; do
    owner=${name#schedlab-}
    [[ " $pids " == *" ${owner%-*} "* ]] && echo "$name"
  done || true)
  if ((RANDOM % 2)); then
    target=group
    kill -KILL -- "-$sid" 2>/dev/null || true
  else
    target=command
    kill -KILL "$sid" 2>/dev/null || true
  fi
  wait "$sid" 2>/dev/null || true
  for ((w = 0; w < 300; w++)); do
    [[ -z $(alive_in "$sid") ]] && break
    sleep 0.1
  done
  [[ -n $(alive_in "$sid") ]] && echo "round $i: processes of the run still alive after 30 s" >&2
  sid=""
  flock -u 9
  left=$(instances -a | grep -Fx -f <(printf '%s\n' "$made") || true)
  if [[ -z $made ]]; then
    fate="none made yet"
  elif [[ -z $left ]]; then
    fate="$made removed"
  else
    fate="$left left"
  fi
  printf "%5d  %5d  %-7s  %-7s  %5s s  %s\n" "$i" "$stale" "$kind" "$target" "$at" "$fate"
done

before=$(instances | wc -l)
flock 9
"$bin" latency --policy fifo --cpus "$cpu" --duration 1s --trace on >/dev/null 9>&-
flock -u 9
left=$(instances | wc -l)
in_use=$(($(instances -a | wc -l) - left))
echo "left by the kills before the final run: $before"
echo "instances left after $rounds SIGKILLs: $left"
if ((in_use > 0)); then
  echo "(and $in_use in use by schedlab processes running beside this script)"
fi
