//! `schedlab server`'s flags: the server's options, its blocks and how it prints. The
//! command's help and examples are here too; the registry makes it a subcommand
//! (`cli::FamilyCommand`).

use clap::Args;
use crate::cli::groups::{BlockArgs, FamilyFlags, OutputArgs};
use crate::error::Result;
use crate::families::shared::SpecSource;
use crate::report::live::Door;
use super::Server;

const EXAMPLES: &str = "Examples:
  schedlab server --rps 200 --work 1ms --think 1ms --policy other,fifo --repeat 5
  schedlab server --threads 2 --workers 4 --target-util 80% --lock --json
  schedlab server --rps 500 --cpus 1 --load cpu --policy other,batch";

#[derive(Args, Debug, Clone)]
#[command(
    about = "Request latency at a load (schbench's shape): message threads wake workers at a fixed rate; per policy, wakeup and request percentiles",
    after_help = EXAMPLES
)]
pub struct ServerArgs {
    #[command(flatten)]
    pub options: super::model::ServerOptions,

    #[command(flatten)]
    pub blocks: BlockArgs,

    // text: a few lines per trial, then the cells' table and findings;
    // json: one object per trial per line
    #[command(flatten)]
    pub output: OutputArgs,
}

impl FamilyFlags for Server {
    type Args = ServerArgs;

    fn door(args: &ServerArgs) -> Result<Door<'static>> {
        let (blocks, seed) = (args.blocks.repeat, args.blocks.seed());
        super::live::door(args.options.to_specs()?, args.output.format(), blocks, seed)
    }
}
