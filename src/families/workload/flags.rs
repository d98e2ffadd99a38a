//! `schedlab workload`'s flags: the matrix's options, its repeats and how it prints. The
//! command's help and examples are here too; the registry makes it a subcommand
//! (`cli::FamilyCommand`).

use clap::Args;
use crate::cli::groups::FamilyFlags;
use crate::error::Result;
use crate::families::shared::SpecSource;
use crate::report::live::Door;
use super::Workload;
use super::live::WorkloadFormat;
use super::model::WorkloadOptions;

const EXAMPLES: &str = "Examples:\n  \
    schedlab workload cpu --procs 10,50,100 --policy other,fifo,rr --repeat 5\n  \
    schedlab workload io --procs 4,16 --policy other,fifo --dir /var/tmp --format classic\n  \
    schedlab workload mixed --procs 10 --policy rr --prio 50 --json\n  \
    schedlab workload cpu --procs 8 --policy batch,other --nice 5\n\n\
    Real-time policies default to their maximum priority (99), as in the classic study. A \
    CPU-bound real-time run that could fill every CPU is refused while RT throttling \
    (/proc/sys/kernel/sched_rt_runtime_us) is off, unless --allow-rt-saturation is given.";

#[derive(Args, Debug, Clone)]
#[command(
    about = "Policy x workload matrix: N children of CPU-, I/O- or mixed-bound work per policy",
    after_help = EXAMPLES
)]
pub struct WorkloadArgs {
    #[command(flatten)]
    pub options: WorkloadOptions,

    /// Trials per policy x procs combination
    #[arg(long, value_name = "R", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub repeat: u32,

    /// Output format (`table` is the old name of text)
    #[arg(long, value_enum, default_value_t = WorkloadFormat::Text, conflicts_with = "json")]
    pub format: WorkloadFormat,

    /// The same as --format json
    #[arg(long)]
    pub json: bool,
}

impl WorkloadArgs {
    pub fn format(&self) -> WorkloadFormat {
        if self.json {
            WorkloadFormat::Json
        } else {
            self.format
        }
    }
}

impl FamilyFlags for Workload {
    type Args = WorkloadArgs;

    fn door(args: &WorkloadArgs) -> Result<Door<'static>> {
        super::live::door(args.options.to_specs()?, args.repeat, args.format())
    }
}

#[cfg(test)]
mod tests {
    use crate::cli::{Cli, CliCommand, FamilyCommand};
    use crate::families::shared::SpecSource;
    use clap::Parser;

    #[test]
    fn workload_flags_cross_policies_and_counts() {
        let cli =
            Cli::try_parse_from(["schedlab", "workload", "io", "--procs", "4,2", "--policy", "other,fifo"]).unwrap();
        let CliCommand::Family(FamilyCommand::Workload(args)) = cli.command else { panic!("not workload") };
        assert_eq!(args.options.to_specs().unwrap().len(), 4);
    }
}
