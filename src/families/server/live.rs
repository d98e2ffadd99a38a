//! `schedlab server`: the server under each policy asked for, in blocks of random order;
//! per trial its rate and percentiles, then the table of the cells and, with two policies
//! or more, which serves with the lowest request p99 and the evidence (the run's
//! findings, as a suite's).

use super::model::ServerSpec;
use crate::error::{Error, Result};
use crate::exec::family::{Extras, TrialNotes};
use crate::exec::pipeline::Sink;
use crate::exec::suite::Trial;
use crate::families::list::TrialSpec;
use crate::model::cell::{axis, Cell};
use crate::report::exporter::Format;
use crate::report::live::{Blocks, Door, LiveReport};
use crate::report::output::{emit, emit_cells_and_findings};
use crate::store::TrialRecord;
use indicatif::ProgressBar;
use std::time::Duration;

pub(crate) fn door(specs: Vec<ServerSpec>, format: Format, blocks: u32, seed: u64) -> Result<Door<'static>> {
    if specs.is_empty() {
        return Err(Error::usage("no policy to run the server under"));
    }
    // The kill limit: the longest a legal trial runs (probes, late sends and the requests
    // in hand included), and a minute to start and stop.
    let limit = specs.iter().map(|s| s.longest()).max().unwrap_or_default() + Duration::from_secs(60);
    let blocks_of = Blocks { specs, blocks, seed, limit, unit: "trials", extras: Extras::default() };
    Ok(blocks_of.door(
        |spec| Cell::from_iter([(axis::POLICY, spec.policy().as_str().into())]),
        move |specs| Ok(Box::new(ServerLive { specs, format, blocks, seed })),
    ))
}

struct ServerLive {
    specs: Vec<ServerSpec>,
    format: Format,
    blocks: u32,
    seed: u64,
}

impl Sink for ServerLive {
    fn take(&mut self, trial: &Trial, record: &TrialRecord, _: &TrialNotes, bar: &ProgressBar) -> Result<()> {
        let TrialSpec::Server(spec) = &trial.spec else { return Ok(()) };
        match self.format {
            Format::Json => {
                let line = super::report::line(spec, trial.repeat as usize, &record.status, record.outcome.as_ref());
                bar.suspend(|| emit(&crate::report::json_line(&line)))
            }
            Format::Text => {
                let Some(o) = record.outcome.as_ref().and_then(|o| o.server()) else { return Ok(()) };
                let title = format!("block {}: {}", trial.repeat, spec.policy);
                bar.suspend(|| emit(&format!("\n{title}: {}", super::report::text(spec, o))))
            }
            Format::Csv | Format::Markdown => Ok(()),
        }
    }
}

impl LiveReport for ServerLive {
    fn start(&mut self) -> Result<()> {
        if self.format == Format::Text {
            let s = &self.specs[0];
            emit(&format!(
                "schedlab: {} message thread(s) × {} worker(s), think {} + work {}{}, {} s a trial, under {}; {} \
                 block(s) in random order (seed {})",
                s.message_threads,
                s.workers,
                crate::model::format_ns(s.think_ns),
                crate::model::format_ns(s.work_ns),
                if s.lock { " under a per-CPU lock" } else { "" },
                s.duration.as_secs_f64(),
                self.specs.iter().map(|s| s.policy.as_str()).collect::<Vec<_>>().join(", "),
                self.blocks,
                self.seed
            ))?;
        }
        Ok(())
    }

    fn end(&mut self, records: &[TrialRecord], _: i32) -> Result<()> {
        emit_cells_and_findings(records, self.format)
    }
}
