//! `man dtld`: the linker's manual page, generated from its option table.
//!
//! Why a module of its own: the page must list exactly the options the linker knows, with the
//! help text and status `--help` prints, so it is rendered from the GNU table of the option
//! engine (`gnu::rows()`, `gnu::z_rows()`) rather than written by hand. The table owns what an
//! option is; this module only turns its rows into man(7) macros, grouped by status (implemented,
//! accepted quietly as in lld, ignored with a warning, refused with an error), so the page says
//! what dtld does with each option the way the engine does it.
//!
//! `dtld --generate=man` prints the page (hidden, first argument only, as the distributors'
//! `--generate=man`); `scripts/install.sh` and `scripts/deb.sh` install it as `dtld.1`, with
//! `ld.dtld.1` linked to it.

use super::gnu;
use super::options::{Arity, RowInfo, Status};

/// One option as the page shows it.
#[derive(Clone, Debug)]
pub struct OptionRow {
    /// Every spelling as a user types it, dashes and value included, the canonical one first:
    /// `-o <path>`, `--output=<path>`.
    pub spellings: Vec<String>,
    /// The value's placeholder as it appears inside `spellings` (`<path>`, `[=<file>]`); empty
    /// for a flag. The page sets it in italics.
    pub metavar: String,
    /// One line of help: the table's text.
    pub help: String,
    pub status: Status,
}

/// A row of the option table as the user types it, spelled as `--help` spells it: `-o <path>`
/// for one-letter names, `--output=<path>` for long ones, `--build-id[=...]` for an optional
/// value.
fn from_table(r: &RowInfo) -> OptionRow {
    let spellings = r
        .spellings
        .iter()
        .map(|s| {
            let short = !s.starts_with("--");
            match (r.arity, short) {
                (Arity::Flag | Arity::Bool, _) => s.clone(),
                (Arity::OptValue, _) => format!("{s}{}", r.meta),
                (Arity::Value, true) => format!("{s} {}", r.meta),
                (Arity::Value, false) => format!("{s}={}", r.meta),
            }
        })
        .collect();
    let metavar = if matches!(r.arity, Arity::Flag | Arity::Bool) { String::new() } else { r.meta.to_string() };
    OptionRow { spellings, metavar, help: r.help.to_string(), status: r.status }
}

/// The rows of the page, in `--help` order: the GNU table's (those with help text, as `--help`
/// lists them), then response files, which the driver expands before the table sees them.
fn rows() -> Vec<OptionRow> {
    let mut rows: Vec<OptionRow> = gnu::rows().iter().filter(|r| !r.help.is_empty()).map(from_table).collect();
    rows.push(OptionRow { spellings: vec!["@<file>".into()], metavar: "<file>".into(), help: "Read options from <file>".into(), status: Status::Implemented });
    rows
}

/// `-z` keywords that take a value, which `gnu::z_rows()` does not list, with what each sets.
const Z_VALUE_KEYWORDS: &[(&str, &str)] = &[
    ("max-page-size=<n>", "the maximum page size (a power of 2)"),
    ("common-page-size=<n>", "the common page size (a power of 2)"),
    ("stack-size=<n>", "the size of the PT_GNU_STACK segment"),
    ("dead-reloc-in-nonalloc=<glob>=<value>", "the value written for relocations to discarded sections in matching non-allocated sections"),
    ("cet-report=<none|warning|error>", "how inputs without IBT and SHSTK properties are reported"),
];

/// If `argv` (without the program name) is exactly `--generate=man` or `--generate man`, the
/// exit status after printing the page (or an error for another kind); `None` otherwise.
pub fn intercept(argv: &[String]) -> Option<i32> {
    let what = match argv {
        [a] => a.strip_prefix("--generate=")?,
        [a, b] if a == "--generate" => b.as_str(),
        _ => return None,
    };
    if what != "man" {
        crate::diag::error_plain(&format!("--generate: unknown kind '{what}' (expected: man)"));
        return Some(1);
    }
    use std::io::Write;
    match std::io::stdout().lock().write_all(page().as_bytes()) {
        Ok(()) => Some(0),
        Err(e) => {
            crate::diag::error_plain(&format!("--generate=man: {e}"));
            Some(1)
        }
    }
}

/// The whole page for this build.
pub fn page() -> String {
    render(&rows(), &lto_rows(), &gnu::z_rows(), env!("CARGO_PKG_VERSION"))
}

/// The LTO options, as `(spelling, metavar, help)`. The GNU driver forwards `--lto-*`,
/// `--thinlto-*` and `--save-temps` unparsed to `lto/options.rs`, which reads them by name and
/// has no table (`--help` shows them as one line), so they are listed here, and a test checks
/// that dtld accepts each. When the option engine carries them, they come from [`rows`] and
/// this list goes.
const LTO_OPTIONS: &[(&str, &str, &str)] = &[
    ("--thinlto-distributor=<path>", "<path>", "Distributed ThinLTO: run this distributor (`dtld-distribute`, `dtld-reapi`, or any DTLTO distributor) with the job file of the backend compilations; a bare name is looked up on `PATH`"),
    ("--thinlto-distributor-arg=<arg>", "<arg>", "An argument for the distributor, before the job file (repeatable)"),
    ("--thinlto-remote-compiler=<path>", "<path>", "The compiler the backend jobs run (clang passes its own path)"),
    ("--thinlto-remote-compiler-prepend-arg=<arg>", "<arg>", "An argument before the compiler in each job, e.g. a wrapper (repeatable)"),
    ("--thinlto-remote-compiler-arg=<arg>", "<arg>", "An extra argument for each backend compilation (repeatable)"),
    ("--lto-llvm-dir=<dir>", "<dir>", "The LLVM installation (`/usr/lib/llvm-22`) whose `llvm-lto2` or `LLVMgold.so` does the thin link; by default the one of the clang that started the link"),
    ("--lto-O<level>", "<level>", "Optimization level of the LTO backends (0 to 3, default 2)"),
    ("--lto-CGO<level>", "<level>", "Code generation optimization level of the LTO backends"),
    ("--thinlto-jobs=<N>", "<N>", "In-process ThinLTO: backend compilations run at once (`all` for every core)"),
    ("--thinlto-cache-dir=<dir>", "<dir>", "In-process ThinLTO: cache the backend objects in <dir>"),
    ("--thinlto-cache-policy=<policy>", "<policy>", "Pruning policy of the ThinLTO cache"),
    ("--thinlto-index-only[=<file>]", "[=<file>]", "Write the index files of the thin link and stop; list the objects in <file>"),
    ("--thinlto-emit-imports-files", "", "Write a .imports file next to each index file"),
    ("--thinlto-emit-index-files", "", "Write the index files and also link"),
    ("--thinlto-prefix-replace=<old>;<new>[;<native>]", "<old>;<new>[;<native>]", "Replace the path prefix <old> with <new> in the names of index and output files"),
    ("--thinlto-object-suffix-replace=<old>;<new>", "<old>;<new>", "Replace the suffix <old> with <new> of the bitcode file names in the index"),
    ("--lto-obj-path=<path>", "<path>", "Keep the native object of the regular LTO partition at <path>"),
    ("--lto-partitions=<N>", "<N>", "Regular LTO code generation partitions: not supported, warns and compiles one (the same code)"),
    ("--lto-sample-profile=<file>", "<file>", "Sample profile for the LTO backends"),
    ("--lto-cs-profile-generate", "", "Context-sensitive PGO instrumentation in the LTO backends (not with DTLTO, whose backend command line is lld's)"),
    ("--lto-cs-profile-file=<file>", "<file>", "Context-sensitive PGO profile for the LTO backends"),
    ("--lto-aa-pipeline=<pipeline>", "<pipeline>", "Alias analysis pipeline of the LTO backends"),
    ("--lto-newpm-passes=<pipeline>", "<pipeline>", "Optimization pipeline of the LTO backends"),
    ("--opt-remarks-filename <file>", "<file>", "Write the LTO optimization remarks to <file> (and `<file>.thin.<task>.<format>`)"),
    ("--opt-remarks-passes <regex>", "<regex>", "Only remarks of passes matching <regex>"),
    ("--opt-remarks-format <format>", "<format>", "Format of the remarks file (default YAML)"),
    ("--opt-remarks-hotness-threshold=<N>", "<N>", "Minimum profile count of a remark (`auto`: from the profile summary)"),
    ("--opt-remarks-with-hotness", "", "Include hotness in the remarks"),
    ("--lto-basic-block-sections=<all|none|file>", "<all|none|file>", "Basic-block sections in the LTO backends"),
    ("--lto-basic-block-address-map", "", "Emit the basic-block address map (`.llvm_bb_addr_map`)"),
    ("--lto-unique-basic-block-section-names", "", "Unique names for basic-block sections"),
    ("--lto-whole-program-visibility", "", "Assume whole-program visibility for devirtualization"),
    ("--lto-debug-pass-manager", "", "Print the LTO pass manager's debugging information"),
    ("--save-temps", "", "Keep the intermediate LTO files"),
];

fn lto_rows() -> Vec<OptionRow> {
    LTO_OPTIONS
        .iter()
        .map(|(s, m, h)| OptionRow { spellings: vec![s.to_string()], metavar: m.to_string(), help: h.to_string(), status: Status::Implemented })
        .collect()
}

/// The page for the option table's `rows`, the `lto` options and the `-z` keywords `z`, in
/// man(7) macros.
pub fn render(rows: &[OptionRow], lto: &[OptionRow], z: &[(&str, Status)], version: &str) -> String {
    let mut p = String::new();
    p.push_str(&format!(".TH DTLD 1 \"\" \"dtld {}\" \"User Commands\"\n", esc(version)));
    // No hyphenation: option and keyword names must stay whole to be searched and copied.
    p.push_str(".nh\n");
    section(&mut p, "NAME");
    p.push_str("dtld, ld.dtld \\- an x86\\-64 ELF and COFF linker with integrated distributed ThinLTO\n");

    section(&mut p, "SYNOPSIS");
    p.push_str(".B dtld\n[\\fIoptions\\fR] \\fIfile\\fR...\n.br\n");
    p.push_str(".B clang \\-fuse\\-ld=dtld\n[\\fIoptions\\fR] \\fIfile\\fR...\n.br\n");
    p.push_str(".B gcc \\-B\n\\fIprefix\\fR\\fB/libexec/dtld\\fR [\\fIoptions\\fR] \\fIfile\\fR...\n");

    section(&mut p, "DESCRIPTION");
    for (i, para) in DESCRIPTION.iter().enumerate() {
        if i > 0 {
            p.push_str(".PP\n");
        }
        p.push_str(&inline(para));
        p.push('\n');
    }

    option_group(&mut p, "OPTIONS", None, rows, Status::Implemented);
    option_group(&mut p, "LTO OPTIONS", Some(LTO_INTRO), lto, Status::Implemented);
    z_keywords(&mut p, z);
    option_group(&mut p, "COMPATIBILITY OPTIONS", Some(NOOP_INTRO), rows, Status::Noop);
    option_group(&mut p, "IGNORED OPTIONS", Some(IGNORED_INTRO), rows, Status::Ignored);
    option_group(&mut p, "UNSUPPORTED OPTIONS", Some(UNSUPPORTED_INTRO), rows, Status::Unsupported);

    section(&mut p, "ENVIRONMENT");
    for (name, what) in ENVIRONMENT {
        p.push_str(&format!(".TP\n.B {name}\n{}\n", text_line(what)));
    }
    section(&mut p, "EXIT STATUS");
    p.push_str("0 when the output was written; 1 on any error, after which no output and no temporary file is left behind.\n");
    section(&mut p, "SEE ALSO");
    p.push_str(".BR dtld\\-distribute (1),\n.BR dtld\\-reapi (1),\n.BR ld.lld (1),\n.BR ld (1),\n.BR clang (1),\n.BR gcc (1)\n");
    p
}

const LTO_INTRO: &str = "ThinLTO with `-flto=thin`, and distributed ThinLTO with clang's `-fthinlto-distributor=`, which passes `--thinlto-distributor=` and `--thinlto-remote-compiler=` to the linker.";
const NOOP_INTRO: &str = "Accepted quietly so that GNU ld command lines keep working; they have no effect, as in lld.";
const IGNORED_INTRO: &str =
    "Recognised but not implemented. The output means the same without them, so dtld warns `<option> is not supported; ignored` and links.";
const UNSUPPORTED_INTRO: &str = "Recognised but not implemented, and ignoring them would change what the output means: the link stops with `error: <option> is not supported` and writes nothing.";

/// A section listing the rows of one status, or nothing when there are none.
fn option_group(p: &mut String, heading: &str, intro: Option<&str>, rows: &[OptionRow], status: Status) {
    let group: Vec<&OptionRow> = rows.iter().filter(|r| r.status == status).collect();
    if group.is_empty() {
        return;
    }
    section(p, heading);
    if let Some(t) = intro {
        p.push_str(&text_line(t));
        p.push('\n');
    }
    for row in group {
        p.push_str(".TP\n");
        let spelled: Vec<String> = row.spellings.iter().map(|s| spelling(s, &row.metavar)).collect();
        p.push_str(&spelled.join(", "));
        p.push('\n');
        p.push_str(&text_line(&row.help));
        p.push('\n');
    }
}

/// `-z` keywords: those with a value, then the table's, grouped by status as the options are.
fn z_keywords(p: &mut String, z: &[(&str, Status)]) {
    section(p, "\\-z KEYWORDS");
    p.push_str(&text_line("`-z keyword` (also `-zkeyword`) as in GNU ld and lld. An unknown keyword is a warning, as in lld."));
    p.push('\n');
    for (kw, what) in Z_VALUE_KEYWORDS {
        p.push_str(&format!(".TP\n{}\n{}\n", spelling(&format!("-z {kw}"), &kw[kw.find('=').map_or(0, |i| i + 1)..]), text_line(&format!("Set {what}."))));
    }
    let groups = [
        (Status::Implemented, "Implemented:"),
        (Status::Noop, "Accepted quietly (no effect on x86-64, as in lld):"),
        (Status::Ignored, "Not implemented; a warning (the output means the same):"),
        (Status::Unsupported, "Not implemented; an error:"),
    ];
    for (status, label) in groups {
        let names: Vec<String> = z.iter().filter(|(_, s)| *s == status).map(|(k, _)| format!("\\fB{}\\fR", esc_dashes(k))).collect();
        if !names.is_empty() {
            p.push_str(&format!(".TP\n{}\n{}\n", text_line(label), names.join(", ")));
        }
    }
}

const DESCRIPTION: &[&str] = &[
    "dtld is a drop-in replacement for `ld.lld`: it accepts the GNU ld and ld.lld command line, prints the same diagnostics, and links x86-64 ELF executables, shared libraries and relocatable objects from objects, archives, thin archives, shared libraries, linker scripts and LLVM bitcode. Invoked as `lld-link` (or with `-flavor link`) it takes lld-link's command line, and with `-m i386pep` the MinGW one; both link Windows (COFF/PE) programs and DLLs; `lld-link /lib ...` makes libraries as llvm-lib does.",
    "With clang, `-fuse-ld=dtld` runs `ld.dtld`, which clang looks for in the `-B` directories, in its own directory (`/usr/lib/llvm-22/bin` for Debian's clang-22) and on `PATH`; `--ld-path=prefix/bin/ld.dtld` names it directly. With gcc, `-B prefix/libexec/dtld` makes gcc run the `ld` there, a link to dtld. `--version` prints a line that contains \"compatible with GNU linkers\", by which configure scripts, CMake and Meson recognise a GNU-compatible linker.",
    "ThinLTO (`-flto=thin`) runs the thin link and the backends inside dtld's process, through its thin-link library (`libdtld-lto-22.so`, installed next to dtld or in `lib/dtld/`) built against the LLVM that produced the bitcode; when that library does not match the bitcode's LLVM, dtld runs the thin link with that LLVM's `llvm-lto2` or `LLVMgold.so`. Bitcode named on dtld's own command line, without clang or DTLD_LLVM_DIR to say which LLVM, is linked with the library's LLVM. Distributed ThinLTO (`-fthinlto-distributor=dtld-distribute`, or `dtld-reapi` for a Remote Execution API farm) writes the backend compilations to a job file in ld.lld's schema, runs the distributor, checks every returned object and links them.",
];

const ENVIRONMENT: &[(&str, &str)] = &[
    ("DTLD_LLVM_DIR", "The LLVM installation (e.g. /usr/lib/llvm-22) whose `llvm-lto2` or `LLVMgold.so` does the thin link, as `--lto-llvm-dir=`. Without it dtld uses the LLVM of the clang that started the link."),
    ("DTLD_THIN_LINK", "`llvm-lto2` (or `gold`, `helper`: LLVMgold.so in a child process) runs the thin link out of process, even when dtld's thin-link library could run it in process; for comparing the two."),
    ("DTLD_LTO_SHIM", "The thin-link library to load instead of the one next to dtld (empty: none, every thin link out of process)."),
    ("DTLD_NO_FORK", "`1` (or `true`, `yes`) keeps the link in one process: by default dtld forks and the parent exits as soon as the output is complete, leaving the unmapping of inputs to the child (as mold does; `--no-fork` says the same). For debuggers and profilers."),
    ("LLD_REPRODUCE", "As `--reproduce=`: write a tar of the inputs and the command line."),
    ("PATH", "Where a distributor given by a bare name (`-fthinlto-distributor=dtld-distribute`) is found."),
    ("LINK, _LINK_", "Extra options for the lld-link flavour, as link.exe reads them."),
];

/// `.SH NAME`.
fn section(p: &mut String, name: &str) {
    p.push_str(".SH ");
    p.push_str(name);
    p.push('\n');
}

/// A spelling in bold with its metavariable in italics: `\fB\-o\fR \fI<path>\fR`.
fn spelling(s: &str, metavar: &str) -> String {
    match (!metavar.is_empty()).then(|| s.find(metavar)).flatten() {
        Some(at) => {
            let (flag, rest) = s.split_at(at);
            let (meta, tail) = rest.split_at(metavar.len());
            let (flag, joiner) = match flag.strip_suffix(['=', ' ']) {
                Some(f) => (f, &flag[f.len()..]),
                None => (flag, ""),
            };
            format!("\\fB{}\\fR{}\\fI{}\\fR{}", esc_dashes(flag), esc(joiner), esc_dashes(meta), esc_dashes(tail))
        }
        None => format!("\\fB{}\\fR", esc_dashes(s)),
    }
}

/// A line of running text: `code` in bold, and safe at the start of a line.
fn text_line(s: &str) -> String {
    let t = inline(s);
    if t.starts_with(['.', '\'']) {
        format!("\\&{t}")
    } else {
        t
    }
}

/// Running text where `back-quoted` spans are set in bold.
fn inline(s: &str) -> String {
    let mut out = String::new();
    for (i, part) in s.split('`').enumerate() {
        if i % 2 == 1 {
            out.push_str(&format!("\\fB{}\\fR", esc_dashes(part)));
        } else {
            out.push_str(&esc(part));
        }
    }
    out
}

/// Escapes troff's escape character.
fn esc(s: &str) -> String {
    s.replace('\\', "\\e")
}

/// As `esc`, and hyphens as `\-`, so options stay minus signs that can be searched and copied.
fn esc_dashes(s: &str) -> String {
    esc(s).replace('-', "\\-")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(spellings: &[&str], metavar: &str, help: &str, status: Status) -> OptionRow {
        OptionRow { spellings: spellings.iter().map(|s| s.to_string()).collect(), metavar: metavar.into(), help: help.into(), status }
    }

    #[test]
    fn spellings_are_bold_with_italic_values() {
        assert_eq!(spelling("-o <path>", "<path>"), "\\fB\\-o\\fR \\fI<path>\\fR");
        assert_eq!(spelling("--output=<path>", "<path>"), "\\fB\\-\\-output\\fR=\\fI<path>\\fR");
        assert_eq!(spelling("--time-trace[=<file>]", "[=<file>]"), "\\fB\\-\\-time\\-trace\\fR\\fI[=<file>]\\fR");
        assert_eq!(spelling("--static", ""), "\\fB\\-\\-static\\fR");
    }

    #[test]
    fn groups_by_status_and_escapes() {
        let rows = [
            row(&["-o <path>"], "<path>", "Path to the output file", Status::Implemented),
            row(&["-g"], "", "Ignored (as in lld)", Status::Noop),
            row(&["--cref"], "", "Output a cross reference table", Status::Ignored),
            row(&["--emit-relocs", "-q"], "", ".starts with a dot \\ and a backslash", Status::Unsupported),
        ];
        let z = [("now", Status::Implemented), ("rela", Status::Noop), ("retpolineplt", Status::Unsupported)];
        let page = render(&rows, &[], &z, "9.9.9");
        assert!(page.starts_with(".TH DTLD 1 \"\" \"dtld 9.9.9\""));
        let at = |s: &str| page.find(s).unwrap_or_else(|| panic!("{s} missing in:\n{page}"));
        assert!(at(".SH OPTIONS") < at("Path to the output file"));
        assert!(at("Path to the output file") < at(".SH \\-z KEYWORDS"));
        assert!(at(".SH \\-z KEYWORDS") < at("\\fB\\-z max\\-page\\-size\\fR=\\fI<n>\\fR"));
        assert!(at("Implemented:\n\\fBnow\\fR") < at(".SH COMPATIBILITY OPTIONS"));
        assert!(at(".SH COMPATIBILITY OPTIONS") < at("\\fB\\-g\\fR"));
        assert!(at(".SH IGNORED OPTIONS") < at("\\fB\\-\\-cref\\fR"));
        assert!(at(".SH UNSUPPORTED OPTIONS") < at("\\&.starts with a dot \\e and a backslash"));
        assert!(at("\\fB\\-g\\fR") < at(".SH IGNORED OPTIONS"));
        assert!(!page.contains("Not implemented; a warning"), "an empty -z group is left out");
    }

    /// The real table: every option `--help` lists is on the page, spelled as `--help` spells
    /// it, in the section of its status.
    #[test]
    fn page_lists_every_option_of_the_table_in_its_section() {
        let page = page();
        let help = gnu::help_text();
        let rows = rows();
        assert!(rows.len() > 100, "{} rows", rows.len());
        let heading = |st: Status| match st {
            Status::Implemented => ".SH OPTIONS",
            Status::Noop => ".SH COMPATIBILITY OPTIONS",
            Status::Ignored => ".SH IGNORED OPTIONS",
            Status::Unsupported => ".SH UNSUPPORTED OPTIONS",
        };
        for r in &rows {
            let listed = r.spellings.join(", ");
            assert!(help.contains(&format!("  {listed}")), "--help does not spell it as {listed}");
            let entry = format!(".TP\n{}\n", r.spellings.iter().map(|s| spelling(s, &r.metavar)).collect::<Vec<_>>().join(", "));
            let at = page.find(&entry).unwrap_or_else(|| panic!("{listed} missing"));
            let section = page[..at].rfind(".SH ").unwrap();
            assert!(page[section..].starts_with(heading(r.status)), "{listed} is not under {}", heading(r.status));
        }
        // No GNU option is refused outright any more (-Ttext-segment is refused by its handler, in
        // ld.lld's words), so an Unsupported row is checked only when there is one.
        for st in [Status::Implemented, Status::Noop, Status::Ignored] {
            assert!(rows.iter().any(|r| r.status == st), "no {st:?} row: the section test checks nothing");
        }
        assert!(page.contains("\\fB\\-\\-thinlto\\-distributor\\fR"), "DTLTO options must be on the page");
        for (k, _) in gnu::z_rows() {
            assert!(page.contains(&format!("\\fB{}\\fR", esc_dashes(k))), "-z {k} missing");
        }
    }

    /// The `-z` keywords with a value that the page lists are ones dtld reads without a warning.
    #[test]
    fn z_value_keywords_are_accepted() {
        for (kw, _) in Z_VALUE_KEYWORDS {
            let key = &kw[..kw.find('=').unwrap()];
            let value = match key {
                "dead-reloc-in-nonalloc" => ".debug_*=0",
                "cet-report" => "warning",
                _ => "4096",
            };
            let args: Vec<String> = ["--fatal-warnings", "-z", &format!("{key}={value}"), "a.o"].iter().map(|s| s.to_string()).collect();
            match gnu::parse(&args) {
                Ok(crate::driver::Action::Link(c)) => assert_eq!(c.diag.error_count(), 0, "-z {key}={value} warned"),
                Ok(_) => panic!("-z {key}={value}: not a link"),
                Err(e) => panic!("-z {key}={value}: {e}"),
            }
        }
    }

    /// No spelling is listed twice (the table once had a stale second `--no-undefined-version`).
    #[test]
    fn no_spelling_twice() {
        let mut seen = std::collections::HashSet::new();
        for r in rows().iter().chain(lto_rows().iter()) {
            for s in &r.spellings {
                assert!(seen.insert(s.clone()), "{s} is listed twice");
            }
        }
    }

    /// Every LTO option on the page is one dtld accepts, with a value of the documented shape.
    #[test]
    fn lto_options_are_accepted() {
        for r in lto_rows() {
            let example = match r.metavar.as_str() {
                "" => String::new(),
                "<level>" => "3".into(),
                "<N>" => "2".into(),
                "[=<file>]" => "=list.txt".into(),
                // The third part needs --thinlto-index-only (lld checks it with the command line).
                "<old>;<new>[;<native>]" => "a/;b/".into(),
                "<old>;<new>" => ".o;.bc".into(),
                "<pipeline>" => "default<O2>".into(),
                "<all|none|file>" => "all".into(),
                // Checked with the command line now, as lld does.
                "<policy>" => "prune_after=1h".into(),
                m => {
                    assert!(m.starts_with('<') && m.ends_with('>'), "{m}");
                    "value".into()
                }
            };
            // A separate value (`--opt-remarks-filename <file>`) reaches lto/options.rs joined.
            let arg = r.spellings[0].replace(&format!(" {}", r.metavar), &format!("={example}")).replace(&r.metavar, &example);
            let parsed = crate::lto::options::LtoOptions::from_args(None, std::slice::from_ref(&arg), &[], &[]);
            assert!(parsed.is_ok(), "{arg}: {}", parsed.err().map(|e| e.to_string()).unwrap_or_default());
        }
    }
}
