//! The server's tables and lines: the stored table from the figure registry, a JSON line
//! per trial (with each worker's requests and run-queue wait), and its live text line.

use super::model::{figures, Rate, ServerOutcome, ServerSpec};
use super::Server;
use crate::model::figures::{self as registry, Part};
use crate::model::{format_ns, Family, Outcome, TrialSpec, TrialStatus};
use crate::report::family::{Column, FamilyReport, Summarise};
use crate::report::figures::{add_load, object, put};
use crate::store::TrialRecord;
use serde_json::{json, Map, Value as Json};

/// One trial: the server's settings, then its figures (null where it failed), then the load's.
pub fn line(spec: &ServerSpec, repeat: usize, status: &TrialStatus, o: Option<&Outcome>) -> Map<String, Json> {
    let mut m = object(json!({
        "family": "server",
        "policy": spec.policy.as_str(),
        "threads": spec.message_threads,
        "workers": spec.workers,
        "target_util_pct": match spec.rate { Rate::TargetUtilPct(p) => json!(p), Rate::Rps(_) => Json::Null },
        "work_ns": spec.work_ns,
        "think_ns": spec.think_ns,
        "lock": spec.lock,
        "duration_s": spec.duration.as_secs_f64(),
        "repeat": repeat,
        "status": status.label(),
        "reason": status.reason(),
    }));
    put(&mut m, registry::of(Family::Server), Part::Always, |f| o.and_then(|o| f.value(o)), Vec::new());
    if let Some(s) = o.and_then(Outcome::server) {
        m.insert("cpus".into(), json!(s.cpus));
        m.insert("sent".into(), json!(s.sent));
        m.insert("wakeups".into(), json!(s.wakeups));
        m.insert("served_in_window".into(), json!(s.served_in_window));
        m.insert("send_lag_max_ns".into(), json!(s.send_lag_max_ns));
        m.insert("wake_max_ns".into(), json!(s.wake_max_ns));
        m.insert("request_max_ns".into(), json!(s.request_max_ns));
        if !s.calibration.is_empty() {
            m.insert("calibration".into(), json!(s.calibration));
        }
        m.insert("per_worker".into(), json!(s.workers));
    }
    if o.is_some() {
        add_load(&mut m, &spec.load, o);
    }
    m
}

fn us(ns: Option<u64>) -> String {
    ns.map_or("-".to_string(), |ns| format!("{:.1}", ns as f64 / 1000.0))
}

/// A trial in one line of text: the rate (and how it was found), what was sent and
/// served, and the percentiles (with the samples they rest on).
pub fn text(spec: &ServerSpec, o: &ServerOutcome) -> String {
    let rate = match spec.rate {
        Rate::Rps(_) => format!("{:.0} rps asked", o.rps_asked),
        Rate::TargetUtilPct(p) => {
            let at_it = o.calibration.iter().find(|c| c.rps == o.rps_asked);
            let probe = at_it.map_or(String::new(), |c| format!(", its probe {:.1}%", c.util_pct));
            format!(
                "{:.0} rps found for {p}% of {} CPU(s) in {} probe(s){probe}",
                o.rps_asked,
                o.cpus,
                o.calibration.len()
            )
        }
    };
    format!(
        "{rate}, {:.0} served in the window ({} sent, {} unsent; {} served, {} queued, {} dropped, {} unserved), CPU \
         {:.1}%\n  send lag µs: p99 {} max {}\n  wakeup  µs: p50 {} p90 {} p99 {} p99.9 {}  ({} wakeups)\n  request \
         µs: p50 {} p90 {} p99 {} p99.9 {}  (think {} + work {}, from each request's due time)\n  run-queue wait: {} \
         µs per request served, {} µs the most of one worker",
        o.achieved_rps,
        o.sent,
        o.unsent,
        o.requests,
        o.queued,
        o.dropped,
        o.unserved,
        o.cpu_util_pct,
        us(o.send_lag_p99_ns),
        us(o.send_lag_max_ns),
        us(o.wake_p50_ns),
        us(o.wake_p90_ns),
        us(o.wake_p99_ns),
        us(o.wake_p999_ns),
        o.wakeups,
        us(o.request_p50_ns),
        us(o.request_p90_ns),
        us(o.request_p99_ns),
        us(o.request_p999_ns),
        format_ns(spec.think_ns),
        format_ns(spec.work_ns),
        us(o.rq_wait_per_request_ns),
        us(o.rq_wait_max_ns),
    )
}

/// The stored table of a server experiment, from the figure registry.
impl FamilyReport for Server {
    fn columns() -> Vec<Column> {
        use figures::*;
        use Summarise::*;
        vec![
            Column::named("rps asked", &RPS_ASKED, Median, 0),
            Column::named("rps served", &ACHIEVED_RPS, Median, 0),
            Column::named("CPU %", &CPU_UTIL_PCT, Median, 1),
            Column::micros("Request p50 µs", &REQUEST_P50_NS, Median),
            Column::micros("Request p99 µs", &REQUEST_P99_NS, Median),
            Column::Ci,
            Column::micros("Request p99.9 µs", &REQUEST_P999_NS, Median),
            Column::micros("Wake p50 µs", &WAKE_P50_NS, Median),
            Column::micros("Wake p99 µs", &WAKE_P99_NS, Median),
            Column::micros("RQ wait/request µs", &RQ_WAIT_PER_REQUEST_NS, Median),
            Column::named("Queued", &QUEUED, Sum, 0),
            Column::named("Dropped", &DROPPED, Sum, 0),
            Column::named("Unserved", &UNSERVED, Sum, 0),
            Column::named("Unsent", &UNSENT, Sum, 0),
        ]
    }

    fn stored_line(t: &TrialRecord) -> Option<Map<String, Json>> {
        let Some(TrialSpec::Server(spec)) = &t.spec else { return None };
        Some(line(spec, t.repeat.max(0) as usize, &t.status, t.outcome.as_ref()))
    }
}
