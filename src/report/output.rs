//! What every command's output goes through: stdout a line at a time, the progress bar,
//! files written whole or opened before the work, and the tables and findings at a family
//! command's end.

use crate::error::{Error, Result};
use crate::report::exporter::Format;
use std::io::{IsTerminal, Write};

/// The end of a family command run in blocks (`command`, `taskset`): the cells' table,
/// and in text the questions between them and the findings.
pub fn emit_cells_and_findings(records: &[crate::store::TrialRecord], format: Format) -> Result<()> {
    let rule = crate::report::cells::RunRule::default();
    match format {
        Format::Json => {}
        Format::Text => {
            emit(&format!("\n{}", crate::report::exporter::tables_text(records, &rule, format).trim_end()))?;
            // The answers at a glance first, then each finding in full (no page holds them).
            let found = crate::decide::findings::findings(records);
            let questions = crate::report::glance::questions(&found);
            if !questions.is_empty() {
                emit(&format!("\n{}", crate::report::glance::text_block(&questions).trim_end()))?;
            }
            if !found.is_empty() {
                emit("\nfindings in full:")?;
            }
            for f in &found {
                emit(&format!("- {f}"))?;
            }
        }
        Format::Csv | Format::Markdown => {
            emit(crate::report::exporter::tables_text(records, &rule, format).trim_end())?
        }
    }
    Ok(())
}

/// Print one line of results to stdout at once (so a reader piping into `tee` sees each
/// row as it is measured). A closed pipe (`| head`) ends the run quietly.
pub fn emit(line: &str) -> Result<()> {
    let mut out = std::io::stdout().lock();
    let written = writeln!(out, "{line}").and_then(|_| out.flush());
    match written {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Err(Error::Interrupted(libc::SIGPIPE)),
        Err(e) => Err(Error::os("writing results to stdout", e)),
    }
}

/// A progress bar on stderr, drawn only when stderr is a terminal.
pub fn progress_bar(total: u64, unit: &str) -> indicatif::ProgressBar {
    if !std::io::stderr().is_terminal() {
        return indicatif::ProgressBar::hidden();
    }
    let bar = indicatif::ProgressBar::new(total);
    let template = format!("{{bar:30}} {{pos}}/{{len}} {unit}  {{msg}}  ETA {{eta}}");
    if let Ok(style) = indicatif::ProgressStyle::with_template(&template) {
        bar.set_style(style);
    }
    bar
}

// Every file a command writes goes through one of these two: a document written whole
// (an export, an HTML page, an SVG) or a file opened before a measurement so that an
// unwritable path fails before anything runs (rusage's report, latency's raw data).

/// Write beside the target and rename, so a failure never leaves half a file.
pub fn write_atomically(path: &std::path::Path, bytes: &[u8]) -> Result<()> {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "export".into());
    let tmp = path.with_file_name(format!(".{name}.schedlab-{}.tmp", std::process::id()));
    let written = std::fs::write(&tmp, bytes).and_then(|_| std::fs::rename(&tmp, path));
    written.map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        cannot_write(path, &e)
    })
}

/// Create (or truncate) `path` now, before the work whose results go into it.
pub fn create_output(path: &std::path::Path) -> Result<std::fs::File> {
    std::fs::File::create(path).map_err(|e| cannot_write(path, &e))
}

pub(crate) fn cannot_write(path: &std::path::Path, e: &std::io::Error) -> Error {
    Error::env(format!("cannot write {}: {}", path.display(), crate::error::describe_io(e)))
}

/// A flat JSON object as a field/value table in `format` (json: the object on one line):
/// how `machine` and `rusage` print csv and markdown.
pub fn object_text(doc: &impl serde::Serialize, format: Format) -> String {
    let value = serde_json::to_value(doc).unwrap_or_default();
    let mut table = crate::report::table::Table::new(["field", "value"]).left_align(0).left_align(1);
    if let Some(object) = value.as_object() {
        for (k, v) in object {
            // A string without its quotes, null as an empty cell, anything else as JSON.
            let cell = match v.as_str() {
                Some(s) => s.to_string(),
                None if v.is_null() => String::new(),
                None => v.to_string(),
            };
            table.push(vec![k.clone(), cell]);
        }
    }
    match format {
        Format::Json => format!("{value}\n"),
        Format::Csv => table.render_csv(),
        Format::Markdown => table.render_markdown(),
        Format::Text => table.render(),
    }
}
