//! The workload family's figures, in line order.

use crate::families::figures::prelude::*;

family! {
    WALL_S =
        figure("wall_s", "wall s", Seconds, O(|o| Some(ns_to_s(o.workload()?.wall_ns as f64))))
            .compared(0)
            .headline();
    USER_S = figure("user_s", "user s", Seconds, O(|o| Some(ns_to_s(o.workload()?.usage.utime_ns as f64))));
    SYS_S = figure("sys_s", "sys s", Seconds, O(|o| Some(ns_to_s(o.workload()?.usage.stime_ns as f64))));
    CPU_PCT = figure("cpu_pct", "cpu %", Percent, O(|o| Some(o.workload()?.cpu_pct())));
    NVCSW = count("nvcsw", "vol sw", Count, O(|o| Some(o.workload()?.usage.nvcsw as f64)));
    NIVCSW = count("nivcsw", "invol sw", Count, O(|o| Some(o.workload()?.usage.nivcsw as f64))).compared(1);
    FAIRNESS = figure("fairness", "fairness", Ratio, O(|o| o.workload()?.fairness));
    RUN_DELAY_S =
        figure("run_delay_s", "rq s", Seconds, O(|o| Some(ns_to_s(o.workload()?.run_delay_ns? as f64))));
    RUN_DELAY_MAX_S =
        figure("run_delay_max_s", "rq max s", Seconds, O(|o| Some(ns_to_s(o.workload()?.run_delay_max_ns? as f64))))
            .compared(2);
    RUN_DELAY_P50_S =
        figure("run_delay_p50_s", "rq p50 s", Seconds, O(|o| Some(ns_to_s(o.workload()?.run_delay_p50_ns? as f64))));
    RUN_DELAY_MIN_S =
        figure("run_delay_min_s", "rq min s", Seconds, O(|o| Some(ns_to_s(o.workload()?.run_delay_min_ns? as f64))));
    MIGRATIONS = count("migrations", "migrations", Count, O(|o| Some(o.workload()?.migrations? as f64)));
    FIRST_FINISH_S =
        figure("first_finish_s", "first s", Seconds, O(|o| Some(ns_to_s(o.workload()?.first_finish_ns? as f64))));
    LAST_FINISH_S =
        figure("last_finish_s", "last s", Seconds, O(|o| Some(ns_to_s(o.workload()?.last_finish_ns? as f64))));
    FORK_S = figure("fork_s", "fork s", Seconds, O(|o| Some(ns_to_s(o.workload()?.fork_ns? as f64))));
    MINFLT = count("minflt", "minor faults", Count, O(|o| Some(o.workload()?.usage.minflt as f64)));
    MAJFLT = count("majflt", "major faults", Count, O(|o| Some(o.workload()?.usage.majflt as f64)));
    INBLOCK = count("inblock", "blocks in", Count, O(|o| Some(o.workload()?.usage.inblock as f64)));
    OUBLOCK = count("oublock", "blocks out", Count, O(|o| Some(o.workload()?.usage.oublock as f64)));
    PI_MIN = figure("pi_min", "pi min", Number, O(|o| o.workload()?.pi_min));
    PI_MAX = figure("pi_max", "pi max", Number, O(|o| o.workload()?.pi_max));
    // What each child's SCHED_DEADLINE reservation let it have.
    RESERVED_PCT =
        figure("reserved_pct", "reserved %", Percent, O(|o| Some(o.workload()?.reservation?.reserved_pct)))
            .part(Part::Deadline);
    CHILD_CPU_PCT_MEAN = figure(
        "child_cpu_pct_mean",
        "child cpu %",
        Percent,
        O(|o| Some(o.workload()?.reservation?.child_cpu_pct_mean)),
    )
    .part(Part::Deadline);
    CHILD_CPU_PCT_MIN = figure(
        "child_cpu_pct_min",
        "child cpu % min",
        Percent,
        O(|o| Some(o.workload()?.reservation?.child_cpu_pct_min)),
    )
    .part(Part::Deadline);
    CHILDREN_SHORT = count(
        "children_short",
        "children short",
        Count,
        O(|o| Some(o.workload()?.reservation?.children_short? as f64)),
    )
    .part(Part::Deadline);
}
