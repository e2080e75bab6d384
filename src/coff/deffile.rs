//! Module-definition (`.def`) files: the exports and image settings a DLL's `.def` lists.
//!
//! This module exists because MinGW links often name a `.def` file among their inputs
//! (`clang -shared foo.o foo.def`): lld's MinGW driver turns such an input into `-def:foo.def`,
//! and lld-link reads it with LLVM's `parseCOFFModuleDefinition` and applies it in
//! `LinkerDriver::parseModuleDefs`. dtld does the same here, by the same rules (written from
//! LLVM's `COFFModuleDefinition.cpp` and checked against ld.lld-22):
//!
//! * the lexer: whitespace separates words; `;` starts a comment to the end of the line; `=`,
//!   `==` and `,` are tokens; `"..."` is a quoted word; a NUL ends the file; the keywords
//!   (`BASE CONSTANT DATA EXPORTS EXPORTAS HEAPSIZE LIBRARY NAME NONAME PRIVATE STACKSIZE
//!   VERSION`) are case-sensitive;
//! * directives: `LIBRARY`/`NAME [name [BASE=n]]`, `EXPORTS` followed by export lines,
//!   `HEAPSIZE`/`STACKSIZE reserve[,commit]` (decimal only), `VERSION major[.minor]`; anything
//!   else is `unknown directive: X` (lld 22 has no `SECTIONS`: after `EXPORTS` its words are
//!   read as more export names);
//! * an export: `name[=internal] [@ord [NONAME]] [DATA] [CONSTANT] [PRIVATE] [==importname]
//!   [EXPORTAS name]`; `@x` that is not a 16-bit decimal ends the export (it is the next,
//!   fastcall-decorated, name);
//! * `ext=dll.func` (an internal name with a `.`) is a forwarder.
//!
//! Errors are LLVM's messages; lld prints them without the file name (`error: unknown
//! directive: FOO`), and so does dtld. x86-64 has no leading underscores, so none are added.

use std::path::Path;

use super::config::CoffConfig;
use super::drectve::ExportSpec;

/// What a `.def` file says (LLVM's `COFFModuleDefinition`).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct ModuleDef {
    /// `LIBRARY`/`NAME`: the output file lld-link would use without `/out:`.
    pub output_file: String,
    /// `LIBRARY`/`NAME`: the DLL name the import library refers to.
    pub import_name: String,
    pub image_base: u64,
    pub stack_reserve: u64,
    pub stack_commit: u64,
    pub heap_reserve: u64,
    pub heap_commit: u64,
    pub major_image_version: u32,
    pub minor_image_version: u32,
    pub exports: Vec<ExportSpec>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum K {
    Eof,
    Identifier,
    Comma,
    Equal,
    EqualEqual,
    Base,
    Constant,
    Data,
    Exports,
    ExportAs,
    Heapsize,
    Library,
    Name,
    Noname,
    Private,
    Stacksize,
    Version,
}

#[derive(Debug, Clone)]
struct Tok {
    k: K,
    v: String,
}

struct Lexer<'a> {
    buf: &'a [u8],
}

fn is_space(c: u8) -> bool {
    // StringRef::trim's set: " \t\n\v\f\r".
    matches!(c, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

impl Lexer<'_> {
    fn trim(&mut self) {
        while let [c, rest @ ..] = self.buf {
            if !is_space(*c) {
                break;
            }
            self.buf = rest;
        }
        while let [rest @ .., c] = self.buf {
            if !is_space(*c) {
                break;
            }
            self.buf = rest;
        }
    }

    fn lex(&mut self) -> Tok {
        loop {
            self.trim();
            let Some(&c) = self.buf.first() else { return Tok { k: K::Eof, v: String::new() } };
            match c {
                0 => return Tok { k: K::Eof, v: String::new() },
                b';' => {
                    // Drop the comment (the newline stays and is trimmed next).
                    self.buf = match self.buf.iter().position(|&b| b == b'\n') {
                        Some(p) => &self.buf[p..],
                        None => &[],
                    };
                }
                b'=' => {
                    self.buf = &self.buf[1..];
                    if self.buf.first() == Some(&b'=') {
                        self.buf = &self.buf[1..];
                        return Tok { k: K::EqualEqual, v: "==".into() };
                    }
                    return Tok { k: K::Equal, v: "=".into() };
                }
                b',' => {
                    self.buf = &self.buf[1..];
                    return Tok { k: K::Comma, v: ",".into() };
                }
                b'"' => {
                    let rest = &self.buf[1..];
                    let (word, after) = match rest.iter().position(|&b| b == b'"') {
                        Some(p) => (&rest[..p], &rest[p + 1..]),
                        None => (rest, &[][..]),
                    };
                    self.buf = after;
                    return Tok { k: K::Identifier, v: String::from_utf8_lossy(word).into_owned() };
                }
                _ => {
                    let end = self.buf.iter().position(|b| b"=,;\r\n \t\x0b".contains(b)).unwrap_or(self.buf.len());
                    let word = String::from_utf8_lossy(&self.buf[..end]).into_owned();
                    self.buf = &self.buf[end..];
                    let k = match word.as_str() {
                        "BASE" => K::Base,
                        "CONSTANT" => K::Constant,
                        "DATA" => K::Data,
                        "EXPORTS" => K::Exports,
                        "EXPORTAS" => K::ExportAs,
                        "HEAPSIZE" => K::Heapsize,
                        "LIBRARY" => K::Library,
                        "NAME" => K::Name,
                        "NONAME" => K::Noname,
                        "PRIVATE" => K::Private,
                        "STACKSIZE" => K::Stacksize,
                        "VERSION" => K::Version,
                        _ => K::Identifier,
                    };
                    return Tok { k, v: word };
                }
            }
        }
    }
}

/// LLVM's `StringRef::getAsInteger(10, x)`: decimal digits only, no sign, no overflow.
fn decimal(s: &str) -> Option<u64> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

struct Parser<'a> {
    lex: Lexer<'a>,
    tok: Tok,
    stack: Vec<Tok>,
    info: ModuleDef,
}

impl Parser<'_> {
    fn read(&mut self) {
        self.tok = match self.stack.pop() {
            Some(t) => t,
            None => self.lex.lex(),
        };
    }

    fn unget(&mut self) {
        self.stack.push(self.tok.clone());
    }

    fn read_int(&mut self) -> Result<u64, String> {
        self.read();
        match self.tok.k {
            K::Identifier => decimal(&self.tok.v).ok_or_else(|| "integer expected".to_string()),
            _ => Err("integer expected".into()),
        }
    }

    fn parse(mut self) -> Result<ModuleDef, String> {
        loop {
            self.parse_one()?;
            if self.tok.k == K::Eof {
                return Ok(self.info);
            }
        }
    }

    fn parse_one(&mut self) -> Result<(), String> {
        self.read();
        match self.tok.k {
            K::Eof => Ok(()),
            K::Exports => loop {
                self.read();
                if self.tok.k != K::Identifier {
                    self.unget();
                    return Ok(());
                }
                self.parse_export()?;
            },
            K::Heapsize => {
                let (r, c) = self.parse_numbers()?;
                self.info.heap_reserve = r;
                if let Some(c) = c {
                    self.info.heap_commit = c;
                }
                Ok(())
            }
            K::Stacksize => {
                let (r, c) = self.parse_numbers()?;
                self.info.stack_reserve = r;
                if let Some(c) = c {
                    self.info.stack_commit = c;
                }
                Ok(())
            }
            K::Library | K::Name => {
                let is_dll = self.tok.k == K::Library;
                let name = self.parse_name()?;
                self.info.import_name = name.clone();
                if self.info.output_file.is_empty() {
                    self.info.output_file = name.clone();
                    if !has_extension(&name) {
                        self.info.output_file += if is_dll { ".dll" } else { ".exe" };
                    }
                }
                Ok(())
            }
            K::Version => {
                self.read();
                if self.tok.k != K::Identifier {
                    return Err(format!("identifier expected, but got {}", self.tok.v));
                }
                let v = self.tok.v.clone();
                let bad = || format!("integer expected, but got {v}");
                let (major, minor) = v.split_once('.').unwrap_or((&v, ""));
                self.info.major_image_version = decimal(major).and_then(|n| u32::try_from(n).ok()).ok_or_else(bad)?;
                self.info.minor_image_version = if minor.is_empty() { 0 } else { decimal(minor).and_then(|n| u32::try_from(n).ok()).ok_or_else(bad)? };
                Ok(())
            }
            _ => Err(format!("unknown directive: {}", self.tok.v)),
        }
    }

    /// `reserve[,commit]`.
    fn parse_numbers(&mut self) -> Result<(u64, Option<u64>), String> {
        let reserve = self.read_int()?;
        self.read();
        if self.tok.k != K::Comma {
            self.unget();
            return Ok((reserve, None));
        }
        Ok((reserve, Some(self.read_int()?)))
    }

    /// `NAME [outputPath [BASE=address]]`.
    fn parse_name(&mut self) -> Result<String, String> {
        self.read();
        if self.tok.k != K::Identifier {
            self.unget();
            return Ok(String::new());
        }
        let name = self.tok.v.clone();
        self.read();
        if self.tok.k == K::Base {
            self.read();
            if self.tok.k != K::Equal {
                return Err("'=' expected".into());
            }
            self.info.image_base = self.read_int()?;
        } else {
            self.unget();
            self.info.image_base = 0;
        }
        Ok(name)
    }

    fn parse_export(&mut self) -> Result<(), String> {
        // LLVM's COFFShortExport: Name (the internal symbol), ExtName (the exported name).
        let mut name = self.tok.v.clone();
        let mut ext_name = String::new();
        let mut e = ExportSpec::default();
        self.read();
        if self.tok.k == K::Equal {
            self.read();
            if self.tok.k != K::Identifier {
                return Err(format!("identifier expected, but got {}", self.tok.v));
            }
            ext_name = std::mem::replace(&mut name, self.tok.v.clone());
        } else {
            self.unget();
        }
        loop {
            self.read();
            if self.tok.k == K::Identifier && self.tok.v.starts_with('@') {
                if self.tok.v == "@" {
                    // "foo @ 10"; a bad number leaves the ordinal as it was.
                    self.read();
                    if let Some(n) = decimal(&self.tok.v).and_then(|n| u16::try_from(n).ok()) {
                        e.ordinal = Some(n);
                    }
                } else if let Some(n) = decimal(&self.tok.v[1..]).and_then(|n| u16::try_from(n).ok()) {
                    e.ordinal = Some(n);
                } else {
                    // "foo \n @bar": the next (fastcall-decorated) export.
                    self.unget();
                    self.push(name, ext_name, e);
                    return Ok(());
                }
                self.read();
                if self.tok.k == K::Noname {
                    e.noname = true;
                } else {
                    self.unget();
                }
                continue;
            }
            match self.tok.k {
                K::Data => e.data = true,
                K::Constant => e.constant = true,
                K::Private => e.private = true,
                K::EqualEqual => {
                    self.read();
                    e.import_name = Some(self.tok.v.clone());
                }
                K::ExportAs => {
                    // EXPORTAS ends the export.
                    self.read();
                    if self.tok.k == K::Eof {
                        return Err("unexpected end of file, EXPORTAS identifier expected".into());
                    }
                    e.export_as = Some(self.tok.v.clone());
                    self.push(name, ext_name, e);
                    return Ok(());
                }
                _ => {
                    self.unget();
                    self.push(name, ext_name, e);
                    return Ok(());
                }
            }
        }
    }

    /// lld's `parseModuleDefs` conversion: `ext=dll.func` is a forwarder, otherwise the export
    /// is `ext` (or `name`) bound to `name`.
    fn push(&mut self, name: String, ext_name: String, mut e: ExportSpec) {
        if e.ordinal == Some(0) {
            e.ordinal = None;
        }
        if !ext_name.is_empty() && ext_name != name && name.contains('.') {
            self.info.exports.push(ExportSpec { name: ext_name, forward_to: Some(name), ..Default::default() });
            return;
        }
        if ext_name.is_empty() || ext_name == name {
            e.name = name;
        } else {
            e.name = ext_name;
            e.internal = Some(name);
        }
        self.info.exports.push(e);
    }
}

/// `llvm::sys::path::has_extension` on the file-name part.
fn has_extension(name: &str) -> bool {
    let file = name.rsplit('/').next().unwrap_or(name);
    matches!(file.rfind('.'), Some(p) if p > 0 && file != "..")
}

/// Parses the text of a module-definition file.
pub fn parse(text: &[u8]) -> Result<ModuleDef, String> {
    let p = Parser { lex: Lexer { buf: text }, tok: Tok { k: K::Eof, v: String::new() }, stack: Vec::new(), info: ModuleDef::default() };
    p.parse()
}

/// lld-link's `/def:` (`LinkerDriver::parseModuleDefs`): reads the file and applies it to the
/// configuration. Exports go after the command line's `/export:`s, as in lld; non-zero sizes,
/// base and version override the command line.
pub fn apply(config: &mut CoffConfig, path: &Path) -> Result<(), String> {
    let text = std::fs::read(path).map_err(|e| format!("could not open {}: {}", path.display(), crate::error::io_error(&e)))?;
    let m = parse(&text)?;
    if config.output.as_os_str().is_empty() && !m.output_file.is_empty() {
        config.output = m.output_file.clone().into();
    }
    config.import_name = (!m.import_name.is_empty()).then(|| m.import_name.clone());
    if m.image_base != 0 {
        config.image_base = Some(m.image_base);
    }
    if m.stack_reserve != 0 {
        config.stack.0 = m.stack_reserve;
    }
    if m.stack_commit != 0 {
        config.stack.1 = m.stack_commit;
    }
    if m.heap_reserve != 0 {
        config.heap.0 = m.heap_reserve;
    }
    if m.heap_commit != 0 {
        config.heap.1 = m.heap_commit;
    }
    if m.major_image_version != 0 {
        config.image_version.0 = m.major_image_version as u16;
    }
    if m.minor_image_version != 0 {
        config.image_version.1 = m.minor_image_version as u16;
    }
    config.exports.extend(m.exports.into_iter().map(|e| ExportSpec { source: crate::coff::drectve::ExportSource::Def, ..e }));
    Ok(())
}

/// lld's `getImportName(false)`: the DLL name an import library for this link refers to.
pub fn import_dll_name(config: &CoffConfig, output_name: &str) -> String {
    match config.import_name.as_deref() {
        Some(n) if has_extension(n) => n.to_string(),
        Some(n) => format!("{n}{}", if config.dll { ".dll" } else { ".exe" }),
        None => output_name.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exp(name: &str) -> ExportSpec {
        ExportSpec { name: name.into(), ..Default::default() }
    }

    #[test]
    fn fixture_file() {
        let m = parse(b"LIBRARY calc.dll\nEXPORTS\n    calc_add = internal_add @5\n    calc_neg @7\n    calc_base DATA\n").unwrap();
        assert_eq!(m.import_name, "calc.dll");
        assert_eq!(m.output_file, "calc.dll");
        assert_eq!(
            m.exports,
            vec![
                ExportSpec { internal: Some("internal_add".into()), ordinal: Some(5), ..exp("calc_add") },
                ExportSpec { ordinal: Some(7), ..exp("calc_neg") },
                ExportSpec { data: true, ..exp("calc_base") },
            ]
        );
    }

    #[test]
    fn flags_and_names() {
        let m = parse(b"; comment\nNAME prog BASE=268435456 ; c\nSTACKSIZE 4096,512\nHEAPSIZE 8192\nVERSION 3.4\nEXPORTS\n a = b ==c @ 5 NONAME PRIVATE\n \"q r\" CONSTANT EXPORTAS z\n fwd = kernel32.Sleep\n f\n @g@8\n").unwrap();
        assert_eq!(m.output_file, "prog.exe");
        assert_eq!(m.image_base, 268435456);
        assert_eq!((m.stack_reserve, m.stack_commit, m.heap_reserve, m.heap_commit), (4096, 512, 8192, 0));
        assert_eq!((m.major_image_version, m.minor_image_version), (3, 4));
        assert_eq!(
            m.exports[0],
            ExportSpec { internal: Some("b".into()), import_name: Some("c".into()), ordinal: Some(5), noname: true, private: true, ..exp("a") }
        );
        assert_eq!(m.exports[1], ExportSpec { constant: true, export_as: Some("z".into()), ..exp("q r") });
        assert_eq!(m.exports[2], ExportSpec { forward_to: Some("kernel32.Sleep".into()), ..exp("fwd") });
        assert_eq!(m.exports[3], exp("f"));
        assert_eq!(m.exports[4], exp("@g@8"));
    }

    #[test]
    fn errors() {
        assert_eq!(parse(b"LIBRARY x\nFOO\n").unwrap_err(), "unknown directive: FOO");
        assert_eq!(parse(b"STACKSIZE 0x1000\n").unwrap_err(), "integer expected");
        assert_eq!(parse(b"HEAPSIZE 1,\n").unwrap_err(), "integer expected");
        assert_eq!(parse(b"VERSION a.b\n").unwrap_err(), "integer expected, but got a.b");
        assert_eq!(parse(b"VERSION\n").unwrap_err(), "identifier expected, but got ");
        assert_eq!(parse(b"EXPORTS\n a = ,\n").unwrap_err(), "identifier expected, but got ,");
        assert_eq!(parse(b"EXPORTS\n a EXPORTAS\n").unwrap_err(), "unexpected end of file, EXPORTAS identifier expected");
        assert_eq!(parse(b"NAME x BASE 5\n").unwrap_err(), "'=' expected");
        // NONAME without an ordinal ends the export; then it is no directive.
        assert_eq!(parse(b"EXPORTS\n a NONAME\n").unwrap_err(), "unknown directive: NONAME");
    }

    #[test]
    fn odd_input_never_panics() {
        for t in
            [&b""[..], b"\"", b"EXPORTS \"", b"EXPORTS a @", b"EXPORTS a @ @", b"\0EXPORTS", b"EXPORTS a ==", b"EXPORTS a @99999 b", b"\xff\xfe", b"LIBRARY"]
        {
            let _ = parse(t);
        }
        assert_eq!(parse(b"EXPORTS a @99999 b").unwrap().exports.len(), 3);
    }
}

/// `--output-def` (`/output-def:`): the exports as lld's `writeDefFile` writes them —
/// `EXPORTS`, then `    name @ordinal` per export, ` DATA` for one whose symbol is not code.
pub fn write_def_file(exports: &[super::exports::Export], data: impl Fn(&super::exports::Export) -> bool) -> String {
    let mut out = String::from("EXPORTS\n");
    for e in exports {
        out.push_str(&format!("    {} @{}", e.name, e.ordinal.unwrap_or(0)));
        if data(e) {
            out.push_str(" DATA");
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod write_tests {
    #[test]
    fn def_file_as_lld_writes_it() {
        let e = |name: &str, ordinal, data| super::super::exports::Export { name: name.into(), ordinal: Some(ordinal), data, ..Default::default() };
        let text = super::write_def_file(&[e("f", 1, false), e("v", 2, true)], |e| e.data);
        assert_eq!(text, "EXPORTS\n    f @1\n    v @2 DATA\n");
    }
}
