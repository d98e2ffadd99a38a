//! `schedlab latency`'s flags: the run's options, its files and how it prints. The
//! command's help and examples are here too; the registry makes it a subcommand
//! (`cli::FamilyCommand`).

use clap::Args;
use crate::cli::groups::{FamilyFlags, OutputArgs};
use crate::error::Result;
use crate::model::parse::{parse_policies, PolicyList};
use crate::report::live::Door;
use std::path::PathBuf;
use super::Latency;
use super::model::LatencyOptions;

const EXAMPLES: &str = "Examples:\n  \
    schedlab latency --freq 85 --loops 850 --compare-policies other,fifo   # the 2007 hrtimers test\n  \
    schedlab latency --interval 1ms --duration 60s --policy fifo --all-cpus\n  \
    schedlab latency --interval 200us --policy fifo --prio 90 --break-us 500\n  \
    schedlab latency --loops 10000 --samples lat.txt --histogram hist.txt --json\n  \
    schedlab latency --policy fifo --cpus 1 --duration 10s --trace-out trace.json   # what ran, lane by lane\n\n\
    Ctrl-C ends the run early and still prints the statistics of the samples taken.";

#[derive(Args, Debug, Clone)]
#[command(
    about = "Timer wakeup latency: periodic absolute sleeps, actual − ideal (hrtimers 2007, cyclictest)",
    after_help = EXAMPLES
)]
pub struct LatencyArgs {
    #[command(flatten)]
    pub options: LatencyOptions,

    /// Write the histogram's bucket counts (value_ns count) to FILE
    #[arg(long, value_name = "FILE")]
    pub histogram: Option<PathBuf>,

    /// Write every raw sample in ns, one per line, to FILE (grows with the run)
    #[arg(long, value_name = "FILE")]
    pub samples: Option<PathBuf>,

    /// Write the recorded tracepoints to FILE as a Chrome trace (JSON; open it in ui.perfetto.dev or chrome://tracing):
    /// per CPU what ran, the interrupts and the late wakeups; implies --trace on
    #[arg(long, value_name = "FILE")]
    pub trace_out: Option<PathBuf>,

    /// Run once per policy (e.g. other,fifo) and print them side by side
    #[arg(long, value_name = "LIST", value_parser = parse_policies)]
    pub compare_policies: Option<PolicyList>,

    // text: per policy, what was in force and the thread table; json: one object per
    // thread per policy, plus a combined one per policy; csv, markdown: show's table.
    #[command(flatten)]
    pub output: OutputArgs,
}

impl FamilyFlags for Latency {
    type Args = LatencyArgs;

    fn door(args: &LatencyArgs) -> Result<Door<'static>> {
        let specs = args.options.to_specs_comparing(args.compare_policies.as_ref())?;
        let files = super::live::LatencyFiles {
            histogram: args.histogram.clone(),
            samples: args.samples.clone(),
            trace_out: args.trace_out.clone(),
        };
        super::live::door(specs, args.output.format(), files)
    }
}
