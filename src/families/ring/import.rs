//! Ring results in the 1992 NCAR report's table format (the report's own nine machines are
//! the seed `store::seeds::ncar_1992`, built on this).
//!
//! J.L. Sloan's "Context Switch Time Scalability: Benchmark Results" (NCAR, October 1992)
//! prints one table per machine: `Processes`, `Real Seconds`, `CPU Seconds`, `User
//! Seconds`, `System Seconds` and `Projected Seconds` for 1,000,000 laps of its
//! `pipeline` ring. `schedlab import --ncar FILE` reads such a table and stores it as a
//! ring run of the machine it names, so old and foreign results sit in the database
//! beside runs measured here.
//!
//! An imported row becomes one ok ring trial whose outcome holds the table's figures
//! (real, user and system time; hops = laps x processes, as the report counts its
//! context switches). Everything schedlab did not measure is zero or empty, and the run's
//! machine record says where the figures came from, so a report never passes them off
//! as measured here.

use crate::error::{Error, Result};
use super::model::{Ipc, Pin, RingLength, RingMode, RingOutcome, RingSpec};
use crate::families::{Family, Outcome, TrialSpec};
use crate::model::cell::Cell;
use crate::model::parse::MAX_PROCS;
use crate::model::{BesideSpec, Policy, TrialStatus, Usage};
use crate::store::{RunRecord, TrialRecord};
use serde_json::{json, Value as Json};

/// The report's laps per ring ("run for one million (1,000,000) iterations").
pub const NCAR_LAPS: u64 = 1_000_000;

/// Name-based run ids (UUID v5) live under this namespace, so importing the same
/// figures twice finds the run already stored.
const UUID_NAMESPACE: uuid::Uuid = uuid::uuid!("062aaca3-b201-4252-899d-cb9b23587ba0");

/// A column of the table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum NcarColumn {
    Processes,
    Real,
    Cpu,
    User,
    System,
    Projected,
}

impl NcarColumn {
    const REQUIRED: [NcarColumn; 5] =
        [NcarColumn::Processes, NcarColumn::Real, NcarColumn::Cpu, NcarColumn::User, NcarColumn::System];

    fn name(self) -> &'static str {
        match self {
            NcarColumn::Processes => "Processes",
            NcarColumn::Real => "Real Seconds",
            NcarColumn::Cpu => "CPU Seconds",
            NcarColumn::User => "User Seconds",
            NcarColumn::System => "System Seconds",
            NcarColumn::Projected => "Projected Seconds",
        }
    }

    /// The first word of a column's name in a header, in any case; the report's own
    /// short names (Cpu, Sys, Proj) too.
    fn from_word(word: &str) -> Option<NcarColumn> {
        Some(match word.to_ascii_lowercase().as_str() {
            "processes" | "procs" => NcarColumn::Processes,
            "real" => NcarColumn::Real,
            "cpu" => NcarColumn::Cpu,
            "user" => NcarColumn::User,
            "system" | "sys" => NcarColumn::System,
            "projected" | "proj" => NcarColumn::Projected,
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
    line.split_whitespace().next().and_then(NcarColumn::from_word) == Some(NcarColumn::Processes)
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
fn parse_header(file: &str, line_no: usize, line: &str) -> Result<Vec<NcarColumn>> {
    let mut columns: Vec<NcarColumn> = Vec::new();
    let mut after_name = false;
    for word in line.split_whitespace() {
        if let Some(column) = NcarColumn::from_word(word) {
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
    if let Some(missing) = NcarColumn::REQUIRED.iter().find(|c| !columns.contains(c)) {
        return Err(Error::usage(format!(
            "{file}:{line_no}: the header has no '{}' column (an NCAR table needs Processes, Real Seconds, CPU \
             Seconds, User Seconds and System Seconds)",
            missing.name()
        )));
    }
    Ok(columns)
}

fn parse_row(file: &str, line_no: usize, line: &str, columns: &[NcarColumn], header_line: usize) -> Result<NcarRow> {
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
        if column == NcarColumn::Processes {
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
            NcarColumn::Real => row.real = value,
            NcarColumn::Cpu => row.cpu = value,
            NcarColumn::User => row.user = value,
            NcarColumn::System => row.system = value,
            NcarColumn::Projected => row.projected = Some(value),
            NcarColumn::Processes => unreachable!("handled above"),
        }
    }
    Ok(row)
}

/// Read one table from `text` (the contents of `file`; line numbers start after
/// `line_offset` lines). Text before the header (a title) and after the blank line that
/// ends the table (a caption) is skipped, as are lines starting with `#`; anything else
/// that is not a well-formed table is refused with the file and line.
pub fn parse_table(file: &str, text: &str, line_offset: usize) -> Result<NcarTable> {
    let mut columns: Option<(usize, Vec<NcarColumn>)> = None;
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
            // The report has no per-task scheduler figures: nothing was read.
            beside: BesideSpec::default(),
        };
        let outcome = RingOutcome {
            procs: row.procs,
            laps,
            hops,
            real_ns: ns(row.real),
            usage: Usage { utime_ns: ns(row.user), stime_ns: ns(row.system), ..Usage::default() },
            // The table printed nothing else: no CPUs, setup costs or scheduler figures.
            ..RingOutcome::default()
        };
        let mut params = Cell::new();
        params.insert("procs", row.procs);
        params.insert("laps", laps);
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
        assert_eq!(trials[2].params.json_text(), r#"{"procs":16,"laps":1000}"#);
        // The same figures under the same name are the same run; another name is not.
        let again = import_table("t.txt", SUN_4_280, "Sun-4/280", 1000).unwrap().0;
        assert_eq!(again.uuid, run.uuid);
        assert_ne!(import_table("t.txt", SUN_4_280, "other", 1000).unwrap().0.uuid, run.uuid);
        assert!(import_table("t.txt", SUN_4_280, "  ", 1000).unwrap_err().to_string().contains("--machine"));
        assert!(import_table("t.txt", SUN_4_280, "x", u64::MAX).unwrap_err().to_string().contains("overflows"));
    }
}
