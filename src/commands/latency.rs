//! `schedlab latency`: validate, measure (once per policy), report.

use crate::bench::latency::{self, LatencyRun, LatencySpec, Live, RunLength};
use crate::cli::LatencyArgs;
use crate::commands::emit;
use crate::error::{describe_io, Error, Result};
use crate::model::Policy;
use crate::report::latency as report;
use crate::sys::sched;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;

pub fn run(args: &LatencyArgs) -> Result<i32> {
    let interval_ns = args.interval_ns();
    let resolution = latency::clock_resolution_ns();
    if interval_ns == 0 || interval_ns < resolution {
        return Err(Error::usage(format!(
            "an interval of {interval_ns} ns is below what CLOCK_MONOTONIC resolves here ({resolution} ns)"
        )));
    }
    let policies = args.policies()?;
    let cpus = thread_cpus(args)?;
    for &(policy, prio) in &policies {
        sched::probe_policy(policy, prio)?;
    }
    // Open the output files first: an unwritable path must fail before the run.
    let histogram_file = open_output(args.histogram.as_deref())?;
    let samples_file = open_output(args.samples.as_deref())?;
    let live_line = std::io::stderr().is_terminal();
    let mut runs: Vec<LatencyRun> = Vec::new();
    for &(policy, prio) in &policies {
        let spec = spec_for(args, policy, prio, cpus.clone());
        let label = policy.as_str();
        let run = latency::run(&spec, |lives| {
            if live_line {
                draw_live_line(label, lives);
            }
        })?;
        if live_line {
            eprint!("\r\x1b[K");
        }
        let interrupted = run.interrupted.is_some();
        if let Some((i, hit)) = run.threads.iter().enumerate().find_map(|(i, t)| t.break_hit.map(|h| (i, h))) {
            let what = latency::break_trace(&format!(
                "schedlab: latency {hit} ns on thread {i} above --break-us {} µs\n",
                args.break_us.unwrap_or_default()
            ));
            eprintln!(
                "schedlab: thread T{i} woke {:.1} µs late, above --break-us {}: run stopped; {what}",
                hit as f64 / 1000.0,
                args.break_us.unwrap_or_default()
            );
        }
        if args.json {
            for line in report::json_lines(&run) {
                emit(&line.to_string())?;
            }
        } else if policies.len() == 1 {
            emit(&report::describe(&run))?;
            emit(&report::thread_table(&run))?;
        } else {
            emit(&report::describe(&run))?;
        }
        runs.push(run);
        if interrupted {
            break;
        }
    }
    if policies.len() > 1 && !args.json {
        emit(&report::compare_table(&runs))?;
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

/// The measurement `args` ask for under one policy, on threads placed at `cpus`.
pub(crate) fn spec_for(args: &LatencyArgs, policy: Policy, prio: i32, cpus: Vec<Option<usize>>) -> LatencySpec {
    LatencySpec {
        interval_ns: args.interval_ns(),
        length: match (args.loops, args.duration) {
            (Some(n), _) => RunLength::Loops(n),
            (None, Some(d)) => RunLength::Duration(d),
            (None, None) => RunLength::Duration(std::time::Duration::from_secs(10)),
        },
        policy,
        prio,
        cpus,
        hold_dma_latency: !args.no_dma_latency,
        break_ns: args.break_us.map(|us| (us * 1000.0) as u64),
        keep_samples: args.samples.is_some(),
    }
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

/// The CPU of each measuring thread (`None`: unpinned).
pub(crate) fn thread_cpus(args: &LatencyArgs) -> Result<Vec<Option<usize>>> {
    let allowed = sched::resolve_cpus(None)?;
    if let Some(list) = &args.cpus {
        return Ok(sched::resolve_cpus(Some(&list.0))?.into_iter().map(Some).collect());
    }
    if args.all_cpus {
        return Ok(allowed.into_iter().map(Some).collect());
    }
    match args.threads {
        None => Ok(vec![None]),
        Some(n) if n as usize <= allowed.len() => Ok(allowed.into_iter().take(n as usize).map(Some).collect()),
        Some(n) => Err(Error::env(format!(
            "--threads {n} asks for more pinned threads than the {} CPUs this process may use ({})",
            allowed.len(),
            sched::format_cpu_list(&allowed)
        ))),
    }
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
