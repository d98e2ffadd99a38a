//! Keeps the documentation true: README.md stays a short front page with the two set-up
//! commands, every page under docs/ is linked from it, every relative link (and `#anchor`)
//! in README.md and docs/*.md leads somewhere real, and every example command line in a
//! fenced code block names a real subcommand and parses with the binary's own clap
//! definitions.
//!
//! Nothing here measures anything: the only processes started are `schedlab <sub> --help`.

use clap::Parser;
use schedlab::Cli;
use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

const README_MAX_LINES: usize = 300;
const SETUP_COMMANDS: [&str; 2] = ["cargo run --release -- run", "cargo test"];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn read(path: &Path) -> String {
    fs::read_to_string(path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
}

/// docs/*.md, sorted.
fn doc_pages() -> Vec<PathBuf> {
    let dir = root().join("docs");
    let mut pages: Vec<PathBuf> = fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()))
        .map(|entry| entry.expect("a docs/ entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    pages.sort();
    pages
}

/// README.md and every docs page.
fn all_markdown() -> Vec<PathBuf> {
    let mut files = vec![root().join("README.md")];
    files.extend(doc_pages());
    files
}

fn display(path: &Path) -> String {
    path.strip_prefix(root()).unwrap_or(path).display().to_string()
}

/// The text outside fenced code blocks, with the fenced lines blanked (so line numbers
/// stay), and the fenced blocks' lines with their 1-based line numbers.
struct Split {
    prose: String,
    fenced: Vec<(usize, String)>,
}

fn split_fences(text: &str) -> Split {
    let mut prose = String::new();
    let mut fenced = Vec::new();
    let mut fence: Option<String> = None;
    for (i, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        let marker: String = trimmed.chars().take_while(|&c| c == '`' || c == '~').collect();
        let is_fence = marker.len() >= 3 && marker.chars().all(|c| c == marker.chars().next().unwrap());
        match &fence {
            None if is_fence => {
                fence = Some(marker);
                prose.push('\n');
            }
            None => {
                prose.push_str(line);
                prose.push('\n');
            }
            Some(open) if is_fence && marker.starts_with(open.as_str()) && trimmed.trim_end() == marker => {
                fence = None;
                prose.push('\n');
            }
            Some(_) => {
                fenced.push((i + 1, line.to_string()));
                prose.push('\n');
            }
        }
    }
    assert!(fence.is_none(), "an unclosed code fence");
    Split { prose, fenced }
}

/// Replaces inline code spans (which may run over a line break) with spaces, keeping
/// line breaks, so that nothing inside backticks is read as a link.
fn blank_code_spans(prose: &str) -> String {
    let mut out = String::with_capacity(prose.len());
    let mut in_code = false;
    for c in prose.chars() {
        if c == '`' {
            in_code = !in_code;
            out.push(' ');
        } else if in_code && c != '\n' {
            out.push(' ');
        } else {
            out.push(c);
        }
    }
    out
}

/// Every link target in a markdown file's prose: inline `](target)` links and
/// `[label]: target` definitions, with the line each starts on.
fn link_targets(text: &str) -> Vec<(usize, String)> {
    let prose = blank_code_spans(&split_fences(text).prose);
    let line_of = |offset: usize| prose[..offset].matches('\n').count() + 1;
    let mut targets = Vec::new();
    for (offset, _) in prose.match_indices("](") {
        let rest = &prose[offset + 2..];
        let end = rest.find(')').unwrap_or_else(|| panic!("line {}: a link with no ')'", line_of(offset)));
        let target = rest[..end].split_whitespace().next().unwrap_or("").to_string();
        targets.push((line_of(offset), target));
    }
    for (i, line) in prose.lines().enumerate() {
        let line = line.trim_start();
        if let Some(close) = line.strip_prefix('[').and_then(|l| l.find("]:")) {
            let target = line[1 + close + 2..].split_whitespace().next().unwrap_or("").to_string();
            targets.push((i + 1, target));
        }
    }
    targets
}

/// GitHub's anchor for a heading: lower case, letters, digits, `-` and `_` kept, spaces
/// made `-`, everything else dropped; a repeated anchor gets `-1`, `-2`, ...
fn anchors(text: &str) -> BTreeSet<String> {
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut out = BTreeSet::new();
    for line in split_fences(text).prose.lines() {
        let hashes = line.chars().take_while(|&c| c == '#').count();
        if !(1..=6).contains(&hashes) || !line[hashes..].starts_with(' ') {
            continue;
        }
        let slug: String = line[hashes..]
            .trim()
            .trim_end_matches('#')
            .trim()
            .to_lowercase()
            .chars()
            .filter_map(|c| match c {
                ' ' => Some('-'),
                c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
                _ => None,
            })
            .collect();
        let n = seen.entry(slug.clone()).or_insert(0);
        out.insert(if *n == 0 { slug.clone() } else { format!("{slug}-{n}") });
        *n += 1;
    }
    out
}

fn is_external(target: &str) -> bool {
    target.contains("://") || target.starts_with("mailto:")
}

#[test]
fn readme_is_a_short_front_page() {
    let readme = read(&root().join("README.md"));
    let lines = readme.lines().count();
    assert!(
        lines <= README_MAX_LINES,
        "README.md has {lines} lines, more than {README_MAX_LINES}: move reference material to docs/"
    );
}

#[test]
fn readme_keeps_the_two_setup_commands() {
    let readme = read(&root().join("README.md"));
    let fenced = split_fences(&readme).fenced;
    for command in SETUP_COMMANDS {
        assert!(
            fenced.iter().any(|(_, line)| {
                let line = line.trim_start();
                line.strip_prefix(command).is_some_and(|rest| rest.is_empty() || rest.starts_with(' '))
            }),
            "README.md has no code block line starting with `{command}`"
        );
    }
}

#[test]
fn every_docs_page_is_linked_from_the_readme() {
    let readme = read(&root().join("README.md"));
    let linked: BTreeSet<String> = link_targets(&readme)
        .into_iter()
        .map(|(_, t)| t.split('#').next().unwrap_or("").trim_start_matches("./").to_string())
        .collect();
    let pages = doc_pages();
    assert!(!pages.is_empty(), "docs/ has no pages");
    let missing: Vec<String> = pages
        .iter()
        .map(|p| format!("docs/{}", p.file_name().unwrap().to_string_lossy()))
        .filter(|p| !linked.contains(p))
        .collect();
    assert!(missing.is_empty(), "docs pages not linked from README.md: {missing:?}");
}

#[test]
fn relative_links_lead_to_real_files_and_headings() {
    let mut problems = Vec::new();
    let mut checked = 0;
    for file in all_markdown() {
        let text = read(&file);
        let dir = file.parent().unwrap();
        for (line, target) in link_targets(&text) {
            if target.is_empty() {
                problems.push(format!("{}:{line}: an empty link", display(&file)));
                continue;
            }
            if is_external(&target) {
                continue;
            }
            checked += 1;
            let (path, anchor) = match target.split_once('#') {
                Some((p, a)) => (p, Some(a)),
                None => (target.as_str(), None),
            };
            let resolved = if path.is_empty() { file.clone() } else { dir.join(path) };
            if !resolved.exists() {
                problems.push(format!("{}:{line}: {target}: no such file", display(&file)));
                continue;
            }
            if let Some(anchor) = anchor {
                if resolved.extension().is_some_and(|e| e == "md") {
                    if !anchors(&read(&resolved)).contains(anchor) {
                        problems.push(format!("{}:{line}: {target}: no heading with that anchor", display(&file)));
                    }
                } else {
                    problems.push(format!(
                        "{}:{line}: {target}: an anchor into a file that is not markdown",
                        display(&file)
                    ));
                }
            }
        }
    }
    assert!(checked > 0, "no relative links found at all");
    assert!(problems.is_empty(), "broken links:\n{}", problems.join("\n"));
}

/// A `schedlab …` example: where it is, and its words after `schedlab`.
struct Example {
    at: String,
    words: Vec<String>,
}

/// Why a line cannot be split here as a plain shell command.
type Unsupported = &'static str;

/// Splits one shell line into simple commands (separated by `&&` or `;`), with quotes
/// removed, comments and output redirections dropped. Pipes, command substitution and
/// the like are not handled: the line is then reported as skipped, with the reason.
fn shell_split(line: &str) -> Result<Vec<Vec<String>>, Unsupported> {
    let mut commands = vec![Vec::new()];
    let mut word = String::new();
    let mut in_word = false;
    let mut redirect_next = false;
    let mut chars = line.chars().peekable();
    let finish = |word: &mut String, in_word: &mut bool, redirect_next: &mut bool, commands: &mut Vec<Vec<String>>| {
        if *in_word {
            if *redirect_next {
                *redirect_next = false;
            } else {
                commands.last_mut().unwrap().push(std::mem::take(word));
            }
        }
        word.clear();
        *in_word = false;
    };
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' => finish(&mut word, &mut in_word, &mut redirect_next, &mut commands),
            '#' if !in_word => break,
            '\'' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(c) => word.push(c),
                        None => return Err("an unclosed single quote"),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(c @ ('"' | '\\' | '$' | '`')) => word.push(c),
                            Some(c) => {
                                word.push('\\');
                                word.push(c);
                            }
                            None => return Err("an unclosed double quote"),
                        },
                        Some('$') if chars.peek() == Some(&'(') => return Err("command substitution"),
                        Some('`') => return Err("command substitution"),
                        Some(c) => word.push(c),
                        None => return Err("an unclosed double quote"),
                    }
                }
            }
            '\\' => match chars.next() {
                Some(c) => {
                    in_word = true;
                    word.push(c);
                }
                None => return Err("a trailing backslash"),
            },
            '$' if chars.peek() == Some(&'(') => return Err("command substitution"),
            '`' => return Err("command substitution"),
            '|' => return Err("a pipe"),
            '<' => return Err("an input redirection"),
            '&' if chars.peek() == Some(&'&') => {
                chars.next();
                finish(&mut word, &mut in_word, &mut redirect_next, &mut commands);
                commands.push(Vec::new());
            }
            '&' => return Err("a background job"),
            ';' => {
                finish(&mut word, &mut in_word, &mut redirect_next, &mut commands);
                commands.push(Vec::new());
            }
            '>' => {
                // `>FILE`, `> FILE`, `>>FILE`, `2>FILE`: drop the operator and its target.
                if in_word && word.chars().all(|c| c.is_ascii_digit()) {
                    word.clear();
                    in_word = false;
                } else {
                    finish(&mut word, &mut in_word, &mut redirect_next, &mut commands);
                }
                if chars.peek() == Some(&'>') {
                    chars.next();
                }
                if chars.peek() == Some(&'&') {
                    return Err("a descriptor redirection");
                }
                redirect_next = true;
            }
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    finish(&mut word, &mut in_word, &mut redirect_next, &mut commands);
    if redirect_next {
        return Err("a redirection with no target");
    }
    commands.retain(|c| !c.is_empty());
    Ok(commands)
}

/// Every `schedlab …` command line in the fenced code blocks of README.md and docs/*.md
/// (a leading `$ ` prompt allowed; a trailing `\` joins the next line), and the lines
/// that start with `schedlab ` but could not be split.
fn examples() -> (Vec<Example>, Vec<String>) {
    let mut found = Vec::new();
    let mut skipped = Vec::new();
    for file in all_markdown() {
        let fenced = split_fences(&read(&file)).fenced;
        let mut i = 0;
        while i < fenced.len() {
            let (number, first) = &fenced[i];
            let mut line = first.trim().to_string();
            while line.ends_with('\\') && i + 1 < fenced.len() && fenced[i + 1].0 == fenced[i].0 + 1 {
                line.pop();
                i += 1;
                line.push(' ');
                line.push_str(fenced[i].1.trim());
            }
            i += 1;
            let line = line.strip_prefix("$ ").unwrap_or(&line).to_string();
            if !line.starts_with("schedlab ") {
                continue;
            }
            let at = format!("{}:{number}", display(&file));
            match shell_split(&line) {
                Ok(commands) => {
                    for words in commands {
                        if words.first().is_some_and(|w| w == "schedlab") {
                            found.push(Example { at: at.clone(), words });
                        }
                    }
                }
                Err(why) => skipped.push(format!("{at}: {why}: {line}")),
            }
        }
    }
    (found, skipped)
}

#[test]
fn the_shell_splitter_handles_what_the_examples_use() {
    let words = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert_eq!(
        shell_split("schedlab report 3 --format markdown > run3.md  # or csv, json"),
        Ok(vec![words(&["schedlab", "report", "3", "--format", "markdown"])])
    );
    assert_eq!(
        shell_split("schedlab run a.toml && schedlab report latest"),
        Ok(vec![words(&["schedlab", "run", "a.toml"]), words(&["schedlab", "report", "latest"])])
    );
    assert_eq!(
        shell_split(r#"schedlab rusage -- sh -c 'dd bs=1M 2>/dev/null' --x "a \"b\"" c\ d 2>err"#),
        Ok(vec![words(&["schedlab", "rusage", "--", "sh", "-c", "dd bs=1M 2>/dev/null", "--x", "a \"b\"", "c d"])])
    );
    assert_eq!(shell_split("schedlab list | head"), Err("a pipe"));
    assert_eq!(shell_split("schedlab show $(cat id)"), Err("command substitution"));
}

#[test]
fn example_subcommands_exist() {
    let (found, _) = examples();
    let subcommands: BTreeSet<&str> = found.iter().filter_map(|e| e.words.get(1).map(String::as_str)).collect();
    assert!(
        subcommands.len() >= 10,
        "only {} distinct subcommands in the examples: {subcommands:?}",
        subcommands.len()
    );
    let mut failed = Vec::new();
    for sub in &subcommands {
        let out =
            Command::new(env!("CARGO_BIN_EXE_schedlab")).args([sub, "--help"]).output().expect("running schedlab");
        if !out.status.success() {
            let at: Vec<&str> =
                found.iter().filter(|e| e.words.get(1).is_some_and(|w| w == sub)).map(|e| e.at.as_str()).collect();
            failed.push(format!(
                "`schedlab {sub} --help` exited {:?} (used at {}): {}",
                out.status.code(),
                at.join(", "),
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
    }
    println!("{} distinct subcommands named by the examples, each `--help` run: {subcommands:?}", subcommands.len());
    assert!(failed.is_empty(), "examples name subcommands the binary lacks:\n{}", failed.join("\n"));
}

#[test]
fn example_command_lines_parse() {
    let (found, skipped) = examples();
    let mut failed = Vec::new();
    for example in &found {
        if let Err(e) = Cli::try_parse_from(&example.words) {
            let first = e.to_string().lines().next().unwrap_or("").to_string();
            failed.push(format!("{}: `{}`: {first}", example.at, example.words.join(" ")));
        }
    }
    let lines: BTreeSet<&str> = found.iter().map(|e| e.at.as_str()).collect();
    println!(
        "{} example commands (on {} code lines) checked with schedlab::cli::Cli::try_parse_from; {} did not parse, {} lines skipped",
        found.len(),
        lines.len(),
        failed.len(),
        skipped.len()
    );
    for s in &skipped {
        println!("skipped (not split here): {s}");
    }
    assert!(found.len() >= 50, "only {} example commands found: the extraction is broken", found.len());
    assert!(failed.is_empty(), "example commands that do not parse:\n{}", failed.join("\n"));
}
