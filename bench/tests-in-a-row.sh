#!/usr/bin/env bash
# `cargo test` N times in a row, exactly as the README runs it, with nothing planted: how
# many runs passed, each run's wall time, every failing test by name (its whole log kept),
# and the noise floor the runs met. The suite is built once first, so the runs time the
# tests, not the compiler. The loop is bench/tests-under-noise.sh's, in its quiet mode.
#
#   bench/tests-in-a-row.sh [N]      (default 10)
#
# Run it with nothing else busy on the machine: that is what CI gets, and a build beside
# it is exactly the neighbour the tests are not meant to share CPUs with.
exec "$(dirname "$0")/tests-under-noise.sh" "${1:-10}" quiet
