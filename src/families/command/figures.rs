//! Figures of a command's whole process tree (wait4 after it ends), and its time waiting
//! for a CPU where a cgroup of its own could be made; the figures declared for its output
//! come after them (`declare`).

use crate::families::figures::prelude::*;

family! {
    WALL_S = figure("wall_s", "wall s", Seconds, O(|o| Some(ns_to_s(o.command()?.wall_ns as f64))))
        .compared(0)
        .headline();
    USER_S = figure("user_s", "user s", Seconds, O(|o| Some(ns_to_s(o.command()?.usage.utime_ns as f64))));
    SYS_S = figure("sys_s", "sys s", Seconds, O(|o| Some(ns_to_s(o.command()?.usage.stime_ns as f64))));
    CPU_PCT = figure(
        "cpu_pct",
        "cpu %",
        Percent,
        O(|o| {
            let c = o.command()?;
            (c.wall_ns > 0).then(|| 100.0 * c.cpu_ns() as f64 / c.wall_ns as f64)
        }),
    );
    NVCSW = count("nvcsw", "vol sw", Count, O(|o| Some(o.command()?.usage.nvcsw as f64)));
    NIVCSW = count("nivcsw", "invol sw", Count, O(|o| Some(o.command()?.usage.nivcsw as f64))).compared(1);
    MINFLT = count("minflt", "minor faults", Count, O(|o| Some(o.command()?.usage.minflt as f64)));
    MAJFLT = count("majflt", "major faults", Count, O(|o| Some(o.command()?.usage.majflt as f64)));
    CPU_WAIT_S =
        figure("cpu_wait_s", "cpu wait s", Seconds, O(|o| Some(ns_to_s(o.command()?.cpu_wait_ns? as f64))))
            .compared(2);
}
