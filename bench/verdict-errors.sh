#!/usr/bin/env bash
# How often the run's answers are wrong: the simulation in src/analysis/simulate.rs, run on
# QUESTIONS questions a case (default 10,000; `cargo test` runs 1,000). Each question is
# watched block by block and stopped as the runner stops it, by the run's own decision code;
# the table gives, per case and family size, how the questions ended, the share of wrong
# answers ("different" where the median ratio is 1 or in the wrong direction, "equivalent"
# where it is at or beyond the ±5 % margin) and the median blocks to a decision.
#
#   bench/verdict-errors.sh [QUESTIONS]
set -euo pipefail
cd "$(dirname "$0")/.."
SCHEDLAB_SIM_QUESTIONS=${1:-10000} nice cargo test --release --quiet --lib simulate::tests::the_long_simulation \
  -- --ignored --nocapture 2>/dev/null | grep -E '^(\||[0-9]+ questions)'
