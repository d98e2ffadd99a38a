//! Figures of a command's whole process tree (wait4 after it ends), and its time waiting
//! for a CPU where a cgroup of its own could be made; the figures declared for its output
//! come after them (`declare`).

use super::model::Direction;
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

/// The figures users declared for commands in this process (`--figure`, a suite's
/// `figures`, or a stored run's spec as it is read), one per key, in the order first
/// declared. Each is made once and kept for the process's life, like the static ones.
static USER_DECLARED: std::sync::Mutex<Vec<&'static Figure>> = std::sync::Mutex::new(Vec::new());

/// The registry's figure for a declared one: made on its first declaration; a later one
/// of the same key keeps the first's unit and direction.
fn declare(name: &str, unit: Option<&str>, better: Direction) -> &'static Figure {
    let mut declared = USER_DECLARED.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(f) = declared.iter().find(|f| f.key == name) {
        return f;
    }
    let key: &'static str = Box::leak(name.to_string().into_boxed_str());
    let unit = unit.map_or(Number, |u| Declared(Box::leak(u.to_string().into_boxed_str())));
    let made = Figure {
        // Only a figure that is better lower is tested: `compare` calls a rise a regression.
        compared: (better == Direction::Lower).then_some(u8::MAX),
        ..figure(key, key, unit, crate::families::figures::Read::Parsed)
    };
    let made: &'static Figure = Box::leak(Box::new(made));
    declared.push(made);
    made
}

/// The declared figures so far.
pub(crate) fn declared() -> Vec<&'static Figure> {
    let declarations = super::model::declarations();
    declarations.iter().map(|d| declare(&d.name, d.unit.as_deref(), d.better)).collect()
}
