//! The scheduler-policy study (CSCI 3753, 2014): fork N children of one workload under
//! one policy and measure what the policy did to them.
//!
//! - `cpu` (pi-sched): Monte Carlo pi, each child with its own seeded generator.
//! - `io` (rw-sched): copy from a shared input file to the child's own output file in
//!   fixed blocks, both opened O_SYNC, rewinding the input at its end.
//! - `mixed` (mix-sched): one pi sample and one 80-byte O_SYNC write per iteration.
//!
//! Children set their policy, open their files and then wait at a start gate, so the
//! trial measures the work and not the forking. Each child stamps the clock when its
//! work is done; wall time runs from the gate opening to the last stamp. User, system
//! and switch counts come from wait4, less each child's snapshot at the gate; run-queue
//! wait and migrations from the child's own schedstat readings at the gate and at its
//! finish stamp (so a child that waits behind others before it first runs shows it).

use crate::analysis::offcpu::{off_cpu, ChildWindow, ChildrenTrace};
use crate::analysis::random::SplitMix64;
use crate::error::{describe_io, Error, Result};
use crate::families::workload::model::{ChildRecord, WorkloadKind, WorkloadParams, WorkloadSpec, WorkloadTrial};
use crate::model::{TrialStatus, Usage};
use crate::sys::children::{ChildContext, ChildGroup, StartGate};
use crate::sys::clock::monotonic_ns;
use crate::sys::schedstat::{SchedBoard, TaskFiles};
use crate::sys::shm::{Snapshot, UsageBoard};
use crate::sys::trace::TraceSession;
use crate::sys::{fd, rusage, sched};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Extra words of each child's board slot.
const FINISH_NS: usize = 0;
const PI_BITS: usize = 1;

/// Bytes each mixed-workload iteration writes, as in mix-sched.
pub const MIXED_RECORD_BYTES: usize = 80;

/// The seed of child `index`: distinct streams from one base seed.
pub fn child_seed(base: u64, index: usize) -> u64 {
    base ^ (index as u64).wrapping_mul(0xD1B5_4A32_D192_ED03)
}

/// One Monte Carlo sample: is a random point of the unit square inside the quarter circle?
#[inline]
fn sample_inside(rng: &mut SplitMix64) -> bool {
    let x = rng.next_f64();
    let y = rng.next_f64();
    x * x + y * y <= 1.0
}

pub fn monte_carlo_pi(samples: u64, seed: u64) -> f64 {
    let mut rng = SplitMix64::new(seed);
    let mut inside = 0u64;
    for _ in 0..samples {
        inside += u64::from(sample_inside(&mut rng));
    }
    4.0 * inside as f64 / samples as f64
}

/// Whether an estimate from `samples` points is within six standard deviations of pi
/// (the estimate's sd is 4·sqrt(p(1-p)/n) with p = pi/4): a wrong generator or a
/// miscount fails this, chance essentially never does.
pub fn pi_is_plausible(estimate: f64, samples: u64) -> bool {
    let p = std::f64::consts::FRAC_PI_4;
    let sd = 4.0 * (p * (1.0 - p) / samples.max(1) as f64).sqrt();
    (estimate - std::f64::consts::PI).abs() <= 6.0 * sd + 1e-12
}

/// rw-sched's loop: `transfer` bytes in `buf`-sized blocks from `input` (rewound at its
/// end) to `output`.
fn copy_blocks(input: RawFd, output: RawFd, transfer: u64, buf: &mut [u8]) -> io::Result<()> {
    let mut left = transfer;
    while left > 0 {
        let want = buf.len().min(left as usize);
        let n = fd::read_raw(input, &mut buf[..want])?;
        if n == 0 {
            // SAFETY: plain lseek on our own descriptor.
            if unsafe { libc::lseek(input, 0, libc::SEEK_SET) } < 0 {
                return Err(io::Error::last_os_error());
            }
            continue;
        }
        fd::write_raw(output, &buf[..n])?;
        left -= n as u64;
    }
    Ok(())
}

/// mix-sched's loop: per iteration one pi sample and one 80-byte record written O_SYNC.
fn mixed_iterations(iterations: u64, seed: u64, output: RawFd) -> io::Result<f64> {
    let mut rng = SplitMix64::new(seed);
    let mut inside = 0u64;
    let mut record = [b' '; MIXED_RECORD_BYTES];
    record[MIXED_RECORD_BYTES - 1] = b'\n';
    for i in 1..=iterations {
        inside += u64::from(sample_inside(&mut rng));
        let estimate = 4.0 * inside as f64 / i as f64;
        let mut cursor = io::Cursor::new(&mut record[..MIXED_RECORD_BYTES - 1]);
        // The record is padded with spaces; what does not fit is cut, never reallocated.
        let _ = io::Write::write_fmt(&mut cursor, format_args!("iteration {i:>12} pi {estimate:.10}"));
        fd::write_raw(output, &record)?;
    }
    Ok(4.0 * inside as f64 / iterations as f64)
}

/// A directory of schedlab's own for one run's files, removed with everything in it
/// when dropped: on success, on error and on Ctrl-C (the error unwinds through here).
/// Its name carries the owner's pid, so what a SIGKILLed run left behind can be told
/// from a live run's files ([`sweep_orphaned_work_dirs`]).
pub struct WorkDir {
    path: PathBuf,
}

const WORK_DIR_PREFIX: &str = "schedlab-work-";

impl WorkDir {
    /// A fresh `schedlab-work-<pid>-XXXXXX` inside `parent` (default: the temp directory).
    pub fn create(parent: Option<&Path>) -> Result<WorkDir> {
        let parent = parent.map(Path::to_path_buf).unwrap_or_else(std::env::temp_dir);
        let template = parent.join(format!("{WORK_DIR_PREFIX}{}-XXXXXX", std::process::id()));
        let mut bytes = template.as_os_str().as_bytes().to_vec();
        bytes.push(0);
        // SAFETY: `bytes` is a writable NUL-terminated template, as mkdtemp requires.
        let made = unsafe { libc::mkdtemp(bytes.as_mut_ptr().cast()) };
        if made.is_null() {
            let err = io::Error::last_os_error();
            return Err(Error::env(format!("cannot use --dir {}: {}", parent.display(), describe_io(&err))));
        }
        bytes.pop();
        Ok(WorkDir { path: PathBuf::from(std::ffi::OsStr::from_bytes(&bytes)) })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    fn input(&self) -> PathBuf {
        self.path.join("input")
    }

    fn output(&self, child: usize) -> PathBuf {
        self.path.join(format!("out-{child}"))
    }

    /// Remove the children's output files between trials, keeping the input.
    fn clear_outputs(&self, children: usize) {
        for i in 0..children {
            let _ = std::fs::remove_file(self.output(i));
        }
    }
}

impl Drop for WorkDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

/// The owner's pid in a name `schedlab-work-<pid>-XXXXXX` (mkdtemp's six letters and
/// digits); `None` for every other name, which a sweep never touches.
fn work_dir_owner(name: &std::ffi::OsStr) -> Option<i32> {
    let rest = name.to_str()?.strip_prefix(WORK_DIR_PREFIX)?;
    let (pid, suffix) = rest.split_once('-')?;
    let well_formed = !pid.is_empty()
        && pid.bytes().all(|b| b.is_ascii_digit())
        && suffix.len() == 6
        && suffix.bytes().all(|b| b.is_ascii_alphanumeric());
    well_formed.then(|| pid.parse().ok()).flatten().filter(|&p| p > 0)
}

/// Remove every `schedlab-work-<pid>-XXXXXX` directory in `parent` whose owner is gone
/// (no such process, a zombie, or the pid now belongs to a program other than this
/// one: a run killed with SIGKILL never ran WorkDir's Drop) and return how many were
/// removed. Other names, and anything that is not a directory, are left alone.
pub fn sweep_orphaned_work_dirs(parent: &Path) -> usize {
    // Compared with our own name rather than a fixed "schedlab", so a renamed binary
    // never sweeps away the files of a live run of itself.
    let comm = crate::sys::process::own_comm();
    sweep_work_dirs_where(parent, |pid| !crate::sys::process::is_running_as(pid, comm.as_deref()))
}

fn sweep_work_dirs_where(parent: &Path, orphaned: impl Fn(i32) -> bool) -> usize {
    let Ok(entries) = std::fs::read_dir(parent) else { return 0 };
    let mut removed = 0;
    for entry in entries.flatten() {
        let Some(pid) = work_dir_owner(&entry.file_name()) else { continue };
        // Not followed: a symlink or file with such a name is not ours to remove.
        let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
        if is_dir && orphaned(pid) && std::fs::remove_dir_all(entry.path()).is_ok() {
            removed += 1;
        }
    }
    removed
}

fn open_raw(path: &Path, flags: libc::c_int) -> io::Result<OwnedFd> {
    let c = fd::c_path(path)?;
    // SAFETY: a valid NUL-terminated path; the mode is used only with O_CREAT.
    let raw = unsafe { libc::open(c.as_ptr(), flags | libc::O_CLOEXEC, 0o644 as libc::c_uint) };
    if raw < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: open succeeded; the descriptor is ours.
    Ok(unsafe { OwnedFd::from_raw_fd(raw) })
}

/// Bytes of the shared input file: the transfer, at most 1 MiB, whole blocks.
fn input_bytes(params: &WorkloadParams) -> u64 {
    let cap = (1u64 << 20).max(params.block_size);
    let size = params.transfer_size.min(cap);
    size - size % params.block_size
}

/// Bytes a trial of `procs` children writes in `dir` (for the free-space check).
pub fn bytes_needed(params: &WorkloadParams, procs: usize) -> u64 {
    match params.kind {
        WorkloadKind::Cpu => 0,
        WorkloadKind::Io => input_bytes(params) + params.transfer_size * procs as u64,
        WorkloadKind::Mixed => params.iterations * MIXED_RECORD_BYTES as u64 * procs as u64,
    }
}

/// Write the io workload's input file (before any trial, outside the timed region).
pub fn prepare_input(dir: &WorkDir, params: &WorkloadParams) -> Result<()> {
    if params.kind != WorkloadKind::Io {
        return Ok(());
    }
    let mut rng = SplitMix64::new(params.seed);
    let data: Vec<u8> = (0..input_bytes(params)).map(|_| rng.next_u64() as u8).collect();
    std::fs::write(dir.input(), data)
        .map_err(|e| Error::env(format!("writing the input file in {}: {}", dir.path().display(), describe_io(&e))))
}

/// What a child does: set-up, the gate, the work, the finish stamp.
struct ChildPlan<'a> {
    spec: &'a WorkloadSpec,
    dir: Option<&'a WorkDir>,
    gate: &'a StartGate,
    board: &'a UsageBoard,
    sched: &'a SchedBoard,
}

impl ChildPlan<'_> {
    fn run(&self, ctx: &ChildContext) -> i32 {
        let spec = self.spec;
        let params = &spec.params;
        let reservation = spec.beside.deadline.as_ref();
        if let Err(msg) =
            sched::apply_scheduling(None, spec.policy, spec.prio, reservation, spec.procs, Default::default())
        {
            return ctx.fail_setup(&msg);
        }
        if let Some(nice) = spec.nice {
            if let Err(e) = sched::set_nice(nice) {
                return ctx.fail_setup(&sched::explain_nice_refusal(nice, &e));
            }
        }
        if spec.policy.is_realtime() {
            // A kernel-side backstop: an RT child that computes for longer than the trial
            // timeout without blocking gets SIGXCPU, even if the parent cannot run.
            let limit_us = spec.timeout.as_micros().min(u64::MAX as u128 / 2) as u64;
            let lim = libc::rlimit { rlim_cur: limit_us, rlim_max: limit_us + 1_000_000 };
            // SAFETY: a valid rlimit for the calling process.
            unsafe { libc::setrlimit(libc::RLIMIT_RTTIME, &lim) };
        }
        let seed = child_seed(params.seed, ctx.index);
        let sync = libc::O_SYNC;
        let (input, output) = match (params.kind, self.dir) {
            (WorkloadKind::Cpu, _) => (None, None),
            (kind, Some(dir)) => {
                let input = match kind {
                    WorkloadKind::Io => match open_raw(&dir.input(), libc::O_RDONLY | sync) {
                        Ok(f) => Some(f),
                        Err(e) => return ctx.fail_setup(&format!("opening the input file: {}", describe_io(&e))),
                    },
                    _ => None,
                };
                match open_raw(&dir.output(ctx.index), libc::O_WRONLY | libc::O_CREAT | libc::O_TRUNC | sync) {
                    Ok(f) => (input, Some(f)),
                    Err(e) => return ctx.fail_setup(&format!("creating its output file: {}", describe_io(&e))),
                }
            }
            (_, None) => return ctx.fail_setup("internal: an I/O workload without a directory"),
        };
        let mut buf = vec![0u8; if params.kind == WorkloadKind::Io { params.block_size as usize } else { 0 }];
        let sched_files = TaskFiles::of_current_thread(spec.beside.schedstat);
        self.board.store_usage(ctx.index, Snapshot::Start, &rusage::this_thread());
        if let Err(e) = ctx.ready() {
            return ctx.fail_setup(&format!("signalling ready: {e}"));
        }
        // After ready (whose wakeup of the parent may preempt us) and just before the
        // gate: the window's wait is the one after the gate opens, as before the first run.
        self.sched.store(ctx.index, Snapshot::Start, &sched_files.read());
        self.gate.wait();

        let raw = |f: &Option<OwnedFd>| f.as_ref().map_or(-1, |f| f.as_raw_fd());
        let outcome: io::Result<Option<f64>> = match params.kind {
            WorkloadKind::Cpu => Ok(Some(monte_carlo_pi(params.iterations, seed))),
            WorkloadKind::Io => copy_blocks(raw(&input), raw(&output), params.transfer_size, &mut buf).map(|_| None),
            WorkloadKind::Mixed => mixed_iterations(params.iterations, seed, raw(&output)).map(Some),
        };
        // Before the finish stamp, so a child's window ends inside the wall time.
        self.sched.store(ctx.index, Snapshot::End, &sched_files.read());
        let finished = monotonic_ns();
        self.board.store_extra(ctx.index, FINISH_NS, finished);
        match outcome {
            Ok(Some(pi)) => {
                self.board.store_extra(ctx.index, PI_BITS, pi.to_bits());
                if !pi_is_plausible(pi, params.iterations) {
                    return ctx.fail(&format!(
                        "its pi estimate {pi} from {} samples is implausibly far from pi",
                        params.iterations
                    ));
                }
                0
            }
            Ok(None) => 0,
            Err(e) => ctx.fail(&format!("{} workload: {}", params.kind.as_str(), describe_io(&e))),
        }
    }
}

/// Run one trial. Environment problems (a refused policy, an unopenable file) are errors;
/// a trial that times out or fails mid-work is returned with that status and its reason.
pub fn run_trial(spec: &WorkloadSpec, repeat: usize, dir: Option<&WorkDir>) -> Result<WorkloadTrial> {
    let board = UsageBoard::new(spec.procs).map_err(|e| Error::os("mapping the children's result slots", e))?;
    let sched = SchedBoard::new(spec.procs).map_err(|e| Error::os("mapping the children's schedstat slots", e))?;
    let gate = StartGate::new()?;
    let plan = ChildPlan { spec, dir, gate: &gate, board: &board, sched: &sched };
    let mut trial = WorkloadTrial {
        spec: spec.clone(),
        repeat,
        status: TrialStatus::Ok,
        wall_ns: 0,
        usage: Usage::default(),
        children: Vec::new(),
        fork_ns: 0,
        trace: None,
    };
    let tracing;
    let outcome = {
        let mut group = ChildGroup::new("workload child", spec.procs)?;
        let t_fork = monotonic_ns();
        for _ in 0..spec.procs {
            group.spawn(&[], |ctx| plan.run(ctx))?;
        }
        group.wait_ready(spec.procs)?;
        // After the forks, whose events are not the trial's: the kernel records, the
        // trial process reads once every child is done.
        tracing = spec.beside.trace.then(start_tracing);
        // With RT throttling on, a SCHED_OTHER parent is guaranteed its share while RT
        // children are throttled (an RT parent would be throttled with them); with it
        // off, only a higher RT priority lets the watchdog run.
        let throttled = sched::RtThrottling::read().is_some_and(|t| t.is_on());
        let watchdog = sched::RtWatchdog::raise_if(spec.policy.is_realtime() && !throttled);
        let t_start = monotonic_ns();
        trial.fork_ns = t_start - t_fork;
        crate::sys::load::mark_window_start();
        gate.open();
        let deadline = Instant::now() + spec.timeout;
        let reaped = group.wait_all(None, Some((deadline, spec.timeout)));
        crate::sys::load::mark_window_end();
        drop(watchdog);
        reaped.map(|r| (r, t_start))
    };
    let recording = tracing.map(crate::bench::read_trace);
    if let Some(dir) = dir {
        dir.clear_outputs(spec.procs);
    }
    let (reaped, t_start) = match outcome {
        Ok(r) => r,
        Err(Error::TimedOut(msg)) => {
            trial.status = TrialStatus::TimedOut(msg);
            return Ok(trial);
        }
        Err(Error::Failed(msg)) => {
            trial.status = TrialStatus::Failed(msg);
            return Ok(trial);
        }
        Err(e) => return Err(e),
    };
    let mut windows = Vec::with_capacity(reaped.len());
    for (index, r) in reaped.iter().enumerate() {
        let usage = r.usage.since(&board.load_usage(index, Snapshot::Start));
        let finish_ns = board.load_extra(index, FINISH_NS).saturating_sub(t_start);
        let pi_estimate = match spec.params.kind {
            WorkloadKind::Io => None,
            _ => Some(f64::from_bits(board.load_extra(index, PI_BITS))),
        };
        trial.usage.accumulate(&usage);
        trial.children.push(ChildRecord { finish_ns, usage, pi_estimate, sched: sched.window(index) });
        windows.push(ChildWindow { pid: r.pid, start_ns: t_start, end_ns: t_start + finish_ns });
    }
    trial.wall_ns = trial.children.iter().map(|c| c.finish_ns).max().unwrap_or(0);
    trial.trace = recording.map(|r| match r {
        Err(reason) => ChildrenTrace::unavailable(reason),
        Ok(recording) => {
            let (children, outsiders) = off_cpu(&recording.events, &windows);
            let lost_events = recording.lost.iter().map(|(_, n)| n).sum();
            ChildrenTrace { unavailable: None, lost_events, children, outsiders }
        }
    });
    Ok(trial)
}

/// Each CPU's trace buffer (KiB) for a workload trial: a child's switch out and back costs
/// about four events of ~50 bytes, so 32 MiB holds some 150 000 sleeps and preemptions
/// per CPU; what overflows is counted, never hidden.
const TRACE_BUFFER_KB: usize = 32 * 1024;

/// A tracing session on every CPU the children may use, or why there is none.
fn start_tracing() -> std::result::Result<TraceSession, String> {
    let cpus = sched::allowed_cpus().map_err(|e| format!("no attribution: reading the allowed CPUs: {e}"))?;
    crate::bench::start_trace(&cpus, TRACE_BUFFER_KB)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pi_estimates_are_reproducible_and_plausible() {
        let a = monte_carlo_pi(200_000, 42);
        assert_eq!(a, monte_carlo_pi(200_000, 42));
        assert_ne!(a, monte_carlo_pi(200_000, child_seed(42, 1)));
        assert!(pi_is_plausible(a, 200_000), "{a}");
        assert!((a - std::f64::consts::PI).abs() < 0.03, "{a}");
    }

    #[test]
    fn implausible_estimates_are_caught() {
        assert!(!pi_is_plausible(3.0, 1_000_000));
        assert!(!pi_is_plausible(4.0, 10_000));
        assert!(pi_is_plausible(std::f64::consts::PI + 1e-4, 1_000_000));
    }

    #[test]
    fn generator_is_uniform_enough() {
        let mut rng = SplitMix64::new(7);
        let mean = (0..100_000).map(|_| rng.next_f64()).sum::<f64>() / 100_000.0;
        assert!((mean - 0.5).abs() < 0.01, "{mean}");
    }

    #[test]
    fn copy_rewinds_the_input_and_writes_exactly_the_transfer() {
        let dir = WorkDir::create(None).unwrap();
        let params =
            WorkloadParams { kind: WorkloadKind::Io, iterations: 0, transfer_size: 10_240, block_size: 1024, seed: 3 };
        std::fs::write(dir.input(), vec![7u8; 3 * 1024]).unwrap();
        let input = open_raw(&dir.input(), libc::O_RDONLY).unwrap();
        let output = open_raw(&dir.output(0), libc::O_WRONLY | libc::O_CREAT | libc::O_TRUNC).unwrap();
        let mut buf = vec![0u8; 1024];
        copy_blocks(input.as_raw_fd(), output.as_raw_fd(), params.transfer_size, &mut buf).unwrap();
        assert_eq!(std::fs::metadata(dir.output(0)).unwrap().len(), 10_240);
        let path = dir.path().to_path_buf();
        drop(dir);
        assert!(!path.exists(), "the work directory is removed on drop");
    }

    #[test]
    fn mixed_writes_one_record_per_iteration() {
        let dir = WorkDir::create(None).unwrap();
        let output = open_raw(&dir.output(0), libc::O_WRONLY | libc::O_CREAT | libc::O_TRUNC).unwrap();
        let pi = mixed_iterations(50, 1, output.as_raw_fd()).unwrap();
        assert!(pi_is_plausible(pi, 50));
        let text = std::fs::read_to_string(dir.output(0)).unwrap();
        assert_eq!(text.len(), 50 * MIXED_RECORD_BYTES);
        assert!(text.lines().all(|l| l.len() == MIXED_RECORD_BYTES - 1 && l.starts_with("iteration")));
    }

    #[test]
    fn bytes_needed_counts_every_child() {
        let params = WorkloadParams {
            kind: WorkloadKind::Io,
            iterations: 0,
            transfer_size: 100 * 1024,
            block_size: 1024,
            seed: 1,
        };
        assert_eq!(input_bytes(&params), 100 * 1024);
        assert_eq!(bytes_needed(&params, 4), 5 * 100 * 1024);
    }

    #[test]
    fn work_dirs_carry_their_owners_pid() {
        let dir = WorkDir::create(None).unwrap();
        let name = dir.path().file_name().unwrap().to_owned();
        assert_eq!(work_dir_owner(&name), Some(std::process::id() as i32), "{name:?}");
        for other in ["schedlab-work-Ab3dE9", "schedlab-work-12-abc", "schedlab-work--abcdef", "schedlab-work-0-abcdef"]
        {
            assert_eq!(work_dir_owner(other.as_ref()), None, "{other}");
        }
    }

    #[test]
    fn the_sweep_removes_only_dirs_whose_owner_is_gone() {
        let parent = std::env::temp_dir().join(format!("schedlab-sweep-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&parent);
        std::fs::create_dir_all(&parent).unwrap();
        let dir_of = |pid: i32, tag: &str| {
            let path = parent.join(format!("schedlab-work-{pid}-{tag}"));
            std::fs::create_dir(&path).unwrap();
            std::fs::write(path.join("out-0"), b"data").unwrap();
            path
        };
        let mut exited = std::process::Command::new("true").spawn().unwrap();
        exited.wait().unwrap();
        let mut other_program = std::process::Command::new("sleep").arg("30").spawn().unwrap();
        // A zombie of our own name (a fork keeps the comm): gone, though its pid lives on.
        // SAFETY: the child only _exits.
        let zombie = unsafe { libc::fork() };
        if zombie == 0 {
            // SAFETY: leave at once.
            unsafe { libc::_exit(0) };
        }
        assert!(zombie > 0);
        let limit = Instant::now() + std::time::Duration::from_secs(10);
        while crate::sys::process::comm_and_state(zombie).is_some_and(|(_, s)| s != 'Z') && Instant::now() < limit {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }

        let mine = dir_of(std::process::id() as i32, "Keep01");
        let gone = [
            dir_of(exited.id() as i32, "Dead01"),
            dir_of(99_999_999, "Dead02"),
            dir_of(other_program.id() as i32, "Other1"),
            dir_of(zombie, "Zombie"),
        ];
        let untouched = [parent.join("schedlab-work-Ab3dE9"), parent.join("other-99999999-abcdef")];
        for path in &untouched {
            std::fs::create_dir(path).unwrap();
        }
        let a_file = parent.join("schedlab-work-99999999-File01");
        std::fs::write(&a_file, b"not a directory").unwrap();

        let removed = sweep_orphaned_work_dirs(&parent);

        let _ = other_program.kill();
        let _ = other_program.wait();
        let _ = crate::sys::rusage::wait4(zombie, false);
        let survivors: Vec<_> = std::fs::read_dir(&parent).unwrap().map(|e| e.unwrap().file_name()).collect();
        std::fs::remove_dir_all(&parent).unwrap();
        assert_eq!(removed, gone.len(), "left: {survivors:?}");
        assert!(survivors.contains(&mine.file_name().unwrap().to_owned()), "{survivors:?}");
        for path in gone {
            assert!(!survivors.contains(&path.file_name().unwrap().to_owned()), "{path:?} kept: {survivors:?}");
        }
        for path in untouched.iter().chain([&a_file]) {
            assert!(survivors.contains(&path.file_name().unwrap().to_owned()), "{path:?} removed");
        }
        assert_eq!(sweep_orphaned_work_dirs(&parent), 0, "a missing parent is no error");
    }
}
