//! The figures of one trial as named JSON numbers: seconds where a time reads best in
//! seconds, `_ns` where it reads best in ns, and the spec's settings beside them. These
//! are the keys of `--json` lines, of `report --format json`, of the CSV export and of
//! the `figures` an export carries for readers; all are derived here from the typed
//! spec and outcome, so a figure is named and computed in exactly one place.

use crate::model::{
    ns_to_s, LatencyOutcome, LatencySpec, LoadOutcome, LoadSpec, RingLength, RingOutcome, RingSpec, ThreadStats,
    TrialSpec, TrialStatus, WorkloadKind, WorkloadOutcome, WorkloadSpec,
};
#[cfg(test)]
use crate::model::{Ipc, Pin, Policy, RingMode, Usage};
use crate::report::findings::{spike_periods, ThreadSpikes};
use crate::store::TrialRecord;
use serde_json::{json, Map, Value as Json};

/// The load a trial ran beside it and what the load achieved during its window: nothing
/// when it ran without one, so the figures of unloaded trials read as before.
pub fn add_load(m: &mut Map<String, Json>, spec: &LoadSpec, o: Option<&LoadOutcome>) {
    if spec.is_none() {
        return;
    }
    m.insert("load".into(), json!(spec.kind.as_str()));
    m.insert("load_nice".into(), json!(spec.nice));
    let Some(o) = o else { return };
    m.extend(object(json!({
        "load_nice": o.nice,
        "load_instances": o.instances,
        "load_processes": o.processes,
        "load_cpus": o.cpus,
        "load_window_s": ns_to_s(o.window_ns as f64),
        "load_loops_per_s": o.loops_per_s(),
        "load_io_bytes_per_s": o.io_bytes_per_s(),
        "load_messages_per_s": o.messages_per_s(),
        "load_cpu_s": ns_to_s(o.cpu_ns as f64),
    })));
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

/// A ring's figures; `projected_cpu_ns` is the sweep's linear projection, when known.
pub fn ring(spec: &RingSpec, o: &RingOutcome, projected_cpu_ns: Option<f64>) -> Map<String, Json> {
    let mut m = object(json!({
        "family": "ring",
        "procs": spec.procs,
        "laps": o.laps,
        "hops": o.hops,
        "real_s": ns_to_s(o.real_ns as f64),
        "cpu_s": ns_to_s(o.cpu_ns() as f64),
        "user_s": ns_to_s(o.usage.utime_ns as f64),
        "sys_s": ns_to_s(o.usage.stime_ns as f64),
    }));
    if let Some(p) = projected_cpu_ns {
        m.insert("projected_s".into(), json!(ns_to_s(p)));
    }
    m.extend(object(json!({
        "nvcsw": o.usage.nvcsw,
        "nivcsw": o.usage.nivcsw,
        "ns_per_hop": o.ns_per_hop(),
        "overhead_ns": o.overhead_ns(),
        "ns_per_switch": o.ns_per_switch(),
        "run_delay_ns_per_hop": o.run_delay_ns_per_hop(),
        "migrations": o.migrations,
        "spawn_s": ns_to_s(o.spawn_ns as f64),
        "teardown_s": ns_to_s(o.teardown_ns as f64),
        "member_maxrss_kb": o.member_maxrss_kb,
        "minflt": o.usage.minflt,
        "majflt": o.usage.majflt,
        "mode": spec.mode.as_str(),
        "ipc": spec.ipc.as_str(),
        "pin": spec.pin.as_str(),
        "cpus": o.member_cpus,
        "policy": spec.policy.as_str(),
        "prio": spec.prio,
        "work_kb": spec.work_kb,
        "duration_s": match spec.length { RingLength::Duration(d) => Some(d.as_secs_f64()), RingLength::Laps(_) => None },
    })));
    add_load(&mut m, &spec.load, o.load.as_ref());
    add_reservation(&mut m, spec.deadline);
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
        fork_ns: 0,
        first_finish_ns: 0,
        last_finish_ns: 0,
        fairness: 1.0,
        pi_min: None,
        pi_max: None,
        load: None,
        reservation: None,
        run_delay_ns: None,
        run_delay_max_ns: None,
        run_delay_p50_ns: None,
        run_delay_min_ns: None,
        migrations: None,
    };
    let o = o.unwrap_or(&zero);
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
        "wall_s": ns_to_s(o.wall_ns as f64),
        "user_s": ns_to_s(o.usage.utime_ns as f64),
        "sys_s": ns_to_s(o.usage.stime_ns as f64),
        "cpu_pct": o.cpu_pct(),
        "nvcsw": o.usage.nvcsw,
        "nivcsw": o.usage.nivcsw,
        "fairness": o.fairness,
        "run_delay_s": o.run_delay_ns.map(|ns| ns_to_s(ns as f64)),
        "run_delay_max_s": o.run_delay_max_ns.map(|ns| ns_to_s(ns as f64)),
        "run_delay_p50_s": o.run_delay_p50_ns.map(|ns| ns_to_s(ns as f64)),
        "run_delay_min_s": o.run_delay_min_ns.map(|ns| ns_to_s(ns as f64)),
        "migrations": o.migrations,
        "first_finish_s": ns_to_s(o.first_finish_ns as f64),
        "last_finish_s": ns_to_s(o.last_finish_ns as f64),
        "fork_s": ns_to_s(o.fork_ns as f64),
        "minflt": o.usage.minflt,
        "majflt": o.usage.majflt,
        "inblock": o.usage.inblock,
        "oublock": o.usage.oublock,
        "pi_min": o.pi_min,
        "pi_max": o.pi_max,
        "iterations": if io { None } else { Some(p.iterations) },
        "transfer_size": if io { Some(p.transfer_size) } else { None },
        "block_size": if io { Some(p.block_size) } else { None },
        "seed": p.seed,
        "timeout_s": spec.timeout.as_secs_f64(),
    }));
    add_load(&mut m, &spec.load, o.load.as_ref());
    add_reservation(&mut m, spec.deadline);
    if let Some(r) = o.reservation {
        m.insert("reserved_pct".into(), json!(r.reserved_pct));
        m.insert("child_cpu_pct_mean".into(), json!(r.child_cpu_pct_mean));
        m.insert("child_cpu_pct_min".into(), json!(r.child_cpu_pct_min));
        m.insert("children_short".into(), json!(r.children_short));
    }
    m
}

fn latency_line(spec: &LatencySpec, thread: Json, s: &ThreadStats) -> Map<String, Json> {
    object(json!({
        "family": "latency",
        "policy": spec.policy.as_str(),
        "prio": spec.prio,
        "thread": thread,
        "cpu": s.cpu,
        "interval_ns": spec.interval_ns,
        "samples": s.samples,
        "min_ns": s.min_ns,
        "avg_ns": s.avg_ns,
        "p50_ns": s.p50_ns,
        "p90_ns": s.p90_ns,
        "p99_ns": s.p99_ns,
        "p999_ns": s.p999_ns,
        "p9999_ns": s.p9999_ns,
        "max_ns": s.max_ns,
        "overruns": s.overruns,
        "run_delay_ns": s.run_delay_ns,
        "migrations": s.migrations,
    }))
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
            let mut line = latency_line(spec, json!(i), t);
            line.extend(spike_keys(spikes.get(i)));
            line
        })
        .collect();
    if o.threads.len() > 1 {
        out.push(latency_line(spec, json!("all"), &o.all));
    }
    for line in &mut out {
        add_load(line, &spec.load, o.load.as_ref());
        add_reservation(line, spec.deadline);
        if let Some(d) = o.deadline {
            line.insert("missed_deadlines".into(), json!(d.missed_deadlines));
            line.insert("runtime_overruns".into(), json!(d.runtime_overruns));
        }
    }
    out
}

/// A stored trial's figures, as one object: what exports and CSV rows carry. A latency
/// trial's is its combined line with each thread's under `per_thread`.
pub fn stored(t: &TrialRecord) -> Option<Map<String, Json>> {
    match (t.spec.as_ref()?, t.outcome.as_ref()) {
        (TrialSpec::Ring(spec), Some(crate::model::Outcome::Ring(o))) => Some(ring(spec, o, None)),
        (TrialSpec::Workload(spec), o) => {
            Some(workload(spec, t.repeat.max(0) as usize, &t.status, o.and_then(|o| o.workload())))
        }
        (TrialSpec::Latency(spec), Some(crate::model::Outcome::Latency(o))) => {
            let mut lines = latency_lines(spec, o);
            let mut combined = lines.pop().unwrap_or_default();
            combined.insert("threads".into(), json!(o.threads.len()));
            if !lines.is_empty() {
                combined.insert("per_thread".into(), Json::Array(lines.into_iter().map(Json::Object).collect()));
            }
            combined.insert("timer_slack_ns".into(), json!(o.timer_slack_ns));
            combined.insert("dma_latency_held".into(), json!(o.dma_latency_held));
            combined.insert("mlockall".into(), json!(o.mlockall));
            Some(combined)
        }
        _ => None,
    }
}

/// A ring and its outcome with round figures, for tests of what reads them.
#[cfg(test)]
pub(crate) fn sample_ring(procs: usize, laps: u64, cpu_ns: u64) -> (RingSpec, RingOutcome) {
    let spec = RingSpec {
        procs,
        length: RingLength::Laps(laps),
        mode: RingMode::Process,
        ipc: Ipc::Pipe,
        pin: Pin::Same,
        cpus: None,
        policy: Policy::Other,
        prio: 0,
        work_kb: 0,
        timeout: None,
        load: Default::default(),
        deadline: None,
        schedstat: true,
    };
    let outcome = RingOutcome {
        procs,
        member_cpus: vec![0; procs],
        laps,
        hops: laps * procs as u64,
        real_ns: cpu_ns,
        usage: Usage { utime_ns: cpu_ns / 4, stime_ns: cpu_ns - cpu_ns / 4, ..Usage::default() },
        member_maxrss_kb: 0,
        overhead_ps: 100_000,
        spawn_ns: 0,
        teardown_ns: 0,
        load: None,
        run_delay_ns: Some(4_000),
        migrations: Some(0),
    };
    (spec, outcome)
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
