#!/usr/bin/env bash
# What each family command prints, for comparing two builds of schedlab: every family's
# --help, its output in each format for a small fixed-seed run, and its exit status and
# message on bad inputs. Measured numbers differ between any two runs, so every digit is
# written as '#'; the words, columns, order and exit codes must be the same.
#
#   bench/front-door.sh BIN OUTDIR        writes OUTDIR/<case>.{out,err,rc}
#   diff -r OUTDIR_BEFORE OUTDIR_AFTER    what changed
#
# Run as root (the fifo cases need it). Takes about a minute. BIN's file name shows in clap's
# messages: name both builds `schedlab`.
set -u
bin=${1:?usage: bench/front-door.sh BIN OUTDIR}
out=${2:?usage: bench/front-door.sh BIN OUTDIR}
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Digits to '#', and runs of them to one, so a 9 µs and a 12 µs figure read alike; spaces
# that align columns are squeezed, since a wider number moves them.
normalize() { sed -E 's/[0-9]+/#/g; s/#(\.#)+/#/g; s/ +/ /g'; }

case_() {
  local name=$1
  shift
  "$bin" "$@" >"$work/out" 2>"$work/err"
  echo $? >"$out/$name.rc"
  normalize <"$work/out" >"$out/$name.out"
  # A work directory's or file's random name is not the command's output.
  sed -E "s|$work|WORK|g" "$work/err" | normalize >"$out/$name.err"
}

for family in ring workload latency command taskset server; do
  case_ "$family-help" "$family" --help
done

formats="text json csv markdown"
for f in $formats; do
  case_ "ring-$f" ring --procs 2,4 --laps 2000 --format "$f"
  case_ "latency-$f" latency --loops 300 --interval 1ms --compare-policies other,fifo --format "$f"
  case_ "command-$f" command --policy other,fifo --repeat 2 --seed 7 --format "$f" -- true
  case_ "taskset-$f" taskset --task 'name="a", period="10ms", run="1ms"' \
    --task 'name="b", period="20ms", run="2ms"'  \
    --policy other,fifo --duration 300ms --repeat 2 --seed 7 --format "$f"
  case_ "server-$f" server --rps 200 --duration 500ms --policy other,fifo --repeat 2 --seed 7 --format "$f"
done
for f in $formats classic; do
  case_ "workload-$f" workload cpu --procs 2 --policy other,fifo --iterations 20000 \
    --repeat 2 --seed 7 --format "$f"
done

# With the tracepoints (root): the keys of what was traced.
case_ ring-trace-json ring --procs 2 --laps 500 --trace on --json
case_ workload-trace-json workload cpu --procs 2 --iterations 20000 --trace on --json
case_ latency-trace-json latency --loops 300 --interval 1ms --trace on --json

# Bad inputs: each must be refused with its message and exit 2 before anything runs.
case_ bad-ring-procs ring --procs 0
case_ bad-ring-laps ring --laps -3
case_ bad-ring-cpus ring --cpus 999
case_ bad-ring-prio ring --policy fifo --prio 200
case_ bad-ring-both ring --laps 10 --duration 1s
case_ bad-workload-kind workload gpu
case_ bad-workload-policy workload cpu --policy fastest
case_ bad-workload-procs workload cpu --procs 0
case_ bad-workload-dir workload io --dir /nonexistent/dir
case_ bad-latency-interval latency --interval 0
case_ bad-latency-threads latency --threads 0
case_ bad-latency-histogram latency --loops 10 --histogram /nonexistent/dir/h.txt
case_ bad-latency-compare latency --compare-policies other,fastest
case_ bad-command-none command
case_ bad-command-figure command --figure '(' -- true
case_ bad-command-policy command --policy nope -- true
case_ bad-taskset-none taskset
case_ bad-taskset-task taskset --task 'name="a", period="0ms", run="1ms"' 
case_ bad-taskset-file taskset --rt-app /nonexistent.json
case_ bad-server-rps server --rps 0
case_ bad-server-util server --target-util 500
