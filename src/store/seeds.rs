//! The reference sets of the seed documents besides the 1992 NCAR report (`ncar`): the
//! CSCI 3753 (Spring 2014) policy study's raw data and the 2007 hrtimers blog post's
//! table, built into the binary (`data/csci3753-2014.toml`, `data/hrtimers-2007.toml`)
//! and stored by `schedlab import --reference NAME` as runs marked as imported.
//!
//! [`csci3753_2014`] and [`hrtimers_2007`] give the runs and trials without a database,
//! so other code (the claims engine, `report --against`) can read the seeds' own figures.
//! What a document does not give is unknown in the outcome (`None`), never made up: the
//! study gives no child finish times or fairness, the post no percentiles. Run ids are
//! derived from the set's name (UUID v5), so importing a set twice stores nothing new.

use crate::error::{Error, Result};
use crate::model::{
    Family, LatencyLength, LatencyOutcome, LatencySpec, Outcome, Placement, Policy, ThreadStats, TrialSpec,
    TrialStatus, Usage, WorkloadKind, WorkloadOutcome, WorkloadParams, WorkloadSpec,
};
use crate::store::{ncar, RunRecord, RunStatus, TrialRecord};
use serde::Deserialize;
use serde_json::{json, Map, Value as Json};
use std::time::Duration;

/// `import --reference csci3753-2014`: the 2014 policy study's Appendix A.
pub const CSCI3753_2014: &str = "csci3753-2014";
/// `import --reference hrtimers-2007`: the 2007 hrtimers post's table.
pub const HRTIMERS_2007: &str = "hrtimers-2007";
/// Every reference set built in, in the order help texts list them.
pub const REFERENCE_NAMES: [&str; 3] = [ncar::REFERENCE_NAME, CSCI3753_2014, HRTIMERS_2007];

const CSCI_TOML: &str = include_str!("../../data/csci3753-2014.toml");
const CSCI_FILE: &str = "data/csci3753-2014.toml (built into schedlab)";
const HRTIMERS_TOML: &str = include_str!("../../data/hrtimers-2007.toml");
const HRTIMERS_FILE: &str = "data/hrtimers-2007.toml (built into schedlab)";

/// Where the study's figures were published.
pub const CSCI_CITATION: &str = "Domenic Murtari, \"CSCI 3753 Programming Assignment 3\", University of Colorado at \
                                 Boulder, Spring 2014 (2014/03/28), Appendix A: Data";
/// Where the post's figures were published.
pub const HRTIMERS_CITATION: &str = "\"hrtimers\", a blog post of February 14, 2007 (author and address not in the \
                                     copy schedlab was built from)";

/// Name-based run ids (UUID v5) of both sets live under this namespace.
const UUID_NAMESPACE: uuid::Uuid = uuid::uuid!("ab4825b6-4c19-495e-a9aa-e8164d8e7830");

/// A built-in data file that does not read is schedlab's bug, not the user's.
fn bug(file: &str, what: impl std::fmt::Display) -> Error {
    Error::env(format!("{file}: {what}: a bug in schedlab; please report it"))
}

/// `import --reference NAME`: the runs of any built-in reference set.
pub fn reference_runs(name: &str) -> Result<Vec<(RunRecord, Vec<TrialRecord>)>> {
    match name {
        n if n == ncar::REFERENCE_NAME => ncar::reference_runs(n),
        CSCI3753_2014 => Ok(vec![csci3753_2014()?]),
        HRTIMERS_2007 => hrtimers_2007(),
        _ => Err(Error::usage(format!(
            "there is no reference set '{name}': the ones built in are {}",
            REFERENCE_NAMES.join(", ")
        ))),
    }
}

/// What a reference set's run says about itself.
struct Published {
    /// What identifies the figures: the same identity gives the same run uuid.
    identity: String,
    suite_name: String,
    suite_text: String,
    options: Json,
    /// The machine record: names the machine and marks the figures as imported.
    machine: Json,
    started: String,
    /// The notice that the figures are published, first, then any check's warning.
    warnings: Vec<String>,
}

fn finished_run(p: Published, planned: usize) -> RunRecord {
    RunRecord {
        id: 0,
        uuid: uuid::Uuid::new_v5(&UUID_NAMESPACE, p.identity.as_bytes()).to_string(),
        suite_name: p.suite_name,
        suite_text: p.suite_text,
        options: crate::model::run::RunOptions::from_json(p.options),
        started: p.started.clone(),
        ended: Some(p.started),
        status: RunStatus::Finished,
        tool_version: env!("CARGO_PKG_VERSION").into(),
        machine: crate::sys::machine::StoredMachine::from_json(p.machine),
        warnings: p.warnings,
        planned: planned as i64,
        pid: None,
    }
}

// ---------------------------------------------------------------------------------------
// CSCI 3753, Spring 2014

/// One printed result line of the study's Appendix A, as printed: seconds in hundredths
/// (GNU time's two decimals), the CPU % and the switch counts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StudyLine {
    /// The line in `data/csci3753-2014.toml`.
    pub line: usize,
    /// "5.1 Initial Data Collection" or "5.2 Additional Data".
    pub section: String,
    pub workload: WorkloadKind,
    pub policy: Policy,
    pub procs: usize,
    /// The heading's iterations (cpu and mixed; the io headings give none).
    pub iterations: Option<u64>,
    pub wall_cs: u64,
    pub user_cs: u64,
    pub system_cs: u64,
    pub cpu_pct: u64,
    pub i_switched: u64,
    pub v_switched: u64,
}

impl StudyLine {
    /// Whether the printed CPU % can be (user + system) / wall of the printed seconds.
    /// GNU time truncates each figure (the exact one lies in [printed, printed + 0.01 s),
    /// the CPU % in [printed, printed + 1)); a figure rounded instead (half a unit either
    /// way) is allowed too.
    pub fn cpu_pct_consistent(&self) -> bool {
        let (wall, cpu) = (self.wall_cs as f64, (self.user_cs + self.system_cs) as f64);
        if self.wall_cs == 0 {
            return false;
        }
        // Each time may be 0.5 below to 1 (hundredth) above its printed value.
        let low = 100.0 * (cpu - 1.0).max(0.0) / (wall + 1.0);
        let high = 100.0 * (cpu + 2.0) / (wall - 0.5).max(0.5);
        let pct = self.cpu_pct as f64;
        low < pct + 1.0 && high >= pct - 0.5
    }

    /// (user + system) / wall of the printed seconds, in %.
    pub fn cpu_pct_of_printed(&self) -> f64 {
        100.0 * (self.user_cs + self.system_cs) as f64 / self.wall_cs as f64
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CsciFile {
    study: CsciStudy,
    machine: CsciMachine,
    io: CsciIo,
    section: Vec<CsciSection>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)] // read for `deny_unknown_fields`; the citation says it in one line
struct CsciStudy {
    author: String,
    title: String,
    institution: String,
    term: String,
    date: String,
    part: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CsciMachine {
    virtualisation: String,
    system: String,
    kernel_release: String,
    cores: u32,
    memory: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CsciIo {
    transfer_size: u64,
    block_size: u64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CsciSection {
    title: String,
    workload: Option<String>,
    text: String,
}

fn read_csci() -> Result<CsciFile> {
    toml::from_str(CSCI_TOML).map_err(|e| bug(CSCI_FILE, format_args!("does not read ({e})")))
}

/// The line of a built-in file on which `needle` starts (0 when absent).
fn line_of(file: &str, needle: &str) -> usize {
    file.find(needle).map_or(0, |at| file[..at].lines().count())
}

/// "17.34" as hundredths: digits, a point, exactly two digits (GNU time's %e, %U, %S).
fn hundredths(text: &str) -> Option<u64> {
    let (whole, fraction) = text.split_once('.')?;
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !digits(whole) || fraction.len() != 2 || !digits(fraction) || whole.len() > 12 {
        return None;
    }
    Some(whole.parse::<u64>().ok()? * 100 + fraction.parse::<u64>().ok()?)
}

fn count(text: &str) -> Option<u64> {
    (!text.is_empty() && text.len() <= 15 && text.bytes().all(|b| b.is_ascii_digit()))
        .then(|| text.parse().ok())
        .flatten()
}

fn kernel_policy(name: &str) -> Option<Policy> {
    match name {
        "SCHED_OTHER" => Some(Policy::Other),
        "SCHED_FIFO" => Some(Policy::Fifo),
        "SCHED_RR" => Some(Policy::Rr),
        _ => None,
    }
}

/// A heading: `Calculating pi over N iterations using POLICY with P simultaneous
/// processes...` (cpu, mixed) or `Reading and writing using POLICY with P simultaneous
/// processes...` (io): (iterations, policy, procs).
fn heading(line: &str) -> Option<(Option<u64>, Policy, usize)> {
    let rest = line.strip_suffix(" simultaneous processes...")?;
    let (rest, procs) = rest.rsplit_once(" with ")?;
    let (rest, policy) = rest.rsplit_once(" using ")?;
    let iterations = if rest == "Reading and writing" {
        None
    } else {
        Some(count(rest.strip_prefix("Calculating pi over ")?.strip_suffix(" iterations")?)?)
    };
    Some((iterations, kernel_policy(policy)?, count(procs)? as usize))
}

/// A result line: `wall=W user=U system=S CPU=P% i-switched=I v-switched=V`.
fn result_fields(line: &str) -> Option<[&str; 6]> {
    let mut out = [""; 6];
    let keys = ["wall=", "user=", "system=", "CPU=", "i-switched=", "v-switched="];
    let mut words = line.split_whitespace();
    for (slot, key) in out.iter_mut().zip(keys) {
        *slot = words.next()?.strip_prefix(key)?;
    }
    words.next().is_none().then_some(out)
}

fn workload_named(name: &str) -> Option<WorkloadKind> {
    match name {
        "cpu" => Some(WorkloadKind::Cpu),
        "io" => Some(WorkloadKind::Io),
        "mixed" => Some(WorkloadKind::Mixed),
        _ => None,
    }
}

/// Every result line of the study's Appendix A, in the document's order (150 lines: 27
/// cells of five, then the three 500-process mixed cells of 5.2).
pub fn csci3753_2014_lines() -> Result<Vec<StudyLine>> {
    let file = read_csci()?;
    let mut out = Vec::new();
    for section in &file.section {
        let first_line = line_of(CSCI_TOML, &section.text);
        let mut workload = match &section.workload {
            Some(name) => Some(
                workload_named(name)
                    .ok_or_else(|| bug(CSCI_FILE, format_args!("section {}: no workload '{name}'", section.title)))?,
            ),
            None => None,
        };
        let mut cell: Option<(Option<u64>, Policy, usize)> = None;
        for (index, raw) in section.text.lines().enumerate() {
            let line_no = first_line + index + 1;
            let line = raw.trim();
            let at = |what: &str| bug(CSCI_FILE, format_args!("line {line_no}: {what}: '{line}'"));
            if line.is_empty() || line == "=====" {
                continue;
            }
            if let Some(kind) = line.strip_prefix("Testing ").and_then(|l| l.strip_suffix(" Process")) {
                workload = Some(match kind {
                    "CPU Intensive" => WorkloadKind::Cpu,
                    "I/O Intensive" => WorkloadKind::Io,
                    "Mixed" => WorkloadKind::Mixed,
                    _ => return Err(at("not a program the study tested")),
                });
                cell = None;
            } else if let Some(h) = heading(line) {
                let kind = workload.ok_or_else(|| at("a heading before any 'Testing ...' line"))?;
                if (kind == WorkloadKind::Io) != h.0.is_none() {
                    return Err(at("a heading of another program than the section's"));
                }
                cell = Some(h);
            } else if let Some(fields) = result_fields(line) {
                let (iterations, policy, procs) = cell.ok_or_else(|| at("a result line before any heading"))?;
                let [wall, user, system, cpu, i, v] = fields;
                let seconds = |s: &str| hundredths(s).ok_or_else(|| at("seconds that are not 0.00"));
                let number = |s: &str| count(s).ok_or_else(|| at("a count that is not a whole number"));
                out.push(StudyLine {
                    line: line_no,
                    section: section.title.clone(),
                    workload: workload.ok_or_else(|| at("no program"))?,
                    policy,
                    procs,
                    iterations,
                    wall_cs: seconds(wall)?,
                    user_cs: seconds(user)?,
                    system_cs: seconds(system)?,
                    cpu_pct: number(cpu.strip_suffix('%').ok_or_else(|| at("a CPU figure without %"))?)?,
                    i_switched: number(i)?,
                    v_switched: number(v)?,
                });
            } else {
                return Err(at("neither a heading nor a result line"));
            }
        }
    }
    Ok(out)
}

/// The study's experiment index of a program: the order of its appendix.
fn experiment_of(kind: WorkloadKind) -> i64 {
    match kind {
        WorkloadKind::Cpu => 0,
        WorkloadKind::Io => 1,
        WorkloadKind::Mixed => 2,
    }
}

/// Where the figures came from, in every report of the run.
const CSCI_NOTICE: &str = "published figures: the CSCI 3753 (Spring 2014) policy study's Appendix A, imported, not \
                           measured by schedlab. Each line gives wall, user and system seconds, CPU % and involuntary \
                           and voluntary switches of one run; the children's finish times, fairness, faults and I/O \
                           blocks are not given (unknown, or zero in the usage counters). The printed CPU % is kept \
                           in the suite text; schedlab's CPU % is (user + system) / wall of the printed seconds, up to \
                           a point above it, as GNU time truncates";

/// The 2014 study's Appendix A as one finished run of ok workload trials: every printed
/// line one trial, in the appendix's order; one experiment per program (cpu, io, mixed;
/// the 500-process runs of 5.2 are the mixed program's, beside its 10, 50 and 100).
/// Params: `workload`, `policy`, `procs` and, for cpu and mixed, `iterations`. The
/// outcome holds wall, user and system time exactly as printed and the switches
/// (i-switched is `nivcsw`, v-switched `nvcsw`); what the document does not give is
/// unknown.
pub fn csci3753_2014() -> Result<(RunRecord, Vec<TrialRecord>)> {
    let file = read_csci()?;
    let lines = csci3753_2014_lines()?;
    let started = format!("{}T00:00:00.000Z", file.study.date);
    let mut repeats: Vec<((WorkloadKind, Policy, usize), i64)> = Vec::new();
    let mut trials = Vec::with_capacity(lines.len());
    let mut warnings = vec![CSCI_NOTICE.to_string()];
    for (seq, l) in lines.iter().enumerate() {
        let key = (l.workload, l.policy, l.procs);
        let repeat = match repeats.iter_mut().find(|(k, _)| *k == key) {
            Some((_, n)) => {
                *n += 1;
                *n
            }
            None => {
                repeats.push((key, 1));
                1
            }
        };
        if !l.cpu_pct_consistent() {
            warnings.push(format!(
                "{CSCI_FILE}:{}: CPU={}% is not (user + system) / wall = {:.1} % within GNU time's truncation; the \
                 seconds are stored as printed",
                l.line,
                l.cpu_pct,
                l.cpu_pct_of_printed()
            ));
        }
        let mut params = Map::new();
        if let Some(n) = l.iterations {
            params.insert("iterations".into(), json!(n));
        }
        params.insert("policy".into(), json!(l.policy.as_str()));
        params.insert("procs".into(), json!(l.procs));
        params.insert("workload".into(), json!(l.workload.as_str()));
        let spec = WorkloadSpec {
            params: WorkloadParams {
                kind: l.workload,
                iterations: l.iterations.unwrap_or(0),
                transfer_size: file.io.transfer_size,
                block_size: file.io.block_size,
                // The programs call random() unseeded: glibc's state as after srandom(1).
                seed: 1,
            },
            procs: l.procs,
            policy: l.policy,
            // sched_get_priority_max(policy), as each program sets it.
            prio: if l.policy.is_realtime() { 99 } else { 0 },
            nice: None,
            // The study's runs had no time limit.
            timeout: Duration::ZERO,
            dir: None,
            allow_rt_saturation: false,
            load: Default::default(),
            deadline: None,
            // Nothing of the scheduler's per-task accounting was read.
            schedstat: false,
            trace: false,
        };
        let cs_ns = |cs: u64| cs * 10_000_000;
        let outcome = WorkloadOutcome {
            children: l.procs,
            wall_ns: cs_ns(l.wall_cs),
            usage: Usage {
                utime_ns: cs_ns(l.user_cs),
                stime_ns: cs_ns(l.system_cs),
                nvcsw: l.v_switched,
                nivcsw: l.i_switched,
                ..Usage::default()
            },
            ..WorkloadOutcome::default()
        };
        trials.push(TrialRecord {
            seq: seq as i64,
            experiment: experiment_of(l.workload),
            family: Family::Workload,
            repeat,
            params,
            spec: Some(TrialSpec::Workload(spec)),
            outcome: Some(Outcome::Workload(outcome)),
            status: TrialStatus::Ok,
            started: started.clone(),
            elapsed_s: 0.0,
        });
    }
    let m = &file.machine;
    let machine = json!({
        "hostname": format!("{} VM, {} (CSCI 3753 2014, published)", m.virtualisation, m.system),
        "kernel_release": m.kernel_release,
        "hypervisor_flag": true,
        "virtualisation": m.virtualisation,
        "system": m.system,
        "cores": m.cores,
        "memory": m.memory,
        "imported": true,
        "figures": "published in the study; built into schedlab: imported, not measured by schedlab",
        "source": format!("{CSCI_CITATION}; the machine: section 2.1, Setup"),
    });
    let mut suite_text = format!("{CSCI_CITATION}\n(as printed: wall, user and system seconds, CPU %, switches)\n");
    for section in &file.section {
        suite_text.push_str(&format!("\n{}\n\n{}\n", section.title, section.text.trim()));
    }
    let published = Published {
        identity: format!("reference/{CSCI3753_2014}"),
        suite_name: format!("{CSCI3753_2014}-published"),
        suite_text,
        options: json!({"import": "reference", "reference": CSCI3753_2014}),
        machine,
        started,
        warnings,
    };
    let run = finished_run(published, trials.len());
    Ok((run, trials))
}

// ---------------------------------------------------------------------------------------
// hrtimers, 2007

/// One column of the post's table: min, max and avg wakeup latency in ns.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PostColumn {
    pub min: u64,
    pub max: u64,
    pub avg: u64,
}

/// One kernel of the post's table: its two columns.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PostKernel {
    pub id: String,
    /// The kernel as the table's header names it.
    pub heading: String,
    pub kernel_release: String,
    pub hrtimers: bool,
    /// As a normal user: SCHED_OTHER (the program's request for SCHED_FIFO fails).
    pub user: PostColumn,
    /// As root: SCHED_FIFO 99.
    pub root: PostColumn,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PostFile {
    post: Post,
    kernel: Vec<PostKernel>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Post {
    title: String,
    date: String,
    frequency_hz: u64,
    period_ns: u64,
    iterations: u64,
    printed: String,
}

fn read_post() -> Result<PostFile> {
    let file: PostFile =
        toml::from_str(HRTIMERS_TOML).map_err(|e| bug(HRTIMERS_FILE, format_args!("does not read ({e})")))?;
    check_split(&file)?;
    Ok(file)
}

/// Each printed row's digits, as the four columns (vanilla user, vanilla root, hrt user,
/// hrt root) written one after the other must give them.
fn check_split(file: &PostFile) -> Result<()> {
    type Figure = fn(&PostColumn) -> u64;
    let rows: [(&str, Figure); 3] = [("min", |c| c.min), ("max", |c| c.max), ("avg", |c| c.avg)];
    for (name, figure) in rows {
        let printed = file
            .post
            .printed
            .lines()
            .find_map(|l| l.trim().strip_prefix(name))
            .ok_or_else(|| bug(HRTIMERS_FILE, format_args!("the printed table has no {name} row")))?;
        let joined: String =
            file.kernel.iter().flat_map(|k| [figure(&k.user), figure(&k.root)]).map(|v| v.to_string()).collect();
        if joined != printed {
            return Err(bug(
                HRTIMERS_FILE,
                format_args!("the {name} row's split {joined} is not the printed digits {printed}"),
            ));
        }
    }
    for k in &file.kernel {
        for c in [k.user, k.root] {
            if !(c.min <= c.avg && c.avg <= c.max) {
                return Err(bug(HRTIMERS_FILE, format_args!("{}: min <= avg <= max does not hold", k.id)));
            }
        }
    }
    Ok(())
}

/// The post's kernels, each with its two columns as split from the run-together table
/// (`data/hrtimers-2007.toml` explains the split).
pub fn hrtimers_2007_kernels() -> Result<Vec<PostKernel>> {
    Ok(read_post()?.kernel)
}

const HRTIMERS_SPLIT_NOTE: &str = "the post's table ran its digits together (each row's four numbers printed as one); \
                                   the split is data/hrtimers-2007.toml's, from the post's own words for max and avg \
                                   and from reasoning for min (see that file's header)";

/// The 2007 post's table as two finished runs, one per kernel (2.6.19-rc6 vanilla,
/// 2.6.20-hrt-dynticks1), each with two ok latency trials: as a normal user (SCHED_OTHER)
/// and as root (SCHED_FIFO 99), 850 wakeups at 85 Hz. min, max and avg are the post's;
/// the percentiles are unknown (`None`), as are the run-queue figures; overruns are 0
/// (every max is below the period).
pub fn hrtimers_2007() -> Result<Vec<(RunRecord, Vec<TrialRecord>)>> {
    let file = read_post()?;
    let post = &file.post;
    let started = format!("{}T00:00:00.000Z", post.date);
    let mut out = Vec::new();
    for k in &file.kernel {
        let mut trials = Vec::new();
        for (seq, (column, policy, prio)) in
            [(k.user, Policy::Other, 0), (k.root, Policy::Fifo, 99)].into_iter().enumerate()
        {
            if column.max >= post.period_ns {
                return Err(bug(HRTIMERS_FILE, format_args!("{}: a max of a whole period is an overrun", k.id)));
            }
            let mut params = Map::new();
            params.insert("freq".into(), json!(post.frequency_hz));
            params.insert("loops".into(), json!(post.iterations));
            params.insert("policy".into(), json!(policy.as_str()));
            let spec = LatencySpec {
                interval_ns: post.period_ns,
                length: LatencyLength::Loops(post.iterations),
                policy,
                prio,
                placement: Placement::Unpinned,
                hold_dma_latency: false,
                break_ns: None,
                load: Default::default(),
                deadline: None,
                schedstat: false,
                trace: false,
            };
            let stats = ThreadStats {
                cpu: None,
                samples: post.iterations,
                overruns: 0,
                min_ns: column.min,
                avg_ns: column.avg as f64,
                p50_ns: None,
                p90_ns: None,
                p99_ns: None,
                p999_ns: None,
                p9999_ns: None,
                max_ns: column.max,
                run_delay_ns: None,
                migrations: None,
            };
            let outcome = LatencyOutcome {
                threads: vec![stats.clone()],
                all: stats,
                timer_slack_ns: 0,
                dma_latency_held: false,
                mlockall: false,
                histogram: Vec::new(),
                load: None,
                steal: None,
                deadline: None,
                outliers: Vec::new(),
                attribution: None,
            };
            trials.push(TrialRecord {
                seq: seq as i64,
                experiment: 0,
                family: Family::Latency,
                repeat: 1,
                params,
                spec: Some(TrialSpec::Latency(spec)),
                outcome: Some(Outcome::Latency(outcome)),
                status: TrialStatus::Ok,
                started: started.clone(),
                elapsed_s: 0.0,
            });
        }
        let hrt = if k.hrtimers { "with high-resolution timers" } else { "without high-resolution timers" };
        let machine = json!({
            "hostname": format!("Linux {} (hrtimers 2007, published)", k.heading),
            "kernel_release": k.kernel_release,
            "hrtimers": k.hrtimers,
            "imported": true,
            "figures": "published in the post; built into schedlab: imported, not measured by schedlab",
            "source": format!("{HRTIMERS_CITATION}: the table's \"{}\" columns", k.heading),
        });
        let notice = format!(
            "published figures: the 2007 hrtimers post's \"{}\" columns ({hrt}), imported, not measured by schedlab; \
             the post gives min, max and avg of {} wakeups at {} Hz as a normal user (SCHED_OTHER) and as root \
             (SCHED_FIFO 99): its percentiles are unknown",
            k.heading, post.iterations, post.frequency_hz
        );
        let suite_text = format!(
            "{HRTIMERS_CITATION}\n\"{}\": wake every 1/{} s ({} ns), {} times, as a normal user and as root \
             (SCHED_FIFO 99); ns\n\nthe table as printed:\n{}\n\nthis run, \"{}\":\n  user: min {} max {} avg {}\n  \
             root (SCHED_FIFO): min {} max {} avg {}\n",
            post.title,
            post.frequency_hz,
            post.period_ns,
            post.iterations,
            post.printed.trim(),
            k.heading,
            k.user.min,
            k.user.max,
            k.user.avg,
            k.root.min,
            k.root.max,
            k.root.avg
        );
        let published = Published {
            identity: format!("reference/{HRTIMERS_2007}/{}", k.id),
            suite_name: format!("{HRTIMERS_2007}-published"),
            suite_text,
            options: json!({"import": "reference", "reference": HRTIMERS_2007, "kernel": k.id}),
            machine,
            started: started.clone(),
            warnings: vec![notice, HRTIMERS_SPLIT_NOTE.to_string()],
        };
        out.push((finished_run(published, trials.len()), trials));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_study_is_150_lines_in_30_cells_of_five() {
        let lines = csci3753_2014_lines().unwrap();
        assert_eq!(lines.len(), 150);
        let mut cells: Vec<(WorkloadKind, Policy, usize)> = Vec::new();
        for l in &lines {
            if !cells.contains(&(l.workload, l.policy, l.procs)) {
                cells.push((l.workload, l.policy, l.procs));
            }
        }
        assert_eq!(cells.len(), 30);
        for c in &cells {
            assert_eq!(lines.iter().filter(|l| (l.workload, l.policy, l.procs) == *c).count(), 5, "{c:?}");
        }
        let first = &lines[0];
        assert_eq!(
            (first.workload, first.policy, first.procs, first.iterations),
            (WorkloadKind::Cpu, Policy::Fifo, 10, Some(100_000_000))
        );
        assert_eq!((first.wall_cs, first.user_cs, first.system_cs, first.cpu_pct), (1734, 5066, 15, 292));
        assert_eq!((first.i_switched, first.v_switched), (44, 17));
        let last = lines.last().unwrap();
        assert_eq!(
            (last.workload, last.policy, last.procs, last.section.as_str()),
            (WorkloadKind::Mixed, Policy::Rr, 500, "5.2 Additional Data")
        );
        assert_eq!(last.v_switched, 1_567_454);
        assert!(lines.iter().filter(|l| l.workload == WorkloadKind::Io).all(|l| l.iterations.is_none()));
        // Every printed CPU % agrees with the printed seconds under GNU time's truncation.
        assert!(lines.iter().all(StudyLine::cpu_pct_consistent));
        // The line numbers point into the data file.
        assert!(CSCI_TOML.lines().nth(first.line - 1).unwrap().starts_with("wall=17.34 user=50.66"));
    }

    #[test]
    fn cpu_pct_is_checked_against_truncated_and_rounded_figures() {
        let line = |wall_cs, user_cs, system_cs, cpu_pct| StudyLine {
            line: 1,
            section: String::new(),
            workload: WorkloadKind::Cpu,
            policy: Policy::Other,
            procs: 1,
            iterations: None,
            wall_cs,
            user_cs,
            system_cs,
            cpu_pct,
            i_switched: 0,
            v_switched: 0,
        };
        // 50.81 / 17.34 = 293.0 %: GNU time's truncation can print 292 %, and 293 is fine too.
        assert!(line(1734, 5066, 15, 292).cpu_pct_consistent());
        assert!(line(1734, 5066, 15, 293).cpu_pct_consistent());
        assert!(!line(1734, 5066, 15, 280).cpu_pct_consistent());
        assert!(!line(1734, 5066, 15, 300).cpu_pct_consistent());
        assert!(!line(0, 0, 0, 0).cpu_pct_consistent());
    }

    #[test]
    fn the_study_run_holds_every_line_as_an_ok_workload_trial() {
        let (run, trials) = csci3753_2014().unwrap();
        assert_eq!((run.suite_name.as_str(), run.planned, trials.len()), ("csci3753-2014-published", 150, 150));
        assert!(run.machine.is_imported());
        assert_eq!(run.machine.kernel_release(), Some("3.8.0-38-generic"));
        assert_eq!(run.warnings.len(), 1, "only the notice: every CPU % agrees");
        assert!(run.warnings[0].contains("not measured by schedlab"));
        assert!(run.suite_text.contains("wall=17.34 user=50.66 system=0.15 CPU=292% i-switched=44 v-switched=17"));
        let t = &trials[0];
        assert_eq!(
            t.params,
            json!({"iterations": 100_000_000, "policy": "fifo", "procs": 10, "workload": "cpu"})
                .as_object()
                .cloned()
                .unwrap()
        );
        let o = t.outcome.as_ref().and_then(Outcome::workload).unwrap();
        assert_eq!((o.wall_ns, o.usage.utime_ns, o.usage.stime_ns), (17_340_000_000, 50_660_000_000, 150_000_000));
        assert_eq!((o.usage.nivcsw, o.usage.nvcsw, o.fairness, o.first_finish_ns), (44, 17, None, None));
        let io = trials.iter().find(|t| t.experiment == 1).unwrap();
        assert!(!io.params.contains_key("iterations"));
        let TrialSpec::Workload(spec) = io.spec.as_ref().unwrap() else { panic!("a workload spec") };
        assert_eq!((spec.params.transfer_size, spec.params.block_size, spec.prio), (102_400, 1024, 99));
        assert_eq!(trials.iter().filter(|t| t.params["procs"] == 500).count(), 15);
        assert!(trials.iter().filter(|t| t.params["procs"] == 500).all(|t| t.experiment == 2));
        assert_eq!(trials[4].repeat, 5);
        assert_eq!(trials[5].repeat, 1);
        assert_eq!(csci3753_2014().unwrap().0.uuid, run.uuid, "a fixed id");
    }

    #[test]
    fn the_post_is_two_kernels_split_from_the_printed_digits() {
        let kernels = hrtimers_2007_kernels().unwrap();
        assert_eq!(kernels.len(), 2);
        let columns: Vec<[u64; 3]> =
            kernels.iter().flat_map(|k| [k.user, k.root]).map(|c| [c.min, c.max, c.avg]).collect();
        assert_eq!(
            columns,
            [
                [2_809_853, 10_877_151, 6_862_276],
                [2_331_812, 10_091_750, 6_208_266],
                [2_939, 393_117, 37_788],
                [2_803, 226_885, 30_500]
            ]
        );
        // The post's sentences: worst case about 10 ms -> about 0.4 ms, average about
        // 6 ms -> 0.04 ms.
        assert!(
            kernels[0].user.max.abs_diff(10_000_000) < 1_000_000
                && kernels[0].root.max.abs_diff(10_000_000) < 1_000_000
        );
        assert!(kernels[1].user.max.abs_diff(400_000) < 10_000);
        assert!(kernels[0].user.avg / 1_000_000 == 6 && kernels[0].root.avg / 1_000_000 == 6);
        assert!(kernels[1].user.avg.abs_diff(40_000) < 5_000 && kernels[1].root.avg.abs_diff(40_000) < 10_000);
    }

    #[test]
    fn the_post_runs_know_min_max_avg_and_nothing_else() {
        let runs = hrtimers_2007().unwrap();
        assert_eq!(runs.len(), 2);
        let (run, trials) = &runs[1];
        assert_eq!(run.machine.kernel_release(), Some("2.6.20-hrt-dynticks1"));
        assert!(run.machine.is_imported());
        assert_eq!(trials.len(), 2);
        let root = trials[1].outcome.as_ref().and_then(Outcome::latency).unwrap();
        assert_eq!(
            (root.all.min_ns, root.all.max_ns, root.all.avg_ns, root.all.samples),
            (2803, 226_885, 30_500.0, 850)
        );
        assert_eq!((root.all.p50_ns, root.all.p99_ns, root.all.run_delay_ns), (None, None, None));
        assert_eq!(root.all.overruns, 0);
        let TrialSpec::Latency(spec) = trials[1].spec.as_ref().unwrap() else { panic!("a latency spec") };
        assert_eq!((spec.policy, spec.prio, spec.interval_ns), (Policy::Fifo, 99, 11_764_705));
        assert_ne!(runs[0].0.uuid, run.uuid);
        assert_eq!(hrtimers_2007().unwrap()[1].0.uuid, run.uuid, "fixed ids");
    }

    #[test]
    fn every_name_is_a_reference_set_and_others_are_refused() {
        for name in REFERENCE_NAMES {
            assert!(!reference_runs(name).unwrap().is_empty(), "{name}");
        }
        let err = reference_runs("csci3753-2015").unwrap_err().to_string();
        assert!(err.contains("ncar-1992, csci3753-2014, hrtimers-2007"), "{err}");
    }
}
