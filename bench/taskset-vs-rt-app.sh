#!/usr/bin/env bash
# schedlab's task set beside rt-app itself, on the rt-app files both run.
#
#   bench/taskset-vs-rt-app.sh [BIN] [ROUNDS] [FILE...]
#
# BIN: schedlab (default target/release/schedlab); ROUNDS: alternated rounds (default 3).
# FILEs: rt-app JSON files (default: those of Debian's rt-app examples both run under
# SCHED_OTHER; a file whose default_policy is another is skipped, said so, since the
# side here is other). Debian's rt-app is installed if missing. Each round runs every file once
# in rt-app and once in `schedlab taskset --rt-app --policy other`, for the file's
# duration (2 s), the order alternating by round. Both read one copy of each file, with
# its repeated keys numbered as rt-app's workgen numbers them (rt-app 1.0 alone would
# keep one of each), `ftrace` and `gnuplot` removed (rt-app 1.0 reads `ftrace` as a
# boolean and needs debugfs for it) and its logs in a temp dir; nothing else changes.
#
# Per task, over every activation of every round: the run time per activation (schedlab:
# the CPU time its run events got; rt-app: the time spent in its run events, its `run`
# column), the wakeup latency after the timer p50 and p99 (rt-app's `wu_lat`), and the
# slack p50; each as schedlab's over rt-app's. rt-app's run is a calibrated loop, so its
# time includes what preempted it; schedlab's is the thread's own CPU time.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-target/release/schedlab}
rounds=${2:-3}
shift 2 2>/dev/null || shift $#
if ! command -v rt-app >/dev/null; then
    echo "installing Debian's rt-app" >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq rt-app >/dev/null
fi
[[ -x "$bin" ]] || cargo build --release -q
examples=/usr/share/doc/rt-app/examples
files=("$@")
if [[ ${#files[@]} -eq 0 ]]; then
    files=("$examples/tutorial/example2.json" "$examples/tutorial/example1.json" "$examples/template.json"
        "$examples/spreading-tasks.json" "$examples/mp3-short.json" "$examples/browser-short.json")
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "rt-app $(dpkg-query -W -f='${Version}' rt-app 2>/dev/null || echo '?'), schedlab $("$bin" --version | cut -d' ' -f2), $rounds alternated rounds"
for file in "${files[@]}"; do
    name=$(basename "$file" .json)
    if grep -q '"default_policy"' <(zcat -f "$file") && ! grep -q '"default_policy" *: *"SCHED_OTHER"' <(zcat -f "$file"); then
        echo "$name: skipped, its default_policy is not SCHED_OTHER"
        continue
    fi
    dir="$work/$name"
    mkdir -p "$dir/rt-app" "$dir/schedlab"
    python3 - "$file" "$dir" <<'PY'
import gzip, json, re, sys
path, dir = sys.argv[1], sys.argv[2]
text = (gzip.open(path, "rt") if path.endswith(".gz") else open(path)).read()
# rt-app's examples repeat keys ("run" twice in a task), which rt-app's workgen numbers
# (run, run1) before rt-app reads the file, and schedlab reads in order as workgen does;
# rt-app 1.0's reader would keep one value of each. So the copy rt-app runs is numbered
# here, as workgen numbers it: comments and trailing commas dropped, keys in order.
text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
text = re.sub(r"(?m)^\s*//.*$", "", text)
text = re.sub(r",(\s*[}\]])", r"\1", text)

def numbered(pairs):
    out, seen = {}, {}
    for key, value in pairs:
        name, n = key, seen.get(key, 0)
        while name in out:
            n += 1
            name = f"{key}{n}"
        seen[key] = n
        out[name] = value
    return out

doc = json.loads(text, object_pairs_hook=numbered)
glob = doc.setdefault("global", {})
for key in ("ftrace", "gnuplot"):
    glob.pop(key, None)
glob.update({"duration": 2, "logdir": "LOGDIR", "log_basename": "rtapp"})
json.dump(doc, open(f"{dir}/file.json", "w"), indent=1)
PY
    for round in $(seq 1 "$rounds"); do
        sed "s|LOGDIR|$dir/rt-app/r$round|" "$dir/file.json" >"$dir/round.json"
        mkdir -p "$dir/rt-app/r$round"
        run_rt_app() { timeout 30 rt-app "$dir/round.json" >/dev/null 2>&1; }
        run_schedlab() {
            "$bin" taskset --rt-app "$dir/file.json" --policy other --duration 2s \
                --activations "$dir/schedlab/r$round.csv" >/dev/null 2>"$dir/schedlab/r$round.err" || {
                echo "schedlab failed on $name: $(tail -1 "$dir/schedlab/r$round.err")" >&2
                exit 1
            }
        }
        if ((round % 2)); then run_rt_app; run_schedlab; else run_schedlab; run_rt_app; fi
    done
    python3 - "$dir" "$name" <<'PY'
import csv, glob, os, re, statistics, sys
dir, name = sys.argv[1], sys.argv[2]

def q(values, p):
    v = sorted(values)
    return v[min(len(v) - 1, int(p * len(v)))] if v else None

ours = {}
for path in glob.glob(f"{dir}/schedlab/*.csv"):
    for row in csv.DictReader(open(path)):
        t = ours.setdefault(row["task"], {"run": [], "wake": [], "slack": []})
        t["run"].append(float(row["run_us"]))
        if row["wake_us"]:
            t["wake"].append(float(row["wake_us"]))
            t["slack"].append(float(row["slack_us"]))
theirs = {}
for path in glob.glob(f"{dir}/rt-app/*/rtapp-*.log"):
    task = re.match(r"rtapp-(.*)-\d+\.log", os.path.basename(path)).group(1)
    t = theirs.setdefault(task, {"run": [], "wake": [], "slack": []})
    for line in open(path):
        if line.startswith("#") or not line.strip():
            continue
        f = line.split()
        run, slack, c_period, wu_lat = float(f[2]), float(f[7]), float(f[9]), float(f[10])
        t["run"].append(run)
        if c_period > 0:
            t["wake"].append(wu_lat)
            t["slack"].append(slack)

def cell(a, b):
    if a is None or b is None:
        return "-"
    ratio = f"{a / b:.2f}" if b else "-"
    return f"{a:.1f}/{b:.1f} ({ratio})"

print(f"\n{name}: per task, schedlab/rt-app in µs (ratio), activations n schedlab/rt-app")
print(f"{'task':14} {'n':>11}  {'run p50':>24}  {'wake p50':>22}  {'wake p99':>22}  {'slack p50':>26}")
for task in sorted(set(ours) | set(theirs)):
    o, t = ours.get(task), theirs.get(task)
    if not o or not t:
        print(f"{task:14} only in {'schedlab' if o else 'rt-app'}")
        continue
    print(
        f"{task:14} {len(o['run']):>5}/{len(t['run']):<5}  "
        f"{cell(q(o['run'], .5), q(t['run'], .5)):>24}  {cell(q(o['wake'], .5), q(t['wake'], .5)):>22}  "
        f"{cell(q(o['wake'], .99), q(t['wake'], .99)):>22}  {cell(q(o['slack'], .5), q(t['slack'], .5)):>26}"
    )
PY
done
