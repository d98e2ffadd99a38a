//! One self-contained HTML page per run (or comparison): inline CSS, inline SVG, no
//! network reference of any kind, so it opens offline and can be mailed or archived.

use crate::report::compare::{self, Row};
use crate::report::findings::Finding;
use crate::report::plots::Chart;
use crate::report::stored::experiment_tables;
use crate::report::table::Table;
use crate::store::{RunRecord, TrialRecord};
use serde_json::Value as Json;

const STYLE: &str = "body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;margin:2em auto;max-width:1100px;\
padding:0 1em;color:#222;line-height:1.45}h1{font-size:1.6em;margin-bottom:.2em}h2{border-bottom:1px solid #ccc;\
padding-bottom:.2em;margin-top:2em}table{border-collapse:collapse;margin:.6em 0 1.2em;font-size:.9em}\
th,td{border:1px solid #ddd;padding:.25em .6em;text-align:right;white-space:nowrap}th{background:#f4f4f4}\
td.l,th.l{text-align:left}tr:nth-child(even) td{background:#fafafa}.warn{background:#fff4e5;border-left:4px solid \
#f0a020;padding:.4em .8em;margin:.3em 0}.finding{background:#eef6ff;border-left:4px solid #3a7bd5;padding:.4em .8em;\
margin:.3em 0}.bad{color:#b00;font-weight:bold}figure{margin:1em 0}figure svg{max-width:100%;height:auto;border:1px \
solid #eee}pre{background:#f6f6f6;padding:.8em;overflow-x:auto;font-size:.85em}.meta{color:#555}\
.scroll{overflow-x:auto}";

/// Records each plot's drawn size in `data-plot-sizes` once the page has laid out, so a
/// headless browser's DOM dump shows the plots really were drawn.
const SIZE_PROBE: &str = "<script>window.addEventListener('load',function(){var s=[];\
document.querySelectorAll('figure svg').forEach(function(e){var r=e.getBoundingClientRect();\
s.push(Math.round(r.width)+'x'+Math.round(r.height));});document.body.setAttribute('data-plot-sizes',s.join(' '));});</script>";

fn esc(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

fn html_table(t: &Table, left_columns: usize) -> String {
    let mut out = String::from("<div class=\"scroll\"><table><thead><tr>");
    for (i, h) in t.headers().iter().enumerate() {
        out.push_str(&format!("<th{}>{}</th>", if i < left_columns { " class=\"l\"" } else { "" }, esc(h)));
    }
    out.push_str("</tr></thead><tbody>");
    for row in t.rows() {
        out.push_str("<tr>");
        for (i, c) in row.iter().enumerate() {
            let class = if c.contains("REGRESSION") {
                " class=\"l bad\""
            } else if i < left_columns {
                " class=\"l\""
            } else {
                ""
            };
            out.push_str(&format!("<td{class}>{}</td>", esc(c)));
        }
        out.push_str("</tr>");
    }
    out.push_str("</tbody></table></div>");
    out
}

fn page(title: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" \
         content=\"width=device-width, initial-scale=1\"><title>{}</title><style>{STYLE}</style></head>\
         <body>\n{body}\n{SIZE_PROBE}</body></html>\n",
        esc(title)
    )
}

fn machine_table(machine: &Json) -> String {
    let mut t = Table::new(["Field", "Value"]).left_align(0).left_align(1);
    if let Some(fields) = machine.as_object() {
        for (k, v) in fields {
            let shown = crate::sys::machine::field_text(v);
            t.push(vec![k.clone(), shown]);
        }
    }
    // Long values (the command line, vulnerabilities) wrap instead of widening the page.
    html_table(&t, 2).replace("<td class=\"l\">", "<td class=\"l\" style=\"white-space:normal\">")
}

fn warnings(run: &RunRecord) -> String {
    run.warnings
        .as_array()
        .map(|w| w.iter().filter_map(Json::as_str).map(|w| format!("<div class=\"warn\">{}</div>", esc(w))).collect())
        .unwrap_or_default()
}

pub fn run_page(run: &RunRecord, trials: &[TrialRecord], charts: &[Chart], findings: &[Finding]) -> String {
    let ok = trials.iter().filter(|t| t.is_ok()).count();
    let host = run.machine.get("hostname").and_then(Json::as_str).unwrap_or("unknown");
    let kernel = run.machine.get("kernel_release").and_then(Json::as_str).unwrap_or("unknown");
    let mut body = format!(
        "<h1>schedlab run {}: {}</h1><p class=\"meta\">On {} (kernel {}), {} .. {} [{}]; {} trials ok, {} not ok, {} planned; \
         schedlab {}</p>",
        run.id,
        esc(&run.suite_name),
        esc(host),
        esc(kernel),
        esc(&run.started),
        esc(run.ended.as_deref().unwrap_or("not finished")),
        esc(&run.status),
        ok,
        trials.len() - ok,
        run.planned,
        esc(&run.tool_version)
    );
    if !findings.is_empty() || run.warnings.as_array().is_some_and(|w| !w.is_empty()) {
        body.push_str("<h2>Findings and warnings</h2>");
        for f in findings {
            body.push_str(&format!("<div class=\"finding\">{}</div>", esc(&f.to_string())));
        }
        body.push_str(&warnings(run));
    }
    body.push_str("<h2>Results</h2>");
    for (title, table) in experiment_tables(trials) {
        let axes = table.headers().iter().take_while(|h| *h != "ok/runs").count();
        body.push_str(&format!("<h3>{}</h3>{}", esc(&title), html_table(&table, axes)));
    }
    let failed: Vec<&TrialRecord> = trials.iter().filter(|t| !t.is_ok()).collect();
    if !failed.is_empty() {
        let mut t = Table::new(["Family", "Parameters", "Repeat", "Status", "Reason"])
            .left_align(0)
            .left_align(1)
            .left_align(3)
            .left_align(4);
        for f in failed {
            t.push(vec![
                f.family.as_str().to_string(),
                Json::Object(f.params.clone()).to_string(),
                f.repeat.to_string(),
                f.status.label().to_string(),
                f.status.reason().unwrap_or_default().to_string(),
            ]);
        }
        body.push_str(&format!("<h3>Trials not ok (excluded from the figures)</h3>{}", html_table(&t, 5)));
    }
    if !charts.is_empty() {
        body.push_str("<h2>Plots</h2>");
        for c in charts {
            body.push_str(&format!("<figure id=\"{}\">{}</figure>", esc(&c.name), c.svg));
        }
    }
    body.push_str(&format!("<h2>Machine</h2>{}", machine_table(&run.machine)));
    body.push_str(&format!("<h2>Suite</h2><pre>{}</pre>", esc(&run.suite_text)));
    page(&format!("schedlab run {} ({})", run.id, run.suite_name), &body)
}

pub fn compare_page(a: &RunRecord, b: &RunRecord, rows: &[Row], threshold: f64) -> String {
    let who = |r: &RunRecord| {
        format!(
            "run {} ({}, {} on {}, kernel {})",
            r.id,
            r.suite_name,
            r.started,
            r.machine.get("hostname").and_then(Json::as_str).unwrap_or("unknown"),
            r.machine.get("kernel_release").and_then(Json::as_str).unwrap_or("unknown")
        )
    };
    let regressions = rows.iter().filter(|r| r.regression).count();
    let mut body = format!(
        "<h1>schedlab compare</h1><p class=\"meta\">A = {}<br>B = {}<br>B/A is the ratio of medians with a 95% bootstrap \
         interval; verdicts from a Mann-Whitney test at p &lt; {}; regression threshold {:.1}%.</p>",
        esc(&who(a)),
        esc(&who(b)),
        compare::ALPHA,
        threshold * 100.0
    );
    body.push_str(&format!(
        "<div class=\"{}\">{} figures compared, {regressions} regression(s)</div>",
        if regressions > 0 { "warn" } else { "finding" },
        rows.len()
    ));
    body.push_str(&html_table(&compare::table(rows), 3));
    body.push_str(&format!(
        "<h2>Machine A</h2>{}<h2>Machine B</h2>{}",
        machine_table(&a.machine),
        machine_table(&b.machine)
    ));
    page(&format!("schedlab compare {} {}", a.id, b.id), &body)
}
