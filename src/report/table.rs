//! A plain aligned text table: a header row, then rows, right-aligned by default.

pub struct Table {
    headers: Vec<String>,
    left_aligned: Vec<bool>,
    rows: Vec<Vec<String>>,
}

impl Table {
    pub fn new<S: Into<String>>(headers: impl IntoIterator<Item = S>) -> Table {
        let headers: Vec<String> = headers.into_iter().map(Into::into).collect();
        Table { left_aligned: vec![false; headers.len()], headers, rows: Vec::new() }
    }

    pub fn left_align(mut self, column: usize) -> Table {
        self.left_aligned[column] = true;
        self
    }

    pub fn push(&mut self, row: Vec<String>) {
        assert_eq!(row.len(), self.headers.len(), "row width must match the header");
        self.rows.push(row);
    }

    fn widths(&self) -> Vec<usize> {
        (0..self.headers.len())
            .map(|c| {
                self.rows
                    .iter()
                    .map(|r| r[c].chars().count())
                    .chain([self.headers[c].chars().count()])
                    .max()
                    .unwrap_or(0)
            })
            .collect()
    }

    fn line(&self, cells: &[String], widths: &[usize]) -> String {
        let parts: Vec<String> = cells
            .iter()
            .zip(widths)
            .zip(&self.left_aligned)
            .map(|((cell, &w), &left)| if left { format!("{cell:<w$}") } else { format!("{cell:>w$}") })
            .collect();
        parts.join("  ").trim_end().to_string()
    }

    /// The whole table, each column as wide as its widest cell.
    pub fn render(&self) -> String {
        let widths = self.widths();
        let mut out = self.line(&self.headers, &widths);
        out.push('\n');
        for row in &self.rows {
            out.push_str(&self.line(row, &widths));
            out.push('\n');
        }
        out
    }

    /// Header and rows laid out with fixed widths, so rows can be printed one at a time
    /// as they are measured and still line up.
    pub fn fixed_line(&self, cells: &[String], widths: &[usize]) -> String {
        self.line(cells, widths)
    }

    pub fn header_widths(&self, at_least: usize) -> Vec<usize> {
        self.headers.iter().map(|h| h.chars().count().max(at_least)).collect()
    }

    pub fn headers(&self) -> &[String] {
        &self.headers
    }

    pub fn rows(&self) -> &[Vec<String>] {
        &self.rows
    }

    /// A GitHub-flavoured Markdown table (pipes in cells escaped).
    pub fn render_markdown(&self) -> String {
        let cell = |c: &String| c.replace('|', "\\|");
        let mut out = format!("| {} |\n", self.headers.iter().map(cell).collect::<Vec<_>>().join(" | "));
        let rule: Vec<&str> = self.left_aligned.iter().map(|&l| if l { ":---" } else { "---:" }).collect();
        out.push_str(&format!("| {} |\n", rule.join(" | ")));
        for row in &self.rows {
            out.push_str(&format!("| {} |\n", row.iter().map(cell).collect::<Vec<_>>().join(" | ")));
        }
        out
    }

    /// CSV with a header row (cells quoted where needed).
    pub fn render_csv(&self) -> String {
        crate::store::export::csv_text(std::iter::once(&self.headers).chain(&self.rows))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_align_right() {
        let mut t = Table::new(["A", "Bee"]);
        t.push(vec!["1".into(), "2".into()]);
        t.push(vec!["100".into(), "20000".into()]);
        assert_eq!(t.render(), "  A    Bee\n  1      2\n100  20000\n");
    }

    #[test]
    fn markdown_and_csv() {
        let mut t = Table::new(["name", "n"]).left_align(0);
        t.push(vec!["a|b".into(), "1,5".into()]);
        assert_eq!(t.render_markdown(), "| name | n |\n| :--- | ---: |\n| a\\|b | 1,5 |\n");
        assert_eq!(t.render_csv(), "name,n\na|b,\"1,5\"\n");
        let quoted = crate::store::export::csv_text([["say \"hi\"", "two\nlines", "1.5", ""]]);
        assert_eq!(quoted, "\"say \"\"hi\"\"\",\"two\nlines\",1.5,\n");
    }

    #[test]
    fn left_aligned_column() {
        let mut t = Table::new(["name", "n"]).left_align(0);
        t.push(vec!["x".into(), "1".into()]);
        assert_eq!(t.render(), "name  n\nx     1\n");
    }
}
