#!/usr/bin/env bash
# The lab's own costs: the wall time of `schedlab run quick`, and a database of 10,000
# real (tiny) trials: how long it takes to fill, its size, and how long `list`, `show`
# and `export` (each should be under a second) and `report` (under two) take on it.
#
#   bench/lab.sh [TRIALS]        (default 10000: half tiny workloads, half tiny latency runs)
set -euo pipefail
cd "$(dirname "$0")/.."
trials=${1:-10000}
cargo build --release --quiet
bin=${CARGO_TARGET_DIR:-$PWD/target}/release/schedlab
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

seconds() { # run "$@" quietly, print its wall time in seconds
  local t0 t1
  t0=$(date +%s.%N); "$@" > /dev/null 2>&1; t1=$(date +%s.%N)
  python3 -c "print(f'{$t1 - $t0:.3f}')"
}

echo "== schedlab run quick"
echo "wall: $(seconds "$bin" run quick --db "$work/quick.db") s"
"$bin" list --db "$work/quick.db" | tail -1
echo "HTML report of quick: $(du -k "$work/quick-run-1.html" | cut -f1) KiB"

half=$((trials / 2))
cat > "$work/tiny.toml" <<TOML
name = "tiny-$trials"
[[experiment]]
family = "workload"
workload = "cpu"
procs = 1
iterations = 1000
repeat = $half

[[experiment]]
family = "latency"
interval = "100us"
loops = 20
repeat = $((trials - half))
TOML
echo "== a database of $trials trials"
echo "fill: $(seconds "$bin" run "$work/tiny.toml" --db "$work/big.db") s"
"$bin" list --db "$work/big.db" --json
echo "size: $(du -k "$work/big.db" | cut -f1) KiB ($(python3 -c "print(f'{$(stat -c %s "$work/big.db") / $trials:.0f}')") bytes per trial)"
echo "list:        $(seconds "$bin" list --db "$work/big.db") s"
echo "show:        $(seconds "$bin" show 1 --db "$work/big.db") s"
echo "export json: $(seconds "$bin" export 1 --db "$work/big.db" -o "$work/big.json") s ($(du -k "$work/big.json" | cut -f1) KiB)"
echo "export csv:  $(seconds "$bin" export 1 --db "$work/big.db" --format csv -o "$work/big.csv") s"
echo "import:      $(seconds "$bin" import "$work/big.json" --db "$work/copy.db") s"
echo "report:      $(seconds "$bin" report 1 --db "$work/big.db") s (tables and findings)"
echo "report html: $(seconds "$bin" report 1 --db "$work/big.db" --html "$work/big.html" --svg "$work/svg") s ($(du -k "$work/big.html" | cut -f1) KiB)"
