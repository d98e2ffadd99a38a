//! The latency's `--against` form (the `hrtimers-2007` seed's): a min / max / avg table,
//! one column per latency configuration of this run beside the seed's columns (the 2007
//! kernels as a normal user and as root, SCHED_FIFO 99). What the seed does not give
//! (percentiles) is "-".

use super::figures as latency;
use super::model::ThreadStats;
use crate::error::Result;
use crate::families::{Family, Outcome, TrialSpec};
use crate::model::cell;
use crate::model::Policy;
use crate::report::against::form::{cell, lacks, median_of, AgainstDoc, AgainstReport, Section};
use crate::report::table::Table;
use crate::store::seeds::{self, Seed};
use crate::store::{RunRecord, TrialRecord};
use serde::ser::{SerializeMap, Serializer};
use serde::Serialize;

/// The form's JSON: this run's columns, then the seed's.
#[derive(Serialize)]
struct ColumnsForm {
    columns: Vec<LatencyColumn>,
}


/// One column of the classic table.
struct LatencyColumn {
    label: String,
    source: String,
    imported: bool,
    policy: Policy,
    prio: i32,
    interval_ns: u64,
    samples: u64,
    overruns: u64,
    min_ns: Option<u64>,
    max_ns: Option<u64>,
    avg_ns: Option<f64>,
    p50_ns: Option<f64>,
    p99_ns: Option<f64>,
}

impl LatencyColumn {
    /// A column from latency trials of one configuration: min and max over the repeats,
    /// avg their mean, the percentiles their medians (as the run's own table has them).
    fn of(label: String, source: String, imported: bool, trials: &[&TrialRecord]) -> Option<LatencyColumn> {
        let mut pairs =
            trials.iter().filter(|t| t.is_ok()).filter_map(|t| match (t.spec.as_ref()?, t.outcome.as_ref()?) {
                (TrialSpec::Latency(s), Outcome::Latency(o)) => Some((s, o)),
                _ => None,
            });
        let (spec, first) = pairs.next()?;
        let all: Vec<&ThreadStats> =
            std::iter::once(&first.all).chain(pairs.map(|(_, o)| &o.all)).filter(|s| s.samples > 0).collect();
        let known = |f: fn(&ThreadStats) -> Option<u64>| {
            median_of(&all.iter().filter_map(|s| f(s)).map(|v| v as f64).collect::<Vec<_>>())
        };
        let avgs: Vec<f64> = all.iter().map(|s| s.avg_ns).collect();
        Some(LatencyColumn {
            label,
            source,
            imported,
            policy: spec.policy,
            prio: spec.prio,
            interval_ns: spec.interval_ns,
            samples: all.iter().map(|s| s.samples).sum(),
            overruns: all.iter().map(|s| s.overruns).sum(),
            min_ns: all.iter().map(|s| s.min_ns).min(),
            max_ns: all.iter().map(|s| s.max_ns).max(),
            avg_ns: (!avgs.is_empty()).then(|| avgs.iter().sum::<f64>() / avgs.len() as f64),
            p50_ns: known(|s| s.p50_ns),
            p99_ns: known(|s| s.p99_ns),
        })
    }
}

/// A column's settings, then the registry's figures under their keys, summarised over
/// the repeats as `Column::of` says.
impl Serialize for LatencyColumn {
    fn serialize<S: Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        let mut m = serializer.serialize_map(Some(13))?;
        m.serialize_entry("label", &self.label)?;
        m.serialize_entry("source", &self.source)?;
        m.serialize_entry("imported", &self.imported)?;
        m.serialize_entry("policy", self.policy.as_str())?;
        m.serialize_entry("prio", &self.prio)?;
        m.serialize_entry("interval_ns", &self.interval_ns)?;
        m.serialize_entry(latency::SAMPLES.key, &self.samples)?;
        m.serialize_entry(latency::OVERRUNS.key, &self.overruns)?;
        m.serialize_entry(latency::MIN_NS.key, &self.min_ns)?;
        m.serialize_entry(latency::MAX_NS.key, &self.max_ns)?;
        m.serialize_entry(latency::AVG_NS.key, &self.avg_ns)?;
        m.serialize_entry(latency::P50_NS.key, &self.p50_ns)?;
        m.serialize_entry(latency::P99_NS.key, &self.p99_ns)?;
        m.end()
    }
}

/// "SCHED_FIFO 95", "SCHED_OTHER": a policy as the classic table heads it.
fn policy_label(policy: Policy, prio: i32) -> String {
    if policy.is_realtime() {
        format!("{} {prio}", policy.kernel_name())
    } else {
        policy.kernel_name().to_string()
    }
}

/// The 2007 post's form: its min / max / avg table, this run's columns then the seed's.
pub(crate) fn columns(
    seed: &dyn Seed,
    spec: &seeds::Against,
    (title, rest, notes): (&str, &str, &[&str]),
    run: &RunRecord,
    trials: &[TrialRecord],
) -> Result<AgainstReport> {
    let latency: Vec<TrialRecord> = trials.iter().filter(|t| t.family == Family::Latency).cloned().collect();
    let groups = crate::store::group::groups(&latency);
    let refs: Vec<&crate::store::group::Group> = groups.iter().collect();
    let varying: Vec<String> =
        crate::store::group::varying(&refs).into_iter().filter(|k| k != cell::axis::POLICY).collect();
    let mut columns: Vec<LatencyColumn> = Vec::new();
    for g in &groups {
        let Some(spec) = g.trials.iter().find_map(|t| match t.spec.as_ref()? {
            TrialSpec::Latency(s) => Some(s),
            _ => None,
        }) else {
            continue;
        };
        let mut label = policy_label(spec.policy, spec.prio);
        let what: Vec<String> = varying.iter().map(|k| format!("{k}={}", g.value_text(k))).collect();
        if !what.is_empty() {
            label = format!("{label} [{}]", what.join(" "));
        }
        if let Some(c) = LatencyColumn::of(label, format!("run {}", run.id), run.machine.is_imported(), &g.trials) {
            columns.push(c);
        }
    }
    if columns.is_empty() {
        return Err(lacks(run, seed, spec));
    }
    let here = columns.len();
    let seed_label = spec.label;
    for (record, reference) in seed.runs()? {
        let kernel = record.machine.kernel_release().unwrap_or(seed_label).to_string();
        for t in &reference {
            let Some(TrialSpec::Latency(spec)) = &t.spec else { continue };
            let label = if spec.policy.is_realtime() {
                format!("{kernel} root ({} {})", spec.policy.as_str().to_uppercase(), spec.prio)
            } else {
                format!("{kernel} user")
            };
            if let Some(c) = LatencyColumn::of(label, format!("{seed_label}, {kernel}"), true, &[t]) {
                columns.push(c);
            }
        }
    }
    let mut table =
        Table::new(std::iter::once("ns".to_string()).chain(columns.iter().map(|c| c.label.clone()))).left_align(0);
    type LabelledRow = (&'static str, fn(&LatencyColumn) -> String);
    let rows: [LabelledRow; 8] = [
        (latency::MIN_NS.name(), |c| c.min_ns.map_or("-".into(), |v| v.to_string())),
        (latency::MAX_NS.name(), |c| c.max_ns.map_or("-".into(), |v| v.to_string())),
        (latency::AVG_NS.name(), |c| cell(c.avg_ns, 0)),
        (latency::P50_NS.name(), |c| cell(c.p50_ns, 0)),
        (latency::P99_NS.name(), |c| cell(c.p99_ns, 0)),
        (latency::SAMPLES.name(), |c| c.samples.to_string()),
        (latency::OVERRUNS.name(), |c| c.overruns.to_string()),
        ("interval", |c| crate::model::format_ns(c.interval_ns)),
    ];
    for (name, value) in rows {
        table.push(std::iter::once(name.to_string()).chain(columns.iter().map(value)).collect());
    }
    let mut lines = vec![format!(
        "the first {here} column{} run {}'s ({}), {rest}",
        if here == 1 { " is" } else { "s are" },
        run.id,
        crate::report::overlay::machine_label(run)
    )];
    lines.extend(notes.iter().map(|n| n.to_string()));
    let section = Section { title: title.into(), table, left_columns: 1, lines };
    let json = AgainstDoc::of(seed, &ColumnsForm { columns });
    Ok(AgainstReport { name: seed.name().into(), heading: (spec.heading)(run.id), sections: vec![section], json })
}
