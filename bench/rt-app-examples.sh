#!/usr/bin/env bash
# Which of rt-app's own example files schedlab's task set reads and runs.
#
#   bench/rt-app-examples.sh [BIN] [DIR]
#
# BIN: schedlab (default target/release/schedlab). DIR: a folder of rt-app JSON files;
# by default the examples Debian's rt-app package ships, installed if missing. Each file
# runs for 2 s under OTHER; the line says "runs", or the exit code and schedlab's message.
# It prints the count that run, then one line a file.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-target/release/schedlab}
dir=${2:-}
if [[ -z "$dir" ]]; then
    if ! command -v rt-app >/dev/null; then
        echo "installing Debian's rt-app for its examples" >&2
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq rt-app >/dev/null
    fi
    dir=$(dpkg -L rt-app | grep -E '\.json(\.gz)?$' | head -1 | xargs -r dirname)
    [[ -n "$dir" ]] || { echo "rt-app's package ships no example files here: give DIR" >&2; exit 2; }
fi
[[ -x "$bin" ]] || cargo build --release -q
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
runs=0
total=0
lines=()
while IFS= read -r file; do
    json=$file
    if [[ $file == *.gz ]]; then
        json="$work/$(basename "${file%.gz}")"
        gunzip -c "$file" >"$json"
    fi
    total=$((total + 1))
    set +e
    out=$(timeout 60 "$bin" taskset --rt-app "$json" --policy other --duration 2s 2>&1 >/dev/null)
    rc=$?
    set -e
    name=${file#"$dir"/}
    if [[ $rc -eq 0 ]]; then
        runs=$((runs + 1))
        lines+=("runs     $name")
    else
        lines+=("exit $rc   $name: $(grep -m1 'schedlab:' <<<"$out" | sed 's/^schedlab: //' | cut -c1-150)")
    fi
done < <(find "$dir" -name '*.json' -o -name '*.json.gz' | sort)
echo "rt-app examples that run: $runs of $total (in $dir)"
printf '%s\n' "${lines[@]}"
