//! `schedlab rusage -- CMD`: the NCAR `getrusage` helper and `/usr/bin/time -v` in one.
//! Runs the command, waits for it with wait4 (which, on Linux, folds in the descendants
//! it waited for), and reports wall time and every `struct rusage` field.
//!
//! The command stays in schedlab's process group so it keeps the terminal; schedlab
//! ignores SIGINT/SIGQUIT (the terminal delivers them to the command too) and passes
//! SIGTERM and SIGHUP on. If schedlab itself is killed, the command gets SIGTERM.

use crate::cli::RusageArgs;
use crate::error::{describe_io, signal_name, Error, Result};
use crate::model::{ns_to_s, Usage};
use crate::sys::process;
use crate::sys::rusage::ExitKind;
use crate::sys::signals::SignalWatch;
use serde::Serialize;
use std::ffi::OsString;
use std::io::Write;
use std::process::Command;

/// What `rusage` measured.
pub struct ProgramUsage {
    pub command: Vec<OsString>,
    pub wall_ns: u64,
    pub exit: ExitKind,
    pub usage: Usage,
}

pub fn run(args: &RusageArgs) -> Result<i32> {
    // Open the output first: an unwritable path must fail before the command runs.
    let mut output: Box<dyn Write> = match &args.output {
        Some(path) => Box::new(crate::report::output::create_output(path)?),
        None => Box::new(std::io::stderr()),
    };
    let measured = match measure(&args.command) {
        Ok(m) => m,
        Err(Error::Environment(msg)) if msg.starts_with("cannot run") => {
            eprintln!("schedlab: {msg}");
            return Ok(127);
        }
        Err(e) => return Err(e),
    };
    let text = match args.print.format() {
        crate::cli::TableFormat::Text => to_text(&measured),
        format => crate::report::output::object_text(&to_json(&measured), format),
    };
    output.write_all(text.as_bytes()).map_err(|e| Error::os("writing the report", e))?;
    Ok(measured.exit.shell_code())
}

pub fn measure(command: &[OsString]) -> Result<ProgramUsage> {
    let (program, rest) = command.split_first().ok_or_else(|| Error::usage("no command given after --"))?;
    let watch = SignalWatch::new(&[libc::SIGINT, libc::SIGQUIT, libc::SIGTERM, libc::SIGHUP])
        .map_err(|e| Error::os("setting up signal handling", e))?;
    let mut cmd = Command::new(program);
    cmd.args(rest);
    let options = process::Options {
        die_with_parent: Some(libc::SIGTERM),
        // The terminal sends SIGINT and SIGQUIT to the command itself: they are not
        // passed on twice, and the command decides alone how long it takes to stop.
        forward_signals: vec![libc::SIGTERM, libc::SIGHUP],
        kill_after_signal: None,
        ..process::Options::default()
    };
    let running = process::spawn(&mut cmd, options)
        .map_err(|e| Error::env(format!("cannot run '{}': {}", program.to_string_lossy(), describe_io(&e))))?;
    let finished = running.supervise(Some(&watch)).map_err(|e| Error::os("waiting for the command", e))?;
    Ok(ProgramUsage {
        command: command.to_vec(),
        wall_ns: finished.elapsed.as_nanos() as u64,
        exit: finished.exit,
        usage: finished.usage,
    })
}

fn command_line(command: &[OsString]) -> String {
    command.iter().map(|a| a.to_string_lossy().into_owned()).collect::<Vec<_>>().join(" ")
}

/// What Linux leaves at 0 in `struct rusage`.
const NOT_MAINTAINED: &str = "(not maintained by Linux)";

/// The `struct rusage` fields after its times and maxrss, by the kernel's names (the JSON
/// keys and the text rows both), with what each counts.
fn counters(u: &Usage) -> [(&'static str, u64, &'static str); 13] {
    [
        ("ixrss", u.ixrss, NOT_MAINTAINED),
        ("idrss", u.idrss, NOT_MAINTAINED),
        ("isrss", u.isrss, NOT_MAINTAINED),
        ("minflt", u.minflt, "page faults served without I/O"),
        ("majflt", u.majflt, "page faults that needed I/O"),
        ("nswap", u.nswap, NOT_MAINTAINED),
        ("inblock", u.inblock, "512-byte blocks read from storage"),
        ("oublock", u.oublock, "512-byte blocks written to storage"),
        ("msgsnd", u.msgsnd, NOT_MAINTAINED),
        ("msgrcv", u.msgrcv, NOT_MAINTAINED),
        ("nsignals", u.nsignals, NOT_MAINTAINED),
        ("nvcsw", u.nvcsw, "voluntary context switches"),
        ("nivcsw", u.nivcsw, "involuntary context switches"),
    ]
}

/// `rusage --format json`: the command, its times and maxrss, every counter of
/// `struct rusage` by the kernel's name, and how it exited.
#[derive(Serialize)]
pub struct UsageDoc {
    command: Vec<String>,
    wall_s: f64,
    utime_s: f64,
    stime_s: f64,
    cpu_s: f64,
    maxrss_kb: u64,
    #[serde(flatten)]
    counters: Counters,
    exit_code: i32,
    signal: Option<String>,
}

/// The counters after maxrss, as keys by their kernel names.
struct Counters([(&'static str, u64, &'static str); 13]);

impl Serialize for Counters {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for (name, value, _) in &self.0 {
            m.serialize_entry(name, value)?;
        }
        m.end()
    }
}

pub fn to_json(m: &ProgramUsage) -> UsageDoc {
    let u = &m.usage;
    UsageDoc {
        command: m.command.iter().map(|a| a.to_string_lossy().into_owned()).collect(),
        wall_s: ns_to_s(m.wall_ns as f64),
        utime_s: ns_to_s(u.utime_ns as f64),
        stime_s: ns_to_s(u.stime_ns as f64),
        cpu_s: ns_to_s(u.cpu_ns() as f64),
        maxrss_kb: u.maxrss_kb,
        counters: Counters(counters(u)),
        exit_code: m.exit.shell_code(),
        signal: match m.exit {
            ExitKind::Signal(s) => Some(signal_name(s)),
            ExitKind::Code(_) => None,
        },
    }
}

pub fn to_text(m: &ProgramUsage) -> String {
    let u = &m.usage;
    let cpu_pct = if m.wall_ns > 0 { 100.0 * u.cpu_ns() as f64 / m.wall_ns as f64 } else { 0.0 };
    let exit = match m.exit {
        ExitKind::Code(c) => format!("{c}"),
        ExitKind::Signal(s) => format!("{} (killed by {})", 128 + s, signal_name(s)),
    };
    let mut out = format!("command   {}\nexit      {exit}\n", command_line(&m.command));
    let mut rows: Vec<(&str, String, &str)> = vec![
        ("wall", format!("{:.6}", ns_to_s(m.wall_ns as f64)), "s"),
        ("utime", format!("{:.6}", ns_to_s(u.utime_ns as f64)), "s  user CPU"),
        ("stime", format!("{:.6}", ns_to_s(u.stime_ns as f64)), "s  system CPU"),
        ("cpu", format!("{:.6}", ns_to_s(u.cpu_ns() as f64)), "s  utime+stime"),
        ("cpu%", format!("{cpu_pct:.0}"), "%  (utime+stime)/wall"),
        ("maxrss", u.maxrss_kb.to_string(), "KiB  largest resident set"),
    ];
    rows.extend(counters(u).map(|(name, value, note)| (name, value.to_string(), note)));
    for (name, value, note) in rows {
        let line = format!("{name:<9} {value:>12} {note}");
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}
