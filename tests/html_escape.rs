//! The HTML pages escape whatever a suite file says: a suite named with a script and
//! described with markup shows up as text in `report --html`, `compare --html` and the
//! report `run` writes, and the only script on each page is schedlab's own size probe.

mod common;

use common::*;

const NAME: &str = r#"<script>alert("x")</script>"#;

/// A tiny ring whose name, description and a comment carry markup.
fn suite() -> String {
    format!(
        "# a comment with <i>markup</i>\nname = '{NAME}'\ndescription = '<b onmouseover=\"alert(1)\">bold</b> & co'\n\
         [[experiment]]\nfamily = \"ring\"\nprocs = 2\nlaps = 50\nrepeat = 1\n"
    )
}

/// The markup of the suite appears only escaped, and the page has one script.
fn assert_escaped(page: &str, what: &str) {
    assert!(page.contains("&lt;script&gt;alert("), "{what}: the name is not shown escaped: {page}");
    assert!(!page.contains("<script>alert"), "{what}: the suite's script is on the page raw");
    assert!(!page.contains("alert(\"x\")"), "{what}: the quotes of the name are raw");
    assert_eq!(page.matches("<script").count(), 1, "{what}: only the size probe may be a script");
    assert!(page.contains("<script>window.addEventListener('load'"), "{what}: the size probe is missing");
    for raw in ["<b onmouseover", "<i>markup"] {
        assert!(!page.contains(raw), "{what}: {raw} is on the page raw");
    }
}

#[test]
fn suite_markup_is_escaped_on_every_page() {
    let dir = Scratch::new("html-escape");
    let db = dir.path("r.db");
    let suite = dir.write("s.toml", &suite());
    // The same suite twice, so the comparison has matching trials.
    ok_stdout(&db, &["run", &suite]);
    ok_stdout(&db, &["run", &suite]);

    let report = dir.path("run.html");
    ok_stdout(&db, &["report", "1", "--html", &report.display().to_string()]);
    let page = std::fs::read_to_string(&report).unwrap();
    assert_escaped(&page, "report --html");
    // The description and the comment are in the suite text, shown as text too.
    assert!(page.contains("&lt;b onmouseover=&quot;alert(1)&quot;&gt;bold&lt;&#x2f;b&gt; &amp; co"), "{page}");
    assert!(page.contains("<pre># a comment with &lt;i&gt;markup&lt;&#x2f;i&gt;"), "{page}");
    for section in ["<h2>Results</h2>", "<h2>Machine</h2>", "<h2>Suite</h2>", "<h1>schedlab run 1: &lt;script&gt;"] {
        assert!(page.contains(section), "missing {section}: {page}");
    }

    // The page `run` wrote beside the database is the same page.
    let written = std::fs::read_to_string(dir.path("r-run-2.html")).unwrap();
    assert_escaped(&written, "the report of run");

    let compared = dir.path("cmp.html");
    ok_stdout(&db, &["compare", "1", "2", "--html", &compared.display().to_string()]);
    let page = std::fs::read_to_string(&compared).unwrap();
    assert_escaped(&page, "compare --html");
    assert!(page.contains("A = run 1 (&lt;script&gt;alert(&quot;x&quot;)&lt;&#x2f;script&gt;, "), "{page}");
    assert!(page.contains("<h1>schedlab compare</h1>") && page.contains("<td class=\"l\">ring</td>"), "{page}");
}
