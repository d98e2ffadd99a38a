//! The ring family's figures, in line order.

use crate::families::figures::prelude::*;

family! {
    LAPS = count("laps", "laps", Count, O(|o| Some(o.ring()?.laps as f64)));
    HOPS = count("hops", "hops", Count, O(|o| Some(o.ring()?.hops as f64)));
    REAL_S = figure("real_s", "real s", Seconds, O(|o| Some(ns_to_s(o.ring()?.real_ns as f64))));
    CPU_S = figure("cpu_s", "cpu s", Seconds, O(|o| Some(ns_to_s(o.ring()?.cpu_ns() as f64))));
    USER_S = figure("user_s", "user s", Seconds, O(|o| Some(ns_to_s(o.ring()?.usage.utime_ns as f64))));
    SYS_S = figure("sys_s", "sys s", Seconds, O(|o| Some(ns_to_s(o.ring()?.usage.stime_ns as f64))));
    NVCSW = count("nvcsw", "vol sw", Count, O(|o| Some(o.ring()?.usage.nvcsw as f64)));
    NIVCSW = count("nivcsw", "invol sw", Count, O(|o| Some(o.ring()?.usage.nivcsw as f64)));
    NS_PER_HOP = figure("ns_per_hop", "ns/hop", Ns, O(|o| Some(o.ring()?.ns_per_hop()))).compared(1);
    OVERHEAD_NS = figure("overhead_ns", "overhead ns", Ns, O(|o| Some(o.ring()?.overhead_ns())));
    NS_PER_SWITCH =
        figure("ns_per_switch", "ns/switch", Ns, O(|o| Some(o.ring()?.ns_per_switch()))).compared(0).headline();
    RUN_DELAY_NS_PER_HOP =
        figure("run_delay_ns_per_hop", "rq ns/hop", Ns, O(|o| o.ring()?.run_delay_ns_per_hop())).compared(2);
    MIGRATIONS = count("migrations", "migrations", Count, O(|o| Some(o.ring()?.migrations? as f64)));
    SPAWN_S = figure("spawn_s", "spawn s", Seconds, O(|o| Some(ns_to_s(o.ring()?.spawn_ns as f64))));
    TEARDOWN_S = figure("teardown_s", "teardown s", Seconds, O(|o| Some(ns_to_s(o.ring()?.teardown_ns as f64))));
    MEMBER_MAXRSS_KB =
        count("member_maxrss_kb", "max RSS KiB", KiB, O(|o| Some(o.ring()?.member_maxrss_kb as f64)));
    MINFLT = count("minflt", "minor faults", Count, O(|o| Some(o.ring()?.usage.minflt as f64)));
    MAJFLT = count("majflt", "major faults", Count, O(|o| Some(o.ring()?.usage.majflt as f64)));
    // Each hop wakes the next member: hops over the timed region's real time.
    WAKEUPS_PER_S = figure(
        "wakeups_per_s",
        "wakeups/s",
        PerSecond,
        O(|o| {
            let r = o.ring()?;
            (r.real_ns > 0).then(|| r.hops as f64 * 1e9 / r.real_ns as f64)
        }),
    );
}
