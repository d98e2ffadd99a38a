//! Tables of a stored run: one per experiment, one row per parameter combination,
//! figures summarised over the repeats that finished (failed ones are counted, never
//! averaged in). These read records only; they never run a benchmark.

use crate::report::table::Table;
use crate::stats::Summary;
use crate::store::{RunRecord, TrialRecord};
use serde_json::{Map, Value as Json};
use std::collections::BTreeMap;

/// Trials of one parameter combination.
pub struct Group<'a> {
    pub experiment: i64,
    pub family: String,
    pub params: Map<String, Json>,
    pub trials: Vec<&'a TrialRecord>,
}

impl Group<'_> {
    pub fn ok(&self) -> impl Iterator<Item = &TrialRecord> {
        self.trials.iter().copied().filter(|t| t.status == "ok")
    }

    /// A figure of every ok trial (those that have it).
    pub fn figure(&self, name: &str) -> Vec<f64> {
        self.ok().filter_map(|t| t.figures.as_ref()?.get(name)?.as_f64()).collect()
    }

    pub fn summary(&self, name: &str) -> Option<Summary> {
        Summary::of(&self.figure(name))
    }
}

/// Group trials by experiment and parameters, in plan order.
pub fn groups(trials: &[TrialRecord]) -> Vec<Group<'_>> {
    let mut out: Vec<Group> = Vec::new();
    // Index by identity, so ten thousand trials group in one pass.
    let mut index: std::collections::HashMap<(i64, String, String), usize> = std::collections::HashMap::new();
    for t in trials {
        let key = (t.experiment, t.family.clone(), t.params.to_string());
        match index.get(&key) {
            Some(&i) => out[i].trials.push(t),
            None => {
                index.insert(key, out.len());
                let params = t.params.as_object().cloned().unwrap_or_default();
                out.push(Group { experiment: t.experiment, family: t.family.clone(), params, trials: vec![t] });
            }
        }
    }
    out
}

/// Parameters whose value differs between the groups of one experiment.
pub fn varying(groups: &[&Group]) -> Vec<String> {
    let mut keys: Vec<String> = Vec::new();
    for g in groups {
        for k in g.params.keys() {
            if !keys.contains(k) {
                keys.push(k.clone());
            }
        }
    }
    keys.into_iter().filter(|k| groups.iter().any(|g| g.params.get(k) != groups[0].params.get(k))).collect()
}

pub fn param_text(v: Option<&Json>) -> String {
    match v {
        None => "-".into(),
        Some(Json::String(s)) => s.clone(),
        Some(other) => other.to_string(),
    }
}

fn fixed(v: Option<f64>, decimals: usize) -> String {
    v.filter(|x| x.is_finite()).map_or("-".into(), |x| format!("{x:.decimals$}"))
}

/// "1234 (1200..1300)": median and the range over repeats.
fn median_range(s: Option<Summary>, decimals: usize) -> String {
    match s {
        None => "-".into(),
        Some(s) if s.n == 1 => format!("{:.decimals$}", s.median),
        Some(s) => format!("{:.decimals$} ({:.decimals$}..{:.decimals$})", s.median, s.min, s.max),
    }
}

/// "0.123 ± 0.004": mean and sample sd over repeats.
fn mean_sd(s: Option<Summary>, decimals: usize) -> String {
    match s {
        None => "-".into(),
        Some(s) => format!("{:.decimals$} ± {:.decimals$}", s.mean, s.sd),
    }
}

fn us(ns: Option<f64>) -> String {
    fixed(ns.map(|n| n / 1000.0), 1)
}

/// The run's header: what, when, where.
pub fn describe_run(run: &RunRecord, ok: usize, not_ok: usize) -> String {
    let m = &run.machine;
    let text = |k: &str| m.get(k).and_then(Json::as_str).unwrap_or("unknown").to_string();
    let mut out = format!(
        "run {}  suite {}  {} .. {}  [{}]\nmachine {}  kernel {}  {}  CPUs {}  schedlab {}\ntrials: {} ok, {} not ok, {} planned\n",
        run.id,
        run.suite_name,
        run.started,
        run.ended.as_deref().unwrap_or("(not finished)"),
        run.status,
        text("hostname"),
        text("kernel_release"),
        text("preemption_model"),
        text("cpus_online"),
        run.tool_version,
        ok,
        not_ok,
        run.planned
    );
    if let Some(warnings) = run.warnings.as_array() {
        for w in warnings.iter().filter_map(Json::as_str) {
            out.push_str(&format!("warning: {w}\n"));
        }
    }
    out
}

/// One titled table per experiment: a row per parameter combination.
pub fn experiment_tables(trials: &[TrialRecord]) -> Vec<(String, Table)> {
    let all = groups(trials);
    let mut by_experiment: BTreeMap<i64, Vec<&Group>> = BTreeMap::new();
    for g in &all {
        by_experiment.entry(g.experiment).or_default().push(g);
    }
    let mut out = Vec::new();
    for (experiment, groups) in by_experiment {
        let family = groups[0].family.as_str();
        let axes = varying(&groups);
        let fixed_params: Vec<String> = groups[0]
            .params
            .iter()
            .filter(|(k, _)| !axes.contains(k))
            .map(|(k, v)| format!("{k}={}", param_text(Some(v))))
            .collect();
        let title = format!("experiment {} ({family}) {}", experiment + 1, fixed_params.join(" "));
        let (headers, rows): (Vec<&str>, Vec<Vec<String>>) = match family {
            "ring" => ring_rows(&groups),
            "workload" => workload_rows(&groups),
            "latency" => latency_rows(&groups),
            _ => (vec![], vec![]),
        };
        let mut table = Table::new(axes.iter().map(String::as_str).chain(["ok/runs"]).chain(headers));
        for (g, row) in groups.iter().zip(rows) {
            let mut cells: Vec<String> = axes.iter().map(|k| param_text(g.params.get(k))).collect();
            cells.push(format!("{}/{}", g.ok().count(), g.trials.len()));
            cells.extend(row);
            table.push(cells);
        }
        for c in 0..axes.len() {
            table = table.left_align(c);
        }
        out.push((title.trim_end().to_string(), table));
    }
    out
}

/// What the summary columns are, per family.
fn footnote(title: &str) -> Option<&'static str> {
    if title.contains("(ring)") {
        Some("medians over repeats; Projected = the smallest ring's CPU time per hop x this ring's hops")
    } else if title.contains("(workload)") {
        Some("Wall s is mean ± sd over repeats; the other columns are means")
    } else if title.contains("(latency)") {
        Some("Min and Max over all repeats; Avg the mean; percentiles the median over repeats")
    } else {
        None
    }
}

/// Every experiment's table, and the trials that did not finish.
pub fn tables(trials: &[TrialRecord]) -> String {
    let mut out = String::new();
    for (title, table) in experiment_tables(trials) {
        out.push_str(&format!("\n{title}\n"));
        out.push_str(&table.render());
        if let Some(note) = footnote(&title) {
            out.push_str(&format!("({note})\n"));
        }
    }
    let failed: Vec<&TrialRecord> = trials.iter().filter(|t| t.status != "ok").collect();
    if !failed.is_empty() {
        out.push_str("\nnot ok (excluded from the figures above):\n");
        for t in failed {
            let params: Vec<String> = t
                .params
                .as_object()
                .map(|m| m.iter().map(|(k, v)| format!("{k}={}", param_text(Some(v)))).collect())
                .unwrap_or_default();
            out.push_str(&format!(
                "  {} {} #{}: {}: {}\n",
                t.family,
                params.join(" "),
                t.repeat,
                t.status,
                t.reason.as_deref().unwrap_or("")
            ));
        }
    }
    out
}

/// The CPU seconds a ring would take if every hop cost what the smallest ring's did
/// (the NCAR projection): per group, against the smallest ring with the same other
/// parameters.
pub fn projected_s(groups: &[&Group], g: &Group) -> Option<f64> {
    let procs = |g: &Group| g.params.get("procs").and_then(Json::as_f64);
    let same_but_procs = |o: &Group| o.params.iter().all(|(k, v)| k == "procs" || g.params.get(k) == Some(v));
    let base = groups
        .iter()
        .filter(|o| same_but_procs(o) && o.ok().count() > 0)
        .min_by(|x, y| procs(x).unwrap_or(f64::MAX).total_cmp(&procs(y).unwrap_or(f64::MAX)))?;
    let per_hop = base.summary("cpu_s")?.median / base.summary("hops")?.median;
    Some(per_hop * g.summary("hops")?.median)
}

fn ring_rows<'a>(groups: &[&Group<'a>]) -> (Vec<&'static str>, Vec<Vec<String>>) {
    let headers = vec![
        "Real s",
        "CPU s",
        "User s",
        "System s",
        "Projected s",
        "CPU/Proj",
        "ns/hop (min..max)",
        "ns/switch",
        "Invol sw",
    ];
    let rows = groups
        .iter()
        .map(|g| {
            let med = |k: &str| g.summary(k).map(|s| s.median);
            let projected = projected_s(groups, g);
            vec![
                fixed(med("real_s"), 4),
                fixed(med("cpu_s"), 4),
                fixed(med("user_s"), 4),
                fixed(med("sys_s"), 4),
                fixed(projected, 4),
                fixed(med("cpu_s").zip(projected).map(|(c, p)| c / p), 2),
                median_range(g.summary("ns_per_hop"), 0),
                fixed(med("ns_per_switch"), 0),
                fixed(med("nivcsw"), 0),
            ]
        })
        .collect();
    (headers, rows)
}

fn workload_rows<'a>(groups: &[&Group<'a>]) -> (Vec<&'static str>, Vec<Vec<String>>) {
    let headers = vec!["Wall s", "median", "User s", "Sys s", "CPU %", "Invol sw", "Vol sw", "Fairness"];
    let rows = groups
        .iter()
        .map(|g| {
            let mean = |k: &str| g.summary(k).map(|s| s.mean);
            vec![
                mean_sd(g.summary("wall_s"), 3),
                fixed(g.summary("wall_s").map(|s| s.median), 3),
                fixed(mean("user_s"), 3),
                fixed(mean("sys_s"), 3),
                fixed(mean("cpu_pct"), 0),
                fixed(mean("nivcsw"), 1),
                fixed(mean("nvcsw"), 1),
                fixed(mean("fairness"), 3),
            ]
        })
        .collect();
    (headers, rows)
}

fn latency_rows<'a>(groups: &[&Group<'a>]) -> (Vec<&'static str>, Vec<Vec<String>>) {
    let headers = vec!["Samples", "Min µs", "Avg µs", "p50 µs", "p99 µs", "p99.9 µs", "Max µs", "Overruns"];
    let rows = groups
        .iter()
        .map(|g| {
            let med = |k: &str| g.summary(k).map(|s| s.median);
            vec![
                fixed(Some(g.figure("samples").iter().sum()), 0),
                us(g.summary("min_ns").map(|s| s.min)),
                us(g.summary("avg_ns").map(|s| s.mean)),
                us(med("p50_ns")),
                us(med("p99_ns")),
                us(med("p999_ns")),
                us(g.summary("max_ns").map(|s| s.max)),
                fixed(Some(g.figure("overruns").iter().sum()), 0),
            ]
        })
        .collect();
    (headers, rows)
}
