//! Rendering results: terminal tables, JSON lines, CSV and Markdown, HTML and plots,
//! findings, compare and trend. Reports read results; they never run a benchmark.

pub mod against;
pub mod cells;
pub mod chart;
pub mod claims;
pub mod compare;
pub mod exporter;
pub mod family;
pub mod figures;
pub mod findings;
pub mod forest;
pub mod glance;
pub mod html;
pub mod live;
pub mod output;
pub mod overlay;
pub mod plots;
pub mod settings;
pub mod stored;
pub mod table;
pub mod trend;

/// A report's typed document as JSON text on one line. The documents hold text, numbers and
/// string-keyed maps only, which always serialize.
pub fn json_line<T: serde::Serialize>(doc: &T) -> String {
    serde_json::to_string(doc).unwrap_or_default()
}

/// What the background load did during a trial, in one line: how hard it pushed while
/// the trial measured, and its own CPU time, which no figure of the trial includes.
pub fn load_line(load: &crate::model::LoadOutcome) -> String {
    format!(
        "background load {} ({} process{}, nice {}, CPUs {}) over the {:.3} s window; its own CPU {:.3} s, \
         kept out of the measured figures",
        load.summary(),
        load.processes,
        if load.processes == 1 { "" } else { "es" },
        load.nice,
        crate::model::parse::format_cpu_list(&load.cpus),
        load.window_ns as f64 / 1e9,
        load.cpu_ns as f64 / 1e9
    )
}
