//! The task set's figures: whether deadlines are met and how near they come.

use crate::families::figures::prelude::*;

family! {
    ACTIVATIONS = count("activations", "activations", Count, O(|o| Some(o.taskset()?.activations as f64)));
    MISSES = count("misses", "misses", Count, O(|o| Some(o.taskset()?.misses as f64)));
    MISS_PCT = figure("miss_pct", "miss %", Percent, O(|o| o.taskset()?.miss_pct())).compared(1);
    WORST_TASK_MISS_PCT =
        figure("worst_task_miss_pct", "worst task miss %", Percent, O(|o| Some(o.taskset()?.worst_task_miss_pct)));
    DEADLINE_USE_P99_PCT = figure(
        "deadline_use_p99_pct",
        "deadline use p99 %",
        Percent,
        O(|o| o.taskset()?.deadline_use_p99_pct),
    )
    .compared(0)
    .headline();
    WAKE_P99_NS = count("wake_p99_ns", "wake p99 ns", Ns, O(|o| Some(o.taskset()?.wake_p99_ns? as f64))).compared(2);
    RESPONSE_P99_NS =
        count("response_p99_ns", "response p99 ns", Ns, O(|o| Some(o.taskset()?.response_p99_ns as f64)));
    SLACK_MIN_NS =
        count("slack_min_ns", "slack min ns", Ns, O(|o| Some(o.taskset()?.slack_min_ns? as f64)));
}
