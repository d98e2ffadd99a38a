//! `schedlab import --reference csci3753-2014` and `--reference hrtimers-2007` on the real
//! binary and a real SQLite file, checked number by number against verbatim excerpts of
//! the seed documents (`tests/fixtures/seeds/`), read here by a parser of their own, not
//! schedlab's: every published value is stored exactly, what a document does not give is
//! stored as unknown, and importing a set twice stores nothing new.

mod common;

use common::*;
use serde_json::Value as Json;
use std::path::Path;

/// Appendix A of the 2014 study, verbatim (its code fences and blank lines included).
const APPENDIX_A: &str = include_str!("fixtures/seeds/csci3753-2014-appendix-a.txt");
/// The 2007 post's table, verbatim: each row's four numbers run together.
const TABLE_2007: &str = include_str!("fixtures/seeds/hrtimers-2007-table.txt");

/// `schedlab import ARGS --db DB`: exit code and stderr.
fn import(db: &Path, args: &[&str]) -> (Option<i32>, String) {
    let mut all = vec!["import"];
    all.extend_from_slice(args);
    let out = schedlab_in(db, &all);
    (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned())
}

fn listed(db: &Path) -> Vec<Json> {
    json_lines(ok_stdout(db, &["list", "--json"]).as_bytes())
}

/// One result line of the appendix, as the fixture prints it.
#[derive(Debug)]
struct Printed {
    text: String,
    workload: &'static str,
    policy: &'static str,
    procs: u64,
    iterations: Option<u64>,
    /// wall, user, system: (the text, hundredths).
    seconds: [(String, u64); 3],
    cpu_pct: u64,
    i_switched: u64,
    v_switched: u64,
}

fn hundredths(text: &str) -> u64 {
    let (whole, fraction) = text.split_once('.').unwrap_or_else(|| panic!("seconds with a point: {text}"));
    assert_eq!(fraction.len(), 2, "{text}");
    whole.parse::<u64>().unwrap() * 100 + fraction.parse::<u64>().unwrap()
}

fn policy_word(kernel_name: &str) -> &'static str {
    match kernel_name {
        "SCHED_OTHER" => "other",
        "SCHED_FIFO" => "fifo",
        "SCHED_RR" => "rr",
        other => panic!("not a policy of the study: {other}"),
    }
}

/// The appendix's result lines under their headings, in order.
fn appendix_lines() -> Vec<Printed> {
    let mut out = Vec::new();
    let mut program: Option<&'static str> = None;
    let mut cell: Option<(&'static str, u64, Option<u64>)> = None;
    for raw in APPENDIX_A.lines() {
        let line = raw.trim();
        match line {
            "Testing CPU Intensive Process" => program = Some("cpu"),
            "Testing I/O Intensive Process" => program = Some("io"),
            "Testing Mixed Process" => program = Some("mixed"),
            // "additional data for `mix-sched.c`", the appendix's first sentence says.
            "5.2 Additional Data" => program = Some("mixed"),
            _ => {}
        }
        let words: Vec<&str> = line.split_whitespace().collect();
        if line.ends_with("simultaneous processes...") {
            // ... using POLICY with N simultaneous processes...
            let n = words.len();
            assert_eq!((words[n - 6], words[n - 4]), ("using", "with"), "{line}");
            let iterations = (words[0] == "Calculating").then(|| words[3].parse::<u64>().unwrap());
            assert_eq!(iterations.is_none(), program == Some("io"), "{line}");
            cell = Some((policy_word(words[n - 5]), words[n - 3].parse().unwrap(), iterations));
        } else if line.starts_with("wall=") {
            let field = |key: &str| -> &str {
                words.iter().find_map(|w| w.strip_prefix(key)).unwrap_or_else(|| panic!("{key} in {line}"))
            };
            let (policy, procs, iterations) = cell.expect("a heading above the line");
            let seconds = ["wall=", "user=", "system="].map(|k| (field(k).to_string(), hundredths(field(k))));
            out.push(Printed {
                text: line.to_string(),
                workload: program.expect("a program above the line"),
                policy,
                procs,
                iterations,
                seconds,
                cpu_pct: field("CPU=").trim_end_matches('%').parse().unwrap(),
                i_switched: field("i-switched=").parse().unwrap(),
                v_switched: field("v-switched=").parse().unwrap(),
            });
        }
    }
    out
}

#[test]
fn the_2014_study_is_stored_line_by_line_as_printed() {
    let printed = appendix_lines();
    assert_eq!(printed.len(), 27 * 5 + 3 * 5, "27 cells and the three 500-process cells, five runs each");

    let dir = Scratch::new("seeds-csci");
    let db = dir.path("s.db");
    let (code, err) = import(&db, &["--reference", "csci3753-2014"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains("imported run") && err.contains("150 trials"), "{err}");
    assert!(!err.contains("warning"), "every printed CPU % agrees with its seconds: {err}");

    let doc = export_json(&db, "1");
    let run = &doc["runs"][0];
    assert_eq!(
        (run["suite_name"].as_str(), run["status"].as_str()),
        (Some("csci3753-2014-published"), Some("finished"))
    );
    let machine = &run["machine"];
    assert_eq!(machine["imported"], true);
    assert_eq!(machine["kernel_release"], "3.8.0-38-generic");
    assert_eq!((machine["virtualisation"].as_str(), machine["cores"].as_u64()), (Some("VirtualBox"), Some(4)));
    assert!(machine["source"].as_str().unwrap().contains("CSCI 3753"), "{machine}");
    assert!(machine["figures"].as_str().unwrap().contains("imported, not measured by schedlab"));
    assert!(run["warnings"][0].as_str().unwrap().contains("not measured by schedlab"));
    let suite_text = run["suite_text"].as_str().unwrap();

    let trials = run["trials"].as_array().unwrap();
    assert_eq!(trials.len(), printed.len());
    let mut repeats: Vec<((&str, &str, u64), u64)> = Vec::new();
    for (t, p) in trials.iter().zip(&printed) {
        let what = &p.text;
        // The printed line itself, CPU % included, is kept with the run.
        assert!(suite_text.contains(what.as_str()), "{what} in the suite text");
        assert_eq!((t["family"].as_str(), t["status"].as_str()), (Some("workload"), Some("ok")), "{what}");
        let key = (p.workload, p.policy, p.procs);
        let repeat = match repeats.iter_mut().find(|(k, _)| *k == key) {
            Some((_, n)) => {
                *n += 1;
                *n
            }
            None => {
                repeats.push((key, 1));
                1
            }
        };
        assert_eq!(t["repeat"].as_u64(), Some(repeat), "{what}");
        let mut params = serde_json::json!({"policy": p.policy, "procs": p.procs, "workload": p.workload});
        if let Some(n) = p.iterations {
            params["iterations"] = n.into();
        }
        assert_eq!(t["params"], params, "{what}");
        let o = &t["outcome"];
        let [wall, user, system] = &p.seconds;
        let ns = |(_, cs): &(String, u64)| cs * 10_000_000;
        assert_eq!(o["wall_ns"].as_u64(), Some(ns(wall)), "{what}");
        assert_eq!(o["usage"]["utime_ns"].as_u64(), Some(ns(user)), "{what}");
        assert_eq!(o["usage"]["stime_ns"].as_u64(), Some(ns(system)), "{what}");
        assert_eq!(o["usage"]["nivcsw"].as_u64(), Some(p.i_switched), "i-switched: {what}");
        assert_eq!(o["usage"]["nvcsw"].as_u64(), Some(p.v_switched), "v-switched: {what}");
        assert_eq!(o["children"].as_u64(), Some(p.procs), "{what}");
        // What the study does not give is unknown, not 0 or 1.
        for unknown in ["fork_ns", "first_finish_ns", "last_finish_ns", "fairness", "pi_min", "run_delay_ns"] {
            assert!(o[unknown].is_null(), "{unknown} of {what}: {o}");
        }
        // The figures a report reads are the printed seconds, to the last digit.
        let f = &t["figures"];
        for (key, (text, _)) in ["wall_s", "user_s", "sys_s"].iter().zip(&p.seconds) {
            assert_eq!(f[*key].as_f64(), Some(text.parse::<f64>().unwrap()), "{key} of {what}");
        }
        assert!(f["fairness"].is_null() && f["first_finish_s"].is_null(), "{what}: {f}");
        // schedlab's CPU % is (user + system) / wall of the printed seconds. GNU time
        // truncates every figure it prints (the seconds to hundredths, the CPU % to a
        // whole one), so the printed CPU % is one the exact seconds could give.
        let cpu = f["cpu_pct"].as_f64().unwrap();
        let (w, u, s) = (wall.1 as f64, user.1 as f64, system.1 as f64);
        assert!((cpu - 100.0 * (u + s) / w).abs() < 1e-9, "{what}");
        let (lowest, highest) = (100.0 * (u + s) / (w + 1.0), 100.0 * (u + s + 2.0) / w);
        let pct = p.cpu_pct as f64;
        assert!(lowest < pct + 1.0 && highest > pct, "CPU={}% against {cpu}: {what}", p.cpu_pct);
        let spec = &t["spec"];
        assert_eq!(spec["prio"].as_u64(), Some(if p.policy == "other" { 0 } else { 99 }), "{what}");
    }

    // Once more: nothing new.
    let before = ok_stdout(&db, &["export", "1"]);
    let (code, err) = import(&db, &["--reference", "csci3753-2014"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains("already in") && err.contains("as run 1") && !err.contains("imported run"), "{err}");
    assert_eq!(listed(&db).len(), 1);
    assert_eq!(ok_stdout(&db, &["export", "1"]), before);

    // The report prints no made-up figure: fairness and finish times are "-".
    let report = ok_stdout(&db, &["report", "1"]);
    assert!(report.contains("not measured by schedlab"), "{report}");
    let row = report.lines().find(|l| l.starts_with("other ") && l.contains(" 500 ")).expect("the 500-process row");
    assert!(row.contains("78.090") && row.trim_end().ends_with('-'), "{row}");
}

/// The 2007 table's rows: (name, the run-together digits).
fn table_rows() -> Vec<(&'static str, &'static str)> {
    TABLE_2007
        .lines()
        .filter_map(|l| {
            let l = l.trim();
            ["min", "max", "avg"].into_iter().find_map(|name| Some((name, l.strip_prefix(name)?)))
        })
        .collect()
}

#[test]
fn the_2007_table_is_stored_as_two_kernels_whose_split_gives_the_printed_digits() {
    let rows = table_rows();
    assert_eq!(rows.iter().map(|r| r.0).collect::<Vec<_>>(), ["min", "max", "avg"]);
    assert!(TABLE_2007.starts_with("2.6.19rc6 vanilla2.6.20-hrt-dynticks1"));

    let dir = Scratch::new("seeds-hrtimers");
    let db = dir.path("h.db");
    let (code, err) = import(&db, &["--reference", "hrtimers-2007"]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(err.matches("imported run").count(), 2, "{err}");
    let runs = listed(&db);
    assert_eq!(runs.len(), 2);
    assert_eq!(
        runs.iter().map(|r| r["kernel"].as_str().unwrap()).collect::<Vec<_>>(),
        ["2.6.19-rc6", "2.6.20-hrt-dynticks1"]
    );
    assert!(runs.iter().all(|r| r["suite"] == "hrtimers-2007-published" && r["ok"] == 2));

    // The columns in the table's order: vanilla user, vanilla root, hrt user, hrt root.
    let mut columns: Vec<Json> = Vec::new();
    for id in ["1", "2"] {
        let run = export_json(&db, id)["runs"][0].clone();
        assert_eq!(run["machine"]["imported"], true);
        assert!(run["machine"]["source"].as_str().unwrap().contains("hrtimers"));
        let trials = run["trials"].as_array().unwrap();
        assert_eq!(trials.len(), 2);
        for (t, (policy, prio)) in trials.iter().zip([("other", 0), ("fifo", 99)]) {
            assert_eq!(t["params"], serde_json::json!({"freq": 85, "loops": 850, "policy": policy}));
            assert_eq!((t["spec"]["policy"].as_str(), t["spec"]["prio"].as_u64()), (Some(policy), Some(prio)));
            assert_eq!(t["spec"]["interval_ns"], 11_764_705, "1000000000 / 85, as the post's PERIOD");
            let all = &t["outcome"]["all"];
            assert_eq!((all["samples"].as_u64(), all["overruns"].as_u64()), (Some(850), Some(0)));
            // Percentiles and run-queue figures: unknown, never invented.
            for unknown in ["p50_ns", "p90_ns", "p99_ns", "p999_ns", "p9999_ns", "run_delay_ns", "migrations"] {
                assert!(all[unknown].is_null(), "{unknown}: {all}");
                assert!(t["figures"][unknown].is_null(), "{unknown}: {}", t["figures"]);
            }
            assert_eq!(t["outcome"]["histogram"], serde_json::json!([]));
            columns.push(all.clone());
        }
    }
    for (name, digits) in &rows {
        let key = format!("{name}_ns");
        let joined: String = columns
            .iter()
            .map(|c| match c[&key].as_f64() {
                Some(v) if v.fract() == 0.0 => format!("{}", v as u64),
                other => panic!("{key} is a whole number of ns: {other:?}"),
            })
            .collect();
        assert_eq!(&joined, digits, "the {name} row, concatenated");
    }
    // The post's sentences: worst case about 10 ms without hrtimers, about 0.4 ms with;
    // average about 6 ms down to about 0.04 ms.
    let figure = |c: &Json, key: &str| c[key].as_f64().unwrap();
    assert!(columns[..2].iter().all(|c| (figure(c, "max_ns") / 1e6 - 10.0).abs() < 1.0));
    assert!((figure(&columns[2], "max_ns") / 1e6 - 0.4).abs() < 0.01);
    assert!(columns[..2].iter().all(|c| (figure(c, "avg_ns") / 1e6).floor() == 6.0));
    assert!(columns[2..].iter().all(|c| (figure(c, "avg_ns") / 1e6 - 0.04).abs() < 0.01));

    // Reports print "-" for the percentiles, never a number.
    let report = ok_stdout(&db, &["report", "2"]);
    let row = report.lines().find(|l| l.starts_with("fifo ")).expect("the fifo row");
    let cells: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(cells[..6], ["fifo", "1/1", "850", "2.8", "30.5", "-"], "{row}");
    assert!(report.contains("not measured by schedlab") && report.contains("percentiles are unknown"), "{report}");
    let json: Json = serde_json::from_str(&ok_stdout(&db, &["report", "2", "--format", "json"])).unwrap();
    let group = &json["experiments"][0]["groups"][1];
    assert!(group["figures"].get("p99_ns").is_none_or(|f| f["n"] == 0), "{group}");
    assert_eq!(group["headline"]["median"], Json::Null);
    // With no p99 to compare, the policies' finding is of the maximum, named as such:
    // never the maximum's numbers under the p99's name.
    let findings = json["findings"].as_array().unwrap();
    assert!(findings.iter().all(|f| f["kind"] != "latency_leader"), "{findings:?}");
    let max = findings.iter().find(|f| f["kind"] == "compared").expect("a finding of the maximum");
    assert!(max["figure"].as_str().unwrap().starts_with("max"), "{max}");
    assert!(!report.contains("lowest median p99") && !report.contains("maximum not tested"), "{report}");

    // Once more: nothing new.
    let (code, err) = import(&db, &["--reference", "hrtimers-2007"]);
    assert_eq!(code, Some(0));
    assert_eq!(err.matches("already in").count(), 2, "{err}");
    assert_eq!(listed(&db).len(), 2);
}

#[test]
fn reference_names_are_listed_and_others_refused_with_exit_2() {
    let help = stdout_of(&["import", "--help"]);
    for name in ["ncar-1992", "csci3753-2014", "hrtimers-2007"] {
        assert!(help.contains(name), "{name} in: {help}");
    }
    let dir = Scratch::new("seeds-bad");
    let db = dir.path("b.db");
    let (code, err) = import(&db, &["--reference", "csci3753-2015"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("ncar-1992") && err.contains("csci3753-2014") && err.contains("hrtimers-2007"),
        "the names: {err}"
    );
    assert!(!err.contains("panicked"), "{err}");
    assert!(!db.exists(), "a refused import made the database");
    // All three sets side by side: 1 + 2 + 9 runs.
    for name in ["csci3753-2014", "hrtimers-2007", "ncar-1992"] {
        assert_eq!(import(&db, &["--reference", name]).0, Some(0));
    }
    assert_eq!(listed(&db).len(), 12);
}

/// `schedlab report ARGS --db DB`: exit code, stdout and stderr.
fn report(db: &Path, args: &[&str]) -> (Option<i32>, String, String) {
    let mut all = vec!["report"];
    all.extend_from_slice(args);
    let out = schedlab_in(db, &all);
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_run_is_reported_against_the_seeds_in_their_own_form() {
    let dir = Scratch::new("seeds-against");
    let db = dir.path("a.db");
    // A small measured run (SCHED_OTHER only: no privilege needed) with both families.
    let suite = dir.write(
        "mini.toml",
        "name = \"mini\"\n\
         [[experiment]]\nfamily = \"workload\"\nworkload = \"cpu\"\npolicy = \"other\"\nprocs = [10]\n\
         iterations = 200_000\nrepeat = 2\n\
         [[experiment]]\nfamily = \"latency\"\npolicy = \"other\"\nfreq = 85\nloops = 17\nrepeat = 1\n",
    );
    let out = schedlab_in(&db, &["run", &suite]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    for name in ["csci3753-2014", "hrtimers-2007"] {
        assert_eq!(import(&db, &["--reference", name]).0, Some(0));
    }
    // Run 1 is measured, run 2 the study, runs 3 and 4 the post's kernels.

    let (code, text, err) = report(&db, &["1", "--against", "csci3753-2014"]);
    assert_eq!(code, Some(0), "{err}");
    let section = text.split("against csci3753-2014:").nth(1).expect("the section after the report");
    assert!(section.contains("cpu: wall time and switches") && section.contains("200000 pi samples"), "{section}");
    assert!(section.contains("2014: 100000000 pi samples"), "{section}");
    let row = section.lines().find(|l| l.starts_with("SCHED_OTHER") && l.split_whitespace().nth(1) == Some("10"));
    let cells: Vec<&str> = row.expect("OTHER at 10 processes").split_whitespace().collect();
    // Policy, procs, this run's wall, the study's median wall (14.79 s), ..., n, 2014 n.
    assert_eq!((cells[3], cells[8], cells[9]), ("14.79", "2", "5"), "{cells:?}");
    assert!(cells[2].parse::<f64>().unwrap() > 0.0, "{cells:?}");
    assert!(!section.contains("io: wall time"), "no io trials in this run: {section}");

    let (code, text, err) = report(&db, &["1", "--against", "hrtimers-2007"]);
    assert_eq!(code, Some(0), "{err}");
    let section = text.split("against hrtimers-2007:").nth(1).expect("the section");
    let header = section.lines().find(|l| l.starts_with("ns ")).unwrap();
    assert!(header.contains("SCHED_OTHER") && header.contains("2.6.19-rc6 user"), "{header}");
    let min: Vec<&str> = section.lines().find(|l| l.starts_with("min")).unwrap().split_whitespace().collect();
    assert_eq!(min[2..], ["2809853", "2331812", "2939", "2803"], "{section}");
    let samples: Vec<&str> = section.lines().find(|l| l.starts_with("samples")).unwrap().split_whitespace().collect();
    // 17 periods; on a loaded machine a wakeup later than the next period is an overrun,
    // which takes a sample's place.
    let measured: u64 = samples[1].parse().unwrap();
    assert!((1..=17).contains(&measured), "{samples:?}");
    assert_eq!(samples[2..], ["850", "850", "850", "850"]);
    let p99: Vec<&str> = section.lines().find(|l| l.starts_with("p99")).unwrap().split_whitespace().collect();
    assert!(p99[1] != "-" && p99[2..].iter().all(|c| *c == "-"), "measured p99, the post's unknown: {p99:?}");

    // JSON: the run's document with `against` added.
    let (code, text, _) = report(&db, &["1", "--against", "hrtimers-2007", "--format", "json"]);
    assert_eq!(code, Some(0));
    let doc: Json = serde_json::from_str(&text).unwrap();
    assert_eq!(doc["run"]["id"], 1);
    let columns = doc["against"]["columns"].as_array().unwrap();
    assert_eq!(columns.len(), 5);
    assert_eq!((columns[0]["imported"].as_bool(), columns[1]["imported"].as_bool()), (Some(false), Some(true)));
    assert_eq!((columns[4]["min_ns"].as_u64(), columns[4]["p99_ns"].is_null()), (Some(2803), true));
    let (code, text, _) = report(&db, &["2", "--against", "csci3753-2014", "--format", "json"]);
    assert_eq!(code, Some(0));
    let doc: Json = serde_json::from_str(&text).unwrap();
    let best = doc["against"]["sections"][0]["best"].as_array().unwrap().clone();
    assert!(best.iter().all(|b| b["agree"] == true), "the study against itself: {best:?}");

    // HTML: the section through the templates.
    let html = dir.path("a.html");
    let (code, _, err) = report(&db, &["3", "--against", "hrtimers-2007", "--html", &html.display().to_string()]);
    assert_eq!(code, Some(0), "{err}");
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("<section id=\"against\">") && page.contains("<td>10877151</td>"), "{page}");

    // Refusals: exit 2, saying why, printing no report.
    let (code, text, err) = report(&db, &["2", "--against", "hrtimers-2007"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("no latency trial") && text.is_empty(), "{err}");
    let (code, _, err) = report(&db, &["3", "--against", "csci3753-2014"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("no workload trial"), "{err}");
    let (code, _, err) = report(&db, &["1", "--against", "ncar-1993"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("csci3753-2014") && err.contains("hrtimers-2007"), "the names: {err}");
    let (code, _, err) = report(&db, &["1", "2", "--against", "csci3753-2014"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("one run"), "{err}");
    assert!(!err.contains("panicked"));
}
