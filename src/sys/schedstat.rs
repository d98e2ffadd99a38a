//! The scheduler's per-task accounting, read from procfs: `/proc/<tid>/schedstat` (time on
//! a CPU, time waiting on a run queue, timeslices; the kernel's `sched_info`, present with
//! CONFIG_SCHED_INFO) and `se.nr_migrations` from `/proc/<tid>/sched` (present where the
//! kernel has its scheduler debug file). schbench and `perf sched latency` report the same
//! run-queue delay; here it is read per task at the edges of its measured window.
//!
//! A task opens its own two files before its window ([`TaskFiles::of_current_thread`]) and
//! reads them at the window's start and end: a pread into a stack buffer, no allocation,
//! never inside a timed loop. A figure the kernel lacks is `None`, and the first
//! [`check_available`] in a process says so in one warning line.

use crate::model::SchedInfo;
use crate::sys::shm::{SharedSlice, Snapshot};
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

const SCHEDSTAT: &str = "/proc/thread-self/schedstat";
const SCHED: &str = "/proc/thread-self/sched";
const MIGRATIONS_KEY: &[u8] = b"se.nr_migrations";

/// The three fields of a schedstat line: on-CPU ns, run-queue wait ns, timeslices. A
/// kernel with sched_info compiled in but switched off prints `0 0 0`; a task reading its
/// own line has run at least once, so all zeros means unknown, not zero.
pub fn parse_schedstat(text: &[u8]) -> (Option<u64>, Option<u64>, Option<u64>) {
    let text = std::str::from_utf8(text).unwrap_or("");
    let mut fields = text.split_ascii_whitespace().map(|f| f.parse::<u64>().ok());
    let (a, b, c) = (fields.next().flatten(), fields.next().flatten(), fields.next().flatten());
    match (a, b, c) {
        (Some(0), Some(0), Some(0)) => (None, None, None),
        (Some(_), Some(_), Some(_)) => (a, b, c),
        _ => (None, None, None),
    }
}

/// `se.nr_migrations` from the text of a `/proc/<tid>/sched` file
/// (`se.nr_migrations    :    3`).
pub fn parse_migrations(text: &[u8]) -> Option<u64> {
    text.split(|&b| b == b'\n').find_map(|line| {
        let rest = line.strip_prefix(MIGRATIONS_KEY)?;
        let value = rest.iter().position(|&b| b == b':').map(|i| &rest[i + 1..])?;
        let first = rest.first().copied()?;
        // The key must end where the spaces or colon begin (not se.nr_migrations_cold).
        if first != b' ' && first != b':' && first != b'\t' {
            return None;
        }
        std::str::from_utf8(value).ok()?.trim().parse().ok()
    })
}

/// The calling thread's two files, opened once before its window (none when the reading
/// is switched off or the kernel lacks the file).
pub struct TaskFiles {
    schedstat: Option<File>,
    sched: Option<File>,
}

/// Bytes read of the sched file: se.nr_migrations is among its first lines.
const SCHED_READ_BYTES: usize = 4096;

impl TaskFiles {
    /// Open the calling thread's files (`enabled` false: `--schedstat off`, read nothing).
    /// The descriptors stay bound to this thread whoever reads them later.
    pub fn of_current_thread(enabled: bool) -> TaskFiles {
        if !enabled {
            return TaskFiles::none();
        }
        TaskFiles { schedstat: File::open(SCHEDSTAT).ok(), sched: File::open(SCHED).ok() }
    }

    pub fn none() -> TaskFiles {
        TaskFiles { schedstat: None, sched: None }
    }

    /// A cumulative reading of the task's figures now.
    pub fn read(&self) -> SchedInfo {
        let mut info = SchedInfo::default();
        if let Some(f) = &self.schedstat {
            let mut buf = [0u8; 128];
            if let Ok(n) = f.read_at(&mut buf, 0) {
                (info.on_cpu_ns, info.run_delay_ns, info.timeslices) = parse_schedstat(&buf[..n]);
            }
        }
        if let Some(f) = &self.sched {
            let mut buf = [0u8; SCHED_READ_BYTES];
            if let Ok(n) = read_at_most(f, &mut buf) {
                info.migrations = parse_migrations(&buf[..n]);
            }
        }
        info
    }
}

/// Fill `buf` from offset 0 or up to the end of the file.
fn read_at_most(f: &File, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match f.read_at(&mut buf[filled..], filled as u64)? {
            0 => break,
            n => filled += n,
        }
    }
    Ok(filled)
}

/// Whether this kernel gives each figure, checked once per process on the calling
/// thread; the first call prints one warning line for what is missing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Availability {
    pub run_delay: bool,
    pub migrations: bool,
}

pub fn check_available() -> Availability {
    static CHECKED: OnceLock<Availability> = OnceLock::new();
    *CHECKED.get_or_init(|| {
        let now = TaskFiles::of_current_thread(true).read();
        let found = Availability { run_delay: now.run_delay_ns.is_some(), migrations: now.migrations.is_some() };
        if !found.run_delay {
            eprintln!(
                "schedlab: warning: this kernel gives no run-queue wait ({SCHEDSTAT} is missing or reads 0 0 0; it \
                 needs CONFIG_SCHED_INFO): run_delay is stored as unknown"
            );
        }
        if !found.migrations {
            eprintln!(
                "schedlab: warning: this kernel gives no migration count (no se.nr_migrations in {SCHED}; it needs \
                 the scheduler debug file, CONFIG_SCHED_DEBUG before Linux 6.15): migrations are stored as unknown"
            );
        }
        found
    })
}

/// Marks a figure the kernel did not give, in shared memory.
const UNKNOWN: u64 = u64::MAX;
const FIELDS: usize = 4;
/// After each snapshot's figures: when it was read (CLOCK_MONOTONIC ns).
const READ_AT: usize = FIELDS;
const SLOT: usize = FIELDS + 1;

/// Per-task readings in shared memory: each child (or member) writes its own slot at the
/// start and the end of its window, the parent reads the windows after reaping it.
pub struct SchedBoard {
    slots: SharedSlice<[AtomicU64; 2 * SLOT]>,
}

impl SchedBoard {
    pub fn new(tasks: usize) -> std::io::Result<SchedBoard> {
        Ok(SchedBoard { slots: SharedSlice::new(tasks)? })
    }

    fn base(which: Snapshot) -> usize {
        match which {
            Snapshot::Start => 0,
            Snapshot::End => SLOT,
        }
    }

    pub fn store(&self, task: usize, which: Snapshot, info: &SchedInfo) {
        let base = Self::base(which);
        let values = [info.on_cpu_ns, info.run_delay_ns, info.timeslices, info.migrations];
        for (i, v) in values.into_iter().enumerate() {
            self.slots[task][base + i].store(v.unwrap_or(UNKNOWN), Ordering::Relaxed);
        }
        self.slots[task][base + READ_AT].store(crate::sys::clock::monotonic_ns(), Ordering::Relaxed);
    }

    fn load(&self, task: usize, which: Snapshot) -> SchedInfo {
        let base = Self::base(which);
        // A slot never written (a task that failed before its window) is all zero: unknown.
        let written = self.slots[task].iter().any(|w| w.load(Ordering::Relaxed) != 0);
        let get = |i: usize| {
            let v: u64 = self.slots[task][base + i].load(Ordering::Relaxed);
            (written && v != UNKNOWN).then_some(v)
        };
        SchedInfo { on_cpu_ns: get(0), run_delay_ns: get(1), timeslices: get(2), migrations: get(3) }
    }

    /// The task's window: its end reading less its start reading.
    pub fn window(&self, task: usize) -> SchedInfo {
        self.load(task, Snapshot::End).since(&self.load(task, Snapshot::Start))
    }

    /// How long the task's window lasted: the wall time its figures were read over, which
    /// bounds its run-queue wait. Unknown where either reading is missing.
    pub fn window_ns(&self, task: usize) -> Option<u64> {
        let at = |which| self.slots[task][Self::base(which) + READ_AT].load(Ordering::Relaxed);
        let (start, end) = (at(Snapshot::Start), at(Snapshot::End));
        (start != 0 && end >= start).then(|| end - start)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schedstat_lines_parse_and_zeros_are_unknown() {
        assert_eq!(parse_schedstat(b"146958 2737397 2\n"), (Some(146_958), Some(2_737_397), Some(2)));
        assert_eq!(parse_schedstat(b"0 0 0\n"), (None, None, None));
        assert_eq!(parse_schedstat(b"12 x 3\n"), (None, None, None));
        assert_eq!(parse_schedstat(b""), (None, None, None));
    }

    #[test]
    fn migrations_come_from_their_own_line() {
        let text = b"head (6000, #threads: 1)\n---\nse.exec_start      :   8374081.293592\n\
                     se.nr_migrations_cold :   9\nse.nr_migrations   :                    17\nnr_switches : 4\n";
        assert_eq!(parse_migrations(text), Some(17));
        assert_eq!(parse_migrations(b"nr_switches : 4\n"), None);
    }

    /// This kernel (the test machine's) gives both; a spin shows up as CPU time and the
    /// wait never exceeds the wall time that passed.
    #[test]
    fn the_calling_thread_reads_plausible_figures() {
        let files = TaskFiles::of_current_thread(true);
        let t0 = std::time::Instant::now();
        let before = files.read();
        let mut x = 0u64;
        while t0.elapsed() < std::time::Duration::from_millis(30) {
            x = std::hint::black_box(x.wrapping_add(1));
        }
        let after = files.read();
        let wall_ns = t0.elapsed().as_nanos() as u64;
        let d = after.since(&before);
        assert!(before.run_delay_ns.is_some() && before.migrations.is_some(), "{before:?}");
        let (on_cpu, delay) = (d.on_cpu_ns.unwrap(), d.run_delay_ns.unwrap());
        assert!(on_cpu > 0 && on_cpu <= wall_ns + 1_000_000, "on cpu {on_cpu} of {wall_ns}");
        assert!(delay <= wall_ns, "waited {delay} of {wall_ns}");
        assert!(on_cpu + delay <= wall_ns + 2_000_000, "{on_cpu} + {delay} > {wall_ns}");
        assert!(TaskFiles::of_current_thread(false).read() == SchedInfo::default());
    }

    #[test]
    fn the_board_keeps_unknown_apart_from_zero() {
        let board = SchedBoard::new(2).unwrap();
        let start = SchedInfo { on_cpu_ns: Some(5), run_delay_ns: Some(0), timeslices: Some(1), migrations: None };
        let end = SchedInfo { on_cpu_ns: Some(9), run_delay_ns: Some(0), timeslices: Some(3), migrations: None };
        board.store(0, Snapshot::Start, &start);
        board.store(0, Snapshot::End, &end);
        let w = board.window(0);
        assert_eq!((w.on_cpu_ns, w.run_delay_ns, w.timeslices, w.migrations), (Some(4), Some(0), Some(2), None));
        assert_eq!(board.window(1), SchedInfo::default(), "a slot never written is unknown");
        assert!(board.window_ns(0).is_some() && board.window_ns(1).is_none());
    }
}
