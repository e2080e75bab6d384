//! The option engine the three command lines share.
//!
//! Each option is one row of its flavour's table (`gnu.rs`, and the COFF drivers): its
//! spellings, how it takes a value, the meta-variable and help text `--help` and the man page
//! print, whether dtld implements it, and the handler that applies it to the flavour's parse
//! state. Adding an option is adding a row; `--help` is generated from the same rows, so the
//! two cannot drift apart.
//!
//! The status column is how the "no silent acceptance" rule is kept mechanically: an option
//! lld itself treats as a no-op is accepted quietly (`Noop`); one dtld recognises but does not
//! implement warns `<option> is not supported; ignored` when ignoring it leaves the output's
//! meaning intact (`Ignored`), and is an error otherwise (`Unsupported`). Only `Implemented`
//! rows run their handler for effect (`Ignored` ones may still validate their value).

/// How an option takes its value.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Arity {
    /// No value.
    Flag,
    /// A value: `--name=v`, `--name v`, `-name=v`, `-name v` (GNU); `/name:v` (lld-link).
    Value,
    /// An optional value, only joined: `--name` or `--name=v` (never the next argument).
    OptValue,
    /// lld-link's boolean options: `/name`, or `/name:no` to turn it off (the value is `no`).
    Bool,
}

/// What dtld does with an option it recognises.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Status {
    Implemented,
    /// A no-op in lld too (kept for GNU ld compatibility): accepted quietly.
    Noop,
    /// Not implemented; the output means the same without it: a warning.
    Ignored,
    /// Not implemented, and ignoring it would change what the output means: an error.
    Unsupported,
}

/// One option of a flavour's table; `S` is that flavour's parse state.
pub struct Opt<S: 'static> {
    /// Spellings without the leading dashes or slash; the first is canonical.
    pub names: &'static [&'static str],
    pub arity: Arity,
    /// The meta-variable `--help` shows (`<path>`); empty for flags.
    pub meta: &'static str,
    pub help: &'static str,
    pub status: Status,
    pub apply: fn(&mut S, &Val),
}

/// One occurrence of an option on the command line.
pub struct Val<'a> {
    /// How the user spelled the option (dashes and name, no value), for messages.
    pub spelling: &'a str,
    pub value: Option<&'a str>,
    /// What joins the option and its value in messages: `=` (GNU), `:` (lld-link).
    pub sep: char,
}

impl Val<'_> {
    /// Whether a flag or lld-link boolean is on (`/name`, not `/name:no`).
    pub fn yes(&self) -> bool {
        self.value.is_none()
    }
    /// The value (empty for a flag).
    pub fn str(&self) -> String {
        self.value.unwrap_or("").to_string()
    }
    pub fn path(&self) -> std::path::PathBuf {
        std::path::PathBuf::from(self.value.unwrap_or(""))
    }
    /// How lld names the option in "is not supported" messages: `--icf=all`, `/mapinfo:exports`.
    /// The option as lld's `getSpelling` gives it for a joined value: `/threads:`.
    pub fn spelling_joined(&self) -> String {
        format!("{}{}", self.spelling, self.sep)
    }

    pub fn shown(&self) -> String {
        match self.value {
            Some(v) => format!("{}{}{v}", self.spelling, self.sep),
            None => self.spelling.to_string(),
        }
    }
}

/// What the engine needs from a flavour's parse state to report status warnings and errors.
pub trait Report {
    fn warning(&mut self, msg: String);
    fn error(&mut self, msg: String);
    /// Errors reported so far (for flavours that check an unsupported option's value first).
    fn errors_so_far(&self) -> usize {
        0
    }
    /// What joins an option and its value in this flavour's messages.
    fn separator(&self) -> char {
        '='
    }
}

/// A row's constructor, so tables read as one line per option.
pub const fn opt<S>(names: &'static [&'static str], arity: Arity, meta: &'static str, help: &'static str, status: Status, apply: fn(&mut S, &Val)) -> Opt<S> {
    Opt { names, arity, meta, help, status, apply }
}

/// Looks up a spelling in a table.
pub fn lookup<'t, S>(table: &'t [Opt<S>], name: &str) -> Option<&'t Opt<S>> {
    table.iter().find(|o| o.names.contains(&name))
}

/// Applies one occurrence: the handler for implemented options (and for the others, which may
/// check their value), then the status warning or error.
pub fn apply<S: Report>(state: &mut S, o: &Opt<S>, spelling: &str, value: Option<&str>) {
    let v = Val { spelling, value, sep: state.separator() };
    let before = state.errors_so_far();
    (o.apply)(state, &v);
    match o.status {
        Status::Implemented | Status::Noop => {}
        Status::Ignored => state.warning(format!("{} is not supported; ignored", v.shown())),
        // An invalid value is reported as lld reports it, and only that.
        Status::Unsupported if state.errors_so_far() != before => {}
        Status::Unsupported => state.error(format!("{} is not supported", v.shown())),
    }
}

/// LLVM's `OptTable::findNearest` over `table` for an unknown `arg`: every spelling with each of
/// `prefixes` (`-`, `--`; `/`, `-`), a spelling that takes a joined value as `name<sep>` whose
/// value part is set aside and put back; the nearest by edit distance (a candidate that needs a
/// value it was not given counts one more), the first in table order on a tie. lld suggests it
/// when the distance is at most 1 (`unknown argument '--gc-section', did you mean
/// '--gc-sections'`).
pub fn nearest<S>(table: &[Opt<S>], prefixes: &[&str], sep: char, arg: &str) -> Option<String> {
    let mut best: Option<(usize, String)> = None;
    for o in table {
        for name in o.names.iter().filter(|n| n.len() >= 4) {
            // A one-letter spelling has `-` only; a value can be joined with `sep`.
            let forms: Vec<(String, bool)> = match o.arity {
                Arity::Flag | Arity::Bool => vec![(name.to_string(), false)],
                Arity::Value | Arity::OptValue => vec![(name.to_string(), false), (format!("{name}{sep}"), true)],
            };
            for (cand_name, delim) in forms {
                let (normalized, rhs) = match (delim, arg.split_once(sep)) {
                    (true, Some((l, r))) => (format!("{l}{sep}"), r),
                    _ => (arg.to_string(), ""),
                };
                for p in prefixes {
                    let cand = format!("{p}{cand_name}");
                    let bound = best.as_ref().map_or(usize::MAX, |b| b.0);
                    if cand.len().abs_diff(normalized.len()) > bound {
                        continue;
                    }
                    let mut d = edit_distance(cand.as_bytes(), normalized.as_bytes());
                    if delim && rhs.is_empty() {
                        d += 1;
                    }
                    if d < bound {
                        best = Some((d, format!("{cand}{rhs}")));
                    }
                }
            }
        }
    }
    best.filter(|b| b.0 <= 1).map(|b| b.1)
}

/// Levenshtein distance (insertions, deletions, replacements), as LLVM's `edit_distance`.
fn edit_distance(a: &[u8], b: &[u8]) -> usize {
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, &ca) in a.iter().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = if ca == cb { prev } else { 1 + prev.min(row[j]).min(row[j + 1]) };
            prev = cur;
        }
    }
    row[b.len()]
}

/// A handler for rows whose status says everything.
pub fn nothing<S>(_: &mut S, _: &Val) {}

/// `--help` text for a GNU-style table: `--name=<meta>`, `-x <meta>` for one-letter spellings.
/// Rows without help text are not listed.
pub fn gnu_help<S>(table: &[Opt<S>]) -> String {
    let mut s = String::new();
    for o in table.iter().filter(|o| !o.help.is_empty()) {
        let spell: Vec<String> = o
            .names
            .iter()
            .map(|n| {
                let short = n.chars().count() == 1;
                let d = if short { "-" } else { "--" };
                let meta = match (o.arity, short) {
                    (Arity::Flag | Arity::Bool, _) => String::new(),
                    (Arity::OptValue, _) => o.meta.to_string(),
                    (Arity::Value, true) => format!(" {}", o.meta),
                    (Arity::Value, false) => format!("={}", o.meta),
                };
                format!("{d}{n}{meta}")
            })
            .collect();
        push_help_line(&mut s, &spell.join(", "), &help_with_status(o));
    }
    s
}

fn help_with_status<S>(o: &Opt<S>) -> String {
    match o.status {
        Status::Implemented | Status::Noop => o.help.to_string(),
        Status::Ignored => format!("{} (not supported; ignored)", o.help),
        Status::Unsupported => format!("{} (not supported: an error)", o.help),
    }
}

fn push_help_line(s: &mut String, left: &str, help: &str) {
    if left.len() < 30 {
        s.push_str(&format!("  {left:<30} {help}\n"));
    } else {
        s.push_str(&format!("  {left}\n  {:<30} {help}\n", ""));
    }
}

/// `--help` text for lld-link's table: `/name:<meta>`, `/name[:<meta>]`, `/name[:no]`.
pub fn link_help<S>(table: &[Opt<S>]) -> String {
    let mut s = String::new();
    for o in table.iter().filter(|o| !o.help.is_empty()) {
        let spell: Vec<String> = o.names.iter().map(|n| link_spelling(n, o.arity, o.meta)).collect();
        push_help_line(&mut s, &spell.join(", "), &help_with_status(o));
    }
    s
}

fn link_spelling(n: &str, arity: Arity, meta: &str) -> String {
    match arity {
        Arity::Flag => format!("/{n}"),
        Arity::Value => format!("/{n}:{meta}"),
        Arity::OptValue => format!("/{n}[:{meta}]"),
        Arity::Bool => format!("/{n}[:no]"),
    }
}

/// One row as the man-page generator and `docs/options.md` see it.
pub struct RowInfo {
    pub spellings: Vec<String>,
    pub arity: Arity,
    pub meta: &'static str,
    pub help: &'static str,
    pub status: Status,
}

/// Every row of a table, spelled GNU-style.
pub fn rows<S>(table: &[Opt<S>]) -> Vec<RowInfo> {
    rows_spelled(table, |n, _| if n.chars().count() == 1 { format!("-{n}") } else { format!("--{n}") })
}

/// Every row of lld-link's table, spelled as its `--help` does (`/out:<file>`, `/debug[:<...>]`,
/// `/wx[:no]`), with the meta-variable inside the spellings.
#[cfg(test)]
pub fn link_rows<S>(table: &[Opt<S>]) -> Vec<RowInfo> {
    let mut rows = rows_spelled(table, |n, o| link_spelling(n, o.arity, o.meta));
    rows.iter_mut().for_each(|r| r.meta = "");
    rows
}

fn rows_spelled<S>(table: &[Opt<S>], spell: impl Fn(&str, &Opt<S>) -> String) -> Vec<RowInfo> {
    table
        .iter()
        .map(|o| RowInfo { spellings: o.names.iter().map(|n| spell(n, o)).collect(), arity: o.arity, meta: o.meta, help: o.help, status: o.status })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Default)]
    struct S {
        out: String,
        warnings: Vec<String>,
        errors: Vec<String>,
    }
    impl Report for S {
        fn warning(&mut self, msg: String) {
            self.warnings.push(msg);
        }
        fn error(&mut self, msg: String) {
            self.errors.push(msg);
        }
    }
    static TABLE: &[Opt<S>] = &[
        opt(&["o", "output"], Arity::Value, "<path>", "Output", Status::Implemented, |s, v| s.out = v.str()),
        opt(&["gdb-index"], Arity::Flag, "", "Index", Status::Ignored, nothing),
        opt(&["emit-relocs", "q"], Arity::Flag, "", "Relocs", Status::Unsupported, nothing),
        opt(&["g"], Arity::Flag, "", "", Status::Noop, nothing),
    ];

    #[test]
    fn statuses() {
        let mut s = S::default();
        apply(&mut s, lookup(TABLE, "output").unwrap(), "--output", Some("a"));
        apply(&mut s, lookup(TABLE, "gdb-index").unwrap(), "--gdb-index", None);
        apply(&mut s, lookup(TABLE, "q").unwrap(), "-q", None);
        apply(&mut s, lookup(TABLE, "g").unwrap(), "-g", None);
        assert_eq!(s.out, "a");
        assert_eq!(s.warnings, ["--gdb-index is not supported; ignored"]);
        assert_eq!(s.errors, ["-q is not supported"]);
        assert!(lookup(TABLE, "OUTPUT").is_none());
    }

    #[test]
    fn help_lists_rows_with_text() {
        let h = gnu_help(TABLE);
        assert!(h.contains("-o <path>, --output=<path>"));
        assert!(h.contains("(not supported; ignored)"));
        assert!(!h.contains("  -g "));
    }
}
