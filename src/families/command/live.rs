//! `schedlab command -- CMD`: the user's program as a family. Each repeat is a block that
//! runs the program once under every policy asked for, in random order; then the table of
//! the cells and, with two policies or more, which is best and the evidence (the run's
//! findings, as a suite's).

use super::model::CommandSpec;
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

pub(crate) fn door(specs: Vec<CommandSpec>, format: Format, blocks: u32, seed: u64) -> Result<Door<'static>> {
    if specs.is_empty() {
        return Err(Error::usage("no policy to run the command under"));
    }
    // Each run stops itself at its --timeout; the executor's limit only backs that up.
    let limit = specs.iter().map(|s| s.timeout).max().unwrap_or_default() + Duration::from_secs(60);
    let blocks_of = Blocks { specs, blocks, seed, limit, unit: "runs", extras: Extras::default() };
    Ok(blocks_of.door(
        |spec| {
            let TrialSpec::Command(c) = spec else { return Cell::new() };
            Cell::from_iter([("cmd", c.argv.clone().into()), (axis::POLICY, c.policy.as_str().into())])
        },
        move |specs| Ok(Box::new(CommandLive { specs, format, blocks, seed })),
    ))
}

struct CommandLive {
    specs: Vec<CommandSpec>,
    format: Format,
    blocks: u32,
    seed: u64,
}

impl Sink for CommandLive {
    /// A JSON line per run as it ends; the tables and findings wait for them all.
    fn take(&mut self, trial: &Trial, record: &TrialRecord, _: &TrialNotes, bar: &ProgressBar) -> Result<()> {
        let TrialSpec::Command(spec) = &trial.spec else { return Ok(()) };
        if self.format == Format::Json {
            let line = super::report::line(spec, trial.repeat as usize, &record.status, record.outcome.as_ref());
            bar.suspend(|| emit(&crate::report::json_line(&line)))?;
        }
        Ok(())
    }
}

impl LiveReport for CommandLive {
    fn start(&mut self) -> Result<()> {
        if self.format == Format::Text {
            emit(&format!(
                "schedlab: `{}` under {}, {} block(s) in random order (seed {})",
                self.specs[0].command_line(),
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
