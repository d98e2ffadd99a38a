//! `schedlab ring`: a sweep of ring sizes, printed as the NCAR table or JSON lines.

use crate::bench::ring;
use crate::cli::RingArgs;
use crate::commands::{emit, progress_bar};
use crate::error::Result;
use crate::exec::preflight;
use crate::model::{RingLength, RingOutcome, RingSpec};
use crate::report::ring::{describe_setup, table_header, RingReport};
use serde_json::Value;

pub fn run(args: &RingArgs) -> Result<Vec<RingOutcome>> {
    let specs = args.options.to_specs()?;
    sweep(&specs, args.json)
}

/// Run `specs` (ascending ring sizes that differ only in size) and stream each row.
/// Every check that can refuse the sweep runs before the first fork.
pub fn sweep(specs: &[RingSpec], json: bool) -> Result<Vec<RingOutcome>> {
    let (Some(first), Some(largest)) = (specs.first(), specs.last()) else { return Ok(Vec::new()) };
    let cpus = preflight::ring(largest)?;
    let load_plan = preflight::load(&first.load)?;
    let overhead_ps = ring::measure_overhead(first, &cpus)?;
    if !json {
        emit(&describe_setup(first, &cpus, overhead_ps))?;
        if !first.load.is_none() {
            emit(&format!("background load: {} (each ring runs beside a fresh one)", first.load.describe()))?;
        }
        emit(&table_header())?;
    }
    // Work is proportional to hops, so the bar advances by ring size.
    let total: u64 = specs.iter().map(|s| s.procs as u64).sum();
    let bar = progress_bar(total, "members");
    let mut report = RingReport::default();
    let mut results = Vec::with_capacity(specs.len());
    for spec in specs {
        let what = match spec.length {
            RingLength::Laps(l) => format!("ring of {} ({} hops)", spec.procs, l * spec.procs as u64),
            RingLength::Duration(d) => format!("ring of {} for {:.1} s", spec.procs, d.as_secs_f64()),
        };
        bar.set_message(what);
        let measured = crate::sys::load::beside(load_plan.as_ref(), || ring::run_ring(spec, &cpus, overhead_ps));
        let outcome = match measured {
            Ok((mut o, load)) => {
                o.load = load;
                o
            }
            Err(e) => {
                bar.finish_and_clear();
                return Err(e);
            }
        };
        let line = if json {
            Value::Object(report.json(spec, &outcome)).to_string()
        } else {
            report.table_row(spec, &outcome)
        };
        bar.suspend(|| emit(&line))?;
        if let (false, Some(load)) = (json, &outcome.load) {
            bar.suspend(|| emit(&format!("    {}", crate::report::load_line(load))))?;
        }
        bar.inc(spec.procs as u64);
        results.push(outcome);
    }
    bar.finish_and_clear();
    Ok(results)
}
