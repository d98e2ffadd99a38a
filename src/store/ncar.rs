//! Results in the 1992 NCAR report's table format, and the report's own nine machines.
//!
//! J.L. Sloan's "Context Switch Time Scalability: Benchmark Results" (NCAR, October 1992)
//! prints one table per machine: `Processes`, `Real Seconds`, `CPU Seconds`, `User
//! Seconds`, `System Seconds` and `Projected Seconds` for 1,000,000 laps of its
//! `pipeline` ring. `schedlab import --ncar FILE` reads such a table and stores it as a
//! ring run of the machine it names, so old and foreign results sit in the database
//! beside runs measured here; `schedlab import --reference ncar-1992` stores the
//! report's nine tables, which are built into the binary (`data/ncar-1992.toml`).
//!
//! An imported row becomes one ok ring trial whose outcome holds the table's figures
//! (real, user and system time; hops = laps x processes, as the report counts its
//! context switches). Everything schedlab did not measure is zero or empty, and the run's
//! machine record says where the figures came from, so a report never passes them off
//! as measured here.

use crate::error::{Error, Result};
use crate::model::parse::MAX_PROCS;
use crate::model::{
    Family, Ipc, Outcome, Pin, Policy, RingLength, RingMode, RingOutcome, RingSpec, TrialSpec, TrialStatus, Usage,
};
use crate::store::{RunRecord, TrialRecord};
use serde::Deserialize;
use serde_json::{json, Map, Value as Json};

/// The report's laps per ring ("run for one million (1,000,000) iterations").
pub const NCAR_LAPS: u64 = 1_000_000;

/// The name of the built-in reference set (`import --reference`).
pub const REFERENCE_NAME: &str = "ncar-1992";

/// The report's nine tables, verbatim (see the file's header).
const REFERENCE_TOML: &str = include_str!("../../data/ncar-1992.toml");
const REFERENCE_FILE: &str = "data/ncar-1992.toml (built into schedlab)";

/// Where the reference figures were published.
const CITATION: &str = "J.L. Sloan, \"Context Switch Time Scalability: Benchmark Results\", NCAR Scientific \
                        Computing Division, October 1992, Appendix 1";

/// Name-based run ids (UUID v5) live under this namespace, so importing the same
/// figures twice finds the run already stored.
const UUID_NAMESPACE: uuid::Uuid = uuid::uuid!("062aaca3-b201-4252-899d-cb9b23587ba0");

/// A column of the table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Column {
    Processes,
    Real,
    Cpu,
    User,
    System,
    Projected,
}

impl Column {
    const REQUIRED: [Column; 5] = [Column::Processes, Column::Real, Column::Cpu, Column::User, Column::System];

    fn name(self) -> &'static str {
        match self {
            Column::Processes => "Processes",
            Column::Real => "Real Seconds",
            Column::Cpu => "CPU Seconds",
            Column::User => "User Seconds",
            Column::System => "System Seconds",
            Column::Projected => "Projected Seconds",
        }
    }

    /// The first word of a column's name in a header, in any case; the report's own
    /// short names (Cpu, Sys, Proj) too.
    fn from_word(word: &str) -> Option<Column> {
        Some(match word.to_ascii_lowercase().as_str() {
            "processes" | "procs" => Column::Processes,
            "real" => Column::Real,
            "cpu" => Column::Cpu,
            "user" => Column::User,
            "system" | "sys" => Column::System,
            "projected" | "proj" => Column::Projected,
            _ => return None,
        })
    }
}

/// A figure as printed, and half a unit of its last printed digit: how far rounding may
/// have moved it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Printed {
    pub value: f64,
    pub rounding: f64,
}

/// One row of a table, in seconds, with the line it was read from.
#[derive(Clone, Debug, PartialEq)]
pub struct NcarRow {
    pub line: usize,
    pub procs: usize,
    pub real: Printed,
    pub cpu: Printed,
    pub user: Printed,
    pub system: Printed,
    pub projected: Option<Printed>,
}

/// A whole table, rows by ascending process count.
#[derive(Clone, Debug, PartialEq)]
pub struct NcarTable {
    pub rows: Vec<NcarRow>,
}

fn all_numbers(line: &str) -> bool {
    let mut cells = line.split_whitespace().peekable();
    cells.peek().is_some() && cells.all(|c| parse_seconds(c).is_some())
}

fn is_header(line: &str) -> bool {
    line.split_whitespace().next().and_then(Column::from_word) == Some(Column::Processes)
}

/// "1108", "0.0123": digits with at most one decimal point, nothing else (no sign,
/// exponent or thousands separator, which a table of seconds never needs).
fn parse_seconds(cell: &str) -> Option<Printed> {
    let (whole, fraction) = cell.split_once('.').unwrap_or((cell, ""));
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if whole.len() + fraction.len() == 0 || !digits(whole) || !digits(fraction) {
        return None;
    }
    let value: f64 = cell.parse().ok()?;
    value.is_finite().then(|| Printed { value, rounding: 0.5 * 10f64.powi(-(fraction.len() as i32)) })
}

/// The columns a header line names, in order.
fn parse_header(file: &str, line_no: usize, line: &str) -> Result<Vec<Column>> {
    let mut columns: Vec<Column> = Vec::new();
    let mut after_name = false;
    for word in line.split_whitespace() {
        if let Some(column) = Column::from_word(word) {
            if columns.contains(&column) {
                return Err(Error::usage(format!("{file}:{line_no}: the header names '{}' twice", column.name())));
            }
            columns.push(column);
            after_name = true;
        } else if after_name && matches!(word.to_ascii_lowercase().as_str(), "seconds" | "secs" | "sec" | "s") {
            after_name = false;
        } else {
            return Err(Error::usage(format!(
                "{file}:{line_no}: '{word}' is not a column of an NCAR table; the header names Processes, Real \
                 Seconds, CPU Seconds, User Seconds, System Seconds and, optionally, Projected Seconds"
            )));
        }
    }
    if let Some(missing) = Column::REQUIRED.iter().find(|c| !columns.contains(c)) {
        return Err(Error::usage(format!(
            "{file}:{line_no}: the header has no '{}' column (an NCAR table needs Processes, Real Seconds, CPU \
             Seconds, User Seconds and System Seconds)",
            missing.name()
        )));
    }
    Ok(columns)
}

fn parse_row(file: &str, line_no: usize, line: &str, columns: &[Column], header_line: usize) -> Result<NcarRow> {
    let cells: Vec<&str> = line.split_whitespace().collect();
    if cells.len() != columns.len() {
        return Err(Error::usage(format!(
            "{file}:{line_no}: {} cells, but the header (line {header_line}) names {} columns",
            cells.len(),
            columns.len()
        )));
    }
    let mut row = NcarRow {
        line: line_no,
        procs: 0,
        real: Printed { value: 0.0, rounding: 0.0 },
        cpu: Printed { value: 0.0, rounding: 0.0 },
        user: Printed { value: 0.0, rounding: 0.0 },
        system: Printed { value: 0.0, rounding: 0.0 },
        projected: None,
    };
    for (&column, &cell) in columns.iter().zip(&cells) {
        if column == Column::Processes {
            row.procs = cell.parse().ok().filter(|n| (2..=MAX_PROCS).contains(n)).ok_or_else(|| {
                Error::usage(format!(
                    "{file}:{line_no}: Processes must be a whole number from 2 to {MAX_PROCS} (a ring has two \
                     members or more), not '{cell}'"
                ))
            })?;
            continue;
        }
        let value = parse_seconds(cell).ok_or_else(|| {
            Error::usage(format!("{file}:{line_no}: '{cell}' in column '{}' is not a number of seconds", column.name()))
        })?;
        if value.value * 1e9 >= u64::MAX as f64 {
            return Err(Error::usage(format!(
                "{file}:{line_no}: {cell} s in column '{}' is too large to store in ns",
                column.name()
            )));
        }
        match column {
            Column::Real => row.real = value,
            Column::Cpu => row.cpu = value,
            Column::User => row.user = value,
            Column::System => row.system = value,
            Column::Projected => row.projected = Some(value),
            Column::Processes => unreachable!("handled above"),
        }
    }
    Ok(row)
}

/// Read one table from `text` (the contents of `file`; line numbers start after
/// `line_offset` lines). Text before the header (a title) and after the blank line that
/// ends the table (a caption) is skipped, as are lines starting with `#`; anything else
/// that is not a well-formed table is refused with the file and line.
pub fn parse_table(file: &str, text: &str, line_offset: usize) -> Result<NcarTable> {
    let mut columns: Option<(usize, Vec<Column>)> = None;
    let mut rows: Vec<NcarRow> = Vec::new();
    // The line after which the table ended (a blank line after its rows).
    let mut ended_at: Option<usize> = None;
    for (index, raw) in text.lines().enumerate() {
        let line_no = line_offset + index + 1;
        let line = raw.trim();
        if line.starts_with('#') {
            continue;
        }
        let Some((header_line, cols)) = &columns else {
            if is_header(line) {
                columns = Some((line_no, parse_header(file, line_no, line)?));
            } else if all_numbers(line) {
                return Err(Error::usage(format!(
                    "{file}:{line_no}: a row of numbers before the header line; the table starts with its header \
                     (Processes, Real Seconds, CPU Seconds, User Seconds, System Seconds, Projected Seconds)"
                )));
            }
            continue;
        };
        if let Some(end) = ended_at {
            if is_header(line) || all_numbers(line) {
                return Err(Error::usage(format!(
                    "{file}:{line_no}: more table after the blank line that ended the table at line {end}; import \
                     one table per file"
                )));
            }
            continue;
        }
        if line.is_empty() {
            if !rows.is_empty() {
                ended_at = Some(line_no);
            }
            continue;
        }
        let row = parse_row(file, line_no, line, cols, *header_line)?;
        if let Some(first) = rows.iter().find(|r| r.procs == row.procs) {
            return Err(Error::usage(format!(
                "{file}:{line_no}: a second row for {} processes (the first is line {})",
                row.procs, first.line
            )));
        }
        rows.push(row);
    }
    let Some((header_line, _)) = columns else {
        return Err(Error::usage(format!(
            "{file}: no header line: an NCAR table starts with a line naming its columns, `Processes  Real Seconds  \
             CPU Seconds  User Seconds  System Seconds  [Projected Seconds]`"
        )));
    };
    if rows.is_empty() {
        return Err(Error::usage(format!("{file}:{header_line}: the header has no rows of figures under it")));
    }
    rows.sort_by_key(|r| r.procs);
    Ok(NcarTable { rows })
}

/// Whether `printed` may be `exact` once rounded, allowing `slack` on top.
fn within_rounding(printed: Printed, exact: f64, slack: f64) -> bool {
    (printed.value - exact).abs() <= printed.rounding + slack + 1e-9 * exact.abs()
}

/// What does not add up in a table: a CPU time that is not user + system, or a
/// Projected figure that is not the smallest ring's CPU time per hop times the ring's
/// hops (what schedlab's Projected column shows). Differences within the rounding of the
/// printed figures are not reported.
pub fn consistency_warnings(file: &str, table: &NcarTable) -> Vec<String> {
    let mut out = Vec::new();
    let Some(base) = table.rows.first() else { return out };
    for row in &table.rows {
        let user_system = row.user.value + row.system.value;
        if !within_rounding(row.cpu, user_system, row.user.rounding + row.system.rounding) {
            out.push(format!(
                "{file}:{}: CPU Seconds {} is not User + System ({user_system}) within rounding; schedlab keeps User \
                 and System, so its CPU time for {} processes is {user_system} s",
                row.line, row.cpu.value, row.procs
            ));
        }
        let Some(projected) = row.projected else { continue };
        let scale = row.procs as f64 / base.procs as f64;
        // schedlab projects from user + system; the report from its CPU column. Either,
        // with its rounding scaled up, may explain the printed figure.
        let from_user_system = (base.user.value + base.system.value) * scale;
        let from_cpu = base.cpu.value * scale;
        let user_system_slack = (base.user.rounding + base.system.rounding) * scale;
        if !within_rounding(projected, from_user_system, user_system_slack)
            && !within_rounding(projected, from_cpu, base.cpu.rounding * scale)
        {
            out.push(format!(
                "{file}:{}: Projected Seconds {} for {} processes is not the {}-process ring's CPU time per hop x this \
                 ring's hops ({from_user_system:.1} s, as schedlab projects it) within rounding ({:+.1}%)",
                row.line,
                projected.value,
                row.procs,
                base.procs,
                (projected.value / from_user_system - 1.0) * 100.0
            ));
        }
    }
    out
}

fn ns(seconds: Printed) -> u64 {
    (seconds.value * 1e9).round() as u64
}

/// Where an imported run's figures came from: what the run record says about them.
pub struct Provenance {
    pub suite_name: String,
    pub suite_text: String,
    pub options: Json,
    /// The machine record: names the machine and says the figures were imported.
    pub machine: Json,
    pub started: String,
    /// Always shown with the run, before any consistency warning.
    pub notice: String,
    /// What identifies these figures: the same name gives the same run uuid.
    pub identity: String,
}

/// A table as a finished ring run of `laps` laps per ring: one ok trial per row.
pub fn to_run(
    file: &str,
    table: &NcarTable,
    laps: u64,
    provenance: Provenance,
    warnings: &[String],
) -> Result<(RunRecord, Vec<TrialRecord>)> {
    let mut trials = Vec::with_capacity(table.rows.len());
    for (seq, row) in table.rows.iter().enumerate() {
        let hops = laps.checked_mul(row.procs as u64).ok_or_else(|| {
            Error::usage(format!(
                "{file}:{}: {laps} laps x {} processes overflows the hop counter",
                row.line, row.procs
            ))
        })?;
        let spec = RingSpec {
            procs: row.procs,
            length: RingLength::Laps(laps),
            // The report's `pipeline`: processes passing a byte through pipes, left to
            // the scheduler at the default policy.
            mode: RingMode::Process,
            ipc: Ipc::Pipe,
            pin: Pin::None,
            cpus: None,
            policy: Policy::Other,
            prio: 0,
            work_kb: 0,
            timeout: None,
            load: Default::default(),
            deadline: None,
            // The report has no per-task scheduler figures: nothing was read.
            schedstat: false,
            trace: false,
        };
        let outcome = RingOutcome {
            procs: row.procs,
            member_cpus: Vec::new(),
            laps,
            hops,
            real_ns: ns(row.real),
            usage: Usage { utime_ns: ns(row.user), stime_ns: ns(row.system), ..Usage::default() },
            member_maxrss_kb: 0,
            overhead_ps: 0,
            spawn_ns: 0,
            teardown_ns: 0,
            load: None,
            steal: None,
            run_delay_ns: None,
            migrations: None,
            trace: None,
        };
        let mut params = Map::new();
        params.insert("procs".into(), json!(row.procs));
        params.insert("laps".into(), json!(laps));
        trials.push(TrialRecord {
            seq: seq as i64,
            experiment: 0,
            family: Family::Ring,
            repeat: 1,
            params,
            spec: Some(TrialSpec::Ring(spec)),
            outcome: Some(Outcome::Ring(outcome)),
            status: TrialStatus::Ok,
            started: provenance.started.clone(),
            elapsed_s: 0.0,
        });
    }
    let mut all_warnings = vec![provenance.notice];
    all_warnings.extend(warnings.iter().cloned());
    let run = RunRecord {
        id: 0,
        uuid: uuid::Uuid::new_v5(&UUID_NAMESPACE, provenance.identity.as_bytes()).to_string(),
        suite_name: provenance.suite_name,
        suite_text: provenance.suite_text,
        options: crate::model::run::RunOptions::from_json(provenance.options),
        started: provenance.started.clone(),
        ended: Some(provenance.started),
        status: crate::store::RunStatus::Finished,
        tool_version: env!("CARGO_PKG_VERSION").into(),
        machine: crate::sys::machine::StoredMachine::from_json(provenance.machine),
        warnings: all_warnings,
        planned: trials.len() as i64,
        pid: None,
    };
    Ok((run, trials))
}

/// The figures of a table in one canonical text: what makes an imported run's identity.
fn canonical(table: &NcarTable) -> String {
    let cell = |p: Printed| p.value.to_string();
    table
        .rows
        .iter()
        .map(|r| {
            let projected = r.projected.map_or("-".to_string(), cell);
            format!("{} {} {} {} {} {projected}\n", r.procs, cell(r.real), cell(r.cpu), cell(r.user), cell(r.system))
        })
        .collect()
}

/// `import --ncar FILE --machine NAME --laps N`: the table in `text` as a run, and the
/// consistency warnings (already part of the run's warnings).
pub fn import_table(
    file: &str,
    text: &str,
    machine_name: &str,
    laps: u64,
) -> Result<(RunRecord, Vec<TrialRecord>, Vec<String>)> {
    let machine_name = machine_name.trim();
    if machine_name.is_empty() {
        return Err(Error::usage("--machine needs a name for the machine the table was measured on"));
    }
    let table = parse_table(file, text, 0)?;
    let warnings = consistency_warnings(file, &table);
    let machine = json!({
        "hostname": machine_name,
        "imported": true,
        "figures": "imported from a table in the NCAR 1992 report's format; not measured by schedlab",
        "source_file": file,
        "laps": laps,
    });
    let provenance = Provenance {
        suite_name: "ncar-import".into(),
        suite_text: text.to_string(),
        options: json!({"import": "ncar", "file": file, "machine": machine_name, "laps": laps}),
        machine,
        started: crate::store::now_utc(),
        notice: format!(
            "imported figures: read from {file} (NCAR table, {laps} laps per ring), not measured by schedlab"
        ),
        identity: format!("ncar-import\n{machine_name}\n{laps}\n{}", canonical(&table)),
    };
    let (run, trials) = to_run(file, &table, laps, provenance, &warnings)?;
    Ok((run, trials, warnings))
}

/// One machine of the built-in reference set, as `data/ncar-1992.toml` has it.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ReferenceMachine {
    id: String,
    vendor: String,
    model: String,
    system: String,
    cpus: u32,
    heading: String,
    table: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ReferenceFile {
    machine: Vec<ReferenceMachine>,
}

/// The line of the reference file on which `needle` (a machine's table) starts.
fn line_of(needle: &str) -> usize {
    REFERENCE_TOML.find(needle).map_or(0, |at| REFERENCE_TOML[..at].lines().count())
}

/// The report's nine machines, each as (machine id, table), in the report's order.
pub fn reference_tables() -> Result<Vec<(String, NcarTable)>> {
    reference_machines()?
        .into_iter()
        .map(|m| Ok((m.id.clone(), parse_table(REFERENCE_FILE, &m.table, line_of(&m.table))?)))
        .collect()
}

fn reference_machines() -> Result<Vec<ReferenceMachine>> {
    let file: ReferenceFile = toml::from_str(REFERENCE_TOML).map_err(|e| {
        Error::env(format!("{REFERENCE_FILE} does not read ({e}): a bug in schedlab; please report it"))
    })?;
    Ok(file.machine)
}

/// `import --reference ncar-1992`: the report's nine machines as nine runs, labelled as
/// its published figures. Their uuids are fixed, so a second import stores nothing.
pub fn reference_runs(name: &str) -> Result<Vec<(RunRecord, Vec<TrialRecord>)>> {
    if name != REFERENCE_NAME {
        return Err(Error::usage(format!(
            "there is no reference set '{name}' of the NCAR report (it is {REFERENCE_NAME}); the ones built in are {}",
            crate::store::seeds::REFERENCE_NAMES.join(", ")
        )));
    }
    let mut out = Vec::new();
    for m in reference_machines()? {
        let table = parse_table(REFERENCE_FILE, &m.table, line_of(&m.table))?;
        let warnings = consistency_warnings(REFERENCE_FILE, &table);
        let label = format!("{}, {}", m.model, m.system);
        let machine = json!({
            "hostname": format!("{label} (NCAR 1992, published)"),
            "kernel_release": m.system,
            "vendor": m.vendor,
            "model": m.model,
            "cpus_used": m.cpus,
            "imported": true,
            "figures": "published in the report; built into schedlab, not measured by it",
            "source": format!("{CITATION}: \"{}\"", m.heading),
            "laps": NCAR_LAPS,
        });
        let provenance = Provenance {
            suite_name: format!("{REFERENCE_NAME}-published"),
            suite_text: format!("{}\n(from {CITATION})\n\n{}", m.heading, m.table.trim_end()),
            options: json!({"import": "reference", "reference": REFERENCE_NAME, "machine": m.id}),
            machine,
            // The report is dated October 1992; when each machine ran is not given.
            started: "1992-10-01T00:00:00.000Z".into(),
            notice: format!(
                "published figures: the NCAR 1992 report's table for the {label} ({CITATION}), not measured by \
                 schedlab"
            ),
            identity: format!("reference/{REFERENCE_NAME}/{}", m.id),
        };
        out.push(to_run(REFERENCE_FILE, &table, NCAR_LAPS, provenance, &warnings)?);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SUN_4_280: &str = "Sun Microsystems SUN-4/280, SunOS 4.1.1\n\n\
        Processes\tReal Seconds\tCPU Seconds\tUser Seconds\tSystem Seconds\tProjected Seconds\n\
        2\t1294\t873\t76\t798\t873\n\
        4\t2532\t1835\t171\t1665\t1746\n\
        16\t25097\t21874\t850\t21025\t6985\n\
        \n\
        Seconds x 10³\n";

    fn err(text: &str) -> String {
        parse_table("t.txt", text, 0).unwrap_err().to_string()
    }

    #[test]
    fn reads_the_reports_layout_with_title_and_caption() {
        let table = parse_table("t.txt", SUN_4_280, 0).unwrap();
        assert_eq!(table.rows.iter().map(|r| r.procs).collect::<Vec<_>>(), vec![2, 4, 16]);
        let r = &table.rows[2];
        assert_eq!(
            (r.line, r.real.value, r.cpu.value, r.user.value, r.system.value),
            (6, 25097.0, 21874.0, 850.0, 21025.0)
        );
        assert_eq!(r.projected.unwrap().value, 6985.0);
        assert_eq!(r.real.rounding, 0.5);
        assert!(consistency_warnings("t.txt", &table).is_empty());
    }

    #[test]
    fn spaces_short_names_decimals_and_no_projection() {
        let text = "procs   real s   cpu s  user s  sys s\n  4  1.50  1.25  0.25  1.000\n 2 0.7 0.6 0.1 0.5\n";
        let table = parse_table("t.txt", text, 0).unwrap();
        assert_eq!(table.rows[0].procs, 2, "sorted by process count");
        assert_eq!(table.rows[1].system, Printed { value: 1.0, rounding: 0.0005 });
        assert!(table.rows.iter().all(|r| r.projected.is_none()));
    }

    #[test]
    fn bad_tables_name_the_line_and_the_problem() {
        assert!(err("2 1 1 1 1\n").contains("t.txt:1: a row of numbers before the header"));
        assert!(err("just a title\n").contains("t.txt: no header line"));
        assert!(err("Processes Real Seconds CPU Seconds User Seconds\n2 1 1 1\n")
            .contains("t.txt:1: the header has no 'System Seconds' column"));
        assert!(err("Processes Real Seconds Wall Seconds\n").contains("t.txt:1: 'Wall' is not a column"));
        let header = "Processes Real CPU User System\n";
        assert!(
            err(&format!("{header}2 1 1 1 x\n")).contains("t.txt:2: 'x' in column 'System Seconds' is not a number")
        );
        assert!(err(&format!("{header}2 1 1,000 1 1\n")).contains("'1,000' in column 'CPU Seconds'"));
        assert!(err(&format!("{header}2 1 1 1\n")).contains("t.txt:2: 4 cells, but the header (line 1) names 5"));
        assert!(err(&format!("{header}2 1 1 1 1\n4 2 2 1 1\n2 3 3 1 2\n"))
            .contains("t.txt:4: a second row for 2 processes (the first is line 2)"));
        assert!(err(header).contains("t.txt:1: the header has no rows"));
        assert!(err(&format!("{header}1 1 1 1 1\n")).contains("Processes must be a whole number from 2"));
        assert!(err(&format!("{header}2.5 1 1 1 1\n")).contains("not '2.5'"));
        assert!(err(&format!("{header}2 -1 1 1 1\n")).contains("'-1'"));
        assert!(err(&format!("{header}2 1e3 1 1 1\n")).contains("'1e3'"));
        assert!(err(&format!("{header}2 1 1 1 1\n\n{header}"))
            .contains("t.txt:4: more table after the blank line that ended the table at line 3"));
        assert!(err("Processes Real Real CPU User System\n").contains("names 'Real Seconds' twice"));
    }

    #[test]
    fn inconsistent_figures_are_warned_about_beyond_rounding_only() {
        // Within rounding: 58 + 1039 = 1097 against a CPU column of 1096 (DG AViiON, 2).
        let ok =
            "Processes Real CPU User System Projected\n2 1108 1096 58 1039 1096\n64 61135 59610 2808 56803 35069\n";
        assert!(consistency_warnings("t", &parse_table("t", ok, 0).unwrap()).is_empty());
        let bad = "Processes Real CPU User System Projected\n2 10 10 1 9 10\n4 30 25 1 19 23\n8 80 80 10 70 80\n";
        let warnings = consistency_warnings("t", &parse_table("t", bad, 0).unwrap());
        assert_eq!(warnings.len(), 3, "{warnings:?}");
        assert!(warnings[0].starts_with("t:3: CPU Seconds 25 is not User + System (20)"), "{warnings:?}");
        assert!(warnings[1].starts_with("t:3: Projected Seconds 23 for 4 processes"), "{warnings:?}");
        assert!(warnings[2].contains("t:4: Projected Seconds 80 for 8 processes") && warnings[2].contains("+100.0%"));
    }

    #[test]
    fn a_table_becomes_a_ring_run_with_the_tables_figures() {
        let (run, trials, warnings) = import_table("t.txt", SUN_4_280, "Sun-4/280", 1000).unwrap();
        assert!(warnings.is_empty());
        assert_eq!((run.suite_name.as_str(), run.status.as_str(), run.planned), ("ncar-import", "finished", 3));
        assert_eq!(run.machine.hostname(), Some("Sun-4/280"));
        assert!(run.machine.is_imported());
        assert!(run.warnings[0].contains("not measured by schedlab"));
        let o = trials[2].outcome.as_ref().and_then(Outcome::ring).unwrap();
        assert_eq!((o.procs, o.laps, o.hops, o.real_ns), (16, 1000, 16_000, 25_097_000_000_000));
        assert_eq!((o.usage.utime_ns, o.usage.stime_ns, o.overhead_ps), (850_000_000_000, 21_025_000_000_000, 0));
        assert_eq!(trials[2].params, json!({"procs": 16, "laps": 1000}).as_object().cloned().unwrap());
        // The same figures under the same name are the same run; another name is not.
        let again = import_table("t.txt", SUN_4_280, "Sun-4/280", 1000).unwrap().0;
        assert_eq!(again.uuid, run.uuid);
        assert_ne!(import_table("t.txt", SUN_4_280, "other", 1000).unwrap().0.uuid, run.uuid);
        assert!(import_table("t.txt", SUN_4_280, "  ", 1000).unwrap_err().to_string().contains("--machine"));
        assert!(import_table("t.txt", SUN_4_280, "x", u64::MAX).unwrap_err().to_string().contains("overflows"));
    }

    #[test]
    fn the_reference_set_is_the_reports_nine_tables() {
        let tables = reference_tables().unwrap();
        let sizes: Vec<(&str, usize, usize)> =
            tables.iter().map(|(id, t)| (id.as_str(), t.rows.len(), t.rows.last().unwrap().procs)).collect();
        assert_eq!(
            sizes,
            [
                ("dg-aviion-av400", 9, 64),
                ("hp-9000-720", 9, 48),
                ("ibm-370-4381", 7, 32),
                ("ibm-rs6000-530-aix-3.1", 9, 64),
                ("ibm-rs6000-530-aix-3.2", 9, 64),
                ("solbourne-702e", 8, 48),
                ("sun-4-280", 9, 64),
                ("sun-4-470", 9, 64),
                ("sun-4-630", 9, 64),
            ]
        );
        assert!(tables[1].1.rows.iter().any(|r| r.procs == 42), "the HP table's 42-process row");
        // Every published table adds up within its rounding.
        for (id, table) in &tables {
            assert!(consistency_warnings(id, table).is_empty(), "{id}: {:?}", consistency_warnings(id, table));
        }
        let runs = reference_runs(REFERENCE_NAME).unwrap();
        assert_eq!(runs.len(), 9);
        let (run, trials) = &runs[6];
        assert_eq!(run.machine.hostname(), Some("Sun-4/280, SunOS 4.1.1 (NCAR 1992, published)"));
        assert_eq!(run.warnings.len(), 1, "only the notice");
        let last = trials.last().unwrap().outcome.as_ref().and_then(Outcome::ring).unwrap();
        assert_eq!((last.hops, last.usage.cpu_ns()), (64_000_000, 96_545_000_000_000), "3402 + 93143 s");
        let uuids: std::collections::BTreeSet<&str> = runs.iter().map(|(r, _)| r.uuid.as_str()).collect();
        assert_eq!(uuids.len(), 9);
        assert_eq!(reference_runs(REFERENCE_NAME).unwrap()[0].0.uuid, runs[0].0.uuid, "fixed ids");
        assert!(reference_runs("ncar-1993").unwrap_err().to_string().contains("no reference set 'ncar-1993'"));
    }

    #[test]
    fn reference_errors_point_into_the_data_file() {
        let first = reference_machines().unwrap().remove(0);
        assert_eq!(REFERENCE_TOML.lines().nth(line_of(&first.table)), first.table.lines().next());
    }
}

/// The knee analysis read on the 1992 report's own machines (the data it was checked
/// against without being tuned on).
#[cfg(test)]
mod knees_of_the_published_machines {
    use super::reference_tables;
    use crate::analysis::knee::{analyse, Scaling, Shape};

    /// One value per count: (processes, CPU seconds) as CPU s per process.
    fn table(rows: &[(u32, u32)]) -> Vec<(f64, Vec<f64>)> {
        rows.iter().map(|&(p, cpu)| (f64::from(p), vec![f64::from(cpu) / f64::from(p)])).collect()
    }

    fn knees(s: &Scaling) -> Vec<(f64, f64)> {
        s.knees.iter().map(|k| (k.before, k.after)).collect()
    }

    /// A machine of the 1992 report's Appendix 1 (as shipped for `import --reference`):
    /// (processes, CPU seconds for 1,000,000 laps).
    fn published(id: &str) -> Vec<(u32, u32)> {
        let tables = reference_tables().expect("the reference set reads");
        let (_, table) = tables.iter().find(|(m, _)| m == id).unwrap_or_else(|| panic!("no machine {id}"));
        table.rows.iter().map(|r| (r.procs as u32, r.cpu.value as u32)).collect()
    }

    fn read(id: &str) -> Scaling {
        analyse(&table(&published(id))).expect("nine or seven counts are analysed")
    }

    #[test]
    fn the_sun_4_280_turns_between_10_and_16_processes() {
        // "The Sun-4/280 has sixteen high-speed register banks": rapid degradation past them.
        let s = read("sun-4-280");
        assert_eq!(knees(&s), vec![(10.0, 16.0)]);
        assert!(s.knees[0].jump > 1.5, "{:?}", s.knees[0]);
        assert!((s.above_projection - 3.46).abs() < 0.01, "{}", s.above_projection);
    }

    #[test]
    fn the_sun_4_470_turns_at_48_to_64_processes() {
        let s = read("sun-4-470");
        assert_eq!(knees(&s), vec![(48.0, 64.0)]);
        assert!((s.knees[0].jump - 0.38).abs() < 0.01, "{:?}", s.knees[0]);
        assert!((s.above_projection - 1.83).abs() < 0.01);
    }

    #[test]
    fn the_hp_aix_3_2_and_sun_4_630_stay_linear() {
        for name in ["hp-9000-720", "ibm-rs6000-530-aix-3.2", "sun-4-630"] {
            let s = read(name);
            assert!(s.knees.is_empty(), "{name}: {s:?}");
            assert_eq!(s.shape, Shape::Linear, "{name}: {s:?}");
            assert!(s.above_projection < 1.2, "{name}: {s:?}");
        }
    }

    #[test]
    fn aix_3_1_diverges_steadily() {
        // "As processes are added incrementally, the RS running AIX 3.1 is increasingly
        // expensive": a rise with no single step that is a knee.
        let s = read("ibm-rs6000-530-aix-3.1");
        assert!(s.knees.is_empty(), "{s:?}");
        assert_eq!(s.shape, Shape::SteadyRise);
        assert!((s.above_projection - 1.41).abs() < 0.01);
        // AIX 3.1 against the HP at 48 processes: the report's "2.25 times slower".
        let at = |id: &str, p: u32| published(id).iter().find(|r| r.0 == p).map(|r| f64::from(r.1)).unwrap();
        assert!((at("ibm-rs6000-530-aix-3.1", 48) / at("hp-9000-720", 48) - 2.25).abs() < 0.01);
    }

    #[test]
    fn the_other_three_machines_read_as_their_figures_show() {
        // The report does not comment on these; the readings follow the numbers.
        // The DG's cost per hop jumps 27 % from 2 to 4 processes, then keeps rising.
        let dg = read("dg-aviion-av400");
        assert_eq!(knees(&dg), vec![(2.0, 4.0)]);
        assert!((dg.knees[0].jump - 0.27).abs() < 0.01);
        assert_eq!(dg.shape, Shape::SteadyRise);
        // The IBM 370 and the (noisy, two-CPU) Solbourne have no step of a quarter.
        assert!(read("ibm-370-4381").knees.is_empty());
        assert_eq!(read("ibm-370-4381").shape, Shape::Linear);
        assert!(read("solbourne-702e").knees.is_empty());
    }
}
