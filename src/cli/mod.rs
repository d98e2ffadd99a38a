//! Command-line definitions (clap derive). What to measure is the model's options
//! structs, flattened into each family's command, so a flag and a suite key are one
//! definition; this file adds what only the command line has (output formats, files,
//! the lab's commands). Nothing here makes a system call.

pub mod groups;

use crate::model::options::OnOff;
use crate::model::parse::{parse_budget, parse_duration, parse_max_repeat, parse_target_ci, parse_threshold};
use clap::{Args, Parser, Subcommand};
use groups::FamilyFlags;
pub use groups::OutputArgs;
use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

#[derive(Parser, Debug)]
#[command(
    name = "schedlab",
    version,
    about = "Measure the Linux scheduler and keep the evidence",
    long_about = "Measure the Linux scheduler and keep the evidence.\n\n\
        Exit status: 0 ok, 1 a comparison found a regression, 2 bad input or an environment \
        that cannot give what was asked (nothing measured), 3 a measurement failed, \
        128+N interrupted by signal N."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: CliCommand,
}

/// The family commands, made from the registry (`families!`): a subcommand a family, its
/// flags, help and examples in its folder's `flags.rs`.
macro_rules! family_commands {
    ([] $($m:ident: $T:ident,)+) => {
        #[derive(Subcommand, Debug)]
        pub enum FamilyCommand {
            $($T(<crate::families::$m::$T as FamilyFlags>::Args),)+
        }

        impl FamilyCommand {
            /// The command as the door the one front door (`commands::family`) runs.
            pub fn door(&self) -> crate::error::Result<crate::report::live::Door<'static>> {
                match self {
                    $(FamilyCommand::$T(args) => <crate::families::$m::$T as FamilyFlags>::door(args),)+
                }
            }
        }
    };
}
crate::families::families!(family_commands);

#[derive(Subcommand, Debug)]
pub enum CliCommand {
    /// The family commands (`ring`, `workload`, …), one a family of the registry.
    #[command(flatten)]
    Family(FamilyCommand),
    /// Run any command and report its wall time and every getrusage field
    #[command(after_help = RUSAGE_EXAMPLES)]
    Rusage(RusageArgs),
    /// The main job: run a suite (default: quick), store every trial, print the tables
    #[command(after_help = RUN_EXAMPLES)]
    Run(RunArgs),
    /// Interleaved A/B: a suite's trials in random alternating blocks of two machine states
    #[command(after_help = AB_EXAMPLES)]
    Ab(AbArgs),
    /// List the built-in suites, with what each measures and its estimated time here
    Suites(SuitesArgs),
    /// Show this machine's fingerprint (what every run records about where it ran)
    Machine(MachineArgs),
    /// List the runs in the results database
    List(ListArgs),
    /// Show a stored run: its machine, warnings and tables
    Show(ShowArgs),
    /// Delete a stored run and its trials
    Delete(DeleteArgs),
    /// Write stored runs as JSON (lossless, for import elsewhere) or CSV (one row per trial)
    Export(ExportArgs),
    /// Add runs to the results database: a JSON export (from any machine), an NCAR table, or a reference set
    #[command(after_help = IMPORT_EXAMPLES)]
    Import(ImportArgs),
    /// Copy finished runs into a shared database (by their UUID: a run already there is skipped)
    #[command(after_help = PUSH_EXAMPLES)]
    Push(PushArgs),
    /// Compare two stored runs: matched figures, ratios, 95% intervals, verdicts (exit 1 on a regression)
    #[command(after_help = COMPARE_EXAMPLES)]
    Compare(CompareArgs),
    /// Stored runs' tables, findings, SVG plots and self-contained HTML page; several runs are also overlaid
    #[command(after_help = REPORT_EXAMPLES)]
    Report(ReportArgs),
    /// History: each cell's figure over stored runs per machine, its change points, and whether the newest run regressed (exit 1)
    #[command(after_help = TREND_EXAMPLES)]
    Trend(TrendArgs),
    /// Print a shell completion script (bash, zsh, fish) to stdout
    #[command(after_help = COMPLETIONS_EXAMPLES)]
    Completions(CompletionsArgs),
    /// Print schedlab's manual page (roff), or a command's, or write them all into a directory
    #[command(after_help = MAN_EXAMPLES)]
    Man(ManArgs),
    /// (internal) Run one trial of a suite; the orchestrator starts it
    #[command(name = "__trial", hide = true)]
    Trial,
}

const RUN_EXAMPLES: &str = "Examples:\n  \
    schedlab run                          # the quick suite, about a minute\n  \
    schedlab run pipeline-1992 --dry-run  # the plan and its estimated time\n  \
    schedlab run policy-study --full --shuffle\n  \
    schedlab run my-suite.toml --db results.db\n  \
    schedlab run --resume 3               # finish an interrupted run\n  \
    schedlab run policy-study --target-ci 5% --budget 10m\n\n\
    Results go to ./schedlab.db unless --db or $SCHEDLAB_DB names another file. A suite file \
    has [[experiment]] tables: family = \"ring\" | \"workload\" | \"latency\", the command's flags as \
    keys (a list is an axis), repeat and warmup, and for adaptive repeats target_ci and max_repeat \
    (and a top-level budget); a question's compare, margin and ask (docs/run.md); `schedlab \
    suites --show quick` prints one to copy.";

const TREND_EXAMPLES: &str = "Examples:\n  \
    schedlab trend                                  # every machine, cell and headline figure\n  \
    schedlab trend --machine build-7 --suite quick --threshold 10%\n  \
    schedlab trend --figure p99_ns --format json\n  \
    schedlab trend --html history.html\n\n\
    A series is one cell (family and parameters) of one machine (by hostname), one point per \
    run: the median of its ok repeats, in the order the runs started. Runs of `schedlab ab` \
    sessions are left out (their B side ran in a changed state). Change points come from \
    E-Divisive with means, each kept when a t-test between its two sides gives p < 0.001 (times the candidate splits), \
    or p < 0.05 for a shift of 1.5x or more either way, with at least 3 runs a side; each names the run where the new level began, its size and \
    the fingerprint fields (kernel, tool version, ...) that changed at that run. The newest run \
    is also tested against the runs since the last change point. Exit status 1 when it starts \
    a regression: significant (Holm over all series, p < 0.05) and slower by more than \
    --threshold; for CI, after each new run.";

const COMPLETIONS_EXAMPLES: &str = "Examples:\n  \
    schedlab completions bash > /etc/bash_completion.d/schedlab\n  \
    schedlab completions zsh > \"${fpath[1]}/_schedlab\"\n  \
    schedlab completions fish > ~/.config/fish/completions/schedlab.fish";

const MAN_EXAMPLES: &str = "Examples:\n  \
    schedlab man | man -l -                          # read it now\n  \
    schedlab man ring > schedlab-ring.1              # one command's page\n  \
    schedlab man --dir /usr/local/share/man/man1     # every page; then: man schedlab-trend";

const AB_EXAMPLES: &str = "Examples:\n  \
    schedlab ab quick --a-setup true --b-setup true          # an A/A: how quiet is this machine?\n  \
    schedlab ab my-suite.toml --a-setup 'cpupower frequency-set -g powersave' \\\n      \
    --b-setup 'cpupower frequency-set -g performance' --blocks 8\n  \
    schedlab ab quick --a-setup 'sysctl -w kernel.sched_autogroup_enabled=0' \\\n      \
    --b-setup 'sysctl -w kernel.sched_autogroup_enabled=1' --seed 7\n\n\
    Each side runs every trial of the suite. The session is a sequence of block pairs; a \
    coin flip decides which side goes first in each pair, and a block runs its share of \
    the repeats (with --blocks equal to the suite's repeat: every cell once) in random \
    order. Before each block the side's setup runs (`sh -c`, output to stderr); after it \
    the side's cleanup, also when a setup fails, a trial stops the session, or on Ctrl-C \
    or SIGTERM. The two sides are stored as two runs linked to each other, then compared \
    as `schedlab compare` does, without a drift term (both sides saw the same drift). Exit \
    status: 0 no regression, 1 a regression of B against A, 2 bad input or a setup or \
    cleanup that failed, 3 a trial failed.";

const COMPARE_EXAMPLES: &str = "Examples:\n  \
    schedlab compare 3 4                      # run 4 against run 3\n  \
    schedlab compare 3 latest --threshold 10% --format markdown\n  \
    schedlab compare 3 4 --format json --html cmp.html\n\n\
    Trials match by family and parameters, across machines too (import the other run first). \
    B/A is the ratio of medians; the verdict comes from a Mann-Whitney test, its p adjusted by \
    Holm's method over all figures tested (p Holm < 0.05), and a bootstrap interval that \
    excludes 1, and needs at least 4 ok repeats on each side. Runs made separately must also \
    clear a drift band (the larger of the shift each run shows between the first and second \
    half of its repeats, and the spread of the same cells over other runs on this machine); \
    inside it the verdict is \"cannot separate from drift\". The two runs of one \
    `schedlab ab` session need no drift band. Exit status 1 when a figure of B is slower than \
    A by more than --threshold (and the drift band) over its whole interval.";

const IMPORT_EXAMPLES: &str = "Examples:\n  \
    schedlab import run3.json                          # runs exported elsewhere\n  \
    schedlab import --reference ncar-1992              # the 1992 report's nine machines\n  \
    schedlab import --reference csci3753-2014          # the 2014 policy study's raw data\n  \
    schedlab import --reference hrtimers-2007          # the 2007 hrtimers table, two kernels\n  \
    schedlab import --ncar sun4.txt --machine \"Sun-4/280, SunOS 4.1.1\"\n  \
    schedlab import --ncar mine.txt --machine lab-box --laps 2000\n\n\
    An NCAR table is a header line naming its columns, then one row of seconds per process count, \
    tab- or space-separated; text before the header and after a blank line that ends the table \
    is skipped. Its figures are stored as a ring run marked as imported (never as measured here), \
    and importing the same figures again stores nothing. A reference set is stored the same way, \
    each run marked as imported; importing it again stores nothing.";

const PUSH_EXAMPLES: &str = "Examples:\n  \
    schedlab push latest --to postgresql://lab@db.example.org/schedlab\n  \
    schedlab push 3 4 5 --db results.db --to postgresql://lab@%2Fvar%2Frun%2Fpostgresql/schedlab\n\n\
    Each run is copied whole, with its trials, in one transaction; a run whose UUID the target \
    already holds is skipped, so pushing again changes nothing. A run still running, or interrupted \
    and resumable, is skipped until it finishes (`schedlab run --resume RUN`). The password can come from \
    $PGPASSWORD instead of the URL.";

const REPORT_EXAMPLES: &str = "Examples:\n  \
    schedlab report latest\n  \
    schedlab report 3 --format markdown > run3.md\n  \
    schedlab report 3 --svg plots/ --html run3.html\n  \
    schedlab import --reference ncar-1992 && schedlab report 1 2 3 4 5 6 7 8 9 latest --html vs-1992.html\n  \
    schedlab report latest --against csci3753-2014      # workload medians beside the 2014 study's\n  \
    schedlab report latest --against hrtimers-2007 --html vs-2007.html\n\n\
    With several runs, each run is reported in turn, then the ring runs are overlaid: CPU time per \
    hop (median over repeats) against processes, one line per run, each run's knees marked, on a \
    log scale when the runs differ by more than a factor of 20. With --against, the run's report \
    ends with it set beside a seed document's figures (built in; nothing to import), in the \
    document's own form.";

pub use crate::report::exporter::Format as TableFormat;

#[derive(Args, Debug, Clone)]
pub struct CompareArgs {
    /// The baseline run (id or `latest`)
    #[arg(value_name = "RUN_A")]
    pub run_a: String,
    /// The run compared with it
    #[arg(value_name = "RUN_B")]
    pub run_b: String,
    #[command(flatten)]
    pub db: DbArg,
    #[command(flatten)]
    pub output: ComparisonOutput,
}

/// How a comparison decides and is printed: shared by `compare` and `ab`.
#[derive(Args, Debug, Clone)]
pub struct ComparisonOutput {
    /// How much slower (B/A − 1) counts as a regression, e.g. 5% or 0.05
    #[arg(long, value_name = "PCT", default_value = "5%", value_parser = parse_threshold)]
    pub threshold: f64,
    /// How the comparison is printed
    #[arg(long, value_enum, default_value_t = TableFormat::Text)]
    pub format: TableFormat,
    /// Also write the comparison as a self-contained HTML page
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
}

#[derive(Args, Debug, Clone)]
pub struct AbArgs {
    /// A built-in suite (see `schedlab suites`) or a suite file (.toml)
    #[arg(value_name = "SUITE|FILE")]
    pub suite: String,

    /// Shell command (`sh -c`) that puts the machine in state A; run before every A block
    #[arg(long, value_name = "CMD", value_parser = parse_command, required_unless_present = "a_set")]
    pub a_setup: Option<String>,

    /// Shell command that puts the machine in state B; run before every B block
    #[arg(long, value_name = "CMD", value_parser = parse_command, required_unless_present = "b_set")]
    pub b_setup: Option<String>,

    /// A setting of side A, switched before every A block, checked, recorded and switched
    /// back after it (repeatable; a line of TOML, as a suite writes it):
    /// 'sysctl.kernel.sched_rt_runtime_us = 980000', 'cgroup = { max = "50ms/100ms" }',
    /// 'cgroup = { weight = 100 }', 'scx = "rusty"', 'governor = "performance"', 'smt = "off"'
    #[arg(long, value_name = "SETTING")]
    pub a_set: Vec<String>,

    /// A setting of side B (as --a-set)
    #[arg(long, value_name = "SETTING")]
    pub b_set: Vec<String>,

    /// Shell command run after every A block, also when the session stops early
    #[arg(long, value_name = "CMD", value_parser = parse_command)]
    pub a_cleanup: Option<String>,

    /// Shell command run after every B block, also when the session stops early
    #[arg(long, value_name = "CMD", value_parser = parse_command)]
    pub b_cleanup: Option<String>,

    /// Blocks per side (2 or more); each cell's repeats are spread evenly over them
    /// [default: the suite's largest repeat, so a block runs every cell once]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(2..=10_000))]
    pub blocks: Option<u32>,

    /// Seed of the block order and of the trial order in each block [default: random, printed and stored]
    #[arg(long, value_name = "S")]
    pub seed: Option<u64>,

    /// After the planned blocks, add block pairs of the cells whose figures are still
    /// undecided (neither a difference nor equivalence within ±5 %, by the paired sign test,
    /// Holm over the figures) until all are decided or this much time, the planned blocks
    /// included, is spent [default: no blocks added]
    #[arg(long, value_name = "TIME", value_parser = parse_budget, allow_hyphen_values = true)]
    pub budget: Option<Duration>,

    /// Use the suite's full-size parameters (its [experiment.full] tables)
    #[arg(long)]
    pub full: bool,

    #[command(flatten)]
    pub output: ComparisonOutput,

    /// Stop a trial that runs longer than this and record it as timed out (it must exceed
    /// every trial's own duration)
    #[arg(long, value_name = "TIME", default_value = "10m", value_parser = parse_duration, allow_hyphen_values = true)]
    pub trial_timeout: Duration,

    /// Probe this machine's noise for about 3 s before the session (steal per CPU, an idle
    /// wakeup p99, the 2-member ring's cost, a busy loop's share of a CPU); stored with the
    /// fingerprint [default: on, or
    /// $SCHEDLAB_NOISE_PROBE]
    #[arg(long, value_enum, value_name = "on|off", env = "SCHEDLAB_NOISE_PROBE", hide_env = true)]
    pub noise_probe: Option<OnOff>,

    #[command(flatten)]
    pub db: DbArg,
}

/// A setup or cleanup command: any text but an empty one.
fn parse_command(text: &str) -> std::result::Result<String, String> {
    if text.trim().is_empty() {
        return Err("an empty command: give a shell command (use `true` for one that does nothing)".into());
    }
    Ok(text.to_string())
}

#[derive(Args, Debug, Clone)]
pub struct ReportArgs {
    /// Run ids or `latest`; with several, each run's report and one overlay of their rings
    #[arg(value_name = "RUN", default_value = "latest")]
    pub runs: Vec<String>,
    #[command(flatten)]
    pub db: DbArg,
    /// How the tables are printed
    #[arg(long, value_enum, default_value_t = TableFormat::Text)]
    pub format: TableFormat,
    /// Write the plots as SVG files into DIR (made if missing); with several runs, the
    /// overlay as overlay.svg and each run's plots named runN-…
    #[arg(long, value_name = "DIR")]
    pub svg: Option<PathBuf>,
    /// Write one self-contained HTML page (tables, plots, machine, findings; the overlay
    /// first when there are several runs)
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    // "Set the run beside a seed document's own figures, in its own form: csci3753-2014
    // (workload trials) or hrtimers-2007 (latency trials); one run only", from the seeds.
    #[arg(long, value_name = "NAME", value_parser = against_sets(), help = against_help())]
    pub against: Option<String>,
}

/// The seeds `report --against` takes (those whose file declares a form), each with what it
/// sets beside what.
fn against_sets() -> clap::builder::PossibleValuesParser {
    use clap::builder::PossibleValue;
    clap::builder::PossibleValuesParser::new(
        crate::report::against::against_seeds()
            .into_iter()
            .map(|(seed, against)| PossibleValue::new(seed.name()).help(against.help)),
    )
}

fn against_help() -> String {
    let names: Vec<String> = crate::report::against::against_seeds()
        .iter()
        .map(|(seed, against)| format!("{} ({} trials)", seed.name(), against.form.family()))
        .collect();
    format!("Set the run beside a seed document's own figures, in its own form: {}; one run only", one_of(&names))
}

/// "a, b or c".
fn one_of(names: &[String]) -> String {
    match names.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        Some((last, _)) => last.clone(),
        None => String::new(),
    }
}

#[derive(Args, Debug, Clone)]
pub struct TrendArgs {
    /// Only runs made on this machine (its hostname, as `schedlab list` shows it)
    #[arg(long, value_name = "HOST")]
    pub machine: Option<String>,
    /// Only runs of this suite (its name, as `schedlab list` shows it)
    #[arg(long, value_name = "NAME")]
    pub suite: Option<String>,
    /// Which figure to follow: a key such as ns_per_switch, ns_per_hop, wall_s, nivcsw,
    /// p50_ns, p99_ns, max_ns, or `all` [default: each family's headline figure]
    #[arg(long, value_name = "KEY")]
    pub figure: Option<String>,
    /// How much slower the newest run must be (against the runs since the last change
    /// point) to count as a regression, e.g. 5% or 0.05
    #[arg(long, value_name = "PCT", default_value = "5%", value_parser = parse_threshold)]
    pub threshold: f64,
    /// How the table is printed (json: one document with every point and test)
    #[arg(long, value_enum, default_value_t = TableFormat::Text)]
    pub format: TableFormat,
    /// Also write the history as a self-contained HTML page with a plot per series
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    #[command(flatten)]
    pub db: DbArg,
}

#[derive(Args, Debug, Clone)]
pub struct CompletionsArgs {
    /// The shell to complete for
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

#[derive(Args, Debug, Clone)]
pub struct ManArgs {
    /// A command whose page to print (ring, run, trend, ...) [default: schedlab's own]
    #[arg(value_name = "COMMAND", conflicts_with = "dir")]
    pub command: Option<String>,
    /// Write every page (schedlab.1, schedlab-ring.1, ...) into this existing directory
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

/// Which results database: `--db FILE|URL`, else $SCHEDLAB_DB, else ./schedlab.db.
#[derive(Args, Debug, Clone)]
pub struct DbArg {
    /// Results database: a SQLite file, or a PostgreSQL server as
    /// postgresql://USER[:PASSWORD]@HOST[:PORT]/DB [default: $SCHEDLAB_DB, else ./schedlab.db]
    #[arg(long, value_name = "FILE|URL")]
    pub db: Option<PathBuf>,
}

#[derive(Args, Debug, Clone)]
pub struct PushArgs {
    /// Run ids to copy (or `latest`)
    #[arg(value_name = "RUN", required = true)]
    pub runs: Vec<String>,
    /// The shared database to copy them into: postgresql://USER[:PASSWORD]@HOST[:PORT]/DB
    /// (or another SQLite file); made schedlab's if empty
    #[arg(long, value_name = "URL", required = true)]
    pub to: PathBuf,
    #[command(flatten)]
    pub db: DbArg,
}

#[derive(Args, Debug, Clone)]
pub struct SuitesArgs {
    /// Print this built-in suite's TOML (to copy and edit)
    #[arg(long, value_name = "NAME")]
    pub show: Option<String>,
}

#[derive(Args, Debug, Clone)]
pub struct MachineArgs {
    // json: one object; csv, markdown: a field/value table
    #[command(flatten)]
    pub output: OutputArgs,
}

#[derive(Args, Debug, Clone)]
pub struct ListArgs {
    #[command(flatten)]
    pub db: DbArg,
    // json: one object per run per line; csv, markdown: the table
    #[command(flatten)]
    pub output: OutputArgs,
}

#[derive(Args, Debug, Clone)]
pub struct ShowArgs {
    /// Run id (as `schedlab list` shows it) or `latest`
    #[arg(value_name = "RUN", default_value = "latest")]
    pub run: String,
    #[command(flatten)]
    pub db: DbArg,
    /// Also print the machine fingerprint in full (text only)
    #[arg(long)]
    pub machine: bool,
    /// How the run is printed: text (the header and tables), or as `report RUN --format`
    /// prints it (csv, markdown: the tables and findings; json: the numbers)
    #[arg(long, value_enum, default_value_t = TableFormat::Text)]
    pub format: TableFormat,
}

#[derive(Args, Debug, Clone)]
pub struct DeleteArgs {
    /// Run ids to delete
    #[arg(value_name = "RUN", required = true)]
    pub runs: Vec<String>,
    #[command(flatten)]
    pub db: DbArg,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ExportFormat {
    Json,
    Csv,
}

#[derive(Args, Debug, Clone)]
pub struct ExportArgs {
    /// Run ids to export (or `latest`)
    #[arg(value_name = "RUN", required = true)]
    pub runs: Vec<String>,
    #[command(flatten)]
    pub db: DbArg,
    #[arg(long, value_enum, default_value_t = ExportFormat::Json)]
    pub format: ExportFormat,
    /// Write to FILE instead of stdout
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

#[derive(Args, Debug, Clone)]
#[command(group(clap::ArgGroup::new("source").required(true).args(["file", "ncar", "reference"])))]
pub struct ImportArgs {
    /// A file written by `schedlab export --format json`
    #[arg(value_name = "FILE")]
    pub file: Option<PathBuf>,
    /// A table in the 1992 NCAR report's format (Processes, Real, CPU, User, System and
    /// optionally Projected Seconds), stored as a ring run of the --machine named
    #[arg(long, value_name = "FILE", requires = "machine")]
    pub ncar: Option<PathBuf>,
    /// The machine the --ncar table was measured on, as `list` and reports will name it
    #[arg(long, value_name = "NAME", requires = "ncar")]
    pub machine: Option<String>,
    /// Laps per ring in the --ncar table [default: 1000000, the report's]
    #[arg(long, value_name = "N", requires = "ncar", value_parser = clap::value_parser!(u64).range(1..))]
    pub laps: Option<u64>,
    // "A reference set built into schedlab, as published: ncar-1992, csci3753-2014 or
    // hrtimers-2007", from the seeds.
    #[arg(long, value_name = "NAME", value_parser = reference_sets(), help = reference_help())]
    pub reference: Option<String>,
    #[command(flatten)]
    pub db: DbArg,
}

/// The reference sets `import --reference` takes, each with what it holds: every seed of
/// `store::seeds::SEEDS`.
fn reference_sets() -> clap::builder::PossibleValuesParser {
    use clap::builder::PossibleValue;
    clap::builder::PossibleValuesParser::new(
        crate::store::seeds::SEEDS.iter().map(|seed| PossibleValue::new(seed.name()).help(seed.holds())),
    )
}

fn reference_help() -> String {
    let names: Vec<String> = crate::store::seeds::names().into_iter().map(String::from).collect();
    format!("A reference set built into schedlab, as published: {}", one_of(&names))
}

const RUSAGE_EXAMPLES: &str = "Examples:\n  \
    schedlab rusage -- make -j4\n  \
    schedlab rusage --json -o usage.json -- ./simulate --steps 100\n\n\
    The report goes to stderr (or --output), so the command's own output stays clean. \
    schedlab exits with the command's status (128+N if a signal N killed it, 127 if it \
    could not be started).";

#[derive(Args, Debug, Clone)]
pub struct RusageArgs {
    // json: one object; csv, markdown: a field/value table
    #[command(flatten)]
    pub print: OutputArgs,

    /// Write the report to FILE instead of stderr
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// The command and its arguments (after --)
    #[arg(required = true, trailing_var_arg = true, allow_hyphen_values = true, value_name = "CMD")]
    pub command: Vec<OsString>,
}

#[derive(Args, Debug, Clone)]
pub struct RunArgs {
    /// A built-in suite (see `schedlab suites`) or a suite file (.toml) [default: quick]
    #[arg(value_name = "SUITE|FILE")]
    pub suite: Option<String>,

    /// Print the plan and its estimated time; run nothing, store nothing
    #[arg(long)]
    pub dry_run: bool,

    /// Run the trials in random order, to spread slow drift over every configuration
    #[arg(long)]
    pub shuffle: bool,

    /// Seed of --shuffle's order [default: random, printed and stored]
    #[arg(long, value_name = "N", requires = "shuffle")]
    pub seed: Option<u64>,

    /// Use the suite's full-size parameters (its [experiment.full] tables)
    #[arg(long)]
    pub full: bool,

    /// Continue an interrupted run: run only the trials it has not stored
    #[arg(long, value_name = "RUN", conflicts_with_all = ["suite", "full", "shuffle", "seed"])]
    pub resume: Option<String>,

    /// Stop a trial that runs longer than this and record it as timed out (it must exceed
    /// every trial's own duration)
    #[arg(long, value_name = "TIME", default_value = "10m", value_parser = parse_duration, allow_hyphen_values = true)]
    pub trial_timeout: Duration,

    /// Repeat every cell until the 95% interval of its headline median is within this
    /// (e.g. 5%: ±5% of the median; above 0 and below 100%); the suite's repeats become the minimum
    #[arg(long, value_name = "PERCENT", value_parser = parse_target_ci,
          conflicts_with = "resume", allow_hyphen_values = true)]
    pub target_ci: Option<f64>,

    /// With adaptive repeats: the most trials of one cell, 1 to 10000 [default: the suite's max_repeat, else 30]
    #[arg(long, value_name = "N", value_parser = parse_max_repeat, conflicts_with = "resume", allow_hyphen_values = true)]
    pub max_repeat: Option<u32>,

    /// With adaptive repeats: the run's time for its trials, planned minimum included, so at
    /// least the minimum's estimate [default: the suite's budget, else 3x the planned estimate, at least 1 min]
    #[arg(long, value_name = "TIME", value_parser = parse_budget, conflicts_with = "resume", allow_hyphen_values = true)]
    pub budget: Option<Duration>,

    /// Probe this machine's noise for about 3 s before the trials: steal per CPU, an idle
    /// SCHED_OTHER thread's wakeup p99 on the trials' CPUs, the 2-member ring's cost per hop,
    /// the share of the busiest of those CPUs a busy loop gets.
    /// Stored with the fingerprint, printed in the run's header, and set beside another run's
    /// by compare, trend and ab [default: on, or $SCHEDLAB_NOISE_PROBE]
    #[arg(long, value_enum, value_name = "on|off", env = "SCHEDLAB_NOISE_PROBE", hide_env = true)]
    pub noise_probe: Option<OnOff>,

    #[command(flatten)]
    pub db: DbArg,
}

// Each family command's flags as the door the one front door (`commands::family`) runs.

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conflicting_and_bad_flags_are_refused_by_clap() {
        assert!(Cli::try_parse_from(["schedlab", "ring", "--laps", "5", "--duration", "1s"]).is_err());
        assert!(Cli::try_parse_from(["schedlab", "workload", "cpu", "--procs", "0"]).is_err());
        assert!(Cli::try_parse_from(["schedlab", "workload", "gpu"]).is_err());
        assert!(Cli::try_parse_from(["schedlab", "workload"]).is_err(), "the kind is required");
        assert!(Cli::try_parse_from(["schedlab", "latency", "--policy", "fifo", "--compare-policies", "other,fifo"])
            .is_err());
    }
}
