//! The server's figures: request and wakeup latency percentiles at the rate, what was
//! served, and the workers' wait for a CPU.

use crate::families::figures::prelude::*;

family! {
    RPS_ASKED = figure("rps_asked", "rps asked", PerSecond, O(|o| Some(o.server()?.rps_asked)));
    ACHIEVED_RPS =
        figure("achieved_rps", "achieved rps", PerSecond, O(|o| Some(o.server()?.achieved_rps)));
    REQUESTS = count("requests", "requests", Count, O(|o| Some(o.server()?.requests as f64)));
    QUEUED = count("queued", "queued", Count, O(|o| Some(o.server()?.queued as f64)));
    DROPPED = count("dropped", "dropped", Count, O(|o| Some(o.server()?.dropped as f64)));
    UNSERVED = count("unserved", "unserved", Count, O(|o| Some(o.server()?.unserved as f64)));
    UNSENT = count("unsent", "unsent", Count, O(|o| Some(o.server()?.unsent as f64)));
    SEND_LAG_P99_NS =
        count("send_lag_p99_ns", "send lag p99 ns", Ns, O(|o| Some(o.server()?.send_lag_p99_ns? as f64)));
    CPU_UTIL_PCT = figure("cpu_util_pct", "cpu util %", Percent, O(|o| Some(o.server()?.cpu_util_pct)));
    WAKE_P50_NS = count("wake_p50_ns", "wake p50 ns", Ns, O(|o| Some(o.server()?.wake_p50_ns? as f64)));
    WAKE_P90_NS = count("wake_p90_ns", "wake p90 ns", Ns, O(|o| Some(o.server()?.wake_p90_ns? as f64)));
    WAKE_P99_NS =
        count("wake_p99_ns", "wake p99 ns", Ns, O(|o| Some(o.server()?.wake_p99_ns? as f64))).compared(1);
    WAKE_P999_NS =
        count("wake_p999_ns", "wake p99.9 ns", Ns, O(|o| Some(o.server()?.wake_p999_ns? as f64)));
    REQUEST_P50_NS =
        count("request_p50_ns", "request p50 ns", Ns, O(|o| Some(o.server()?.request_p50_ns? as f64))).compared(2);
    REQUEST_P90_NS =
        count("request_p90_ns", "request p90 ns", Ns, O(|o| Some(o.server()?.request_p90_ns? as f64)));
    REQUEST_P99_NS =
        count("request_p99_ns", "request p99 ns", Ns, O(|o| Some(o.server()?.request_p99_ns? as f64)))
            .compared(0)
            .headline();
    REQUEST_P999_NS =
        count("request_p999_ns", "request p99.9 ns", Ns, O(|o| Some(o.server()?.request_p999_ns? as f64)));
    RQ_WAIT_PER_REQUEST_NS = count(
        "rq_wait_per_request_ns",
        "rq wait per request ns",
        Ns,
        O(|o| Some(o.server()?.rq_wait_per_request_ns? as f64)),
    )
    .compared(3);
    RQ_WAIT_MAX_NS =
        count("rq_wait_max_ns", "rq wait max ns", Ns, O(|o| Some(o.server()?.rq_wait_max_ns? as f64)));
}
