//! Diagnostics: one context for both formats and all three command lines, and helpers that make
//! messages read like lld's (symbol names, source files, locations).
//!
//! `Diag` is what every warning and error goes through: `--fatal-warnings` (`/WX`) turns
//! warnings into errors, `--error-limit=N` (`/errorlimit:N`) stops after N errors with lld's
//! closing line, `--color-diagnostics` colors the severity as lld does, and lld-link's
//! `/ignore:<code>` silences the warnings it names. It counts what it printed, so a link that
//! produced an error from a warning fails before its output is written. A link keeps one
//! `Diag` (shared by `Arc` between the configuration's copies and the worker threads).

use std::io::Write as _;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use crate::error::{Error, Result};

/// The program's name in messages, taken from argv[0] as lld does (`getFilenameWithoutExe`):
/// `ld.lld: error: ...` when dtld runs as `ld.lld`, `lld-link: ...` as `lld-link`, `dtld: ...`
/// as itself, so a build log or a test that looks for lld's words finds them. Set once, before
/// the link starts; process-wide like the stream it prefixes (a library caller that never sets
/// it gets "dtld").
static PROGRAM: std::sync::OnceLock<String> = std::sync::OnceLock::new();

/// Records the program name from argv[0] (its file name, without `.exe`). The first call wins.
pub fn set_program(argv0: &str) {
    let name = argv0.rsplit('/').next().unwrap_or(argv0);
    let name = name.strip_suffix(".exe").or_else(|| name.strip_suffix(".EXE")).unwrap_or(name);
    if !name.is_empty() {
        let _ = PROGRAM.set(name.to_string());
    }
}

/// The program name messages start with (see `set_program`).
pub fn program() -> &'static str {
    PROGRAM.get().map_or("dtld", String::as_str)
}

/// lld's default `--error-limit`.
pub const DEFAULT_ERROR_LIMIT: usize = 20;

#[derive(Debug)]
pub struct Diag {
    pub fatal_warnings: bool,
    /// `-w` / `--no-warnings`: warnings are not printed (errors still are).
    pub suppress_warnings: bool,
    /// 0: no limit.
    pub error_limit: usize,
    pub color: bool,
    /// `/ignore:` warning codes (lld-link).
    pub ignored: Vec<String>,
    /// `--vs-diagnostics`: messages start with the source location they are about, in Visual
    /// Studio's `file(line): error: ...` form, instead of the program name.
    pub vs_diagnostics: bool,
    errors: AtomicUsize,
    /// Warnings printed (an `--incremental` link that warned keeps no state: a skipped relink
    /// would not warn again).
    warnings: AtomicUsize,
    stopped: AtomicBool,
    /// The last message printed had several lines: lld separates the next one by a blank line.
    sep: AtomicBool,
    /// `--demangle` (the default) / `--no-demangle`: how the symbol names marked in a message
    /// (`mark_name`) are printed.
    pub demangle: bool,
}

impl Default for Diag {
    fn default() -> Diag {
        Diag::new(false, DEFAULT_ERROR_LIMIT, None)
    }
}

impl Clone for Diag {
    fn clone(&self) -> Diag {
        Diag {
            fatal_warnings: self.fatal_warnings,
            suppress_warnings: self.suppress_warnings,
            error_limit: self.error_limit,
            color: self.color,
            ignored: self.ignored.clone(),
            vs_diagnostics: self.vs_diagnostics,
            errors: AtomicUsize::new(self.error_count()),
            warnings: AtomicUsize::new(self.warnings()),
            stopped: AtomicBool::new(self.stopped.load(Ordering::Relaxed)),
            sep: AtomicBool::new(self.sep.load(Ordering::Relaxed)),
            demangle: self.demangle,
        }
    }
}

/// `--color-diagnostics[=auto|always|never]`: `None` is `auto` (colors on a terminal).
pub fn color_choice(value: Option<&str>) -> Option<bool> {
    match value {
        None | Some("auto") => None,
        Some("always") => Some(true),
        Some("never") => Some(false),
        Some(_) => None,
    }
}

impl Diag {
    pub fn new(fatal_warnings: bool, error_limit: usize, color: Option<bool>) -> Diag {
        let color = color.unwrap_or_else(|| {
            // SAFETY: isatty only reads the descriptor's state.
            unsafe { libc::isatty(2) == 1 }
        });
        Diag {
            fatal_warnings,
            suppress_warnings: false,
            error_limit,
            color,
            ignored: Vec::new(),
            vs_diagnostics: false,
            errors: AtomicUsize::new(0),
            warnings: AtomicUsize::new(0),
            stopped: AtomicBool::new(false),
            sep: AtomicBool::new(false),
            demangle: true,
        }
    }

    fn print(&self, severity: &str, code: &str, msg: &str) {
        let msg = &*render_names(msg, self.demangle);
        let who = if self.vs_diagnostics { vs_location(msg).unwrap_or_else(|| program().into()) } else { program().into() };
        let mut err = std::io::stderr().lock();
        if self.sep.swap(msg.contains('\n'), Ordering::Relaxed) {
            let _ = writeln!(err);
        }
        if self.color {
            let _ = writeln!(err, "{who}: \x1b[0;{code}m{severity}: \x1b[0m{msg}");
        } else {
            let _ = writeln!(err, "{who}: {severity}: {msg}");
        }
    }

    /// lld's `Log` (printed under `--verbose`): `<program>: <msg>`.
    pub fn log(&self, msg: &str) {
        let _ = writeln!(std::io::stderr().lock(), "{}: {msg}", program());
    }

    /// A remark LLVM asked to show (`-pass-remarks`): `<program>: remark: <msg>`.
    pub fn remark(&self, msg: &str) {
        self.print("remark", "34", msg);
    }

    /// A helper process's stderr (or LLVM's, rendered so by `lto::diagnostics`), passed on as
    /// this link's: its `dtld: error: `, `dtld: warning: ` and `dtld: remark: ` lines as this
    /// link's errors, warnings and remarks (so `--fatal-warnings` and `-w` apply), its other
    /// `dtld: ` lines under this program's name, the rest as they are.
    pub fn forward(&self, text: &str) {
        for l in text.lines() {
            match l.strip_prefix("dtld: ") {
                Some(rest) => {
                    if let Some(e) = rest.strip_prefix("error: ") {
                        self.error(e);
                    } else if let Some(w) = rest.strip_prefix("warning: ") {
                        self.warn(w);
                    } else if let Some(r) = rest.strip_prefix("remark: ") {
                        self.remark(r);
                    } else {
                        self.log(rest);
                    }
                }
                None => verbatim(l),
            }
        }
    }

    /// lld's `Warn`: a warning, or an error under `--fatal-warnings`.
    pub fn warn(&self, msg: &str) {
        if self.fatal_warnings {
            self.error(msg);
        } else if !self.suppress_warnings {
            self.warnings.fetch_add(1, Ordering::Relaxed);
            self.print("warning", "35", msg);
        }
    }

    /// A warning `/ignore:<code>` can silence.
    pub fn warn_code(&self, code: &str, msg: &str) {
        if !self.ignored.iter().any(|c| c == code) {
            self.warn(msg);
        }
    }

    /// Prints an error, unless `--error-limit` was reached (then lld's closing line, once).
    /// Under `--vs-diagnostics` a duplicate symbol whose two definitions both have a source line
    /// is two errors, one at each line (as lld prints it).
    pub fn error(&self, msg: &str) {
        if self.vs_diagnostics {
            if let Some((a, b)) = split_duplicate(msg) {
                self.error(&a);
                self.error(&b);
                return;
            }
        }
        let n = self.errors.fetch_add(1, Ordering::Relaxed) + 1;
        if self.error_limit != 0 && n > self.error_limit {
            if !self.stopped.swap(true, Ordering::Relaxed) {
                self.print("error", "31", "too many errors emitted, stopping now (use --error-limit=0 to see all errors)");
            }
            return;
        }
        self.print("error", "31", msg);
    }

    /// Prints every message of a failed stage as an error.
    pub fn report(&self, e: &Error) {
        for m in &e.messages {
            self.error(m);
        }
    }

    /// Errors so far (warnings under `--fatal-warnings` included).
    pub fn error_count(&self) -> usize {
        self.errors.load(Ordering::Relaxed)
    }

    /// How many warnings were printed.
    pub fn warnings(&self) -> usize {
        self.warnings.load(Ordering::Relaxed)
    }

    /// Fails the link if anything was reported as an error (already printed: the error
    /// returned carries no further message).
    pub fn check(&self) -> Result<()> {
        if self.error_count() > 0 {
            return Err(Error::many(Vec::new()));
        }
        Ok(())
    }
}

/// The location `--vs-diagnostics` puts first (lld's `ErrorHandler::getLocation`): the source
/// line of an undefined or duplicate symbol's first reference or definition (`file(line)`), or
/// the object of an undefined symbol's reference when there is no line.
pub fn vs_location(msg: &str) -> Option<String> {
    let mut lines = msg.split('\n');
    let first = lines.next()?;
    let second = lines.next().unwrap_or("");
    let third = lines.next().unwrap_or("");
    // `... (file:line)` at the end of a line, or `file:line` as its first word.
    let paren = |rest: &str| -> Option<String> {
        let inner = rest.strip_suffix(')')?;
        let (_, inner) = inner.rsplit_once('(')?;
        file_line(inner)
    };
    let word = |rest: &str| -> Option<String> { file_line(rest.split_whitespace().next()?) };
    // A script's `file:line: unclosed quote`.
    if let Some(pos) = first.find(": unclosed quote") {
        if let Some(l) = first[..pos].rsplit(char::is_whitespace).next().and_then(file_line) {
            return Some(l);
        }
    }
    let undefined = first.strip_prefix("undefined ").is_some_and(|r| {
        let r = r.split_once(' ').map_or(r, |(a, b)| if a == "symbol:" { r } else { b });
        r.starts_with("symbol:")
    });
    if undefined {
        if let Some(rest) = second.strip_prefix(">>> referenced by ") {
            if let Some(l) = paren(rest).or_else(|| word(rest)) {
                return Some(l);
            }
            if first.starts_with("undefined symbol:") {
                return rest.rsplit_once(':').map(|(f, _)| f.to_string());
            }
        }
        return None;
    }
    if first.starts_with("duplicate symbol: ") {
        let rest = second.strip_prefix(">>> defined at ")?;
        return paren(rest).or_else(|| word(rest));
    }
    if second.starts_with(">>> defined in ") {
        let rest = third.strip_prefix(">>> referenced by ")?;
        return paren(rest).or_else(|| word(rest));
    }
    None
}

/// `duplicate symbol: x` with two `>>> defined at file:line ...` pairs of lines, as two
/// messages of one definition each.
fn split_duplicate(msg: &str) -> Option<(String, String)> {
    let lines: Vec<&str> = msg.split('\n').collect();
    if lines.len() != 5 || !lines[0].starts_with("duplicate symbol: ") || !lines[2].starts_with(">>>") || !lines[4].starts_with(">>>") {
        return None;
    }
    let has_line = |l: &str| l.strip_prefix(">>> defined at ").and_then(|r| r.split_whitespace().next()).and_then(file_line).is_some();
    if !has_line(lines[1]) || !has_line(lines[3]) {
        return None;
    }
    Some((format!("{}\n{}\n{}", lines[0], lines[1], lines[2]), format!("{}\n{}\n{}", lines[0], lines[3], lines[4])))
}

/// `file:line` (no spaces, digits after the last colon) as `file(line)`.
fn file_line(s: &str) -> Option<String> {
    let (file, line) = s.rsplit_once(':')?;
    (!file.is_empty() && !file.contains(char::is_whitespace) && !line.is_empty() && line.bytes().all(|b| b.is_ascii_digit())).then(|| format!("{file}({line})"))
}

/// Brackets a symbol name inside a message. Messages are built deep in the link, where the
/// command line is not at hand; the diagnostics context renders every marked name when it prints
/// the message, demangled unless `--no-demangle` (lld's `maybeDemangleSymbol`), so that switch
/// lives in one place. The marks are Unicode private-use characters, which no symbol name has.
pub fn mark_name(name: &str) -> String {
    format!("{NAME_START}{name}{NAME_END}")
}

const NAME_START: char = '\u{E000}';
const NAME_END: char = '\u{E001}';

/// `msg` with its marked names demangled (`demangle`) or as they are, the marks removed.
pub fn render_names(msg: &str, demangle: bool) -> std::borrow::Cow<'_, str> {
    if !msg.contains(NAME_START) {
        return msg.into();
    }
    let mut out = String::with_capacity(msg.len());
    let mut rest = msg;
    while let Some(start) = rest.find(NAME_START) {
        out.push_str(&rest[..start]);
        let after = &rest[start + NAME_START.len_utf8()..];
        let (name, tail) = match after.find(NAME_END) {
            Some(end) => (&after[..end], &after[end + NAME_END.len_utf8()..]),
            None => (after, ""),
        };
        if demangle {
            out.push_str(&crate::util::demangle::demangle(name));
        } else {
            out.push_str(name);
        }
        rest = tail;
    }
    out.push_str(rest);
    out.into()
}

/// `warn` for code that has no link context (the command line before it is parsed).
pub fn warn_plain(msg: &str) {
    let _ = writeln!(std::io::stderr().lock(), "{}: warning: {msg}", program());
}

/// An error where there is no link context: the command line before it is parsed, the plugin
/// helper processes (whose stderr the link reads back, `Diag::forward`), the panic hook.
pub fn error_plain(msg: &str) {
    let _ = writeln!(std::io::stderr().lock(), "{}: error: {msg}", program());
}

/// `Diag::log` where there is no link context (the plugin helper processes).
pub fn log_plain(msg: &str) {
    let _ = writeln!(std::io::stderr().lock(), "{}: {msg}", program());
}

/// Text printed as it is, one line per line: what another program wrote for the user (LLVM's
/// `-time-passes` reports and cache warnings, a backend compiler's messages, llvm-lib's bare
/// messages), which lld shows unchanged too.
pub fn verbatim(text: &str) {
    let mut err = std::io::stderr().lock();
    let _ = err.write_all(text.as_bytes());
    if !text.ends_with('\n') {
        let _ = err.write_all(b"\n");
    }
}

/// A plugin helper process's message to the link that runs it: `dtld: <msg>` on its stderr,
/// with a fixed name whatever the executable is called; the link reads it back and prints it as
/// its own (`Diag::forward`).
pub fn to_parent(msg: &str) {
    let _ = writeln!(std::io::stderr().lock(), "dtld: {msg}");
}

/// Flushes stderr before the process hands its descriptors on (`detach`).
pub fn flush() {
    let _ = std::io::stderr().flush();
}

#[cfg(test)]
mod tests {
    use super::vs_location;

    #[test]
    fn marked_names_render_once() {
        let m = format!("duplicate symbol: {} and {}", super::mark_name("_Z3muldd"), super::mark_name("foo"));
        assert_eq!(super::render_names(&m, true), "duplicate symbol: mul(double, double) and foo");
        assert_eq!(super::render_names(&m, false), "duplicate symbol: _Z3muldd and foo");
        assert_eq!(super::render_names("plain", false), "plain");
    }

    #[test]
    fn vs_locations_as_lld() {
        let m = "undefined symbol: foo\n>>> referenced by undef3.s:15 (/tmp/undef3.s:15)\n>>>               a.o:(.text+0x1)";
        assert_eq!(vs_location(m).as_deref(), Some("/tmp/undef3.s(15)"));
        let m = "undefined hidden symbol: foo\n>>> referenced by undef.s:15\n>>>               a.o:(.text+0x1)";
        assert_eq!(vs_location(m).as_deref(), Some("undef.s(15)"));
        assert_eq!(vs_location("undefined symbol: foo\n>>> referenced by /t/1.o:(.text+0x1)").as_deref(), Some("/t/1.o"));
        assert_eq!(vs_location("undefined symbol: foo\n>>> referenced by undef2.s\n>>>               1.o:(.text+0x1)"), None);
        assert_eq!(vs_location("undefined protected symbol: foo\n>>> referenced by 1.o:(.text+0x1)"), None);
        assert_eq!(vs_location("/t/v.script:1: unclosed quote").as_deref(), Some("/t/v.script(1)"));
        assert_eq!(vs_location("duplicate symbol: bar\n>>> defined at duplicate.s:15\n>>>            1.o:(.text+0x0)").as_deref(), Some("duplicate.s(15)"));
        assert_eq!(vs_location("duplicate symbol: foo\n>>> defined at 1.o:(.text+0x0)\n>>> defined at 2.o:(.text+0x0)"), None);
        assert_eq!(vs_location("cannot open x"), None);
    }
}
