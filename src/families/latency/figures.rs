//! The latency family's figures, in line order.

use crate::families::figures::prelude::*;

family! {
    SAMPLES = count("samples", "samples", Count, T(|s| Some(s.samples as f64)));
    MIN_NS = count("min_ns", "min ns", Ns, T(|s| Some(s.min_ns as f64)));
    AVG_NS = figure("avg_ns", "avg ns", Ns, T(|s| Some(s.avg_ns)));
    P50_NS = count("p50_ns", "p50 ns", Ns, T(|s| Some(s.p50_ns? as f64))).compared(0);
    P90_NS = count("p90_ns", "p90 ns", Ns, T(|s| Some(s.p90_ns? as f64)));
    P99_NS = count("p99_ns", "p99 ns", Ns, T(|s| Some(s.p99_ns? as f64))).compared(1).headline();
    P999_NS = count("p999_ns", "p99.9 ns", Ns, T(|s| Some(s.p999_ns? as f64)));
    P9999_NS = count("p9999_ns", "p99.99 ns", Ns, T(|s| Some(s.p9999_ns? as f64)));
    MAX_NS = count("max_ns", "max ns", Ns, T(|s| Some(s.max_ns as f64))).compared(2);
    OVERRUNS = count("overruns", "overruns", Count, T(|s| Some(s.overruns as f64)));
    RUN_DELAY_NS = count("run_delay_ns", "rq wait ns", Ns, T(|s| Some(s.run_delay_ns? as f64))).compared(3);
    MIGRATIONS = count("migrations", "migrations", Count, T(|s| Some(s.migrations? as f64)));
    MISSED_DEADLINES = count(
        "missed_deadlines",
        "missed deadlines",
        Count,
        O(|o| Some(o.latency()?.deadline?.missed_deadlines as f64)),
    )
    .part(Part::Deadline);
    RUNTIME_OVERRUNS = count(
        "runtime_overruns",
        "runtime overruns",
        Count,
        O(|o| Some(o.latency()?.deadline?.runtime_overruns? as f64)),
    )
    .part(Part::Deadline);
    THREADS = count("threads", "threads", Count, O(|o| Some(o.latency()?.threads.len() as f64))).part(Part::Run);
    TIMER_SLACK_NS =
        count("timer_slack_ns", "timer slack ns", Ns, O(|o| Some(o.latency()?.timer_slack_ns as f64)))
            .part(Part::Run);
}
