//! Steal: the time a virtual CPU was ready to run but the hypervisor ran something else.
//! The guest kernel accounts it per CPU at each tick (and at idle exit) from the
//! hypervisor's steal clock, and shows the sums in `/proc/stat` (the 8th number of each
//! `cpuN` line) in USER_HZ ticks, 10 ms on Linux. That is the finest steal the kernel lets
//! user space read on a kernel without kprobe events, so a trial's steal is known to
//! ± one tick per CPU, and a single spike's not at all.

use crate::model::{CpuSteal, Steal};
use std::time::Instant;

/// Each CPU's steal so far, in ns (whole USER_HZ ticks), as `/proc/stat` shows it.
fn read_proc_stat() -> Option<Vec<(usize, u64)>> {
    let text = std::fs::read_to_string("/proc/stat").ok()?;
    parse_proc_stat(&text, tick_ns())
}

/// One USER_HZ tick in ns.
pub fn tick_ns() -> u64 {
    // SAFETY: sysconf cannot fail for this name; a nonsense answer falls back to 100 Hz.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    let hz = if hz > 0 { hz as u64 } else { 100 };
    1_000_000_000 / hz
}

/// The `cpuN` lines' steal (field 8) in ns; `None` when no line has one (a kernel too old
/// to account steal, or not Linux's format).
fn parse_proc_stat(text: &str, tick_ns: u64) -> Option<Vec<(usize, u64)>> {
    let cpus: Vec<(usize, u64)> = text
        .lines()
        .filter_map(|line| {
            let mut fields = line.split_whitespace();
            let cpu: usize = fields.next()?.strip_prefix("cpu")?.parse().ok()?;
            let steal: u64 = fields.nth(7)?.parse().ok()?;
            Some((cpu, steal.saturating_mul(tick_ns)))
        })
        .collect();
    (!cpus.is_empty()).then_some(cpus)
}

/// Every CPU's steal at one moment, to take a window's steal from.
#[derive(Clone, Debug)]
pub struct StealMark {
    at: Instant,
    cpus: Option<Vec<(usize, u64)>>,
}

impl StealMark {
    pub fn now() -> StealMark {
        StealMark { at: Instant::now(), cpus: read_proc_stat() }
    }

    /// The steal of each CPU from this mark until now; `None` where the kernel shows none.
    pub fn until_now(&self) -> Option<Steal> {
        let now = read_proc_stat()?;
        let before = self.cpus.as_ref()?;
        Some(steal_between(before, &now, self.at.elapsed().as_nanos() as u64, tick_ns()))
    }
}

fn steal_between(before: &[(usize, u64)], after: &[(usize, u64)], window_ns: u64, tick_ns: u64) -> Steal {
    let cpus = after
        .iter()
        .filter_map(|&(cpu, ns)| {
            let start = before.iter().find(|(c, _)| *c == cpu)?.1;
            Some(CpuSteal { cpu, steal_ns: ns.saturating_sub(start) })
        })
        .collect();
    Steal { window_ns, resolution_ns: tick_ns, cpus }
}

#[cfg(test)]
mod tests {
    use super::*;

    const STAT: &str = "cpu  42800 0 7248 12773 489 0 124 101 0 0\n\
                        cpu0 20864 0 3939 6748 127 0 48 48 0 0\n\
                        cpu1 21936 0 3308 6025 362 0 76 53 0 0\n\
                        intr 1 2 3\n";

    #[test]
    fn the_eighth_field_of_each_cpu_line_is_its_steal() {
        let cpus = parse_proc_stat(STAT, 10_000_000).unwrap();
        assert_eq!(cpus, [(0, 480_000_000), (1, 530_000_000)]);
        assert_eq!(parse_proc_stat("intr 1 2\n", 10_000_000), None);
        // A kernel that shows fewer fields accounts no steal.
        assert_eq!(parse_proc_stat("cpu0 1 2 3 4\n", 10_000_000), None);
    }

    #[test]
    fn a_window_keeps_each_cpus_difference() {
        let s = steal_between(&[(0, 10), (1, 20)], &[(0, 30), (1, 20), (2, 5)], 1_000, 10);
        assert_eq!(s.cpus, [CpuSteal { cpu: 0, steal_ns: 20 }, CpuSteal { cpu: 1, steal_ns: 0 }]);
        assert_eq!((s.window_ns, s.resolution_ns), (1_000, 10));
    }

    #[test]
    fn this_kernel_shows_every_online_cpus_steal() {
        // Linux has shown steal in /proc/stat since 2.6.11.
        let mark = StealMark::now();
        let s = mark.until_now().expect("/proc/stat has steal");
        assert!(!s.cpus.is_empty());
        assert!(s.cpus.iter().all(|c| c.steal_ns <= s.window_ns + s.resolution_ns), "{s:?}");
    }
}
