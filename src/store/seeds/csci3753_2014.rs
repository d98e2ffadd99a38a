//! The CSCI 3753 (Spring 2014) policy study: its Appendix A's raw data (150 printed runs of
//! three programs under SCHED_OTHER, SCHED_FIFO and SCHED_RR), built into the binary
//! (`data/csci3753-2014.toml`) and stored by `import --reference csci3753-2014` as one run;
//! its seven conclusions as claims; `report --against csci3753-2014`'s words. The study
//! gives no child finish times or fairness: they are unknown in the outcome.

use super::{
    bug, finished_run, line_of, Against, AgainstForm, Cells, Claim, ClaimFigure, Claims, Published, ReferenceOptions,
    Seed, Test,
};
use crate::error::Result;
use crate::families::workload::model::{WorkloadKind, WorkloadOutcome, WorkloadParams, WorkloadSpec};
use crate::families::{Family, Outcome, TrialSpec};
use crate::model::cell::Cell;
use crate::model::{BesideSpec, Policy, TrialStatus, Usage};
use crate::store::{RunRecord, TrialRecord};
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// `import --reference csci3753-2014`: the 2014 policy study's Appendix A.
const NAME: &str = "csci3753-2014";

const CSCI_TOML: &str = include_str!("../../../data/csci3753-2014.toml");
const CSCI_FILE: &str = "data/csci3753-2014.toml (built into schedlab)";

/// Where the study's figures were published.
const CSCI_CITATION: &str = "Domenic Murtari, \"CSCI 3753 Programming Assignment 3\", University of Colorado at \
                             Boulder, Spring 2014 (2014/03/28), Appendix A: Data";

pub struct Csci3753;

impl Seed for Csci3753 {
    fn name(&self) -> &'static str {
        NAME
    }

    fn holds(&self) -> &'static str {
        "the 2014 CSCI 3753 policy study's Appendix A: 150 workload runs, one run"
    }

    fn citation(&self) -> &'static str {
        CSCI_CITATION
    }

    fn runs(&self) -> Result<Vec<(RunRecord, Vec<TrialRecord>)>> {
        Ok(vec![study_run()?])
    }

    /// Decided on the study's five runs a cell and on a run of `policy-study`.
    fn claims(&self) -> Claims {
        const TENS: &[u32] = &[10, 50, 100];
        let lower = |cells, lows, highs, figure| Test::Lower { cells, lows, highs, figure };
        let alike = |cells, pairs, figure| Test::Alike { cells, pairs, figure };
        let claims = vec![
            (
                "cpu-other-fastest",
                "CPU-bound: SCHED_OTHER has the lowest wall time, at 10, 50 and 100 processes",
                lower(Cells::Workloads(&["cpu"], TENS), &["other"], &["fifo", "rr"], ClaimFigure::WALL),
            ),
            (
                "io-rt-faster",
                "I/O-bound: SCHED_FIFO and SCHED_RR are faster than SCHED_OTHER (\"nearly double\"), at 10, 50 and 100",
                lower(Cells::Workloads(&["io"], TENS), &["fifo", "rr"], &["other"], ClaimFigure::WALL),
            ),
            (
                "io-fifo-rr-alike",
                "I/O-bound: SCHED_FIFO and SCHED_RR perform alike, at 10, 50 and 100",
                alike(Cells::Workloads(&["io"], TENS), &[("fifo", "rr")], ClaimFigure::WALL),
            ),
            (
                "mixed-rt-lead-at-10",
                "Mixed: at 10 processes the real-time policies are faster than SCHED_OTHER",
                lower(Cells::Workloads(&["mixed"], &[10]), &["fifo", "rr"], &["other"], ClaimFigure::WALL),
            ),
            (
                "mixed-lead-gone-at-500",
                "Mixed: at 500 processes the advantage is gone: SCHED_FIFO and SCHED_RR alike SCHED_OTHER",
                alike(Cells::Workloads(&["mixed"], &[500]), &[("other", "fifo"), ("other", "rr")], ClaimFigure::WALL),
            ),
            (
                "other-more-involuntary",
                "SCHED_OTHER makes more involuntary switches than SCHED_FIFO and SCHED_RR, in every workload and count",
                lower(
                    Cells::Workloads(&["cpu", "io", "mixed"], TENS),
                    &["fifo", "rr"],
                    &["other"],
                    ClaimFigure::INVOLUNTARY,
                ),
            ),
            (
                "other-more-voluntary",
                "SCHED_OTHER makes more voluntary switches than SCHED_FIFO and SCHED_RR, in every workload and count",
                lower(
                    Cells::Workloads(&["cpu", "io", "mixed"], TENS),
                    &["fifo", "rr"],
                    &["other"],
                    ClaimFigure::VOLUNTARY,
                ),
            ),
        ];
        Claims {
            suite: "policy-study",
            title: "The 2014 policy study's conclusions (CSCI 3753)",
            // The same comparison decides a claim on either data set.
            claims: claims
                .into_iter()
                .map(|(id, claim, test)| Claim { id, claim, on_run: test.clone(), on_seed: test })
                .collect(),
        }
    }

    fn against(&self) -> Option<Against> {
        Some(Against {
            help: "per program, wall time and switches by processes per policy beside the 2014 study's",
            form: AgainstForm::WorkloadMedians { io_size: "(rw-sched's defaults; the headings give none)" },
            needs: "workload trials (cpu, io, mixed by policy and processes) beside the 2014 study's; run a suite \
                    with workload experiments (e.g. `schedlab run policy-study`)",
            label: "2014",
            heading: |run| {
                format!(
                    "against {NAME}: run {run}'s medians beside the 2014 study's (Appendix A: five runs per cell on a \
                     4-core VirtualBox VM, Linux 3.8.0-38-generic; imported, not measured by schedlab; {CSCI_CITATION})"
                )
            },
        })
    }
}

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

/// The study's machine as its run stores it: the VM section 2.1 describes, marked as
/// imported.
#[derive(Serialize)]
struct StudyMachine<'a> {
    hostname: String,
    kernel_release: &'a str,
    hypervisor_flag: bool,
    virtualisation: &'a str,
    system: &'a str,
    cores: u32,
    memory: &'a str,
    imported: bool,
    figures: &'static str,
    source: String,
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
pub fn study_lines() -> Result<Vec<StudyLine>> {
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

/// One printed line of the appendix as an ok workload trial: its params, the spec the
/// study's program ran with, and the outcome as printed (centiseconds to ns).
fn line_trial(l: &StudyLine, io: &CsciIo, seq: usize, repeat: i64, started: &str) -> TrialRecord {
    let mut params = Cell::new();
    if let Some(n) = l.iterations {
        params.insert("iterations", n);
    }
    params.insert("policy", l.policy.as_str());
    params.insert("procs", l.procs);
    params.insert("workload", l.workload.as_str());
    let spec = WorkloadSpec {
        params: WorkloadParams {
            kind: l.workload,
            iterations: l.iterations.unwrap_or(0),
            transfer_size: io.transfer_size,
            block_size: io.block_size,
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
        // Nothing of the scheduler's per-task accounting was read.
        beside: BesideSpec::default(),
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
    TrialRecord {
        seq: seq as i64,
        experiment: experiment_of(l.workload),
        family: Family::Workload,
        repeat,
        params,
        spec: Some(TrialSpec::Workload(spec)),
        outcome: Some(Outcome::Workload(outcome)),
        status: TrialStatus::Ok,
        started: started.to_string(),
        elapsed_s: 0.0,
    }
}

/// The study's machine as section 2.1 describes it, marked as imported.
fn study_machine(m: &CsciMachine) -> StudyMachine<'_> {
    StudyMachine {
        hostname: format!("{} VM, {} (CSCI 3753 2014, published)", m.virtualisation, m.system),
        kernel_release: &m.kernel_release,
        hypervisor_flag: true,
        virtualisation: &m.virtualisation,
        system: &m.system,
        cores: m.cores,
        memory: &m.memory,
        imported: true,
        figures: "published in the study; built into schedlab: imported, not measured by schedlab",
        source: format!("{CSCI_CITATION}; the machine: section 2.1, Setup"),
    }
}

/// The 2014 study's Appendix A as one finished run of ok workload trials: every printed
/// line one trial, in the appendix's order; one experiment per program (cpu, io, mixed;
/// the 500-process runs of 5.2 are the mixed program's, beside its 10, 50 and 100).
/// Params: `workload`, `policy`, `procs` and, for cpu and mixed, `iterations`. The
/// outcome holds wall, user and system time exactly as printed and the switches
/// (i-switched is `nivcsw`, v-switched `nvcsw`); what the document does not give is
/// unknown.
fn study_run() -> Result<(RunRecord, Vec<TrialRecord>)> {
    let file = read_csci()?;
    let lines = study_lines()?;
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
        trials.push(line_trial(l, &file.io, seq, repeat, &started));
    }
    let machine = study_machine(&file.machine);
    let mut suite_text = format!("{CSCI_CITATION}\n(as printed: wall, user and system seconds, CPU %, switches)\n");
    for section in &file.section {
        suite_text.push_str(&format!("\n{}\n\n{}\n", section.title, section.text.trim()));
    }
    let published = Published {
        identity: format!("reference/{NAME}"),
        suite_name: format!("{NAME}-published"),
        suite_text,
        options: ReferenceOptions::of(NAME),
        machine,
        started,
        warnings,
    };
    let run = finished_run(published, trials.len());
    Ok((run, trials))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_study_is_150_lines_in_30_cells_of_five() {
        let lines = study_lines().unwrap();
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
        let (run, trials) = study_run().unwrap();
        assert_eq!((run.suite_name.as_str(), run.planned, trials.len()), ("csci3753-2014-published", 150, 150));
        assert!(run.machine.is_imported());
        assert_eq!(run.machine.kernel_release(), Some("3.8.0-38-generic"));
        assert_eq!(run.warnings.len(), 1, "only the notice: every CPU % agrees");
        assert!(run.warnings[0].contains("not measured by schedlab"));
        assert!(run.suite_text.contains("wall=17.34 user=50.66 system=0.15 CPU=292% i-switched=44 v-switched=17"));
        let t = &trials[0];
        assert_eq!(
            serde_json::to_string(&t.params).unwrap(),
            r#"{"iterations":100000000,"policy":"fifo","procs":10,"workload":"cpu"}"#
        );
        let o = t.outcome.as_ref().and_then(Outcome::workload).unwrap();
        assert_eq!((o.wall_ns, o.usage.utime_ns, o.usage.stime_ns), (17_340_000_000, 50_660_000_000, 150_000_000));
        assert_eq!((o.usage.nivcsw, o.usage.nvcsw, o.fairness, o.first_finish_ns), (44, 17, None, None));
        let io = trials.iter().find(|t| t.experiment == 1).unwrap();
        assert!(!io.params.contains("iterations"));
        let TrialSpec::Workload(spec) = io.spec.as_ref().unwrap() else { panic!("a workload spec") };
        assert_eq!((spec.params.transfer_size, spec.params.block_size, spec.prio), (102_400, 1024, 99));
        assert_eq!(trials.iter().filter(|t| t.params.procs() == Some(500)).count(), 15);
        assert!(trials.iter().filter(|t| t.params.procs() == Some(500)).all(|t| t.experiment == 2));
        assert_eq!(trials[4].repeat, 5);
        assert_eq!(trials[5].repeat, 1);
        assert_eq!(study_run().unwrap().0.uuid, run.uuid, "a fixed id");
    }
}
