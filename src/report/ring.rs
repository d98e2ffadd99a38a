//! The NCAR table for rings (Processes, Real, CPU, User, System, Projected seconds),
//! with lat_ctx's per-hop and per-switch columns, and the JSON line per configuration.
//! Rows stream out as each ring finishes; the first (smallest) ring is the projection's
//! base, which is why sweeps run in ascending order.

use crate::model::{ns_to_s, RingLength, RingResult, RingSpec};
use crate::report::table::Table;
use crate::sys::sched::format_cpu_list;
use serde_json::{json, Value};

const COLUMNS: [&str; 11] = [
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
];

/// Streams one sweep's rows, remembering the base for the Projected column.
#[derive(Default)]
pub struct RingReport {
    base: Option<RingResult>,
}

/// A line saying what was run, so a pasted table carries its conditions.
pub fn describe_setup(spec: &RingSpec, cpus: &[usize], overhead_ns: f64) -> String {
    let placement = match spec.pin {
        crate::model::Pin::Same => format!("all on CPU {}", cpus[0]),
        crate::model::Pin::Spread => format!("spread over CPUs {}", format_cpu_list(cpus)),
        crate::model::Pin::None if spec.cpus.is_some() => format!("unpinned within CPUs {}", format_cpu_list(cpus)),
        crate::model::Pin::None => "unpinned".to_string(),
    };
    let policy = if spec.policy.is_realtime() {
        format!("{} priority {}", spec.policy.kernel_name(), spec.prio)
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
         token pass without a switch (one task): {overhead_ns:.0} ns\n",
        spec.mode.as_str(),
        spec.ipc.as_str(),
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
    fn base_for(&mut self, r: &RingResult) -> RingResult {
        self.base.get_or_insert_with(|| r.clone()).clone()
    }

    pub fn table_row(&mut self, r: &RingResult) -> String {
        let base = self.base_for(r);
        let projected = r.projected_cpu_ns(&base);
        let cells = vec![
            r.spec.procs.to_string(),
            seconds(r.real_ns as f64),
            seconds(r.cpu_ns() as f64),
            seconds(r.usage.utime_ns as f64),
            seconds(r.usage.stime_ns as f64),
            seconds(projected),
            format!("{:.2}", r.cpu_ns() as f64 / projected),
            format!("{:.0}", r.ns_per_hop()),
            format!("{:.0}", r.ns_per_switch()),
            r.usage.nvcsw.to_string(),
            r.usage.nivcsw.to_string(),
        ];
        Table::new(COLUMNS).fixed_line(&cells, &widths())
    }

    pub fn json(&mut self, r: &RingResult) -> Value {
        let base = self.base_for(r);
        let s = &r.spec;
        json!({
            "family": "ring",
            "procs": s.procs,
            "laps": r.laps,
            "hops": r.hops,
            "real_s": ns_to_s(r.real_ns as f64),
            "cpu_s": ns_to_s(r.cpu_ns() as f64),
            "user_s": ns_to_s(r.usage.utime_ns as f64),
            "sys_s": ns_to_s(r.usage.stime_ns as f64),
            "projected_s": ns_to_s(r.projected_cpu_ns(&base)),
            "nvcsw": r.usage.nvcsw,
            "nivcsw": r.usage.nivcsw,
            "ns_per_hop": r.ns_per_hop(),
            "overhead_ns": r.overhead_ns,
            "ns_per_switch": r.ns_per_switch(),
            "spawn_s": ns_to_s(r.spawn_ns as f64),
            "teardown_s": ns_to_s(r.teardown_ns as f64),
            "member_maxrss_kb": r.member_maxrss_kb,
            "minflt": r.usage.minflt,
            "majflt": r.usage.majflt,
            "mode": s.mode.as_str(),
            "ipc": s.ipc.as_str(),
            "pin": s.pin.as_str(),
            "cpus": r.member_cpus,
            "policy": s.policy.as_str(),
            "prio": s.prio,
            "work_kb": s.work_kb,
            "duration_s": match s.length { RingLength::Duration(d) => Some(d.as_secs_f64()), RingLength::Laps(_) => None },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Ipc, Pin, Policy, RingMode, Usage};

    fn result(procs: usize, laps: u64, cpu_ns: u64) -> RingResult {
        RingResult {
            spec: RingSpec {
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
            },
            member_cpus: vec![0; procs],
            laps,
            hops: laps * procs as u64,
            real_ns: cpu_ns,
            usage: Usage { utime_ns: cpu_ns / 4, stime_ns: cpu_ns - cpu_ns / 4, ..Usage::default() },
            member_maxrss_kb: 0,
            overhead_ns: 100.0,
            spawn_ns: 0,
            teardown_ns: 0,
        }
    }

    #[test]
    fn projected_scales_the_smallest_ring_linearly() {
        // NCAR Sun-4/280: 2 procs 873 s; 64 procs is projected at 32x = 27936 s.
        let mut report = RingReport::default();
        let two = report.json(&result(2, 1000, 873_000_000_000));
        let sixty_four = report.json(&result(64, 1000, 96_545_000_000_000));
        assert_eq!(two["projected_s"], 873.0);
        assert_eq!(sixty_four["projected_s"], 873.0 * 32.0);
        assert_eq!(sixty_four["cpu_s"], 96545.0);
    }

    #[test]
    fn per_hop_and_per_switch() {
        let mut report = RingReport::default();
        let j = report.json(&result(4, 10, 40_000));
        assert_eq!(j["hops"], 40);
        assert_eq!(j["ns_per_hop"], 1000.0);
        assert_eq!(j["ns_per_switch"], 900.0);
    }

    #[test]
    fn rows_line_up_with_the_header() {
        let mut report = RingReport::default();
        let row = report.table_row(&result(2, 1000, 2_000_000));
        let header = table_header();
        assert_eq!(row.len(), header.len());
        assert!(row.trim_start().starts_with('2'));
        assert!(row.contains("1.00"), "{row}");
    }
}
