//! `schedlab ring`'s flags: the ring's options and how it prints. The command's help and
//! examples are here too; the registry makes it a subcommand (`cli::FamilyCommand`).

use clap::Args;
use crate::cli::groups::{FamilyFlags, OutputArgs};
use crate::error::Result;
use crate::families::shared::SpecSource;
use crate::report::live::Door;
use super::Ring;
use super::model::RingOptions;

const EXAMPLES: &str = "Examples:\n  \
    schedlab ring                                  # the NCAR sweep, 2..64 processes, one CPU\n  \
    schedlab ring --procs 2 --laps 100000 --pin same\n  \
    schedlab ring --procs 2..=16 --mode thread --ipc futex --json\n  \
    schedlab ring --procs 1000 --duration 5s --pin spread\n  \
    schedlab ring --procs 8 --policy fifo --prio 80 --work-kb 64";

#[derive(Args, Debug, Clone)]
#[command(
    about = "Context-switch ring: N tasks pass a token round a circle (NCAR `pipeline`, lat_ctx)",
    after_help = EXAMPLES
)]
pub struct RingArgs {
    #[command(flatten)]
    pub options: RingOptions,

    // text: the NCAR table, row by row; json: one object per configuration per line;
    // csv, markdown: the table `schedlab show` prints
    #[command(flatten)]
    pub output: OutputArgs,
}

impl FamilyFlags for Ring {
    type Args = RingArgs;

    fn door(args: &RingArgs) -> Result<Door<'static>> {
        super::live::door(args.options.to_specs()?, args.output.format())
    }
}

#[cfg(test)]
mod tests {
    use crate::cli::{Cli, CliCommand, FamilyCommand};
    use crate::families::ring::model::{Pin, RingLength, DEFAULT_LAPS};
    use crate::families::shared::SpecSource;
    use crate::model::Policy;
    use clap::Parser;

    #[test]
    fn ring_flags_become_specs() {
        let cli = Cli::try_parse_from(["schedlab", "ring", "--procs", "8,2", "--policy", "rr"]).unwrap();
        let CliCommand::Family(FamilyCommand::Ring(args)) = cli.command else { panic!("not ring") };
        let specs = args.options.to_specs().unwrap();
        assert_eq!(specs.iter().map(|s| s.procs).collect::<Vec<_>>(), vec![2, 8]);
        assert_eq!(specs[0].length, RingLength::Laps(DEFAULT_LAPS));
        assert_eq!((specs[0].prio, specs[0].pin, specs[0].policy), (50, Pin::Same, Policy::Rr));
    }
}
