//! `schedlab ab`: an interleaved A/B session. Two states of the machine (a sysctl, a CPU
//! governor, a sched_ext scheduler on or off, a background service) are measured in one
//! session, in alternating blocks whose order is randomized, so whatever drifts on a
//! shared machine meanwhile (other jobs, caches, clocks, temperature) falls on both sides
//! alike: the randomized complete block design of experimental statistics, with the
//! session's stretches of time as the blocks.
//!
//! The plan: each side runs every trial of the suite once, spread over `blocks` blocks
//! per side. Repeat k of an experiment with R repeats goes to block ⌊(k−1)·blocks/R⌋,
//! so with `blocks` = R (the default is the suite's largest repeat) a block runs every
//! cell once, and each cell's values on a side come one from each block, spread across
//! the whole session. Blocks go in pairs; for each pair a coin flip (from `--seed`)
//! decides whether A or B goes first, and each block runs its trials in its own random
//! order. The suite's warm-ups run at the start of each side's first block.
//!
//! A side may also name typed settings (`--a-set`, `model::settings`): switched after its
//! setup and back before its cleanup, each read back, recorded in the side's options and
//! fingerprint, and restored on every way out (`sys::settings`).
//!
//! Before each block the side's setup command runs (`sh -c`, SCHED_OTHER, its output on
//! our stderr, not waited on beyond its own exit, so it may leave a background process
//! running); after the block, the side's cleanup, whatever happened: a failed setup, a
//! trial that stopped the session, Ctrl-C, SIGTERM. A cleanup runs in its own process
//! group with signals held, so a second Ctrl-C cannot cut it short; only SIGKILL of
//! schedlab itself leaves it unrun. A setup or cleanup that fails stops the session
//! (exit 2): the machine's state is then unknown.
//!
//! With `--budget`, the planned blocks are followed by extra block pairs (a coin for which
//! side goes first, setups and cleanups as before) of the cells whose figures are still
//! undecided — neither a difference nor equivalence within ±5 % by the paired sign test
//! that the comparison applies, Holm over both claims of every figure — until every
//! figure is decided or the next pair would not fit the budget. The test is anytime-valid,
//! so adding blocks until decided keeps its error rate.
//!
//! Each side is stored as a run of its own, each naming the other as its pair in its
//! options (`{"ab": {"side", "pair", "blocks", "seed", "setup", "cleanup", "order"}}`), and
//! the pair is compared as `schedlab compare` does, in its interleaved mode (no drift
//! term). A session that stops early keeps what it stored, both runs marked
//! "interrupted" (they cannot be resumed: `run --resume` would measure without the
//! setups); when nothing was stored, both runs are removed.

use crate::analysis::random::SplitMix64;
use crate::cli::AbArgs;
use crate::commands::{compare as compare_cmd, run};
use crate::decide::compare::{self, Verdict};
use crate::error::{Error, Result};
use crate::exec::family::Extras;
use crate::exec::pipeline::{Pipeline, StoreSink};
use crate::exec::runner::Orchestrator;
use crate::exec::suite::{self, format_estimate, Suite};
use crate::model::run::{AbSide, RunOptions};
use crate::model::settings::Settings;
use crate::store::{new_uuid, now_utc, Access, Location, RunRecord, RunStatus, Store};
use crate::sys::machine::{Machine, StoredMachine};
use crate::sys::process;
use crate::sys::rusage::ExitKind;
use std::time::Duration;

/// A cleanup that has not finished in this long is stopped, and the session with it.
const CLEANUP_TIMEOUT: Duration = Duration::from_secs(300);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    A,
    B,
}

impl Side {
    fn index(self) -> usize {
        match self {
            Side::A => 0,
            Side::B => 1,
        }
    }

    fn other(self) -> Side {
        match self {
            Side::A => Side::B,
            Side::B => Side::A,
        }
    }

    /// "A" or "B".
    pub fn label(self) -> &'static str {
        match self {
            Side::A => "A",
            Side::B => "B",
        }
    }
}

/// One side's pass over its share of the suite's trials.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Block {
    pub side: Side,
    /// 0-based; the block pair it belongs to.
    pub pair: usize,
    /// Indices into the suite's trials, in the order they run.
    pub trials: Vec<usize>,
}

/// The suite's largest repeat (at least 2): one block per repeat, every cell once a block.
pub fn default_blocks(suite: &Suite) -> u32 {
    suite.experiments.iter().map(|e| e.repeat).max().unwrap_or(1).max(2)
}

/// The blocks of a session, in the order they run (see the module doc).
pub fn plan(suite: &Suite, blocks: u32, seed: u64) -> Vec<Block> {
    let mut rng = SplitMix64::new(seed);
    let block_of = |i: usize| {
        let trial = &suite.trials[i];
        let repeats = suite.experiments.get(trial.experiment).map_or(1, |e| e.repeat).max(1);
        (u64::from(trial.repeat.max(1) - 1) * u64::from(blocks) / u64::from(repeats)) as usize
    };
    let mut out = Vec::with_capacity(2 * blocks as usize);
    for pair in 0..blocks as usize {
        let first = if rng.next_u64() & 1 == 0 { Side::A } else { Side::B };
        for side in [first, first.other()] {
            let mut trials: Vec<usize> = (0..suite.trials.len()).filter(|&i| block_of(i) == pair).collect();
            // Fisher-Yates: each block its own order, so no cell always runs first.
            for i in (1..trials.len()).rev() {
                trials.swap(i, (rng.next_u64() % (i as u64 + 1)) as usize);
            }
            out.push(Block { side, pair, trials });
        }
    }
    out
}

/// A side's commands and settings.
struct Commands<'a> {
    setup: Option<&'a str>,
    cleanup: Option<&'a str>,
    /// Switched after the setup and back before the cleanup (`sys::settings`).
    settings: Settings,
}

impl Commands<'_> {
    /// "setup `CMD`, settings sysctl kernel.x=1": what the block's line says it switches.
    fn describe(&self) -> String {
        let mut parts = Vec::new();
        if let Some(setup) = self.setup {
            parts.push(format!("setup `{setup}`"));
        }
        if !self.settings.is_empty() {
            parts.push(format!("settings {}", self.settings.describe()));
        }
        parts.join(", ")
    }
}

/// Run a setup (`cleanup` false) or cleanup command to its end. A setup is stopped by
/// Ctrl-C and SIGTERM like a trial; a cleanup holds them until it is done.
fn shell(orchestrator: &Orchestrator, side: Side, text: &str, cleanup: bool, before: &str) -> Result<()> {
    let what = if cleanup { "cleanup" } else { "setup" };
    let mut command = process::user_shell(text, cleanup);
    let options = process::Options {
        stdin: process::Input::Null,
        forward_signals: if cleanup { Vec::new() } else { process::Options::default().forward_signals },
        timeout: cleanup.then_some(CLEANUP_TIMEOUT),
        ..process::Options::default()
    };
    let running = process::spawn(&mut command, options)
        .map_err(|e| Error::os(format!("starting the {} {what} (sh -c)", side.label()), e))?;
    let signals = (!cleanup).then(|| orchestrator.signals());
    let finished =
        running.supervise(signals).map_err(|e| Error::os(format!("waiting for the {} {what}", side.label()), e))?;
    if let Some(sig) = finished.stop_signal {
        return Err(Error::Interrupted(sig));
    }
    if finished.timed_out {
        return Err(Error::env(format!(
            "the {} {what} `{text}` ran past {} s {before} and was stopped: the A/B session stopped",
            side.label(),
            CLEANUP_TIMEOUT.as_secs()
        )));
    }
    match finished.exit {
        ExitKind::Code(0) => Ok(()),
        other => Err(Error::env(format!(
            "the {} {what} `{text}` {} {before}: the A/B session stopped{}",
            side.label(),
            other.describe(),
            if cleanup { " (the machine may still be in that state)" } else { "" }
        ))),
    }
}

/// Run every block: setup, trials (each stored in its side's run), cleanup.
fn session(
    orchestrator: &mut Orchestrator,
    store: &mut Store,
    suite: &Suite,
    blocks: &[Block],
    ids: [i64; 2],
    commands: &[Commands; 2],
) -> Result<()> {
    let total_ms: u64 =
        2 * suite.warmups.iter().chain(&suite.trials).map(|t| t.estimate.as_millis() as u64).sum::<u64>();
    let bar = super::run::progress_bar(total_ms);
    let mut pipeline = Pipeline::new(orchestrator, &bar, Extras::default());
    let mut warmed = [false; 2];
    let mut result = Ok(());
    for (k, block) in blocks.iter().enumerate() {
        if let Some(sig) = pipeline.orchestrator().pending_signal() {
            result = Err(Error::Interrupted(sig));
            break;
        }
        let side = block.side.label();
        let at = format!("before block {} of {}", k + 1, blocks.len());
        let cmds = &commands[block.side.index()];
        bar.suspend(|| eprintln!("schedlab: block {}/{}: {side}, {}", k + 1, blocks.len(), cmds.describe()));
        let mut body = match cmds.setup {
            Some(setup) => shell(pipeline.orchestrator(), block.side, setup, false, &at),
            None => Ok(()),
        };
        if body.is_ok() {
            body = pipeline.hold(&cmds.settings).map_err(|e| match e {
                Error::Environment(m) => Error::env(format!("side {side} {at}: {m}")),
                other => other,
            });
        }
        if body.is_ok() {
            let warmups = if warmed[block.side.index()] { &[][..] } else { &suite.warmups[..] };
            warmed[block.side.index()] = true;
            let run_id = ids[block.side.index()];
            for trial in warmups.iter().chain(block.trials.iter().map(|&i| &suite.trials[i])) {
                bar.set_message(format!("block {}/{} {side}: {}", k + 1, blocks.len(), trial.label()));
                if let Err(e) = pipeline.trial(trial, &mut [&mut StoreSink { store, run_id }]) {
                    body = Err(e);
                    break;
                }
                bar.inc(trial.estimate.as_millis() as u64);
            }
        }
        // The settings go back before the cleanup runs, whatever happened.
        pipeline.release();
        let cleaned = match cmds.cleanup {
            Some(text) => shell(
                pipeline.orchestrator(),
                block.side,
                text,
                true,
                &format!("after block {} of {}", k + 1, blocks.len()),
            ),
            None => Ok(()),
        };
        match (body, cleaned) {
            (Ok(()), Ok(())) => {}
            (Err(e), Ok(())) | (Ok(()), Err(e)) => {
                result = Err(e);
                break;
            }
            (Err(e), Err(also)) => {
                bar.suspend(|| eprintln!("schedlab: {also}"));
                result = Err(e);
                break;
            }
        }
    }
    bar.finish_and_clear();
    result
}

/// Where extra block pairs start and what limits them.
struct Extension {
    first_pair: usize,
    budget: Duration,
    started: std::time::Instant,
    seed: u64,
}

/// The cells (family and parameters) with a figure still undecided: neither a difference
/// nor equivalence (the comparison's verdicts, Holm over both claims of every figure). A
/// figure that has both sides' values in fewer than half its blocks (a count that is
/// mostly 0, whose ratio is undefined) cannot be decided by more blocks and is left out.
/// Each cell comes once, as its first undecided row (whose family and params name it).
fn undecided_cells(rows: &[compare::Row]) -> Vec<&compare::Row> {
    let mut out: Vec<&compare::Row> = Vec::new();
    for row in rows {
        let testable = row.blocks.is_some_and(|b| 2 * b >= row.a.len().min(row.b.len()) && b > 0);
        let decided = matches!(row.verdict, Verdict::Faster | Verdict::Slower | Verdict::Equivalent);
        if testable && !decided && !out.iter().any(|o| o.family == row.family && o.params == row.params) {
            out.push(row);
        }
    }
    out
}

/// Extra block pairs after the planned ones (`--budget`), each of the cells still
/// undecided, until none is or the next pair would not fit the budget.
fn extend(
    orchestrator: &mut Orchestrator,
    store: &mut Store,
    suite: &Suite,
    ids: [i64; 2],
    commands: &[Commands; 2],
    plan: &Extension,
) -> Result<()> {
    let mut rng = SplitMix64::new(plan.seed.rotate_left(29));
    let mut next_seq = suite.trials.len();
    for pair in plan.first_pair.. {
        let stored = [store.trials(ids[0])?, store.trials(ids[1])?];
        let margins: Vec<f64> = suite.experiments.iter().map(|e| e.margin).collect();
        let rows = compare::compare(&stored[0], &stored[1], 0.05, compare::Mode::Interleaved, &[], &margins);
        let open = undecided_cells(&rows);
        if open.is_empty() {
            eprintln!("schedlab: A/B: every figure decided after {pair} block pairs");
            return Ok(());
        }
        // One trial of each open cell, numbered after the last repeat either side holds.
        let mut extra = suite.clone();
        extra.warmups.clear();
        extra.trials = open
            .iter()
            .filter_map(|cell| {
                let in_cell = |family, params: &_| family == cell.family && *params == cell.params;
                let mut t = suite.trials.iter().find(|t| in_cell(t.family, &t.params))?.clone();
                let mine = stored.iter().flatten().filter(|r| in_cell(r.family, &r.params));
                let times: Vec<f64> = mine.clone().map(|r| r.elapsed_s).collect();
                t.repeat = mine.map(|r| r.repeat).max().unwrap_or(0) as u32 + 1;
                if !times.is_empty() {
                    t.estimate = Duration::from_secs_f64(crate::analysis::stats::median(&times).max(0.0));
                }
                t.seq = next_seq;
                next_seq += 1;
                Some(t)
            })
            .collect();
        if extra.trials.is_empty() {
            return Ok(());
        }
        let takes = 2 * extra.trials.iter().map(|t| t.estimate).sum::<Duration>();
        if plan.started.elapsed() + takes > plan.budget {
            eprintln!(
                "schedlab: A/B: {} cell(s) still undecided after {pair} block pairs; the next pair (~{}) does not fit \
                 --budget {}",
                open.len(),
                format_estimate(takes),
                format_estimate(plan.budget)
            );
            return Ok(());
        }
        let first = if rng.next_u64() & 1 == 0 { Side::A } else { Side::B };
        let blocks: Vec<Block> = [first, first.other()]
            .into_iter()
            .map(|side| {
                let mut trials: Vec<usize> = (0..extra.trials.len()).collect();
                for i in (1..trials.len()).rev() {
                    trials.swap(i, (rng.next_u64() % (i as u64 + 1)) as usize);
                }
                Block { side, pair, trials }
            })
            .collect();
        eprintln!("schedlab: A/B: extra block pair {}: {} undecided cell(s)", pair + 1, open.len());
        session(orchestrator, store, &extra, &blocks, ids, commands)?;
    }
    Ok(())
}

/// After a session that stopped early: keep what was stored, marked interrupted, or
/// remove both runs when they hold nothing.
fn stopped(store: &mut Store, ids: [i64; 2]) {
    let counts: Vec<i64> = ids.iter().map(|&id| store.trial_count(id).unwrap_or(1)).collect();
    if counts.iter().all(|&n| n == 0) {
        let removed = ids.iter().all(|&id| store.delete_run(id).is_ok());
        if removed {
            eprintln!("schedlab: nothing was measured; runs {} and {} were removed", ids[0], ids[1]);
            return;
        }
    }
    for id in ids {
        // Best effort: the trials stored are intact either way.
        let _ = store.set_run_state(id, RunStatus::Interrupted, None, None);
    }
    eprintln!(
        "schedlab: the A/B session stopped; runs {} (A, {} trials) and {} (B, {} trials) keep what was measured, \
         marked interrupted. `schedlab compare {} {}` compares it",
        ids[0], counts[0], ids[1], counts[1], ids[0], ids[1]
    );
}

/// Refuse an `--html` path whose folder does not exist before anything is measured, not
/// after the session when the page is written.
fn check_html_dir(args: &AbArgs) -> Result<()> {
    if let Some(path) = &args.output.html {
        let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(std::path::Path::new("."));
        if !dir.is_dir() {
            return Err(Error::usage(format!("cannot write {}: {} is not a directory", path.display(), dir.display())));
        }
    }
    Ok(())
}

/// The blocks per side: `--blocks`, or the suite's largest repeat; never fewer than that.
fn blocks_per_side(args: &AbArgs, suite: &Suite) -> Result<u32> {
    let blocks_per_side = args.blocks.unwrap_or_else(|| default_blocks(suite));
    let most_repeats = default_blocks(suite);
    if blocks_per_side < most_repeats {
        // The comparison pairs A's and B's values by repeat, one pair a block pair: with
        // fewer blocks, repeats of one block pair would pass for separate pairs.
        return Err(Error::usage(format!(
            "--blocks {blocks_per_side} is below the suite's largest repeat ({most_repeats}): each block pair must hold \
             at most one repeat of a cell, since A's and B's values are compared pair by pair; give --blocks \
             {most_repeats} or more"
        )));
    }
    Ok(blocks_per_side)
}

/// What both sides' run records say of the session's plan (`RunOptions::ab`).
struct SessionPlan<'a> {
    blocks_per_side: u32,
    seed: u64,
    /// The sides' blocks in the order they run, "ABBA…".
    order: &'a str,
}

/// The two runs to store, A's then B's, each naming the other as its pair and carrying
/// its own commands and settings.
fn side_records(
    args: &AbArgs,
    suite: &Suite,
    commands: &[Commands; 2],
    machine: &Machine,
    warnings: &[String],
    plan: &SessionPlan,
) -> Vec<RunRecord> {
    let stored_machine = StoredMachine::from(machine);
    let uuids = [new_uuid(), new_uuid()];
    [Side::A, Side::B]
        .into_iter()
        .map(|side| {
            let options = RunOptions {
                full: Some(args.full),
                ab: Some(AbSide {
                    side: side.label().to_lowercase(),
                    pair: uuids[side.other().index()].clone(),
                    blocks: plan.blocks_per_side,
                    seed: plan.seed,
                    setup: commands[side.index()].setup.unwrap_or_default().to_string(),
                    cleanup: commands[side.index()].cleanup.map(str::to_string),
                    order: plan.order.to_string(),
                    settings: Some(commands[side.index()].settings.clone()).filter(|s| !s.is_empty()),
                }),
                ..RunOptions::default()
            };
            // Each side's settings are part of its fingerprint, so `compare` and `trend`
            // name them as what changed.
            let settings = &commands[side.index()].settings;
            let machine = if settings.is_empty() {
                stored_machine.clone()
            } else {
                StoredMachine::from(&Machine { settings: Some(settings.flat()), ..machine.clone() })
            };
            suite.starting_run(uuids[side.index()].clone(), options, machine, warnings.to_vec())
        })
        .collect()
}

/// After a session that ran to its end: mark both runs finished and print their
/// comparison. The exit code is the comparison's, or 3 where some trial was not ok.
fn finish(store: &mut Store, ids: [i64; 2], args: &AbArgs) -> Result<i32> {
    for id in ids {
        store.set_run_state(id, RunStatus::Finished, Some(&now_utc()), None)?;
    }
    let (run_a, run_b) = (store.run(ids[0])?, store.run(ids[1])?);
    let not_ok: usize =
        ids.iter().map(|&id| store.trials(id).map(|t| t.iter().filter(|t| !t.is_ok()).count())).sum::<Result<_>>()?;
    eprintln!(
        "schedlab: stored as runs {} (A) and {} (B); `schedlab compare {} {}` prints this comparison again",
        ids[0], ids[1], ids[0], ids[1]
    );
    let code = compare_cmd::print_comparison(store, &run_a, &run_b, &args.output)?;
    if not_ok > 0 {
        eprintln!("schedlab: {not_ok} trial(s) were not ok and are left out of the comparison");
    }
    Ok(if code == 0 && not_ok > 0 { 3 } else { code })
}

pub fn run(args: &AbArgs) -> Result<i32> {
    let db_path = Location::resolve(args.db.db.as_deref())?;
    // The signal watch comes first: every thread started later inherits the blocked mask.
    let mut orchestrator = Orchestrator::new(args.trial_timeout)?;
    let suite = suite::load(&args.suite, args.full)?;
    suite.check_trial_timeout(args.trial_timeout)?;
    check_html_dir(args)?;
    let blocks_per_side = blocks_per_side(args, &suite)?;
    let seed = args.seed.unwrap_or_else(|| u64::from_le_bytes(crate::sys::random::bytes()));
    let blocks = plan(&suite, blocks_per_side, seed);
    let sides = [
        Settings::from_texts(&args.a_set).map_err(|m| Error::usage(format!("--a-set: {m}")))?,
        Settings::from_texts(&args.b_set).map_err(|m| Error::usage(format!("--b-set: {m}")))?,
    ];
    run::preflight(&suite)?;
    for settings in &sides {
        run::settings_preflight(&suite, Some(settings))?;
    }
    let mut store = Store::open(&db_path, Access::Create)?;
    let mut machine = Machine::capture();
    let warnings = machine.noise_warnings();
    for w in &warnings {
        eprintln!("schedlab: warning: {w}");
    }
    // One floor for the session, before either side's setup: both sides' runs carry it.
    if args.noise_probe != Some(crate::model::options::OnOff::Off) {
        machine.noise_floor = Some(run::probe_noise(&mut orchestrator, suite.trials.iter())?);
    }
    let order: String = blocks.iter().map(|b| b.side.label()).collect();
    let [settings_a, settings_b] = sides;
    let commands = [
        Commands { setup: args.a_setup.as_deref(), cleanup: args.a_cleanup.as_deref(), settings: settings_a },
        Commands { setup: args.b_setup.as_deref(), cleanup: args.b_cleanup.as_deref(), settings: settings_b },
    ];
    let session_plan = SessionPlan { blocks_per_side, seed, order: &order };
    let records = side_records(args, &suite, &commands, &machine, &warnings, &session_plan);
    let stored = store.insert_runs(&records)?;
    let ids = [stored[0], stored[1]];
    eprintln!(
        "schedlab: A/B: runs {} (A) and {} (B): suite {}, {} trials a side in {blocks_per_side} blocks a side, order {order} \
         (--seed {seed}), estimated {}, stored in {}",
        ids[0],
        ids[1],
        suite.name,
        suite.trials.len(),
        format_estimate(2 * suite.estimate()),
        store.location()
    );
    let started = std::time::Instant::now();
    let mut outcome = session(&mut orchestrator, &mut store, &suite, &blocks, ids, &commands);
    if let (Ok(()), Some(budget)) = (&outcome, args.budget) {
        let plan = Extension { first_pair: blocks_per_side as usize, budget, started, seed };
        outcome = extend(&mut orchestrator, &mut store, &suite, ids, &commands, &plan);
    }
    // A signal held while a cleanup ran is still queued: read it now, or it would kill
    // this process the moment the watch is dropped and its mask restored.
    if let Some(sig) = orchestrator.pending_signal() {
        outcome = outcome.and(Err(Error::Interrupted(sig)));
    }
    if let Err(e) = outcome {
        stopped(&mut store, ids);
        return Err(e);
    }
    finish(&mut store, ids, args)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn suite(text: &str) -> Suite {
        suite::parse("t.toml", text, "t", false).unwrap()
    }

    const MIXED: &str = "[[experiment]]\nfamily = \"ring\"\nprocs = [2, 4]\nlaps = 10\nrepeat = 4\n\
        [[experiment]]\nfamily = \"latency\"\nloops = 10\nrepeat = 2\n";

    #[test]
    fn every_trial_runs_once_a_side_and_blocks_alternate() {
        let s = suite(MIXED);
        let blocks = plan(&s, default_blocks(&s), 42);
        assert_eq!(blocks.len(), 8, "4 blocks a side");
        for side in [Side::A, Side::B] {
            let mut seen: Vec<usize> =
                blocks.iter().filter(|b| b.side == side).flat_map(|b| b.trials.clone()).collect();
            seen.sort();
            assert_eq!(seen, (0..s.trials.len()).collect::<Vec<_>>(), "{side:?}");
        }
        for (pair, two) in blocks.chunks(2).enumerate() {
            assert_ne!(two[0].side, two[1].side, "each pair has one block of each side");
            assert_eq!((two[0].pair, two[1].pair), (pair, pair));
            // The same share of the suite on both sides of a pair.
            let (mut x, mut y) = (two[0].trials.clone(), two[1].trials.clone());
            x.sort();
            y.sort();
            assert_eq!(x, y);
        }
        // With blocks = the ring's repeat, every ring cell runs once in every block; the
        // latency cell's 2 repeats are spread to blocks 0 and 2.
        for block in &blocks {
            let rings: Vec<_> = block.trials.iter().filter(|&&i| s.trials[i].family == suite::Family::Ring).collect();
            assert_eq!(rings.len(), 2, "{block:?}");
            let latency = block.trials.iter().any(|&i| s.trials[i].family == suite::Family::Latency);
            assert_eq!(latency, block.pair % 2 == 0, "{block:?}");
        }
    }

    #[test]
    fn the_seed_fixes_the_order_and_both_sides_go_first() {
        let s = suite(MIXED);
        assert_eq!(plan(&s, 8, 7), plan(&s, 8, 7));
        let firsts: Vec<Side> = (0..20).map(|seed| plan(&s, 8, seed)[0].side).collect();
        assert!(firsts.contains(&Side::A) && firsts.contains(&Side::B), "{firsts:?}");
        // Fewer blocks than repeats: two repeats of each ring cell in each block.
        let two = plan(&s, 2, 1);
        assert_eq!(two.len(), 4);
        assert!(two.iter().all(|b| b.trials.len() == 4 + 1), "{two:?}");
    }
}
