//! The figures of one trial as named JSON objects: the keys of `--json` lines, of
//! `report --format json`, of the CSV export and of the `figures` an export carries for
//! readers. The measured values, their keys and their order come from the figure
//! registry (`model::figures`); the spec's settings are written beside them here.

use crate::analysis::offcpu::WorkloadTrace;
use crate::model::figures::{self, Figure, Part};
use crate::model::{
    ns_to_s, CommandSpec, Family, LatencyOutcome, LatencySpec, LoadSpec, Outcome, RingLength, RingOutcome, RingSpec,
    ThreadStats, TrialSpec, TrialStatus, WorkloadKind, WorkloadOutcome, WorkloadSpec,
};
use crate::report::findings::{spike_periods, ThreadSpikes};
use crate::store::TrialRecord;
use serde_json::{json, Map, Value as Json};

/// A figure's value as a line writes it: a whole number for counts and integer ns,
/// null where unknown.
fn number(f: &Figure, value: Option<f64>) -> Json {
    match value {
        Some(x) if f.integer => json!(x as i64),
        Some(x) => json!(x),
        None => Json::Null,
    }
}

/// Write `figures` of `part` with `value` reading each, in registry order; a key that is
/// not a figure but has always sat after one in the line (the ring's projection beside
/// its times, the load's CPUs beside its size) comes in `beside` as (after, key, value).
fn put(
    m: &mut Map<String, Json>,
    figures: &[&'static Figure],
    part: Part,
    value: impl Fn(&Figure) -> Option<f64>,
    beside: Vec<(&Figure, &str, Json)>,
) {
    for f in figures.iter().filter(|f| f.part == part) {
        m.insert(f.key.into(), number(f, value(f)));
        for (_, key, v) in beside.iter().filter(|(after, _, _)| std::ptr::eq(*after, *f)) {
            m.insert((*key).into(), v.clone());
        }
    }
}

/// Write a part's figures only when the trial has that part (any of them is known):
/// a load's when one ran, SCHED_DEADLINE's when the kernel gave them.
fn put_part(m: &mut Map<String, Json>, figures: &[&'static Figure], part: Part, o: &Outcome) {
    if figures.iter().filter(|f| f.part == part).any(|f| f.value(o).is_some()) {
        put(m, figures, part, |f| f.value(o), Vec::new());
    }
}

/// The load a trial ran beside it and what the load achieved during its window: nothing
/// when it ran without one, so the figures of unloaded trials read as before; only the
/// load's settings when its figures are unknown (a trial that failed has no outcome).
fn add_load(m: &mut Map<String, Json>, spec: &LoadSpec, o: Option<&Outcome>) {
    add_cgroup(m, o);
    if spec.is_none() {
        return;
    }
    m.insert("load".into(), json!(spec.kind.as_str()));
    // The load's nice is the spec's, known even when the load's figures are not.
    m.insert(figures::load::LOAD_NICE.key.into(), json!(spec.nice));
    let Some((o, load)) = o.and_then(|o| Some((o, o.load()?))) else { return };
    let cpus = vec![(&figures::load::LOAD_PROCESSES, "load_cpus", json!(load.cpus))];
    put(m, figures::load::ALL, Part::Load, |f| f.value(o), cpus);
}

/// A trial's private cgroup figures (a `cgroup` setting), after its setting's text;
/// nothing for a trial that ran in none.
fn add_cgroup(m: &mut Map<String, Json>, o: Option<&Outcome>) {
    let Some((o, group)) = o.and_then(|o| Some((o, o.cgroup()?))) else { return };
    m.insert("cgroup_setting".into(), json!(group.setting));
    m.insert("cgroup_hierarchy".into(), json!(group.hierarchy));
    put(m, figures::cgroup::ALL, Part::Cgroup, |f| f.value(o), Vec::new());
}

/// A deadline trial's reservation as keys (`runtime_ns`, `deadline_ns`, `period_ns`);
/// nothing for the other policies, whose lines stay as they were.
fn add_reservation(m: &mut Map<String, Json>, dl: Option<crate::model::DeadlineParams>) {
    if let Some(dl) = dl {
        m.insert("runtime_ns".into(), json!(dl.runtime_ns));
        m.insert("deadline_ns".into(), json!(dl.deadline_ns));
        m.insert("period_ns".into(), json!(dl.period_ns));
    }
}

fn object(value: Json) -> Map<String, Json> {
    match value {
        Json::Object(m) => m,
        _ => Map::new(),
    }
}

/// The status and reason of a trial that did not finish, written before its figures as
/// the workload and command lines write theirs.
fn add_status(m: &mut Map<String, Json>, status: &TrialStatus) {
    m.insert("status".into(), json!(status.label()));
    m.insert("reason".into(), json!(status.reason()));
}

/// A ring's figures; `projected_cpu_ns` is the sweep's linear projection, when known.
pub fn ring(spec: &RingSpec, o: &RingOutcome, projected_cpu_ns: Option<f64>) -> Map<String, Json> {
    let projected = projected_cpu_ns.map(|p| json!(ns_to_s(p)));
    ring_line(spec, Some(&Outcome::Ring(o.clone())), projected, None)
}

/// A ring of a sweep that did not finish: the line a finished one gets, its `status`
/// and `reason` after the size, every figure (and the projection) null.
pub fn ring_failed(spec: &RingSpec, status: &TrialStatus) -> Map<String, Json> {
    ring_line(spec, None, Some(Json::Null), Some(status))
}

/// A ring's line: `projected` is written after the system time when given; `status` only
/// for a ring that did not finish (a finished one's line has never carried it).
fn ring_line(
    spec: &RingSpec,
    o: Option<&Outcome>,
    projected: Option<Json>,
    status: Option<&TrialStatus>,
) -> Map<String, Json> {
    let mut m = object(json!({"family": "ring", "procs": spec.procs}));
    if let Some(status) = status {
        add_status(&mut m, status);
    }
    let projected = projected.map(|p| (&figures::ring::SYS_S, "projected_s", p));
    put(
        &mut m,
        figures::of(Family::Ring),
        Part::Always,
        |f| o.and_then(|o| f.value(o)),
        projected.into_iter().collect(),
    );
    let ring = o.and_then(Outcome::ring);
    m.extend(object(json!({
        "mode": spec.mode.as_str(),
        "ipc": spec.ipc.as_str(),
        "pin": spec.pin.as_str(),
        "cpus": ring.map(|r| &r.member_cpus),
        "policy": spec.policy.as_str(),
        "prio": spec.prio,
        "work_kb": spec.work_kb,
        "duration_s": match spec.length { RingLength::Duration(d) => Some(d.as_secs_f64()), RingLength::Laps(_) => None },
    })));
    add_load(&mut m, &spec.load, o);
    add_reservation(&mut m, spec.deadline);
    if let Some(t) = ring.and_then(|r| r.trace.as_ref()) {
        match &t.unavailable {
            Some(reason) => m.insert("attribution".into(), json!(reason)),
            None => m.insert("ring_trace".into(), json!(t)),
        };
    }
    m
}

/// A workload trial's figures (zeros when it did not finish: its status says why).
pub fn workload(
    spec: &WorkloadSpec,
    repeat: usize,
    status: &TrialStatus,
    o: Option<&WorkloadOutcome>,
) -> Map<String, Json> {
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
    let o = Outcome::Workload(o.cloned().unwrap_or(zero));
    let io = p.kind == WorkloadKind::Io;
    let mut m = object(json!({
        "family": "workload",
        "workload": p.kind.as_str(),
        "policy": spec.policy.as_str(),
        "prio": spec.prio,
        "nice": spec.nice,
        "procs": spec.procs,
        "repeat": repeat,
        "status": status.label(),
        "reason": status.reason(),
    }));
    put(&mut m, figures::of(Family::Workload), Part::Always, |f| f.value(&o), Vec::new());
    m.extend(object(json!({
        "iterations": if io { None } else { Some(p.iterations) },
        "transfer_size": if io { Some(p.transfer_size) } else { None },
        "block_size": if io { Some(p.block_size) } else { None },
        "seed": p.seed,
        "timeout_s": spec.timeout.as_secs_f64(),
    })));
    add_load(&mut m, &spec.load, Some(&o));
    add_reservation(&mut m, spec.deadline);
    put_part(&mut m, figures::of(Family::Workload), Part::Deadline, &o);
    if let Outcome::Workload(w) = &o {
        m.extend(off_cpu_keys(w.trace.as_ref()));
    }
    m
}

/// With `--trace on`: the children's time off the CPU summed (`off_cpu`), the outsiders
/// that took their CPUs (`outsiders`), each child's split (`off_cpu_children`) and the
/// events lost (`trace_lost_events`); or `attribution` saying why there are none.
fn off_cpu_keys(trace: Option<&WorkloadTrace>) -> Map<String, Json> {
    let mut keys = Map::new();
    let Some(t) = trace else { return keys };
    if let Some(reason) = &t.unavailable {
        keys.insert("attribution".into(), json!(reason));
        return keys;
    }
    keys.insert("off_cpu".into(), json!(t.totals()));
    keys.insert("outsiders".into(), json!(t.outsiders));
    keys.insert("off_cpu_children".into(), json!(t.children));
    keys.insert("trace_lost_events".into(), json!(t.lost_events));
    keys
}

/// One histogram's line (a thread's, or all threads' together); with no histogram, the
/// line of a run that failed: its `status` and `reason` before the figures, all null.
fn latency_line(spec: &LatencySpec, thread: Json, s: Result<&ThreadStats, &TrialStatus>) -> Map<String, Json> {
    let mut m = object(json!({
        "family": "latency",
        "policy": spec.policy.as_str(),
        "prio": spec.prio,
        "thread": thread,
        "cpu": s.ok().and_then(|s| s.cpu),
        "interval_ns": spec.interval_ns,
    }));
    if let Err(status) = s {
        add_status(&mut m, status);
    }
    put(&mut m, figures::of(Family::Latency), Part::Always, |f| s.ok().and_then(|s| f.thread_value(s)), Vec::new());
    m
}

/// A latency run that failed (its load died, its trial process was killed): one line
/// with its settings, `status`, `reason`, no thread or CPU, and every figure null.
pub fn latency_failed(spec: &LatencySpec, status: &TrialStatus) -> Map<String, Json> {
    let mut m = latency_line(spec, Json::Null, Err(status));
    add_load(&mut m, &spec.load, None);
    add_reservation(&mut m, spec.deadline);
    m
}

/// A thread's spike period: its figures when one is claimed (null when not), and the
/// corrected p of the best candidate either way (null when there was none to test).
fn spike_keys(spikes: Option<&ThreadSpikes>) -> Map<String, Json> {
    let best = spikes.and_then(|s| s.period.as_ref());
    let claimed = spikes.and_then(ThreadSpikes::claimed);
    object(json!({
        "spike_period_ns": claimed.map(|p| p.period_ns.round() as u64),
        "spike_jitter_ns": claimed.map(|p| p.jitter_ns.round() as u64),
        "spike_above_ns": claimed.map(|p| p.above_ns),
        "spike_count": claimed.map(|p| p.spikes),
        "spike_fits": claimed.map(|p| p.fits),
        "spike_period_p": best.map(|p| p.test.p),
    }))
}

/// One object per thread, then one for all threads together ("thread": "all").
pub fn latency_lines(spec: &LatencySpec, o: &LatencyOutcome) -> Vec<Map<String, Json>> {
    let spikes = spike_periods(o, spec.interval_ns);
    let mut out: Vec<Map<String, Json>> = o
        .threads
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let mut line = latency_line(spec, json!(i), Ok(t));
            line.extend(spike_keys(spikes.get(i)));
            if let Some((n, culprits)) = spikes.get(i).and_then(|s| crate::report::latency::beat_culprits(spec, o, s)) {
                line.insert("spike_beat_spikes".into(), json!(n));
                line.insert("spike_beat_culprits".into(), json!(culprits));
            }
            line.extend(attribution_keys(o, t.cpu));
            line
        })
        .collect();
    if o.threads.len() > 1 {
        out.push(latency_line(spec, json!("all"), Ok(&o.all)));
    }
    let whole = Outcome::Latency(o.clone());
    for line in &mut out {
        add_load(line, &spec.load, Some(&whole));
        add_reservation(line, spec.deadline);
        put_part(line, figures::of(Family::Latency), Part::Deadline, &whole);
    }
    out
}

/// With `--trace on`: the thread's tail culprits and its spikes split (`tail_culprits`,
/// `attributed_spikes`, `trace_lost_events`), or `attribution` saying why there are none.
fn attribution_keys(o: &LatencyOutcome, cpu: Option<usize>) -> Map<String, Json> {
    let mut keys = Map::new();
    let Some(a) = &o.attribution else { return keys };
    if let Some(reason) = &a.unavailable {
        keys.insert("attribution".into(), json!(reason));
    } else if let Some(t) = a.threads.iter().find(|t| Some(t.cpu) == cpu) {
        keys.insert("tail_culprits".into(), json!(t.tail));
        keys.insert("tail_account".into(), json!(crate::report::latency::tail_account(o, t)));
        keys.insert("attributed_spikes".into(), json!(t.spikes));
        keys.insert("trace_lost_events".into(), json!(t.lost_events));
    }
    keys
}

/// A stored trial's figures, as one object: what exports and CSV rows carry. A latency
/// trial's is its combined line with each thread's under `per_thread`.
/// One run of a command: its settings, then every figure of the family and those declared
/// for it (null where the run failed or a figure is unknown), then the load's.
pub fn command(spec: &CommandSpec, repeat: usize, status: &TrialStatus, o: Option<&Outcome>) -> Map<String, Json> {
    let mut m = object(json!({
        "family": "command",
        "cmd": spec.argv,
        "policy": spec.policy.as_str(),
        "prio": spec.prio,
        "nice": spec.nice,
        "cpus": spec.cpus,
        "repeat": repeat,
        "status": status.label(),
        "reason": status.reason(),
    }));
    let mine: Vec<&'static Figure> = figures::all(Family::Command).collect();
    put(&mut m, &mine, Part::Always, |f| o.and_then(|o| f.value(o)), Vec::new());
    let command = o.and_then(Outcome::command);
    m.insert("cpu_wait_source".into(), json!(command.and_then(|c| c.cpu_wait_source)));
    m.insert("leftovers_killed".into(), json!(command.map(|c| c.leftovers_killed)));
    if o.is_some() {
        add_load(&mut m, &spec.load, o);
    }
    m
}

pub fn stored(t: &TrialRecord) -> Option<Map<String, Json>> {
    match (t.spec.as_ref()?, t.outcome.as_ref()) {
        (TrialSpec::Command(spec), o) => Some(command(spec, t.repeat.max(0) as usize, &t.status, o)),
        (TrialSpec::Ring(spec), Some(Outcome::Ring(o))) => Some(ring(spec, o, None)),
        (TrialSpec::Workload(spec), o) => {
            Some(workload(spec, t.repeat.max(0) as usize, &t.status, o.and_then(|o| o.workload())))
        }
        (TrialSpec::Latency(spec), Some(Outcome::Latency(o))) => {
            let mut lines = latency_lines(spec, o);
            let mut combined = lines.pop().unwrap_or_default();
            // Each thread's line sits after the count of threads, as it always has.
            let per_thread = (!lines.is_empty()).then(|| {
                (&figures::latency::THREADS, "per_thread", Json::Array(lines.into_iter().map(Json::Object).collect()))
            });
            let whole = Outcome::Latency(o.clone());
            let figures = figures::of(Family::Latency);
            put(&mut combined, figures, Part::Run, |f| f.value(&whole), per_thread.into_iter().collect());
            combined.insert("dma_latency_held".into(), json!(o.dma_latency_held));
            combined.insert("mlockall".into(), json!(o.mlockall));
            Some(combined)
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::sample_ring;

    #[test]
    fn per_hop_and_per_switch() {
        let (spec, o) = sample_ring(4, 10, 40_000);
        let j = ring(&spec, &o, None);
        assert_eq!(j["hops"], 40);
        assert_eq!(j["ns_per_hop"], 1000.0);
        assert_eq!(j["ns_per_switch"], 900.0);
        assert!(j.get("projected_s").is_none());
        assert_eq!(ring(&spec, &o, Some(2e9))["projected_s"], 2.0);
    }

    #[test]
    fn a_ring_that_failed_has_the_finished_lines_keys_null_with_its_status() {
        let (spec, o) = sample_ring(4, 10, 40_000);
        let status = TrialStatus::TimedOut("still running".into());
        let failed = ring_failed(&spec, &status);
        let finished = ring(&spec, &o, Some(2e9));
        let keys = |m: &Map<String, Json>| {
            m.keys().filter(|k| !["status", "reason"].contains(&k.as_str())).cloned().collect::<Vec<_>>()
        };
        assert_eq!(keys(&failed), keys(&finished));
        assert_eq!((&failed["status"], &failed["reason"]), (&json!("timed_out"), &json!("still running")));
        assert!(figures::of(Family::Ring).iter().all(|f| failed[f.key].is_null()));
        assert_eq!((&failed["procs"], &failed["mode"]), (&finished["procs"], &finished["mode"]));
    }
}
