//! The command lines dtld speaks, as lld's flavours: GNU ld / ld.lld (`gnu.rs`), the MinGW
//! driver (`mingw.rs`) and lld-link (`link.rs`; `lib.rs` when it acts as llvm-lib), each a
//! table over the shared option engine (`options.rs`). This module picks the flavour and holds what all three share: response
//! files, numbers, the version line and the recorded command line for `--reproduce`.

pub mod common;
pub mod gnu;
pub mod lib;
pub mod link;
pub mod manpage;
pub mod mingw;
pub mod options;

pub use common::{expand_response_files, parse_num, tokenize_gnu, Action, CoffAction};

/// Which command line a run speaks (lld's flavour selection).
pub enum Flavor {
    Gnu,
    MinGw,
    Link,
}

/// lld's flavour selection: `-flavor <f>` first, then the program's name (`lld-link`), then
/// `-m i386pep` for MinGW. Returns the flavour and how many arguments selected it.
pub fn flavor(program: &str, argv: &[String]) -> (Flavor, usize) {
    if argv.first().map(String::as_str) == Some("-flavor") {
        return match argv.get(1).map(String::as_str) {
            Some("link") => (Flavor::Link, 2),
            _ => (Flavor::Gnu, 2),
        };
    }
    let base = program.rsplit(['/', '\\']).next().unwrap_or(program);
    let base = base.strip_suffix(".exe").unwrap_or(base);
    if base.eq_ignore_ascii_case("lld-link") || base.ends_with("-lld-link") {
        return (Flavor::Link, 0);
    }
    let expanded = expand_response_files(argv).unwrap_or_else(|_| argv.to_vec());
    if mingw::is_pe_target(&expanded) {
        return (Flavor::MinGw, 0);
    }
    (Flavor::Gnu, 0)
}

pub use crate::cmdline::{version_string, CmdArg};
