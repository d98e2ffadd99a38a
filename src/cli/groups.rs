//! The flag groups every family command shares (how it prints, its blocks), and what a
//! family's own flags (`families/<name>/flags.rs`) give the command line.

use crate::error::Result;
use crate::report::exporter::Format as TableFormat;
use crate::report::live::Door;
use clap::Args;

/// A family's command-line flags: the type the registry makes its subcommand of, with its
/// help and examples, and the door the one front door runs.
pub trait FamilyFlags {
    type Args: clap::Args + std::fmt::Debug + Clone;

    fn door(args: &Self::Args) -> Result<Door<'static>>;
}

/// How a command prints its results: one choice, named alike on every command that
/// prints results (`--json` stays as the short way to say `--format json`).
#[derive(Args, Debug, Clone)]
pub struct OutputArgs {
    /// How the results are printed (csv and markdown: the tables `schedlab show` prints)
    #[arg(long, value_enum, default_value_t = TableFormat::Text)]
    pub format: TableFormat,
    /// The same as --format json
    #[arg(long, conflicts_with = "format")]
    pub json: bool,
}

impl OutputArgs {
    pub fn format(&self) -> TableFormat {
        if self.json {
            TableFormat::Json
        } else {
            self.format
        }
    }
}

/// How a family command that runs in blocks (`command`, `taskset`) repeats and orders them.
#[derive(Args, Debug, Clone)]
pub struct BlockArgs {
    /// Blocks: each runs every policy once, in random order
    #[arg(long, value_name = "R", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub repeat: u32,

    /// Seed of the order within blocks [default: from the clock]
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,
}

impl BlockArgs {
    /// The seed asked for, or one from the clock and this process.
    pub fn seed(&self) -> u64 {
        self.seed.unwrap_or_else(|| crate::sys::clock::monotonic_ns() ^ u64::from(std::process::id()))
    }
}
