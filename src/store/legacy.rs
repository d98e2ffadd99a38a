//! Results written by schedlab 0.1.0 kept each trial's figures as an untyped JSON object
//! (seconds as floats, keyed by name). These functions read such an object back into the
//! typed outcome, for the schema migration, for old files opened read-only, and for old
//! JSON exports. Seconds were ns / 1e9 in an f64, so rounding back to ns is exact.

use crate::families::latency::model::{LatencyOutcome, ThreadStats};
use crate::families::ring::model::RingOutcome;
use crate::families::workload::model::WorkloadOutcome;
use crate::families::{Family, Outcome};
use crate::model::Usage;
use serde_json::Value as Json;

fn int(f: &Json, key: &str) -> Option<u64> {
    f.get(key)?.as_u64()
}

fn ns(f: &Json, seconds_key: &str) -> Option<u64> {
    Some((f.get(seconds_key)?.as_f64()? * 1e9).round() as u64)
}

/// The outcome stored as 0.1.0 `figures` (and, for latency, its histogram buckets).
pub fn outcome(family: Family, figures: &Json, histogram: Option<Vec<(u64, u64)>>) -> Option<Outcome> {
    match family {
        Family::Ring => ring(figures).map(Outcome::Ring),
        Family::Workload => workload(figures).map(Outcome::Workload),
        Family::Latency => latency(figures, histogram.unwrap_or_default()).map(Outcome::Latency),
        // 0.1.0 had only the three classic families.
        _ => None,
    }
}

/// User and system time and the counters 0.1.0 kept (absent ones are zero).
fn usage(f: &Json) -> Option<Usage> {
    let count = |key| int(f, key).unwrap_or(0);
    Some(Usage {
        utime_ns: ns(f, "user_s")?,
        stime_ns: ns(f, "sys_s")?,
        maxrss_kb: count("member_maxrss_kb"),
        minflt: count("minflt"),
        majflt: count("majflt"),
        inblock: count("inblock"),
        oublock: count("oublock"),
        nvcsw: count("nvcsw"),
        nivcsw: count("nivcsw"),
        ..Usage::default()
    })
}

fn ring(f: &Json) -> Option<RingOutcome> {
    let usage = usage(f)?;
    Some(RingOutcome {
        procs: int(f, "procs")? as usize,
        member_cpus: f
            .get("cpus")
            .and_then(Json::as_array)
            .map(|a| a.iter().filter_map(Json::as_u64).map(|c| c as usize).collect())
            .unwrap_or_default(),
        laps: int(f, "laps")?,
        hops: int(f, "hops")?,
        real_ns: ns(f, "real_s")?,
        member_maxrss_kb: usage.maxrss_kb,
        usage,
        overhead_ps: (f.get("overhead_ns")?.as_f64()? * 1000.0).round() as u64,
        spawn_ns: ns(f, "spawn_s").unwrap_or(0),
        teardown_ns: ns(f, "teardown_s").unwrap_or(0),
        beside: Default::default(),
        // Format 1 predates the scheduler's per-task figures: unknown.
        run_delay_ns: None,
        migrations: None,
        sched_window_ns: None,
        trace: None,
    })
}

fn workload(f: &Json) -> Option<WorkloadOutcome> {
    if f.get("status").and_then(Json::as_str).is_some_and(|s| s != "ok") {
        return None;
    }
    let usage = usage(f)?;
    Some(WorkloadOutcome {
        children: int(f, "procs")? as usize,
        wall_ns: ns(f, "wall_s")?,
        usage,
        fork_ns: Some(ns(f, "fork_s").unwrap_or(0)),
        first_finish_ns: Some(ns(f, "first_finish_s").unwrap_or(0)),
        last_finish_ns: Some(ns(f, "last_finish_s").unwrap_or(0)),
        fairness: f.get("fairness").and_then(Json::as_f64),
        pi_min: f.get("pi_min").and_then(Json::as_f64),
        pi_max: f.get("pi_max").and_then(Json::as_f64),
        // Format 1 predates the scheduler's per-task figures: unknown.
        ..WorkloadOutcome::default()
    })
}

fn thread_stats(f: &Json) -> Option<ThreadStats> {
    Some(ThreadStats {
        cpu: f.get("cpu").and_then(Json::as_u64).map(|c| c as usize),
        samples: int(f, "samples")?,
        overruns: int(f, "overruns").unwrap_or(0),
        min_ns: int(f, "min_ns")?,
        avg_ns: f.get("avg_ns")?.as_f64()?,
        p50_ns: Some(int(f, "p50_ns")?),
        p90_ns: Some(int(f, "p90_ns")?),
        p99_ns: Some(int(f, "p99_ns")?),
        p999_ns: Some(int(f, "p999_ns")?),
        p9999_ns: Some(int(f, "p9999_ns")?),
        max_ns: int(f, "max_ns")?,
        run_delay_ns: None,
        migrations: None,
    })
}

fn latency(f: &Json, histogram: Vec<(u64, u64)>) -> Option<LatencyOutcome> {
    let all = thread_stats(f)?;
    // Several threads: the top level is "all" and each thread is in per_thread; one
    // thread: the top level is that thread.
    let threads = match f.get("per_thread").and_then(Json::as_array) {
        Some(list) => list.iter().map(thread_stats).collect::<Option<Vec<_>>>()?,
        None => vec![all.clone()],
    };
    let all = ThreadStats { cpu: if threads.len() > 1 { None } else { all.cpu }, ..all };
    Some(LatencyOutcome {
        threads,
        all,
        timer_slack_ns: int(f, "timer_slack_ns").unwrap_or(0),
        dma_latency_held: f.get("dma_latency_held").and_then(Json::as_bool).unwrap_or(false),
        mlockall: f.get("mlockall").and_then(Json::as_bool).unwrap_or(false),
        histogram,
        beside: Default::default(),
        deadline: None,
        outliers: Vec::new(),
        attribution: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_ring_line_of_0_1_0_reads_back_to_integer_ns() {
        let f = json!({"family": "ring", "procs": 4, "laps": 500, "hops": 2003, "real_s": 0.004567891,
            "user_s": 0.001, "sys_s": 0.003123457, "nvcsw": 2003, "nivcsw": 1, "overhead_ns": 812.345,
            "spawn_s": 0.0004, "teardown_s": 0.0002, "member_maxrss_kb": 2048, "cpus": [0, 0, 0, 0]});
        let o = ring(&f).unwrap();
        assert_eq!((o.real_ns, o.usage.stime_ns, o.overhead_ps, o.procs), (4_567_891, 3_123_457, 812_345, 4));
        assert_eq!(o.member_cpus, vec![0; 4]);
        assert!((o.ns_per_hop() - 4_567_891.0 / 2003.0).abs() < 1e-9);
    }

    #[test]
    fn a_failed_workload_has_no_outcome() {
        assert!(workload(&json!({"status": "timed_out", "wall_s": 0.0, "user_s": 0.0, "sys_s": 0.0})).is_none());
    }
}
