//! Browsing and moving stored results: `machine`, `list`, `show`, `delete`, `export`,
//! `import`.

use crate::cli::{DeleteArgs, ExportArgs, ExportFormat, ImportArgs, ListArgs, MachineArgs, PushArgs, ShowArgs};
use crate::error::{describe_io, Error, Result};
use crate::families::ring::import as ncar;
use crate::report::cells;
use crate::report::output::emit;
use crate::report::stored;
use crate::report::table::Table;
use crate::store::{export, seeds};
use crate::store::{Access, Location, RunRecord, RunStatus, Store};
use crate::sys::machine::{self, Machine};

use std::io::Write;

pub fn machine(args: &MachineArgs) -> Result<()> {
    let m = Machine::capture();
    let value = serde_json::to_value(&m).map_err(|e| Error::failed(format!("encoding the fingerprint: {e}")))?;
    let format = args.output.format();
    if format != crate::cli::TableFormat::Text {
        return emit(crate::report::output::object_text(&value, format).trim_end());
    }
    emit(machine::describe(&value).trim_end())?;
    for w in m.noise_warnings() {
        emit(&format!("warning: {w}"))?;
    }
    Ok(())
}

fn open_existing(db: &crate::cli::DbArg, access: Access) -> Result<Store> {
    Store::open_arg(db.db.as_deref(), access)
}

/// The A/B session a run belongs to: its side ("a" or "b") and its pair's uuid.
fn ab_link(run: &RunRecord) -> Option<(String, String)> {
    let ab = run.options.ab.as_ref()?;
    Some((ab.side.clone(), ab.pair.clone()))
}

/// "A/B pair with run 12 (this is A)", or the pair's uuid when it is not in this database.
pub fn ab_text(store: &Store, run: &RunRecord) -> Result<Option<String>> {
    let Some((side, pair)) = ab_link(run) else { return Ok(None) };
    let with = match store.run_by_uuid(&pair)? {
        Some(id) => format!("run {id}"),
        None => format!("run {pair} (not in this database)"),
    };
    Ok(Some(format!("A/B pair with {with} (this is {})", side.to_uppercase())))
}

/// A run as `list --json` writes it, one line each.
#[derive(serde::Serialize)]
struct ListLine<'a> {
    id: i64,
    uuid: &'a str,
    suite: &'a str,
    hostname: Option<&'a str>,
    kernel: Option<&'a str>,
    started: &'a str,
    ended: Option<&'a str>,
    status: &'a RunStatus,
    planned: i64,
    ok: i64,
    not_ok: i64,
    ab: Option<AbLink>,
}

/// The A/B session a run belongs to: its side, and its pair (the run's id where this
/// database holds it).
#[derive(serde::Serialize)]
struct AbLink {
    side: String,
    pair_uuid: String,
    pair_run: Option<i64>,
}

pub fn list(args: &ListArgs) -> Result<()> {
    let store = open_existing(&args.db, Access::Read)?;
    let runs = store.runs()?;
    let id_of = |uuid: &str| runs.iter().find(|r| r.run.uuid == uuid).map(|r| r.run.id);
    let format = args.output.format();
    if format == crate::cli::TableFormat::Json {
        for r in &runs {
            let ab = ab_link(&r.run).map(|(side, pair)| AbLink { side, pair_run: id_of(&pair), pair_uuid: pair });
            let m = &r.run.machine;
            let line = ListLine {
                id: r.run.id,
                uuid: &r.run.uuid,
                suite: &r.run.suite_name,
                hostname: m.hostname(),
                kernel: m.kernel_release(),
                started: &r.run.started,
                ended: r.run.ended.as_deref(),
                status: &r.run.status,
                planned: r.run.planned,
                ok: r.ok,
                not_ok: r.not_ok,
                ab,
            };
            emit(&crate::report::json_line(&line))?;
        }
        return Ok(());
    }
    if runs.is_empty() && format == crate::cli::TableFormat::Text {
        return emit(&format!("{} holds no runs yet: `schedlab run` makes one", store.location()));
    }
    let mut table = Table::new([
        "Run",
        "Suite",
        "Machine",
        "Kernel",
        "Started (UTC)",
        "Status",
        "Trials ok",
        "Not ok",
        "Planned",
        "A/B",
    ])
    .left_align(1)
    .left_align(2)
    .left_align(3)
    .left_align(4)
    .left_align(5)
    .left_align(9);
    for r in &runs {
        let m = &r.run.machine;
        let text = |field: Option<&str>| field.unwrap_or("unknown").to_string();
        table.push(vec![
            r.run.id.to_string(),
            r.run.suite_name.clone(),
            text(m.hostname()),
            text(m.kernel_release()),
            r.run.started.replace('T', " ").chars().take(19).collect(),
            r.run.status.to_string(),
            r.ok.to_string(),
            r.not_ok.to_string(),
            r.run.planned.to_string(),
            match ab_link(&r.run) {
                Some((side, pair)) => format!(
                    "{}, pair with {}",
                    side.to_uppercase(),
                    id_of(&pair).map_or_else(|| "a run not here".to_string(), |id| format!("run {id}"))
                ),
                None => String::new(),
            },
        ]);
    }
    emit(table_in(&table, format).trim_end())
}

/// A table in the chosen text format (JSON is each command's own).
pub fn table_in(table: &Table, format: crate::cli::TableFormat) -> String {
    match format {
        crate::cli::TableFormat::Csv => table.render_csv(),
        crate::cli::TableFormat::Markdown => table.render_markdown(),
        _ => table.render(),
    }
}

pub fn show(args: &ShowArgs) -> Result<()> {
    let store = open_existing(&args.db, Access::Read)?;
    let id = store.resolve_run(&args.run)?;
    if args.format == crate::cli::TableFormat::Text {
        return print_run(&store, id, args.machine);
    }
    let (run, trials) = (store.run(id)?, store.trials(id)?);
    let findings = crate::decide::findings::findings_of_run(&run, &trials);
    let view = crate::report::exporter::RunView { run: &run, trials: &trials, findings: &findings };
    emit(crate::report::exporter::for_format(args.format).render(&view).trim_end())
}

/// A run's header, optionally its fingerprint, and its tables.
pub fn print_run(store: &Store, id: i64, with_machine: bool) -> Result<()> {
    let run = store.run(id)?;
    let trials = store.trials(id)?;
    let ok = trials.iter().filter(|t| t.is_ok()).count();
    emit(stored::describe_run(&run, ok, trials.len() - ok).trim_end())?;
    if let Some(line) = stored::steal_reruns(&trials) {
        emit(&line)?;
    }
    if let Some(floor) = &run.machine.fields().noise_floor {
        emit(&format!("noise floor (probed before the trials): {}", floor.summary()))?;
    }
    if let Some(link) = ab_text(store, &run)? {
        // ab_text found the session, so the options hold it.
        if let Some(ab) = &run.options.ab {
            emit(&format!(
                "{link}: {} blocks a side, order {}, seed {}; setup `{}`{}{}",
                ab.blocks,
                ab.order,
                ab.seed,
                ab.setup,
                ab.cleanup.as_ref().map_or(String::new(), |c| format!(", cleanup `{c}`")),
                ab.settings.as_ref().map_or(String::new(), |s| format!("; settings: {}", s.describe()))
            ))?;
        }
    }
    if with_machine {
        emit(machine::describe(run.machine.as_json()).trim_end())?;
    }
    emit(stored::tables_for(&trials, &cells::RunRule::of(&run)).trim_end())?;
    if let Some(text) = crate::report::settings::cgroup_text(&trials) {
        emit(&format!("\n{text}"))?;
    }
    Ok(())
}

pub fn delete(args: &DeleteArgs) -> Result<()> {
    let mut store = open_existing(&args.db, Access::Write)?;
    // Resolve them all first: one bad id deletes nothing.
    let ids = args.runs.iter().map(|r| store.resolve_run(r)).collect::<Result<Vec<_>>>()?;
    for id in ids {
        store.delete_run(id)?;
        eprintln!("schedlab: deleted run {id}");
    }
    Ok(())
}

pub fn export(args: &ExportArgs) -> Result<()> {
    let store = open_existing(&args.db, Access::Read)?;
    let ids = args.runs.iter().map(|r| store.resolve_run(r)).collect::<Result<Vec<_>>>()?;
    let mut runs = Vec::new();
    for id in ids {
        runs.push((store.run(id)?, store.trials(id)?));
    }
    let text = match args.format {
        ExportFormat::Json => export::document(&runs, crate::report::figures::stored)?,
        ExportFormat::Csv => export::csv(&runs, crate::report::figures::stored),
    };
    match &args.output {
        None => {
            let mut out = std::io::stdout().lock();
            match out.write_all(text.as_bytes()).and_then(|_| out.flush()) {
                Ok(()) => Ok(()),
                Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Err(Error::Interrupted(libc::SIGPIPE)),
                Err(e) => Err(Error::os("writing the export", e)),
            }
        }
        Some(path) => crate::report::output::write_atomically(path, text.as_bytes()),
    }
}

pub fn import(args: &ImportArgs) -> Result<()> {
    // Everything is read and checked before the database is opened: bad input writes nothing.
    let runs = if let Some(reference) = &args.reference {
        seeds::reference_runs(reference)?
    } else if let Some(path) = &args.ncar {
        let file = path.display().to_string();
        let text = read_text(path)?;
        let machine = args.machine.as_deref().unwrap_or_default();
        let (run, trials, warnings) = ncar::import_table(&file, &text, machine, args.laps.unwrap_or(ncar::NCAR_LAPS))?;
        for w in &warnings {
            eprintln!("schedlab: warning: {w}");
        }
        vec![(run, trials)]
    } else if let Some(path) = &args.file {
        export::parse_document(&path.display().to_string(), &read_text(path)?)?
    } else {
        return Err(Error::usage("import needs FILE, --ncar FILE or --reference NAME"));
    };
    let mut store = Store::open_arg(args.db.db.as_deref(), Access::Create)?;
    for (run, trials) in &runs {
        let machine = run.machine.hostname().unwrap_or("an unknown machine");
        if let Some(existing) = store.run_by_uuid(&run.uuid)? {
            eprintln!(
                "schedlab: run {} ({}, {machine}) is already in {} as run {existing}; skipped",
                run.uuid,
                run.suite_name,
                store.location()
            );
            continue;
        }
        let id = store.insert_run_with_trials(run, trials)?;
        eprintln!(
            "schedlab: imported run {} ({}, {} trials, from {machine}) as run {id}",
            run.uuid,
            run.suite_name,
            trials.len(),
        );
    }
    Ok(())
}

/// Copy runs into another database, each whole in one transaction, skipping those the
/// target already holds (by UUID): pushing twice changes nothing.
pub fn push(args: &PushArgs) -> Result<()> {
    // Both ends are checked, and every run named resolved, before anything is copied.
    let target = Location::parse(&args.to)?;
    let source = Store::open_arg(args.db.db.as_deref(), Access::Read)?;
    if source.location().to_string() == target.to_string() {
        return Err(Error::usage(format!(
            "--to names {target}, where the runs already are: push copies to another database"
        )));
    }
    let mut ids = Vec::new();
    for name in &args.runs {
        let id = source.resolve_run(name)?;
        if !ids.contains(&id) {
            ids.push(id);
        }
    }
    let mut to = Store::open(&target, Access::Create)?;
    let (mut copied, mut skipped) = (0, 0);
    for id in ids {
        let run = source.run(id)?;
        if let Some(existing) = to.run_by_uuid(&run.uuid)? {
            eprintln!("schedlab: run {id} ({}) is already in {target} as run {existing}; skipped", run.uuid);
            skipped += 1;
            continue;
        }
        // A copy of a run that may still grow would never be completed (push skips a run
        // already there); an interrupted A/B side cannot be resumed, so it is final.
        let may_grow =
            run.status == RunStatus::Running || (run.status == RunStatus::Interrupted && ab_link(&run).is_none());
        if may_grow {
            eprintln!(
                "schedlab: run {id} is {}; skipped: finish it first (`schedlab run --resume {id}`), then push it",
                run.status
            );
            skipped += 1;
            continue;
        }
        let trials = source.trials(id)?;
        let new_id = match to.insert_run_with_trials(&run, &trials) {
            Ok(new_id) => new_id,
            // Another machine pushed the same run a moment ago (its UUID is unique there).
            Err(e) => match to.run_by_uuid(&run.uuid)? {
                Some(existing) => {
                    eprintln!(
                        "schedlab: run {id} ({}) reached {target} meanwhile as run {existing}; skipped",
                        run.uuid
                    );
                    skipped += 1;
                    continue;
                }
                None => return Err(e),
            },
        };
        eprintln!(
            "schedlab: copied run {id} ({}, {}, {} trials) to {target} as run {new_id}",
            run.uuid,
            run.suite_name,
            trials.len()
        );
        copied += 1;
    }
    eprintln!("schedlab: {copied} run(s) copied, {skipped} skipped");
    Ok(())
}

fn read_text(path: &std::path::Path) -> Result<String> {
    std::fs::read_to_string(path)
        .map_err(|e| Error::usage(format!("cannot read {}: {}", path.display(), describe_io(&e))))
}
