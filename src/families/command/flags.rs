//! `schedlab command`'s flags: the program's options, its blocks and how it prints. The
//! command's help and examples are here too; the registry makes it a subcommand
//! (`cli::FamilyCommand`).

use clap::Args;
use crate::cli::groups::{BlockArgs, FamilyFlags, OutputArgs};
use crate::error::Result;
use crate::families::shared::SpecSource;
use crate::report::live::Door;
use super::Command;
use super::model::CommandOptions;

const EXAMPLES: &str = "Examples:\n  \
    schedlab command --policy other,fifo --repeat 8 -- hackbench -g 2 -l 100\n  \
    schedlab command --policy other,batch --cpus 0 --repeat 10 -- make -j2\n  \
    schedlab command --policy other,fifo --repeat 12 --figure 'p99_us,unit=us,better=lower=regex:99\\.0th: +(\\d+)' -- schbench -r 5\n  \
    schedlab command --repeat 5 --figure 'rps,better=higher=json:/rps' --json -- ./loadtest\n\n\
    Each repeat is a block: every policy runs once, in random order. Figures are of the whole process tree; \
    cpu wait s comes from a cgroup v2 group of the command's own (root). A non-zero exit, a declared figure \
    missing from the output, or a timeout fails that run (exit 3); whatever the command leaves running is killed.";

#[derive(Args, Debug, Clone)]
#[command(
    about = "Your own program as a family: run it under each policy (nice, CPUs, load), in blocks, and say which is best",
    after_help = EXAMPLES
)]
pub struct CommandArgs {
    #[command(flatten)]
    pub options: CommandOptions,

    #[command(flatten)]
    pub blocks: BlockArgs,

    #[command(flatten)]
    pub output: OutputArgs,
}

impl FamilyFlags for Command {
    type Args = CommandArgs;

    fn door(args: &CommandArgs) -> Result<Door<'static>> {
        let (blocks, seed) = (args.blocks.repeat, args.blocks.seed());
        super::live::door(args.options.to_specs()?, args.output.format(), blocks, seed)
    }
}
