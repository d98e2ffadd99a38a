//! The source's layers point one way: a module may use only modules below it (see the
//! README's architecture section). This test reads every `crate::<module>` path in `src/`
//! (`use` lines, grouped `use crate::{a, b}` and inline paths alike, test code included)
//! and fails on each one that points up or sideways, so the shape cannot erode unnoticed.

use std::path::{Path, PathBuf};

/// Each top-level module's rank, lowest first: a module may import only modules of a lower
/// rank (and itself). `error` is everyone's.
const RANKS: &[(&str, u32)] = &[
    // Errors and exit codes: usable from anywhere.
    ("error", 0),
    // Statistics and analyses: pure functions over numbers.
    ("analysis", 1),
    // Domain types, their validation and parsing, the figure registry: no I/O.
    ("model", 2),
    // Thin OS wrappers: they may speak the model's plain types, never to the user.
    ("sys", 3),
    // Measurement kernels: small loops that measure; no preflight, no reports.
    ("bench", 4),
    // The results store and what moves data in and out of it (export, import, reference sets).
    ("store", 5),
    // Plans and running them: suites, preflight, the trial executor, adaptive repeats.
    ("exec", 6),
    // Rendering results: tables, JSON/CSV/markdown, HTML, plots, findings, compare, trend.
    ("report", 7),
    // Command-line definitions.
    ("cli", 8),
    // One function per subcommand, gluing the layers together.
    ("commands", 9),
    // The library root and the binary.
    ("lib", 10),
    ("main", 10),
];

fn rank(module: &str) -> Option<u32> {
    RANKS.iter().find(|(m, _)| *m == module).map(|(_, r)| *r)
}

/// The top-level module a source file belongs to: `src/x.rs` and `src/x/**` are `x`.
fn module_of(src: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(src).unwrap();
    let first = rel.components().next().unwrap().as_os_str().to_string_lossy().to_string();
    first.trim_end_matches(".rs").to_string()
}

/// The modules a line names as `crate::<module>`, including each member of a grouped
/// `use crate::{a, b::c}`.
fn modules_named(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = line;
    while let Some(at) = rest.find("crate::") {
        let before_ok = at == 0 || !rest[..at].ends_with(|c: char| c.is_alphanumeric() || c == '_' || c == '$');
        rest = &rest[at + "crate::".len()..];
        if !before_ok {
            continue;
        }
        if let Some(group) = rest.strip_prefix('{') {
            let inner = group.split('}').next().unwrap_or("");
            for part in inner.split(',') {
                let name: String = part.trim().chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
                if !name.is_empty() && name != "self" {
                    out.push(name);
                }
            }
            continue;
        }
        let name: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
        if !name.is_empty() {
            out.push(name);
        }
    }
    out
}

/// Pairs a rank alone would allow but the design forbids: (module, what it must not use).
const FORBIDDEN: &[(&str, &str, &str)] = &[("report", "bench", "reports read results; they never run a benchmark")];

/// One message per import against the direction in `text`, a file of `module`.
fn violations(module: &str, file: &str, text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let Some(own) = rank(module) else {
        return vec![format!(
            "{file}: module `{module}` has no place in the layers (add it to RANKS in tests/layers.rs)"
        )];
    };
    for (i, line) in text.lines().enumerate() {
        let code = line.split("//").next().unwrap_or("");
        for target in modules_named(code) {
            if target == module {
                continue;
            }
            if let Some((_, _, why)) = FORBIDDEN.iter().find(|(m, t, _)| *m == module && *t == target) {
                out.push(format!("{file}:{}: {module} imports {target}: {why}", i + 1));
                continue;
            }
            match rank(&target) {
                None => out.push(format!("{file}:{}: `{target}` has no place in the layers", i + 1)),
                Some(r) if r >= own && target != "error" => {
                    out.push(format!("{file}:{}: {module} imports {target} against the allowed direction", i + 1))
                }
                Some(_) => {}
            }
        }
    }
    out
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn every_import_points_down() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    assert!(files.len() > 20, "found the sources");
    let mut all = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        let name = file.strip_prefix(&src).unwrap().display().to_string();
        all.extend(violations(&module_of(&src, file), &format!("src/{name}"), &text));
    }
    assert!(all.is_empty(), "{} import(s) against the layers:\n{}", all.len(), all.join("\n"));
}

#[test]
fn the_check_sees_each_form_of_import() {
    assert_eq!(modules_named("use crate::report::table::Table;"), ["report"]);
    assert_eq!(modules_named("use crate::{error::Result, model::Policy, self};"), ["error", "model"]);
    assert_eq!(modules_named("    let x = crate::sys::load::plan(spec) + crate::bench::f();"), ["sys", "bench"]);
    assert_eq!(modules_named("$crate::sys::x"), Vec::<String>::new());
    // Up is refused, down and sideways-into-itself are fine, and a module must be placed.
    assert_eq!(violations("sys", "f.rs", "use crate::report::table::Table;").len(), 1);
    assert_eq!(violations("bench", "f.rs", "use crate::exec::preflight;").len(), 1);
    assert!(violations("report", "f.rs", "use crate::{model::Policy, sys::sched, error::Result};").is_empty());
    assert!(violations("sys", "f.rs", "use crate::sys::fd;\n// crate::report::x in a comment").is_empty());
    assert_eq!(violations("newthing", "f.rs", "").len(), 1);
    assert_eq!(violations("report", "f.rs", "let x = crate::bench::latency::X;").len(), 1);
}
