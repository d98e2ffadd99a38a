//! Tables of a stored run: one per experiment, one row per parameter combination,
//! figures summarised over the repeats that finished (failed ones are counted, never
//! averaged in). These read records only; they never run a benchmark.

use crate::analysis::stats::Summary;
use crate::exec::adaptive::AdaptivePlan;
use crate::families::with_family;
use crate::families::Outcome;
use crate::report::cells::{by_experiment, headline, percent_text, RunRule};
use crate::report::family::{Column, FamilyReport};
use crate::report::table::Table;
use crate::store::group::{groups, varying, Group};
use crate::store::{RunRecord, TrialRecord};

/// "2 block(s) re-run for steal (their 3 trials are marked discarded)" for a run that
/// dropped blocks for steal, else `None`. A dropped block's trials are consecutive and share
/// a repeat number; its re-run comes after them, kept.
pub fn steal_reruns(trials: &[TrialRecord]) -> Option<String> {
    let dropped: Vec<&TrialRecord> =
        trials.iter().filter(|t| matches!(t.status, crate::model::TrialStatus::Discarded(_))).collect();
    if dropped.is_empty() {
        return None;
    }
    let blocks = 1 + dropped
        .windows(2)
        .filter(|w| w[1].seq != w[0].seq + 1 || (w[1].experiment, w[1].repeat) != (w[0].experiment, w[0].repeat))
        .count();
    Some(format!(
        "{blocks} block(s) re-run for steal (their {} trial(s) are marked discarded, in no figure)",
        dropped.len()
    ))
}

/// The run's header: what, when, where.
pub fn describe_run(run: &RunRecord, ok: usize, not_ok: usize) -> String {
    let plan = AdaptivePlan::of_run_options(&run.options);
    let planned = if plan.is_adaptive() {
        format!("{} planned (the minimum: adaptive repeats add more)", run.planned)
    } else {
        format!("{} planned", run.planned)
    };
    let m = run.machine.fields();
    let text = |field: &Option<String>| field.clone().unwrap_or_else(|| "unknown".into());
    let mut out = format!(
        "run {}  suite {}  {} .. {}  [{}]\nmachine {}  kernel {}  {}  CPUs {}  schedlab {}\ntrials: {} ok, {} not ok, {}\n",
        run.id,
        run.suite_name,
        run.started,
        run.ended.as_deref().unwrap_or("(not finished)"),
        run.status,
        text(&m.hostname),
        text(&m.kernel_release),
        text(&m.preemption_model),
        text(&m.cpus_online),
        run.tool_version,
        ok,
        not_ok,
        planned
    );
    if let Some(loads) = &run.options.loads {
        let described: Vec<String> = loads.iter().map(|l| l.describe()).collect();
        out.push_str(&format!("background load in some trials: {}\n", described.join("; ")));
    }
    for w in &run.warnings {
        out.push_str(&format!("warning: {w}\n"));
    }
    out
}

/// The tables of a run, with each adaptive experiment's target in its title and each
/// cell that stopped short of it marked.
pub fn experiment_tables_for(trials: &[TrialRecord], rule: &RunRule) -> Vec<(String, Table)> {
    let all = groups(trials);
    let mut out = Vec::new();
    for (experiment, groups) in by_experiment(&all) {
        let family = groups[0].family;
        let axes = varying(&groups);
        let fixed_params = groups[0].params.text(|k| !axes.iter().any(|a| a == k));
        let mut title = format!("experiment {} ({}) {fixed_params}", experiment + 1, family.as_str());
        let index = usize::try_from(experiment).ok();
        let compared = index.and_then(|e| rule.asking.get(e)?.compare.clone()).filter(|a| axes.contains(a));
        if let Some(t) = index.and_then(|e| rule.plan.target(e)) {
            let until = match &compared {
                Some(axis) => format!("until its questions over {axis} are answered, blocks of"),
                None => format!("until ±{}%,", percent_text(t.ci)),
            };
            title = format!("{} [adaptive: {until} {}..{} repeats]", title.trim_end(), t.min_repeat, t.max_repeat);
        }
        let columns = with_family!(family, F => F::columns());
        let headers: Vec<&str> = columns.iter().map(Column::header).collect();
        let rows = groups.iter().map(|g| columns.iter().map(|c| c.cell(&groups, g, rule)).collect::<Vec<_>>());
        // How hard a background load pushed, where one ran: the median over ok repeats.
        let loaded = groups.iter().any(|g| g.outcomes().any(|o| o.load().is_some()));
        let load_header = loaded.then_some("Load (median over repeats)");
        let mut table =
            Table::new(axes.iter().map(String::as_str).chain(["ok/runs"]).chain(headers).chain(load_header));
        for (g, row) in groups.iter().zip(rows) {
            let mut cells: Vec<String> = axes.iter().map(|k| g.value_text(k)).collect();
            cells.push(format!("{}/{}", g.ok().count(), g.trials.len()));
            cells.extend(row);
            if loaded {
                cells.push(load_cell(g));
            }
            table.push(cells);
        }
        for c in 0..axes.len() {
            table = table.left_align(c);
        }
        out.push((title.trim_end().to_string(), table));
    }
    out
}

/// The tables a family adds under an experiment's table of cells (a task set's tasks),
/// titled with the experiment's number.
pub fn family_tables(groups: &[&Group]) -> Vec<(String, Table)> {
    let Some(first) = groups.first() else { return Vec::new() };
    let axes = varying(groups);
    let tables = with_family!(first.family, F => F::extra_tables(groups, &axes));
    tables.into_iter().map(|(what, t)| (format!("experiment {}: {what}", first.experiment + 1), t)).collect()
}

/// A group's background load: its kind and median throughput over the ok repeats ("-"
/// without a load).
fn load_cell(g: &Group) -> String {
    let loads: Vec<&crate::model::LoadOutcome> = g.outcomes().filter_map(Outcome::load).collect();
    let Some(first) = loads.first() else { return "-".into() };
    let median = |f: fn(&crate::model::LoadOutcome) -> f64| {
        Summary::of(&loads.iter().map(|l| f(l)).collect::<Vec<_>>()).map_or(0.0, |s| s.median)
    };
    let typical = crate::model::LoadOutcome {
        window_ns: 1_000_000_000,
        loops: median(|l| l.loops_per_s()) as u64,
        io_bytes: median(|l| l.io_bytes_per_s()) as u64,
        messages: median(|l| l.messages_per_s()) as u64,
        ..(*first).clone()
    };
    typical.summary()
}

/// What the summary columns are, per family.
fn footnote(title: &str) -> Option<&'static str> {
    if title.contains("(ring)") {
        Some(
            "medians over repeats; Projected = the smallest ring's CPU time per hop x this ring's hops; \
             95% CI of the median ns/switch; RQ ns/hop = run-queue wait per hop summed over members, Migr = \
             migrations (medians; - where unknown)",
        )
    } else if title.contains("(workload)") {
        Some(
            "Wall s is mean ± sd over repeats; the other columns are means; 95% CI of the median wall time; RQ wait s \
             = run-queue wait summed over children, RQ max s = the longest-waiting child's, Migr = migrations (- where \
             unknown)",
        )
    } else if title.contains("(command)") {
        Some(
            "medians over repeats, of the command's whole process tree; 95% CI of the median of the headline (the first \
             figure declared with better = lower, else the wall time); cpu wait s = time its tasks waited for a CPU, \
             from its own cgroup's PSI (- where none could be made)",
        )
    } else if title.contains("(latency)") {
        Some(
            "Min and Max over all repeats; Avg the mean; percentiles the median over repeats; 95% CI of the median p99; \
             RQ wait = run-queue wait over the run summed over threads, Migr = migrations (medians; - where unknown)",
        )
    } else {
        None
    }
}

/// The line under every table: how the CI column is made, and what its marks mean.
const CI_NOTE: &str = "95% CI: distribution-free interval of the median from order statistics, as ± % of the median \
                       (the wider side); it needs 6 ok repeats";
const STOP_NOTE: &str = "marks of cells short of their adaptive target: max = stopped at max_repeat, budget = the \
                         run's budget ran out first, unfinished = the run was interrupted (`run --resume` continues it)";

/// Every experiment's table, and the trials that did not finish, with the run's adaptive
/// targets and marks.
pub fn tables_for(trials: &[TrialRecord], rule: &RunRule) -> String {
    let mut out = String::new();
    let all = groups(trials);
    let experiments = by_experiment(&all);
    for ((title, table), groups) in experiment_tables_for(trials, rule).into_iter().zip(experiments.values()) {
        out.push_str(&format!("\n{title}\n"));
        out.push_str(&table.render());
        if let Some(note) = footnote(&title) {
            out.push_str(&format!("({note})\n"));
        }
        if let Some(line) = experiment_note(groups) {
            out.push_str(&line);
            out.push('\n');
        }
        for (title, table) in family_tables(groups) {
            out.push_str(&format!("\n{title}\n{}", table.render()));
        }
    }
    if !out.is_empty() {
        out.push_str(&format!("({CI_NOTE})\n"));
        if rule.plan.is_adaptive() {
            out.push_str(&format!("({STOP_NOTE})\n"));
            let verdicts: Vec<Option<bool>> = groups(trials).iter().map(|g| headline(g, rule).converged).collect();
            let adaptive = verdicts.iter().flatten().count();
            let reached = verdicts.iter().flatten().filter(|c| **c).count();
            if adaptive > 0 {
                out.push_str(&format!(
                    "\nadaptive cells within their target: {reached} of {adaptive} (a question's cells stop when it is \
                     answered: see the findings)\n"
                ));
            }
        }
    }
    let failed: Vec<&TrialRecord> = trials.iter().filter(|t| !t.is_ok()).collect();
    if !failed.is_empty() {
        out.push_str("\nnot ok (excluded from the figures above):\n");
        for t in failed {
            let params = t.params.all_text();
            out.push_str(&format!(
                "  {} {} #{}: {}: {}\n",
                t.family.as_str(),
                params,
                t.repeat,
                t.status.label(),
                t.status.reason().unwrap_or("")
            ));
        }
    }
    out
}

/// The note the experiment's family writes under its table of cells, if any.
pub fn experiment_note(groups: &[&Group]) -> Option<String> {
    with_family!(groups.first()?.family, F => F::experiment_note(groups))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::families::Family;
    use crate::model::TrialStatus;

    fn trial(seq: i64, repeat: i64, status: TrialStatus) -> TrialRecord {
        TrialRecord {
            seq,
            experiment: 1,
            family: Family::Workload,
            repeat,
            params: serde_json::from_str("{}").unwrap(),
            spec: None,
            outcome: None,
            status,
            started: String::new(),
            elapsed_s: 0.0,
        }
    }

    #[test]
    fn blocks_re_run_for_steal_are_counted_from_their_discarded_trials() {
        let dropped = || TrialStatus::Discarded("re-run for steal".into());
        let ok = || TrialStatus::Ok;
        // Block 7 dropped after both trials, then re-run; block 9 dropped after its first.
        let trials = [
            trial(40, 7, dropped()),
            trial(41, 7, dropped()),
            trial(42, 7, ok()),
            trial(43, 7, ok()),
            trial(44, 9, dropped()),
            trial(45, 9, ok()),
            trial(46, 9, ok()),
        ];
        let line = steal_reruns(&trials).unwrap();
        assert!(line.starts_with("2 block(s) re-run for steal (their 3 trial(s)"), "{line}");
        assert_eq!(steal_reruns(&trials[2..4]), None);
        assert!(!dropped().is_ok() && !dropped().is_failure() && TrialStatus::Failed(String::new()).is_failure());
    }
}
