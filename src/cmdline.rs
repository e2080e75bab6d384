//! The command line as the link records it and reports it: each argument as the parser saw it
//! (`CmdArg`, for `--reproduce`'s response file and the `-r` output), and the `--version` line.
//!
//! Why it is a module of its own: the three command-line parsers (`driver/`) fill these and
//! both formats' configurations and reproducers (`elf/`, `coff/`) read them; kept here, below
//! all of them, the formats do not import the driver.

/// The line `--version` prints. Configure scripts and compiler drivers grep for
/// "compatible with GNU linkers", so that phrase must stay.
pub fn version_string() -> String {
    format!("dtld {} (compatible with GNU linkers)", env!("CARGO_PKG_VERSION"))
}

/// One argument of the command line as the parser saw it (after `@file` expansion).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CmdArg {
    /// A positional input file.
    Input(String),
    /// An option: its canonical name in dtld's table, how it was spelled (dashes and name,
    /// without any `=value`), its value, and whether the value must be joined with `=`.
    Opt { canon: &'static str, spelling: String, value: Option<String>, joined: bool },
    /// An argument kept as written (LTO options).
    Raw(String),
}

impl CmdArg {
    pub fn option(canon: &'static str, spelling: &str, value: Option<&str>, joined: bool) -> CmdArg {
        CmdArg::Opt { canon, spelling: spelling.to_string(), value: value.map(str::to_string), joined }
    }
}
