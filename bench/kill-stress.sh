#!/usr/bin/env bash
# Kill `schedlab run` at random points and check what it leaves behind. A suite of short
# ring, io, mixed, cpu and latency trials (shuffled; 275 trials, ~2 min for 50 kills) starts,
# then KILLS times: sleep 0.1-2.0 s, send SIGINT, SIGTERM or SIGKILL (at random) to the
# orchestrator, wait for it and for every process of that run to go, count survivors and
# leftover files, and start it again with `run --resume`. At the end it resumes until the
# run finishes and checks:
#   - 0 surviving processes (10 s after each kill),
#   - 0 leftover files: nothing in the private TMPDIR, nothing in the io/mixed work dir,
#     no `.*.schedlab-*.tmp` anywhere (right after each SIGINT/SIGTERM, and at the end;
#     what a SIGKILL leaves is reported, and whether the next start had swept it by the
#     time of the next kill),
#   - `PRAGMA integrity_check` says ok,
#   - the export has every seq 0..planned-1 exactly once, and no trial failed.
# Exits 1 if any of these fails.
#
#   bench/kill-stress.sh [KILLS]      (default 50, or $KILLS; $STRESS_SEED fixes the dice)
#   SCHEDLAB=/path/to/schedlab bench/kill-stress.sh   (default: cargo build --release)
#
# A process is "of this run" if it is in the session the orchestrator was started in (each
# start gets its own session; trials and their children only change process group) or
# carries the environment marker it was started with; zombies are counted apart, as they
# run nothing and are their new parent's to reap.
set -euo pipefail
cd "$(dirname "$0")/.."
kills=${1:-${KILLS:-50}}
# Each kill lets the run go on for about a second: 11 combinations x KILLS/2 repeats
# (~2 s of trials per kill, more on a busy machine) keep it unfinished until the last kill.
repeat=$(((kills + 1) / 2))
RANDOM=${STRESS_SEED:-$$}
if [[ -z ${SCHEDLAB:-} ]]; then
  cargo build --release --quiet
  SCHEDLAB=${CARGO_TARGET_DIR:-target}/release/schedlab
fi
bin=$(realpath "$(command -v "$SCHEDLAB")")

scratch=$(mktemp -d -t schedlab-kill-stress.XXXXXX)
sessions=() # every session we started, for the exit trap
tag="SCHEDLAB_KILL_STRESS=$scratch" # in the environment of everything we start

ours() { # "PID STATE COMM" of every process of ours: in one of the sessions "$@", or tagged
  python3 - "$tag" "$@" <<'PY'
import os, sys
tag = sys.argv[1].encode()
sids = set(sys.argv[2:])
for p in os.listdir("/proc"):
    if not p.isdigit():
        continue
    try:
        with open(f"/proc/{p}/stat") as f:
            stat = f.read()
        comm = stat[stat.index("(") + 1:stat.rindex(")")]
        fields = stat[stat.rindex(")") + 2:].split()
        state, sid = fields[0], fields[3]
        mine = sid in sids
        if not mine:
            try:
                with open(f"/proc/{p}/environ", "rb") as f:
                    mine = tag in f.read().split(b"\0")
            except OSError:
                pass
        if mine:
            print(p, state, comm)
    except (OSError, ValueError, IndexError):
        pass  # gone while we looked
PY
}

cleanup() {
  local pids
  pids=$(ours "${sessions[@]}" | awk '$2 != "Z" { print $1 }') || true
  if [[ -n $pids ]]; then
    # shellcheck disable=SC2086 # one pid per word
    kill -KILL $pids 2>/dev/null || true
    sleep 0.2
  fi
  rm -rf "$scratch"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

mkdir "$scratch/tmp" "$scratch/work" "$scratch/logs"
export TMPDIR=$scratch/tmp
db=$scratch/stress.db
suite=$scratch/kill-stress.toml
cat >"$suite" <<TOML
name = "kill-stress"
description = "short trials of every family, for bench/kill-stress.sh"

[[experiment]]
family = "ring"
procs = [2, 4, 8]
laps = 10000
repeat = $repeat

[[experiment]]
family = "workload"
workload = "io"
policy = "other"
procs = [2, 3, 4]
transfer-size = "2MiB"
block-size = "4KiB"
dir = "$scratch/work"
repeat = $repeat

[[experiment]]
family = "workload"
workload = "mixed"
policy = "other"
procs = [2, 4]
iterations = 1000
dir = "$scratch/work"
repeat = $repeat

[[experiment]]
family = "workload"
workload = "cpu"
procs = 2
iterations = 20_000_000
repeat = $repeat

[[experiment]]
family = "latency"
policy = ["other", "fifo"]
interval = "1ms"
loops = 500
repeat = $repeat
TOML

leftovers() { # every leftover path, one per line: anything in TMPDIR or the work dir, temp files
  find "$scratch/tmp" "$scratch/work" -mindepth 1 -maxdepth 1
  find "$scratch" -name '.*.schedlab-*.tmp'
}

run_state() { # "ID STATUS" of the newest run in the database, or nothing
  [[ -e $db ]] || return 0
  "$bin" list --json --db "$db" | python3 -c '
import json, sys
runs = [json.loads(l) for l in sys.stdin if l.strip()]
if runs:
    r = max(runs, key=lambda r: r["id"])
    print(r["id"], r["status"])'
}

start() { # start schedlab "$@" in a session of its own, not ignoring SIGINT; sets $pid
  local log=$1
  shift
  # A background job of a script ignores SIGINT and SIGQUIT; this puts them back first.
  SCHEDLAB_KILL_STRESS=$scratch python3 -c '
import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_DFL)
signal.signal(signal.SIGQUIT, signal.SIG_DFL)
os.setsid()
os.execv(sys.argv[1], sys.argv[1:])' "$bin" "$@" --db "$db" </dev/null >"$log" 2>&1 &
  pid=$!
  sessions+=("$pid")
  # Wait for the exec, so the signal reaches schedlab and not the launcher.
  local i
  for ((i = 0; i < 500; i++)); do
    [[ $(readlink "/proc/$pid/exe" 2>/dev/null) == "$bin" ]] && return 0
    [[ -e /proc/$pid ]] || return 0
    sleep 0.01
  done
  echo "schedlab did not start within 5 s" >&2
  return 1
}

gone() { # wait up to $2 s for process $1 to exit (or to be a zombie); false if it has not
  local i stat
  for ((i = 0; i < $2 * 20; i++)); do
    stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 0
    [[ ${stat##*) } == Z* ]] && return 0
    sleep 0.05
  done
  return 1
}

signum() { kill -l "$1"; }

declare -A seen=() sent=() landed=() missed=() survived=() left_after=() left_swept=() left_kept=()
for s in INT TERM KILL; do
  sent[$s]=0 landed[$s]=0 missed[$s]=0 survived[$s]=0 left_after[$s]=0 left_swept[$s]=0 left_kept[$s]=0
done
zombies=0 hung=0 unexpected=0 finished_early=0
stale=() stale_sig=""
t_start=$(date +%s.%N)

echo "== $kills kills of \`schedlab run\` ($bin), scratch $scratch"
for ((k = 1; k <= kills; k++)); do
  read -r run_id status < <(run_state) || true
  if [[ ${status:-} == finished ]]; then
    finished_early=1
    echo "run $run_id finished before kill $k: $((k - 1)) kills sent"
    break
  fi
  log=$scratch/logs/start-$k.log
  if [[ -n ${run_id:-} ]]; then
    start "$log" run --resume "$run_id"
  else
    start "$log" run "$suite" --shuffle --seed 7
  fi
  ms=$((100 + RANDOM % 1901))
  sigs=(INT TERM KILL)
  sig=${sigs[RANDOM % 3]}
  sleep "$((ms / 1000)).$(printf '%03d' $((ms % 1000)))"
  # What the last SIGKILL left: has this start swept it?
  if ((${#stale[@]})); then
    n=0
    for p in "${stale[@]}"; do [[ -e $p ]] && n=$((n + 1)); done
    left_kept[$stale_sig]=$((left_kept[$stale_sig] + n))
    left_swept[$stale_sig]=$((left_swept[$stale_sig] + ${#stale[@]} - n))
    stale=()
  fi
  sent[$sig]=$((sent[$sig] + 1))
  kill -s "$sig" "$pid" 2>/dev/null || true
  # A watchdog, so that bash reaps schedlab inside this `wait`, whose stderr (bash's
  # "Killed" notice) is dropped.
  (gone "$pid" 30 || { kill -KILL "$pid" 2>/dev/null; exit 1; }) &
  watchdog=$!
  rc=0
  { wait "$pid"; } 2>/dev/null || rc=$?
  if ! wait "$watchdog"; then
    hung=$((hung + 1))
    echo "kill $k: SIG$sig: schedlab $pid still running 30 s after it; killed" >&2
  fi
  if ((rc == 128 + $(signum "$sig"))); then
    landed[$sig]=$((landed[$sig] + 1))
  else
    missed[$sig]=$((missed[$sig] + 1))
    if ((rc != 0 && rc != 3)); then
      unexpected=$((unexpected + 1))
      echo "kill $k: SIG$sig after ${ms} ms: schedlab exited $rc:" >&2
      tail -3 "$log" >&2
    fi
  fi
  # Every process of this run must be gone within 10 s; only then count files.
  for ((i = 0; i < 100; i++)); do
    [[ -z $(ours "$pid" | awk '$2 != "Z"') ]] && break
    sleep 0.1
  done
  alive=$(ours "$pid" | awk '$2 != "Z"')
  if [[ -n $alive ]]; then
    n=$(wc -l <<<"$alive")
    survived[$sig]=$((survived[$sig] + n))
    echo "kill $k: SIG$sig after ${ms} ms: $n process(es) still there after 10 s:" >&2
    while IFS= read -r l; do echo "    $l"; done <<<"$alive" >&2
    # shellcheck disable=SC2046 # one pid per word
    kill -KILL $(awk '{ print $1 }' <<<"$alive") 2>/dev/null || true
    for ((i = 0; i < 50; i++)); do
      [[ -z $(ours "$pid" | awk '$2 != "Z"') ]] && break
      sleep 0.1
    done
  fi
  zombies=$((zombies + $(ours "$pid" | awk '$2 == "Z"' | wc -l)))
  # Count only what this start left; an older leftover was counted at its own kill.
  new=()
  while IFS= read -r p; do
    [[ -n ${seen[$p]:-} ]] || new+=("$p")
    seen[$p]=1
  done < <(leftovers)
  if ((${#new[@]})); then
    left_after[$sig]=$((left_after[$sig] + ${#new[@]}))
    echo "kill $k: SIG$sig after ${ms} ms (exit $rc): left ${#new[@]}: ${new[*]#"$scratch"/}" >&2
    stale=("${new[@]}") stale_sig=$sig
  fi
done
kill_s=$(python3 -c "print(f'{$(date +%s.%N) - $t_start:.1f}')")
stored_at_kills=0
[[ -e $db ]] && stored_at_kills=$("$bin" list --json --db "$db" | python3 -c '
import json, sys
print(sum(r["ok"] + r["not_ok"] for r in map(json.loads, filter(str.strip, sys.stdin))))')

# Finish the run: resume, without kills, until it is done.
resumes=0
for ((i = 0; i < 5; i++)); do
  read -r run_id status < <(run_state) || true
  [[ ${status:-} == finished ]] && break
  resumes=$((resumes + 1))
  log=$scratch/logs/final-$i.log
  if [[ -n ${run_id:-} ]]; then start "$log" run --resume "$run_id"; else start "$log" run "$suite" --shuffle --seed 7; fi
  rc=0
  wait "$pid" || rc=$?
  ((rc == 0 || rc == 3)) || { echo "final resume exited $rc:" >&2; tail -3 "$log" >&2; }
  if ((${#stale[@]})); then # the last kill's leftovers, against a start that ran to the end
    n=0
    for p in "${stale[@]}"; do [[ -e $p ]] && n=$((n + 1)); done
    left_kept[$stale_sig]=$((left_kept[$stale_sig] + n))
    left_swept[$stale_sig]=$((left_swept[$stale_sig] + ${#stale[@]} - n))
    stale=()
  fi
done
read -r run_id status < <(run_state) || true
for ((i = 0; i < 100; i++)); do
  [[ -z $(ours "${sessions[@]}" | awk '$2 != "Z"') ]] && break
  sleep 0.1
done
alive_end=$(ours "${sessions[@]}" | awk '$2 != "Z"' | wc -l)
mapfile -t left_end < <(leftovers)
integrity=$(sqlite3 "$db" 'PRAGMA integrity_check' 2>&1 | tr '\n' ' ' | sed 's/ $//')
runs=$("$bin" list --json --db "$db" | grep -c .) || true
planned=0 stored=0 dups=0 missing=0 notok=0 reasons="{}"
read -r planned stored dups missing notok reasons < <(
  "$bin" export "${run_id:-1}" --db "$db" | python3 -c '
import collections, json, sys
run = json.load(sys.stdin)["runs"][0]
planned = run["planned"]
seqs = collections.Counter(t["seq"] for t in run["trials"])
dups = sum(n - 1 for n in seqs.values())
missing = sum(1 for s in range(planned) if s not in seqs) + sum(1 for s in seqs if not 0 <= s < planned)
bad = [t for t in run["trials"] if t["status"] != "ok"]
why = collections.Counter(t["status"] + ": " + str(t["reason"]) for t in bad)
print(planned, len(run["trials"]), dups, missing, len(bad), json.dumps(dict(why)))'
)
survivors=$((survived[INT] + survived[TERM] + survived[KILL] + alive_end))
delivered=$((landed[INT] + landed[TERM] + landed[KILL]))

echo
printf '%-8s %5s %7s %10s %13s %14s %14s\n' signal sent landed survivors "left (kill)" "swept (next)" "kept (next)"
for s in INT TERM KILL; do
  printf '%-8s %5d %7d %10d %13d %14d %14d\n' "SIG$s" "${sent[$s]}" "${landed[$s]}" "${survived[$s]}" \
    "${left_after[$s]}" "${left_swept[$s]}" "${left_kept[$s]}"
done
echo "kills delivered: $delivered of $((sent[INT] + sent[TERM] + sent[KILL])) sent (a miss: schedlab had already exited)" \
  "in $kill_s s$( ((finished_early)) && echo ", then the run finished")"
echo "unexpected exits: $unexpected; hung after a signal (>30 s): $hung;" \
  "zombies (dead, reparented, not yet reaped by pid 1): $zombies"
echo "trials stored when the kills ended: $stored_at_kills; final resumes: $resumes; run ${run_id:-?} status: ${status:-none}; runs in the database: $runs"
echo "survivors: $survivors (after kills: $((survivors - alive_end)), at the end: $alive_end)"
echo "leftovers at the end: ${#left_end[@]}${left_end[*]:+ (${left_end[*]#"$scratch"/})}"
echo "integrity_check: $integrity"
echo "trials: planned $planned, stored $stored, duplicates $dups, missing $missing, not ok $notok"
[[ $reasons == "{}" ]] || echo "not ok: $reasons"

fail=()
((survivors == 0)) || fail+=("$survivors surviving processes")
((left_after[INT] + left_after[TERM] == 0)) || fail+=("leftovers after SIGINT/SIGTERM")
((${#left_end[@]} == 0)) || fail+=("${#left_end[@]} leftovers at the end")
[[ $integrity == ok ]] || fail+=("integrity_check: $integrity")
[[ ${status:-} == finished ]] || fail+=("the run did not finish")
((stored == planned && dups == 0 && missing == 0)) || fail+=("trials not stored exactly once")
((notok == 0)) || fail+=("$notok trials not ok")
((unexpected == 0 && hung == 0)) || fail+=("unexpected exits or hangs")
if ((${#fail[@]})); then
  printf 'FAIL: %s\n' "${fail[@]}"
  exit 1
fi
echo "PASS"
