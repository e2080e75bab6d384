//! GNU linker scripts of the kind used as input files (glibc's libc.so): GROUP, INPUT, AS_NEEDED.
//!
//! Any input file that is not ELF, an archive or bitcode is read as a linker script, as GNU ld and
//! lld do. This module tokenizes and parses the commands such scripts use (`GROUP`, `INPUT`,
//! `AS_NEEDED`, `OUTPUT_FORMAT`, `OUTPUT_ARCH`, `TARGET`, `SEARCH_DIR`, `ENTRY`, `EXTERN`,
//! `OUTPUT`) into a list of commands; `input::load` then finds the files they name, in order.
//! Layout commands (`SECTIONS`, `MEMORY`, ...) are rejected with a clear message. Errors say
//! `file:line: message` with lld's `>>>` excerpt, as lld words them; random binary data is just
//! an unknown directive, never a panic.

use crate::error::{Error, Result};

pub mod ast;
pub mod eval;
pub mod insert;
pub mod parse;
pub mod place;
pub mod plan;
pub(crate) mod segments;
pub mod select;
pub(crate) use ast::format_error;
pub use ast::Loc;
pub mod toplevel;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// A file named in `INPUT(...)` or `GROUP(...)`: a path, `-lfoo`, or `=path` (sysroot).
    Input { name: String, as_needed: bool, loc: Loc },
    /// The start (true) and end (false) of a `GROUP(...)`'s files: one group for
    /// `--warn-backrefs`, like `--start-group`/`--end-group`.
    Group(bool),
    /// `SEARCH_DIR(dir)`: a library directory, searched after the `-L` ones.
    SearchDir(String),
    /// `ENTRY(sym)`: the entry point unless `-e` gave one.
    Entry(String),
    /// `EXTERN(sym ...)`: like `-u`.
    Extern(Vec<String>),
    /// `TARGET(binary)` (true) or `TARGET(elf...)` (false): as `--format` for the files after it.
    Target(bool),
    /// `OUTPUT(file)`: the output file unless `-o` gave one.
    Output(String),
    /// `VERSION { ... }`: a version script inside a linker script (the text between braces).
    Version(String),
    /// `INCLUDE file`: the file that was read (its commands follow), for `--reproduce`.
    Include(String),
    /// A layout command (`SECTIONS`, `MEMORY`, `PHDRS`, an assignment, ...), parsed by
    /// `script::parse`.
    Layout(ast::LayoutCmd),
}

#[derive(Debug, Clone)]
pub struct Script {
    /// The script's name as lld prints it (the path as given).
    pub name: String,
    pub commands: Vec<Command>,
}

impl Script {
    /// `name:line: msg` plus the `>>>` excerpt pointing at `loc`, as lld prints script errors.
    pub fn error_at(&self, loc: &Loc, msg: &str) -> String {
        format_error(&self.name, Some(loc), loc.line, msg)
    }
}

#[derive(Debug, Clone)]
struct Token {
    text: String,
    quoted: bool,
    line: usize,
    col: usize,
    line_start: usize,
    /// Byte offset of the token in the text.
    pos: usize,
}

impl Token {
    fn is(&self, s: &str) -> bool {
        !self.quoted && self.text == s
    }
}

fn is_special(c: char) -> bool {
    matches!(c, '(' | ')' | ',' | ';' | '{' | '}')
}

/// Splits `text` into tokens. A lexical error (unclosed comment or quote) is returned with the
/// tokens before it: lld lexes on demand, so commands before the error still take effect.
fn tokenize(name: &str, text: &str) -> (Vec<Token>, Option<Error>) {
    let mut toks = Vec::new();
    let b: Vec<(usize, char)> = text.char_indices().collect();
    let mut i = 0;
    let mut line = 1;
    let mut line_start = 0; // byte offset of the current line
    let mut line_start_char = 0; // char index of the current line
    let n = b.len();
    while i < n {
        let c = b[i].1;
        if c == '\n' {
            line += 1;
            i += 1;
            line_start = if i < n { b[i].0 } else { text.len() };
            line_start_char = i;
            continue;
        }
        if c.is_whitespace() {
            i += 1;
            continue;
        }
        if c == '/' && i + 1 < n && b[i + 1].1 == '*' {
            let start_line = line;
            i += 2;
            loop {
                if i >= n {
                    let e = Error::new(format!("{name}:{start_line}: unclosed comment in a linker script"));
                    return (toks, Some(e));
                }
                if b[i].1 == '*' && i + 1 < n && b[i + 1].1 == '/' {
                    i += 2;
                    break;
                }
                if b[i].1 == '\n' {
                    line += 1;
                    line_start = if i + 1 < n { b[i + 1].0 } else { text.len() };
                    line_start_char = i + 1;
                }
                i += 1;
            }
            continue;
        }
        if c == '#' {
            while i < n && b[i].1 != '\n' {
                i += 1;
            }
            continue;
        }
        let col = i - line_start_char;
        if c == '"' {
            let start = i + 1;
            let mut j = start;
            while j < n && b[j].1 != '"' {
                j += 1;
            }
            if j >= n {
                return (toks, Some(Error::new(format!("{name}:{line}: unclosed quote"))));
            }
            let s: String = b[start..j].iter().map(|x| x.1).collect();
            toks.push(Token { text: s, quoted: true, line, col, line_start, pos: b[i].0 });
            // A quoted name may span lines.
            for k in start..j {
                if b[k].1 == '\n' {
                    line += 1;
                    line_start = b[k + 1].0;
                    line_start_char = k + 1;
                }
            }
            i = j + 1;
            continue;
        }
        if is_special(c) {
            toks.push(Token { text: c.to_string(), quoted: false, line, col, line_start, pos: b[i].0 });
            i += 1;
            continue;
        }
        let start = i;
        while i < n {
            let d = b[i].1;
            if d.is_whitespace() || is_special(d) || d == '"' || (d == '/' && i + 1 < n && b[i + 1].1 == '*') {
                break;
            }
            i += 1;
        }
        let s: String = b[start..i].iter().map(|x| x.1).collect();
        toks.push(Token { text: s, quoted: false, line, col, line_start, pos: b[start].0 });
    }
    (toks, None)
}

struct Parser<'t> {
    name: &'t str,
    src: &'t str,
    toks: Vec<Token>,
    pos: usize,
    /// Where `INCLUDE` looks besides the current directory (the `-L` directories).
    include_dirs: &'t [std::path::PathBuf],
    depth: usize,
}

/// The BFD names lld's `OUTPUT_FORMAT` knows (its `parseBfdName`), with `-freebsd` or not.
fn known_bfd_name(name: &str) -> bool {
    const NAMES: &[&str] = &[
        "binary",
        "elf32-i386",
        "elf32-avr",
        "elf32-iamcu",
        "elf32-littlearm",
        "elf32-bigarm",
        "elf32-x86-64",
        "elf64-aarch64",
        "elf64-littleaarch64",
        "elf64-bigaarch64",
        "elf32-powerpc",
        "elf32-powerpcle",
        "elf64-powerpc",
        "elf64-powerpcle",
        "elf64-x86-64",
        "elf32-tradbigmips",
        "elf32-bigmips",
        "elf32-ntradbigmips",
        "elf32-tradlittlemips",
        "elf32-ntradlittlemips",
        "elf64-tradbigmips",
        "elf64-tradlittlemips",
        "elf32-littleriscv",
        "elf64-littleriscv",
        "elf64-sparc",
        "elf32-msp430",
        "elf32-loongarch",
        "elf64-loongarch",
        "elf64-s390",
        "elf32-hexagon",
        "elf32-littlehexagon",
    ];
    NAMES.contains(&name.strip_suffix("-freebsd").unwrap_or(name))
}

/// Layout commands, parsed by `script::parse`.
const LAYOUT: &[&str] = &[
    "SECTIONS",
    "MEMORY",
    "PHDRS",
    "PROVIDE",
    "PROVIDE_HIDDEN",
    "HIDDEN",
    "ASSERT",
    "REGION_ALIAS",
    "INSERT",
    "NOCROSSREFS",
    "NOCROSSREFS_TO",
    "OVERWRITE_SECTIONS",
];

impl<'t> Parser<'t> {
    fn loc(&self, t: &Token) -> Loc {
        let rest = &self.src[t.line_start.min(self.src.len())..];
        let line_text = rest.split('\n').next().unwrap_or("").trim_end_matches('\r').to_string();
        Loc { line: t.line, col: t.col, line_text }
    }

    fn err_at(&self, t: &Token, msg: &str) -> Error {
        Error::new(format_error(self.name, Some(&self.loc(t)), t.line, msg))
    }

    fn eof(&self) -> Error {
        let line = self.toks.last().map(|t| t.line).unwrap_or(1);
        Error::new(format_error(self.name, None, line, "unexpected EOF"))
    }

    fn next(&mut self) -> Result<Token> {
        match self.toks.get(self.pos) {
            Some(t) => {
                self.pos += 1;
                Ok(t.clone())
            }
            None => Err(self.eof()),
        }
    }

    fn expect(&mut self, s: &str) -> Result<()> {
        let t = self.next()?;
        if !t.is(s) {
            return Err(self.err_at(&t, &format!("{s} expected, but got {}", t.text)));
        }
        Ok(())
    }

    /// One name in parentheses: `(name)`.
    fn paren_name(&mut self) -> Result<String> {
        self.expect("(")?;
        let t = self.next()?;
        if t.is(")") {
            return Err(self.err_at(&t, "unexpected )"));
        }
        self.expect(")")?;
        Ok(t.text)
    }

    fn read_input(&mut self, out: &mut Vec<Command>, as_needed: bool) -> Result<()> {
        self.expect("(")?;
        loop {
            let t = self.next()?;
            if t.is(")") {
                return Ok(());
            }
            if t.is(",") {
                continue;
            }
            if t.is("AS_NEEDED") && !as_needed {
                self.read_input(out, true)?;
                continue;
            }
            if !t.quoted && (t.text.len() == 1 && is_special(t.text.chars().next().unwrap_or(' '))) {
                return Err(self.err_at(&t, &format!("unexpected {}", t.text)));
            }
            let loc = self.loc(&t);
            out.push(Command::Input { name: t.text, as_needed, loc });
        }
    }

    /// Parses commands into `out` until the end or the first error.
    fn run(&mut self, out: &mut Vec<Command>) -> Result<()> {
        while self.pos < self.toks.len() {
            let t = self.next()?;
            if t.quoted {
                return Err(self.err_at(&t, &format!("unknown directive: {}", t.text)));
            }
            match t.text.as_str() {
                ";" => {}
                "INPUT" => self.read_input(out, false)?,
                "GROUP" => {
                    out.push(Command::Group(true));
                    self.read_input(out, false)?;
                    out.push(Command::Group(false));
                }
                "OUTPUT_FORMAT" => {
                    self.expect("(")?;
                    let name = self.next()?;
                    let mut last = self.next()?;
                    if !last.is(")") {
                        if !last.is(",") {
                            return Err(self.err_at(&last, &format!(", expected, but got {}", last.text)));
                        }
                        self.next()?;
                        self.expect(",")?;
                        self.next()?;
                        last = self.next()?;
                        if !last.is(")") {
                            return Err(self.err_at(&last, &format!(") expected, but got {}", last.text)));
                        }
                    }
                    // lld's parseBfdName: an unknown name is refused (-EB/-EL, which pick another
                    // of the three names, are not dtld options).
                    let bfd = name.text.trim_matches('"');
                    if !known_bfd_name(bfd) {
                        return Err(self.err_at(&last, &format!("unknown output format name: {bfd}")));
                    }
                }
                "OUTPUT_ARCH" => {
                    self.expect("(")?;
                    while !self.next()?.is(")") {}
                }
                "TARGET" => {
                    // lld: TARGET(elf...) or TARGET(binary), as --format.
                    let t = self.paren_name()?;
                    if !t.starts_with("elf") && t != "binary" {
                        let close = self.toks[self.pos - 1].clone();
                        return Err(self.err_at(&close, &format!("unknown target: {t}")));
                    }
                    out.push(Command::Target(t == "binary"));
                }
                "SEARCH_DIR" => {
                    let d = self.paren_name()?;
                    out.push(Command::SearchDir(d));
                }
                "ENTRY" => {
                    let e = self.paren_name()?;
                    out.push(Command::Entry(e));
                }
                "OUTPUT" => {
                    let o = self.paren_name()?;
                    out.push(Command::Output(o));
                }
                "EXTERN" => {
                    self.expect("(")?;
                    let mut syms = Vec::new();
                    loop {
                        let s = self.next()?;
                        if s.is(")") {
                            break;
                        }
                        if !s.is(",") {
                            syms.push(s.text);
                        }
                    }
                    out.push(Command::Extern(syms));
                }
                "VERSION" => {
                    self.expect("{")?;
                    let mut depth = 1;
                    let mut text = String::new();
                    loop {
                        let t = self.next()?;
                        if t.is("{") {
                            depth += 1;
                        } else if t.is("}") {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        if t.quoted {
                            text.push('"');
                            text.push_str(&t.text);
                            text.push('"');
                        } else {
                            text.push_str(&t.text);
                        }
                        text.push(if t.is(";") { '\n' } else { ' ' });
                    }
                    out.push(Command::Version(text));
                }
                "INCLUDE" => {
                    let f = self.next()?;
                    let dirs = self.include_dirs.to_vec();
                    let found = std::iter::once(std::path::PathBuf::from(&f.text))
                        .chain(dirs.iter().map(|d| d.join(&f.text)))
                        .find_map(|p| std::fs::read(&p).ok().map(|d| (p, d)));
                    let Some((path, data)) = found else {
                        return Err(self.err_at(&f, &format!("cannot find linker script {}", f.text)));
                    };
                    if self.depth > 16 {
                        return Err(self.err_at(&f, "there is a cycle in linker script INCLUDEs"));
                    }
                    let name = path.to_string_lossy().into_owned();
                    out.push(Command::Include(name.clone()));
                    let text = String::from_utf8_lossy(&data).into_owned();
                    let (toks, lex_err) = tokenize(&name, &text);
                    let mut sub = Parser { name: &name, src: &text, toks, pos: 0, include_dirs: self.include_dirs, depth: self.depth + 1 };
                    sub.run(out)?;
                    if let Some(e) = lex_err {
                        return Err(e);
                    }
                }
                x if (self.pos < self.toks.len()
                    && (self.toks[self.pos].is("=")
                        || ["+=", "-=", "*=", "/=", "&=", "|=", "<<=", ">>="].iter().any(|o| self.toks[self.pos].text.starts_with(o))))
                    || x.contains('=')
                    || LAYOUT.contains(&x) =>
                {
                    // A layout command or an assignment: the layout parser reads it from the
                    // text and says where it ends.
                    let (cmds, end) = parse::parse_command(self.name, self.src.as_bytes(), t.pos, self.include_dirs)?;
                    for c in cmds {
                        out.push(Command::Layout(c));
                    }
                    while self.pos < self.toks.len() && self.toks[self.pos].pos < end {
                        self.pos += 1;
                    }
                }
                x => return Err(self.err_at(&t, &format!("unknown directive: {x}"))),
            }
        }
        Ok(())
    }
}

/// Parses `data` as an input linker script named `name` (for messages).
pub fn parse(name: &str, data: &[u8]) -> Result<Script> {
    let (script, err) = parse_partial(name, data);
    match err {
        Some(e) => Err(e),
        None => Ok(script),
    }
}

/// Like `parse`, but also returns the commands read before a syntax error. lld acts on each
/// command as it reads it, so a file that cannot be found before the error is reported first;
/// the loader runs these commands, then reports the error.
pub fn parse_partial(name: &str, data: &[u8]) -> (Script, Option<Error>) {
    parse_partial_in(name, data, &[])
}

/// `parse_partial` with the directories `INCLUDE` searches.
pub fn parse_partial_in(name: &str, data: &[u8], include_dirs: &[std::path::PathBuf]) -> (Script, Option<Error>) {
    let text = String::from_utf8_lossy(data);
    let (toks, lex_err) = tokenize(name, &text);
    let mut p = Parser { name, src: &text, toks, pos: 0, include_dirs, depth: 0 };
    let mut commands = Vec::new();
    let err = match (p.run(&mut commands).err(), lex_err) {
        // lld lexes on demand and reports only the first error: a parser that ran out of tokens
        // reached the unclosed comment first (`VERSION { v /*`), and that is what lld says.
        (Some(e), Some(l)) if e.to_string().ends_with("unexpected EOF") && l.to_string().contains("unclosed comment") => Some(l),
        (e, l) => e.or(l),
    };
    (Script { name: name.to_string(), commands }, err)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inputs(s: &Script) -> Vec<(String, bool)> {
        s.commands
            .iter()
            .filter_map(|c| match c {
                Command::Input { name, as_needed, .. } => Some((name.clone(), *as_needed)),
                _ => None,
            })
            .collect()
    }

    fn err(text: &str) -> String {
        parse("s.t", text.as_bytes()).unwrap_err().to_string()
    }

    #[test]
    fn glibc_libc_so() {
        let text = "/* GNU ld script\n   Use the shared library, but some functions are only in\n   the static \
                    library, so try that secondarily.  */\nOUTPUT_FORMAT(elf64-x86-64)\nGROUP ( \
                    /lib/x86_64-linux-gnu/libc.so.6 /usr/lib/x86_64-linux-gnu/libc_nonshared.a  AS_NEEDED ( \
                    /lib64/ld-linux-x86-64.so.2 ) )\n";
        let s = parse("libc.so", text.as_bytes()).unwrap();
        assert_eq!(
            inputs(&s),
            vec![
                ("/lib/x86_64-linux-gnu/libc.so.6".to_string(), false),
                ("/usr/lib/x86_64-linux-gnu/libc_nonshared.a".to_string(), false),
                ("/lib64/ld-linux-x86-64.so.2".to_string(), true),
            ]
        );
        // GROUP's files are marked as one group.
        assert_eq!(s.commands[0], Command::Group(true));
        assert_eq!(s.commands.last(), Some(&Command::Group(false)));
        let Command::Input { loc, .. } = &s.commands[1] else { panic!() };
        assert_eq!(loc.line, 5);
        assert_eq!(loc.col, 8);
    }

    #[test]
    fn glibc_libm_so_and_misc() {
        let text = "/* GNU ld script\n*/\nOUTPUT_FORMAT(elf64-x86-64)\nGROUP ( /lib/x86_64-linux-gnu/libm.so.6  \
                    AS_NEEDED ( /lib/x86_64-linux-gnu/libmvec.so.1 ) )\n";
        let s = parse("libm.so", text.as_bytes()).unwrap();
        assert_eq!(inputs(&s).len(), 2);
        assert!(inputs(&s)[1].1);
        let s = parse(
            "x.t",
            b"OUTPUT_FORMAT(\"elf64-x86-64\", \"elf64-x86-64\", \"elf64-x86-64\")\nOUTPUT_ARCH(i386:x86-64)\n\
              SEARCH_DIR(\"=/usr/lib\"); ENTRY(_start)\nINPUT(a.o, \"b c.o\" -lfoo)\nEXTERN(x y)\nTARGET(elf64-x86-64)\n\
              # comment\nOUTPUT(out)\n",
        )
        .unwrap();
        assert_eq!(inputs(&s), vec![("a.o".into(), false), ("b c.o".into(), false), ("-lfoo".into(), false)]);
        assert!(s.commands.contains(&Command::SearchDir("=/usr/lib".into())));
        assert!(s.commands.contains(&Command::Entry("_start".into())));
        assert!(s.commands.contains(&Command::Extern(vec!["x".into(), "y".into()])));
        assert!(s.commands.contains(&Command::Output("out".into())));
        assert!(parse("e.t", b"").unwrap().commands.is_empty());
        assert!(parse("e.t", b"  /* only a comment */ ").unwrap().commands.is_empty());
    }

    #[test]
    fn errors_in_lld_wording() {
        assert_eq!(err("FOO(a)\n"), "s.t:1: unknown directive: FOO\n>>> FOO(a)\n>>> ^");
        assert_eq!(err("/* x\n\n"), "s.t:1: unclosed comment in a linker script");
        assert_eq!(err("VERSION { ver_x /*"), "s.t:1: unclosed comment in a linker script");
        assert_eq!(err("GROUP ( f.o /* x"), "s.t:1: unclosed comment in a linker script");
        assert_eq!(err("GROUP ( f.o \n"), "s.t:1: unexpected EOF");
        assert_eq!(err("GROUP(f.o AS_NEEDED(m.o)"), "s.t:1: unexpected EOF");
        assert_eq!(err("\n\nSEARCH_DIR("), "s.t:3: unexpected EOF");
        assert_eq!(err("OUTPUT_FORMAT(a,b)"), "s.t:1: , expected, but got )\n>>> OUTPUT_FORMAT(a,b)\n>>>                  ^");
        assert_eq!(err("ENTRY(foo bar)"), "s.t:1: ) expected, but got bar\n>>> ENTRY(foo bar)\n>>>           ^");
        assert_eq!(err("INPUT(f.o))"), "s.t:1: unknown directive: )\n>>> INPUT(f.o))\n>>>           ^");
        assert_eq!(err("\x7fELF\x02"), "s.t:1: unknown directive: \u{7f}ELF\u{2}\n>>> ?ELF?\n>>> ^");
        assert!(err("SECTIONS { OVERLAY 0x1000 : { .a 0x10 : { } } }").starts_with("s.t:1: { expected, but got 0x10"));
        assert_eq!(err("INPUT(\"abc"), "s.t:1: unexpected EOF");
        assert_eq!(err("\"abc"), "s.t:1: unclosed quote");
        let (s, e) = parse_partial("s.t", b"INPUT(a.o) GROUP(b.o");
        // a.o, the start of the group, b.o.
        assert_eq!(s.commands.len(), 3);
        assert_eq!(e.unwrap().to_string(), "s.t:1: unexpected EOF");
        let s = parse("s.t", b"INPUT(\"a\nb.o\" c.o)").unwrap();
        assert!(matches!(&s.commands[1], Command::Input { loc, .. } if loc.line == 2));
    }

    #[test]
    fn garbage_never_panics() {
        let mut seed: u64 = 12345;
        for len in 0..400 {
            let mut v = Vec::with_capacity(len);
            for _ in 0..len {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                v.push(match seed % 8 {
                    0 => b'(',
                    1 => b')',
                    2 => b'\n',
                    3 => b'"',
                    4 => b'/',
                    5 => b'*',
                    _ => (seed >> 24) as u8,
                });
            }
            let _ = parse("g", &v);
        }
        let _ = parse("g", b"GROUP(AS_NEEDED(AS_NEEDED(AS_NEEDED(");
        let _ = parse("g", b"\xff\xfe\x00\x01(((");
    }
}
