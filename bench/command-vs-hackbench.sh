#!/usr/bin/env bash
# `schedlab command` beside the program it runs: hackbench (Debian rt-tests) run directly
# and under `schedlab command`, alternated in one run so drift hits both alike; each
# round compares hackbench's own "Time:" (parsed by schedlab as a declared figure) and the
# wall time of the whole invocation. Then VERDICTS runs of the done-when example
# (`--policy other,fifo --repeat 8`), each with its answer.
# Target: hackbench's own time under schedlab within ±5 % of its time alone (the harness
# changes nothing it measures); the example decided in most runs.
#
#   bench/command-vs-hackbench.sh [ROUNDS] [VERDICTS]     (defaults 9 and 3; root for FIFO)
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-9}
verdicts=${2:-3}
if ! command -v hackbench >/dev/null; then
  echo "installing rt-tests for hackbench" >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq rt-tests >/dev/null
fi
nice -n 19 cargo build --release --quiet
bin=target/release/schedlab
hb=(hackbench -g 2 -l 100)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

printf '%-6s %12s %12s %12s %12s\n' round alone_hb_s under_hb_s alone_wall_s under_wall_s
for ((i = 1; i <= rounds; i++)); do
  t0=$(date +%s.%N)
  alone=$("${hb[@]}" | sed -n 's/^Time: *//p')
  t1=$(date +%s.%N)
  under=$(flock /tmp/schedlab-measure.lock "$bin" command --json --figure 'hb_s=regex:Time: *([0-9.]+)' -- "${hb[@]}" |
    python3 -c 'import json,sys; l=json.loads(sys.stdin.readline()); print(l["hb_s"], l["wall_s"])')
  t2=$(date +%s.%N)
  read -r under_hb under_wall <<<"$under"
  printf '%-6s %12s %12s %12.4f %12.4f\n' "$i" "$alone" "$under_hb" "$(echo "$t1 - $t0" | bc)" "$under_wall"
done | tee "$work/rounds"
python3 - "$work/rounds" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
col = lambda k: [float(r[k]) for r in rows]
a, u, aw, uw = (statistics.median(col(k)) for k in (1, 2, 3, 4))
print(f"medians: hackbench's own time alone {a:.4f} s, under schedlab {u:.4f} s: ratio {u / a:.3f}; "
      f"wall alone (incl. fork/exec) {aw:.4f} s, schedlab's wall of the command {uw:.4f} s: ratio {uw / aw:.3f}")
PY
echo
echo "the example, $verdicts run(s): schedlab command --policy other,fifo --repeat 8 -- ${hb[*]}"
for ((i = 1; i <= verdicts; i++)); do
  flock /tmp/schedlab-measure.lock "$bin" command --policy other,fifo --repeat 8 -- "${hb[@]}" 2>/dev/null |
    grep '^- command' | sed 's/ (p = .*//' | sed "s/^/  $i: /"
done
