//! Background load: what a trial may run beside its measurement (as rteval and
//! jitterdebugger do, so latency is measured on a busy machine, not an idle one), and
//! what that load itself achieved during the measured window, so a reader knows how hard
//! it pushed.

use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// What the load processes do.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LoadKind {
    /// No load: the trial runs on an otherwise idle machine (as far as schedlab goes).
    #[default]
    None,
    /// Busy loops: pure CPU demand.
    Cpu,
    /// O_SYNC writes into the load directory: block-layer and journal work, wakeups.
    Io,
    /// hackbench-style messages through pipes between process pairs: wakeups and switches.
    Pipe,
    /// Each of cpu, io and pipe, N instances of each.
    Mixed,
}

impl LoadKind {
    pub const ALL: [LoadKind; 5] = [LoadKind::None, LoadKind::Cpu, LoadKind::Io, LoadKind::Pipe, LoadKind::Mixed];

    pub fn as_str(self) -> &'static str {
        match self {
            LoadKind::None => "none",
            LoadKind::Cpu => "cpu",
            LoadKind::Io => "io",
            LoadKind::Pipe => "pipe",
            LoadKind::Mixed => "mixed",
        }
    }

    pub fn writes_files(self) -> bool {
        matches!(self, LoadKind::Io | LoadKind::Mixed)
    }
}

/// `--load KIND[:N]` as given: the kind and, optionally, the number of instances.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LoadArg {
    pub kind: LoadKind,
    pub instances: Option<u32>,
}

/// The most instances of one kind schedlab starts (each pipe instance is two processes).
pub const MAX_LOAD_INSTANCES: u32 = 4096;

/// "cpu", "io:4", "none". N must be 1 or more; `none` takes no count.
pub fn parse_load(text: &str) -> std::result::Result<LoadArg, String> {
    let text = text.trim();
    let (kind_text, count) = match text.split_once(':') {
        Some((k, n)) => (k.trim(), Some(n.trim())),
        None => (text, None),
    };
    let kind = LoadKind::ALL.into_iter().find(|k| k.as_str() == kind_text.to_ascii_lowercase()).ok_or_else(|| {
        format!(
            "unknown load kind '{kind_text}': expected one of none, cpu, io, pipe, mixed (optionally :N, e.g. cpu:2)"
        )
    })?;
    let instances = match count {
        None => None,
        Some(_) if kind == LoadKind::None => return Err("load 'none' takes no count".into()),
        Some(n) => match n.replace('_', "").parse::<u32>() {
            Ok(0) => return Err(format!("'{text}': the number of load instances must be at least 1, got 0")),
            Ok(n) if n > MAX_LOAD_INSTANCES => {
                return Err(format!("'{text}': {n} load instances is more than schedlab starts ({MAX_LOAD_INSTANCES})"))
            }
            Ok(n) => Some(n),
            Err(_) => return Err(format!("'{text}': '{n}' is not a whole number of load instances")),
        },
    };
    Ok(LoadArg { kind, instances })
}

/// The load a trial runs beside its measurement, validated (no system calls: the CPUs,
/// the nice value and the directory are checked by the preflight).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct LoadSpec {
    pub kind: LoadKind,
    /// Instances of each kind; `None`: one per CPU the load may use.
    pub instances: Option<u32>,
    /// CPUs the load may run on (the scheduler places it within them); `None`: every CPU
    /// this process may use.
    pub cpus: Option<Vec<usize>>,
    /// Nice value of every load process (they are always SCHED_OTHER); `None`: schedlab's own.
    pub nice: Option<i32>,
    /// Where io load writes (default: the temp directory).
    pub dir: Option<PathBuf>,
}

impl LoadSpec {
    pub fn is_none(&self) -> bool {
        self.kind == LoadKind::None
    }

    /// "cpu x2 nice 0", "io x1 on CPUs 1": the configuration in a few words.
    pub fn describe(&self) -> String {
        if self.is_none() {
            return "none".into();
        }
        let mut text = match self.instances {
            Some(n) => format!("{} x{n}", self.kind.as_str()),
            None => format!("{} x(one per CPU)", self.kind.as_str()),
        };
        if let Some(cpus) = &self.cpus {
            text.push_str(&format!(" on CPUs {}", crate::model::parse::format_cpu_list(cpus)));
        }
        if let Some(nice) = self.nice {
            text.push_str(&format!(" nice {nice}"));
        }
        text
    }
}

/// What the load did during one trial's measured window: counts over the window (not its
/// whole life), so the rates below are how hard it pushed while the trial measured.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct LoadOutcome {
    pub kind: LoadKind,
    /// Instances of each kind that ran (resolved: one per CPU when not given).
    pub instances: u32,
    /// Load processes in all (a pipe instance is two).
    pub processes: u32,
    /// The CPUs the load could use.
    pub cpus: Vec<usize>,
    pub nice: i32,
    /// From the window's start to its end, as the measuring process marked it.
    pub window_ns: u64,
    /// Busy-loop passes completed during the window (cpu load).
    pub loops: u64,
    /// Bytes written with O_SYNC during the window (io load).
    pub io_bytes: u64,
    /// Messages received during the window (pipe load).
    pub messages: u64,
    /// CPU time (user + system) of every load process over its whole life, from wait4:
    /// kept apart from every measured figure.
    pub cpu_ns: u64,
}

impl LoadOutcome {
    fn rate(&self, count: u64) -> f64 {
        if self.window_ns == 0 {
            return 0.0;
        }
        count as f64 * 1e9 / self.window_ns as f64
    }

    pub fn loops_per_s(&self) -> f64 {
        self.rate(self.loops)
    }

    pub fn io_bytes_per_s(&self) -> f64 {
        self.rate(self.io_bytes)
    }

    pub fn messages_per_s(&self) -> f64 {
        self.rate(self.messages)
    }

    /// "cpu x2: 1.23 M loops/s": what the load achieved, in a few words.
    pub fn summary(&self) -> String {
        let mut parts = Vec::new();
        if matches!(self.kind, LoadKind::Cpu | LoadKind::Mixed) {
            parts.push(format!("{} loops/s", si(self.loops_per_s())));
        }
        if matches!(self.kind, LoadKind::Io | LoadKind::Mixed) {
            parts.push(format!("{}B/s", si(self.io_bytes_per_s())));
        }
        if matches!(self.kind, LoadKind::Pipe | LoadKind::Mixed) {
            parts.push(format!("{} msg/s", si(self.messages_per_s())));
        }
        format!("{} x{}: {}", self.kind.as_str(), self.instances, parts.join(", "))
    }
}

/// 1234567 -> "1.23 M".
pub fn si(value: f64) -> String {
    let (scaled, unit) = match value.abs() {
        v if v >= 1e9 => (value / 1e9, " G"),
        v if v >= 1e6 => (value / 1e6, " M"),
        v if v >= 1e3 => (value / 1e3, " k"),
        _ => (value, " "),
    };
    format!("{scaled:.3}{unit}").replace("  ", " ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn load_arguments_parse_and_refuse() {
        assert_eq!(parse_load("cpu").unwrap(), LoadArg { kind: LoadKind::Cpu, instances: None });
        assert_eq!(parse_load("pipe:3").unwrap(), LoadArg { kind: LoadKind::Pipe, instances: Some(3) });
        assert_eq!(parse_load("none").unwrap().kind, LoadKind::None);
        assert!(parse_load("gpu").unwrap_err().contains("unknown load kind 'gpu'"));
        assert!(parse_load("cpu:0").unwrap_err().contains("at least 1"));
        assert!(parse_load("cpu:x").unwrap_err().contains("not a whole number"));
        assert!(parse_load("none:2").unwrap_err().contains("no count"));
        assert!(parse_load("io:99999").unwrap_err().contains("more than"));
    }

    #[test]
    fn rates_are_per_second_of_the_window() {
        let o = LoadOutcome {
            kind: LoadKind::Mixed,
            window_ns: 500_000_000,
            loops: 10,
            io_bytes: 4096,
            messages: 3,
            ..LoadOutcome::default()
        };
        assert_eq!((o.loops_per_s(), o.io_bytes_per_s(), o.messages_per_s()), (20.0, 8192.0, 6.0));
        assert!(o.summary().contains("msg/s"), "{}", o.summary());
        assert_eq!(LoadOutcome::default().loops_per_s(), 0.0);
        assert_eq!(si(1_234_567.0), "1.235 M");
    }
}
