//! A seed's claims table in words: each claim with its two verdicts and their evidence
//! (`decide::claims` decides them).

use crate::decide::claims::{standing, ClaimRow, ClaimsTable, Evidence};
use crate::report::compare::p_text;
use crate::report::table::Table;

/// "3 of 4 decided verdicts also stand at Holm-adjusted p < 0.05" (`standing`).
pub fn family_line(rows: &[ClaimRow], side: impl Fn(&ClaimRow) -> &Evidence) -> Option<String> {
    let (stand, decided) = standing(rows, side)?;
    Some(format!("{stand} of {decided} decided verdicts also stand at Holm-adjusted p < 0.05"))
}

/// One cell of the HTML and text tables: "holds (test; n; effect; p = …)".
pub fn evidence_text(e: &Evidence) -> String {
    let p = match (e.p, e.p_adjusted) {
        (Some(p), Some(q)) => {
            format!("; p = {}, Holm {}", p_text(p), p_text(q))
        }
        (Some(p), None) => format!("; p = {}", p_text(p)),
        _ => String::new(),
    };
    let parts: Vec<&str> =
        [e.test.as_str(), e.n.as_str(), e.effect.as_str()].into_iter().filter(|s| !s.is_empty()).collect();
    format!("{} ({}{p})", e.verdict.as_str(), parts.join("; "))
}

/// The table as a `Table`: claim, its verdict on the seed's data, on this run.
pub fn as_table(table: &ClaimsTable) -> Table {
    let mut t = Table::new(["Claim", "On the seed's data", "On this run"]).left_align(0).left_align(1).left_align(2);
    for r in &table.rows {
        t.push(vec![r.claim.to_string(), evidence_text(&r.seed_data), evidence_text(&r.this_run)]);
    }
    t
}

/// The table as text: a block per claim, the two verdicts with their evidence.
pub fn text(table: &ClaimsTable) -> String {
    let mut lines = vec![format!("{} (seed data: {}, built in; this run):", table.title, table.seed)];
    for r in &table.rows {
        lines.push(format!("  - {}", r.claim));
        lines.push(format!("      seed data: {}", evidence_text(&r.seed_data)));
        lines.push(format!("      this run:  {}", evidence_text(&r.this_run)));
    }
    let family: Vec<String> = [
        family_line(&table.rows, |r| &r.seed_data).map(|l| format!("seed data: {l}")),
        family_line(&table.rows, |r| &r.this_run).map(|l| format!("this run: {l}")),
    ]
    .into_iter()
    .flatten()
    .collect();
    if !family.is_empty() {
        lines.push(format!("  (each claim judged at p < 0.05; over the table's claims, {})", family.join("; ")));
    }
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_table_says_each_claim_and_what_it_could_not_cover() {
        let seed = crate::store::seeds::seed("csci3753-2014").unwrap();
        let table = crate::decide::claims::table(seed, &[], &[]);
        let text = text(&table);
        assert!(text.contains("CPU-bound: SCHED_OTHER has the lowest wall time"), "{text}");
        assert!(text.contains("seed data: not covered"), "{text}");
    }
}
