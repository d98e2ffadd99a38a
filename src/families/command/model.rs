//! The `command` family: any program, run as one trial under the policy, priority, nice
//! value, CPUs and background load asked for, which its children inherit. Its figures are
//! those of the whole process tree (wall, CPU, switches, faults, time waiting for a CPU)
//! and any the user declares, parsed from the program's output (`--figure`, or
//! `figures = [...]` in a suite).

use crate::error::{Error, Result};
use crate::families::shared::SpecSource;
use crate::model::load::LoadSpec;
// The suite keys go through the same parsers as the other families' flags.
use crate::model::options::{
    check_nice, check_prio, chosen_cpus, de_cpus, de_duration, read_family, read_with_groups, PolicyOptions,
};
use crate::model::parse::*;
use crate::model::{Policy, Usage};
use clap::Args;
use serde::Deserializer;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::OnceLock;
use std::time::Duration;

/// How long a command may run unless told otherwise.
pub const DEFAULT_COMMAND_TIMEOUT: Duration = Duration::from_secs(600);

/// The most output of a command that is kept for parsing its figures (the rest is read
/// and dropped, so a chatty program never blocks on a full pipe).
pub const OUTPUT_KEPT_BYTES: usize = 16 << 20;

/// `schedlab command` flags and command experiment keys.
#[derive(Args, Deserialize, Debug, Clone, Default, PartialEq)]
// The derived reader reads the family's own keys; the load group is read by its own type
// (`options::read_with_groups`).
#[serde(remote = "Self", rename_all = "kebab-case", default)]
#[command(mut_arg("policy", |a| a.help("Policies to compare: one or a list of other,fifo,rr,batch,idle [default: other]")), mut_arg("prio", |a| a.help("Static priority for fifo/rr (1-99) [default: 50]")), mut_arg("nice", |a| a.help("Nice value (-20..19) for the other and batch policies")))]
pub struct CommandOptions {
    #[command(flatten)]
    #[serde(skip)]
    pub scheduling: PolicyOptions,

    /// CPUs the command (and every process it starts) may run on (e.g. 0 or 0-3) [default: every allowed CPU]
    #[arg(long, value_name = "LIST", value_parser = parse_cpu_list)]
    #[serde(deserialize_with = "de_cpus")]
    pub cpus: Option<CpuList>,

    /// Stop a run that goes on longer than this (its whole process tree is killed) and record it as timed out [default: 10m]
    #[arg(long, value_name = "TIME", value_parser = parse_duration, allow_hyphen_values = true)]
    #[serde(deserialize_with = "de_duration")]
    pub timeout: Option<Duration>,

    #[command(flatten)]
    #[serde(skip)]
    pub background: crate::model::options::LoadOptions,

    /// A figure parsed from the command's output (stdout, then stderr): NAME[,unit=U][,better=lower|higher]=regex:PATTERN
    /// (the first capture group of the last match) or NAME[,…]=json:/POINTER (into the last line that is a JSON
    /// object); repeat for more. In a suite: figures = [{ name = "p99_us", regex = '99\.0th: +(\d+)', unit = "us",
    /// better = "lower" }]
    #[arg(long = "figure", value_name = "DECLARATION", value_parser = parse_figure_flag)]
    pub figures: Vec<FigureDecl>,

    /// The program and its arguments (after `--` on the command line; `cmd = ["hackbench", "-g", "4"]` in a suite)
    #[arg(last = true, value_name = "CMD")]
    pub cmd: Vec<String>,
}

/// Where a declared figure is read from in the command's output.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FigureSource {
    /// The first capture group of the pattern's last match.
    Regex(String),
    /// An RFC 6901 pointer into the last output line that is a JSON object (stored and
    /// written in a suite as `json`).
    #[serde(rename = "json")]
    Pointer(String),
}

/// Which way a declared figure is better, if either.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    Lower,
    Higher,
    #[default]
    Neither,
}

/// The keys of the command family's own figures and of the background load's
/// (`families::command::figures::ALL`, `families::figures::load::ALL`), which a declared
/// figure may not take: written out here, beneath the registry that reads this file, and
/// held equal to the registry's by its tests.
pub(crate) const OWN_FIGURE_KEYS: [&str; 17] = [
    "wall_s",
    "user_s",
    "sys_s",
    "cpu_pct",
    "nvcsw",
    "nivcsw",
    "minflt",
    "majflt",
    "cpu_wait_s",
    "load_nice",
    "load_instances",
    "load_processes",
    "load_window_s",
    "load_loops_per_s",
    "load_io_bytes_per_s",
    "load_messages_per_s",
    "load_cpu_s",
];

/// A figure declared for a command in this process: what the registry makes its figure of.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Declaration {
    pub name: String,
    pub unit: Option<String>,
    pub better: Direction,
}

/// Every figure declared in this process (from a flag, a suite or a stored spec), the first
/// declaration of each name only, in order.
static DECLARATIONS: std::sync::Mutex<Vec<Declaration>> = std::sync::Mutex::new(Vec::new());

fn record_declaration(name: &str, unit: Option<&str>, better: Direction) {
    let mut all = DECLARATIONS.lock().unwrap_or_else(|e| e.into_inner());
    if !all.iter().any(|d| d.name == name) {
        all.push(Declaration { name: name.to_string(), unit: unit.map(str::to_string), better });
    }
}

/// The figures declared so far, in order: the registry's `declared()` reads them.
pub fn declarations() -> Vec<Declaration> {
    DECLARATIONS.lock().unwrap_or_else(|e| e.into_inner()).clone()
}

/// A figure the user declares for a command: its name (a figure key), where to read it,
/// its unit and which way is better.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FigureDecl {
    pub name: String,
    pub source: FigureSource,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unit: Option<String>,
    pub better: Direction,
}

/// The suite's spelling: `{ name = "p99_us", regex = '…', unit = "us", better = "lower" }`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FigureTable {
    name: String,
    regex: Option<String>,
    json: Option<String>,
    unit: Option<String>,
    better: Option<String>,
    /// The stored form's source (`{"regex": "…"}`), read back from a stored spec.
    source: Option<FigureSource>,
}

impl<'de> Deserialize<'de> for FigureDecl {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<FigureDecl, D::Error> {
        let t = FigureTable::deserialize(d)?;
        let source = match (t.regex, t.json, t.source) {
            (Some(r), None, None) => FigureSource::Regex(r),
            (None, Some(j), None) => FigureSource::Pointer(j),
            (None, None, Some(s)) => s,
            _ => {
                return Err(serde::de::Error::custom(format!(
                    "figure '{}' needs exactly one of regex = '…' or json = \"/pointer\"",
                    t.name
                )))
            }
        };
        let better = match t.better.as_deref() {
            None | Some("neither") => Direction::Neither,
            Some("lower") => Direction::Lower,
            Some("higher") => Direction::Higher,
            Some(other) => {
                return Err(serde::de::Error::custom(format!(
                    "figure '{}': better = \"{other}\" is not one of \"lower\", \"higher\"",
                    t.name
                )))
            }
        };
        FigureDecl::new(t.name, source, t.unit, better).map_err(serde::de::Error::custom)
    }
}

/// The keys a command's JSON line and CSV row already carry beside its figures.
const LINE_KEYS: [&str; 18] = [
    "family",
    "cmd",
    "policy",
    "prio",
    "nice",
    "cpus",
    "repeat",
    "status",
    "reason",
    "cpu_wait_source",
    "leftovers_killed",
    "load",
    "seq",
    "experiment",
    "run",
    "started",
    "elapsed_s",
    "params",
];

impl FigureDecl {
    /// A checked declaration: a key-like name, a pattern that compiles with one capture
    /// group, or a JSON pointer.
    pub fn new(
        name: String,
        source: FigureSource,
        unit: Option<String>,
        better: Direction,
    ) -> std::result::Result<FigureDecl, String> {
        let key_like = !name.is_empty()
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && name.starts_with(|c: char| c.is_ascii_alphabetic());
        if !key_like {
            return Err(format!(
                "figure name '{name}' must be letters, digits and _, starting with a letter (it becomes a column and a \
                 JSON key), e.g. p99_us"
            ));
        }
        if OWN_FIGURE_KEYS.contains(&name.as_str()) || LINE_KEYS.contains(&name.as_str()) {
            return Err(format!(
                "figure name '{name}' is taken by one of the command family's own figures or keys: choose another"
            ));
        }
        match &source {
            FigureSource::Regex(pattern) => {
                let re = regex::Regex::new(pattern).map_err(|e| format!("figure '{name}': regex: {e}"))?;
                if re.captures_len() < 2 {
                    return Err(format!(
                        "figure '{name}': the regex '{pattern}' has no capture group: put the number in one, e.g. \
                         'p99: +(\\d+)'"
                    ));
                }
            }
            FigureSource::Pointer(pointer) => {
                if !pointer.starts_with('/') {
                    return Err(format!(
                        "figure '{name}': '{pointer}' is not a JSON pointer: it starts with /, e.g. json:/rps or \
                         json:/latency/p99"
                    ));
                }
            }
        }
        if let Some(u) = unit.as_deref().filter(|u| u.is_empty() || u.len() > 16 || u.contains(char::is_whitespace)) {
            return Err(format!("figure '{name}': unit '{u}' must be a short word such as us, ms, s or ops/s"));
        }
        // Every declaration, from a flag, a suite or a stored spec, enters the registry, so
        // tables, findings, compare and exports know the figure wherever it is read.
        record_declaration(&name, unit.as_deref(), better);
        Ok(FigureDecl { name, source, unit, better })
    }

    /// The figure's value in a command's output: stdout first, then stderr.
    pub fn read(&self, stdout: &str, stderr: &str) -> Option<f64> {
        [stdout, stderr].into_iter().find_map(|text| self.read_one(text))
    }

    fn read_one(&self, text: &str) -> Option<f64> {
        match &self.source {
            FigureSource::Regex(pattern) => {
                let re = regex::Regex::new(pattern).ok()?;
                let caps = re.captures_iter(text).last()?;
                number(caps.get(1)?.as_str())
            }
            FigureSource::Pointer(pointer) => text.lines().rev().find_map(|line| {
                let value: serde_json::Value = serde_json::from_str(line.trim()).ok()?;
                let found = value.is_object().then(|| value.pointer(pointer)).flatten()?;
                found.as_f64().or_else(|| found.as_str().and_then(number))
            }),
        }
    }
}

/// A number as programs print them: "12.3", or "1,234.5" with thousands separators (a
/// comma that does not separate groups of three digits, as in "1,5", is no number).
fn number(text: &str) -> Option<f64> {
    let text = text.trim();
    let (whole, fraction) = text.split_once('.').map_or((text, None), |(w, f)| (w, Some(f)));
    let mut groups = whole.split(',');
    let lead = groups.next()?;
    let grouped: Vec<&str> = groups.collect();
    if !grouped.iter().all(|g| g.len() == 3 && g.bytes().all(|b| b.is_ascii_digit())) {
        return None;
    }
    let plain = format!("{lead}{}{}", grouped.concat(), fraction.map_or(String::new(), |f| format!(".{f}")));
    plain.parse::<f64>().ok().filter(|v| v.is_finite())
}

/// `--figure NAME[,unit=U][,better=lower|higher]=regex:PATTERN|json:/POINTER`.
pub fn parse_figure_flag(text: &str) -> std::result::Result<FigureDecl, String> {
    let split = ["=regex:", "=json:"].iter().filter_map(|m| text.find(m).map(|at| (at, *m))).min();
    let Some((at, marker)) = split else {
        return Err(format!(
            "'{text}' names no source: write NAME=regex:PATTERN (e.g. p99_us=regex:'99\\.0th: +(\\d+)') or \
             NAME=json:/POINTER (e.g. rps=json:/rps)"
        ));
    };
    let rest = &text[at + marker.len()..];
    let source = if marker == "=regex:" {
        FigureSource::Regex(rest.to_string())
    } else {
        FigureSource::Pointer(rest.to_string())
    };
    let mut head = text[..at].split(',');
    let name = head.next().unwrap_or_default().to_string();
    let (mut unit, mut better) = (None, Direction::Neither);
    for part in head {
        match part.split_once('=') {
            Some(("unit", u)) => unit = Some(u.to_string()),
            Some(("better", "lower")) => better = Direction::Lower,
            Some(("better", "higher")) => better = Direction::Higher,
            Some(("better", b)) => return Err(format!("better={b} is not one of lower, higher")),
            _ => return Err(format!("'{part}' in '{text}' is neither unit=U nor better=lower|higher")),
        }
    }
    FigureDecl::new(name, source, unit, better)
}

impl SpecSource for CommandOptions {
    type Spec = CommandSpec;

    /// One spec per policy, in the order given.
    fn to_specs(&self) -> Result<Vec<CommandSpec>> {
        let (program, _) = self.cmd.split_first().ok_or_else(|| {
            Error::usage(
                "no command to run: give it after --, e.g. `schedlab command -- hackbench -g 2` (cmd = [\"hackbench\", \
                 \"-g\", \"2\"] in a suite)",
            )
        })?;
        if program.is_empty() {
            return Err(Error::usage("the command's program name is empty"));
        }
        let policies = self.scheduling.policies();
        if let Some(p) = policies.iter().find(|p| p.is_deadline()) {
            return Err(Error::usage(format!(
                "--policy {p} is not offered for a command: a SCHED_DEADLINE reservation fits a periodic task, which \
                 an arbitrary program is not; use other, fifo, rr, batch or idle"
            )));
        }
        check_prio(self.scheduling.prio, &policies)?;
        check_nice(self.scheduling.nice, &policies)?;
        let cpus = chosen_cpus(&self.cpus, "--cpus")?;
        let mut names: Vec<&str> = self.figures.iter().map(|f| f.name.as_str()).collect();
        names.sort_unstable();
        if let Some(w) = names.windows(2).find(|w| w[0] == w[1]) {
            return Err(Error::usage(format!("the figure '{}' is declared twice", w[0])));
        }
        let load = self.background.to_spec()?;
        let mut specs = Vec::new();
        for &policy in &policies {
            let prio = if policy.is_realtime() { resolve_priority(policy, self.scheduling.prio)? } else { 0 };
            specs.push(CommandSpec {
                argv: self.cmd.clone(),
                policy,
                prio,
                nice: self.scheduling.nice_for(policy),
                cpus: cpus.clone(),
                timeout: self.timeout.unwrap_or(DEFAULT_COMMAND_TIMEOUT),
                load: load.clone(),
                figures: self.figures.clone(),
            });
        }
        Ok(specs)
    }
}

/// One run of a command: what to start and how.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommandSpec {
    pub argv: Vec<String>,
    pub policy: Policy,
    pub prio: i32,
    /// Nice value for OTHER/BATCH; `None` leaves it as inherited.
    pub nice: Option<i32>,
    pub cpus: Option<Vec<usize>>,
    pub timeout: Duration,
    #[serde(default, skip_serializing_if = "LoadSpec::is_none")]
    pub load: LoadSpec,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub figures: Vec<FigureDecl>,
}

impl CommandSpec {
    /// The command line as a shell would show it (arguments with spaces quoted).
    pub fn command_line(&self) -> String {
        self.argv
            .iter()
            .map(|a| if a.is_empty() || a.contains(char::is_whitespace) { format!("'{a}'") } else { a.clone() })
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// Where the tree's time waiting for a CPU was read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CpuWaitSource {
    /// The `some` total of `cpu.pressure` in a cgroup v2 group of the command's own.
    CgroupPsi,
}

/// What one run of a command measured.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CommandOutcome {
    /// From just before the start to the reap of the command (the tree's leftovers are
    /// killed after that and not counted).
    pub wall_ns: u64,
    /// wait4's figures: the command and the descendants it waited for.
    pub usage: Usage,
    pub exit_code: i32,
    /// Time the tree had a task runnable but not running, where it could be read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_wait_ns: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_wait_source: Option<CpuWaitSource>,
    /// Processes of the tree still alive when the command exited, killed by schedlab.
    #[serde(default)]
    pub leftovers_killed: u32,
    /// The declared figures, parsed from the output.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub parsed: BTreeMap<String, f64>,
    /// The figure its questions judge: the first declared with better = lower (none: the
    /// wall time).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judged: Option<String>,
    /// The background load's, the steal's and the private cgroup's figures.
    #[serde(flatten)]
    pub beside: crate::families::shared::Beside,
}

impl CommandOutcome {
    pub fn cpu_ns(&self) -> u64 {
        self.usage.utime_ns + self.usage.stime_ns
    }
}

read_with_groups!(CommandOptions { background, scheduling });

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figure_flags_parse_and_refuse_what_cannot_work() {
        let f = parse_figure_flag(r"p99_us,unit=us,better=lower=regex:99\.0th: +(\d+)").unwrap();
        assert_eq!((f.name.as_str(), f.unit.as_deref(), f.better), ("p99_us", Some("us"), Direction::Lower));
        assert_eq!(f.read("50.0th: 7\n99.0th: 120\n", ""), Some(120.0));
        let j = parse_figure_flag("rps,better=higher=json:/rps").unwrap();
        assert_eq!(serde_json::to_string(&j.source).unwrap(), r#"{"json":"/rps"}"#, "stored as before");
        assert_eq!(j.read("starting\n{\"rps\": 1234.5}\ndone\n", ""), Some(1234.5));
        assert_eq!(j.read("no json here", "{\"rps\": \"7\"}"), Some(7.0), "stderr is read too, numbers as text");
        for (text, value) in [("12.5", Some(12.5)), ("1,234.5", Some(1234.5)), ("1,234,567", Some(1234567.0))] {
            assert_eq!(number(text), value, "{text}");
        }
        for text in ["1,5", "1,23", "12,3456", "abc"] {
            assert_eq!(number(text), None, "{text}");
        }
        for (bad, says) in [
            ("p99=regex:99th: \\d+", "no capture group"),
            ("p99=regex:(", "regex"),
            ("rps=json:rps", "not a JSON pointer"),
            ("rps", "names no source"),
            ("9x=json:/a", "must be letters"),
            ("wall_s=json:/a", "taken by"),
            ("status=json:/a", "taken by"),
            ("rps=json:", "not a JSON pointer"),
            ("a,better=up=json:/a", "better=up"),
        ] {
            let e = parse_figure_flag(bad).unwrap_err();
            assert!(e.contains(says), "{bad}: {e}");
        }
    }

    #[test]
    fn suite_tables_and_stored_specs_read_the_same_declaration() {
        let opts: CommandOptions = toml::from_str(
            r#"cmd = ["true"]
               figures = [{ name = "p99_us", regex = 'p99: (\d+)', unit = "us", better = "lower" }]"#,
        )
        .unwrap();
        let spec = &opts.to_specs().unwrap()[0];
        let stored = serde_json::to_value(spec).unwrap();
        let back: CommandSpec = serde_json::from_value(stored).unwrap();
        assert_eq!(&back, spec);
        let e = toml::from_str::<CommandOptions>(
            r#"cmd = ["true"]
               figures = [{ name = "x", regex = "(1)", json = "/x" }]"#,
        )
        .unwrap_err();
        assert!(e.to_string().contains("exactly one of"), "{e}");
    }

    #[test]
    fn an_empty_command_and_deadline_are_refused() {
        let e = CommandOptions::default().to_specs().unwrap_err().to_string();
        assert!(e.contains("no command to run"), "{e}");
        let opts = CommandOptions {
            cmd: vec!["true".into()],
            scheduling: PolicyOptions { policy: Some(parse_policies("deadline").unwrap()), ..Default::default() },
            ..Default::default()
        };
        assert!(opts.to_specs().unwrap_err().to_string().contains("not offered"));
    }
}
