"""What the two cyclicdeadline comparisons share (bench/latency-vs-cyclicdeadline.sh and
bench/taskset-vs-cyclicdeadline.sh): reading cyclicdeadline's per-job trace markers into
a results row, and the summary table with its ratios.

  python3 bench/cyclicdeadline.py row MARKERS CD_JSON           one "cyclicdeadline ..." row
  python3 bench/cyclicdeadline.py summary RESULTS RUNTIME_US INTERVAL_US CLOCK_NOTE
"""
import json
import math
import re
import statistics as st
import sys


def row(markers, cd_json):
    # The first marker is cyclicdeadline's own check of the job in its main thread. Fewer
    # markers than jobs (a full trace buffer) is said so: the percentiles are of fewer jobs.
    offs = sorted([int(m.group(1)) for m in re.finditer(r"start at \d+ off=(\d+)", open(markers).read())][1:])
    cycles = json.load(open(cd_json))["thread"]["0"]["cycles"]
    if len(offs) < cycles - 1:
        print(f"warning: {len(offs)} markers for cyclicdeadline's {cycles} jobs", file=sys.stderr)
    pct = lambda q: offs[max(0, math.ceil(q * len(offs)) - 1)]
    print("cyclicdeadline", len(offs), pct(0.50), pct(0.99), offs[-1], "-")


def summary(results, runtime_us, interval_us, clock_note):
    rows = [l.split() for l in open(results)]
    col = lambda tool, i: [float(r[i]) for r in rows if r[0] == tool]
    print(f"reservation: runtime {runtime_us} us every {interval_us} us (deadline = period), one unpinned thread each")
    print(f"{'round':<6} {'tool':<15} {'jobs':>7} {'p50 us':>8} {'p99 us':>8} {'max us':>9} {'missed':>7}")
    for n, r in enumerate(rows):
        print(f"{n // 2 + 1:<6} {r[0]:<15} {int(r[1]):7d} {float(r[2]):8.1f} {float(r[3]):8.1f} {float(r[4]):9.1f} {r[5]:>7}")
    ratio = lambda a, b: f"{a / b:.3f}" if b else "n/a (cyclicdeadline 0)"
    print()
    for name, i in (("p50", 2), ("p99", 3)):
        s, c = st.median(col("schedlab", i)), st.median(col("cyclicdeadline", i))
        print(f"median {name}: schedlab {s:.1f} us, cyclicdeadline {c:.1f} us, ratio {ratio(s, c)}")
    print("(cyclicdeadline reports whole microseconds and writes a trace marker inside every job;")
    print(f" schedlab's histogram resolves 0.1 %; {clock_note})")


if __name__ == "__main__":
    {"row": row, "summary": summary}[sys.argv[1]](*sys.argv[2:])
