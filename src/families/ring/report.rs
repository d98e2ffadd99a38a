//! The NCAR table for rings (Processes, Real, CPU, User, System, Projected seconds),
//! with lat_ctx's per-hop and per-switch columns, and the JSON line per configuration.
//! Rows stream out as each ring finishes; the first (smallest) ring is the projection's
//! base, which is why sweeps run in ascending order.

use super::Ring;
use crate::analysis::stats::Summary;
use crate::families::declared::FamilyModel;
use crate::families::figures as registry;
use crate::families::figures::Part;
use crate::families::list::Family;
use crate::families::list::{Outcome, TrialSpec};
use crate::families::ring::model::{RingLength, RingOutcome, RingSpec};
use crate::model::parse::format_cpu_list;
use crate::model::{ns_to_s, TrialStatus};
use crate::report::chart::{Chart, Plot, Point, Series, Style};
use crate::report::family::{Column, FamilyReport, Summarise};
use crate::report::figures::{Figures, LineExtras, Status};
use crate::report::plots::series_of;
use super::findings::ring_values;
use crate::report::table::Table;
use crate::store::group::Group;
use crate::store::TrialRecord;
use serde::Serialize;

const COLUMNS: [&str; 13] = [
    "Processes",
    "Real s",
    "CPU s",
    "User s",
    "System s",
    "Projected s",
    "CPU/Proj",
    "ns/hop",
    "ns/switch",
    "vol sw",
    "invol sw",
    "rq ns/hop",
    "migr",
];

/// Streams one sweep's rows, remembering the base for the Projected column.
#[derive(Default)]
pub struct RingReport {
    base: Option<RingOutcome>,
}

/// CPU ns this ring would take if every hop cost what `base`'s did: the NCAR study's
/// "Projected" column (`base` is the sweep's smallest ring).
pub fn projected_cpu_ns(base: &RingOutcome, o: &RingOutcome) -> f64 {
    base.cpu_ns_per_hop() * o.hops as f64
}

/// A line saying what was run, so a pasted table carries its conditions.
pub fn describe_setup(spec: &RingSpec, cpus: &[usize], overhead_ps: u64) -> String {
    let placement = match spec.pin {
        crate::families::ring::model::Pin::Same => format!("all on CPU {}", cpus[0]),
        crate::families::ring::model::Pin::Spread => format!("spread over CPUs {}", format_cpu_list(cpus)),
        crate::families::ring::model::Pin::None if spec.cpus.is_some() => {
            format!("unpinned within CPUs {}", format_cpu_list(cpus))
        }
        crate::families::ring::model::Pin::None if spec.beside.deadline.is_some() => {
            "unpinned (deadline tasks are never pinned: the kernel refuses it)".to_string()
        }
        crate::families::ring::model::Pin::None => "unpinned".to_string(),
    };
    let policy = if spec.policy.is_realtime() {
        format!("{} priority {}", spec.policy.kernel_name(), spec.prio)
    } else if let Some(dl) = spec.beside.deadline {
        format!("{} ({} per member)", spec.policy.kernel_name(), dl.describe())
    } else {
        spec.policy.kernel_name().to_string()
    };
    let length = match spec.length {
        RingLength::Laps(l) => format!("{l} laps"),
        RingLength::Duration(d) => format!("{:.3} s per ring", d.as_secs_f64()),
    };
    let work = if spec.work_kb == 0 {
        "no working set".to_string()
    } else {
        format!("{} KiB working set per member", spec.work_kb)
    };
    format!(
        "ring: {} members, {} token, {placement}, {policy}, {length}, {work}\n\
         token pass without a switch (one task): {:.0} ns\n\
         rq ns/hop: run-queue wait per hop (the woken member runnable, not yet running); migr: migrations\n",
        spec.mode.as_str(),
        spec.ipc.as_str(),
        overhead_ps as f64 / 1000.0,
    )
}

fn widths() -> Vec<usize> {
    Table::new(COLUMNS).header_widths(9)
}

pub fn table_header() -> String {
    let t = Table::new(COLUMNS);
    t.fixed_line(t.headers(), &widths())
}

fn seconds(ns: f64) -> String {
    format!("{:.4}", ns / 1e9)
}

impl RingReport {
    fn projected(&mut self, o: &RingOutcome) -> f64 {
        let base = self.base.get_or_insert_with(|| o.clone());
        projected_cpu_ns(base, o)
    }

    pub fn table_row(&mut self, spec: &RingSpec, o: &RingOutcome) -> String {
        let projected = self.projected(o);
        let cells = vec![
            spec.procs.to_string(),
            seconds(o.real_ns as f64),
            seconds(o.cpu_ns() as f64),
            seconds(o.usage.utime_ns as f64),
            seconds(o.usage.stime_ns as f64),
            seconds(projected),
            format!("{:.2}", o.cpu_ns() as f64 / projected),
            format!("{:.0}", o.ns_per_hop()),
            format!("{:.0}", o.ns_per_switch()),
            o.usage.nvcsw.to_string(),
            o.usage.nivcsw.to_string(),
            o.run_delay_ns_per_hop().map_or("-".to_string(), |ns| format!("{ns:.0}")),
            o.migrations.map_or("-".to_string(), |m| m.to_string()),
        ];
        Table::new(COLUMNS).fixed_line(&cells, &widths())
    }

    pub fn json<'a>(&mut self, spec: &'a RingSpec, o: &'a RingOutcome) -> RingLine<'a> {
        let projected = self.projected(o);
        line(spec, o, Some(projected))
    }
}

/// With `--trace on`: a ring's hops as the scheduler saw them, in a line under its row.
/// `hops` is the ring's own count of token passes over the same window.
pub fn hop_line(t: &crate::analysis::offcpu::HopTrace, hops: u64) -> String {
    if let Some(reason) = &t.unavailable {
        return format!("tracing: {reason}");
    }
    if t.switches == 0 {
        return "traced: no switch to a member".to_string();
    }
    let pct = |n: u64, of: u64| if of == 0 { 0.0 } else { 100.0 * n as f64 / of as f64 };
    let lost = match t.lost_events {
        0 => String::new(),
        n => format!("; {n} events lost: partial"),
    };
    format!(
        "traced: {} switches to members ({:.2} per hop), {} of them after a wakeup (median {:.1} µs to run, p99 {:.1} µs, max {:.1} \
         µs; {:.0} % woken from another CPU; the CPU ran the waker just before in {:.0} %, idled in {:.0} %, ran \
         another task in {:.0} %); members preempted {} times by another member, {} by other tasks; {} \
         migrations{lost}",
        t.switches,
        t.switches as f64 / hops.max(1) as f64,
        t.wakeups,
        t.wake_to_run_p50_ns as f64 / 1e3,
        t.wake_to_run_p99_ns as f64 / 1e3,
        t.wake_to_run_max_ns as f64 / 1e3,
        pct(t.cross_cpu, t.wakeups),
        pct(t.after_waker, t.wakeups),
        pct(t.after_idle, t.wakeups),
        pct(t.after_other, t.wakeups),
        t.preempted_by_members,
        t.preempted_by_others,
        t.migrations
    )
}

/// A ring's JSON line: its size, its status when it did not finish (a finished one's line
/// has never carried it), its figures with the sweep's projection after the system time,
/// its settings, its load and reservation, and with `--trace on` its hops.
#[derive(Serialize)]
pub struct RingLine<'a> {
    family: &'static str,
    procs: usize,
    #[serde(flatten)]
    status: Option<Status<'a>>,
    #[serde(flatten)]
    times: Figures,
    #[serde(skip_serializing_if = "Option::is_none")]
    projected_s: Option<Option<f64>>,
    #[serde(flatten)]
    figures: Figures,
    mode: &'static str,
    ipc: &'static str,
    pin: &'static str,
    cpus: Option<&'a [usize]>,
    policy: &'static str,
    prio: i32,
    work_kb: usize,
    duration_s: Option<f64>,
    #[serde(flatten)]
    beside: LineExtras,
    #[serde(flatten)]
    trace: Option<TraceKeys<'a>>,
}

/// With `--trace on`: the ring's hops as the scheduler saw them, or why there are none.
#[derive(Serialize)]
#[serde(rename_all = "snake_case")]
// Each variant's name is its JSON key (`ring_trace`), which scripts read.
enum TraceKeys<'a> {
    Attribution(&'a str),
    RingTrace(&'a crate::analysis::offcpu::HopTrace),
}

/// A ring's figures; `projected_cpu_ns` is the sweep's linear projection, when known.
pub fn line<'a>(spec: &'a RingSpec, o: &'a RingOutcome, projected_cpu_ns: Option<f64>) -> RingLine<'a> {
    line_of(spec, Some(o), projected_cpu_ns.map(|p| Some(ns_to_s(p))), None)
}
/// A ring of a sweep that did not finish: the line a finished one gets, its `status`
/// and `reason` after the size, every figure (and the projection) null.
pub fn failed_line<'a>(spec: &'a RingSpec, status: &'a TrialStatus) -> RingLine<'a> {
    line_of(spec, None, Some(None), Some(status))
}
/// A ring's line: `projected` is written after the system time when given.
fn line_of<'a>(
    spec: &'a RingSpec,
    ring: Option<&'a RingOutcome>,
    projected_s: Option<Option<f64>>,
    status: Option<&'a TrialStatus>,
) -> RingLine<'a> {
    let o = ring.map(|r| Outcome::Ring(r.clone()));
    let figures = Figures::of(registry::of(Family::Ring), Part::Always, |f| o.as_ref().and_then(|o| f.value(o)));
    let (times, figures) = figures.split_after(&crate::families::ring::figures::SYS_S);
    RingLine {
        family: Ring::NAME,
        procs: spec.procs,
        status: status.map(Status::of),
        times,
        projected_s,
        figures,
        mode: spec.mode.as_str(),
        ipc: spec.ipc.as_str(),
        pin: spec.pin.as_str(),
        cpus: ring.map(|r| r.member_cpus.as_slice()),
        policy: spec.policy.as_str(),
        prio: spec.prio,
        work_kb: spec.work_kb,
        duration_s: match spec.length {
            RingLength::Duration(d) => Some(d.as_secs_f64()),
            RingLength::Laps(_) => None,
        },
        beside: LineExtras::of(&spec.beside.load, o.as_ref(), spec.beside.deadline),
        trace: ring.and_then(|r| r.trace.as_ref()).map(|t| match &t.unavailable {
            Some(reason) => TraceKeys::Attribution(reason),
            None => TraceKeys::RingTrace(t),
        }),
    }
}

/// The stored table of a ring experiment and its lines, from the figure registry.
impl FamilyReport for Ring {
    fn columns() -> Vec<Column> {
        use crate::families::ring::figures::*;
        use Summarise::*;
        vec![
            Column::named("Real s", &REAL_S, Median, 4),
            Column::named("CPU s", &CPU_S, Median, 4),
            Column::named("User s", &USER_S, Median, 4),
            Column::named("System s", &SYS_S, Median, 4),
            Column::Derived { header: "Projected s", value: projected_s, decimals: 4 },
            Column::Derived { header: "CPU/Proj", value: cpu_over_projected, decimals: 2 },
            Column::named("ns/hop (min..max)", &NS_PER_HOP, MedianRange, 0),
            Column::of(&NS_PER_SWITCH, Median, 0),
            Column::Ci,
            Column::named("Invol sw", &NIVCSW, Median, 0),
            Column::named("RQ ns/hop", &RUN_DELAY_NS_PER_HOP, Median, 0),
            Column::named("Migr", &MIGRATIONS, Median, 0),
        ]
    }

    fn summary_extras(groups: &[&Group], g: &Group) -> Vec<(&'static str, f64)> {
        projected_s(groups, g).map(|p| ("projected_s", p)).into_iter().collect()
    }

    fn stored_line(t: &TrialRecord) -> Option<impl Serialize> {
        let (Some(TrialSpec::Ring(spec)), Some(Outcome::Ring(o))) = (&t.spec, &t.outcome) else { return None };
        Some(line(spec, o, None))
    }

    fn charts(n: i64, groups: &[&Group], axes: &[String]) -> Vec<Chart> {
        ring_chart(n, groups, axes).into_iter().collect()
    }
}

/// The cell's CPU time against the NCAR projection (1 where each hop costs what the
/// smallest ring's did).
fn cpu_over_projected(groups: &[&Group], g: &Group) -> Option<f64> {
    let cpu_s = Summary::of(&g.values(|o| crate::families::ring::figures::CPU_S.value(o)))?.median;
    Some(cpu_s / projected_s(groups, g)?)
}

fn ring_chart(n: i64, gs: &[&Group], axes: &[String]) -> Option<Chart> {
    if !axes.iter().any(|a| a == "procs") {
        return None;
    }
    let mut plot = Plot::new(
        format!("Experiment {n}: cost per hop against ring size"),
        "processes in the ring",
        "CPU ns per hop (median, min..max)",
    );
    for (label, mut set) in series_of(gs, "procs", axes) {
        set.sort_by(|a, b| a.procs().unwrap_or(0.0).total_cmp(&b.procs().unwrap_or(0.0)));
        let measured: Vec<Point> = set
            .iter()
            .filter_map(|g| {
                let s = Summary::of(&ring_values(g, RingOutcome::cpu_ns_per_hop))?;
                Some((g.procs()?, s.median, Some((s.min, s.max))))
            })
            .collect();
        // The projection: every hop costing what the smallest ring's did.
        let projected: Vec<Point> = set
            .iter()
            .filter_map(|g| {
                let hops = Summary::of(&ring_values(g, |o| o.hops as f64))?.median;
                Some((g.procs()?, projected_s(gs, g)? / hops * 1e9, None))
            })
            .collect();
        let points: Vec<(f64, Vec<f64>)> =
            set.iter().filter_map(|g| Some((g.procs()?, ring_values(g, RingOutcome::cpu_ns_per_hop)))).collect();
        for k in crate::analysis::knee::analyse(&points).map(|s| s.knees).unwrap_or_default() {
            plot.markers.push(((k.before + k.after) / 2.0, format!("knee {:+.0}%", k.jump * 100.0)));
        }
        plot.series.push(Series::new(label.clone(), measured, Style::LinePoints));
        let projected_label = format!("{} projected", if label == "measured" { "" } else { &label });
        plot.series.push(Series { dash: Some("8 5"), ..Series::new(projected_label.trim(), projected, Style::Line) });
    }
    Some(Chart { name: format!("ring-{n}"), svg: plot.render() })
}

/// The CPU seconds a ring would take if every hop cost what the smallest ring's did
/// (the NCAR projection): per group, against the smallest ring with the same other
/// parameters.
pub fn projected_s(groups: &[&Group], g: &Group) -> Option<f64> {
    let procs = |g: &Group| g.procs();
    let same_but_procs = |o: &Group| o.params.iter().all(|(k, v)| k == crate::model::cell::axis::PROCS || g.params.get(k) == Some(v));
    let base = groups
        .iter()
        .filter(|o| same_but_procs(o) && o.ok().count() > 0)
        .min_by(|x, y| procs(x).unwrap_or(f64::MAX).total_cmp(&procs(y).unwrap_or(f64::MAX)))?;
    let per_hop =
        Summary::of(&ring_values(base, |o| o.cpu_ns() as f64 / 1e9))?.median / Summary::of(&ring_values(base, |o| o.hops as f64))?.median;
    Some(per_hop * Summary::of(&ring_values(g, |o| o.hops as f64))?.median)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::sample_ring as pair;
    use crate::report::figures::object_of;

    #[test]
    fn projected_scales_the_smallest_ring_linearly() {
        // NCAR Sun-4/280: 2 procs 873 s; 64 procs is projected at 32x = 27936 s.
        let mut report = RingReport::default();
        let (s2, o2) = pair(2, 1000, 873_000_000_000);
        let (s64, o64) = pair(64, 1000, 96_545_000_000_000);
        assert_eq!(object_of(&report.json(&s2, &o2))["projected_s"], 873.0);
        let sixty_four = object_of(&report.json(&s64, &o64));
        assert_eq!(sixty_four["projected_s"], 873.0 * 32.0);
        assert_eq!(sixty_four["cpu_s"], 96545.0);
    }

    #[test]
    fn rows_line_up_with_the_header() {
        let mut report = RingReport::default();
        let (spec, o) = pair(2, 1000, 2_000_000);
        let row = report.table_row(&spec, &o);
        let header = table_header();
        assert_eq!(row.len(), header.len());
        assert!(row.trim_start().starts_with('2'));
        assert!(row.contains("1.00"), "{row}");
    }

    #[test]
    fn per_hop_and_per_switch() {
        let (spec, o) = pair(4, 10, 40_000);
        let j = object_of(&line(&spec, &o, None));
        assert_eq!(j["hops"], 40);
        assert_eq!(j["ns_per_hop"], 1000.0);
        assert_eq!(j["ns_per_switch"], 900.0);
        assert!(j.get("projected_s").is_none());
        assert_eq!(object_of(&line(&spec, &o, Some(2e9)))["projected_s"], 2.0);
    }

    #[test]
    fn a_ring_that_failed_has_the_finished_lines_keys_null_with_its_status() {
        let (spec, o) = pair(4, 10, 40_000);
        let status = TrialStatus::TimedOut("still running".into());
        let failed = object_of(&failed_line(&spec, &status));
        let finished = object_of(&line(&spec, &o, Some(2e9)));
        let keys = |m: &serde_json::Map<_, _>| {
            m.keys().filter(|k| !["status", "reason"].contains(&k.as_str())).cloned().collect::<Vec<String>>()
        };
        assert_eq!(keys(&failed), keys(&finished));
        assert_eq!((failed["status"].as_str(), failed["reason"].as_str()), (Some("timed_out"), Some("still running")));
        assert!(registry::of(Family::Ring).iter().all(|f| failed[f.key].is_null()));
        assert_eq!((&failed["procs"], &failed["mode"]), (&finished["procs"], &finished["mode"]));
    }
}
