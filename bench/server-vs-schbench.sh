#!/usr/bin/env bash
# `schedlab server` beside schbench, whose model it takes (message threads waking workers
# at a rate; wakeup and request latency percentiles). schbench is neither packaged by
# Debian nor fetchable on a machine that reaches only package registries, so:
#
# - with `schbench` on PATH: both at the same settings (1 message thread, WORKERS workers,
#   RPS requests a second, SECONDS s), alternated ROUNDS times; the medians of their
#   wakeup p50 and p99 and the ratios schedlab / schbench. (schbench's "work" is a
#   matrix multiply of its own size, not a time: its default is kept and schedlab's
#   --work is set to WORK; the wakeup figures do not depend on it at a low rate.)
# - without it: hackbench (Debian rt-tests, installed if missing) where the shapes match:
#   one producer thread handing small messages to one consumer thread that sleeps when
#   nothing is there (`hackbench -T -p -g 1 -f 1 -s 100`: a pipe; `schedlab server
#   --threads 1 --workers 1 --work 1us` paced far beyond what the pair serves: a queue and
#   a futex). Each round runs both; the medians of messages served a second and the
#   ratio schedlab / hackbench. That ratio compares THROUGHPUT AT OVERLOAD (both sides
#   run flat out, a queue always full), not wakeup latency: hackbench measures no
#   latency. Then schedlab's own wakeup and request percentiles at RPS, for the record.
#
#   bench/server-vs-schbench.sh [ROUNDS] [SECONDS]     (defaults 3 and 3; RPS=200 WORKERS=2 WORK=1ms)
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3}
seconds=${2:-3}
rps=${RPS:-200}
workers=${WORKERS:-2}
work=${WORK:-1ms}
nice -n 19 cargo build --release --quiet
bin=target/release/schedlab
results=$(mktemp)
trap 'rm -f "$results"' EXIT
measure() { flock /tmp/schedlab-measure.lock "$@"; }

server_json() {
  measure "$bin" server --json "$@" | python3 -c '
import json, sys
l = json.loads(sys.stdin.readline())
print(l["achieved_rps"], l["wake_p50_ns"] / 1e3, l["wake_p99_ns"] / 1e3, l["request_p50_ns"] / 1e3,
      l["request_p99_ns"] / 1e3, l["sent"], l["queued"], l["dropped"], l["unserved"], l["unsent"])'
}

if command -v schbench >/dev/null; then
  echo "schbench: $(command -v schbench); $rounds round(s) of $seconds s, 1 message thread x $workers workers, $rps rps"
  for ((i = 1; i <= rounds; i++)); do
    read -r _ w50 w99 _ <<<"$(server_json --threads 1 --workers "$workers" --rps "$rps" --work "$work" --duration "${seconds}s")"
    echo "schedlab $w50 $w99" >>"$results"
    measure schbench -m 1 -t "$workers" -R "$rps" -r "$seconds" 2>&1 | python3 -c '
import re, sys
text = sys.stdin.read()
part = text.split("Wakeup Latencies", 1)[1].split("Request Latencies", 1)[0]
p = dict(re.findall(r"(\d+\.\d+)th:\s+(\d+)", part))
print("schbench", p["50.0"], p["99.0"])' >>"$results"
  done
  python3 - "$results" <<'PY'
import statistics as st, sys
rows = [l.split() for l in open(sys.argv[1])]
col = lambda tool, i: [float(r[i]) for r in rows if r[0] == tool]
for r in rows:
    print(f"{r[0]:<9} wake p50 {float(r[1]):8.1f} us  p99 {float(r[2]):8.1f} us")
s50, c50, s99, c99 = st.median(col("schedlab", 1)), st.median(col("schbench", 1)), st.median(col("schedlab", 2)), st.median(col("schbench", 2))
print(f"medians: wake p50 schedlab {s50:.1f} us, schbench {c50:.1f} us: ratio {s50 / c50:.2f}; "
      f"p99 {s99:.1f} us vs {c99:.1f} us: ratio {s99 / c99:.2f}")
PY
  exit 0
fi

packaged=$(apt-cache policy schbench 2>/dev/null | sed -n 's/^ *Candidate: *//p')
echo "schbench: not on PATH (apt candidate: ${packaged:-none}); comparing with hackbench where the shapes match"
if ! command -v hackbench >/dev/null; then
  echo "installing rt-tests for hackbench" >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq rt-tests >/dev/null
fi
loops=${LOOPS:-200000}
echo "throughput at overload (not wakeup latency): hackbench flat out, schedlab paced at 1,000,000 rps"
printf '%-6s %16s %16s %10s %10s %10s %10s\n' round hackbench_msg_s schedlab_req_s sent dropped unserved unsent
for ((i = 1; i <= rounds; i++)); do
  hb_time=$(measure hackbench -T -p -g 1 -f 1 -s 100 -l "$loops" | sed -n 's/^Time: *//p')
  hb_rate=$(python3 -c "print(f'{$loops / $hb_time:.0f}')")
  read -r served _ _ _ _ sent _ dropped unserved unsent <<<"$(server_json --threads 1 --workers 1 --work 1us --rps 1000000 --duration "${seconds}s" 2>/dev/null)"
  printf '%-6s %16s %16.0f %10s %10s %10s %10s\n' "$i" "$hb_rate" "$served" "$sent" "$dropped" "$unserved" "$unsent"
  echo "$hb_rate $served" >>"$results"
done
python3 - "$results" <<'PY'
import statistics as st, sys
rows = [[float(x) for x in l.split()] for l in open(sys.argv[1])]
hb, s = st.median(r[0] for r in rows), st.median(r[1] for r in rows)
print(f"medians: hackbench {hb:.0f} messages/s (pipe), schedlab server {s:.0f} requests/s (queue + futex): "
      f"ratio schedlab / hackbench {s / hb:.2f} (throughput at overload, not wakeup latency)")
PY
echo
echo "schedlab server at $rps rps, 1 message thread x $workers workers, work $work, ${seconds}s:"
read -r served w50 w99 r50 r99 sent queued dropped unserved unsent <<<"$(server_json --threads 1 --workers "$workers" --rps "$rps" --work "$work" --duration "${seconds}s")"
printf '  served %.1f/s (%s sent, %s unsent, %s queued, %s dropped, %s unserved); wake p50 %.1f us p99 %.1f us; request p50 %.1f us p99 %.1f us\n' \
  "$served" "$sent" "$unsent" "$queued" "$dropped" "$unserved" "$w50" "$w99" "$r50" "$r99"
