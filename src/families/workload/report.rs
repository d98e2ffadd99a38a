//! Workload results: the 2014 study's own line per trial, JSON lines, and a summary table
//! per policy x procs (mean, sd, median, min, max over repeats).

use super::Workload;
use crate::analysis::attribution::describe_prio;
use crate::analysis::offcpu::{Outsider, ChildrenTrace};
use crate::analysis::stats::median;
use crate::analysis::stats::Summary;
use crate::families::declared::FamilyModel;
use crate::families::figures as registry;
use crate::families::figures;
use crate::families::figures::Part;
use crate::families::list::Family;
use crate::families::list::Outcome;
use crate::families::list::TrialSpec;
use crate::families::workload::model::{WorkloadKind, WorkloadOutcome, WorkloadSpec};
use crate::model::{ns_to_s, TrialStatus};
use crate::report::chart::{Chart, Plot, Series, Style};
use crate::report::family::{Column, FamilyReport, Summarise};
use crate::report::figures::{Figures, LineExtras, Status};
use crate::report::plots::series_of;
use crate::report::table::Table;
use crate::store::group::Group;
use crate::store::TrialRecord;
use serde::Serialize;
use std::collections::BTreeMap;

/// One trial of a live `schedlab workload` run: what ran, how it ended, what it measured.
pub struct LiveTrial {
    pub spec: WorkloadSpec,
    pub status: TrialStatus,
    pub outcome: Option<WorkloadOutcome>,
}

/// The heading the study's script printed before each block of trials.
pub fn classic_heading(spec: &WorkloadSpec) -> String {
    let who = format!("using {} with {} simultaneous processes...", spec.policy.kernel_name(), spec.procs);
    match spec.params.kind {
        WorkloadKind::Cpu => format!("Calculating pi over {} iterations {who}", spec.params.iterations),
        WorkloadKind::Io => format!(
            "Reading and writing {} bytes in {}-byte blocks {who}",
            spec.params.transfer_size, spec.params.block_size
        ),
        WorkloadKind::Mixed => {
            format!("Calculating pi over {} iterations, writing after each, {who}", spec.params.iterations)
        }
    }
}

/// `wall=17.34 user=50.66 system=0.15 CPU=292% i-switched=44 v-switched=17`
pub fn classic_line(status: &TrialStatus, outcome: Option<&WorkloadOutcome>) -> String {
    match (status, outcome) {
        (TrialStatus::Ok, Some(o)) => format!(
            "wall={:.2} user={:.2} system={:.2} CPU={:.0}% i-switched={} v-switched={}",
            ns_to_s(o.wall_ns as f64),
            ns_to_s(o.usage.utime_ns as f64),
            ns_to_s(o.usage.stime_ns as f64),
            o.cpu_pct(),
            o.usage.nivcsw,
            o.usage.nvcsw
        ),
        (TrialStatus::TimedOut(reason), _) => format!("timed out: {reason}"),
        (TrialStatus::Failed(reason), _) => format!("failed: {reason}"),
        (TrialStatus::Discarded(reason), _) => format!("discarded: {reason}"),
        (TrialStatus::Ok, None) => "failed: no outcome".into(),
    }
}

const COLUMNS: [&str; 17] = [
    "Policy",
    "Procs",
    "Runs",
    "Wall s",
    "sd",
    "median",
    "min..max",
    "User s",
    "Sys s",
    "CPU %",
    "Invol sw",
    "Vol sw",
    "Fairness",
    "Finish s",
    "RQ wait s",
    "RQ max s",
    "Migr",
];

/// Mean of a figure the kernel may not give: unknown ("-") if any trial lacks it.
fn mean_known(trials: &[&WorkloadOutcome], f: impl Fn(&WorkloadOutcome) -> Option<u64>) -> Option<f64> {
    let values: Option<Vec<f64>> = trials.iter().map(|t| f(t).map(|v| v as f64)).collect();
    Summary::of(&values?).map(|s| s.mean)
}

/// `mean_known` of a real-valued figure.
fn mean_known_f64(trials: &[&WorkloadOutcome], f: impl Fn(&WorkloadOutcome) -> Option<f64>) -> Option<f64> {
    let values: Option<Vec<f64>> = trials.iter().map(|t| f(t)).collect();
    Summary::of(&values?).map(|s| s.mean)
}

/// A known figure with `decimals`, or "-".
pub fn known_cell(v: Option<f64>, decimals: usize) -> String {
    v.map_or("-".to_string(), |v| format!("{v:.decimals$}"))
}

/// One cell's run-queue waits per child, means over its trials (ns).
struct Waits {
    label: String,
    wall: f64,
    min: f64,
    p50: f64,
    max: f64,
}

/// The starvation line: which cell left one child waiting on the run queue for most of
/// the wall time while another waited least (the largest spread of the children's waits,
/// as a share of the wall), then every cell's waits. A policy that starves (FIFO with more
/// CPU-bound children than CPUs) shows waits from none to most of the wall; one that shares
/// (OTHER) shows every child waiting alike. Cells whose wait is unknown are left out;
/// `None` when no cell has one.
pub fn starvation_line(cells: &[(String, Vec<&WorkloadOutcome>)]) -> Option<String> {
    let waits: Vec<Waits> = cells
        .iter()
        .filter_map(|(label, trials)| {
            let wall = Summary::of(&trials.iter().map(|t| t.wall_ns as f64).collect::<Vec<_>>())?.mean;
            Some(Waits {
                label: label.clone(),
                wall,
                min: mean_known(trials, |t| t.run_delay_min_ns)?,
                p50: mean_known(trials, |t| t.run_delay_p50_ns)?,
                max: mean_known(trials, |t| t.run_delay_max_ns)?,
            })
        })
        .filter(|w| w.wall > 0.0)
        .collect();
    let pct = |ns: f64, wall: f64| 100.0 * ns / wall;
    let worst = waits.iter().max_by(|a, b| ((a.max - a.min) / a.wall).total_cmp(&((b.max - b.min) / b.wall)))?;
    let each: Vec<String> = waits
        .iter()
        .map(|w| {
            format!(
                "{} {:.3}..{:.3} s, median {:.3} s, of {:.3} s wall ({:.0}..{:.0}%)",
                w.label,
                w.min / 1e9,
                w.max / 1e9,
                w.p50 / 1e9,
                w.wall / 1e9,
                pct(w.min, w.wall),
                pct(w.max, w.wall)
            )
        })
        .collect();
    Some(format!(
        "starvation: {} left one child waiting on the run queue {:.0}% of the wall ({:.3} s of {:.3} s) while \
         another waited {:.0}% ({:.3} s)\nrun-queue wait per child, shortest..longest (means over trials): {}",
        worst.label,
        pct(worst.max, worst.wall),
        worst.max / 1e9,
        worst.wall / 1e9,
        pct(worst.min, worst.wall),
        worst.min / 1e9,
        each.join("; ")
    ))
}

fn mean_of(trials: &[&WorkloadOutcome], f: impl Fn(&WorkloadOutcome) -> f64) -> f64 {
    Summary::of(&trials.iter().map(|t| f(t)).collect::<Vec<_>>()).map_or(f64::NAN, |s| s.mean)
}

/// One row per policy x procs, in the order the cells were run. Figures are over the
/// trials that finished; "Runs" says how many of how many that is.
pub fn table(trials: &[LiveTrial]) -> String {
    let mut cells: Vec<(crate::model::Policy, usize)> = Vec::new();
    for t in trials {
        let key = (t.spec.policy, t.spec.procs);
        if !cells.contains(&key) {
            cells.push(key);
        }
    }
    let mut table = Table::new(COLUMNS).left_align(0);
    let mut starvation_cells = Vec::new();
    for (policy, procs) in cells {
        let all: Vec<&LiveTrial> = trials.iter().filter(|t| t.spec.policy == policy && t.spec.procs == procs).collect();
        let ok: Vec<&WorkloadOutcome> =
            all.iter().filter(|t| t.status.is_ok()).filter_map(|t| t.outcome.as_ref()).collect();
        let runs = format!("{}/{}", ok.len(), all.len());
        let walls: Vec<f64> = ok.iter().map(|t| ns_to_s(t.wall_ns as f64)).collect();
        let Some(wall) = Summary::of(&walls) else {
            let mut row = vec![policy.kernel_name().to_string(), procs.to_string(), runs];
            row.extend((3..COLUMNS.len()).map(|_| "-".to_string()));
            table.push(row);
            continue;
        };
        let first = mean_known(&ok, |t| t.first_finish_ns).map(ns_to_s);
        let last = mean_known(&ok, |t| t.last_finish_ns).map(ns_to_s);
        let finish = match first.zip(last) {
            Some((first, last)) => format!("{first:.2}..{last:.2}"),
            None => "-".to_string(),
        };
        table.push(vec![
            policy.kernel_name().to_string(),
            procs.to_string(),
            runs,
            format!("{:.3}", wall.mean),
            format!("{:.3}", wall.sd),
            format!("{:.3}", wall.median),
            format!("{:.3}..{:.3}", wall.min, wall.max),
            format!("{:.3}", mean_of(&ok, |t| ns_to_s(t.usage.utime_ns as f64))),
            format!("{:.3}", mean_of(&ok, |t| ns_to_s(t.usage.stime_ns as f64))),
            format!("{:.0}", mean_of(&ok, WorkloadOutcome::cpu_pct)),
            format!("{:.0}", mean_of(&ok, |t| t.usage.nivcsw as f64)),
            format!("{:.0}", mean_of(&ok, |t| t.usage.nvcsw as f64)),
            known_cell(mean_known_f64(&ok, |t| t.fairness), 3),
            finish,
            known_cell(mean_known(&ok, |t| t.run_delay_ns).map(|ns| ns / 1e9), 3),
            known_cell(mean_known(&ok, |t| t.run_delay_max_ns).map(|ns| ns / 1e9), 3),
            known_cell(mean_known(&ok, |t| t.migrations), 0),
        ]);
        starvation_cells.push((format!("{} x {procs}", policy.kernel_name()), ok));
    }
    let mut text = table.render();
    if let Some(line) = starvation_line(&starvation_cells) {
        text.push_str(&line);
        text.push('\n');
    }
    text
}

/// With `--trace on`: per policy x procs cell, each child's time off the CPU and who ran
/// in its place, over its traced trials (`None` when no trial was traced). Seed 002's
/// "SCHED_OTHER preempts a process once its time slice is used up", measured: how often
/// each child was switched out while still runnable, and by whom.
pub fn off_cpu_lines(trials: &[LiveTrial]) -> Option<String> {
    let mut cells: Vec<(crate::model::Policy, usize)> = Vec::new();
    for t in trials.iter().filter(|t| t.spec.beside.trace) {
        let key = (t.spec.policy, t.spec.procs);
        if !cells.contains(&key) {
            cells.push(key);
        }
    }
    if cells.is_empty() {
        return None;
    }
    let mut lines =
        vec!["What ran instead (--trace on; each child from its gate to its finish, over the cell's trials):"
            .to_string()];
    for (policy, procs) in cells {
        let traces: Vec<&ChildrenTrace> = trials
            .iter()
            .filter(|t| t.spec.policy == policy && t.spec.procs == procs)
            .filter_map(|t| t.outcome.as_ref().and_then(|o| o.trace.as_ref()))
            .collect();
        let cell = format!("{} x {procs}", policy.kernel_name());
        if let Some(reason) = traces.iter().find_map(|t| t.unavailable.as_deref()) {
            lines.push(format!("  {cell}: {reason}"));
            continue;
        }
        lines.push(format!("  {cell}: {}", describe_off_cpu(&traces)));
    }
    Some(lines.join("\n"))
}

/// One cell's traced trials in a sentence: preemptions per child and by whom, time
/// runnable and behind whom, time asleep, the outsiders that took the most.
pub fn describe_off_cpu(traces: &[&ChildrenTrace]) -> String {
    let pooled = ChildrenTrace {
        unavailable: None,
        lost_events: traces.iter().map(|t| t.lost_events).sum(),
        children: traces.iter().flat_map(|t| t.children.iter().cloned()).collect(),
        outsiders: Vec::new(),
    };
    let t = pooled.totals();
    let n = pooled.children.len();
    if n == 0 {
        return "no child traced".to_string();
    }
    let ms = |ns: u64| ns as f64 / 1e6 / n as f64;
    let share = |part: u64, whole: u64| if whole == 0 { 0.0 } else { 100.0 * part as f64 / whole as f64 };
    let preemptions = t.sum.preempted_by_siblings + t.sum.preempted_by_others;
    let mut text = if preemptions == 0 {
        format!("no child was preempted ({n} children)")
    } else {
        format!(
            "a child was preempted a median {} times ({}..{}, {n} children), {:.0} % of them by a sibling",
            t.preemptions_p50,
            t.preemptions_min,
            t.preemptions_max,
            share(t.sum.preempted_by_siblings, preemptions)
        )
    };
    text.push_str(&format!(
        "; per child {:.1} ms on a CPU, {:.1} ms runnable ({:.0} % behind siblings, {:.0} % behind other tasks, {:.0} % \
         with no task traced on its CPU), {:.1} ms asleep in I/O (D), {:.1} ms asleep otherwise",
        ms(t.sum.on_cpu_ns),
        ms(t.sum.runnable_ns),
        share(t.sum.behind_siblings_ns, t.sum.runnable_ns),
        share(t.sum.behind_others_ns, t.sum.runnable_ns),
        share(t.sum.runnable_ns.saturating_sub(t.sum.behind_siblings_ns + t.sum.behind_others_ns), t.sum.runnable_ns),
        ms(t.sum.blocked_ns),
        ms(t.sum.sleeping_ns),
    ));
    let mut outsiders: Vec<Outsider> = Vec::new();
    for o in traces.iter().flat_map(|t| &t.outsiders) {
        match outsiders.iter_mut().find(|x| x.comm == o.comm && x.prio == o.prio) {
            Some(x) => {
                x.preemptions += o.preemptions;
                x.behind_ns += o.behind_ns;
            }
            None => outsiders.push(o.clone()),
        }
    }
    outsiders.sort_by(|a, b| b.behind_ns.cmp(&a.behind_ns).then(b.preemptions.cmp(&a.preemptions)));
    if !outsiders.is_empty() {
        let named: Vec<String> = outsiders
            .iter()
            .take(3)
            .map(|o| {
                format!(
                    "{} ({}): {} preemption{}, {:.1} ms",
                    o.comm,
                    describe_prio(o.prio),
                    o.preemptions,
                    if o.preemptions == 1 { "" } else { "s" },
                    o.behind_ns as f64 / 1e6
                )
            })
            .collect();
        text.push_str(&format!("; other tasks: {}", named.join(", ")));
    }
    if pooled.lost_events > 0 {
        text.push_str(&format!("; {} events lost: the split is partial", pooled.lost_events));
    }
    text
}

/// Under SCHED_DEADLINE: a row per deadline cell with what each child's reservation
/// allowed (runtime / period) beside the CPU % the children got, and how many fell short.
/// `None` when no cell ran under deadline.
pub fn reservation_table(trials: &[LiveTrial]) -> Option<String> {
    let mut cells: Vec<(crate::model::DeadlineParams, usize)> = Vec::new();
    for t in trials {
        if let Some(dl) = t.spec.beside.deadline {
            if !cells.contains(&(dl, t.spec.procs)) {
                cells.push((dl, t.spec.procs));
            }
        }
    }
    if cells.is_empty() {
        return None;
    }
    let mut table =
        Table::new(["Policy", "Procs", "Reservation", "Allowed %/child", "Got %/child", "Lowest %", "Short children"])
            .left_align(0)
            .left_align(2);
    for (dl, procs) in cells {
        let figures: Vec<crate::families::workload::model::ReservationFigures> = trials
            .iter()
            .filter(|t| t.spec.beside.deadline == Some(dl) && t.spec.procs == procs && t.status.is_ok())
            .filter_map(|t| t.outcome.as_ref().and_then(|o| o.reservation))
            .collect();
        let mean = |f: &dyn Fn(&crate::families::workload::model::ReservationFigures) -> f64| {
            Summary::of(&figures.iter().map(f).collect::<Vec<_>>())
                .map_or("-".to_string(), |s| format!("{:.1}", s.mean))
        };
        let short: Option<usize> = figures.iter().map(|r| r.children_short).sum();
        table.push(vec![
            "SCHED_DEADLINE".to_string(),
            procs.to_string(),
            format!("{} every {}", crate::model::format_ns(dl.runtime_ns), crate::model::format_ns(dl.period_ns)),
            format!("{:.1}", 100.0 * dl.bandwidth()),
            mean(&|r| r.child_cpu_pct_mean),
            figures.iter().map(|r| r.child_cpu_pct_min).reduce(f64::min).map_or("-".to_string(), |v| format!("{v:.1}")),
            match (short, figures.is_empty()) {
                (_, true) => "-".to_string(),
                (Some(n), false) => format!("{n} of {}", procs * figures.len()),
                (None, false) => "n/a (blocks on I/O)".to_string(),
            },
        ]);
    }
    Some(format!(
        "{}each child has its own reservation; got % is its CPU time over its time from the start gate to its \
         finish; short: below 90 % of what was allowed (jobs that did not get their runtime by their deadline)",
        table.render()
    ))
}

/// The line above the table: what every child did.
pub fn describe(spec: &WorkloadSpec, repeats: u32) -> String {
    let p = &spec.params;
    let work = match p.kind {
        WorkloadKind::Cpu => format!("cpu: each child estimates pi from {} Monte Carlo samples", p.iterations),
        WorkloadKind::Io => format!(
            "io: each child copies {} bytes in {}-byte blocks, input and output opened O_SYNC",
            p.transfer_size, p.block_size
        ),
        WorkloadKind::Mixed => {
            format!("mixed: each child does {} iterations of one pi sample and an 80-byte O_SYNC write", p.iterations)
        }
    };
    format!(
        "workload {work}; seed {}; {repeats} trial(s) per cell; wall, user, sys and switches are means over the \
         trials that finished, summed over children; RQ wait = run-queue wait summed over children, RQ max = the \
         longest-waiting child's, Migr = migrations summed over children",
        p.seed
    )
}

/// A workload trial's JSON line: its settings and status, its figures (zeros when it did
/// not finish: its status says why), its size, load and reservation, its SCHED_DEADLINE
/// figures when the kernel gave them, and with `--trace on` its time off the CPU.
#[derive(Serialize)]
pub struct WorkloadLine<'a> {
    family: &'static str,
    workload: &'static str,
    policy: &'static str,
    prio: i32,
    nice: Option<i32>,
    procs: usize,
    repeat: usize,
    #[serde(flatten)]
    status: Status<'a>,
    #[serde(flatten)]
    figures: Figures,
    iterations: Option<u64>,
    transfer_size: Option<u64>,
    block_size: Option<u64>,
    seed: u64,
    timeout_s: f64,
    #[serde(flatten)]
    beside: LineExtras,
    #[serde(flatten)]
    deadline: Option<Figures>,
    #[serde(flatten)]
    off_cpu: Option<OffCpuKeys<'a>>,
}

/// With `--trace on`: the children's time off the CPU summed (`off_cpu`), the outsiders
/// that took their CPUs (`outsiders`), each child's split (`off_cpu_children`) and the
/// events lost (`trace_lost_events`); or `attribution` saying why there are none.
#[derive(Serialize)]
#[serde(untagged)]
enum OffCpuKeys<'a> {
    Unavailable {
        attribution: &'a str,
    },
    Traced {
        off_cpu: crate::analysis::offcpu::OffCpuTotals,
        outsiders: &'a [crate::analysis::offcpu::Outsider],
        off_cpu_children: &'a [crate::analysis::offcpu::ChildOffCpu],
        trace_lost_events: u64,
    },
}

impl<'a> OffCpuKeys<'a> {
    fn of(t: &'a ChildrenTrace) -> OffCpuKeys<'a> {
        match &t.unavailable {
            Some(reason) => OffCpuKeys::Unavailable { attribution: reason },
            None => OffCpuKeys::Traced {
                off_cpu: t.totals(),
                outsiders: &t.outsiders,
                off_cpu_children: &t.children,
                trace_lost_events: t.lost_events,
            },
        }
    }
}

/// A workload trial's figures (zeros when it did not finish: its status says why).
pub fn line<'a>(
    spec: &'a WorkloadSpec,
    repeat: usize,
    status: &'a TrialStatus,
    o: Option<&'a WorkloadOutcome>,
) -> WorkloadLine<'a> {
    let p = &spec.params;
    let zero = WorkloadOutcome {
        children: spec.procs,
        wall_ns: 0,
        usage: Default::default(),
        fork_ns: Some(0),
        first_finish_ns: Some(0),
        last_finish_ns: Some(0),
        fairness: Some(1.0),
        ..WorkloadOutcome::default()
    };
    let whole = Outcome::Workload(o.cloned().unwrap_or(zero));
    let io = p.kind == WorkloadKind::Io;
    let figures = registry::of(Family::Workload);
    WorkloadLine {
        family: Workload::NAME,
        workload: p.kind.as_str(),
        policy: spec.policy.as_str(),
        prio: spec.prio,
        nice: spec.nice,
        procs: spec.procs,
        repeat,
        status: Status::of(status),
        figures: Figures::of(figures, Part::Always, |f| f.value(&whole)),
        iterations: (!io).then_some(p.iterations),
        transfer_size: io.then_some(p.transfer_size),
        block_size: io.then_some(p.block_size),
        seed: p.seed,
        timeout_s: spec.timeout.as_secs_f64(),
        beside: LineExtras::of(&spec.beside.load, Some(&whole), spec.beside.deadline),
        deadline: Figures::known(figures, Part::Deadline, &whole),
        off_cpu: o.and_then(|w| w.trace.as_ref()).map(OffCpuKeys::of),
    }
}

/// The stored table of a workload experiment and its lines, from the figure registry.
impl FamilyReport for Workload {
    /// The starvation line, its cells named by the parameters that vary between them.
    fn experiment_note(groups: &[&Group]) -> Option<String> {
        let axes = crate::store::group::varying(groups);
        let cells: Vec<(String, Vec<&WorkloadOutcome>)> = groups
            .iter()
            .map(|g| {
                let label: Vec<String> = axes.iter().map(|k| format!("{k}={}", g.value_text(k))).collect();
                let label = if label.is_empty() { "the cell".to_string() } else { label.join(" ") };
                (label, g.outcomes().filter_map(Outcome::workload).collect())
            })
            .collect();
        starvation_line(&cells)
    }

    fn columns() -> Vec<Column> {
        use crate::families::workload::figures::*;
        use Summarise::*;
        vec![
            Column::named("Wall s", &WALL_S, MeanSd, 3),
            Column::named("median", &WALL_S, Median, 3),
            Column::Ci,
            Column::named("User s", &USER_S, Mean, 3),
            Column::named("Sys s", &SYS_S, Mean, 3),
            Column::named("CPU %", &CPU_PCT, Mean, 0),
            Column::named("Invol sw", &NIVCSW, Mean, 1),
            Column::named("Vol sw", &NVCSW, Mean, 1),
            Column::named("Fairness", &FAIRNESS, Mean, 3),
            Column::named("RQ wait s", &RUN_DELAY_S, Mean, 3),
            Column::named("RQ max s", &RUN_DELAY_MAX_S, Mean, 3),
            Column::named("Migr", &MIGRATIONS, Mean, 1),
        ]
    }

    fn stored_line(t: &TrialRecord) -> Option<impl Serialize> {
        let Some(TrialSpec::Workload(spec)) = &t.spec else { return None };
        let outcome = t.outcome.as_ref().and_then(|o| o.workload());
        Some(line(spec, t.repeat.max(0) as usize, &t.status, outcome))
    }

    fn charts(n: i64, groups: &[&Group], axes: &[String]) -> Vec<Chart> {
        workload_charts(n, groups, axes)
    }
}

fn workload_charts(n: i64, gs: &[&Group], axes: &[String]) -> Vec<Chart> {
    let mut charts = Vec::new();
    let x_axis = "procs";
    let others: Vec<String> = axes.iter().filter(|a| a.as_str() != "workload").cloned().collect();
    let mut by_workload: BTreeMap<String, Vec<&Group>> = BTreeMap::new();
    for g in gs {
        by_workload.entry(g.value_text("workload")).or_default().push(g);
    }
    for (workload, set) in by_workload {
        let wall_s = figures::headline(Family::Workload);
        let involuntary = &crate::families::workload::figures::NIVCSW;
        for (figure, what, log) in
            [(wall_s, "wall time, s (mean ± sd)", false), (involuntary, "involuntary switches (log)", true)]
        {
            let title = format!(
                "Experiment {n}: {workload} workload, {}",
                if log { "involuntary context switches" } else { "wall time" }
            );
            let mut plot = Plot { y_log: log, ..Plot::new(title, "processes", what) };
            for (label, mut s) in series_of(&set, x_axis, &others) {
                s.sort_by(|a, b| a.procs().unwrap_or(0.0).total_cmp(&b.procs().unwrap_or(0.0)));
                let points = s
                    .iter()
                    .filter_map(|g| {
                        let values = g.values(|o| figure.value(o));
                        let sum = Summary::of(&values)?;
                        let err = (!log).then_some((sum.mean - sum.sd, sum.mean + sum.sd));
                        Some((g.procs()?, if log { median(&values) } else { sum.mean }, err))
                    })
                    .collect();
                plot.series.push(Series::new(label.replace("policy=", ""), points, Style::LinePoints));
            }
            charts.push(Chart {
                name: format!("workload-{n}-{workload}-{}", if log { "switches" } else { "wall" }),
                svg: plot.render(),
            });
        }
    }
    charts
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::families::workload::model::{ChildRecord, WorkloadParams, WorkloadTrial};
    use crate::model::{BesideSpec, Policy, SchedInfo, Usage};
    use crate::report::figures::object_of;
    use std::time::Duration;

    fn trial(policy: Policy, wall_s: f64, child_cpu_ns: &[u64], status: TrialStatus) -> LiveTrial {
        let spec = WorkloadSpec {
            params: WorkloadParams {
                kind: WorkloadKind::Cpu,
                iterations: 100,
                transfer_size: 0,
                block_size: 0,
                seed: 1,
            },
            procs: child_cpu_ns.len(),
            policy,
            prio: 0,
            nice: None,
            timeout: Duration::from_secs(1),
            dir: None,
            allow_rt_saturation: false,
            beside: BesideSpec { schedstat: true, ..BesideSpec::default() },
        };
        let children: Vec<ChildRecord> = child_cpu_ns
            .iter()
            .enumerate()
            .map(|(i, &ns)| ChildRecord {
                finish_ns: (i as u64 + 1) * 1_000_000,
                usage: Usage { utime_ns: ns, ..Usage::default() },
                pi_estimate: Some(3.0),
                sched: SchedInfo {
                    run_delay_ns: Some(i as u64 * 1_000_000),
                    migrations: Some(1),
                    ..SchedInfo::default()
                },
            })
            .collect();
        let mut usage = Usage::default();
        children.iter().for_each(|c| usage.accumulate(&c.usage));
        usage.nivcsw = 44;
        usage.nvcsw = 17;
        let measured = WorkloadTrial {
            spec: spec.clone(),
            repeat: 1,
            status,
            wall_ns: (wall_s * 1e9) as u64,
            usage,
            children,
            fork_ns: 0,
            trace: None,
        };
        LiveTrial { spec, outcome: measured.outcome(), status: measured.status }
    }

    #[test]
    fn classic_line_matches_the_study_format() {
        let t = trial(Policy::Fifo, 17.34, &[25_330_000_000, 25_330_000_000], TrialStatus::Ok);
        assert_eq!(
            classic_line(&t.status, t.outcome.as_ref()),
            "wall=17.34 user=50.66 system=0.00 CPU=292% i-switched=44 v-switched=17"
        );
    }

    #[test]
    fn fairness_is_jain_over_child_cpu() {
        let fairness = |cpu: &[u64]| trial(Policy::Other, 1.0, cpu, TrialStatus::Ok).outcome.unwrap().fairness;
        assert_eq!(fairness(&[5, 5, 5, 5]), Some(1.0));
        assert_eq!(fairness(&[8, 0, 0, 0]), Some(0.25));
    }

    #[test]
    fn table_summarises_ok_trials_and_counts_failures() {
        let trials = vec![
            trial(Policy::Other, 1.0, &[1, 1], TrialStatus::Ok),
            trial(Policy::Other, 3.0, &[1, 1], TrialStatus::Ok),
            trial(Policy::Other, 9.0, &[1, 1], TrialStatus::TimedOut("late".into())),
        ];
        let text = table(&trials);
        let row = text.lines().nth(1).unwrap();
        assert!(row.starts_with("SCHED_OTHER"), "{row}");
        assert!(row.contains("2/3"), "{row}");
        assert!(row.contains("2.000"), "mean of 1 and 3: {row}");
        assert!(row.contains("1.000..3.000"), "{row}");
    }

    #[test]
    fn the_starvation_line_names_the_cell_with_the_widest_spread_of_waits() {
        let cell = |wall_s: f64, waits_ms: &[u64]| {
            let mut t = trial(Policy::Other, wall_s, &vec![1; waits_ms.len()], TrialStatus::Ok);
            let mut o = t.outcome.take().unwrap();
            let mut sorted = waits_ms.to_vec();
            sorted.sort_unstable();
            o.run_delay_min_ns = Some(sorted[0] * 1_000_000);
            o.run_delay_max_ns = Some(sorted[sorted.len() - 1] * 1_000_000);
            o.run_delay_p50_ns = Some(sorted[sorted.len() / 2] * 1_000_000);
            o
        };
        // FIFO-like: 0 to 750 ms of a 1 s wall; OTHER-like: 2.8 to 3.0 s of 3.2 s (longer
        // waits, but even).
        let (queued, shared) = (cell(1.0, &[0, 0, 250, 250, 500, 500, 750, 750]), cell(3.2, &[2800, 2900, 3000]));
        let cells = vec![("SCHED_OTHER x 8".to_string(), vec![&shared]), ("SCHED_FIFO x 8".to_string(), vec![&queued])];
        let line = starvation_line(&cells).unwrap();
        assert!(
            line.starts_with(
                "starvation: SCHED_FIFO x 8 left one child waiting on the run queue 75% of the wall (0.750 s of 1.000 \
                 s) while another waited 0% (0.000 s)"
            ),
            "{line}"
        );
        assert!(line.contains("SCHED_OTHER x 8 2.800..3.000 s, median 2.900 s, of 3.200 s wall (88..94%)"), "{line}");
        // A cell whose wait is unknown is left out; with none known there is no line.
        let mut unknown = queued.clone();
        unknown.run_delay_max_ns = None;
        assert!(starvation_line(&[("x".to_string(), vec![&unknown])]).is_none());
        let with_unknown = vec![cells[0].clone(), ("y".to_string(), vec![&unknown])];
        assert!(starvation_line(&with_unknown).unwrap().starts_with("starvation: SCHED_OTHER x 8"));
    }

    #[test]
    fn json_has_the_required_keys() {
        let t = trial(Policy::Rr, 2.0, &[1, 2], TrialStatus::Ok);
        let j = object_of(&line(&t.spec, 1, &t.status, t.outcome.as_ref()));
        for key in [
            "workload",
            "policy",
            "prio",
            "procs",
            "repeat",
            "wall_s",
            "user_s",
            "sys_s",
            "cpu_pct",
            "nvcsw",
            "nivcsw",
            "fairness",
            "iterations",
            "run_delay_s",
            "run_delay_max_s",
            "run_delay_p50_s",
            "migrations",
        ] {
            assert!(j.get(key).is_some(), "missing {key}");
        }
        assert_eq!(j["status"], "ok");
        // Two children waited 0 and 1 ms (the sample's figures), each moved once.
        assert_eq!((j["run_delay_s"].as_f64(), j["run_delay_max_s"].as_f64()), (Some(0.001), Some(0.001)));
        assert_eq!((j["run_delay_p50_s"].as_f64(), j["migrations"].as_u64()), (Some(0.0005), Some(2)));
    }
}
