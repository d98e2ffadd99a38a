use clap::Parser;
use schedlab::Cli;

fn main() {
    // A bug must not look like a measurement: say so plainly, without a backtrace.
    std::panic::set_hook(Box::new(|info| {
        eprintln!("schedlab: internal error: {info}; please report it");
    }));
    let cli = Cli::parse();
    let code = match schedlab::dispatch(cli) {
        Ok(code) => code,
        Err(schedlab::error::Error::Interrupted(libc::SIGPIPE)) => 141,
        Err(e) => {
            eprintln!("schedlab: {e}");
            e.exit_code()
        }
    };
    std::process::exit(code);
}
