//! Suite files (TOML) -> a plan of trials.
//!
//! A suite is a list of `[[experiment]]` tables. Each names a `family` (ring, workload,
//! latency) and gives that command's flags as keys (`procs`, `laps`, `policy`, ...). A
//! list value is an axis: the experiment runs the cross product of its axes, `repeat`
//! times each, after `warmup` unrecorded trials of each combination. An optional
//! `[experiment.full]` table overrides keys when the run is given `--full`.
//!
//! Adaptive repeats (`adaptive`): an experiment with `target_ci = "5%"` treats `repeat` as
//! a minimum and adds repeats until each cell's 95 % interval is that narrow, up to
//! `max_repeat`; the suite's top-level `budget = "40s"` bounds the run's time for them.
//!
//! Every key is read by the same options struct and value parsers as the command's flag
//! (`model::options`), and every combination becomes its `TrialSpec` here, before anything
//! runs, so a bad value is reported with the file, line and key instead of failing mid-run.

use crate::error::{Error, Result};
use crate::exec::family::FamilyTrial;
use crate::families::shared::FamilyTypes;
use crate::families::TrialSpec;
use crate::families::{on_each, with_family, FamilyOptions};
use crate::model::cell::{self, Cell, CellValue};
use crate::model::parse::{is_bare_number, parse_budget, parse_margin, parse_max_repeat, parse_target_ci};
use crate::model::settings::Settings;
use std::collections::BTreeMap;
use std::time::Duration;
use toml::{Spanned, Value as Toml};

/// Built-in suites: (name, what it measures, TOML text).
pub const BUILT_IN: [(&str, &str); 7] = [
    ("quick", include_str!("../../suites/quick.toml")),
    ("pipeline-1992", include_str!("../../suites/pipeline-1992.toml")),
    ("policy-study", include_str!("../../suites/policy-study.toml")),
    ("hrtimers-2007", include_str!("../../suites/hrtimers-2007.toml")),
    ("rt-under-load", include_str!("../../suites/rt-under-load.toml")),
    ("rt-taskset", include_str!("../../suites/rt-taskset.toml")),
    ("cgroup-limits", include_str!("../../suites/cgroup-limits.toml")),
];

pub use crate::families::Family;
pub use crate::model::run::Asking;

/// Time keys whose value needs its unit: a bare number would be seconds, where these are
/// µs to ms (cyclictest's `-i` counts µs). `duration`, `timeout` and `budget` read a bare
/// number as seconds, as cyclictest's `-D` and sleep(1) do.
const UNIT_REQUIRED: [&str; 4] = ["interval", "runtime", "deadline", "period"];

/// Flags of the family commands that shape output, not the measurement: the store keeps
/// results, so they have no place in a suite.
const OUTPUT_ONLY: [&str; 6] = ["json", "format", "samples", "histogram", "compare-policies", "help"];

/// A family's option keys as flags (`work-kb`) and whether each takes a value.
fn family_flags(family: Family) -> Vec<(String, bool)> {
    use clap::Args;
    let command = clap::Command::new(family.as_str());
    let command = with_family!(family, F => <F as FamilyTypes>::Options::augment_args(command));
    command
        .get_arguments()
        .map(|a| {
            // The field's name, as a suite writes it (command's `--figure` flag is its
            // `figures` key); dashes, as flags have them.
            let name = a.get_id().as_str().replace('_', "-");
            (name, a.get_action().takes_values())
        })
        .collect()
}

/// One trial of the plan. `seq` is its identity within the run (stable across resumes).
#[derive(Clone, Debug)]
pub struct Trial {
    pub seq: usize,
    pub experiment: usize,
    pub family: Family,
    /// The parameters as the suite gave them (after --full overrides), one value each.
    pub params: Cell,
    /// What the trial runs.
    pub spec: TrialSpec,
    /// The machine settings it runs switched to (a suite's `cgroup`, `sysctl`, ... keys),
    /// read once when the plan is made; `None` for none.
    pub settings: Option<Settings>,
    /// 1-based; 0 for a warm-up trial (run, never stored).
    pub repeat: u32,
    pub estimate: Duration,
}

impl Trial {
    /// A trial of a family command (`schedlab ring|workload|latency`) or of the noise
    /// probe: one spec outside any suite, its cell named by `params` (what `show`'s tables
    /// group by), numbered `seq` in the command's sequence.
    pub fn of_command(seq: usize, spec: TrialSpec, repeat: u32, params: Cell) -> Trial {
        Trial {
            seq,
            experiment: 0,
            family: spec.family(),
            params,
            spec,
            settings: None,
            repeat,
            estimate: Duration::ZERO,
        }
    }

    /// A family command's trials in blocks: each block runs every spec once, in an order
    /// shuffled by `seed` (the randomised block design the run's questions rely on); each
    /// cell is named by `params_of` its spec.
    pub fn in_blocks(
        specs: &[TrialSpec],
        blocks: usize,
        seed: u64,
        params_of: impl Fn(&TrialSpec) -> Cell,
    ) -> Vec<Trial> {
        let mut rng = crate::analysis::random::SplitMix64::new(seed);
        let mut trials = Vec::with_capacity(specs.len() * blocks);
        for block in 1..=blocks {
            let mut order: Vec<usize> = (0..specs.len()).collect();
            for i in (1..order.len()).rev() {
                order.swap(i, (rng.next_u64() % (i as u64 + 1)) as usize);
            }
            for i in order {
                trials.push(Trial::of_command(trials.len(), specs[i].clone(), block as u32, params_of(&specs[i])));
            }
        }
        trials
    }

    pub fn is_warmup(&self) -> bool {
        self.repeat == 0
    }

    /// "ring procs=4 laps=2000": the configuration, whatever the repeat.
    pub fn configuration(&self) -> String {
        format!("{} {}", self.family.as_str(), self.params.all_text())
    }

    /// "ring procs=4 laps=2000 #2"
    pub fn label(&self) -> String {
        let repeat = if self.is_warmup() { "warm-up".to_string() } else { format!("#{}", self.repeat) };
        format!("{} {repeat}", self.configuration())
    }
}

#[derive(Clone, Debug)]
pub struct Experiment {
    pub family: Family,
    /// The planned repeats: the count, or the minimum when `target_ci` is set.
    pub repeat: u32,
    pub warmup: u32,
    /// Repeat until the 95 % interval of each cell's headline median is this narrow
    /// (relative half-width, 0.05 for ±5 %).
    pub target_ci: Option<f64>,
    pub max_repeat: Option<u32>,
    /// Its questions call two sides equivalent within 1 ± this (`margin = "10%"`; by
    /// default `sequential::MARGIN`, ±5 %).
    pub margin: f64,
    /// Keys whose value is a list (varied across the experiment's trials), in file order.
    pub axes: Vec<String>,
    /// The axis whose values the experiment's questions compare (`compare = "policy"`; by
    /// default the policy, when it is an axis of a workload or latency experiment).
    pub compare: Option<String>,
    /// The keys of the family's questioned figures its questions test (`ask = ["p99_ns"]`:
    /// a latency question without its maximum); `None`: all of them.
    pub ask: Option<Vec<String>>,
}

impl Experiment {
    /// What its questions ask, as the run stores it.
    pub fn asking(&self) -> Asking {
        Asking { compare: self.compare.clone(), margin: self.margin, ask: self.ask.clone() }
    }

    /// The figures its questions test: its family's (`figures::questioned`), as `ask` keeps them.
    pub fn questioned(&self) -> Vec<&'static crate::families::figures::Figure> {
        let asking = self.asking();
        self.family.questioned().into_iter().filter(|f| asking.tests(self.family, f)).collect()
    }
}

/// Which question a trial belongs to: its experiment and its parameters other than the
/// compared axis.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct QuestionKey {
    pub experiment: usize,
    pub axis: String,
    /// The other parameters.
    pub rest: Cell,
}

impl QuestionKey {
    /// The question of the cell with these parameters in an experiment comparing `axis`.
    pub fn of(experiment: usize, axis: &str, params: &Cell) -> QuestionKey {
        QuestionKey { experiment, axis: axis.to_string(), rest: params.question_key(axis) }
    }
}

#[derive(Clone, Debug)]
pub struct Suite {
    pub name: String,
    pub description: Option<String>,
    pub text: String,
    pub experiments: Vec<Experiment>,
    /// Measured trials, in plan order (seq 0..n).
    pub trials: Vec<Trial>,
    /// Unrecorded warm-up trials, run before the measured ones.
    pub warmups: Vec<Trial>,
    /// The time the whole run may take when experiments repeat adaptively.
    pub budget: Option<Duration>,
    /// Where that budget was given ("suite.toml:3: budget"), for messages about it.
    pub budget_at: Option<String>,
}

impl Suite {
    pub fn estimate(&self) -> Duration {
        self.trials.iter().chain(&self.warmups).map(|t| t.estimate).sum()
    }

    /// What each experiment's questions ask, stored with the run.
    pub fn asked(&self) -> Vec<Asking> {
        self.experiments.iter().map(Experiment::asking).collect()
    }

    /// The record of a run of this suite as it starts (`run`, and each side of `ab`):
    /// running since now, by this schedlab, with what each experiment asks stored in its
    /// options, so that its reports read the questions from the run and not the suite text.
    pub fn starting_run(
        &self,
        uuid: String,
        mut options: crate::model::run::RunOptions,
        machine: crate::sys::machine::StoredMachine,
        warnings: Vec<String>,
    ) -> crate::store::RunRecord {
        options.asked = Some(self.asked());
        crate::store::RunRecord {
            id: 0,
            uuid,
            suite_name: self.name.clone(),
            suite_text: self.text.clone(),
            options,
            started: crate::store::now_utc(),
            ended: None,
            status: crate::store::RunStatus::Running,
            tool_version: env!("CARGO_PKG_VERSION").into(),
            machine,
            warnings,
            planned: self.trials.len() as i64,
            pid: Some(i64::from(std::process::id())),
        }
    }

    /// The question a trial answers a part of, if its experiment compares an axis.
    pub fn question_of(&self, trial: &Trial) -> Option<QuestionKey> {
        let axis = self.experiments.get(trial.experiment)?.compare.as_deref()?;
        Some(QuestionKey::of(trial.experiment, axis, &trial.params))
    }

    /// Every question of the plan with at least two cells, in plan order.
    #[cfg(test)]
    pub fn questions(&self) -> Vec<QuestionKey> {
        self.questions_with_cells().into_iter().map(|(k, _)| k).collect()
    }

    /// Each question with how many cells it compares (2 or more).
    pub fn questions_with_cells(&self) -> Vec<(QuestionKey, usize)> {
        let mut out: Vec<(QuestionKey, Vec<&Cell>)> = Vec::new();
        for trial in &self.trials {
            let Some(key) = self.question_of(trial) else { continue };
            match out.iter_mut().find(|(k, _)| *k == key) {
                Some((_, cells)) => {
                    if !cells.contains(&&trial.params) {
                        cells.push(&trial.params)
                    }
                }
                None => out.push((key, vec![&trial.params])),
            }
        }
        out.into_iter().filter(|(_, cells)| cells.len() >= 2).map(|(k, cells)| (k, cells.len())).collect()
    }

    /// Hypotheses in the run's family of claims: two (a difference, equivalence) for each
    /// figure each question tests (`figures::questioned`).
    #[cfg(test)]
    pub fn family_of_claims(&self) -> usize {
        self.questions().iter().map(|q| 2 * self.experiments[q.experiment].questioned().len()).sum()
    }

    /// Refuse a plan whose trials would all be stopped by the run's `--trial-timeout`: a
    /// trial that is asked to measure for longer than the limit can never end by itself.
    pub fn check_trial_timeout(&self, limit: Duration) -> Result<()> {
        let longest = self.trials.iter().filter_map(|t| t.spec.least_length().map(|d| (d, t))).max_by_key(|(d, _)| *d);
        let Some((length, trial)) = longest.filter(|(d, _)| *d >= limit) else { return Ok(()) };
        // Room to start, set up and tear down, rounded up to whole minutes.
        let enough = (length + Duration::from_secs(60)).as_secs().div_ceil(60);
        Err(Error::usage(format!(
            "the trial {} measures for {}, and --trial-timeout {} would stop it before it ends: give \
             --trial-timeout {enough}m or more, or shorter trials",
            trial.configuration(),
            format_estimate(length),
            crate::model::parse::duration_arg(limit.as_nanos() as u64)
        )))
    }
}

/// What each experiment of a stored run asks: as the run stored it, or, for a run stored
/// before runs kept it, read again from its suite text.
pub fn asked_of_run(run: &crate::store::RunRecord) -> Vec<Asking> {
    match &run.options.asked {
        Some(asked) => asked.clone(),
        None => asked_by_older_runs_suite_text(&run.suite_text, run.options.full == Some(true)),
    }
}

/// For a run stored before runs kept what they ask (`RunOptions::asked`) only: its suite
/// text parsed again as the run read it (`--full` or not); a text that no longer parses
/// asks nothing.
pub fn asked_by_older_runs_suite_text(text: &str, full: bool) -> Vec<Asking> {
    parse("stored suite", text, "stored", full).map(|s| s.asked()).unwrap_or_default()
}

/// Find a built-in suite's text by name.
pub fn built_in(name: &str) -> Option<&'static str> {
    BUILT_IN.iter().find(|(n, _)| *n == name).map(|(_, text)| *text)
}

/// Load a suite named on the command line: a built-in name or a path to a TOML file.
pub fn load(name_or_path: &str, full: bool) -> Result<Suite> {
    if let Some(text) = built_in(name_or_path) {
        return parse(name_or_path, text, name_or_path, full);
    }
    let path = std::path::Path::new(name_or_path);
    if !name_or_path.ends_with(".toml") && !path.exists() {
        let names: Vec<&str> = BUILT_IN.iter().map(|(n, _)| *n).collect();
        return Err(Error::usage(format!(
            "no built-in suite or file named '{name_or_path}': built-in suites are {} (see `schedlab suites`); \
             a suite file ends in .toml",
            names.join(", ")
        )));
    }
    let text = std::fs::read_to_string(path).map_err(|e| {
        Error::usage(format!("cannot read the suite file {}: {}", path.display(), crate::error::describe_io(&e)))
    })?;
    let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "suite".into());
    parse(&path.display().to_string(), &text, &stem, full)
}

/// 1-based line of a byte offset.
fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].bytes().filter(|&b| b == b'\n').count() + 1
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct SuiteFile {
    name: Option<String>,
    description: Option<String>,
    budget: Option<Spanned<Toml>>,
    /// Top-level keys that change under `--full`, as `[experiment.full]` does for an
    /// experiment's: the budget, whose full-size trials need more time.
    full: Option<SuiteFull>,
    #[serde(default)]
    experiment: Vec<Spanned<BTreeMap<Spanned<String>, Spanned<Toml>>>>,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct SuiteFull {
    budget: Option<Spanned<Toml>>,
}

/// Where an error is: "suite.toml:7".
struct Origin<'a> {
    file: &'a str,
    text: &'a str,
}

impl Origin<'_> {
    fn at(&self, offset: usize, msg: impl std::fmt::Display) -> Error {
        Error::usage(format!("{}:{}: {msg}", self.file, line_of(self.text, offset)))
    }
}

/// Parse and check a suite; `file` names it in errors, `default_name` is used when the
/// file has no `name`.
pub fn parse(file: &str, text: &str, default_name: &str, full: bool) -> Result<Suite> {
    let origin = Origin { file, text };
    let doc: SuiteFile = toml::from_str(text).map_err(|e| {
        let msg = e.message().trim().to_string();
        match e.span() {
            Some(span) => origin.at(span.start, msg),
            None => Error::usage(format!("{file}: {msg}")),
        }
    })?;
    if doc.experiment.is_empty() {
        return Err(Error::usage(format!(
            "{file}: the suite has no experiments: add an [[experiment]] table with a family (ring, workload, latency or command)"
        )));
    }
    let read_budget = |value: &Spanned<Toml>, key: &str| -> Result<(Duration, String)> {
        let at = value.span().start;
        let budget = text_of(value.get_ref())
            .ok_or_else(|| "a duration such as \"40s\" or \"5m\"".to_string())
            .and_then(|t| parse_budget(&t))
            .map_err(|msg| origin.at(at, format!("{key}: {msg}")))?;
        Ok((budget, format!("{file}:{}: {key}", line_of(text, at))))
    };
    let plain_budget = doc.budget.as_ref().map(|v| read_budget(v, "budget")).transpose()?;
    // Checked whether or not the run is --full, so a typo is found either way.
    let full_budget =
        doc.full.as_ref().and_then(|f| f.budget.as_ref()).map(|v| read_budget(v, "[full] budget")).transpose()?;
    let (budget, budget_at) = match (full, full_budget, plain_budget) {
        (true, Some(b), _) | (_, _, Some(b)) => (Some(b.0), Some(b.1)),
        _ => (None, None),
    };
    let mut experiments = Vec::new();
    let mut trials = Vec::new();
    let mut warmups = Vec::new();
    for (index, table) in doc.experiment.iter().enumerate() {
        let (experiment, combos) = check_experiment(&origin, table, full)?;
        for (params, spec) in combos {
            let estimate = estimate(&spec);
            let settings = Settings::from_params(&params).map_err(Error::usage)?;
            for _ in 0..experiment.warmup {
                warmups.push(Trial {
                    seq: 0,
                    experiment: index,
                    family: experiment.family,
                    params: params.clone(),
                    spec: spec.clone(),
                    settings: settings.clone(),
                    repeat: 0,
                    estimate,
                });
            }
            for repeat in 1..=experiment.repeat {
                let seq = trials.len();
                trials.push(Trial {
                    seq,
                    experiment: index,
                    family: experiment.family,
                    params: params.clone(),
                    spec: spec.clone(),
                    settings: settings.clone(),
                    repeat,
                    estimate,
                });
            }
        }
        experiments.push(experiment);
    }
    Ok(Suite {
        name: doc.name.unwrap_or_else(|| default_name.to_string()),
        description: doc.description,
        text: text.to_string(),
        experiments,
        trials,
        warmups,
        budget,
        budget_at,
    })
}

/// A TOML scalar as the text a flag would have been given.
fn text_of(value: &Toml) -> Option<String> {
    match value {
        Toml::String(s) => Some(s.clone()),
        Toml::Integer(i) => Some(i.to_string()),
        Toml::Float(f) => Some(f.to_string()),
        _ => None,
    }
}

/// One point of an experiment's cross product: its keys and values, and the spec they make.
type Combination = (Cell, TrialSpec);

/// The table of one `[[experiment]]`: each key and value with its place in the file.
type ExperimentTable = BTreeMap<Spanned<String>, Spanned<Toml>>;

/// An axis or one-valued parameter: its key, its values, and the offset of its value.
type Param = (String, Vec<CellValue>, usize);

/// The keys of an `[[experiment]]` table as read, before `full` and the cross product.
struct ExperimentKeys<'t> {
    repeat: u32,
    warmup: u32,
    target_ci: Option<f64>,
    /// With the offset of its value, for the checks against `repeat` and `target_ci`.
    max_repeat: Option<(u32, usize)>,
    margin: f64,
    /// The axis named, and the offset of its value.
    compare: Option<(String, usize)>,
    ask: Option<Vec<String>>,
    /// key -> (values, offset of the value), in a stable order: the file's keys sorted.
    params: Vec<Param>,
    /// The `full` table: the keys to change under --full.
    overrides: Option<&'t Spanned<Toml>>,
    /// Keys that are one value however they are written (a command's `cmd` and `figures`).
    whole_values: Vec<(String, CellValue)>,
}

/// The family an `[[experiment]]` table names; an error at the table when it names none.
fn experiment_family(origin: &Origin, start: usize, entries: &ExperimentTable) -> Result<Family> {
    let family_value = entries.iter().find(|(k, _)| k.get_ref() == "family").map(|(_, v)| v);
    let Some(family_value) = family_value else {
        return Err(origin.at(
            start,
            "an [[experiment]] has no family: add family = \"ring\", \"workload\", \"latency\" or \"command\"",
        ));
    };
    family_value.get_ref().as_str().and_then(Family::parse).ok_or_else(|| {
        origin.at(
            family_value.span().start,
            format!("unknown family {}: expected one of ring, workload, latency, command", family_value.get_ref()),
        )
    })
}

/// `repeat` (1 to 10000) or `warmup` (0 to 10000).
fn repeat_count(origin: &Origin, name: &str, value: &Spanned<Toml>) -> Result<u32> {
    let at = value.span().start;
    let n = value
        .get_ref()
        .as_integer()
        .filter(|n| (if name == "repeat" { 1 } else { 0 }..=10_000).contains(n))
        .ok_or_else(|| {
            origin
                .at(at, format!("{name} must be a whole number from {} to 10000", if name == "repeat" { 1 } else { 0 }))
        })?;
    Ok(n as u32)
}

/// Read every key of an experiment's table (in the file's sorted order), each checked as
/// it is read: the suite's own keys, the family's parameters, machine settings.
fn read_keys<'t>(
    origin: &Origin,
    family: Family,
    flags: &[(String, bool)],
    entries: &'t ExperimentTable,
) -> Result<ExperimentKeys<'t>> {
    let mut keys = ExperimentKeys {
        repeat: 1,
        warmup: 0,
        target_ci: None,
        max_repeat: None,
        margin: crate::analysis::sequential::MARGIN,
        compare: None,
        ask: None,
        params: Vec::new(),
        overrides: None,
        whole_values: Vec::new(),
    };
    for (key, value) in entries {
        let name = key.get_ref().as_str();
        let at = value.span().start;
        match name {
            "family" => {}
            "repeat" => keys.repeat = repeat_count(origin, name, value)?,
            "warmup" => keys.warmup = repeat_count(origin, name, value)?,
            "target_ci" | "target-ci" => {
                let parsed = text_of(value.get_ref())
                    .ok_or_else(|| "a percentage such as \"5%\"".to_string())
                    .and_then(|t| parse_target_ci(&t));
                keys.target_ci = Some(parsed.map_err(|msg| origin.at(at, format!("target_ci: {msg}")))?);
            }
            "max_repeat" | "max-repeat" => {
                let parsed = text_of(value.get_ref())
                    .ok_or_else(|| "a whole number".to_string())
                    .and_then(|t| parse_max_repeat(&t));
                keys.max_repeat = Some((parsed.map_err(|msg| origin.at(at, format!("max_repeat: {msg}")))?, at));
            }
            "margin" => {
                let parsed = text_of(value.get_ref())
                    .ok_or_else(|| "a percentage such as \"10%\"".to_string())
                    .and_then(|t| parse_margin(&t));
                keys.margin = parsed.map_err(|msg| origin.at(at, format!("margin: {msg}")))?;
            }
            "compare" => {
                let axis = value.get_ref().as_str().ok_or_else(|| {
                    origin.at(at, "compare names the axis whose values are compared, e.g. compare = \"policy\"")
                })?;
                keys.compare = Some((key_name(&normalise(axis)), at));
            }
            "ask" => keys.ask = Some(parse_ask(origin, family, value)?),
            "full" => keys.overrides = Some(value),
            _ if family.key_hint(name).is_some() => {
                return Err(origin.at(at, family.key_hint(name).unwrap_or_default()));
            }
            // Keys such as a command's `cmd`: one value each, never an axis.
            _ if family.whole_value_keys().contains(&name) => {
                let whole = whole_value(value.get_ref()).ok_or_else(|| {
                    origin.at(at, format!("{name} must be a string, a number, true/false, or a list or table of them"))
                })?;
                let one = Cell::from_iter([(name, whole.clone())]);
                FamilyOptions::from_keys(family, &one).map_err(|msg| origin.at(at, format!("{name}: {msg}")))?;
                keys.whole_values.push((name.to_string(), whole));
            }
            // A machine setting (`cgroup`, `sysctl`, ...; `model::settings`): an axis like any
            // other, each value its canonical text.
            _ if crate::model::settings::is_key(name) => {
                let texts =
                    crate::model::settings::values(name, value.get_ref().clone()).map_err(|m| origin.at(at, m))?;
                keys.params.push((name.to_string(), texts.into_iter().map(CellValue::Text).collect(), at));
            }
            _ => keys.params.push((check_key(origin, family, flags, key)?, values_of(origin, name, value)?, at)),
        }
    }
    Ok(keys)
}

/// `max_repeat` without its offset, once checked: it needs `target_ci`, and is at least
/// `repeat`.
fn checked_max_repeat(
    origin: &Origin,
    max_repeat: Option<(u32, usize)>,
    target_ci: Option<f64>,
    repeat: u32,
) -> Result<Option<u32>> {
    if let Some((max, at)) = max_repeat {
        if target_ci.is_none() {
            return Err(
                origin.at(at, "max_repeat applies to adaptive repeats: add target_ci (e.g. target_ci = \"5%\")")
            );
        }
        if max < repeat {
            return Err(origin.at(at, format!("max_repeat = {max} is below repeat = {repeat}, the minimum")));
        }
    }
    Ok(max_repeat.map(|(n, _)| n))
}

/// Check the `full` table, and under --full put its values in place of the parameters'
/// (or add them).
fn apply_full(
    origin: &Origin,
    family: Family,
    flags: &[(String, bool)],
    overrides: &Spanned<Toml>,
    full: bool,
    params: &mut Vec<Param>,
) -> Result<()> {
    let Toml::Table(table) = overrides.get_ref() else {
        return Err(origin.at(overrides.span().start, "full must be a table of the keys to change under --full"));
    };
    if full {
        for (name, value) in table {
            let flag = normalise(name);
            if !flags.iter().any(|(f, _)| *f == flag) {
                return Err(origin.at(
                    overrides.span().start,
                    format!("unknown key '{name}' in full for a {} experiment", family.as_str()),
                ));
            }
            let values = values_of(origin, name, &Spanned::new(overrides.span(), value.clone()))?;
            match params.iter_mut().find(|(k, _, _)| *k == flag) {
                Some(existing) => existing.1 = values,
                None => params.push((flag, values, overrides.span().start)),
            }
        }
    }
    Ok(())
}

/// The axis whose values the experiment compares: the one named by `compare`, which must
/// be an axis, or else policy where the family compares it by default.
fn compare_axis(
    origin: &Origin,
    family: Family,
    compare: Option<(String, usize)>,
    axes: &[String],
) -> Result<Option<String>> {
    Ok(match compare {
        Some((axis, at)) if !axes.contains(&axis) => {
            return Err(origin.at(
                at,
                format!(
                "compare = \"{axis}\" is not an axis of this experiment: give {axis} a list of two or more values{}",
                if axes.is_empty() { String::new() } else { format!(", or compare one of {}", axes.join(", ")) }
            ),
            ))
        }
        Some((axis, _)) => Some(axis),
        None if family.compares_policy_by_default() && axes.iter().any(|a| a == "policy") => Some("policy".to_string()),
        None => None,
    })
}

/// The cross product of the parameters' values, first key outermost: each combination
/// with the offsets of the values it took. At most a million.
fn cross_product(origin: &Origin, start: usize, params: &[Param]) -> Result<Vec<(Cell, Vec<usize>)>> {
    let mut combos: Vec<(Cell, Vec<usize>)> = vec![(Cell::new(), Vec::new())];
    for (key, values, at) in params {
        let mut next = Vec::with_capacity(combos.len() * values.len());
        for (combo, offsets) in &combos {
            for value in values {
                let mut c = combo.clone();
                c.insert(key_name(key), value.clone());
                let mut o = offsets.clone();
                o.push(*at);
                next.push((c, o));
            }
        }
        combos = next;
        if combos.len() > 1_000_000 {
            return Err(origin.at(start, "this experiment expands to more than a million combinations"));
        }
    }
    Ok(combos)
}

/// A policy axis that mixes deadline with other policies: the reservation keys (and
/// taskset's reclaim) are the deadline combinations' alone, and the others are run
/// once, not once per reservation. Other experiments' combinations are returned as
/// they are.
fn deadline_keys_for_deadline_only(params: &[Param], combos: Vec<(Cell, Vec<usize>)>) -> Vec<(Cell, Vec<usize>)> {
    let mixed_policies = params
        .iter()
        .any(|(k, v, _)| k == cell::axis::POLICY && v.len() > 1 && v.iter().any(|p| p.as_str() == Some("deadline")));
    if !mixed_policies {
        return combos;
    }
    let mut kept: Vec<(Cell, Vec<usize>)> = Vec::with_capacity(combos.len());
    for (mut combo, offsets) in combos {
        if !combo.is_deadline() {
            for key in cell::DEADLINE_ONLY {
                combo.remove(key);
            }
        }
        if !kept.iter().any(|(c, _)| *c == combo) {
            kept.push((combo, offsets));
        }
    }
    kept
}

/// Check one `[[experiment]]` table and expand it into its parameter combinations.
fn check_experiment(
    origin: &Origin,
    table: &Spanned<ExperimentTable>,
    full: bool,
) -> Result<(Experiment, Vec<Combination>)> {
    let start = table.span().start;
    let entries = table.get_ref();
    let family = experiment_family(origin, start, entries)?;
    let flags = family_flags(family);
    let ExperimentKeys {
        repeat,
        warmup,
        target_ci,
        max_repeat,
        margin,
        compare,
        ask,
        mut params,
        overrides,
        whole_values,
    } = read_keys(origin, family, &flags, entries)?;
    let max_repeat = checked_max_repeat(origin, max_repeat, target_ci, repeat)?;
    if let Some(overrides) = overrides {
        apply_full(origin, family, &flags, overrides, full, &mut params)?;
    }
    let axes: Vec<String> = params.iter().filter(|(_, v, _)| v.len() > 1).map(|(k, _, _)| key_name(k)).collect();
    let compare = compare_axis(origin, family, compare, &axes)?;
    let combos = cross_product(origin, start, &params)?;
    for (key, values, at) in params.iter().filter(|(k, _, _)| !crate::model::settings::is_key(k)) {
        for value in values {
            check_value(origin, family, &flags, key, value, *at)?;
        }
    }
    let combos = deadline_keys_for_deadline_only(&params, combos);
    let mut out = Vec::with_capacity(combos.len());
    for (mut combo, _) in combos {
        combo.extend(whole_values.iter().cloned());
        let spec = to_spec(origin, family, &combo, &params, start)?;
        // The figures say how to read the output, not what ran: the spec keeps them.
        combo.remove(cell::axis::FIGURES);
        out.push((combo, spec));
    }
    let experiment = Experiment { family, repeat, warmup, target_ci, max_repeat, margin, axes, compare, ask };
    Ok((experiment, out))
}

/// `ask`: the figures an experiment's questions test, of those its family questions (a
/// latency question tests its p99 and its maximum; `ask = ["p99_ns"]` the p99 alone). The
/// runner decides a question on its family's headline, so the list must hold it.
fn parse_ask(origin: &Origin, family: Family, value: &Spanned<Toml>) -> Result<Vec<String>> {
    let at = value.span().start;
    let questioned = family.questioned();
    if questioned.len() < 2 {
        return Err(origin.at(
            at,
            format!(
                "ask applies to latency experiments: a {} question tests one figure, with nothing to leave out",
                family.as_str()
            ),
        ));
    }
    let offered = questioned.iter().map(|f| format!("\"{}\"", f.key)).collect::<Vec<_>>().join(", ");
    let keys: Vec<String> = match value.get_ref() {
        Toml::String(s) => vec![s.clone()],
        Toml::Array(items) => items
            .iter()
            .map(|v| v.as_str().map(String::from))
            .collect::<Option<_>>()
            .ok_or_else(|| origin.at(at, format!("ask is a list of figure keys, e.g. ask = [{offered}]")))?,
        _ => return Err(origin.at(at, format!("ask is a list of figure keys, e.g. ask = [{offered}]"))),
    };
    if let Some(unknown) = keys.iter().find(|k| !questioned.iter().any(|f| f.key == k.as_str())) {
        return Err(origin.at(at, format!("ask: a {} question tests {offered}, not \"{unknown}\"", family.as_str())));
    }
    if let Some(twice) = keys.iter().enumerate().find_map(|(i, k)| keys[..i].contains(k).then_some(k)) {
        return Err(origin.at(at, format!("ask names \"{twice}\" twice")));
    }
    let headline = crate::families::figures::headline(family).key;
    if !keys.iter().any(|k| k == headline) {
        return Err(origin
            .at(at, format!("ask must hold \"{headline}\": a run decides its {} questions on it", family.as_str())));
    }
    Ok(keys)
}

/// TOML keys may be written `work_kb` or `work-kb`; flags use dashes.
fn normalise(key: &str) -> String {
    key.replace('_', "-")
}

/// How a parameter is stored and shown: `work_kb` (JSON- and pandas-friendly).
fn key_name(flag: &str) -> String {
    flag.replace('-', "_")
}

fn check_key(origin: &Origin, family: Family, flags: &[(String, bool)], key: &Spanned<String>) -> Result<String> {
    let flag = normalise(key.get_ref());
    if OUTPUT_ONLY.contains(&flag.as_str()) || flag == "repeat" {
        let why = if flag == "repeat" {
            "repeat is the suite's own key and counts every trial"
        } else {
            "results go to the database; use `schedlab show` or `export`"
        };
        return Err(origin.at(key.span().start, format!("key '{}' does not apply in a suite: {why}", key.get_ref())));
    }
    if !flags.iter().any(|(f, _)| *f == flag) {
        let mut known: Vec<String> = flags.iter().map(|(f, _)| key_name(f)).collect();
        known.extend(["repeat", "warmup", "target_ci", "max_repeat", "margin", "ask", "full"].map(String::from));
        known.extend(crate::model::settings::KEYS.map(String::from));
        return Err(origin.at(
            key.span().start,
            format!(
                "unknown key '{}' for a {} experiment; expected one of {}",
                key.get_ref(),
                family.as_str(),
                known.join(", ")
            ),
        ));
    }
    Ok(flag)
}

/// A TOML value as a cell's: a scalar, or a list or table of values; `None` for a date,
/// which no key takes.
fn whole_value(value: &Toml) -> Option<CellValue> {
    Some(match value {
        Toml::String(s) => CellValue::Text(s.clone()),
        Toml::Integer(i) => CellValue::Integer(*i),
        Toml::Float(f) => CellValue::from(*f),
        Toml::Boolean(b) => CellValue::Bool(*b),
        Toml::Array(items) => CellValue::List(items.iter().map(whole_value).collect::<Option<_>>()?),
        Toml::Table(table) => {
            CellValue::Table(table.iter().map(|(k, v)| Some((k.as_str(), whole_value(v)?))).collect::<Option<Cell>>()?)
        }
        Toml::Datetime(_) => return None,
    })
}

/// A key's values: one for a scalar, several for a list (an axis).
fn values_of(origin: &Origin, name: &str, value: &Spanned<Toml>) -> Result<Vec<CellValue>> {
    let at = value.span().start;
    let scalar = |v: &Toml| -> Result<CellValue> {
        match v {
            Toml::Array(_) | Toml::Table(_) => None,
            scalar => whole_value(scalar),
        }
        .ok_or_else(|| origin.at(at, format!("{name} must be a number, a string, true/false or a list of them")))
    };
    match value.get_ref() {
        Toml::Array(items) if items.is_empty() => {
            Err(origin.at(at, format!("{name} is an empty list: give at least one value")))
        }
        Toml::Array(items) => {
            let mut out = Vec::new();
            for item in items {
                let v = scalar(item)?;
                if !out.contains(&v) {
                    out.push(v);
                }
            }
            Ok(out)
        }
        other => Ok(vec![scalar(other)?]),
    }
}

/// Check one key's value alone, with the parser its flag uses, so an error names the key
/// and its line.
fn check_value(
    origin: &Origin,
    family: Family,
    flags: &[(String, bool)],
    key: &str,
    value: &CellValue,
    at: usize,
) -> Result<()> {
    let name = key_name(key);
    let takes_value = flags.iter().find(|(f, _)| f == key).is_some_and(|(_, t)| *t);
    if !takes_value && !value.is_bool() {
        return Err(origin.at(at, format!("{name} is a switch: write {name} = true or false")));
    }
    if takes_value && value.is_bool() {
        return Err(origin.at(at, format!("{name} needs a value, not true/false")));
    }
    let shown = value.text();
    // A time that needs its unit, given as a bare number: say how to write it in TOML.
    if UNIT_REQUIRED.contains(&key) && is_bare_number(&shown) {
        let written = if value.is_text() { format!("\"{shown}\"") } else { shown.clone() };
        return Err(origin
            .at(at, format!("{name} = {written} has no unit: write \"{shown}us\", \"{shown}ms\" or \"{shown}s\"")));
    }
    let one = Cell::from_iter([(key, value.clone())]);
    FamilyOptions::from_keys(family, &one)
        .map(|_| ())
        .map_err(|msg| origin.at(at, format!("{name}: invalid value '{shown}': {msg}")))
}

/// One combination's spec, checked as its command checks its flags, and that it is one
/// trial (a string such as procs = "2,4" would be several).
fn to_spec(
    origin: &Origin,
    family: Family,
    combo: &Cell,
    params: &[(String, Vec<CellValue>, usize)],
    experiment_at: usize,
) -> Result<TrialSpec> {
    let offset_of = |flag: &str| params.iter().find(|(k, _, _)| k == flag).map_or(experiment_at, |(_, _, at)| *at);
    if let Some((_, message)) = family.required_key().filter(|(key, _)| !combo.contains(key)) {
        return Err(origin.at(experiment_at, message));
    }
    // Settings are switched around the trial, not options of its family.
    let mut combo = combo.clone();
    combo.retain(|k| !crate::model::settings::is_key(k));
    let options = FamilyOptions::from_keys(family, &combo).map_err(|msg| origin.at(experiment_at, msg))?;
    match options.to_specs() {
        Ok(mut specs) if specs.len() == 1 => Ok(specs.remove(0)),
        Ok(specs) => {
            let several = params
                .iter()
                .find(|(k, v, _)| {
                    v.len() == 1
                        && v[0].as_str().is_some_and(|s| s.contains(',') || s.contains(".."))
                        && (k == cell::axis::PROCS || k == cell::axis::POLICY)
                })
                .map(|(k, _, _)| k.clone())
                .unwrap_or_else(|| "procs".into());
            Err(origin.at(
                offset_of(&several),
                format!(
                    "{} names {} values in one string: write a list instead, e.g. {} = [2, 4, 8]",
                    key_name(&several),
                    specs.len(),
                    key_name(&several)
                ),
            ))
        }
        Err(e) => {
            let msg = e.to_string();
            let key = params.iter().map(|(k, _, _)| k).find(|k| msg.contains(&format!("--{k}")));
            let at = key.map_or(experiment_at, |k| offset_of(k));
            let prefix = key.map_or(String::new(), |k| format!("{}: ", key_name(k)));
            Err(origin.at(at, format!("{prefix}{}", msg.replace("--", ""))))
        }
    }
}

/// A rough time for one trial on a machine like the 2-vCPU reference VM: enough for a
/// plan's ETA, not a measurement. Includes starting the trial's process.
fn estimate(spec: &TrialSpec) -> Duration {
    const START_S: f64 = 0.02;
    let cpus = crate::sys::sched::allowed_cpus().map(|c| c.len()).unwrap_or(1).max(1) as f64;
    let secs = on_each!(TrialSpec, spec, s => s.estimate_s(cpus));
    Duration::from_secs_f64(secs + START_S)
}

/// "1 min 05 s", "12 s", "2 h 03 min".
pub fn format_estimate(d: Duration) -> String {
    let exact = d.as_secs_f64();
    if exact < 10.0 {
        return format!("{exact:.1} s");
    }
    let s = exact.round() as u64;
    match s {
        0..=59 => format!("{s} s"),
        60..=3599 => format!("{} min {:02} s", s / 60, s % 60),
        _ => format!("{} h {:02} min", s / 3600, (s % 3600) / 60),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::sequential::MARGIN as MARGIN_DEFAULT;

    fn parse_text(text: &str) -> Result<Suite> {
        parse("test.toml", text, "test", false)
    }

    fn err(text: &str) -> String {
        parse_text(text).unwrap_err().to_string()
    }

    #[test]
    fn built_in_suites_parse() {
        for (name, text) in BUILT_IN {
            for full in [false, true] {
                let suite = parse(name, text, name, full).unwrap_or_else(|e| panic!("{name}: {e}"));
                assert!(!suite.trials.is_empty(), "{name}");
                assert!(suite.description.is_some(), "{name} has no description");
            }
        }
    }

    #[test]
    fn a_policy_axis_gives_the_reservation_to_deadline_alone() {
        let text = "[[experiment]]\nfamily = \"latency\"\npolicy = [\"fifo\", \"deadline\"]\nruntime = [\"100us\", \
                    \"200us\"]\nperiod = \"1ms\"\nloops = 10\n";
        let suite = parse_text(text).unwrap();
        let reservation = |spec: &TrialSpec| match spec {
            TrialSpec::Latency(s) => s.beside.deadline,
            other => panic!("a latency suite made {other:?}"),
        };
        let specs: Vec<_> = suite.trials.iter().map(|t| (t.spec.policy(), reservation(&t.spec))).collect();
        assert_eq!(specs.len(), 3, "fifo once, deadline once per runtime: {specs:?}");
        assert_eq!(specs[0], (crate::model::Policy::Fifo, None));
        let runtimes: Vec<u64> = specs[1..].iter().map(|(_, d)| d.unwrap().runtime_ns).collect();
        assert_eq!(runtimes, vec![100_000, 200_000]);
        let e = err("[[experiment]]\nfamily = \"latency\"\npolicy = \"fifo\"\nruntime = \"100us\"\n");
        assert!(e.contains("apply only to") && e.contains("deadline"), "{e}");
    }

    #[test]
    fn cross_product_times_repeats() {
        let suite = parse_text(
            "[[experiment]]\nfamily = \"ring\"\nprocs = [2, 4, 8]\npolicy = [\"other\", \"batch\"]\nlaps = 10\nrepeat = 3\nwarmup = 1\n",
        )
        .unwrap();
        assert_eq!(suite.trials.len(), 3 * 2 * 3);
        assert_eq!(suite.warmups.len(), 3 * 2);
        assert_eq!(suite.experiments[0].axes, vec!["policy", "procs"]);
        let seqs: Vec<usize> = suite.trials.iter().map(|t| t.seq).collect();
        assert_eq!(seqs, (0..18).collect::<Vec<_>>());
        let TrialSpec::Ring(first) = &suite.trials[0].spec else { panic!("not a ring") };
        assert_eq!(
            (first.procs, first.length, first.policy),
            (2, crate::families::ring::model::RingLength::Laps(10), crate::model::Policy::Other)
        );
        assert_eq!(suite.trials[0].configuration(), "ring laps=10 policy=other procs=2");
    }

    #[test]
    fn errors_name_line_and_key() {
        let e = err("[[experiment]]\nfamily = \"workload\"\nworkload = \"cpu\"\n\n\n\npolicy = \"fifoo\"\n");
        assert!(
            e.contains("test.toml:7") && e.contains("unknown policy 'fifoo'") && e.contains("expected one of"),
            "{e}"
        );
        let e = err("[[experiment]]\nfamily = \"ring\"\nlapz = 5\n");
        assert!(e.contains("test.toml:3") && e.contains("unknown key 'lapz'"), "{e}");
        let e = err("[[experiment]]\nfamily = \"rings\"\n");
        assert!(e.contains("test.toml:2") && e.contains("unknown family"), "{e}");
        let e = err("[[experiment]]\nfamily = \"ring\"\nprocs = \"2,4\"\n");
        assert!(e.contains("write a list"), "{e}");
        let e = err("[[experiment]]\nfamily = \"ring\"\nprocs = [2, 1]\n");
        assert!(e.contains("test.toml:3") && e.contains("at least 2"), "{e}");
        let e = err("[[experiment]\nfamily = \"ring\"\n");
        assert!(e.contains("test.toml:1"), "{e}");
        let e = err("[[experiment]]\nfamily = \"ring\"\njson = true\n");
        assert!(e.contains("does not apply in a suite"), "{e}");
        let e = err("[[experiment]]\nfamily = \"latency\"\nprio = 50\n");
        assert!(e.contains("test.toml:3") && e.contains("prio"), "{e}");
        assert!(err("name = \"x\"\n").contains("no experiments"));
    }

    #[test]
    fn questions_compare_the_policy_by_default_or_the_axis_named() {
        let suite = parse_text(
            "[[experiment]]\nfamily = \"workload\"\nworkload = \"cpu\"\npolicy = [\"other\", \"fifo\"]\n\
             procs = [2, 8]\nrepeat = 2\n[[experiment]]\nfamily = \"ring\"\nprocs = [2, 4]\n\
             [[experiment]]\nfamily = \"workload\"\nworkload = \"cpu\"\niterations = [1000, 1100]\n\
             compare = \"iterations\"\n[[experiment]]\nfamily = \"latency\"\npolicy = [\"other\", \"fifo\"]\n",
        )
        .unwrap();
        let compared: Vec<Option<&str>> = suite.experiments.iter().map(|e| e.compare.as_deref()).collect();
        assert_eq!(compared, [Some("policy"), None, Some("iterations"), Some("policy")]);
        // Two questions of the first (procs 2 and 8), one of the third, one latency: two
        // claims each, four for latency (p99 and max).
        assert_eq!(suite.questions().len(), 4);
        assert_eq!(suite.family_of_claims(), 2 + 2 + 2 + 4);
        let first = &suite.trials[0];
        let same = suite.trials.iter().filter(|t| suite.question_of(t) == suite.question_of(first)).count();
        assert_eq!(same, 4, "OTHER and FIFO at one process count, two repeats each");
        let e = err("[[experiment]]\nfamily = \"ring\"\nprocs = [2, 4]\ncompare = \"policy\"\n");
        assert!(e.contains("test.toml:4") && e.contains("not an axis") && e.contains("compare one of procs"), "{e}");
        let e = err("[[experiment]]\nfamily = \"ring\"\ncompare = 3\n");
        assert!(e.contains("compare names the axis"), "{e}");
    }

    #[test]
    fn a_margin_is_the_experiments_own_and_stored_with_its_text() {
        let text = "[[experiment]]\nfamily = \"workload\"\nworkload = \"cpu\"\npolicy = [\"other\", \"fifo\"]\nmargin = \"10%\"\n\
                    [[experiment]]\nfamily = \"workload\"\nworkload = \"io\"\npolicy = [\"other\", \"fifo\"]\n";
        let suite = parse_text(text).unwrap();
        assert_eq!((suite.experiments[0].margin, suite.experiments[1].margin), (0.10, MARGIN_DEFAULT));
        // A margin is not an axis: the cells are the policies alone.
        assert_eq!(suite.trials.len(), 4);
        let asking = asked_by_older_runs_suite_text(text, false);
        assert_eq!(asking, suite.asked());
        // An older run's text is read as the run read it: a question `--full` alone asks.
        let only_full = "[[experiment]]\nfamily = \"workload\"\nworkload = \"cpu\"\n\
                         [experiment.full]\npolicy = [\"other\", \"fifo\"]\n";
        assert_eq!(asked_by_older_runs_suite_text(only_full, false)[0].compare, None);
        assert_eq!(asked_by_older_runs_suite_text(only_full, true)[0].compare.as_deref(), Some("policy"));
        assert_eq!(asking[0], Asking { compare: Some("policy".into()), margin: 0.10, ask: None });
        assert_eq!(asking[1].margin, MARGIN_DEFAULT);
        for (bad, says) in [("\"0%\"", "above 0"), ("\"60%\"", "at most 50%"), ("\"wide\"", "not a margin")] {
            let e = err(&format!("[[experiment]]\nfamily = \"ring\"\nmargin = {bad}\n"));
            assert!(e.contains("test.toml:3") && e.contains("margin") && e.contains(says), "{e}");
        }
    }

    #[test]
    fn ask_keeps_some_of_a_questions_figures_and_is_stored() {
        let text =
            "[[experiment]]\nfamily = \"latency\"\npolicy = [\"other\", \"fifo\"]\nloops = 100\nask = [\"p99_ns\"]\n\
                    [[experiment]]\nfamily = \"latency\"\npolicy = [\"other\", \"fifo\"]\nloops = 100\n";
        let suite = parse_text(text).unwrap();
        let keys = |e: &Experiment| e.questioned().iter().map(|f| f.key).collect::<Vec<_>>();
        assert_eq!(keys(&suite.experiments[0]), ["p99_ns"]);
        assert_eq!(keys(&suite.experiments[1]), ["p99_ns", "max_ns"]);
        // Not an axis: two cells each; the run's family of claims is 2 + 4.
        assert_eq!(suite.trials.len(), 4);
        assert_eq!(suite.family_of_claims(), 6);
        let asking = suite.asked();
        assert_eq!(asking[0].ask.as_deref(), Some(&["p99_ns".to_string()][..]));
        assert_eq!(asking, asked_by_older_runs_suite_text(text, false));
        // One string is a list of one; the stored JSON has no `ask` where none was given.
        let one =
            parse_text("[[experiment]]\nfamily = \"latency\"\npolicy = [\"other\", \"fifo\"]\nask = \"p99_ns\"\n")
                .unwrap();
        assert_eq!(one.experiments[0].ask.as_deref(), Some(&["p99_ns".to_string()][..]));
        assert!(!serde_json::to_string(&asking[1]).unwrap().contains("ask"));
        for (bad, says) in [
            ("[\"p50_ns\"]", "tests \"p99_ns\", \"max_ns\", not \"p50_ns\""),
            ("[\"max_ns\"]", "ask must hold \"p99_ns\""),
            ("3", "ask is a list of figure keys"),
            ("[\"p99_ns\", \"p99_ns\"]", "ask names \"p99_ns\" twice"),
            ("[3]", "ask is a list of figure keys"),
        ] {
            let e =
                err(&format!("[[experiment]]\nfamily = \"latency\"\npolicy = [\"other\", \"fifo\"]\nask = {bad}\n"));
            assert!(e.contains("test.toml:4") && e.contains(says), "{e}");
        }
        let e = err("[[experiment]]\nfamily = \"workload\"\nworkload = \"cpu\"\nask = [\"wall_s\"]\n");
        assert!(e.contains("test.toml:4") && e.contains("ask applies to latency experiments"), "{e}");
    }

    #[test]
    fn adaptive_keys_are_parsed_and_checked() {
        let suite = parse_text(
            "budget = \"40s\"\n[[experiment]]\nfamily = \"ring\"\nprocs = 2\nrepeat = 6\ntarget_ci = \"5%\"\nmax_repeat = \"20\"\n\
             [[experiment]]\nfamily = \"ring\"\nprocs = 3\ntarget-ci = 0.1\n[[experiment]]\nfamily = \"ring\"\nprocs = 4\n",
        )
        .unwrap();
        assert_eq!(suite.budget, Some(Duration::from_secs(40)));
        let e = &suite.experiments;
        assert_eq!((e[0].target_ci, e[0].max_repeat, e[0].repeat), (Some(0.05), Some(20), 6));
        assert_eq!((e[1].target_ci, e[1].max_repeat), (Some(0.1), None));
        assert_eq!((e[2].target_ci, e[2].max_repeat), (None, None));
        // Only the minimum is planned.
        assert_eq!(suite.trials.len(), 6 + 1 + 1);
        let e = err("[[experiment]]\nfamily = \"ring\"\n\ntarget_ci = \"0%\"\n");
        assert!(e.contains("test.toml:4") && e.contains("target_ci") && e.contains("above 0"), "{e}");
        let e = err("[[experiment]]\nfamily = \"ring\"\ntarget_ci = \"five\"\n");
        assert!(e.contains("test.toml:3") && e.contains("not a target"), "{e}");
        let e = err("[[experiment]]\nfamily = \"ring\"\nmax_repeat = 9\n");
        assert!(e.contains("test.toml:3") && e.contains("add target_ci"), "{e}");
        let e = err("[[experiment]]\nfamily = \"ring\"\nrepeat = 8\ntarget_ci = \"5%\"\nmax_repeat = 4\n");
        assert!(e.contains("test.toml:5") && e.contains("below repeat = 8"), "{e}");
        let e = err("budget = \"soon\"\n[[experiment]]\nfamily = \"ring\"\nprocs = 2\n");
        assert!(e.contains("test.toml:1") && e.contains("budget") && e.contains("not a duration"), "{e}");
    }

    #[test]
    fn bad_adaptive_values_name_the_fix() {
        let e = err("[[experiment]]\nfamily = \"ring\"\ntarget_ci = -5\n");
        assert!(e.contains("test.toml:3: target_ci: '-5' is negative"), "{e}");
        let e = err("[[experiment]]\nfamily = \"ring\"\ntarget_ci = \"nan\"\n");
        assert!(e.contains("test.toml:3: target_ci: 'nan' is not a number"), "{e}");
        let e = err("[[experiment]]\nfamily = \"ring\"\ntarget_ci = 1\n");
        assert!(e.contains("write 1% for one percent"), "{e}");
        let e = err("[[experiment]]\nfamily = \"ring\"\ntarget_ci = \"100%\"\n");
        assert!(e.contains("below 100%"), "{e}");
        let e = err("[[experiment]]\nfamily = \"ring\"\ntarget_ci = \"5%\"\nmax_repeat = 0\n");
        assert!(e.contains("test.toml:4: max_repeat: 0 allows no trial at all"), "{e}");
        let e = err("budget = 0\n[[experiment]]\nfamily = \"ring\"\n");
        assert!(e.contains("test.toml:1: budget: a budget of '0' leaves no time for any trial"), "{e}");
        let e = err("budget = \"-1m\"\n[[experiment]]\nfamily = \"ring\"\n");
        assert!(e.contains("test.toml:1: budget: '-1m' is negative"), "{e}");
    }

    #[test]
    fn times_that_need_a_unit_say_how_to_write_it() {
        let at = |key_value: &str| err(&format!("[[experiment]]\nfamily = \"latency\"\nloops = 10\n{key_value}\n"));
        let e = at("interval = 5");
        assert!(e.contains("test.toml:4: interval = 5 has no unit: write \"5us\", \"5ms\" or \"5s\""), "{e}");
        let e = at("interval = \"5\"");
        assert!(e.contains("interval = \"5\" has no unit: write \"5us\""), "{e}");
        let e = at("interval = 2.5");
        assert!(e.contains("interval = 2.5 has no unit: write \"2.5us\""), "{e}");
        let e = at("interval = [\"1ms\", 200]");
        assert!(e.contains("interval = 200 has no unit"), "{e}");
        let e = at("policy = \"deadline\"\nruntime = \"10us\"\nperiod = 100");
        assert!(e.contains("period = 100 has no unit: write \"100us\""), "{e}");
        let e = at("interval = \"1ns\"");
        assert!(e.contains("test.toml:4: interval") && e.contains("10 µs floor"), "{e}");
        // duration reads a bare number as seconds, as cyclictest's -D does.
        let suite = parse_text("[[experiment]]\nfamily = \"latency\"\nduration = 2\n").unwrap();
        let TrialSpec::Latency(spec) = &suite.trials[0].spec else { panic!("not latency") };
        assert_eq!(spec.length, crate::families::latency::model::LatencyLength::Duration(Duration::from_secs(2)));
    }

    #[test]
    fn trial_lengths_are_checked_with_the_key_and_line() {
        let e = err("[[experiment]]\nfamily = \"ring\"\nprocs = 2\nduration = \"100us\"\n");
        assert!(e.contains("test.toml:4: duration:") && e.contains("give duration 1ms or more"), "{e}");
        let e = err("[[experiment]]\nfamily = \"ring\"\nprocs = 2\nduration = \"25h\"\n");
        assert!(e.contains("test.toml:4: duration") && e.contains("24 h"), "{e}");
        let e = err("[[experiment]]\nfamily = \"latency\"\nloops = 100_000_000_000\n");
        assert!(e.contains("test.toml:3: loops:") && e.contains("at most 86400000 loops"), "{e}");
        let e = err("[[experiment]]\nfamily = \"ring\"\nlaps = -1\n");
        assert!(e.contains("test.toml:3: laps") && e.contains("-1 laps is negative"), "{e}");
    }

    #[test]
    fn a_trial_longer_than_the_trial_timeout_is_refused() {
        let suite =
            parse_text("[[experiment]]\nfamily = \"latency\"\npolicy = \"other\"\nduration = \"20m\"\n").unwrap();
        let e = suite.check_trial_timeout(Duration::from_secs(600)).unwrap_err().to_string();
        assert!(
            e.contains("latency duration=20m policy=other measures for 20 min 00 s")
                && e.contains("--trial-timeout 10m would stop it")
                && e.contains("--trial-timeout 21m or more"),
            "{e}"
        );
        assert!(suite.check_trial_timeout(Duration::from_secs(1260)).is_ok());
        // Loops at an interval: 850 x 11.76 ms is 10 s.
        let hz = parse_text("[[experiment]]\nfamily = \"latency\"\nfreq = 85\nloops = 850\n").unwrap();
        assert!(hz.check_trial_timeout(Duration::from_secs(5)).unwrap_err().to_string().contains("10 s"));
        // A lap count's time depends on the machine: not judged.
        let laps = parse_text("[[experiment]]\nfamily = \"ring\"\nprocs = 2\nlaps = 1_000_000\n").unwrap();
        assert!(laps.check_trial_timeout(Duration::from_secs(1)).is_ok());
    }

    #[test]
    fn a_full_table_sets_the_budget_under_full() {
        let text = "budget = \"2m\"\n[full]\nbudget = \"30m\"\n[[experiment]]\nfamily = \"ring\"\nprocs = 2\n";
        let quick = parse("t", text, "t", false).unwrap();
        let full = parse("t", text, "t", true).unwrap();
        assert_eq!((quick.budget, quick.budget_at.as_deref()), (Some(Duration::from_secs(120)), Some("t:1: budget")));
        assert_eq!(
            (full.budget, full.budget_at.as_deref()),
            (Some(Duration::from_secs(1800)), Some("t:3: [full] budget"))
        );
        let e = err("[full]\nbudget = \"0s\"\n[[experiment]]\nfamily = \"ring\"\n");
        assert!(e.contains("test.toml:2: [full] budget: a budget of '0s' leaves no time"), "{e}");
        let e = err("[full]\nrepeat = 3\n[[experiment]]\nfamily = \"ring\"\n");
        assert!(e.contains("test.toml:2") && e.contains("expected `budget`"), "{e}");
    }

    #[test]
    fn full_overrides_only_under_full() {
        let text = "[[experiment]]\nfamily = \"workload\"\nworkload = \"cpu\"\niterations = 1000\n[experiment.full]\niterations = 5000\n";
        let quick = parse("t", text, "t", false).unwrap();
        let full = parse("t", text, "t", true).unwrap();
        assert_eq!(quick.trials[0].params.get("iterations"), Some(&CellValue::Integer(1000)));
        assert_eq!(full.trials[0].params.get("iterations"), Some(&CellValue::Integer(5000)));
    }

    #[test]
    fn estimates_are_plausible() {
        let suite = parse_text("[[experiment]]\nfamily = \"latency\"\nloops = 1000\ninterval = \"1ms\"\n").unwrap();
        let secs = suite.estimate().as_secs_f64();
        assert!((1.0..1.1).contains(&secs), "{secs}");
        assert_eq!(format_estimate(Duration::from_secs(65)), "1 min 05 s");
    }
}
