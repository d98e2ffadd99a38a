#!/usr/bin/env bash
# What reading schedstat costs the ring: ns/hop with the reading on (the default) and with
# `--schedstat off`, in one run, interleaved pair by pair (the order inside each pair
# alternates, so drift and warm-up fall on both alike). Each member reads its own
# /proc/thread-self/schedstat and sched (about 1 and 15 us) once when ready, before its
# first wait for the token, and once as it leaves: twice per member per ring, never in
# the hops.
# Prints each pair, the medians, the ratio on/off (target <= 1.01) and in how many pairs
# "on" was the slower (about half when the reading costs nothing: a sign test).
#
#   [PROCS=2] [PIN=same] bench/schedstat-overhead.sh [ROUNDS] [LAPS]   (defaults: 11 pairs of 100000 laps)
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-11}
laps=${2:-100000}
procs=${PROCS:-2}
pin=${PIN:-same}

cargo build --release --quiet
bin=${CARGO_TARGET_DIR:-target}/release/schedlab

median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
hop() {
  "$bin" ring --procs "$procs" --pin "$pin" --laps "$laps" --schedstat "$1" --json |
    python3 -c 'import json,sys; print(json.loads(sys.stdin.readline())["ns_per_hop"])'
}

on_file=$(mktemp); off_file=$(mktemp)
trap 'rm -f "$on_file" "$off_file"' EXIT

printf '%-6s %12s %12s\n' pair on_ns off_ns
for ((i = 1; i <= rounds; i++)); do
  if ((i % 2)); then on=$(hop on); off=$(hop off); else off=$(hop off); on=$(hop on); fi
  printf '%-6s %12.1f %12.1f\n' "$i" "$on" "$off"
  echo "$on" >>"$on_file"; echo "$off" >>"$off_file"
done
on_med=$(median <"$on_file"); off_med=$(median <"$off_file")
echo
printf 'median ns per hop (ring of %s, pin %s, %s laps): schedstat on %.1f, off %.1f\n' \
  "$procs" "$pin" "$laps" "$on_med" "$off_med"
awk -v a="$on_med" -v b="$off_med" 'BEGIN {printf "ratio on/off: %.3f (target <= 1.01)\n", a / b}'
paste "$on_file" "$off_file" | awk '{n++; if ($1 > $2) k++} END {printf "pairs with schedstat on the slower: %d of %d\n", k, n}'
