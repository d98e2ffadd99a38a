//! `schedlab taskset`'s flags: the task set's options, its activations file, its blocks and
//! how it prints. The command's help and examples are here too; the registry makes it a
//! subcommand (`cli::FamilyCommand`).

use clap::Args;
use crate::cli::groups::{BlockArgs, FamilyFlags, OutputArgs};
use crate::error::Result;
use crate::families::shared::SpecSource;
use crate::report::live::Door;
use super::Taskset;

const EXAMPLES: &str = "Examples:
  schedlab taskset --policy other,fifo,deadline --repeat 5 tasks.toml
  schedlab taskset --policy fifo --task 'name = \"ctl\", period = \"1ms\", run = \"200us\"' --load cpu

tasks.toml:
  [[task]]
  name = \"ctl\"
  period = \"1ms\"
  run = \"200us\"

  [[task]]
  name = \"log\"
  period = \"10ms\"
  events = [{ lock = \"bus\" }, { run = \"2ms\" }, { unlock = \"bus\" }, { sleep = \"1ms\" }]";

/// The form of `--activations`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ActivationsFormat {
    Csv,
    #[value(name = "rt-app")]
    RtApp,
}

#[derive(Args, Debug, Clone)]
#[command(
    about = "A real-time task set (periodic tasks that run, sleep, lock, yield): per policy, are the deadlines met?",
    after_help = EXAMPLES
)]
pub struct TasksetArgs {
    #[command(flatten)]
    pub options: super::model::TasksetOptions,

    /// Stream every activation to FILE as CSV while the set runs (policy, block, task, instance, activation,
    /// expected time, wakeup, response, slack, run got, missed): the only output that grows with the run
    #[arg(long, value_name = "FILE.csv")]
    pub activations: Option<std::path::PathBuf>,

    /// How --activations writes them: csv (one file), or rt-app (a new directory of rt-app's per-thread logs,
    /// POLICY-bBLOCK-TASK-INSTANCE.log, in its columns: idx perf run period start end rel_st slack c_duration
    /// c_period wu_lat, µs; perf is 0, as schedlab runs no calibrated loop), so rt-app's scripts read them
    #[arg(long, value_name = "FORMAT", default_value = "csv", requires = "activations")]
    pub activations_format: ActivationsFormat,

    #[command(flatten)]
    pub blocks: BlockArgs,

    // text: a table of the tasks per trial, then the cells' table and findings;
    // json: one object per trial per line
    #[command(flatten)]
    pub output: OutputArgs,
}

impl FamilyFlags for Taskset {
    type Args = TasksetArgs;

    fn door(args: &TasksetArgs) -> Result<Door<'static>> {
        let (blocks, seed) = (args.blocks.repeat, args.blocks.seed());
        let activations = args.activations.as_deref();
        let rt_app_log = args.activations_format == ActivationsFormat::RtApp;
        super::live::door(args.options.to_specs()?, args.output.format(), blocks, seed, activations, rt_app_log)
    }
}
