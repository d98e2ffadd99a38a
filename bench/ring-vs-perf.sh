#!/usr/bin/env bash
# schedlab ring vs `perf bench sched pipe`, both with two tasks pinned to one CPU,
# alternated in one run so drift hits both alike. Prints each round, the medians and
# the ratio of schedlab's ns/hop to perf's (usecs/op / 2: an op is a round trip, two hops).
# Target: ratio <= 1.05, i.e. the harness adds nothing measurable.
# MODE=thread compares `--mode thread` with `perf bench sched pipe -T` instead.
#
#   [MODE=process|thread] bench/ring-vs-perf.sh [ROUNDS] [LOOPS]   (defaults: 7 rounds of 200000)
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-7}
loops=${2:-200000}
cpu=${CPU:-0}
mode=${MODE:-process}
perf_flags=()
[ "$mode" = thread ] && perf_flags=(-T)

command -v perf >/dev/null || { echo "perf not found: apt-get install linux-perf" >&2; exit 2; }
cargo build --release --quiet
bin=target/release/schedlab

median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

s_file=$(mktemp); p_file=$(mktemp)
trap 'rm -f "$s_file" "$p_file"' EXIT

printf '%-6s %14s %14s\n' round schedlab_ns perf_ns
for ((i = 1; i <= rounds; i++)); do
  s=$("$bin" ring --procs 2 --pin same --cpus "$cpu" --laps "$loops" --mode "$mode" --json |
      python3 -c 'import json,sys; print(json.loads(sys.stdin.readline())["ns_per_hop"])')
  p=$(taskset -c "$cpu" perf bench sched pipe "${perf_flags[@]}" -l "$loops" 2>/dev/null |
      awk '/usecs\/op/ {printf "%.1f\n", $1 * 1000 / 2}')
  printf '%-6s %14.1f %14.1f\n' "$i" "$s" "$p"
  echo "$s" >>"$s_file"; echo "$p" >>"$p_file"
done
s_med=$(median <"$s_file"); p_med=$(median <"$p_file")
ratio=$(awk -v s="$s_med" -v p="$p_med" 'BEGIN {printf "%.3f", s / p}')
echo
printf 'median ns per hop (%s mode): schedlab %.1f, perf bench sched pipe %s %.1f\n' "$mode" "$s_med" "${perf_flags[*]}" "$p_med"
echo "ratio schedlab/perf: $ratio (target <= 1.05)"
