//! Command-line definitions (clap derive) and their validation into specs. Nothing here
//! makes a system call: what needs the OS (CPUs, privileges, limits) is checked by the
//! command before it forks anything.

use crate::error::{Error, Result};
use crate::model::{Ipc, Pin, Policy, RingLength, RingMode, RingSpec};
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
    /// The main job: run the default experiment and print its results
    Run(RunArgs),
}

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
    /// One JSON object per result line, instead of tables
    #[arg(long)]
    pub json: bool,
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
            })
            .collect())
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
    fn laps_and_duration_conflict() {
        assert!(Cli::try_parse_from(["schedlab", "ring", "--laps", "5", "--duration", "1s"]).is_err());
    }
}
