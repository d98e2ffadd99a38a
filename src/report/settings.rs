//! What a run's settings did (`model::settings`): each cell's private cgroup, how often and
//! how long the kernel throttled it, and how long its tasks waited for a CPU. Throttled
//! time is stated per cell rather than tested as a ratio: without a quota the kernel never
//! throttles a group, so the unlimited cells' value is exactly 0, and what the evidence is
//! is how many of a cell's trials were throttled at all.

use crate::analysis::stats::median;
use crate::model::cell::Cell;
use crate::model::ns_to_s;
use crate::store::TrialRecord;

/// One cell's cgroup figures over its ok trials.
#[derive(Clone, Debug, PartialEq)]
pub struct CellGroup {
    pub experiment: i64,
    /// "latency cgroup=max=50ms/100ms interval=1ms ...".
    pub cell: String,
    pub setting: String,
    pub hierarchy: String,
    pub trials: usize,
    pub throttled_trials: usize,
    pub throttled_s: f64,
    pub nr_throttled: f64,
    pub nr_periods: f64,
    pub pressure_s: Option<f64>,
    pub trial_s: f64,
}

fn cell_text(family: &str, params: &Cell) -> String {
    format!("{family} {}", params.all_text())
}

/// The cells of `trials` that ran in a private cgroup, in the order first seen.
pub fn cells(trials: &[TrialRecord]) -> Vec<CellGroup> {
    let mut keys: Vec<(i64, String)> = Vec::new();
    for t in trials.iter().filter(|t| t.is_ok() && t.outcome.as_ref().and_then(|o| o.cgroup()).is_some()) {
        let key = (t.experiment, cell_text(t.family.as_str(), &t.params));
        if !keys.contains(&key) {
            keys.push(key);
        }
    }
    keys.into_iter()
        .filter_map(|(experiment, cell)| {
            let mine: Vec<(&TrialRecord, &crate::model::settings::CgroupFigures)> = trials
                .iter()
                .filter(|t| t.is_ok() && t.experiment == experiment && cell_text(t.family.as_str(), &t.params) == cell)
                .filter_map(|t| Some((t, t.outcome.as_ref()?.cgroup()?)))
                .collect();
            let first = mine.first()?.1;
            let values = |f: &dyn Fn(&crate::model::settings::CgroupFigures) -> f64| -> f64 {
                median(&mine.iter().map(|(_, g)| f(g)).collect::<Vec<_>>())
            };
            let pressures: Vec<f64> =
                mine.iter().filter_map(|(_, g)| g.cpu_pressure_ns.map(|p| ns_to_s(p as f64))).collect();
            Some(CellGroup {
                experiment,
                cell,
                setting: first.setting.clone(),
                hierarchy: first.hierarchy.clone(),
                trials: mine.len(),
                throttled_trials: mine.iter().filter(|(_, g)| g.nr_throttled > 0).count(),
                throttled_s: values(&|g| ns_to_s(g.throttled_ns as f64)),
                nr_throttled: values(&|g| g.nr_throttled as f64),
                nr_periods: values(&|g| g.nr_periods as f64),
                pressure_s: (!pressures.is_empty()).then(|| median(&pressures)),
                trial_s: median(&mine.iter().map(|(t, _)| t.elapsed_s).collect::<Vec<_>>()),
            })
        })
        .collect()
}

/// The lines `show` and `run` print under the tables; `None` when no trial ran in a group.
pub fn cgroup_text(trials: &[TrialRecord]) -> Option<String> {
    let cells = cells(trials);
    if cells.is_empty() {
        return None;
    }
    let mut out =
        vec!["cgroups (each cell's private group; medians over its ok trials; throttled time is summed over CPUs, as \
         cpu.stat counts it):"
            .to_string()];
    for c in &cells {
        let throttling = if c.throttled_trials == 0 {
            format!("never throttled (0 of {} trials)", c.trials)
        } else {
            format!(
                "throttled in {} of {} trials: {:.3} s throttled, {:.0} of {:.0} periods",
                c.throttled_trials, c.trials, c.throttled_s, c.nr_throttled, c.nr_periods
            )
        };
        let pressure = c
            .pressure_s
            .map_or(String::new(), |p| format!("; its tasks waited {p:.3} s for a CPU (cpu.pressure some)"));
        out.push(format!(
            "  - {} [{} {}]: {throttling}{pressure}; trial {:.2} s",
            c.cell, c.hierarchy, c.setting, c.trial_s
        ));
    }
    Some(out.join("\n"))
}
