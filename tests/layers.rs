//! The source's layers point one way: a module may use only modules below it (see
//! docs/architecture.md). This test reads every `crate::<module>` and `super::` path
//! in `src/` (`use` lines, grouped `use crate::{a, b}` however wrapped or nested, and inline
//! paths alike, test code included; comments and string literals are not code) and fails on
//! each one that points up or sideways, so the shape cannot erode unnoticed.

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
    // Decisions over stored results: the seeds' claims, compare's verdicts, trend's change
    // points, as typed values.
    ("decide", 7),
    // Rendering results: tables, JSON/CSV/markdown, HTML, plots, findings, compare, trend.
    ("report", 8),
    // Command-line definitions.
    ("cli", 9),
    // One function per subcommand, gluing the layers together.
    ("commands", 10),
    // The library root and the binary.
    ("lib", 11),
    ("main", 11),
];

fn rank(module: &str) -> Option<u32> {
    RANKS.iter().find(|(m, _)| *m == module).map(|(_, r)| *r)
}

/// Where a source file (`src/…`, `/`-separated) sits: its layer (`lib` and `main` for the
/// crate roots) and the modules from the crate root down to it: `src/report/x.rs` and
/// `src/report/x/mod.rs` are `report::x`, `src/report.rs` is `report`, the roots are empty.
fn place(file: &str) -> (String, Vec<String>) {
    let rel = file.strip_prefix("src/").unwrap_or(file);
    let mut path: Vec<String> = rel.split('/').map(|part| part.trim_end_matches(".rs").to_string()).collect();
    if path.len() > 1 && path.last().is_some_and(|last| last == "mod") {
        path.pop();
    }
    if path.len() == 1 && (path[0] == "lib" || path[0] == "main") {
        return (path.remove(0), Vec::new());
    }
    (layer_of(&path), path)
}

/// The file of a family's folder each layer keeps (src/families/<name>/<file>.rs).
const FAMILY_FILES: &[(&str, &str)] = &[
    ("model", "model"),
    ("figures", "model"),
    // A task set's own model files: its tasks, rt-app's JSON, the default reservation.
    ("task", "model"),
    ("rt_app", "model"),
    ("reservation", "model"),
    ("kernel", "bench"),
    // A task set's condition variables and barriers, which its kernel's threads share.
    ("sync", "bench"),
    ("trial", "exec"),
    ("report", "report"),
    ("live", "report"),
    // Its form beside a seed document (`report --against`).
    ("against", "report"),
    // Findings of its own science (latency's spike periods).
    ("findings", "decide"),
    ("flags", "cli"),
    // Readers of a family's results in a foreign format (the NCAR report's tables).
    ("import", "store"),
];

/// The files of `src/families/` beside the family folders.
const FAMILIES_FILES: &[&str] = &["declared", "figures", "list", "shared"];

/// The layer a module path from the crate root names: its first segment, except in a
/// family's folder, a vertical slice whose files each sit in the layer their name says
/// (`families::ring::kernel` is `bench`); the list and each folder's `mod.rs` are `model`.
fn layer_of(path: &[String]) -> String {
    if path.first().map(String::as_str) != Some("families") {
        return path.first().cloned().unwrap_or_default();
    }
    // The files beside the folders (the list, the shared traits, the figure registry) are
    // the families' model.
    if path.get(1).is_some_and(|file| FAMILIES_FILES.contains(&file.as_str())) {
        return "model".to_string();
    }
    let Some(file) = path.get(2) else { return "model".to_string() };
    match FAMILY_FILES.iter().find(|(stem, _)| stem == file) {
        Some((_, layer)) => layer.to_string(),
        // An item of the folder's mod.rs (a type, a re-export).
        None if file.starts_with(char::is_uppercase) => "model".to_string(),
        None => format!("families::{}::{file}", path[1]),
    }
}

fn is_ident(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c >= 0x80
}

/// The length of the UTF-8 character that starts with byte `lead`.
fn char_len(lead: u8) -> usize {
    match lead {
        0xF0.. => 4,
        0xE0.. => 3,
        0xC0.. => 2,
        _ => 1,
    }
}

/// Where a raw string literal (`r"…"`, `r#"…"#`, `br##"…"##`) that starts at `at` ends, if one
/// does; `r#name` (a raw identifier) is none.
fn raw_string_end(b: &[u8], at: usize) -> Option<usize> {
    if b[at] != b'r' {
        return None;
    }
    let starts_word = |i: usize| i == 0 || !is_ident(b[i - 1]);
    let prefixed = at > 0 && matches!(b[at - 1], b'b' | b'c') && starts_word(at - 1);
    if !starts_word(at) && !prefixed {
        return None;
    }
    let hashes = b[at + 1..].iter().take_while(|&&c| c == b'#').count();
    let open = at + 1 + hashes;
    if b.get(open) != Some(&b'"') {
        return None;
    }
    let mut i = open + 1;
    while i < b.len() {
        if b[i] == b'"' && b[i + 1..].iter().take(hashes).filter(|&&c| c == b'#').count() == hashes {
            return Some(i + 1 + hashes);
        }
        i += 1;
    }
    Some(b.len())
}

/// Where a character literal (`'x'`, `'\''`, `'\u{1F600}'`, `'é'`) that starts at `at` ends, if
/// one does; a lifetime or a label (`'a`, `'outer:`) is none.
fn char_literal_end(b: &[u8], at: usize) -> Option<usize> {
    match b.get(at + 1)? {
        b'\\' => {
            // The escaped character, then the closing quote within a `\u{…}`'s length.
            let from = at + 3;
            b.get(from..)?.iter().take(10).position(|&c| c == b'\'').map(|p| from + p + 1)
        }
        &lead => {
            let close = at + 1 + char_len(lead);
            (b.get(close) == Some(&b'\'')).then_some(close + 1)
        }
    }
}

/// The source with every comment (line, block, nested block, doc) and every string or
/// character literal (raw strings included) blanked to spaces byte for byte, newlines kept:
/// what is left is the code, at the same offsets and on the same lines.
fn code_only(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = b.to_vec();
    let mut i = 0;
    while i < b.len() {
        let end = if b[i..].starts_with(b"//") {
            Some(b[i..].iter().position(|&c| c == b'\n').map_or(b.len(), |p| i + p))
        } else if b[i..].starts_with(b"/*") {
            let (mut depth, mut j) = (0, i);
            while j < b.len() {
                if b[j..].starts_with(b"/*") {
                    depth += 1;
                    j += 2;
                } else if b[j..].starts_with(b"*/") {
                    depth -= 1;
                    j += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    j += 1;
                }
            }
            Some(j.min(b.len()))
        } else if let Some(end) = raw_string_end(b, i) {
            Some(end)
        } else if b[i] == b'"' {
            let mut j = i + 1;
            while j < b.len() && b[j] != b'"' {
                j += if b[j] == b'\\' { 2 } else { 1 };
            }
            Some((j + 1).min(b.len()))
        } else if b[i] == b'\'' {
            char_literal_end(b, i)
        } else {
            None
        };
        match end {
            Some(end) => {
                for c in &mut out[i..end] {
                    if *c != b'\n' {
                        *c = b' ';
                    }
                }
                i = end;
            }
            None => i += 1,
        }
    }
    String::from_utf8(out).expect("only whole literals and comments are blanked")
}

fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && b[i].is_ascii_whitespace() {
        i += 1;
    }
    i
}

/// The identifier that starts at `i` (empty if none does) and where it ends.
fn word_at(b: &[u8], i: usize) -> (&str, usize) {
    let i = i.min(b.len());
    let end = i + b[i..].iter().take_while(|&&c| is_ident(c)).count();
    (std::str::from_utf8(&b[i..end]).unwrap(), end)
}

/// Past a `::` at `i` (spaces allowed around it), if there is one.
fn colons(b: &[u8], i: usize) -> Option<usize> {
    let at = skip_ws(b, i);
    b[at..].starts_with(b"::").then(|| skip_ws(b, at + 2))
}

/// Where the member of a `{…}` group that starts at `i` ends: at the `,` or `}` that closes it,
/// past any group nested in it.
fn member_end(b: &[u8], mut i: usize) -> usize {
    let mut depth = 0;
    while i < b.len() {
        match b[i] {
            b'{' => depth += 1,
            b'}' if depth == 0 => break,
            b'}' => depth -= 1,
            b',' if depth == 0 => break,
            _ => {}
        }
        i += 1;
    }
    i
}

/// The module paths that a path continuing at `i` below `prefix` names, with their offsets:
/// one path, or one for each member of a group, however nested. A path is read as far as
/// its layer shows (one segment, three in a family's folder), or `whole`.
fn paths_from(b: &[u8], mut i: usize, prefix: &[String], whole: bool, out: &mut Vec<(usize, Vec<String>)>) {
    let start = i;
    let mut path = prefix.to_vec();
    loop {
        // Outside the families, a path's first segment is its layer: read no further.
        if !whole && path.first().is_some_and(|first| first != "families") {
            break;
        }
        if b.get(i) == Some(&b'{') {
            let mut j = i + 1;
            loop {
                j = skip_ws(b, j);
                paths_from(b, j, &path, whole, out);
                j = member_end(b, j);
                if b.get(j) != Some(&b',') {
                    return;
                }
                j += 1;
            }
        }
        let (name, end) = word_at(b, i);
        if name.is_empty() || name == "self" || name == "super" {
            break;
        }
        path.push(name.to_string());
        match colons(b, end) {
            Some(next) if whole || path.len() < 3 => i = next,
            _ => break,
        }
    }
    if !path.is_empty() {
        out.push((start, path));
    }
}

/// The top-level modules `text`, the source of `file`, names by `crate::` and `super::` paths,
/// each with the line it is named on. Each member of a group counts, wrapped over lines or
/// nested; `super::` climbs from where the file sits in the module tree (inline `mod x { … }`
/// blocks included), and a path that stays inside the file's own top-level module names that
/// module. Comments and string and character literals are not read.
fn modules_named(file: &str, text: &str) -> Vec<(usize, String)> {
    let (own, _) = place(file);
    let named = paths_named(file, text, false).into_iter().map(|(line, path)| match path {
        // A path that stays inside the file: its own layer.
        None => (line, own.clone()),
        Some(path) => (line, layer_of(&path)),
    });
    named.filter(|(_, layer)| !layer.is_empty()).collect()
}

/// The module paths `text`, the source of `file`, names by `crate::` and `super::` paths,
/// each with its line: read as far as its layer shows, or `whole`. `None` for a `super::`
/// that stays inside the file (an inline module's parent).
fn paths_named(file: &str, text: &str, whole: bool) -> Vec<(usize, Option<Vec<String>>)> {
    let (_, path) = place(file);
    let code = code_only(text);
    let b = code.as_bytes();
    let newlines: Vec<usize> = b.iter().enumerate().filter(|(_, &c)| c == b'\n').map(|(at, _)| at).collect();
    let mut named = Vec::new();
    // The inline `mod x { … }` blocks open here, each with the brace depth inside it.
    let mut inline: Vec<usize> = Vec::new();
    let mut depth: usize = 0;
    let mut mod_opens = false;
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'{' => {
                depth += 1;
                if std::mem::take(&mut mod_opens) {
                    inline.push(depth);
                }
                i += 1;
                continue;
            }
            b'}' => {
                if inline.last() == Some(&depth) {
                    inline.pop();
                }
                depth = depth.saturating_sub(1);
                i += 1;
                continue;
            }
            c if !is_ident(c) || (i > 0 && (is_ident(b[i - 1]) || b[i - 1] == b'$')) => {
                i += 1;
                continue;
            }
            _ => {}
        }
        let (word, after) = word_at(b, i);
        i = after;
        if word == "mod" {
            let (name, end) = word_at(b, skip_ws(b, after));
            mod_opens = !name.is_empty() && b.get(skip_ws(b, end)) == Some(&b'{');
            continue;
        }
        if word != "crate" && word != "super" {
            continue;
        }
        // Climb: `crate::` to the root, each `super::` one module up.
        let mut up = usize::from(word == "super");
        let mut next = colons(b, after);
        while let Some(at) = next {
            let (segment, end) = word_at(b, at);
            if segment != "super" {
                break;
            }
            up += 1;
            next = colons(b, end);
        }
        let Some(at) = next else { continue };
        i = at;
        let mut found = Vec::new();
        if word == "crate" {
            paths_from(b, at, &[], whole, &mut found);
        } else if up <= inline.len() {
            // Still inside this file.
            named.push((at, None));
        } else if let Some(kept) = path.len().checked_sub(up - inline.len()) {
            paths_from(b, at, &path[..kept], whole, &mut found);
        }
        named.extend(found.into_iter().map(|(at, p)| (at, Some(p))));
    }
    named.into_iter().map(|(at, module)| (newlines.partition_point(|&n| n < at) + 1, module)).collect()
}

/// Pairs a rank alone would allow but the design forbids: (module, what it must not use).
const FORBIDDEN: &[(&str, &str, &str)] = &[("report", "bench", "reports read results; they never run a benchmark")];

/// One message per import against the direction in `text`, the source of `file` (`src/…`).
fn violations(file: &str, text: &str) -> Vec<String> {
    let (module, _) = place(file);
    let mut out = Vec::new();
    let Some(own) = rank(&module) else {
        return vec![format!(
            "{file}: module `{module}` has no place in the layers (add it to RANKS in tests/layers.rs)"
        )];
    };
    for (line, target) in modules_named(file, text) {
        if target == module {
            continue;
        }
        if let Some((_, _, why)) = FORBIDDEN.iter().find(|(m, t, _)| *m == module && *t == target) {
            out.push(format!("{file}:{line}: {module} imports {target}: {why}"));
            continue;
        }
        match rank(&target) {
            None => out.push(format!("{file}:{line}: `{target}` has no place in the layers")),
            Some(r) if r >= own && target != "error" => {
                out.push(format!("{file}:{line}: {module} imports {target} against the allowed direction"))
            }
            Some(_) => {}
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
    let sources = sources_of_src();
    assert!(sources.len() > 20, "found the sources");
    let all: Vec<String> = sources.iter().flat_map(|(file, text)| violations(file, text)).collect();
    assert!(all.is_empty(), "{} import(s) against the layers:\n{}", all.len(), all.join("\n"));
}

/// The files of `src/` each file's code imports (by `crate::` and `super::` paths, whole):
/// each path goes to the file that holds the longest module prefix of it. A file's tests
/// (from its `#[cfg(test)]` on) are left out: a test may reach above its file for a
/// fixture. `sources` are (`src/…` file, text) pairs.
fn file_imports(sources: &[(String, String)]) -> Vec<(String, Vec<String>)> {
    let by_module: std::collections::HashMap<Vec<String>, &str> =
        sources.iter().map(|(file, _)| (place(file).1, file.as_str())).collect();
    sources
        .iter()
        .map(|(file, text)| {
            let code = text.find("#[cfg(test)]").map_or(text.as_str(), |at| &text[..at]);
            let mut targets: Vec<String> = paths_named(file, code, true)
                .into_iter()
                .filter_map(|(_, path)| {
                    let path = path?;
                    (1..=path.len()).rev().find_map(|n| by_module.get(&path[..n]).copied())
                })
                .filter(|target| target != file)
                .map(str::to_string)
                .collect();
            targets.sort();
            targets.dedup();
            (file.clone(), targets)
        })
        .collect()
}

/// Tarjan's walk over the file graph: each group of files that reach one another.
struct Walk<'a> {
    edges: &'a [Vec<usize>],
    order: Vec<Option<usize>>,
    low: Vec<usize>,
    stack: Vec<usize>,
    on_stack: Vec<bool>,
    next: usize,
    groups: Vec<Vec<usize>>,
}

impl Walk<'_> {
    fn visit(&mut self, v: usize) {
        self.order[v] = Some(self.next);
        self.low[v] = self.next;
        self.next += 1;
        self.stack.push(v);
        self.on_stack[v] = true;
        for i in 0..self.edges[v].len() {
            let u = self.edges[v][i];
            match self.order[u] {
                None => {
                    self.visit(u);
                    self.low[v] = self.low[v].min(self.low[u]);
                }
                Some(o) if self.on_stack[u] => self.low[v] = self.low[v].min(o),
                Some(_) => {}
            }
        }
        if Some(self.low[v]) == self.order[v] {
            let mut group = Vec::new();
            while let Some(u) = self.stack.pop() {
                self.on_stack[u] = false;
                group.push(u);
                if u == v {
                    break;
                }
            }
            self.groups.push(group);
        }
    }
}

/// The import cycles between files: each group of two or more files that reach one
/// another, its files sorted.
fn import_cycles(sources: &[(String, String)]) -> Vec<Vec<String>> {
    let imports = file_imports(sources);
    let index: std::collections::HashMap<&str, usize> =
        imports.iter().enumerate().map(|(i, (f, _))| (f.as_str(), i)).collect();
    let edges: Vec<Vec<usize>> =
        imports.iter().map(|(_, to)| to.iter().filter_map(|t| index.get(t.as_str()).copied()).collect()).collect();
    let n = edges.len();
    let mut w = Walk {
        edges: &edges,
        order: vec![None; n],
        low: vec![0; n],
        stack: Vec::new(),
        on_stack: vec![false; n],
        next: 0,
        groups: Vec::new(),
    };
    for v in 0..n {
        if w.order[v].is_none() {
            w.visit(v);
        }
    }
    let mut cycles: Vec<Vec<String>> = w
        .groups
        .into_iter()
        .filter(|g| g.len() > 1)
        .map(|g| {
            let mut files: Vec<String> = g.into_iter().map(|i| imports[i].0.clone()).collect();
            files.sort();
            files
        })
        .collect();
    cycles.sort();
    cycles
}

/// Every source file under `src/` (`src/…`, `/`-separated) with its text.
fn sources_of_src() -> Vec<(String, String)> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    files
        .iter()
        .map(|file| {
            let parts: Vec<String> = file
                .strip_prefix(&src)
                .unwrap()
                .components()
                .map(|c| c.as_os_str().to_string_lossy().to_string())
                .collect();
            (format!("src/{}", parts.join("/")), std::fs::read_to_string(file).unwrap())
        })
        .collect()
}

/// Layers order the top-level modules; inside one, files may still import one another in
/// a circle, which no rank sees. A file that imports a file importing it back can only be
/// read with it: put what both need beneath them.
#[test]
fn no_file_imports_another_that_imports_it_back() {
    let sources = sources_of_src();
    assert!(sources.len() > 20, "found the sources");
    let cycles = import_cycles(&sources);
    let text: Vec<String> = cycles.iter().map(|c| c.join(" <-> ")).collect();
    assert!(cycles.is_empty(), "{} import cycle(s) between files:\n{}", cycles.len(), text.join("\n"));
}

#[test]
fn the_cycle_check_finds_a_circle_through_any_path() {
    let source = |file: &str, text: &str| (file.to_string(), text.to_string());
    // Two files of one module naming each other, one through `super::`, one through a group.
    let two = [
        source("src/report/a.rs", "use super::b::B;"),
        source("src/report/b.rs", "use crate::{report::a::A, model::M};"),
        source("src/report/mod.rs", "pub mod a;\npub mod b;"),
        source("src/model/mod.rs", "pub struct M;"),
    ];
    assert_eq!(import_cycles(&two), [["src/report/a.rs", "src/report/b.rs"]]);
    // Three files around, through a module's `mod.rs` (a re-export) and an inline path.
    let three = [
        source("src/x/mod.rs", "pub use crate::y::Y;"),
        source("src/y.rs", "fn f() { crate::z::g() }"),
        source("src/z.rs", "pub fn g() -> crate::x::X { todo!() }"),
    ];
    assert_eq!(import_cycles(&three), [["src/x/mod.rs", "src/y.rs", "src/z.rs"]]);
    // A path inside the file, a comment, a file's tests and a chain that points one way
    // make none.
    let none = [
        source("src/p.rs", "mod t { use super::*; }\n// crate::q::x\nuse crate::q::Q;"),
        source("src/s.rs", "use crate::p::P;"),
        source("src/q.rs", "use crate::r::R;"),
        source("src/r.rs", "pub struct R;\n#[cfg(test)]\nmod tests {\n    use crate::s::S;\n}"),
    ];
    assert!(import_cycles(&none).is_empty());
}

/// The modules `text`, as the source of `file`, names, without their lines.
fn names(file: &str, text: &str) -> Vec<String> {
    modules_named(file, text).into_iter().map(|(_, module)| module).collect()
}

#[test]
fn the_check_sees_each_form_of_import() {
    assert_eq!(names("src/f.rs", "use crate::report::table::Table;"), ["report"]);
    assert_eq!(names("src/f.rs", "use crate::{error::Result, model::Policy, self};"), ["error", "model"]);
    assert_eq!(names("src/f.rs", "    let x = crate::sys::load::plan(spec) + crate::bench::f();"), ["sys", "bench"]);
    assert_eq!(names("src/f.rs", "$crate::sys::x"), Vec::<String>::new());
    // Up is refused, down and sideways-into-itself are fine, and a module must be placed.
    assert_eq!(violations("src/sys/f.rs", "use crate::report::table::Table;").len(), 1);
    assert_eq!(violations("src/bench/f.rs", "use crate::exec::preflight;").len(), 1);
    assert!(violations("src/report/f.rs", "use crate::{model::Policy, sys::sched, error::Result};").is_empty());
    assert!(violations("src/sys/f.rs", "use crate::sys::fd;\n// crate::report::x in a comment").is_empty());
    assert_eq!(violations("src/newthing.rs", "").len(), 1);
    assert_eq!(violations("src/report/f.rs", "let x = crate::families::latency::kernel::X;").len(), 1);
}

#[test]
fn a_group_wrapped_over_lines_is_read_whole() {
    let text = "use crate::{\n    analysis::x,\n    report::y,\n};\n";
    assert_eq!(modules_named("src/sys/f.rs", text), [(2, "analysis".to_string()), (3, "report".to_string())]);
    assert_eq!(violations("src/sys/f.rs", text), ["src/sys/f.rs:3: sys imports report against the allowed direction"]);
}

#[test]
fn a_nested_group_names_only_its_first_segments() {
    assert_eq!(names("src/sys/f.rs", "use crate::{model::{a, b::{c, d}}, report::e};"), ["model", "report"]);
    assert_eq!(
        names("src/sys/f.rs", "use crate::{\n    {analysis::a, model::b},\n    self,\n};"),
        ["analysis", "model"]
    );
    assert_eq!(violations("src/sys/f.rs", "use crate::{model::{a, b}, report::c};").len(), 1);
}

#[test]
fn super_climbs_from_where_the_file_sits() {
    // Inside the file's own top-level module: named as that module.
    assert_eq!(names("src/report/x.rs", "use super::table::Table;"), ["report"]);
    assert_eq!(names("src/report/x/y.rs", "use super::super::table::Table;"), ["report"]);
    assert_eq!(names("src/report/x/mod.rs", "use super::{table, html};"), ["report"]);
    // Out to the crate root, then into another top-level module.
    assert_eq!(names("src/report.rs", "use super::exec::Plan;"), ["exec"]);
    assert_eq!(names("src/report/mod.rs", "let p = super::exec::plan();"), ["exec"]);
    assert_eq!(names("src/report/x.rs", "use super::super::{exec::Plan, model::{a, b}};"), ["exec", "model"]);
    assert_eq!(names("src/report/x/y.rs", "use super::super::super::sys::fd;"), ["sys"]);
    assert_eq!(violations("src/exec/x.rs", "use super::super::report::y;").len(), 1);
    assert_eq!(violations("src/sys/mod.rs", "fn f() { super::report::y() }").len(), 1);
    // An inline `mod` is one more level to climb, and only until its block closes.
    let text = "mod tests {\n    use super::*;\n    mod deep { use super::super::super::exec::x; }\n}\nuse super::super::exec::y;";
    let store = |line: usize| (line, "store".to_string());
    assert_eq!(modules_named("src/store/x.rs", text), [store(2), store(3), (5, "exec".to_string())]);
    assert_eq!(names("src/store/mod.rs", "#[cfg(test)]\nmod tests {\n    use super::super::exec::x;\n}"), ["exec"]);
}

#[test]
fn a_string_with_slashes_does_not_hide_the_rest_of_its_line() {
    let text = r#"let url = "http://x"; let t = crate::report::Table::new();"#;
    assert_eq!(names("src/sys/f.rs", text), ["report"]);
    assert_eq!(violations("src/sys/f.rs", text).len(), 1);
}

#[test]
fn paths_in_strings_and_comments_are_not_imports() {
    let text = concat!(
        "let s = \"crate::report::x\";\n",
        "let e = \"a \\\" quote, then crate::report::y\";\n",
        "/* crate::report::z */ let m = crate::model::M;\n",
        "/* a block /* nested */ still\n   crate::exec::q over lines */\n",
        "let q = '\"'; let a = '\\''; let s = \"crate::cli::c\";\n",
        "fn f<'a>(x: &'a str) -> &'a str { crate::analysis::f(x) }\n",
    );
    assert_eq!(modules_named("src/sys/f.rs", text), [(3, "model".to_string()), (7, "analysis".to_string())]);
    assert!(violations("src/sys/f.rs", text).is_empty());
}

#[test]
fn raw_strings_are_not_code() {
    let text = concat!(
        "let s = r#\"a \"quoted\" crate::report::x // \"#; let t = crate::model::M;\n",
        "let h = r\"crate::exec::y\"; let b = br##\"\n  crate::cli::z \"# still\n\"##;\n",
        "let r#type = crate::analysis::a;\n",
    );
    assert_eq!(modules_named("src/sys/f.rs", text), [(1, "model".to_string()), (5, "analysis".to_string())]);
    assert!(violations("src/sys/f.rs", text).is_empty());
}

#[test]
fn a_family_folder_is_a_slice_of_every_layer() {
    assert_eq!(place("src/families/ring/kernel.rs").0, "bench");
    assert_eq!(place("src/families/ring/mod.rs").0, "model");
    assert_eq!(place("src/families/mod.rs").0, "model");
    assert_eq!(names("src/exec/f.rs", "use crate::families::ring::kernel::run;"), ["bench"]);
    assert_eq!(
        names("src/exec/f.rs", "use crate::families::{ring::kernel as k, latency::report};"),
        ["bench", "report"]
    );
    assert_eq!(names("src/exec/f.rs", "use crate::families::ring::RingSpec;"), ["model"]);
    assert_eq!(names("src/families/ring/report.rs", "use super::kernel::x;"), ["bench"]);
    assert_eq!(names("src/families/ring/report.rs", "use super::super::latency::live::x;"), ["report"]);
    // A kernel may not use its own folder's report, nor a model its kernel.
    assert_eq!(violations("src/families/ring/kernel.rs", "use super::report::x;").len(), 1);
    assert_eq!(violations("src/families/ring/model.rs", "use crate::families::ring::kernel;").len(), 1);
    // A file that is not one of a folder's layer files has no place until it is given one.
    assert_eq!(violations("src/exec/f.rs", "use crate::families::ring::helpers::x;").len(), 1);
}
