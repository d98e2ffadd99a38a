//! `schedlab run`: the main job. Load a suite, check every trial before the first one
//! runs, record the machine, then run the plan trial by trial (each in a fresh process),
//! committing each result before the next; print the tables at the end.
//! `schedlab suites` lists the built-in suites.

use crate::analysis::random::SplitMix64;
use crate::cli::{RunArgs, SuitesArgs};
use crate::commands::results;
use crate::error::{Error, Result};
use crate::exec::adaptive::{self, AdaptivePlan};
use crate::exec::family::Extras;
use crate::exec::noise;
use crate::exec::pipeline::{Pipeline, StoreSink};
use crate::exec::runner::Orchestrator;
use crate::exec::suite::{self, format_estimate, QuestionKey, Suite, Trial};
use crate::model::options::OnOff;
use crate::model::run::RunOptions;
use crate::model::settings::Settings;
use crate::report::output::emit;
use crate::report::table::Table;
use crate::store::{new_uuid, now_utc, Access, Location, RunStatus, Store, TrialRecord};
use crate::sys::machine::{Machine, NoiseFloor, StoredMachine};
use crate::sys::settings;
use std::io::IsTerminal;
use std::time::{Duration, Instant};

pub fn suites(args: &SuitesArgs) -> Result<()> {
    if let Some(name) = &args.show {
        let text = suite::built_in(name).ok_or_else(|| {
            let names: Vec<&str> = suite::BUILT_IN.iter().map(|(n, _)| *n).collect();
            Error::usage(format!("no built-in suite named '{name}': choose one of {}", names.join(", ")))
        })?;
        return emit(text.trim_end());
    }
    let mut table = Table::new(["Suite", "Trials", "Estimated", "Measures"]).left_align(0).left_align(3);
    for (name, text) in suite::BUILT_IN {
        let suite = suite::parse(name, text, name, false)?;
        let plan = AdaptivePlan::resolve(&suite, &adaptive::Overrides::default())?;
        // An adaptive suite: its planned minimum, and how far it may go.
        let (trials, estimated) = match plan.budget() {
            Some(budget) if plan.is_adaptive() => (
                format!("{}..{}", suite.trials.len(), plan.most_trials(&suite)),
                format!("{} .. {}", format_estimate(suite.estimate()), format_estimate(budget)),
            ),
            _ => (suite.trials.len().to_string(), format_estimate(suite.estimate())),
        };
        table.push(vec![name.to_string(), trials, estimated, suite.description.clone().unwrap_or_default()]);
    }
    emit(table.render().trim_end())?;
    emit("\nEstimates are for this machine's CPU count and a 2-vCPU reference VM's speeds; an adaptive suite runs")?;
    emit("its planned minimum, then adds blocks where they answer its questions (and repeats lone cells until")?;
    emit("they are precise enough) until everything is answered or its budget is spent.")?;
    emit("Run one with `schedlab run NAME`; `schedlab suites --show NAME` prints its TOML to copy.")
}

/// Everything that can refuse a trial, checked for the whole plan before anything runs:
/// the policies and priorities, the CPUs, the process budget.
pub(crate) fn preflight(suite: &Suite) -> Result<()> {
    let mut seen: Vec<&crate::families::TrialSpec> = Vec::new();
    for trial in &suite.trials {
        if seen.contains(&&trial.spec) {
            continue;
        }
        crate::exec::preflight::trial(&trial.spec).map_err(|e| match e {
            Error::Environment(m) => Error::env(format!("{}: {m}", trial.configuration())),
            other => other,
        })?;
        seen.push(&trial.spec);
    }
    settings_preflight(suite, None)
}

/// Check the settings a plan switches (its trials' own, and an A/B side's for every trial)
/// before anything is: allowed, present here, switchable by this user, and not dangerous
/// beside the trials they apply to.
pub(crate) fn settings_preflight(suite: &Suite, side: Option<&Settings>) -> Result<()> {
    let mut checked: Vec<Settings> = Vec::new();
    for trial in suite.trials.iter().chain(&suite.warmups) {
        for settings in trial.settings.iter().chain(side) {
            settings::refuse_dangerous(settings, &[&trial.spec])?;
            if !checked.contains(settings) {
                settings::preflight(settings)?;
                checked.push(settings.clone());
            }
        }
    }
    Ok(())
}

/// ", adaptive: up to 400 trials within 50 s" (empty for fixed repeats).
fn adaptive_summary(suite: &Suite, plan: &AdaptivePlan) -> String {
    if !plan.is_adaptive() {
        return String::new();
    }
    let most = plan.most_trials(suite);
    let budget = plan.budget().map_or("no time limit".into(), |b| format!("a budget of {}", format_estimate(b)));
    format!(", adaptive: up to {most} trials within {budget}")
}

fn print_plan(suite: &Suite, order: &[&Trial], plan: &AdaptivePlan) -> Result<()> {
    emit(&format!(
        "suite {}: {} trials{}, estimated {}{}",
        suite.name,
        suite.trials.len(),
        if suite.warmups.is_empty() { String::new() } else { format!(" + {} warm-up", suite.warmups.len()) },
        format_estimate(suite.estimate()),
        adaptive_summary(suite, plan)
    ))?;
    for (i, e) in suite.experiments.iter().enumerate() {
        let n = suite.trials.iter().filter(|t| t.experiment == i).count();
        let axes = if e.axes.is_empty() { "no axes".to_string() } else { format!("axes {}", e.axes.join(" x ")) };
        let (repeats, trials) = match plan.target(i) {
            Some(t) => (
                match &e.compare {
                    Some(axis) => format!(
                        "repeats {}..{} in blocks of one trial per {axis} (adaptive: until each question over {axis} \
                         is answered, a difference or equivalence within ±{}%)",
                        t.min_repeat,
                        t.max_repeat,
                        crate::report::cells::percent_text(e.margin)
                    ),
                    None => format!(
                        "repeats {}..{} (adaptive: until the 95% CI of each cell's {} median is within ±{}%)",
                        t.min_repeat,
                        t.max_repeat,
                        e.family.headline_figure(),
                        crate::report::cells::percent_text(t.ci)
                    ),
                },
                format!("{n}..{} trials", n / t.min_repeat as usize * t.max_repeat as usize),
            ),
            None => (format!("{} repeat(s)", e.repeat), format!("{n} trials")),
        };
        emit(&format!(
            "  experiment {} ({}): {axes}, {repeats}, {} warm-up each: {trials}",
            i + 1,
            e.family.as_str(),
            e.warmup
        ))?;
    }
    for t in suite.warmups.iter().chain(order.iter().copied()) {
        emit(&format!(
            "  {:>5}  {:>8}  {}",
            if t.is_warmup() { "-".into() } else { t.seq.to_string() },
            format_estimate(t.estimate),
            t.label()
        ))?;
    }
    Ok(())
}

/// The order the remaining planned trials run in. A question's trials of one repeat are a
/// block: run back to back, in random order, at the place of the block's first trial in
/// the plan, so the cells it compares see the same state of the machine. Other trials keep
/// their place. `--shuffle` shuffles the blocks and lone trials too.
fn plan_order<'a>(suite: &'a Suite, remaining: &[&'a Trial], block_seed: u64, shuffle: Option<u64>) -> Vec<&'a Trial> {
    // (the block a unit is, none for a lone trial; its trials)
    type BlockUnit<'a> = (Option<(QuestionKey, u32)>, Vec<&'a Trial>);
    let mut units: Vec<BlockUnit> = Vec::new();
    for &trial in remaining {
        let block = suite.question_of(trial).map(|key| (key, trial.repeat));
        match units.iter_mut().find(|(b, _)| block.is_some() && *b == block) {
            Some((_, members)) => members.push(trial),
            None => units.push((block, vec![trial])),
        }
    }
    let mut rng = SplitMix64::new(block_seed);
    for (_, members) in &mut units {
        adaptive::shuffle(members, &mut rng);
    }
    if let Some(seed) = shuffle {
        adaptive::shuffle(&mut units, &mut SplitMix64::new(seed));
    }
    units.into_iter().flat_map(|(_, members)| members).collect()
}

/// Is the process that started this run still running it?
fn still_running(pid: Option<i64>) -> bool {
    let Some(pid) = pid.filter(|&p| p > 0 && p != i64::from(std::process::id())) else { return false };
    let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
    let state = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // A zombie is not running anything.
    let zombie = state.rsplit_once(')').is_some_and(|(_, rest)| rest.trim_start().starts_with('Z'));
    comm.trim() == "schedlab" && !zombie
}

/// What a run starts from: its suite and plan, the stored run when one is resumed (and
/// the store opened to find it), and its shuffle seed.
struct LoadedRun {
    suite: Suite,
    /// The run resumed; none for a new run.
    run_id: Option<i64>,
    seed: Option<u64>,
    plan: AdaptivePlan,
    /// Opened only to resume; a new run opens it after the dry-run check.
    store: Option<Store>,
}

/// `--resume RUN`: the stored run, its suite, seed and plan as it was started, after
/// checking that it may be resumed here and now.
fn load_resumed(db_path: &Location, run_text: &str) -> Result<LoadedRun> {
    let store = Store::open(db_path, Access::Write)?;
    let id = store.resolve_run(run_text)?;
    let run = store.run(id)?;
    if run.options.ab.is_some() {
        return Err(Error::usage(format!(
            "run {id} is one side of an A/B session: `run --resume` would measure it without its setup \
             command; start a new `schedlab ab`, or compare what it stored"
        )));
    }
    if run.status == RunStatus::Finished {
        return Err(Error::usage(format!("run {id} already finished: nothing to resume")));
    }
    // In a shared database, a run may come from another machine: its trials must
    // all measure that one (and its pid means nothing here).
    let here = std::fs::read_to_string("/proc/sys/kernel/hostname").map(|h| h.trim().to_string());
    if let (Ok(here), Some(there)) = (here, run.machine.hostname()) {
        if here != there {
            return Err(Error::usage(format!(
                "run {id} was started on {there}, not on this machine ({here}): resume it there, so all its \
                 trials measure one machine"
            )));
        }
    }
    if still_running(run.pid) {
        return Err(Error::usage(format!(
            "run {id} is still being run by process {} : wait for it or stop it first",
            run.pid.unwrap_or_default()
        )));
    }
    let full = run.options.is_full();
    let suite = suite::parse(&format!("run {id}'s suite"), &run.suite_text, &run.suite_name, full)?;
    let seed = run.options.seed();
    // The rule the run was started with, flags included.
    let plan = AdaptivePlan::of_run_options(&run.options);
    Ok(LoadedRun { suite, run_id: Some(id), seed, plan, store: Some(store) })
}

/// A new run: the suite named (quick by default), its seed and its plan with the flags.
fn load_new(args: &RunArgs) -> Result<LoadedRun> {
    let name = args.suite.as_deref().unwrap_or("quick");
    let suite = suite::load(name, args.full)?;
    let seed = args.shuffle.then(|| args.seed.unwrap_or_else(|| u64::from_le_bytes(crate::sys::random::bytes())));
    let flags = adaptive::Overrides { target_ci: args.target_ci, max_repeat: args.max_repeat, budget: args.budget };
    let plan = AdaptivePlan::resolve(&suite, &flags)?;
    Ok(LoadedRun { suite, run_id: None, seed, plan, store: None })
}

/// The record of a new run: its options (with the background loads the plan runs, so the
/// record says what else ran on the machine while it measured) and the machine with the
/// settings the plan switches.
fn new_run_record(
    args: &RunArgs,
    suite: &Suite,
    seed: Option<u64>,
    plan: &AdaptivePlan,
    machine: &Machine,
    warnings: &[String],
) -> crate::store::RunRecord {
    let mut loads: Vec<crate::model::LoadSpec> = Vec::new();
    for t in suite.trials.iter().filter(|t| !t.spec.load().is_none()) {
        if !loads.contains(t.spec.load()) {
            loads.push(t.spec.load().clone());
        }
    }
    let options = RunOptions {
        full: Some(args.full),
        shuffle_seed: Some(seed),
        adaptive: plan.is_adaptive().then(|| plan.clone()),
        loads: (!loads.is_empty()).then_some(loads),
        ..RunOptions::default()
    };
    let machine = StoredMachine::from(&Machine {
        settings: crate::model::settings::of_plan(suite.trials.iter().map(|t| &t.params)),
        ..machine.clone()
    });
    suite.starting_run(new_uuid(), options, machine, warnings.to_vec())
}

/// After the trials: a finished run is marked so, printed and written as a report (exit 3
/// where a trial failed); a stopped one is marked interrupted, with how to resume it.
fn finish(outcome: Result<usize>, store: &mut Store, run_id: i64, args: &RunArgs) -> Result<i32> {
    match outcome {
        Ok(failed_now) => {
            store.set_run_state(run_id, RunStatus::Finished, Some(&now_utc()), None)?;
            results::print_run(store, run_id, false)?;
            write_report(store, run_id);
            let trials = store.trials(run_id)?;
            // A trial dropped with its block for steal is not a failure.
            let not_ok = trials.iter().filter(|t| t.status.is_failure()).count();
            eprintln!(
                "schedlab: stored as run {run_id} in {}; `schedlab show {run_id}` prints it again, `schedlab export {run_id}` writes it out",
                store.location()
            );
            // Exit 3 when a stored trial (a resumed run's earlier ones too) or one of this
            // session's warm-ups failed.
            Ok(if not_ok == 0 && failed_now == 0 { 0 } else { 3 })
        }
        Err(e) => {
            // Best effort: a full disk may refuse this too, and the run is resumable either way.
            let _ = store.set_run_state(run_id, RunStatus::Interrupted, None, None);
            eprintln!("schedlab: run {run_id} stopped; its stored trials are kept. Continue it with `schedlab run --resume {run_id}{}`",
                args.db.db.as_ref().map_or(String::new(), |_| format!(" --db {}", store.location())));
            Err(e)
        }
    }
}

pub fn run(args: &RunArgs) -> Result<i32> {
    let db_path = Location::resolve(args.db.db.as_deref())?;
    // The signal watch comes first: every thread started later inherits the blocked mask.
    let mut orchestrator = Orchestrator::new(args.trial_timeout)?;
    let LoadedRun { suite, run_id, seed, plan, mut store } = match &args.resume {
        Some(run_text) => load_resumed(&db_path, run_text)?,
        None => load_new(args)?,
    };
    suite.check_trial_timeout(args.trial_timeout)?;
    let stored: Vec<TrialRecord> = match (&store, run_id) {
        (Some(s), Some(id)) => s.trials(id)?,
        _ => Vec::new(),
    };
    let done: Vec<i64> = stored.iter().map(|t| t.seq).collect();
    // A resumed run's budget counts the time its stored trials took.
    let used_before = Duration::from_secs_f64(stored.iter().map(|t| t.elapsed_s.max(0.0)).sum());
    let remaining: Vec<&Trial> = suite.trials.iter().filter(|t| !done.contains(&(t.seq as i64))).collect();
    // Orders within blocks: from --seed when given, else fresh.
    let block_seed = seed.unwrap_or_else(|| u64::from_le_bytes(crate::sys::random::bytes()));
    let order = plan_order(&suite, &remaining, block_seed, seed);
    if args.dry_run {
        print_plan(&suite, &order, &plan)?;
        return Ok(0);
    }
    preflight(&suite)?;
    let mut store = match store.take() {
        Some(s) => s,
        None => Store::open(&db_path, Access::Create)?,
    };
    let mut machine = Machine::capture();
    let warnings = machine.noise_warnings();
    for w in &warnings {
        eprintln!("schedlab: warning: {w}");
    }
    // A new run's noise floor, before its first trial (a resumed run keeps its own).
    if run_id.is_none() && args.noise_probe != Some(OnOff::Off) {
        machine.noise_floor = Some(probe_noise(&mut orchestrator, suite.trials.iter())?);
    }
    let pid = i64::from(std::process::id());
    let run_id = match run_id {
        Some(id) => {
            store.set_run_state(id, RunStatus::Running, None, Some(pid))?;
            id
        }
        None => store.insert_run(&new_run_record(args, &suite, seed, &plan, &machine, &warnings))?,
    };
    eprintln!(
        "schedlab: run {run_id}: suite {}, {} trials to run{}, estimated {}{}, stored in {}{}",
        suite.name,
        order.len(),
        if done.is_empty() { String::new() } else { format!(" ({} already stored)", done.len()) },
        format_estimate(
            order.iter().map(|t| t.estimate).sum::<std::time::Duration>()
                + suite.warmups.iter().map(|t| t.estimate).sum::<std::time::Duration>()
        ),
        adaptive_summary(&suite, &plan),
        store.location(),
        seed.map_or(String::new(), |s| format!(", shuffled with --seed {s}"))
    );
    let pace = Pace { used_before, block_seed };
    let outcome = execute(&mut orchestrator, &mut store, run_id, &suite, &order, &plan, pace);
    finish(outcome, &mut store, run_id, args)
}

/// The noise floor on the CPUs `trials` use, announced first (it takes a few seconds) and
/// printed when measured.
pub fn probe_noise<'a>(
    orchestrator: &mut Orchestrator,
    trials: impl IntoIterator<Item = &'a Trial>,
) -> Result<NoiseFloor> {
    let cpus = noise::trial_cpus(trials);
    eprintln!(
        "schedlab: probing this machine's noise on CPU {} (about {} s; --noise-probe off skips it)",
        crate::model::parse::format_cpu_list(&cpus),
        noise::PROBE_ESTIMATE.as_secs()
    );
    let floor = noise::probe(orchestrator, &cpus)?;
    eprintln!("schedlab: noise floor: {}", floor.summary());
    Ok(floor)
}

/// The HTML report beside the database, then the run's answers at a glance: the claims of
/// a seed's suite, the question table (one line a question), the warnings, and where the
/// findings are in full. A failure to write the page loses no result, so it is a warning.
fn write_report(store: &Store, run_id: i64) {
    let path = store.location().report_path(run_id);
    let shown = (|| -> Result<()> {
        let run = store.run(run_id)?;
        let trials = store.trials(run_id)?;
        let found = crate::decide::findings::findings_of_run(&run, &trials);
        let charts = crate::report::plots::plots(&trials);
        let written = crate::report::html::run_page(&run, &trials, &charts, &found)
            .and_then(|page| crate::report::output::write_atomically(&path, page.as_bytes()));
        if let Err(e) = &written {
            eprintln!("schedlab: warning: the HTML report was not written: {e}");
        }
        let claims = crate::decide::claims::for_run(&run, &trials);
        let page = written.is_ok().then_some(path.as_path());
        emit(crate::report::glance::run_end(run_id, &run.warnings, &found, claims.as_ref(), page).trim_end())?;
        if written.is_ok() {
            eprintln!("schedlab: report: {}", path.display());
        }
        Ok(())
    })();
    if let Err(e) = shown {
        eprintln!("schedlab: warning: the run's answers were not shown: {e}");
    }
}

/// What the adaptive part of a run starts from: the time its stored trials took (a resumed
/// run), and the seed of the orders within blocks.
struct Pace {
    used_before: Duration,
    block_seed: u64,
}

fn execute(
    orchestrator: &mut Orchestrator,
    store: &mut Store,
    run_id: i64,
    suite: &Suite,
    order: &[&Trial],
    plan: &AdaptivePlan,
    pace: Pace,
) -> Result<usize> {
    let Pace { used_before, block_seed } = pace;
    let started = Instant::now();
    let total_ms: u64 = suite.warmups.iter().chain(order.iter().copied()).map(|t| t.estimate.as_millis() as u64).sum();
    let bar = progress_bar(total_ms);
    let count = suite.warmups.len() + order.len();
    let mut pipeline = Pipeline::new(orchestrator, &bar, Extras::default());
    let result = (|| {
        for (i, trial) in suite.warmups.iter().chain(order.iter().copied()).enumerate() {
            bar.set_message(format!("{}/{count} {}{}", i + 1, trial.label(), adaptive_tag(plan, trial)));
            pipeline.trial(trial, &mut [&mut StoreSink { store, run_id }])?;
            bar.inc(trial.estimate.as_millis() as u64);
        }
        if plan.is_adaptive() {
            let used = || used_before + started.elapsed();
            extend_adaptively(&mut pipeline, store, run_id, suite, plan, block_seed, used)?;
        }
        Ok(())
    })();
    bar.finish_and_clear();
    // Warm-ups are never stored, but one that failed counts as a failed trial too.
    result.map(|()| pipeline.failed())
}

/// Why a block was dropped, stored with each of its trials: "re-run for steal: trial 57
/// (OTHER) lost ≥ 10 ms of its 31 ms on CPU 1".
fn steal_reason(trial: &Trial, record: &TrialRecord) -> String {
    let Some(steal) = record.outcome.as_ref().and_then(|o| o.steal()) else { return "re-run for steal".into() };
    let worst = steal.cpus.iter().max_by_key(|c| c.steal_ns);
    let lost = worst.map_or(0, |c| c.steal_ns.saturating_sub(steal.resolution_ns));
    format!(
        "re-run for steal: trial {} ({}) lost ≥ {:.0} ms of its {:.0} ms on CPU {}",
        trial.seq,
        trial.label(),
        lost as f64 / 1e6,
        steal.window_ns as f64 / 1e6,
        worst.map_or(0, |c| c.cpu)
    )
}

/// " [adaptive 6..20]" for a trial of an adaptive experiment, for the progress bar.
fn adaptive_tag(plan: &AdaptivePlan, trial: &Trial) -> String {
    plan.target(trial.experiment).map_or(String::new(), |t| format!(" [adaptive {}..{}]", t.min_repeat, t.max_repeat))
}

/// The trials' progress on stderr, sized in estimated ms; hidden when stderr is not a
/// terminal (a log file gets the per-trial lines only).
pub(crate) fn progress_bar(total_ms: u64) -> indicatif::ProgressBar {
    if !std::io::stderr().is_terminal() {
        return indicatif::ProgressBar::hidden();
    }
    let bar = indicatif::ProgressBar::new(total_ms.max(1));
    if let Ok(style) = indicatif::ProgressStyle::with_template("{bar:30} {percent:>3}%  {msg}  ETA {eta}") {
        bar.set_style(style);
    }
    bar
}

/// After the planned minimum: extra blocks and trials, as `adaptive::Session` decides
/// from everything the run has stored (so a resumed run picks up where it was).
fn extend_adaptively(
    pipeline: &mut Pipeline,
    store: &mut Store,
    run_id: i64,
    suite: &Suite,
    plan: &AdaptivePlan,
    block_seed: u64,
    used: impl Fn() -> Duration,
) -> Result<()> {
    let bar = pipeline.bar();
    let mut session = adaptive::Session::new(suite, plan, &store.trials(run_id)?, block_seed.rotate_left(17));
    let mut extra = 0;
    while let Ok(block) = session.next_trials(used()) {
        // The session counts a block once it is whole: one that met steal is dropped, both
        // sides, as soon as the trial that met it ends.
        let mut ran: Vec<(&Trial, TrialRecord)> = Vec::with_capacity(block.len());
        for trial in &block {
            extra += 1;
            // The bar runs to the end of the budget: an upper bound, not a forecast.
            let left = plan.budget().map_or(trial.estimate, |b| b.saturating_sub(used()));
            bar.set_length(bar.position() + left.as_millis().max(1) as u64);
            bar.set_message(format!(
                "+{extra}, {} question(s) and {} cell(s) open: {}{}",
                session.open_questions(),
                session.open_cells(),
                trial.label(),
                adaptive_tag(plan, trial)
            ));
            let (record, _) = pipeline.trial(trial, &mut [&mut StoreSink { store, run_id }])?;
            bar.inc(Duration::from_secs_f64(record.elapsed_s.max(0.0)).as_millis() as u64);
            let dropped = session.drops_for_steal(trial, &record);
            let reason = dropped.then(|| steal_reason(trial, &record));
            ran.push((trial, record));
            if let Some(reason) = reason {
                let seqs: Vec<i64> = ran.iter().map(|(t, _)| t.seq as i64).collect();
                store.discard_trials(run_id, &seqs, &reason)?;
                session.drop_block(&block);
                ran.clear();
                break;
            }
        }
        for (trial, record) in &ran {
            session.record(trial, record);
        }
    }
    let mut line = format!("schedlab: adaptive repeats: {extra} extra trial(s)");
    let reruns = session.steal_reruns();
    if reruns > 0 {
        line.push_str(&format!(
            " ({reruns} block(s) re-run for steal: a trial of each certainly lost ≥ {}% of its time on a CPU)",
            crate::report::cells::percent_text(crate::analysis::sequential::STEAL_LEVEL)
        ));
    }
    let questions = session.questions().len();
    if questions > 0 {
        let answers = session.answers();
        let count = |a: adaptive::QuestionState| answers.iter().filter(|x| **x == a).count();
        let open = count(adaptive::QuestionState::Open);
        let margins: Vec<f64> = session.questions().iter().map(|q| q.margin).collect();
        let margin = if margins.windows(2).all(|w| w[0] == w[1]) {
            format!("±{}%", crate::report::cells::percent_text(margins[0]))
        } else {
            "its margin".to_string()
        };
        line.push_str(&format!(
            "; {} of {questions} question(s) answered ({} differ, {} equivalent within {margin}){}",
            questions - open,
            count(adaptive::QuestionState::Differs),
            count(adaptive::QuestionState::Equivalent),
            if open > 0 { format!(", {open} open") } else { String::new() }
        ));
    }
    let (converged, lone) = session.lone_cells();
    if lone > 0 {
        let open = session.open_cells();
        let at_max = lone - converged - open;
        let other = if questions > 0 { "other " } else { "" };
        line.push_str(&format!("; {converged} of {lone} {other}cell(s) reached their target"));
        if at_max > 0 {
            line.push_str(&format!(", {at_max} stopped at max_repeat"));
        }
        if open > 0 {
            line.push_str(&format!(", {open} stopped by the budget"));
        }
    }
    bar.suspend(|| eprintln!("{line}"));
    Ok(())
}
