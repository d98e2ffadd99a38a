//! `schedlab latency`: validate, measure (once per policy), report.

use crate::bench::latency::{self, LatencyPlan, LatencyRun, Live};
use crate::cli::LatencyArgs;
use crate::commands::emit;
use crate::error::{describe_io, Error, Result};
use crate::exec::preflight;
use crate::model::{LatencyOutcome, LatencySpec};
use crate::report::{figures, latency as report};
use serde_json::Value;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;

pub fn run(args: &LatencyArgs) -> Result<i32> {
    let specs = args.options.to_specs(args.compare_policies.as_ref())?;
    // Every policy is checked (and its threads' CPUs resolved) before the first runs.
    let cpus: Vec<Vec<Option<usize>>> = specs.iter().map(preflight::latency).collect::<Result<_>>()?;
    // The load is the same for every policy: checked once, started afresh for each.
    let load_plan = match specs.first() {
        Some(spec) => preflight::load(&spec.load)?,
        None => None,
    };
    // Open the output files first: an unwritable path must fail before the run.
    let histogram_file = open_output(args.histogram.as_deref())?;
    let samples_file = open_output(args.samples.as_deref())?;
    let live_line = std::io::stderr().is_terminal();
    let mut runs: Vec<LatencyRun> = Vec::new();
    let mut outcomes: Vec<(LatencySpec, LatencyOutcome)> = Vec::new();
    for (spec, cpus) in specs.iter().zip(cpus) {
        let label = spec.policy.as_str();
        let plan = LatencyPlan::new(spec, cpus, args.samples.is_some());
        let (run, load) = crate::sys::load::beside(load_plan.as_ref(), || {
            latency::run(&plan, |lives| {
                if live_line {
                    draw_live_line(label, lives);
                }
            })
        })?;
        if live_line {
            eprint!("\r\x1b[K");
        }
        let interrupted = run.interrupted.is_some();
        let break_us = args.options.break_us.unwrap_or_default();
        if let Some((i, hit)) = run.threads.iter().enumerate().find_map(|(i, t)| t.break_hit.map(|h| (i, h))) {
            let what = latency::break_trace(&format!(
                "schedlab: latency {hit} ns on thread {i} above --break-us {break_us} µs\n"
            ));
            eprintln!(
                "schedlab: thread T{i} woke {:.1} µs late, above --break-us {break_us}: run stopped; {what}",
                hit as f64 / 1000.0
            );
        }
        let mut outcome = run.outcome();
        outcome.load = load;
        if args.json {
            for line in figures::latency_lines(spec, &outcome) {
                emit(&Value::Object(line).to_string())?;
            }
        } else {
            emit(&report::describe(&run))?;
            if let Some(load) = &outcome.load {
                emit(&crate::report::load_line(load))?;
            }
            if specs.len() == 1 {
                emit(&report::thread_table(&outcome))?;
            }
            emit(&report::spike_lines(spec, &outcome))?;
        }
        runs.push(run);
        outcomes.push((spec.clone(), outcome));
        if interrupted {
            break;
        }
    }
    if specs.len() > 1 && !args.json {
        emit(&report::compare_table(&outcomes))?;
    }
    if let Some((mut file, path)) = histogram_file {
        for run in &runs {
            report::write_histogram(&mut file, run).map_err(|e| write_error(&path, e))?;
        }
    }
    if let Some((mut file, path)) = samples_file {
        for run in &runs {
            report::write_samples(&mut file, &run.threads).map_err(|e| write_error(&path, e))?;
        }
    }
    Ok(0)
}

fn write_error(path: &Path, e: std::io::Error) -> Error {
    Error::env(format!("writing {}: {}", path.display(), describe_io(&e)))
}

fn open_output(path: Option<&Path>) -> Result<Option<(std::io::BufWriter<std::fs::File>, PathBuf)>> {
    let Some(path) = path else { return Ok(None) };
    let file = std::fs::File::create(path)
        .map_err(|e| Error::env(format!("cannot write {}: {}", path.display(), describe_io(&e))))?;
    Ok(Some((std::io::BufWriter::new(file), path.to_path_buf())))
}

fn draw_live_line(label: &str, lives: &[Live]) {
    let current = lives.iter().map(|l| l.current_ns.load(Ordering::Relaxed)).max().unwrap_or(0);
    let max = lives.iter().map(|l| l.max_ns.load(Ordering::Relaxed)).max().unwrap_or(0);
    let samples: u64 = lives.iter().map(|l| l.samples.load(Ordering::Relaxed)).sum();
    let mut err = std::io::stderr().lock();
    let _ = write!(
        err,
        "\r\x1b[K{label}: current {:.1} µs  max {:.1} µs  samples {samples}",
        current as f64 / 1000.0,
        max as f64 / 1000.0
    );
    let _ = err.flush();
}
