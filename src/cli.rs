//! Command-line definitions (clap derive) and their validation into specs. Nothing here
//! makes a system call: what needs the OS (CPUs, privileges, limits) is checked by the
//! command before it forks anything.

use crate::error::{Error, Result};
use crate::model::{Ipc, Pin, Policy, RingLength, RingMode, RingSpec, WorkloadKind, WorkloadParams, WorkloadSpec};
use clap::{Args, Parser, Subcommand};
use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

/// The largest ring schedlab accepts at all; the machine's limits usually bite first.
pub const MAX_PROCS: usize = 1 << 20;
/// The largest per-member working set (1 GiB).
pub const MAX_WORK_KB: usize = 1 << 20;
/// The NCAR study's process counts.
pub const NCAR_COUNTS: &str = "2,4,8,10,16,20,32,48,64";
pub const DEFAULT_LAPS: u64 = 10_000;

#[derive(Parser, Debug)]
#[command(
    name = "schedlab",
    version,
    about = "Measure the Linux scheduler and keep the evidence",
    long_about = "Measure the Linux scheduler and keep the evidence.\n\n\
        Exit status: 0 ok, 1 a comparison found a regression, 2 bad input or an environment \
        that cannot give what was asked (nothing measured), 3 a measurement failed, \
        128+N interrupted by signal N."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Context-switch ring: N tasks pass a token round a circle (NCAR `pipeline`, lat_ctx)
    #[command(after_help = RING_EXAMPLES)]
    Ring(RingArgs),
    /// Run any command and report its wall time and every getrusage field
    #[command(after_help = RUSAGE_EXAMPLES)]
    Rusage(RusageArgs),
    /// Policy x workload matrix: N children of CPU-, I/O- or mixed-bound work per policy
    #[command(after_help = WORKLOAD_EXAMPLES)]
    Workload(WorkloadArgs),
    /// Timer wakeup latency: periodic absolute sleeps, actual − ideal (hrtimers 2007, cyclictest)
    #[command(after_help = LATENCY_EXAMPLES)]
    Latency(LatencyArgs),
    /// The main job: run a suite (default: quick), store every trial, print the tables
    #[command(after_help = RUN_EXAMPLES)]
    Run(RunArgs),
    /// List the built-in suites, with what each measures and its estimated time here
    Suites(SuitesArgs),
    /// Show this machine's fingerprint (what every run records about where it ran)
    Machine(MachineArgs),
    /// List the runs in the results database
    List(ListArgs),
    /// Show a stored run: its machine, warnings and tables
    Show(ShowArgs),
    /// Delete a stored run and its trials
    Delete(DeleteArgs),
    /// Write stored runs as JSON (lossless, for import elsewhere) or CSV (one row per trial)
    Export(ExportArgs),
    /// Add the runs of a JSON export (from any machine) to the results database
    Import(ImportArgs),
    /// Compare two stored runs: matched figures, ratios, 95% intervals, verdicts (exit 1 on a regression)
    #[command(after_help = COMPARE_EXAMPLES)]
    Compare(CompareArgs),
    /// A stored run's tables, findings, SVG plots and self-contained HTML page
    #[command(after_help = REPORT_EXAMPLES)]
    Report(ReportArgs),
    /// (internal) Run one trial of a suite; the orchestrator starts it
    #[command(name = "__trial", hide = true)]
    Trial,
}

const RUN_EXAMPLES: &str = "Examples:\n  \
    schedlab run                          # the quick suite, about a minute\n  \
    schedlab run pipeline-1992 --dry-run  # the plan and its estimated time\n  \
    schedlab run policy-study --full --shuffle\n  \
    schedlab run my-suite.toml --db results.db\n  \
    schedlab run --resume 3               # finish an interrupted run\n\n\
    Results go to ./schedlab.db unless --db or $SCHEDLAB_DB names another file. A suite file \
    has [[experiment]] tables: family = \"ring\" | \"workload\" | \"latency\", the command's flags as \
    keys (a list is an axis), repeat and warmup; `schedlab suites --show quick` prints one to copy.";

const COMPARE_EXAMPLES: &str = "Examples:\n  \
    schedlab compare 3 4                      # run 4 against run 3\n  \
    schedlab compare 3 latest --threshold 10% --format markdown\n  \
    schedlab compare 3 4 --format json --html cmp.html\n\n\
    Trials match by family and parameters, across machines too (import the other run first). \
    B/A is the ratio of medians; the verdict comes from a Mann-Whitney test (p < 0.05) and a \
    bootstrap interval that excludes 1, and needs at least 4 ok repeats on each side. Exit \
    status 1 when a figure of B is significantly slower than A by more than --threshold.";

const REPORT_EXAMPLES: &str = "Examples:\n  \
    schedlab report latest\n  \
    schedlab report 3 --format markdown > run3.md\n  \
    schedlab report 3 --svg plots/ --html run3.html";

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum TableFormat {
    /// Aligned text for the terminal
    Text,
    Markdown,
    Csv,
    Json,
}

#[derive(Args, Debug, Clone)]
pub struct CompareArgs {
    /// The baseline run (id or `latest`)
    #[arg(value_name = "RUN_A")]
    pub run_a: String,
    /// The run compared with it
    #[arg(value_name = "RUN_B")]
    pub run_b: String,
    #[command(flatten)]
    pub db: DbArg,
    /// How much slower (B/A − 1) counts as a regression, e.g. 5% or 0.05
    #[arg(long, value_name = "PCT", default_value = "5%", value_parser = parse_threshold)]
    pub threshold: f64,
    #[arg(long, value_enum, default_value_t = TableFormat::Text)]
    pub format: TableFormat,
    /// Also write the comparison as a self-contained HTML page
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
}

#[derive(Args, Debug, Clone)]
pub struct ReportArgs {
    /// Run id or `latest`
    #[arg(value_name = "RUN", default_value = "latest")]
    pub run: String,
    #[command(flatten)]
    pub db: DbArg,
    /// How the tables are printed
    #[arg(long, value_enum, default_value_t = TableFormat::Text)]
    pub format: TableFormat,
    /// Write the plots as SVG files into DIR (made if missing)
    #[arg(long, value_name = "DIR")]
    pub svg: Option<PathBuf>,
    /// Write one self-contained HTML page (tables, plots, machine, findings)
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
}

/// "5%", "0.05" or "5" (a number above 1 is read as percent).
pub fn parse_threshold(text: &str) -> std::result::Result<f64, String> {
    let t = text.trim();
    let (num, percent) = match t.strip_suffix('%') {
        Some(n) => (n.trim(), true),
        None => (t, false),
    };
    let v: f64 = num.parse().map_err(|_| format!("'{text}' is not a threshold (try 5% or 0.05)"))?;
    let v = if percent || v > 1.0 { v / 100.0 } else { v };
    if !v.is_finite() || v < 0.0 {
        return Err(format!("the threshold '{text}' must be zero or more"));
    }
    Ok(v)
}

/// Which results database: `--db FILE`, else $SCHEDLAB_DB, else ./schedlab.db.
#[derive(Args, Debug, Clone)]
pub struct DbArg {
    /// Results database [default: $SCHEDLAB_DB, else ./schedlab.db]
    #[arg(long, value_name = "FILE")]
    pub db: Option<PathBuf>,
}

#[derive(Args, Debug, Clone)]
pub struct SuitesArgs {
    /// Print this built-in suite's TOML (to copy and edit)
    #[arg(long, value_name = "NAME")]
    pub show: Option<String>,
}

#[derive(Args, Debug, Clone)]
pub struct MachineArgs {
    /// One JSON object
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug, Clone)]
pub struct ListArgs {
    #[command(flatten)]
    pub db: DbArg,
    /// One JSON object per run
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug, Clone)]
pub struct ShowArgs {
    /// Run id (as `schedlab list` shows it) or `latest`
    #[arg(value_name = "RUN", default_value = "latest")]
    pub run: String,
    #[command(flatten)]
    pub db: DbArg,
    /// Also print the machine fingerprint in full
    #[arg(long)]
    pub machine: bool,
}

#[derive(Args, Debug, Clone)]
pub struct DeleteArgs {
    /// Run ids to delete
    #[arg(value_name = "RUN", required = true)]
    pub runs: Vec<String>,
    #[command(flatten)]
    pub db: DbArg,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ExportFormat {
    Json,
    Csv,
}

#[derive(Args, Debug, Clone)]
pub struct ExportArgs {
    /// Run ids to export (or `latest`)
    #[arg(value_name = "RUN", required = true)]
    pub runs: Vec<String>,
    #[command(flatten)]
    pub db: DbArg,
    #[arg(long, value_enum, default_value_t = ExportFormat::Json)]
    pub format: ExportFormat,
    /// Write to FILE instead of stdout
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

#[derive(Args, Debug, Clone)]
pub struct ImportArgs {
    /// A file written by `schedlab export --format json`
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    #[command(flatten)]
    pub db: DbArg,
}

const LATENCY_EXAMPLES: &str = "Examples:\n  \
    schedlab latency --freq 85 --loops 850 --compare-policies other,fifo   # the 2007 hrtimers test\n  \
    schedlab latency --interval 1ms --duration 60s --policy fifo --all-cpus\n  \
    schedlab latency --interval 200us --policy fifo --prio 90 --break-us 500\n  \
    schedlab latency --loops 10000 --samples lat.txt --histogram hist.txt --json\n\n\
    Ctrl-C ends the run early and still prints the statistics of the samples taken.";

/// The priority latency threads get under fifo/rr unless told otherwise: high, but below
/// the 99 that the kernel's own threads need.
pub const LATENCY_DEFAULT_RT_PRIO: i32 = 95;

#[derive(Args, Debug, Clone)]
pub struct LatencyArgs {
    /// Wakeups per second (e.g. 85, 1000) [default: --interval 1ms]
    #[arg(long, value_name = "HZ", value_parser = parse_frequency, conflicts_with = "interval", allow_negative_numbers = true)]
    pub freq: Option<f64>,

    /// Time between wakeups (e.g. 1ms, 200us) [default: 1ms]
    #[arg(long, value_name = "TIME", value_parser = parse_duration)]
    pub interval: Option<Duration>,

    /// Periods per thread (samples plus overruns)
    #[arg(long, value_name = "N", value_parser = parse_iterations, conflicts_with = "duration")]
    pub loops: Option<u64>,

    /// How long to measure [default: 10s]
    #[arg(long, value_name = "TIME", value_parser = parse_duration)]
    pub duration: Option<Duration>,

    /// Scheduling policy of the measuring threads
    #[arg(long, value_enum, default_value_t = Policy::Other, conflicts_with = "compare_policies")]
    pub policy: Policy,

    /// Static priority for fifo/rr (1-99) [default: 95]
    #[arg(long, value_name = "N")]
    pub prio: Option<i32>,

    /// Measuring threads, pinned to the first N allowed CPUs [default: 1, unpinned]
    #[arg(long, value_name = "N", conflicts_with_all = ["all_cpus", "cpus"], value_parser = clap::value_parser!(u32).range(1..=4096))]
    pub threads: Option<u32>,

    /// One pinned measuring thread per allowed CPU
    #[arg(long, conflicts_with = "cpus")]
    pub all_cpus: bool,

    /// One pinned measuring thread per listed CPU (e.g. 0,2 or 1-3)
    #[arg(long, value_name = "LIST", value_parser = parse_cpu_list)]
    pub cpus: Option<CpuList>,

    /// Do not hold /dev/cpu_dma_latency at 0: measure the machine's idle states as configured
    #[arg(long)]
    pub no_dma_latency: bool,

    /// Write the histogram's bucket counts (value_ns count) to FILE
    #[arg(long, value_name = "FILE")]
    pub histogram: Option<PathBuf>,

    /// Write every raw sample in ns, one per line, to FILE (grows with the run)
    #[arg(long, value_name = "FILE")]
    pub samples: Option<PathBuf>,

    /// Run once per policy (e.g. other,fifo) and print them side by side
    #[arg(long, value_name = "LIST", value_parser = parse_policies)]
    pub compare_policies: Option<PolicyList>,

    /// Stop at the first sample above this many µs, and stop tracing if tracefs is mounted
    #[arg(long, value_name = "US", value_parser = parse_break_us, allow_negative_numbers = true)]
    pub break_us: Option<f64>,

    /// One JSON object per thread per policy, plus a combined one per policy
    #[arg(long)]
    pub json: bool,
}

pub fn parse_frequency(text: &str) -> std::result::Result<f64, String> {
    let hz: f64 = text.trim().parse().map_err(|_| format!("'{text}' is not a frequency in Hz (try 85 or 1000)"))?;
    if !hz.is_finite() || hz <= 0.0 {
        return Err(format!("the frequency '{text}' must be a positive number of Hz"));
    }
    if hz > 1e9 {
        return Err(format!("{hz} Hz asks for a period below one nanosecond"));
    }
    Ok(hz)
}

pub fn parse_break_us(text: &str) -> std::result::Result<f64, String> {
    let us: f64 = text.trim().parse().map_err(|_| format!("'{text}' is not a number of µs"))?;
    if !us.is_finite() || us <= 0.0 {
        return Err(format!("--break-us '{text}' must be a positive number of µs"));
    }
    Ok(us)
}

const WORKLOAD_EXAMPLES: &str = "Examples:\n  \
    schedlab workload cpu --procs 10,50,100 --policy other,fifo,rr --repeat 5\n  \
    schedlab workload io --procs 4,16 --policy other,fifo --dir /var/tmp --format classic\n  \
    schedlab workload mixed --procs 10 --policy rr --prio 50 --json\n  \
    schedlab workload cpu --procs 8 --policy batch,other --nice 5\n\n\
    Real-time policies default to their maximum priority (99), as in the classic study. A \
    CPU-bound real-time run that could fill every CPU is refused while RT throttling \
    (/proc/sys/kernel/sched_rt_runtime_us) is off, unless --allow-rt-saturation is given.";

/// How workload results are printed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum WorkloadFormat {
    /// A summary table per policy x procs (mean, sd, median, min, max over repeats)
    Table,
    /// The 2014 study's own line per trial: wall=… user=… system=… CPU=…% i-switched=… v-switched=…
    Classic,
}

#[derive(Args, Debug, Clone)]
pub struct WorkloadArgs {
    /// cpu: Monte Carlo pi; io: O_SYNC block copy; mixed: a pi sample and an 80-byte O_SYNC write per iteration
    #[arg(value_enum)]
    pub workload: WorkloadKind,

    /// Children per trial: a count (10), a list (10,50,100,500) or a range (1..=4)
    #[arg(long, value_name = "LIST", default_value = "10", value_parser = parse_workload_procs)]
    pub procs: ProcList,

    /// Policies to compare: one or a list of other,fifo,rr,batch,idle
    #[arg(long, value_name = "LIST", default_value = "other", value_parser = parse_policies)]
    pub policy: PolicyList,

    /// Static priority for fifo/rr (1-99) [default: 99, the maximum, as in the classic study]
    #[arg(long, value_name = "N")]
    pub prio: Option<i32>,

    /// Nice value (-20..19) for the other and batch children
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub nice: Option<i32>,

    /// Trials per policy x procs combination
    #[arg(long, value_name = "R", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub repeat: u32,

    /// cpu: Monte Carlo samples per child [default: 50000000, ~0.2 s here]; mixed: iterations [default: 1000]
    #[arg(long, value_name = "N", value_parser = parse_iterations)]
    pub iterations: Option<u64>,

    /// io: bytes each child copies (e.g. 100KiB, 1MiB)
    #[arg(long, value_name = "SIZE", default_value = "100KiB", value_parser = parse_size)]
    pub transfer_size: u64,

    /// io: bytes per read and write
    #[arg(long, value_name = "SIZE", default_value = "1KiB", value_parser = parse_size)]
    pub block_size: u64,

    /// io/mixed: where to write (a fresh directory is made inside it and removed afterwards)
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,

    /// Base seed of the children's random generators
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub seed: u64,

    /// Kill a trial that runs longer than this and record it as timed out
    #[arg(long, value_name = "TIME", default_value = "5m", value_parser = parse_duration)]
    pub timeout: Duration,

    /// Allow a CPU-bound real-time run that can fill every CPU while RT throttling is off
    #[arg(long)]
    pub allow_rt_saturation: bool,

    /// Output format
    #[arg(long, value_enum, default_value_t = WorkloadFormat::Table, conflicts_with = "json")]
    pub format: WorkloadFormat,

    /// One JSON object per trial per line
    #[arg(long)]
    pub json: bool,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PolicyList(pub Vec<Policy>);

/// Samples per child that take about 0.2 s on the 2-vCPU reference machine.
pub const DEFAULT_CPU_ITERATIONS: u64 = 50_000_000;
/// mix-sched's default.
pub const DEFAULT_MIXED_ITERATIONS: u64 = 1_000;
/// The largest block or transfer schedlab accepts (1 GiB).
pub const MAX_SIZE: u64 = 1 << 30;

const RING_EXAMPLES: &str = "Examples:\n  \
    schedlab ring                                  # the NCAR sweep, 2..64 processes, one CPU\n  \
    schedlab ring --procs 2 --laps 100000 --pin same\n  \
    schedlab ring --procs 2..=16 --mode thread --ipc futex --json\n  \
    schedlab ring --procs 1000 --duration 5s --pin spread\n  \
    schedlab ring --procs 8 --policy fifo --prio 80 --work-kb 64";

const RUSAGE_EXAMPLES: &str = "Examples:\n  \
    schedlab rusage -- make -j4\n  \
    schedlab rusage --json -o usage.json -- ./simulate --steps 100\n\n\
    The report goes to stderr (or --output), so the command's own output stays clean. \
    schedlab exits with the command's status (128+N if a signal N killed it, 127 if it \
    could not be started).";

#[derive(Args, Debug, Clone)]
pub struct RingArgs {
    /// Ring sizes: a count (8), a list (2,4,8,16) or a range (2..=64, 2..64)
    #[arg(long, value_name = "LIST", default_value = NCAR_COUNTS, value_parser = parse_procs)]
    pub procs: ProcList,

    /// Trips of the token round the ring [default: 10000]
    #[arg(long, value_name = "N", value_parser = parse_laps, conflicts_with = "duration")]
    pub laps: Option<u64>,

    /// Run each ring for this long instead of a fixed lap count (e.g. 5s, 500ms)
    #[arg(long, value_name = "TIME", value_parser = parse_duration)]
    pub duration: Option<Duration>,

    /// Members as separate processes or as threads of one process
    #[arg(long, value_enum, default_value_t = RingMode::Process)]
    pub mode: RingMode,

    /// How the token travels
    #[arg(long, value_enum, default_value_t = Ipc::Pipe)]
    pub ipc: Ipc,

    /// same: all on one CPU; spread: round-robin over CPUs; none: the scheduler decides
    #[arg(long, value_enum, default_value_t = Pin::Same)]
    pub pin: Pin,

    /// CPUs to place members on (e.g. 0,2 or 1-3) [default: every allowed CPU]
    #[arg(long, value_name = "LIST", value_parser = parse_cpu_list)]
    pub cpus: Option<CpuList>,

    /// Scheduling policy of every member
    #[arg(long, value_enum, default_value_t = Policy::Other)]
    pub policy: Policy,

    /// Static priority for fifo/rr (1-99) [default: 50]
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub prio: Option<i32>,

    /// Working set (KiB) each member reads on every hop, like lmbench's -s
    #[arg(long, value_name = "K", default_value_t = 0)]
    pub work_kb: usize,

    /// Kill a ring that runs longer than this and fail the run (e.g. one stopped member)
    #[arg(long, value_name = "TIME", value_parser = parse_duration)]
    pub timeout: Option<Duration>,

    /// One JSON object per configuration per line, instead of the table
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug, Clone)]
pub struct RusageArgs {
    /// Print the report as one JSON object
    #[arg(long)]
    pub json: bool,

    /// Write the report to FILE instead of stderr
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// The command and its arguments (after --)
    #[arg(required = true, trailing_var_arg = true, allow_hyphen_values = true, value_name = "CMD")]
    pub command: Vec<OsString>,
}

#[derive(Args, Debug, Clone)]
pub struct RunArgs {
    /// A built-in suite (see `schedlab suites`) or a suite file (.toml) [default: quick]
    #[arg(value_name = "SUITE|FILE")]
    pub suite: Option<String>,

    /// Print the plan and its estimated time; run nothing, store nothing
    #[arg(long)]
    pub dry_run: bool,

    /// Run the trials in random order, to spread slow drift over every configuration
    #[arg(long)]
    pub shuffle: bool,

    /// Seed of --shuffle's order [default: random, printed and stored]
    #[arg(long, value_name = "N", requires = "shuffle")]
    pub seed: Option<u64>,

    /// Use the suite's full-size parameters (its [experiment.full] tables)
    #[arg(long)]
    pub full: bool,

    /// Continue an interrupted run: run only the trials it has not stored
    #[arg(long, value_name = "RUN", conflicts_with_all = ["suite", "full", "shuffle", "seed"])]
    pub resume: Option<String>,

    /// Stop a trial that runs longer than this and record it as timed out
    #[arg(long, value_name = "TIME", default_value = "10m", value_parser = parse_duration)]
    pub trial_timeout: Duration,

    #[command(flatten)]
    pub db: DbArg,
}

/// Ring sizes, ascending and without repeats.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProcList(pub Vec<usize>);

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CpuList(pub Vec<usize>);

/// "a,b,c" where each item is a number or a range "a..=b" / "a..b" / "a-b" (the last
/// only when `dash_ranges`, as in the kernel's CPU lists).
fn parse_number_list(text: &str, what: &str, dash_ranges: bool) -> std::result::Result<Vec<usize>, String> {
    let number = |s: &str| -> std::result::Result<usize, String> {
        s.trim()
            .replace('_', "")
            .parse::<usize>()
            .map_err(|_| format!("'{}' is not a whole number of {what}", s.trim()))
    };
    let mut out = Vec::new();
    for item in text.split(',') {
        let item = item.trim();
        if item.is_empty() {
            return Err(format!("empty item in the list '{text}'"));
        }
        let range = if let Some((a, b)) = item.split_once("..=") {
            Some((number(a)?, number(b)?))
        } else if let Some((a, b)) = item.split_once("..") {
            let (a, b) = (number(a)?, number(b)?);
            if b == 0 || b <= a {
                return Err(format!("the range '{item}' is empty"));
            }
            Some((a, b - 1))
        } else if let Some((a, b)) = item.split_once('-').filter(|_| dash_ranges) {
            Some((number(a)?, number(b)?))
        } else {
            None
        };
        match range {
            Some((a, b)) if b < a => return Err(format!("the range '{item}' is empty")),
            Some((a, b)) if b - a > MAX_PROCS => return Err(format!("the range '{item}' is too long")),
            Some((a, b)) => out.extend(a..=b),
            None => out.push(number(item)?),
        }
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

pub fn parse_procs(text: &str) -> std::result::Result<ProcList, String> {
    let counts = parse_number_list(text, "processes", false)?;
    if let Some(&small) = counts.iter().find(|&&n| n < 2) {
        return Err(format!("a ring needs at least 2 members, got {small}"));
    }
    if let Some(&big) = counts.iter().find(|&&n| n > MAX_PROCS) {
        return Err(format!("{big} members is more than schedlab supports ({MAX_PROCS})"));
    }
    Ok(ProcList(counts))
}

pub fn parse_workload_procs(text: &str) -> std::result::Result<ProcList, String> {
    let counts = parse_number_list(text, "processes", false)?;
    if counts.contains(&0) {
        return Err("a trial needs at least 1 process, got 0".into());
    }
    if let Some(&big) = counts.iter().find(|&&n| n > MAX_PROCS) {
        return Err(format!("{big} processes is more than schedlab supports ({MAX_PROCS})"));
    }
    Ok(ProcList(counts))
}

/// "other,fifo,rr": each policy once, in the order given.
pub fn parse_policies(text: &str) -> std::result::Result<PolicyList, String> {
    let mut out = Vec::new();
    for item in text.split(',').map(str::trim) {
        let policy = Policy::ALL.into_iter().find(|p| p.as_str() == item.to_ascii_lowercase()).ok_or_else(|| {
            format!("unknown policy '{item}': expected one of other, fifo, rr, batch, idle (comma-separated)")
        })?;
        if !out.contains(&policy) {
            out.push(policy);
        }
    }
    Ok(PolicyList(out))
}

pub fn parse_iterations(text: &str) -> std::result::Result<u64, String> {
    let n: u64 = text.trim().replace('_', "").parse().map_err(|_| format!("'{text}' is not a whole number"))?;
    if n == 0 {
        return Err("--iterations must be at least 1".into());
    }
    Ok(n)
}

/// "100KiB", "1MiB", "4k", "512", "2M": bytes (k/K/KiB = 1024).
pub fn parse_size(text: &str) -> std::result::Result<u64, String> {
    let t = text.trim();
    let split = t.find(|c: char| !c.is_ascii_digit() && c != '_').unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let value: u64 =
        num.replace('_', "").parse().map_err(|_| format!("'{text}' is not a size (try 1KiB, 100KiB, 4M)"))?;
    let scale: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        other => return Err(format!("unknown size unit '{other}' in '{text}' (use B, KiB, MiB or GiB)")),
    };
    let bytes = value.checked_mul(scale).ok_or_else(|| format!("the size '{text}' is too large"))?;
    if bytes == 0 {
        return Err(format!("the size '{text}' must be greater than zero"));
    }
    if bytes > MAX_SIZE {
        return Err(format!("the size '{text}' is more than the 1 GiB schedlab allows"));
    }
    Ok(bytes)
}

pub fn parse_cpu_list(text: &str) -> std::result::Result<CpuList, String> {
    let cpus = parse_number_list(text, "a CPU", true)?;
    if let Some(&big) = cpus.iter().find(|&&c| c >= 8 * std::mem::size_of::<libc::cpu_set_t>()) {
        return Err(format!("CPU {big} is beyond what Linux can address"));
    }
    Ok(CpuList(cpus))
}

pub fn parse_laps(text: &str) -> std::result::Result<u64, String> {
    let laps: u64 =
        text.trim().replace('_', "").parse().map_err(|_| format!("'{text}' is not a whole number of laps"))?;
    if laps == 0 {
        return Err("--laps must be at least 1".into());
    }
    Ok(laps)
}

/// "5s", "250ms", "100us", "1.5m", "2h", "30" (seconds).
pub fn parse_duration(text: &str) -> std::result::Result<Duration, String> {
    let t = text.trim();
    let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let value: f64 = num.parse().map_err(|_| format!("'{text}' is not a duration (try 5s, 250ms, 100us)"))?;
    let scale = match unit.trim() {
        "ns" => 1e-9,
        "us" | "µs" => 1e-6,
        "ms" => 1e-3,
        "" | "s" => 1.0,
        "m" | "min" => 60.0,
        "h" => 3600.0,
        other => return Err(format!("unknown time unit '{other}' in '{text}' (use ns, us, ms, s, m or h)")),
    };
    let secs = value * scale;
    if !secs.is_finite() || secs <= 0.0 {
        return Err(format!("the duration '{text}' must be greater than zero"));
    }
    if secs > 7.0 * 86400.0 {
        return Err(format!("the duration '{text}' is longer than a week"));
    }
    Ok(Duration::from_secs_f64(secs))
}

/// Check a policy/priority pair and fill in the default priority.
pub fn resolve_priority(policy: Policy, prio: Option<i32>) -> Result<i32> {
    let (lo, hi) = policy.priority_range();
    match prio {
        None => Ok(policy.default_priority()),
        Some(p) if (lo..=hi).contains(&p) => Ok(p),
        Some(p) if policy.is_realtime() => {
            Err(Error::usage(format!("--prio {p} is out of range for {}: use {lo} to {hi}", policy.kernel_name())))
        }
        Some(p) => Err(Error::usage(format!(
            "--prio {p} does not apply to {}: static priorities are only for fifo and rr (1-99)",
            policy.kernel_name()
        ))),
    }
}

impl RingArgs {
    /// One spec per ring size, in ascending order (the first is the projection's base).
    pub fn to_specs(&self) -> Result<Vec<RingSpec>> {
        let prio = resolve_priority(self.policy, self.prio)?;
        if self.work_kb > MAX_WORK_KB {
            return Err(Error::usage(format!(
                "--work-kb {} is more than the 1 GiB per member schedlab allows",
                self.work_kb
            )));
        }
        if matches!(&self.cpus, Some(c) if c.0.is_empty()) {
            return Err(Error::usage("--cpus names no CPU"));
        }
        let length = match (self.laps, self.duration) {
            (_, Some(d)) => RingLength::Duration(d),
            (Some(l), None) => RingLength::Laps(l),
            (None, None) => RingLength::Laps(DEFAULT_LAPS),
        };
        if let RingLength::Laps(laps) = length {
            if self.procs.0.iter().any(|&n| laps.checked_mul(n as u64).is_none()) {
                return Err(Error::usage("--laps times --procs overflows the hop counter"));
            }
        }
        Ok(self
            .procs
            .0
            .iter()
            .map(|&procs| RingSpec {
                procs,
                length,
                mode: self.mode,
                ipc: self.ipc,
                pin: self.pin,
                cpus: self.cpus.as_ref().map(|c| c.0.clone()),
                policy: self.policy,
                prio,
                work_kb: self.work_kb,
                timeout: self.timeout,
            })
            .collect())
    }
}

impl LatencyArgs {
    pub fn interval_ns(&self) -> u64 {
        match (self.freq, self.interval) {
            (Some(hz), _) => (1e9 / hz).round() as u64,
            (None, Some(d)) => d.as_nanos().min(u128::from(u64::MAX)) as u64,
            (None, None) => 1_000_000,
        }
    }

    /// The policies to run, each with its priority.
    pub fn policies(&self) -> Result<Vec<(Policy, i32)>> {
        let list = match &self.compare_policies {
            Some(l) => l.0.clone(),
            None => vec![self.policy],
        };
        if self.prio.is_some() && !list.iter().any(|p| p.is_realtime()) {
            return Err(Error::usage("--prio applies only to fifo and rr, and no real-time policy was chosen"));
        }
        list.into_iter()
            .map(|p| {
                let prio = if p.is_realtime() { self.prio.unwrap_or(LATENCY_DEFAULT_RT_PRIO) } else { 0 };
                resolve_priority(p, Some(prio)).map(|prio| (p, prio))
            })
            .collect()
    }
}

impl WorkloadArgs {
    /// One spec per policy x procs cell, policies in the order given, counts ascending.
    pub fn to_specs(&self) -> Result<Vec<WorkloadSpec>> {
        let policies = &self.policy.0;
        if self.prio.is_some() && !policies.iter().any(|p| p.is_realtime()) {
            return Err(Error::usage("--prio applies only to fifo and rr, and no real-time policy was chosen"));
        }
        if let Some(nice) = self.nice {
            if !(-20..=19).contains(&nice) {
                return Err(Error::usage(format!("--nice {nice} is out of range: use -20 to 19")));
            }
            if !policies.iter().any(|p| matches!(p, Policy::Other | Policy::Batch)) {
                return Err(Error::usage("--nice applies only to other and batch, and neither was chosen"));
            }
        }
        if self.workload == WorkloadKind::Io {
            if self.block_size > self.transfer_size {
                return Err(Error::usage(format!(
                    "--block-size {} is larger than --transfer-size {}: a child could not copy even one block",
                    self.block_size, self.transfer_size
                )));
            }
            if self.transfer_size % self.block_size != 0 {
                return Err(Error::usage(format!(
                    "--transfer-size {} is not a multiple of --block-size {}: choose sizes that divide, \
                     e.g. --transfer-size {}",
                    self.transfer_size,
                    self.block_size,
                    self.transfer_size - self.transfer_size % self.block_size
                )));
            }
        }
        if self.workload == WorkloadKind::Cpu && self.dir.is_some() {
            return Err(Error::usage("--dir applies only to the io and mixed workloads, which write files"));
        }
        let iterations = self.iterations.unwrap_or(match self.workload {
            WorkloadKind::Mixed => DEFAULT_MIXED_ITERATIONS,
            _ => DEFAULT_CPU_ITERATIONS,
        });
        let params = WorkloadParams {
            kind: self.workload,
            iterations,
            transfer_size: self.transfer_size,
            block_size: self.block_size,
            seed: self.seed,
        };
        let mut specs = Vec::new();
        for &policy in policies {
            let prio = if policy.is_realtime() { resolve_priority(policy, self.prio.or(Some(99)))? } else { 0 };
            let nice = self.nice.filter(|_| matches!(policy, Policy::Other | Policy::Batch));
            for &procs in &self.procs.0 {
                specs.push(WorkloadSpec { params: params.clone(), procs, policy, prio, nice, timeout: self.timeout });
            }
        }
        Ok(specs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn procs_lists_and_ranges() {
        assert_eq!(parse_procs("2,4,8").unwrap().0, vec![2, 4, 8]);
        assert_eq!(parse_procs("8").unwrap().0, vec![8]);
        assert_eq!(parse_procs("2..=5").unwrap().0, vec![2, 3, 4, 5]);
        assert_eq!(parse_procs("2..5").unwrap().0, vec![2, 3, 4]);
        assert_eq!(parse_procs("16, 4,4, 2..=3").unwrap().0, vec![2, 3, 4, 16]);
        assert_eq!(parse_procs("1_000").unwrap().0, vec![1000]);
        assert_eq!(parse_procs(NCAR_COUNTS).unwrap().0, vec![2, 4, 8, 10, 16, 20, 32, 48, 64]);
    }

    #[test]
    fn procs_refuses_small_empty_and_junk() {
        assert!(parse_procs("1").unwrap_err().contains("at least 2"));
        assert!(parse_procs("0").unwrap_err().contains("at least 2"));
        assert!(parse_procs("5..=3").unwrap_err().contains("empty"));
        assert!(parse_procs("4..4").unwrap_err().contains("empty"));
        assert!(parse_procs("two").unwrap_err().contains("not a whole number"));
        assert!(parse_procs("2,,4").unwrap_err().contains("empty item"));
        assert!(parse_procs("-3").is_err());
        assert!(parse_procs(&format!("{}", MAX_PROCS + 1)).unwrap_err().contains("more than"));
    }

    #[test]
    fn cpu_lists_accept_kernel_notation() {
        assert_eq!(parse_cpu_list("0-2,5").unwrap().0, vec![0, 1, 2, 5]);
        assert_eq!(parse_cpu_list("3").unwrap().0, vec![3]);
        assert!(parse_cpu_list("100000").is_err());
    }

    #[test]
    fn laps_must_be_positive() {
        assert_eq!(parse_laps("1_000").unwrap(), 1000);
        assert!(parse_laps("0").unwrap_err().contains("at least 1"));
        assert!(parse_laps("-1").is_err());
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("5s").unwrap(), Duration::from_secs(5));
        assert_eq!(parse_duration("250ms").unwrap(), Duration::from_millis(250));
        assert_eq!(parse_duration("100us").unwrap(), Duration::from_micros(100));
        assert_eq!(parse_duration("1.5m").unwrap(), Duration::from_secs(90));
        assert_eq!(parse_duration("2").unwrap(), Duration::from_secs(2));
        assert!(parse_duration("0s").unwrap_err().contains("greater than zero"));
        assert!(parse_duration("5 parsecs").unwrap_err().contains("unknown time unit"));
        assert!(parse_duration("fast").is_err());
    }

    #[test]
    fn priorities() {
        assert_eq!(resolve_priority(Policy::Fifo, None).unwrap(), 50);
        assert_eq!(resolve_priority(Policy::Rr, Some(99)).unwrap(), 99);
        assert!(resolve_priority(Policy::Fifo, Some(0)).unwrap_err().to_string().contains("1 to 99"));
        assert!(resolve_priority(Policy::Other, Some(5)).unwrap_err().to_string().contains("only for fifo and rr"));
        assert_eq!(resolve_priority(Policy::Batch, Some(0)).unwrap(), 0);
    }

    #[test]
    fn ring_specs_are_ascending_with_defaults() {
        let cli = Cli::try_parse_from(["schedlab", "ring", "--procs", "8,2", "--policy", "rr"]).unwrap();
        let Command::Ring(args) = cli.command else { panic!("not ring") };
        let specs = args.to_specs().unwrap();
        assert_eq!(specs.iter().map(|s| s.procs).collect::<Vec<_>>(), vec![2, 8]);
        assert_eq!(specs[0].length, RingLength::Laps(DEFAULT_LAPS));
        assert_eq!(specs[0].prio, 50);
        assert_eq!(specs[0].pin, Pin::Same);
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("100KiB").unwrap(), 102_400);
        assert_eq!(parse_size("1k").unwrap(), 1024);
        assert_eq!(parse_size("4096").unwrap(), 4096);
        assert_eq!(parse_size("2M").unwrap(), 2 << 20);
        assert!(parse_size("0").unwrap_err().contains("greater than zero"));
        assert!(parse_size("5 parsecs").unwrap_err().contains("unknown size unit"));
        assert!(parse_size("2GiB").unwrap_err().contains("1 GiB"));
    }

    #[test]
    fn policy_lists() {
        assert_eq!(parse_policies("other,fifo,rr").unwrap().0, vec![Policy::Other, Policy::Fifo, Policy::Rr]);
        assert_eq!(parse_policies("FIFO, fifo").unwrap().0, vec![Policy::Fifo]);
        assert!(parse_policies("fifoo").unwrap_err().contains("unknown policy 'fifoo'"));
    }

    fn workload(args: &[&str]) -> Result<Vec<WorkloadSpec>> {
        let mut argv = vec!["schedlab", "workload"];
        argv.extend_from_slice(args);
        let Command::Workload(w) = Cli::try_parse_from(argv).unwrap().command else { panic!("not workload") };
        w.to_specs()
    }

    #[test]
    fn workload_specs_cross_policies_and_counts() {
        let specs = workload(&["cpu", "--procs", "4,2", "--policy", "other,fifo"]).unwrap();
        let cells: Vec<(Policy, usize, i32)> = specs.iter().map(|s| (s.policy, s.procs, s.prio)).collect();
        assert_eq!(
            cells,
            vec![(Policy::Other, 2, 0), (Policy::Other, 4, 0), (Policy::Fifo, 2, 99), (Policy::Fifo, 4, 99)]
        );
        assert_eq!(specs[0].params.iterations, DEFAULT_CPU_ITERATIONS);
        let mixed = workload(&["mixed", "--policy", "rr", "--prio", "10"]).unwrap();
        assert_eq!((mixed[0].prio, mixed[0].params.iterations), (10, DEFAULT_MIXED_ITERATIONS));
    }

    #[test]
    fn workload_refuses_bad_combinations() {
        let err = |args: &[&str]| workload(args).unwrap_err().to_string();
        assert!(err(&["io", "--block-size", "4KiB", "--transfer-size", "1KiB"]).contains("larger than"));
        assert!(err(&["io", "--block-size", "1000", "--transfer-size", "2500"]).contains("not a multiple"));
        assert!(err(&["cpu", "--prio", "50"]).contains("no real-time policy"));
        assert!(err(&["cpu", "--policy", "fifo", "--nice", "5"]).contains("neither was chosen"));
        assert!(err(&["cpu", "--nice", "30"]).contains("out of range"));
        assert!(err(&["cpu", "--dir", "/tmp"]).contains("only to the io and mixed"));
        assert!(Cli::try_parse_from(["schedlab", "workload", "cpu", "--procs", "0"]).is_err());
        assert!(Cli::try_parse_from(["schedlab", "workload", "gpu"]).is_err());
    }

    #[test]
    fn laps_and_duration_conflict() {
        assert!(Cli::try_parse_from(["schedlab", "ring", "--laps", "5", "--duration", "1s"]).is_err());
    }
}
