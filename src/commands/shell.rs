//! `schedlab completions SHELL` and `schedlab man`: generated from the same clap
//! definitions as the parser, so they can never disagree with it.

use crate::cli::{Cli, ManArgs};
use crate::error::{describe_io, Error, Result};
use clap::CommandFactory;
use std::io::Write;

/// Write generated text to stdout; a closed pipe ends quietly, like `emit`.
fn write_out(bytes: &[u8]) -> Result<()> {
    let mut out = std::io::stdout().lock();
    match out.write_all(bytes).and_then(|_| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Err(Error::Interrupted(libc::SIGPIPE)),
        Err(e) => Err(Error::os("writing to stdout", e)),
    }
}

pub fn completions(shell: clap_complete::Shell) -> Result<()> {
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "schedlab", &mut script);
    write_out(&script)
}

/// One page per command, as git does: schedlab(1) lists the commands, each command's
/// page (schedlab-ring(1), ...) has its options and examples.
pub fn man(args: &ManArgs) -> Result<()> {
    let mut top = Cli::command().disable_help_subcommand(true);
    top.build();
    if let Some(dir) = &args.dir {
        if !dir.is_dir() {
            return Err(Error::usage(format!("{} is not a directory: make it first, or name another", dir.display())));
        }
        clap_mangen::generate_to(top, dir).map_err(|e| {
            Error::env(format!("cannot write the manual pages into {}: {}", dir.display(), describe_io(&e)))
        })?;
        eprintln!("schedlab: wrote the manual pages into {}", dir.display());
        return Ok(());
    }
    let command = match &args.command {
        None => top,
        Some(name) => {
            let found = top.get_subcommands().find(|s| s.get_name() == name && !s.is_hide_set()).cloned();
            found.ok_or_else(|| {
                let names: Vec<&str> =
                    top.get_subcommands().filter(|s| !s.is_hide_set()).map(|s| s.get_name()).collect();
                Error::usage(format!("no command '{name}': one of {}", names.join(", ")))
            })?
        }
    };
    let mut page = Vec::new();
    clap_mangen::Man::new(command).render(&mut page).map_err(|e| Error::os("rendering the manual page", e))?;
    write_out(&page)
}
