#!/usr/bin/env bash
# What the PostgreSQL store costs a run, against the SQLite file: `schedlab run quick`
# into each, alternating, ROUNDS times, and the median wall-time ratio (PostgreSQL /
# SQLite). quick is adaptive within a 50 s budget, so its wall time hides store costs in
# fewer repeats: it is run with --max-repeat 6 (a fixed 120 trials) and the trials stored
# are printed too, with the wall time outside the trials per trial (what the harness and
# the store add, without the trials' own noise). Then the store alone: a suite of TRIALS tiny ring trials (a few ms of
# measuring each), where the commit per trial is a visible share of the time.
#
# The server is a throwaway one, as in the tests: initdb into a temporary directory (as
# the postgres user when run as root), a Unix socket only, default durability (fsync and
# synchronous commit on, as SQLite's WAL commits are synced). It runs on this machine,
# so its work competes with the trials: what a lab server on the same host costs.
#
#   bench/pg-vs-sqlite.sh [ROUNDS] [TRIALS]     (default 3 rounds, 300 tiny trials)
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3}
tiny=${2:-300}
cargo build --release --quiet
bin=${CARGO_TARGET_DIR:-$PWD/target}/release/schedlab
pgbin=${SCHEDLAB_PG_BIN:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)}
if [ -z "$pgbin" ] || [ ! -x "$pgbin/initdb" ]; then
  echo "PostgreSQL is not installed (apt-get install postgresql)" >&2
  exit 2
fi
work=$(mktemp -d /tmp/schedlab-pgbench.XXXXXX)
as_owner() { if [ "$(id -u)" = 0 ]; then setpriv --reuid=postgres --regid=postgres --clear-groups "$@"; else "$@"; fi; }
cleanup() {
  as_owner "$pgbin/pg_ctl" -D "$work/data" -m immediate -w stop > /dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
[ "$(id -u)" = 0 ] && chown postgres: "$work"
as_owner "$pgbin/initdb" -D "$work/data" -U postgres --auth=trust --encoding=UTF8 --locale=C > /dev/null
as_owner "$pgbin/pg_ctl" -D "$work/data" -l "$work/server.log" -w -o "-c listen_addresses= -k $work" start > /dev/null
socket=$(python3 -c "import urllib.parse,sys; print(urllib.parse.quote(sys.argv[1], safe=''))" "$work")
url() { echo "postgresql://postgres@$socket/$1"; }
as_owner "$pgbin/createdb" -h "$work" -U postgres template_bench
# Runs into PostgreSQL write their HTML report into the current directory: keep it here.
cd "$work"

seconds() { # run "$@" quietly, print its wall time in seconds
  local t0 t1
  t0=$(date +%s.%N); "$@" > /dev/null 2>&1; t1=$(date +%s.%N)
  python3 -c "print(f'{$t1 - $t0:.3f}')"
}
# "N S": the trials run 1 stored and the seconds they took (measured by the trials).
in_trials() { "$bin" export 1 --db "$1" | python3 -c "import json,sys; t = json.load(sys.stdin)['runs'][0]['trials']; print(len(t), sum(x['elapsed_s'] for x in t))"; }

cat > "$work/tiny.toml" <<TOML
name = "tiny-$tiny"
[[experiment]]
family = "ring"
procs = 2
laps = 10
repeat = $tiny
TOML

measure() { # $1 label, $2 suite, $3.. extra flags: prints per-round lines, then the medians and ratio
  local label=$1 suite=$2; shift 2
  local sq=() pg=() sqo=() pgo=()
  for r in $(seq 1 "$rounds"); do
    local db="$work/$label-$r.db" name="${label//-/_}_$r"
    as_owner "$pgbin/createdb" -h "$work" -U postgres "$name"
    flock 9 # one measurement at a time on this machine (bench/ and other sessions)
    # Alternate which store goes first, so a drift in the machine's load favours neither.
    if [ $((r % 2)) = 1 ]; then
      s=$(seconds "$bin" run "$suite" "$@" --db "$db")
      p=$(seconds "$bin" run "$suite" "$@" --db "$(url "$name")")
    else
      p=$(seconds "$bin" run "$suite" "$@" --db "$(url "$name")")
      s=$(seconds "$bin" run "$suite" "$@" --db "$db")
    fi
    flock -u 9
    read -r sn st <<< "$(in_trials "$db")"
    read -r pn pt <<< "$(in_trials "$(url "$name")")"
    # The wall time outside the trials (start, spawning, storing, the report) per trial:
    # the store's share, without the trials' own noise.
    so=$(python3 -c "print(f'{($s - $st) / $sn * 1000:.1f}')")
    po=$(python3 -c "print(f'{($p - $pt) / $pn * 1000:.1f}')")
    echo "  round $r: SQLite $s s ($sn trials, $so ms/trial outside them), PostgreSQL $p s ($pn trials, $po ms/trial outside them)"
    sq+=("$s"); pg+=("$p"); sqo+=("$so"); pgo+=("$po")
  done
  python3 - "${sq[*]}" "${pg[*]}" "${sqo[*]}" "${pgo[*]}" <<'PY'
import statistics, sys
s, p, so, po = ([float(x) for x in arg.split()] for arg in sys.argv[1:5])
ms, mp = statistics.median(s), statistics.median(p)
ratios = [b / a for a, b in zip(s, p)]
print(f"  median wall: SQLite {ms:.2f} s, PostgreSQL {mp:.2f} s; ratio PostgreSQL/SQLite {mp / ms:.3f} "
      f"(per round {', '.join(f'{r:.3f}' for r in ratios)})")
mso, mpo = statistics.median(so), statistics.median(po)
print(f"  median outside the trials: SQLite {mso:.1f} ms/trial, PostgreSQL {mpo:.1f} ms/trial; "
      f"ratio {mpo / mso:.3f}, difference {mpo - mso:+.1f} ms/trial")
PY
}

# Opened after the server started, so the server never holds the lock.
exec 9> /tmp/schedlab-measure.lock
echo "== schedlab run quick --max-repeat 6 (120 trials), $rounds rounds"
measure quick quick --max-repeat 6
echo "== $tiny tiny ring trials (the store's commit per trial), $rounds rounds"
measure tiny "$work/tiny.toml"
