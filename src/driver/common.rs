//! What the flavours' command-line parsers share, below all of them: what a command line asks
//! for (`Action`), LLVM's number syntax, response-file expansion, GNU tokenizing and lld-link's
//! `/opt:lldlto*=` values (MinGW passes its LTO levels on as those). It sits below
//! `driver/mod.rs`, which dispatches to the flavours, so that a flavour (MinGW) reaching
//! these does not import the dispatcher.

use std::path::PathBuf;

use crate::error::Result;

/// What a command line asks for: a link with the flavour's configuration, or to print.
pub enum Action<C> {
    Link(C),
    /// `--version` (`/version`), or `-v` without inputs: print the version and stop.
    Version,
    Help,
}

/// What a PE command line asks for, in either flavour (`mingw::parse`, `link::parse`).
pub type CoffAction = Action<crate::coff::config::CoffConfig>;

/// Decimal, `0x` hex or `0` octal, as LLVM's `getAsInteger(0, ...)` reads numbers (the GNU,
/// MinGW and lld-link command lines alike).
pub fn parse_num(s: &str) -> Option<u64> {
    if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        u64::from_str_radix(h, 16).ok()
    } else if s.len() > 1 && s.starts_with('0') {
        u64::from_str_radix(&s[1..], 8).ok()
    } else {
        s.parse().ok()
    }
}

/// Expands `@file` arguments (recursively), as clang and GNU ld do. A missing file leaves the
/// argument as it is (it then fails as an input file named `@file`, like lld).
pub fn expand_response_files(argv: &[String]) -> Result<Vec<String>> {
    let mut out = Vec::with_capacity(argv.len());
    let mut active: Vec<PathBuf> = Vec::new();
    let mut budget = RSP_BUDGET;
    expand_into(argv, &mut out, &mut active, &mut budget)?;
    Ok(out)
}

/// How many bytes of response files one command line may read in all, nested and repeated
/// ones counted each time: real links (Chromium's) stay below 16 MiB, and the expanded words
/// take a few times the text, so the link's memory stays well under 1 GiB.
const RSP_BUDGET: u64 = 64 << 20;

/// How many words a command line may expand to (each costs a `String`): real links name
/// tens of thousands of files.
const MAX_ARGS: usize = 4 << 20;

fn expand_into(args: &[String], out: &mut Vec<String>, active: &mut Vec<PathBuf>, budget: &mut u64) -> Result<()> {
    for a in args {
        let Some(name) = a.strip_prefix('@') else {
            out.push(a.clone());
            continue;
        };
        let Ok(file) = std::fs::File::open(name) else {
            out.push(a.clone());
            continue;
        };
        let abs = std::fs::canonicalize(name).unwrap_or_else(|_| PathBuf::from(name));
        if active.contains(&abs) || active.len() > 64 {
            crate::bail!("recursive expansion of: '{}'", abs.display());
        }
        // Read no more than what is left of the budget (the file may be a pipe or growing).
        let mut bytes = Vec::new();
        use std::io::Read;
        let read = file.take(*budget + 1).read_to_end(&mut bytes);
        if read.is_err() {
            out.push(a.clone());
            continue;
        }
        if bytes.len() as u64 > *budget {
            crate::bail!("response file {name}: the response files of this command line are larger than {} MiB in all", RSP_BUDGET >> 20);
        }
        *budget -= bytes.len() as u64;
        let text = String::from_utf8_lossy(&bytes);
        let words = tokenize_gnu(&text);
        drop(bytes);
        if out.len() + words.len() > MAX_ARGS {
            crate::bail!("response file {name}: the command line expands to more than {MAX_ARGS} arguments");
        }
        active.push(abs);
        expand_into(&words, out, active, budget)?;
        active.pop();
    }
    Ok(())
}

/// Splits response-file text by the GNU rules (LLVM's `TokenizeGNUCommandLine`): whitespace
/// separates words; `'...'` quotes literally; `"..."` quotes with backslash escapes; a backslash
/// outside quotes escapes the next character. Quotes may join parts of one word (`a"b c"d`).
pub fn tokenize_gnu(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut chars = s.chars().peekable();
    while let Some(ch) = chars.next() {
        match ch {
            c if c.is_whitespace() => {
                if in_word {
                    out.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            '\\' => {
                in_word = true;
                if let Some(n) = chars.next() {
                    cur.push(n);
                }
            }
            '\'' => {
                in_word = true;
                for n in chars.by_ref() {
                    if n == '\'' {
                        break;
                    }
                    cur.push(n);
                }
            }
            '"' => {
                in_word = true;
                while let Some(n) = chars.next() {
                    match n {
                        '"' => break,
                        '\\' => {
                            if let Some(m) = chars.next() {
                                cur.push(m);
                            }
                        }
                        _ => cur.push(n),
                    }
                }
            }
            c => {
                in_word = true;
                cur.push(c);
            }
        }
    }
    if in_word {
        out.push(cur);
    }
    out
}

/// lld-link's `/opt:lldlto=`, `/opt:lldltocgo=` and `/opt:lldltojobs=` (`name` without the
/// `=`): the value checked in lld-link's words, then given to the link's LTO options as
/// `shown`. The MinGW driver passes its `--lto-O`, `--lto-CGO` and `--thinlto-jobs=` here too.
pub(crate) fn opt_lto(lto: &mut crate::coff::config::CoffLto, name: &str, value: &str, shown: &str) -> std::result::Result<(), String> {
    let level = value.parse::<u32>().ok().filter(|&n| n <= 3);
    match name {
        "lldlto" => match level {
            Some(n) => lto.set(&format!("lto-O{n}"), None, shown),
            None => return Err(format!("/opt:lldlto: invalid optimization level: {value}")),
        },
        "lldltocgo" => match level {
            Some(n) => lto.set(&format!("lto-CGO{n}"), None, shown),
            None => return Err(format!("/opt:lldltocgo: invalid codegen optimization level: {value}")),
        },
        // LLVM's `get_threadpool_strategy`: `all` or a decimal count.
        _ if value != "all" && value.parse::<u32>().is_err() => return Err(format!("/opt:lldltojobs: invalid job count: {value}")),
        _ => lto.set("thinlto-jobs", Some(value), shown),
    }
    Ok(())
}
