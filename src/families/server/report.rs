//! The server's tables and lines: the stored table from the figure registry, a JSON line
//! per trial (with each worker's requests and run-queue wait), and its live text line.

use super::figures;
use super::model::{Probe, Rate, ServerOutcome, ServerSpec, WorkerStats};
use super::Server;
use crate::families::declared::FamilyModel;
use crate::families::figures::{self as registry, Part};
use crate::families::list::{Family, Outcome, TrialSpec};
use crate::model::{format_ns, TrialStatus};
use crate::report::family::{Column, FamilyReport, Summarise};
use crate::report::figures::{Figures, LineExtras, Status};
use crate::store::TrialRecord;
use serde::Serialize;

/// One trial: the server's settings, then its figures (null where it failed), then what
/// only the server counts (its CPUs, what was sent, the maxima, the probes, each worker),
/// then the load's.
pub fn line<'a>(spec: &ServerSpec, repeat: usize, status: &'a TrialStatus, o: Option<&'a Outcome>) -> ServerLine<'a> {
    let target_util_pct = match spec.rate {
        Rate::TargetUtilPct(p) => Some(p),
        Rate::Rps(_) => None,
    };
    ServerLine {
        family: Server::NAME,
        policy: spec.policy.as_str(),
        threads: spec.message_threads,
        workers: spec.workers,
        target_util_pct,
        work_ns: spec.work_ns,
        think_ns: spec.think_ns,
        lock: spec.lock,
        duration_s: spec.duration.as_secs_f64(),
        repeat,
        status: Status::of(status),
        figures: Figures::of(registry::of(Family::Server), Part::Always, |f| o.and_then(|o| f.value(o))),
        served: o.and_then(Outcome::server).map(|s| Served {
            cpus: s.cpus,
            sent: s.sent,
            wakeups: s.wakeups,
            served_in_window: s.served_in_window,
            send_lag_max_ns: s.send_lag_max_ns,
            wake_max_ns: s.wake_max_ns,
            request_max_ns: s.request_max_ns,
            calibration: &s.calibration,
            per_worker: &s.workers,
        }),
        beside: o.map(|o| LineExtras::of(&spec.load, Some(o), None)),
    }
}

#[derive(Serialize)]
pub struct ServerLine<'a> {
    family: &'static str,
    policy: &'static str,
    threads: u32,
    workers: u32,
    /// Null under a fixed --rps.
    target_util_pct: Option<u32>,
    work_ns: u64,
    think_ns: u64,
    lock: bool,
    duration_s: f64,
    repeat: usize,
    #[serde(flatten)]
    status: Status<'a>,
    #[serde(flatten)]
    figures: Figures,
    #[serde(flatten)]
    served: Option<Served<'a>>,
    #[serde(flatten)]
    beside: Option<LineExtras>,
}

/// A finished trial's keys after the registry's figures.
#[derive(Serialize)]
struct Served<'a> {
    cpus: u32,
    sent: u64,
    wakeups: u64,
    served_in_window: u64,
    send_lag_max_ns: Option<u64>,
    wake_max_ns: Option<u64>,
    request_max_ns: Option<u64>,
    /// Only under --target-util, which probes for the rate.
    #[serde(skip_serializing_if = "<[Probe]>::is_empty")]
    calibration: &'a [Probe],
    per_worker: &'a [WorkerStats],
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

    fn stored_line(t: &TrialRecord) -> Option<impl Serialize> {
        let Some(TrialSpec::Server(spec)) = &t.spec else { return None };
        Some(line(spec, t.repeat.max(0) as usize, &t.status, t.outcome.as_ref()))
    }
}

/// A server run's questions are told figure by figure; it has no findings of its own.
impl crate::decide::findings::FamilyFindings for Server {}

#[cfg(test)]
mod tests {
    use super::super::model::ServerOptions;
    use super::*;
    use crate::families::shared::SpecSource;
    use crate::report::figures::object_of;

    fn spec(text: &str) -> ServerSpec {
        toml::from_str::<ServerOptions>(text).unwrap().to_specs().unwrap().remove(0)
    }

    fn figure_keys() -> Vec<&'static str> {
        registry::of(Family::Server).iter().filter(|f| f.part == Part::Always).map(|f| f.key).collect()
    }

    const SETTINGS: [&str; 12] = [
        "family",
        "policy",
        "threads",
        "workers",
        "target_util_pct",
        "work_ns",
        "think_ns",
        "lock",
        "duration_s",
        "repeat",
        "status",
        "reason",
    ];

    #[test]
    fn a_failed_trial_has_its_settings_and_status_then_every_figure_null() {
        let status = TrialStatus::Failed("no CPU".into());
        let failed = object_of(&line(&spec("rps = 100"), 1, &status, None));
        let keys: Vec<&str> = failed.keys().map(String::as_str).collect();
        assert_eq!(keys, [SETTINGS.to_vec(), figure_keys()].concat());
        assert!(figure_keys().iter().all(|k| failed[*k].is_null()));
        assert_eq!((failed["target_util_pct"].is_null(), failed["reason"].as_str()), (true, Some("no CPU")));
    }

    #[test]
    fn a_finished_trial_adds_what_only_the_server_counts_after_the_figures() {
        let spec = spec("target-util = \"50%\"");
        let o = Outcome::Server(ServerOutcome { requests: 7, cpu_util_pct: 50.0, ..Default::default() });
        let ok = object_of(&line(&spec, 2, &TrialStatus::Ok, Some(&o)));
        let keys: Vec<&str> = ok.keys().map(String::as_str).collect();
        let served = [
            "cpus",
            "sent",
            "wakeups",
            "served_in_window",
            "send_lag_max_ns",
            "wake_max_ns",
            "request_max_ns",
            "per_worker",
        ];
        assert_eq!(keys, [SETTINGS.to_vec(), figure_keys(), served.to_vec()].concat());
        // Counts stay integers, percentages floats; no probes, no calibration key.
        assert_eq!(crate::report::json_line(&ok["requests"]), "7");
        assert_eq!(crate::report::json_line(&ok["cpu_util_pct"]), "50.0");
        assert_eq!(ok["target_util_pct"], 50);
    }
}
