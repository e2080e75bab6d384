//! docs/diagnostics.md read back: its rows (one per lld diagnostic) and its summary, so the
//! catalogue and the trials cannot drift apart. A row's last column is `tested: `<case>``
//! (a trial of this target) or `tested: fixture `elf/<name>`` (a differential fixture),
//! `n/a: <why it cannot arise>` or `untested: <what it would take>`.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::OnceLock;

#[derive(Debug)]
pub struct Row {
    pub id: String,
    /// `error`, `warning` or `fatal` (an error lld stops at at once).
    pub severity: String,
    /// lld's words, `{placeholder}` standing for what varies.
    pub words: String,
    pub status: Status,
}

#[derive(Debug, PartialEq, Eq)]
pub enum Status {
    /// A trial of this target.
    Tested(String),
    /// A differential fixture (`fixtures/elf/<name>`).
    Fixture(String),
    NotApplicable,
    Untested,
}

pub struct Doc {
    pub rows: Vec<Row>,
    /// flavour → (catalogued, tested, n/a, untested, percentage as written).
    pub summary: BTreeMap<String, (usize, usize, usize, usize, String)>,
}

fn doc_path() -> std::path::PathBuf {
    dtld_tests::workspace_root().join("docs/diagnostics.md")
}

/// Splits a markdown table line on its unescaped `|`, unescaping `\|`.
fn cells(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut chars = line.trim().trim_start_matches('|').chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&'|') => {
                cur.push('|');
                chars.next();
            }
            '|' => out.push(std::mem::take(&mut cur).trim().to_string()),
            _ => cur.push(c),
        }
    }
    if !cur.trim().is_empty() {
        out.push(cur.trim().to_string());
    }
    out
}

/// The text between the first pair of backticks.
fn quoted(s: &str) -> Option<String> {
    let a = s.find('`')?;
    let b = s[a + 1..].find('`')? + a + 1;
    Some(s[a + 1..b].to_string())
}

fn parse_status(s: &str) -> Result<Status, String> {
    if let Some(rest) = s.strip_prefix("tested:") {
        let name = quoted(rest).ok_or_else(|| format!("`tested:` without a `case`: {s}"))?;
        if rest.trim_start().starts_with("fixture") {
            return Ok(Status::Fixture(name));
        }
        return Ok(Status::Tested(name));
    }
    if s.starts_with("n/a:") {
        return Ok(Status::NotApplicable);
    }
    if s.starts_with("untested:") {
        return Ok(Status::Untested);
    }
    Err(format!("status must start with `tested:`, `n/a:` or `untested:`: {s}"))
}

pub fn parse(text: &str) -> Result<Doc, String> {
    let mut rows = Vec::new();
    let mut summary = BTreeMap::new();
    for line in text.lines() {
        let c = cells(line);
        if c.len() == 6 && (c[0] == "ELF" || c[0] == "COFF") {
            let n = |i: usize| c[i].parse::<usize>().map_err(|_| format!("summary: not a number: {line}"));
            summary.insert(c[0].clone(), (n(1)?, n(2)?, n(3)?, n(4)?, c[5].clone()));
            continue;
        }
        if c.len() != 5 || !(c[0].starts_with("ELF-") || c[0].starts_with("COFF-")) {
            continue;
        }
        let words = quoted(&c[2]).ok_or_else(|| format!("{}: lld's words are not in backticks", c[0]))?;
        let status = parse_status(&c[4]).map_err(|e| format!("{}: {e}", c[0]))?;
        rows.push(Row { id: c[0].clone(), severity: c[1].clone(), words, status });
    }
    Ok(Doc { rows, summary })
}

fn doc() -> Result<&'static Doc, String> {
    static DOC: OnceLock<Result<Doc, String>> = OnceLock::new();
    DOC.get_or_init(|| {
        let text = std::fs::read_to_string(doc_path()).map_err(|e| format!("cannot read docs/diagnostics.md: {e}"))?;
        parse(&text)
    })
    .as_ref()
    .map_err(Clone::clone)
}

/// (row id, lld's words) of the rows naming `case`.
pub fn words_for(case: &str) -> Result<Vec<(String, String)>, String> {
    Ok(doc()?.rows.iter().filter(|r| r.status == Status::Tested(case.to_string())).map(|r| (r.id.clone(), r.words.clone())).collect())
}

/// The first literal part of `words` (between `{placeholders}`, `...` and `\n`) that `stderr`
/// lacks.
pub fn missing_fragment(words: &str, stderr: &str) -> Option<String> {
    let mut parts = Vec::new();
    let mut cur = String::new();
    let mut depth = 0;
    for ch in words.chars() {
        match ch {
            '{' => {
                depth += 1;
                parts.push(std::mem::take(&mut cur));
            }
            '}' if depth > 0 => depth -= 1,
            _ if depth == 0 => cur.push(ch),
            _ => {}
        }
    }
    parts.push(cur);
    parts
        .iter()
        .flat_map(|p| p.split("...").flat_map(|q| q.split("\\n")).map(str::trim).map(str::to_string).collect::<Vec<_>>())
        .filter(|f| f.chars().count() >= 3)
        .find(|f| !stderr.contains(f.as_str()))
}

/// The catalogue against the trials: every `tested` row names an existing case or fixture,
/// every case is named by a row, ids are unique, and the summary counts are the rows'.
pub fn check(cases: &[&str]) -> Result<(), String> {
    let doc = doc()?;
    let mut problems = Vec::new();
    let case_set: BTreeSet<&str> = cases.iter().copied().collect();
    let mut named = BTreeSet::new();
    let mut ids = BTreeSet::new();
    for r in &doc.rows {
        if !ids.insert(r.id.as_str()) {
            problems.push(format!("{}: id used twice", r.id));
        }
        if !["error", "warning", "fatal"].contains(&r.severity.as_str()) {
            problems.push(format!("{}: severity `{}` is not error, warning or fatal", r.id, r.severity));
        }
        match &r.status {
            Status::Tested(c) => {
                if case_set.contains(c.as_str()) {
                    named.insert(c.as_str());
                } else {
                    problems.push(format!("{}: names `{c}`, which is no case of tests/diagnostics", r.id));
                }
            }
            Status::Fixture(f) if !dtld_tests::workspace_root().join("fixtures").join(f).exists() => {
                problems.push(format!("{}: names fixture `{f}`, which does not exist", r.id));
            }
            _ => {}
        }
    }
    for c in cases {
        if !named.contains(c) {
            problems.push(format!("case `{c}` is named by no row of docs/diagnostics.md"));
        }
    }
    for flavour in ["ELF", "COFF"] {
        let rows: Vec<&Row> = doc.rows.iter().filter(|r| r.id.starts_with(&format!("{flavour}-"))).collect();
        let tested = rows.iter().filter(|r| matches!(r.status, Status::Tested(_) | Status::Fixture(_))).count();
        let na = rows.iter().filter(|r| r.status == Status::NotApplicable).count();
        let untested = rows.iter().filter(|r| r.status == Status::Untested).count();
        let pct = if tested + untested == 0 { 100.0 } else { 100.0 * tested as f64 / (tested + untested) as f64 };
        let want = (rows.len(), tested, na, untested, format!("{pct:.1}%"));
        match doc.summary.get(flavour) {
            Some(got) if *got == want => {}
            Some(got) => problems.push(format!("summary row {flavour} says {got:?}; the rows count {want:?}")),
            None => problems.push(format!("no summary row for {flavour}")),
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("\n"))
    }
}

#[cfg(test)]
mod tests {}
