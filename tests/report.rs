//! Reports and comparisons on real stored runs: tables, findings, SVG files, the HTML
//! page rendered in headless Chromium, and `compare` with its exit status.

mod common;

use common::*;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

/// Every family, with enough ring sizes to look for a knee and enough repeats to decide.
const SUITE: &str = r#"
name = "report-test"
[[experiment]]
family = "ring"
procs = [2, 3, 4, 6]
laps = 200
cpus = "0"
repeat = 4

[[experiment]]
family = "workload"
workload = "cpu"
procs = 2
iterations = 200000
policy = ["other", "batch"]
repeat = 4

[[experiment]]
family = "latency"
interval = "500us"
loops = 100
repeat = 2
"#;

#[test]
fn report_prints_tables_findings_and_writes_svg_and_html() {
    let dir = Scratch::new("report-report");
    let db = dir.path("r.db");
    let suite = dir.write("s.toml", SUITE);
    let run_out = schedlab_in(&db, &["run", &suite]);
    assert_eq!(run_out.status.code(), Some(0), "{}", String::from_utf8_lossy(&run_out.stderr));
    // The run itself wrote its HTML report beside the database and said where.
    assert!(String::from_utf8_lossy(&run_out.stderr).contains("r-run-1.html"));
    assert!(dir.path("r-run-1.html").exists());

    let text = ok_stdout(&db, &["report", "1"]);
    for needle in ["Projected s", "CPU/Proj", "ns/switch", "Wall s", "p99 µs", "findings:", "ring (cpus=0 laps=200)"] {
        assert!(text.contains(needle), "missing {needle}: {text}");
    }
    let markdown = ok_stdout(&db, &["report", "1", "--format", "markdown"]);
    assert!(markdown.contains("| procs | ok/runs |") && markdown.contains("### Findings"), "{markdown}");
    let csv = ok_stdout(&db, &["report", "1", "--format", "csv"]);
    assert!(csv.contains("procs,ok/runs,Real s"), "{csv}");

    let svg_dir = dir.path("plots");
    let html = dir.path("run.html");
    ok_stdout(&db, &["report", "1", "--svg", &svg_dir.display().to_string(), "--html", &html.display().to_string()]);
    let mut names: Vec<String> =
        std::fs::read_dir(&svg_dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    assert_eq!(
        names,
        [
            "forest.svg",
            "latency-3-histogram.svg",
            "latency-3-strip-1.svg",
            "latency-3-tail.svg",
            "ring-1.svg",
            "workload-2-cpu-switches.svg",
            "workload-2-cpu-wall.svg"
        ]
    );
    for name in &names {
        let svg = std::fs::read_to_string(svg_dir.join(name)).unwrap();
        assert!(svg.starts_with("<svg") && svg.ends_with("</svg>"), "{name}");
        // Short CPU-bound children are often never preempted: a log axis of all-zero
        // switch counts says so instead of drawing a line.
        let all_zero_switches = name.ends_with("-switches.svg") && svg.contains("every value is 0");
        // A strip plot draws dots, no lines; so does a forest plot (a dot a ratio).
        let dots = (name.contains("-strip-") || name == "forest.svg") && svg.contains("<circle");
        assert!(svg.contains("<path") || dots || all_zero_switches, "{name}: {svg}");
    }
    let page = std::fs::read_to_string(&html).unwrap();
    // Self-contained: no scripts, styles, fonts or images from anywhere else.
    let without_namespace = page.replace("xmlns=\"http://www.w3.org/2000/svg\"", "");
    for reference in ["http://", "https://", "src=", "<link", "@import", "url("] {
        assert!(!without_namespace.contains(reference), "the page refers to {reference}");
    }
    // The six plots, and the forest plot of the run's one question.
    assert_eq!(page.matches("<figure").count(), 7);
    // The strip plot of the latency trials' largest samples over time: a dot each.
    let strip = std::fs::read_to_string(svg_dir.join("latency-3-strip-1.svg")).unwrap();
    assert!(strip.contains("time since the trial's start") && strip.matches("<circle").count() >= 100, "{strip}");
    assert!(page.contains("kernel_release") && page.contains("[[experiment]]"));
    render_in_chromium(&html, 7);
}

/// The width and height of the window the pages are read in: a laptop's first screen.
const WINDOW: (u32, u32) = (1280, 800);

/// Load the page in headless Chromium in a 1280 x 800 window: no script errors, every
/// plot laid out with a non-zero size (the page records them in `data-plot-sizes` on
/// load), and nothing cut off: the page no wider than the window (no horizontal scroll)
/// and no table, box, listing or plot wider than its room (`data-page-width`,
/// `data-cut`). Returns the page's DOM as laid out, `None` without Chromium.
fn render_in_chromium(html: &Path, plots: usize) -> Option<String> {
    let Some(browser) = ["chromium", "chromium-browser", "google-chrome"].into_iter().find(|b| {
        Command::new(b).arg("--version").stdout(Stdio::null()).stderr(Stdio::null()).status().is_ok_and(|s| s.success())
    }) else {
        eprintln!("skipped: no Chromium here (.ci/run installs Debian's chromium)");
        return None;
    };
    // A profile per call: the tests of this file run in parallel, and two browsers on one
    // profile collide on its SingletonLock.
    static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let call = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let profile = std::env::temp_dir().join(format!("schedlab-chromium-{}-{call}", std::process::id()));
    let out = Command::new(browser)
        .args(["--headless", "--no-sandbox", "--disable-gpu", "--enable-logging=stderr", "--v=0"])
        .arg(format!("--window-size={},{}", WINDOW.0, WINDOW.1))
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg("--dump-dom")
        .arg(html)
        .output()
        .unwrap();
    let _ = std::fs::remove_dir_all(&profile);
    let dom = String::from_utf8_lossy(&out.stdout).into_owned();
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "chromium failed: {log}");
    assert!(!log.contains("Uncaught") && !log.contains("CONSOLE"), "the page logged errors: {log}");
    let sizes: Vec<(u32, u32)> = attribute(&dom, "data-plot-sizes")
        .split_whitespace()
        .map(|s| {
            let (w, h) = s.split_once('x').unwrap();
            (w.parse().unwrap(), h.parse().unwrap())
        })
        .collect();
    assert_eq!(sizes.len(), plots, "{sizes:?}");
    assert!(sizes.iter().all(|&(w, h)| w > 100 && h > 50), "{sizes:?}");
    // "scroll width, client width, window": the window is the one asked for, and the page
    // scrolls no wider than it shows.
    let width = attribute(&dom, "data-page-width");
    let parts: Vec<&str> = width.split_whitespace().collect();
    let (scroll, client): (u32, u32) = (parts[0].parse().unwrap(), parts[1].parse().unwrap());
    assert!(parts[2].starts_with(&format!("{}x", WINDOW.0)), "the window: {width}");
    assert!(client > WINDOW.0 - 40 && scroll <= client, "the page scrolls sideways at {} px: {width}", WINDOW.0);
    assert_eq!(attribute(&dom, "data-cut"), "", "cut off at {} px (tag and index on the page)", WINDOW.0);
    Some(dom)
}

/// The value of an attribute the page's script set on load.
fn attribute(dom: &str, name: &str) -> String {
    let at = format!("{name}=\"");
    dom.split(&at).nth(1).and_then(|rest| rest.split('"').next()).expect("the page loaded").to_string()
}

/// A ring pinned to CPU `cpu`, 5 repeats.
fn ring_suite(cpu: usize) -> String {
    format!("name = \"cmp\"\n[[experiment]]\nfamily = \"ring\"\nprocs = 2\nlaps = 2000\ncpus = \"{cpu}\"\npin = \"same\"\nrepeat = 5\n")
}

/// The planted regression's two runs, measured once for both stores: the ring on the last
/// CPU, away from the other tests' rings on CPU 0, then the same ring beside a busy loop,
/// both with their noise floors; as `schedlab export` writes them.
fn planted_runs() -> &'static str {
    static EXPORTED: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    EXPORTED.get_or_init(|| {
        let dir = Scratch::new("report-planted");
        let db = dir.path("measured.db");
        let cpu = std::thread::available_parallelism().map_or(1, |n| n.get()) - 1;
        let suite = dir.write("ring.toml", &ring_suite(cpu));
        ok_stdout(&db, &["run", &suite, "--noise-probe", "on"]);
        // The heavier setting: the same ring, sharing its CPU with a busy loop at nice -10,
        // which takes nine tenths of it: the ring is 10-20 times slower. (At nice -20 it
        // took 99 %, and everything schedlab did on that CPU, the noise probe and each
        // trial's start, took 30-40 s.)
        let hog = BusyLoops::start(&[cpu], -10);
        std::thread::sleep(Duration::from_millis(200));
        let loaded = schedlab_in(&db, &["run", &suite, "--noise-probe", "on"]);
        drop(hog);
        assert_eq!(loaded.status.code(), Some(0), "{}", String::from_utf8_lossy(&loaded.stderr));
        ok_stdout(&db, &["export", "1", "2"])
    })
}

#[test]
fn compare_finds_a_planted_regression_and_exits_1() {
    planted_regression(&Dbs::sqlite("report-compare"));
}

#[test]
fn pg_compare_finds_a_planted_regression_and_exits_1() {
    if let Some(dbs) = Dbs::postgres("compare") {
        planted_regression(&dbs);
    }
}

/// Compare the planted runs, imported into `dbs`'s store.
fn planted_regression(dbs: &Dbs) {
    if !is_root() {
        eprintln!("skipped: the planted regression needs root (a busy loop at nice -10)");
        return;
    }
    let dir = &dbs.dir;
    let db = dbs.db("c");
    ok_stdout(&db, &["import", &dir.write("planted.json", planted_runs())]);
    let out = schedlab_in(&db, &["compare", "1", "2"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}{}", String::from_utf8_lossy(&out.stderr));
    assert!(text.contains("B slower REGRESSION") && text.contains("ns/switch"), "{text}");
    // Two separate runs: the hog's slowdown had to clear their drift band too.
    assert!(text.contains("mode: separate runs") && text.contains("p Holm"), "{text}");
    // Each run probed the machine's noise first, the second beside the hog on the ring's
    // CPU: the floors differ beyond their repeats' spread, and compare says so.
    assert!(text.contains("noise floors (probed before each run's trials)"), "{text}");
    assert!(text.contains("the floors differ") && text.contains("2-member ring"), "{text}");
    // The other way round it is an improvement, and a huge threshold forgives it.
    let out = schedlab_in(&db, &["compare", "2", "1"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stdout).contains("B faster"));
    assert_eq!(schedlab_in(&db, &["compare", "1", "2", "--threshold", "100000%"]).status.code(), Some(0));
    // JSON and Markdown, and the HTML section.
    let out = schedlab_in(
        &db,
        &["compare", "1", "2", "--format", "json", "--html", &dir.path("cmp.html").display().to_string()],
    );
    assert_eq!(out.status.code(), Some(1));
    let lines = json_lines(&out.stdout);
    // The rows, then one line with both runs' noise floors.
    let floors = lines.iter().find_map(|l| l.get("noise_floors")).expect("a noise_floors line");
    assert_eq!(floors["runs"].as_array().unwrap().len(), 2, "{floors}");
    let rows: Vec<&serde_json::Value> = lines.iter().filter(|l| l.get("noise_floors").is_none()).collect();
    assert!(rows
        .iter()
        .any(|r| r["regression"] == true && r["verdict"] == "slower" && r["ci_low"].as_f64().unwrap() > 1.0));
    assert!(rows
        .iter()
        .all(|r| r["mode"] == "separate" && r["drift"].as_f64().is_some() && r["p_adjusted"].is_number()));
    let page = std::fs::read_to_string(dir.path("cmp.html")).unwrap();
    assert!(page.contains("REGRESSION"));
    assert!(page.contains("<h2>Noise floors</h2>") && page.contains("The floors differ"), "{page}");
    // The forest plot of the figures' ratios: the regression red, beside the threshold's band.
    let forest = page.find("<figure id=\"compare-forest\" class=\"forest\"><svg").expect("the forest plot");
    assert!(page[forest..].contains("B slower: a regression") && page[forest..].contains("the regression threshold"));
    render_in_chromium(&dir.path("cmp.html"), page.matches("<figure").count());
    // And each run's own page says what its floor was.
    let run_page = dir.path("run2.html");
    ok_stdout(&db, &["report", "2", "--html", &run_page.display().to_string()]);
    assert!(std::fs::read_to_string(&run_page).unwrap().contains("Noise floor (probed before the trials): "));
    let md = String::from_utf8(schedlab_in(&db, &["compare", "1", "2", "--format", "markdown"]).stdout).unwrap();
    assert!(md.starts_with("| Family |"), "{md}");
}

#[test]
fn compare_refuses_what_cannot_be_compared() {
    let dir = Scratch::new("report-compare-bad");
    let db = dir.path("c.db");
    let a = dir.write("a.toml", "[[experiment]]\nfamily = \"ring\"\nprocs = 2\nlaps = 10\nrepeat = 2\n");
    let b = dir.write("b.toml", "[[experiment]]\nfamily = \"ring\"\nprocs = 3\nlaps = 10\n");
    ok_stdout(&db, &["run", &a]);
    ok_stdout(&db, &["run", &b]);
    ok_stdout(&db, &["run", &a]);
    let err = |args: &[&str]| {
        let out = schedlab_in(&db, args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        String::from_utf8(out.stderr).unwrap()
    };
    assert!(err(&["compare", "1", "2"]).contains("no trials in common"));
    assert!(err(&["compare", "1", "99"]).contains("there is no run 99"));
    assert!(err(&["compare", "1", "3", "--html", "/proc/nope/cmp.html"]).contains("cannot write"));
    assert!(err(&["report", "42"]).contains("there is no run 42"));
    // Two repeats each: shown, but no verdict from so few.
    let text = ok_stdout(&db, &["compare", "1", "3"]);
    assert!(text.contains("cannot decide: 2 and 2 ok repeats"), "{text}");
}

#[test]
fn several_runs_are_overlaid_with_the_1992_machines_and_their_knees() {
    let dir = Scratch::new("report-overlay");
    let db = dir.path("o.db");
    let imported = schedlab_in(&db, &["import", "--reference", "ncar-1992"]);
    assert_eq!(imported.status.code(), Some(0), "{}", String::from_utf8_lossy(&imported.stderr));
    let ring = dir.write(
        "ring.toml",
        "name = \"live\"\n[[experiment]]\nfamily = \"ring\"\nprocs = [2, 4, 8]\nlaps = 200\ncpus = \"0\"\nrepeat = 2\n",
    );
    let latency = dir.write("lat.toml", "[[experiment]]\nfamily = \"latency\"\ninterval = \"500us\"\nloops = 50\n");
    ok_stdout(&db, &["run", &ring]); // run 10
    ok_stdout(&db, &["run", &latency]); // run 11: nothing to overlay
    let all: Vec<String> = (1..=11).map(|i| i.to_string()).collect();
    let mut args: Vec<&str> = vec!["report"];
    args.extend(all.iter().map(String::as_str));

    // Text: every run's report, then the overlay table and each line's findings.
    let text = ok_stdout(&db, &args);
    assert_eq!(text.matches("suite ncar-1992-published").count(), 9, "{text}");
    assert!(text.contains("cross-machine overlay: CPU µs per hop"), "{text}");
    assert!(text.contains("run 7: Sun-4/280, SunOS 4.1.1 (NCAR 1992, published) (imported, not measured here)"));
    assert!(text.contains("run 7: ring (laps=1000000): knee between 10 and 16 processes"), "{text}");
    assert!(text.contains("run 11 is not in the overlay: no ring trials"), "{text}");
    let header = text.lines().find(|l| l.trim_start().starts_with("Procs")).expect("the overlay table");
    assert!(header.contains("run 1 ") && header.contains("run 10"), "{header}");
    assert!(!header.contains("run 11"), "{header}");

    // JSON: each run's own document, then the overlay's numbers.
    let mut json_args = args.clone();
    json_args.extend(["--format", "json"]);
    let doc: serde_json::Value = serde_json::from_str(&ok_stdout(&db, &json_args)).unwrap();
    assert_eq!(doc["runs"].as_array().unwrap().len(), 11);
    let lines = doc["overlay"]["lines"].as_array().unwrap();
    assert_eq!(lines.len(), 10);
    let sun = lines.iter().find(|l| l["run"] == 7).unwrap();
    assert_eq!(sun["knees"], serde_json::json!([{"before": 10.0, "after": 16.0}]));
    assert_eq!(sun["points"][0]["procs"], 2.0);
    // 873 CPU seconds over 2,000,000 hops (76 + 798 s as stored: user + system).
    assert!((sun["points"][0]["median"].as_f64().unwrap() - 437_000.0).abs() < 1.0, "{}", sun["points"][0]);
    assert_eq!(lines[9]["imported"], false);
    assert_eq!(doc["overlay"]["left_out"], serde_json::json!([{"run": 11, "why": "no ring trials"}]));

    // Markdown and CSV carry the overlay too; one run (named twice) is reported as before.
    let mut md = args.clone();
    md.extend(["--format", "markdown"]);
    assert!(ok_stdout(&db, &md).contains("## Cross-machine overlay"));
    let mut csv = args.clone();
    csv.extend(["--format", "csv"]);
    assert!(ok_stdout(&db, &csv).contains("# cross-machine overlay"));
    assert_eq!(ok_stdout(&db, &["report", "7", "7"]), ok_stdout(&db, &["report", "7"]));
    assert!(!ok_stdout(&db, &["report", "7"]).contains("overlay"));

    // The plot: one line per ring run, log scale, a knee marker for every knee found.
    let svg_dir = dir.path("svg");
    let html = dir.path("overlay.html");
    let mut files = args.clone();
    let (svg_arg, html_arg) = (svg_dir.display().to_string(), html.display().to_string());
    files.extend(["--svg", &svg_arg, "--html", &html_arg]);
    ok_stdout(&db, &files);
    let svg = std::fs::read_to_string(svg_dir.join("overlay.svg")).unwrap();
    assert!(svg.starts_with("<svg") && svg.ends_with("</svg>"));
    assert_eq!(svg.matches("<path").count(), 10, "one path per ring run");
    assert!(svg.contains("CPU µs per hop (log scale)"), "1992's ~500 µs beside a few µs here");
    assert!(svg.contains("run 7: Sun-4/280, SunOS 4.1.1 (NCAR 1992, published): knee between 10 and 16 processes"));
    let knees_found: usize = doc["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["findings"].as_array().unwrap().iter().filter(|f| f["kind"] == "knee").count())
        .sum();
    assert!(knees_found >= 1);
    assert_eq!(svg.matches("class=\"knee\"").count(), knees_found, "a marker for every knee the runs' findings state");
    assert!(svg_dir.join("run7-ring-1.svg").exists() && svg_dir.join("run11-latency-1-tail.svg").exists());

    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("<figure id=\"overlay\"><svg"), "the overlay is on the page");
    assert!(page.contains("<h2>schedlab run 7: ncar-1992-published</h2>") && page.contains("id=\"run7-ring-1\""));
    assert!(page.contains("run 11 is not in the overlay: no ring trials"));
    let without_namespace = page.replace("xmlns=\"http://www.w3.org/2000/svg\"", "");
    assert!(!without_namespace.contains("http://") && !without_namespace.contains("src="));
    render_in_chromium(&html, page.matches("<figure").count());
}

/// A run of a seed suite (here a tiny one named `policy-study`) ends with the seed's
/// claims, decided on the study's built-in data and on the run: in the text, the JSON and
/// the HTML page, which opens with them.
#[test]
fn a_seed_suite_run_carries_the_seeds_claims_in_text_json_and_html() {
    let dir = Scratch::new("claims");
    let suite = dir.write(
        "policy-study.toml",
        "name = \"policy-study\"\n[[experiment]]\nfamily = \"workload\"\nworkload = \"cpu\"\npolicy = [\"other\", \"fifo\", \"rr\"]\n\
         procs = 10\niterations = 200000\nrepeat = 6\n",
    );
    let db = dir.path("runs.db");
    let out = ok_stdout(&db, &["run", &suite]);
    assert!(out.contains("The 2014 policy study's conclusions (CSCI 3753)"), "{out}");
    let doc: serde_json::Value = serde_json::from_str(&ok_stdout(&db, &["report", "1", "--format", "json"])).unwrap();
    let rows = doc["claims"]["rows"].as_array().expect("claims in the JSON");
    assert_eq!(rows.len(), 7);
    let row = |id: &str| rows.iter().find(|r| r["id"] == id).unwrap_or_else(|| panic!("no claim {id}"));
    // On the study's own five runs a cell (built in, so always the same): the I/O lead of
    // the real-time policies holds, OTHER's CPU-bound lead does not reach significance.
    assert_eq!(row("io-rt-faster")["seed_data"]["verdict"], "holds");
    assert_eq!(row("cpu-other-fastest")["seed_data"]["verdict"], "undecided");
    for r in rows {
        let seed = &r["seed_data"];
        assert!(seed["test"].as_str().unwrap().contains("Mann-Whitney"), "{r}");
        assert!(seed["n"].as_str().unwrap().contains("5 v 5"), "{r}");
    }
    // This run covers only CPU-bound work at 10 processes: every other claim says so.
    assert_eq!(row("mixed-lead-gone-at-500")["this_run"]["verdict"], "not_covered");
    assert_eq!(row("io-fifo-rr-alike")["this_run"]["verdict"], "not_covered");
    assert!(row("cpu-other-fastest")["this_run"]["test"].as_str().unwrap().contains("paired blocks"));
    let html = dir.path("claims.html");
    ok_stdout(&db, &["report", "1", "--html", &html.display().to_string()]);
    let page = std::fs::read_to_string(&html).unwrap();
    let claims_at = page.find("Does the seed's conclusion hold here?").expect("the claims section");
    assert!(claims_at < page.find("Results").unwrap(), "the page opens with the claims");
    assert!(page.contains("SCHED_FIFO and SCHED_RR are faster than SCHED_OTHER"));
    render_in_chromium(&html, page.matches("<figure").count());
}

/// A policy study as the seed asks it, small: three workloads at three process counts
/// under three policies, nine questions.
const POLICY_STUDY: &str = r#"
name = "policy-study"
[[experiment]]
family = "workload"
workload = "cpu"
policy = ["other", "fifo", "rr"]
procs = [4, 6, 8]
iterations = 50000
repeat = 6

[[experiment]]
family = "workload"
workload = "io"
policy = ["other", "fifo", "rr"]
procs = [4, 6, 8]
transfer_size = "8KiB"
block_size = "1KiB"
repeat = 6

[[experiment]]
family = "workload"
workload = "mixed"
policy = ["other", "fifo", "rr"]
procs = [4, 6, 8]
iterations = 20
repeat = 6
"#;

/// Answers at a glance (issue 31): a policy study's run ends with its question table,
/// one line a question and none wider than 100 columns, then the warnings and where the
/// detail is; its HTML page shows the question table and the forest plot of the decisions
/// on the first screen of a 1280 x 800 window, scrolls no wider than the window, and keeps
/// the findings in full under a disclosure.
#[test]
fn a_policy_study_answers_at_a_glance_in_the_terminal_and_on_the_first_screen() {
    let dir = Scratch::new("glance");
    let suite = dir.write("policy-study.toml", POLICY_STUDY);
    let db = dir.path("runs.db");
    // With its noise floor, as a real run's page has it (a line above the questions).
    let out = ok_stdout(&db, &["run", &suite, "--noise-probe", "on"]);
    let tail: Vec<&str> = out.lines().skip_while(|l| !l.starts_with("questions: ")).collect();
    assert!(tail.first().is_some_and(|l| l.ends_with(" of 9 answered")), "{out}");
    assert!(tail[1].starts_with("question ") && tail[1].contains("Holm p"), "{out}");
    let rows: Vec<&str> = tail[2..].iter().take_while(|l| l.starts_with("workload ")).copied().collect();
    assert_eq!(rows.len(), 9, "one line a question: {out}");
    for (kind, procs) in [("cpu", 4), ("io", 6), ("mixed", 8)] {
        let name = format!("workload {kind} procs={procs} ");
        assert!(rows.iter().any(|r| r.starts_with(&name)), "{name}: {out}");
    }
    // Every line within 100 columns, but for the page's path (one line, never cut).
    for line in &tail {
        let width = line.split(" the page /").next().unwrap_or(line).chars().count();
        assert!(width <= 100, "{width} columns: {line}");
    }
    // The method once, under the table; then the warnings; the last line says where the
    // detail is, and the findings' paragraphs are not printed.
    assert_eq!(out.matches("Method: paired blocks").count(), 1, "{out}");
    let last = tail.iter().rposition(|l| l.starts_with("detail: ")).expect("the detail line");
    assert!(tail[last..].join(" ").contains("schedlab report 1") && tail[last..].join(" ").contains("runs-run-1.html"));
    assert!(!out.contains("had the lowest median wall time"), "{out}");
    // The detail stays in the report, text and JSON.
    assert_eq!(ok_stdout(&db, &["report", "1"]).matches("had the lowest median wall time").count(), 9);
    let doc: serde_json::Value = serde_json::from_str(&ok_stdout(&db, &["report", "1", "--format", "json"])).unwrap();
    assert_eq!(doc["questions"]["asked"], 9);

    let page = std::fs::read_to_string(dir.path("runs-run-1.html")).unwrap();
    let questions = page.find("<section class=\"glance\" id=\"questions-1\">").expect("the question table");
    let forest = page.find("<figure id=\"questions-1-forest\" class=\"forest\"><svg").expect("the forest plot");
    let claims = page.find("Does the seed's conclusion hold here?").expect("the claims");
    let details = page.find("<details class=\"findings\">").expect("the findings in full");
    assert!(questions < forest && forest < claims && claims < details, "the order of the page");
    assert!(page[details..].contains("had the lowest median wall time"));
    assert_eq!(page[questions..forest].matches("<tr>").count(), 10, "a header and nine questions");
    // Every question's row in the plot, coloured by its answer, with the ±5 % band.
    let svg = &page[forest..page[forest..].find("</svg>").unwrap() + forest];
    assert_eq!(svg.matches("<g class=\"row\">").count(), 9);
    assert!(svg.contains("class=\"band\"") && svg.contains("within ±5%"));
    // The seed's claims have their own forest, under their table.
    assert!(page.contains("<figure id=\"claims-forest-1\" class=\"forest\"><svg"));

    let Some(dom) = render_in_chromium(&dir.path("runs-run-1.html"), page.matches("<figure").count()) else { return };
    // "table:TOP-BOTTOM figure:TOP-BOTTOM", in px from the top of the page: both within
    // the first screen (the layout's positions do not depend on the window's height).
    let first = attribute(&dom, "data-first-screen");
    let placed: Vec<(&str, u32)> = first
        .split_whitespace()
        .map(|p| {
            let (tag, span) = p.split_once(':').unwrap();
            (tag, span.split_once('-').unwrap().1.parse().unwrap())
        })
        .collect();
    assert_eq!(placed.iter().map(|p| p.0).collect::<Vec<_>>(), ["table", "figure"], "{first}");
    assert!(placed.iter().all(|&(_, bottom)| bottom <= WINDOW.1), "not on the first screen: {first}");
    eprintln!("first screen: {first} (of {} px)", WINDOW.1);
}

/// The other two seed suites carry theirs too (tiny runs under the suites' names).
#[test]
fn hrtimers_and_pipeline_runs_carry_their_seeds_claims() {
    let dir = Scratch::new("claims-others");
    let db = dir.path("runs.db");
    let hrtimers = dir.write(
        "hrtimers-2007.toml",
        "name = \"hrtimers-2007\"\n[[experiment]]\nfamily = \"latency\"\npolicy = [\"other\", \"fifo\"]\ninterval = \"1ms\"\nloops = 50\nrepeat = 2\n",
    );
    let pipeline = dir.write(
        "pipeline-1992.toml",
        "name = \"pipeline-1992\"\n[[experiment]]\nfamily = \"ring\"\nprocs = [2, 3, 4, 6, 8]\nlaps = 200\npin = \"same\"\nrepeat = 2\n",
    );
    ok_stdout(&db, &["run", &hrtimers]);
    ok_stdout(&db, &["run", &pipeline]);
    let claims = |run: &str| -> Vec<serde_json::Value> {
        let doc: serde_json::Value =
            serde_json::from_str(&ok_stdout(&db, &["report", run, "--format", "json"])).unwrap();
        doc["claims"]["rows"].as_array().cloned().expect("claims in the JSON")
    };
    let h = claims("1");
    assert_eq!(h.len(), 3);
    // One run a kernel and policy in 2007: nothing to test there, ever counted as holding.
    assert!(h.iter().all(|r| r["seed_data"]["verdict"] == "untestable"), "{h:?}");
    assert_eq!(h[2]["this_run"]["verdict"], "not_covered");
    let p = claims("2");
    assert_eq!(p.len(), 2);
    // The 1992 machines, built in: several rise, the Sun-4s have their knees.
    assert!(p.iter().all(|r| r["seed_data"]["verdict"] == "holds"), "{p:?}");
    assert_eq!(p[1]["this_run"]["verdict"], "not_covered");
}
