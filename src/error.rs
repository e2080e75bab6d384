//! Errors as lld prints them.
//!
//! Every failure that reaches the user is one or more lines `dtld: error: <msg>`, worded as ld.lld
//! words them, so build logs, IDEs and scripts that already parse lld's messages work unchanged.
//! An `Error` carries several messages because a link reports all undefined symbols at once.

use std::fmt;

/// The first character of a message `Error::context` leaves without a file name (and drops).
pub const NO_CONTEXT: char = '\u{1}';

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    pub messages: Vec<String>,
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    pub fn new(msg: impl Into<String>) -> Self {
        Error { messages: vec![msg.into()] }
    }
    pub fn many(messages: Vec<String>) -> Self {
        Error { messages }
    }
    /// Prefixes every message with `context: `, as lld does with file names.
    pub fn context(mut self, ctx: impl fmt::Display) -> Self {
        let ctx = ctx.to_string();
        for m in &mut self.messages {
            // A message marked as the link's own (NO_CONTEXT first) names no file (lld's).
            if let Some(rest) = m.strip_prefix(NO_CONTEXT) {
                *m = rest.to_string();
                continue;
            }
            // A message that already starts with the name (`file:(.text): ...`, `file is
            // incompatible ...`) keeps it once; one that names a part of the file (`:(.text):
            // ...`) continues its name, as lld's `file:(section): message`.
            let named = m.strip_prefix(ctx.as_str()).is_some_and(|rest| rest.starts_with(':') || rest.starts_with(' '));
            if named {
                continue;
            }
            *m = if m.starts_with(":(") { format!("{ctx}{m}") } else { format!("{ctx}: {m}") };
        }
        self
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.messages.join("\n"))
    }
}

impl From<object::Error> for Error {
    fn from(e: object::Error) -> Self {
        Error::new(e.to_string())
    }
}

/// `bail!("fmt", args)` returns an `Err(Error)` from the enclosing function.
#[macro_export]
macro_rules! bail {
    ($($t:tt)*) => { return Err($crate::error::Error::new(format!($($t)*))) };
}

/// Formats an I/O error the way lld does (the OS message without Rust's "(os error N)").
pub fn io_error(e: &std::io::Error) -> String {
    let s = e.to_string();
    match s.find(" (os error") {
        Some(p) => s[..p].to_string(),
        None => s,
    }
}
