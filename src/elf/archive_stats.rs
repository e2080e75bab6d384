//! `--print-archive-stats=<file>`: lld's table of how much of each archive a link used.
//!
//! Why it exists: build engineers size their static libraries by it (which archives a program
//! barely uses), and lld writes it, so dtld does too, in lld's format: a header line
//! `members\textracted\tarchive`, then one line per archive as the command line (or a script)
//! named it, in that order: how many members it holds, how many joined the link, its path
//! (not the archives of `--whole-archive`, whose members lld adds as objects; empty archives
//! too, `0 0`, in their place).

use std::fmt::Write as _;
use std::path::Path;

use crate::elf::config::Config;
use crate::elf::symtab::Resolved;
use crate::error::{Error, Result};

/// The table for the link `r`.
fn table(config: &Config, r: &Resolved) -> String {
    let mut out = String::from("members\textracted\tarchive\n");
    let mut empty = config.empty_archives.iter().peekable();
    // The members of one archive occurrence are consecutive inputs of one group.
    let mut current: Option<(&str, u32, usize, usize)> = None;
    let flush = |c: Option<(&str, u32, usize, usize)>, out: &mut String| {
        if let Some((path, _, members, extracted)) = c {
            let _ = writeln!(out, "{members}\t{extracted}\t{path}");
        }
    };
    for (f, input) in r.inputs.iter().enumerate() {
        while let Some((_, path)) = empty.next_if(|(at, _)| *at <= f) {
            flush(current.take(), &mut out);
            let _ = writeln!(out, "0\t0\t{path}");
        }
        // Members of a --whole-archive archive join as plain objects: lld lists no archive for
        // them.
        let Some((archive, _)) = input.archive.as_ref().filter(|_| input.lazy) else {
            flush(current.take(), &mut out);
            continue;
        };
        match &mut current {
            Some((path, group, members, extracted)) if *path == archive.as_str() && *group == input.group => {
                *members += 1;
                *extracted += usize::from(r.loaded[f]);
            }
            _ => {
                flush(current.take(), &mut out);
                current = Some((archive.as_str(), input.group, 1, usize::from(r.loaded[f])));
            }
        }
    }
    flush(current, &mut out);
    for (_, path) in empty {
        let _ = writeln!(out, "0\t0\t{path}");
    }
    out
}

/// Writes the table to `path` (lld's error when it cannot).
pub fn write(config: &Config, r: &Resolved, path: &Path) -> Result<()> {
    crate::outfile::write_atomic(path, table(config, r).as_bytes())
        .map_err(|e| Error::new(format!("--print-archive-stats=: cannot open {}: {}", path.display(), crate::error::io_error(&e))))
}
