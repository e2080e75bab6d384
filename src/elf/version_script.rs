//! Version scripts (`--version-script`) and dynamic lists (`--dynamic-list`).
//!
//! A shared object's export list and symbol versions come from these small files, so dtld
//! must read them exactly as ld.lld does: the same lexer (lld's `ScriptLexer`), the same
//! grammar and error texts (lld's `ScriptParser::readVersionScript` and friends), the same
//! glob dialect (llvm's `GlobPattern`) and, above all, the same precedence when several
//! patterns match one symbol (lld's `SymbolTable::scanVersionScript`). This module is pure:
//! it parses text into [`VersionScript`] / a list of [`Pattern`]s and answers, for one symbol
//! name at a time, what the scripts say about it. Turning the answer into `.gnu.version`,
//! `.gnu.version_d` and symbol bindings is the caller's business.
//!
//! Precedence, as lld implements it (see [`VersionScript::assign`]):
//!
//! 1. exact patterns (no unquoted `?`, `*`, `[`) win over every wildcard; among exact
//!    patterns the first in lld's definition order wins: the anonymous version's `local:`
//!    patterns, then its `global:` patterns, then each named version in file order, its
//!    `global:` patterns before its `local:` ones;
//! 2. then wildcards other than a lone `*`, taking the definitions in *reverse* order (a later
//!    version's wildcard beats an earlier one's; named versions beat the anonymous one), and
//!    within one definition `global:` before `local:`;
//! 3. last, the lone `*` patterns, in the same reverse order, so an anonymous `local: *;` is
//!    the catch-all of lowest priority.

use std::collections::HashMap;
use std::sync::OnceLock;

// ---------------------------------------------------------------------------------------------
// Public data model
// ---------------------------------------------------------------------------------------------

/// Whether a pattern is matched literally or as a glob.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PatternKind {
    /// Compared byte for byte (after demangling, for `extern "C++"`).
    Exact,
    /// An llvm `GlobPattern`: `*`, `?`, `[...]` with ranges and `!`/`^` negation, `\` escapes.
    Glob,
}

/// The language of an `extern` block (plain patterns are `C`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Lang {
    /// Matched against the symbol name as it is.
    C,
    /// Matched against the demangled symbol name, parameters included (`ns::foo(int)`).
    Cxx,
}

/// One symbol pattern of a version script or dynamic list.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Pattern {
    /// The pattern with its surrounding double quotes (if any) removed.
    pub text: String,
    pub kind: PatternKind,
    pub lang: Lang,
    /// 1-based line of the pattern in its file.
    pub line: u32,
}

/// One version definition: `NAME { global: ...; local: ...; } PARENT;` or the anonymous
/// `{ ... };`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct VersionDef {
    /// The version name exactly as written (lld keeps quotes, if any); "" for the anonymous
    /// version.
    pub name: String,
    /// The parent version named after the closing brace (lld accepts at most one and then
    /// ignores it; so do we, beyond recording it).
    pub parents: Vec<String>,
    /// Patterns under `global:` (or before any label).
    pub globals: Vec<Pattern>,
    /// Patterns under `local:`.
    pub locals: Vec<Pattern>,
}

/// A parsed (possibly merged) version script.
#[derive(Debug, Default)]
pub struct VersionScript {
    /// The anonymous version (name "") first when there is one, then the named versions in
    /// the order they appear. Do not modify after the first call to [`VersionScript::assign`]:
    /// the match index is built once, lazily.
    pub versions: Vec<VersionDef>,
    index: OnceLock<Index>,
}

impl Clone for VersionScript {
    fn clone(&self) -> Self {
        VersionScript { versions: self.versions.clone(), index: OnceLock::new() }
    }
}

impl PartialEq for VersionScript {
    fn eq(&self, other: &Self) -> bool {
        self.versions == other.versions
    }
}

/// What a version script says about one defined symbol.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum VersionAssign {
    /// Hide it (`VER_NDX_LOCAL`).
    Local,
    /// Export it unversioned (`VER_NDX_GLOBAL`).
    Global,
    /// Export it with this verdef index (2 for the first named version, 3 for the next, ...;
    /// index 1 is the base version).
    Named(u16),
}

// ---------------------------------------------------------------------------------------------
// Lexer (lld's ScriptLexer in its default "Script" state)
// ---------------------------------------------------------------------------------------------

#[derive(Debug, Clone)]
struct Tok {
    /// Raw token text; quoted tokens keep their quotes.
    text: String,
    line: u32,
    /// lld's context lines for an error at this token: `\n>>> <line>\n>>> <caret>`.
    ctx: String,
}

/// Characters that may form an unquoted token (lld's `State::Script` set).
fn is_token_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || b"_.$/\\~=+[]*?-!^:".contains(&c)
}

/// `StringRef::ltrim`'s whitespace set.
fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

fn count_newlines(b: &[u8]) -> u32 {
    let n = b.iter().filter(|&&c| c == b'\n').count();
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// Splits `text` into tokens. A lexing error does not abort at once: it is returned beside the
/// tokens before it and reported only when the parser reaches it, since lld lexes lazily and
/// an earlier syntax error must win.
fn tokenize(text: &str, file: &str) -> (Vec<Tok>, Option<String>) {
    let b = text.as_bytes();
    let mut toks: Vec<Tok> = Vec::new();
    let mut i = 0usize;
    let mut line: u32 = 1;
    loop {
        // Skip whitespace and comments (`/* */` and `#` to end of line).
        loop {
            let rest = b.get(i..).unwrap_or(&[]);
            if rest.starts_with(b"/*") {
                match find_sub(rest, b"*/", 2) {
                    Some(e) => {
                        line = line.saturating_add(count_newlines(&rest[..e]));
                        i += e + 2;
                        continue;
                    }
                    None => {
                        // lld reports this at the line of the last token it consumed.
                        let at = toks.last().map_or(1, |t| t.line);
                        return (toks, Some(format!("{file}:{at}: unclosed comment in a linker script")));
                    }
                }
            }
            match rest.first() {
                Some(b'#') => match rest.iter().skip(1).position(|&c| c == b'\n') {
                    Some(p) => {
                        line = line.saturating_add(1);
                        i += p + 2;
                    }
                    None => i = b.len(),
                },
                Some(&c) if is_space(c) => {
                    if c == b'\n' {
                        line = line.saturating_add(1);
                    }
                    i += 1;
                }
                _ => break,
            }
        }
        let rest = b.get(i..).unwrap_or(&[]);
        let Some(&c0) = rest.first() else {
            return (toks, None);
        };
        let start = i;
        let tok_line = line;
        let len = if c0 == b'"' {
            match rest.iter().skip(1).position(|&c| c == b'"') {
                Some(p) => {
                    line = line.saturating_add(count_newlines(&rest[..p + 2]));
                    p + 2
                }
                None => return (toks, Some(format!("{file}:{tok_line}: unclosed quote"))),
            }
        } else if rest.starts_with(b"<<=") || rest.starts_with(b">>=") {
            3
        } else if rest.len() > 1 && rest[1] == b'=' && b"+-*/!&^|".contains(&c0) {
            2
        } else {
            let n = rest.iter().position(|&c| !is_token_char(c)).unwrap_or(rest.len());
            if n > 0 {
                n
            } else {
                // One character forms a token; keep multi-byte UTF-8 characters whole.
                text.get(start..).and_then(|s| s.chars().next()).map_or(1, char::len_utf8)
            }
        };
        let end = (start + len).min(b.len());
        let s = text.get(start..end).map(str::to_string).unwrap_or_else(|| String::from_utf8_lossy(&b[start..end]).into_owned());
        let line_start = b[..start].iter().rposition(|&c| c == b'\n').map_or(0, |p| p + 1);
        let line_end = b[start..].iter().position(|&c| c == b'\n').map_or(b.len(), |p| start + p);
        let line_text = String::from_utf8_lossy(&b[line_start..line_end]).trim_end_matches('\r').to_string();
        let col = String::from_utf8_lossy(&b[line_start..start]).chars().count();
        let ctx = format!("\n>>> {line_text}\n>>> {}^", " ".repeat(col));
        toks.push(Tok { text: s, line: tok_line, ctx });
        i = end;
    }
}

/// Position of `needle` in `hay` at or after `from`.
fn find_sub(hay: &[u8], needle: &[u8], from: usize) -> Option<usize> {
    if needle.is_empty() || hay.len() < needle.len() {
        return None;
    }
    (from..=hay.len() - needle.len()).find(|&k| hay[k..].starts_with(needle))
}

// ---------------------------------------------------------------------------------------------
// Parser (lld's ScriptParser::readVersionScript / readDynamicList)
// ---------------------------------------------------------------------------------------------

struct Parser<'a> {
    toks: Vec<Tok>,
    pos: usize,
    lex_err: Option<String>,
    file: &'a str,
    /// Line of the last consumed token (lld's `prevTokLine`); errors are reported there.
    prev_line: u32,
    /// The last consumed token's context lines (lld's `setError` shows them).
    prev_ctx: String,
}

impl<'a> Parser<'a> {
    fn new(text: &str, file: &'a str) -> Self {
        let (toks, lex_err) = tokenize(text, file);
        Parser { toks, pos: 0, lex_err, file, prev_line: 1, prev_ctx: String::new() }
    }

    fn err(&self, msg: &str) -> String {
        format!("{}:{}: {}{}", self.file, self.prev_line, msg, self.prev_ctx)
    }

    /// An error lld reports without context lines (at the end of the input).
    fn err_plain(&self, msg: &str) -> String {
        format!("{}:{}: {}", self.file, self.prev_line, msg)
    }

    /// The next token's text, "" at end of input.
    fn peek(&self) -> Result<&str, String> {
        match self.toks.get(self.pos) {
            Some(t) => Ok(&t.text),
            None => match &self.lex_err {
                Some(e) => Err(e.clone()),
                None => Ok(""),
            },
        }
    }

    /// Consumes and returns the next token's text ("" at end of input).
    fn next(&mut self) -> Result<String, String> {
        match self.toks.get(self.pos) {
            Some(t) => {
                self.prev_line = t.line;
                self.prev_ctx = t.ctx.clone();
                self.pos += 1;
                Ok(t.text.clone())
            }
            None => match &self.lex_err {
                Some(e) => Err(e.clone()),
                None => Ok(String::new()),
            },
        }
    }

    fn consume(&mut self, s: &str) -> Result<bool, String> {
        if self.peek()? != s {
            return Ok(false);
        }
        self.next()?;
        Ok(true)
    }

    fn expect(&mut self, s: &str) -> Result<(), String> {
        let tok = self.next()?;
        if tok == s {
            return Ok(());
        }
        if tok.is_empty() {
            Err(self.err_plain("unexpected EOF"))
        } else {
            Err(self.err(&format!("{s} expected, but got {tok}")))
        }
    }

    /// lld's `till`: the next token unless it is `end` (consumed; `None`); EOF is an error.
    fn till(&mut self, end: &str) -> Result<Option<String>, String> {
        let tok = self.next()?;
        if tok == end {
            return Ok(None);
        }
        if tok.is_empty() {
            return Err(self.err_plain("unexpected EOF"));
        }
        Ok(Some(tok))
    }

    /// `{ global: a; b; local: c; extern "C++" { ... }; }` after the opening brace, up to and
    /// including the closing one. Returns (locals, globals).
    fn read_symbols(&mut self) -> Result<(Vec<Pattern>, Vec<Pattern>), String> {
        let mut locals = Vec::new();
        let mut globals = Vec::new();
        let mut in_local = false;
        while let Some(tok) = self.till("}")? {
            let line = self.prev_line;
            if tok == "extern" {
                let ext = self.read_extern()?;
                if in_local {
                    locals.extend(ext)
                } else {
                    globals.extend(ext)
                }
            } else {
                if tok == "local:" || (tok == "local" && self.consume(":")?) {
                    in_local = true;
                    continue;
                }
                if tok == "global:" || (tok == "global" && self.consume(":")?) {
                    in_local = false;
                    continue;
                }
                // lld decides "wildcard" on the raw token, so a quoted "foo*" outside an
                // extern block is still a glob (ScriptParser.cpp readSymbols).
                let kind = if has_wildcard(&tok) { PatternKind::Glob } else { PatternKind::Exact };
                let p = Pattern { text: unquote(&tok).to_string(), kind, lang: Lang::C, line };
                if in_local {
                    locals.push(p)
                } else {
                    globals.push(p)
                }
            }
            self.expect(";")?;
        }
        Ok((locals, globals))
    }

    /// `extern "C++" { ns::*; "f(int, double)" };` after the `extern` keyword; the last
    /// semicolon inside the braces is optional.
    fn read_extern(&mut self) -> Result<Vec<Pattern>, String> {
        let tok = self.next()?;
        let is_cxx = tok == "\"C++\"";
        if !is_cxx && tok != "\"C\"" {
            return Err(self.err("Unknown language"));
        }
        self.expect("{")?;
        let lang = if is_cxx { Lang::Cxx } else { Lang::C };
        let mut ret = Vec::new();
        while let Some(tok) = self.till("}")? {
            let line = self.prev_line;
            // Inside extern blocks a quoted pattern is always exact.
            let kind = if !tok.starts_with('"') && has_wildcard(&tok) { PatternKind::Glob } else { PatternKind::Exact };
            ret.push(Pattern { text: unquote(&tok).to_string(), kind, lang, line });
            if self.consume("}")? {
                return Ok(ret);
            }
            self.expect(";")?;
        }
        Ok(ret)
    }
}

/// lld's `hasWildcard`: any of `?*[` anywhere in the (raw) token.
fn has_wildcard(s: &str) -> bool {
    s.bytes().any(|c| matches!(c, b'?' | b'*' | b'['))
}

/// lld's `unquote`: strips the surrounding double quotes of a quoted token.
fn unquote(s: &str) -> &str {
    if s.starts_with('"') && s.len() >= 2 {
        s.get(1..s.len() - 1).unwrap_or("")
    } else {
        s
    }
}

/// Checks every glob the way lld compiles them in `scanVersionScript` (the pattern itself and
/// `pattern@VERSION`), so an invalid glob is a parse error here rather than a link-time one.
fn validate_globs(versions: &[VersionDef], file: &str) -> Result<(), String> {
    for v in versions {
        let lists: [(&[Pattern], &str); 2] =
            if v.name.is_empty() { [(&v.globals, "global"), (&v.locals, "local")] } else { [(&v.globals, v.name.as_str()), (&v.locals, v.name.as_str())] };
        for (pats, ver) in lists {
            for p in pats.iter().filter(|p| p.kind == PatternKind::Glob) {
                let with_ver = format!("{}@{}", p.text, ver);
                for text in [p.text.as_str(), with_ver.as_str()] {
                    if let Err(e) = Glob::compile(text.as_bytes()) {
                        return Err(format!("{file}:{}: {e}: {text}", p.line));
                    }
                }
            }
        }
    }
    Ok(())
}

/// Parses one `--version-script` file. `file` names it in error messages, which follow lld's
/// wording: `foo.map:3: ; expected, but got }`.
pub fn parse(text: &str, file: &str) -> Result<VersionScript, String> {
    let mut p = Parser::new(text, file);
    let mut versions: Vec<VersionDef> = Vec::new();
    let mut name_lines: Vec<u32> = Vec::new();
    if p.consume("{")? {
        // readAnonymousDeclaration
        let (locals, globals) = p.read_symbols()?;
        versions.push(VersionDef { name: String::new(), parents: Vec::new(), globals, locals });
        name_lines.push(1);
        p.expect(";")?;
    } else {
        if p.peek()?.is_empty() {
            return Err(p.err("unexpected EOF"));
        }
        loop {
            let t = p.peek()?;
            if t == "}" || t.is_empty() {
                break;
            }
            let name = p.next()?;
            let line = p.prev_line;
            if name == "{" {
                return Err(p.err("anonymous version definition is used in combination with other version definitions"));
            }
            p.expect("{")?;
            // readVersionDeclaration
            let (locals, globals) = p.read_symbols()?;
            let mut parents = Vec::new();
            let t = p.next()?;
            if t != ";" {
                if !t.is_empty() {
                    parents.push(t);
                }
                p.expect(";")?;
            }
            versions.push(VersionDef { name, parents, globals, locals });
            name_lines.push(line);
        }
    }
    let t = p.peek()?;
    if !t.is_empty() {
        return Err(p.err(&format!("EOF expected, but got {t}")));
    }
    // lld accepts a repeated version name silently (and emits two verdefs of that name); GNU
    // ld rejects it, and so do we, within one file.
    for (k, v) in versions.iter().enumerate() {
        if !v.name.is_empty() && versions[..k].iter().any(|w| w.name == v.name) {
            let line = name_lines.get(k).copied().unwrap_or(1);
            return Err(format!("{file}:{line}: duplicate version name: {}", v.name));
        }
    }
    validate_globs(&versions, file)?;
    Ok(VersionScript { versions, index: OnceLock::new() })
}

/// Parses one `--dynamic-list` file: `{ a; b*; extern "C++" { "f(int)"; }; };`.
pub fn parse_dynamic_list(text: &str, file: &str) -> Result<Vec<Pattern>, String> {
    let mut p = Parser::new(text, file);
    p.expect("{")?;
    let (locals, globals) = p.read_symbols()?;
    p.expect(";")?;
    let t = p.peek()?;
    if !t.is_empty() {
        return Err(p.err(&format!("EOF expected, but got {t}")));
    }
    if !locals.is_empty() {
        return Err(p.err("\"local:\" scope not supported in --dynamic-list"));
    }
    // lld compiles dynamic-list globs as they are (no `@VERSION` variant).
    for g in globals.iter().filter(|g| g.kind == PatternKind::Glob) {
        if let Err(e) = Glob::compile(g.text.as_bytes()) {
            return Err(format!("{file}:{}: {e}: {}", g.line, g.text));
        }
    }
    Ok(globals)
}

// ---------------------------------------------------------------------------------------------
// Symbol names: version suffixes and demangling
// ---------------------------------------------------------------------------------------------

/// Splits `foo@VER` / `foo@@VER` (from `.symver` in objects) at the first `@`, as lld's
/// `Symbol::parseSymbolVersion` does: `(name, version, is_default)` where `is_default` is
/// true for `@@`. `None` when the name has no `@`. A name ending in `@` (or `@@`) yields an
/// empty version: lld then just strips the suffix and assigns no version.
pub fn split_versioned(name: &[u8]) -> Option<(&[u8], &[u8], bool)> {
    // memchr: every defined symbol's name is looked at, and Rust's names are long.
    let pos = memchr::memchr(b'@', name)?;
    let base = &name[..pos];
    let ver = &name[pos + 1..];
    match ver.first() {
        Some(b'@') => Some((base, &ver[1..], true)),
        _ => Some((base, ver, false)),
    }
}

/// True when the first `@` is immediately followed by another (`foo@@VER`).
fn is_default_versioned(name: &[u8]) -> bool {
    match memchr::memchr(b'@', name) {
        Some(p) => name.get(p + 1) == Some(&b'@'),
        None => false,
    }
}

/// The key lld's symbol table files a name under: `foo@@VER` is filed as `foo`, everything
/// else (including `foo@VER`) under its full name (SymbolTable::insert).
fn table_key(name: &[u8]) -> &[u8] {
    match name.iter().position(|&c| c == b'@') {
        Some(p) if name.get(p + 1) == Some(&b'@') => &name[..p],
        _ => name,
    }
}

/// The demangled form lld matches `extern "C++"` patterns against
/// (SymbolTable::getDemangledSyms): `foo@@V` and `foo@` demangle the part before `@`;
/// `foo@V` demangles it and keeps `@V`.
fn demangled_key(name: &[u8]) -> Vec<u8> {
    match name.iter().position(|&c| c == b'@') {
        None => crate::util::demangle::itanium(name),
        Some(p) if p + 1 == name.len() || name[p + 1] == b'@' => crate::util::demangle::itanium(&name[..p]),
        Some(p) => {
            let mut d = crate::util::demangle::itanium(&name[..p]);
            d.extend_from_slice(&name[p..]);
            d
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Globs (llvm::GlobPattern without brace expansion, as lld uses it)
// ---------------------------------------------------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum GTok {
    Lit(u8),
    /// `/` after the literal prefix: matches `/` or `\`.
    Slash,
    Any,
    Star,
    Class(usize),
}

/// An llvm `GlobPattern` for the options that take one (`--undefined-glob=`).
pub struct SymbolGlob(Glob);

impl SymbolGlob {
    /// The compiled pattern, or llvm's message for a malformed one.
    pub fn new(pat: &[u8]) -> Result<SymbolGlob, String> {
        Glob::compile(pat).map(SymbolGlob)
    }

    pub fn matches(&self, name: &[u8]) -> bool {
        self.0.matches(name)
    }
}

#[derive(Debug, Clone)]
struct Glob {
    toks: Vec<GTok>,
    classes: Vec<[u64; 4]>,
}

fn class_set(c: &mut [u64; 4], b: u8) {
    c[(b >> 6) as usize] |= 1u64 << (b & 63);
}

fn class_has(c: &[u64; 4], b: u8) -> bool {
    c[(b >> 6) as usize] & (1u64 << (b & 63)) != 0
}

/// llvm's bracket expansion: `a-cx` is {a,b,c,x}; a reversed range is an error.
fn expand_class(mut s: &[u8], original: &[u8]) -> Result<[u64; 4], String> {
    let mut set = [0u64; 4];
    while s.len() >= 3 {
        let (start, end) = (s[0], s[2]);
        if s[1] != b'-' {
            class_set(&mut set, start);
            s = &s[1..];
            continue;
        }
        if start > end {
            return Err(format!("invalid glob pattern: {}", String::from_utf8_lossy(original)));
        }
        for c in start..=end {
            class_set(&mut set, c);
        }
        s = &s[3..];
    }
    for &c in s {
        class_set(&mut set, c);
    }
    Ok(set)
}

impl Glob {
    fn compile(pat: &[u8]) -> Result<Glob, String> {
        let mut g = Glob { toks: Vec::new(), classes: Vec::new() };
        // The literal prefix (up to the first of `?*[{\`) is compared as is.
        let prefix = pat.iter().position(|c| b"?*[{\\".contains(c)).unwrap_or(pat.len());
        g.toks.extend(pat[..prefix].iter().map(|&c| GTok::Lit(c)));
        let s = &pat[prefix..];
        let mut i = 0;
        while i < s.len() {
            match s[i] {
                b'[' => {
                    // `]` right after `[` (or after `[!`/`[^`... only the first char) is literal.
                    i += 1;
                    let j = if i < s.len() { s[i + 1..].iter().position(|&c| c == b']').map(|p| p + i + 1) } else { None };
                    let Some(j) = j else {
                        return Err("invalid glob pattern, unmatched '['".to_string());
                    };
                    let chars = &s[i..j];
                    let invert = matches!(chars.first(), Some(b'^' | b'!'));
                    let mut set = expand_class(if invert { &chars[1..] } else { chars }, s)?;
                    if invert {
                        for w in set.iter_mut() {
                            *w = !*w;
                        }
                    }
                    g.classes.push(set);
                    g.toks.push(GTok::Class(g.classes.len() - 1));
                    i = j + 1;
                }
                b'\\' => {
                    let Some(&c) = s.get(i + 1) else {
                        return Err("invalid glob pattern, stray '\\'".to_string());
                    };
                    g.toks.push(GTok::Lit(c));
                    i += 2;
                }
                b'*' => {
                    g.toks.push(GTok::Star);
                    i += 1;
                }
                b'?' => {
                    g.toks.push(GTok::Any);
                    i += 1;
                }
                b'/' => {
                    g.toks.push(GTok::Slash);
                    i += 1;
                }
                c => {
                    g.toks.push(GTok::Lit(c));
                    i += 1;
                }
            }
        }
        Ok(g)
    }

    /// Star-backtracking match, as llvm's SubGlobPattern::match.
    fn matches(&self, s: &[u8]) -> bool {
        let (mut p, mut i) = (0usize, 0usize);
        let mut star: Option<(usize, usize)> = None;
        while i < s.len() {
            let c = s[i];
            let ok = match self.toks.get(p) {
                Some(GTok::Star) => {
                    star = Some((p + 1, i));
                    p += 1;
                    continue;
                }
                Some(GTok::Lit(l)) => *l == c,
                Some(GTok::Slash) => c == b'/' || c == b'\\',
                Some(GTok::Any) => true,
                Some(GTok::Class(k)) => self.classes.get(*k).is_some_and(|set| class_has(set, c)),
                None => false,
            };
            if ok {
                p += 1;
                i += 1;
                continue;
            }
            match star {
                Some((sp, si)) => {
                    p = sp;
                    i = si + 1;
                    star = Some((sp, si + 1));
                }
                None => return false,
            }
        }
        self.toks.get(p..).unwrap_or(&[]).iter().all(|t| *t == GTok::Star)
    }
}

// ---------------------------------------------------------------------------------------------
// Assignment (lld's SymbolTable::scanVersionScript, evaluated per symbol)
// ---------------------------------------------------------------------------------------------

#[derive(Debug, Clone, Copy)]
struct ExactEntry {
    prio: u32,
    assign: VersionAssign,
    local: bool,
}

#[derive(Debug)]
struct WildRule {
    assign: VersionAssign,
    lang: Lang,
    /// The pattern as written; `None` if it failed to compile (never after `parse`).
    glob: Option<Glob>,
    /// `pattern@VERSION`, matched against non-default versioned names (`foo@VERSION`).
    glob_at: Option<Glob>,
}

#[derive(Debug, Default)]
struct Index {
    /// Exact patterns by text, per language, in priority order (lld's first pass, which skips
    /// versioned names unless the pattern is local).
    exact: [HashMap<Vec<u8>, Vec<ExactEntry>>; 2],
    /// `pattern@VERSION` for the second pass (versioned names, no skipping); first wins.
    exact_at: [HashMap<Vec<u8>, ExactEntry>; 2],
    /// Wildcards other than `*`, then `*`, in priority order.
    wild: Vec<WildRule>,
    needs_demangle: bool,
}

fn lang_slot(l: Lang) -> usize {
    match l {
        Lang::C => 0,
        Lang::Cxx => 1,
    }
}

/// One of lld's `VersionDefinition`s: the pseudo-definitions `local` (anonymous locals) and
/// `global` (anonymous globals), then the named versions.
struct Def<'a> {
    name: &'a str,
    id: VersionAssign,
    non_local: &'a [Pattern],
    local: &'a [Pattern],
}

/// The anonymous patterns of all anonymous versions, in order (lld appends them all to its
/// `VER_NDX_LOCAL` / `VER_NDX_GLOBAL` definitions): (locals, globals).
fn anon_patterns(versions: &[VersionDef]) -> (Vec<Pattern>, Vec<Pattern>) {
    let anon = versions.iter().filter(|v| v.name.is_empty());
    let locals = anon.clone().flat_map(|v| v.locals.iter().cloned()).collect();
    let globals = anon.flat_map(|v| v.globals.iter().cloned()).collect();
    (locals, globals)
}

/// lld's `ctx.arg.versionDefinitions`: `local`, `global`, then the named versions.
fn lld_defs<'a>(versions: &'a [VersionDef], anon_locals: &'a [Pattern], anon_globals: &'a [Pattern]) -> Vec<Def<'a>> {
    let mut defs = vec![
        Def { name: "local", id: VersionAssign::Local, non_local: &[], local: anon_locals },
        Def { name: "global", id: VersionAssign::Global, non_local: anon_globals, local: &[] },
    ];
    for (k, v) in versions.iter().filter(|v| !v.name.is_empty()).enumerate() {
        let id = VersionAssign::Named(u16::try_from(k + 2).unwrap_or(u16::MAX));
        defs.push(Def { name: &v.name, id, non_local: &v.globals, local: &v.locals });
    }
    defs
}

fn is_star(p: &Pattern) -> bool {
    p.kind == PatternKind::Glob && p.text == "*"
}

impl Index {
    fn build(versions: &[VersionDef]) -> Index {
        let (anon_locals, anon_globals) = anon_patterns(versions);
        let defs = lld_defs(versions, &anon_locals, &anon_globals);

        let mut ix = Index::default();
        let mut prio: u32 = 0;
        // 1. Exact patterns, definitions in order, non-local before local
        //    (SymbolTable.cpp scanVersionScript, first loop; assignExactVersion).
        for d in &defs {
            for (pats, assign, local) in [(d.non_local, d.id, false), (d.local, VersionAssign::Local, true)] {
                for p in pats.iter().filter(|p| p.kind == PatternKind::Exact) {
                    let slot = lang_slot(p.lang);
                    ix.needs_demangle |= p.lang == Lang::Cxx;
                    let e = ExactEntry { prio, assign, local };
                    ix.exact[slot].entry(p.text.as_bytes().to_vec()).or_default().push(e);
                    let at = format!("{}@{}", p.text, d.name).into_bytes();
                    ix.exact_at[slot].entry(at).or_insert(e);
                    prio += 1;
                }
            }
        }
        // 2. Wildcards other than "*", definitions in reverse, non-local before local.
        // 3. "*", definitions in reverse, non-local before local (lowest priority).
        for star_pass in [false, true] {
            for d in defs.iter().rev() {
                for (pats, assign) in [(d.non_local, d.id), (d.local, VersionAssign::Local)] {
                    for p in pats.iter().filter(|p| p.kind == PatternKind::Glob && is_star(p) == star_pass) {
                        ix.needs_demangle |= p.lang == Lang::Cxx;
                        ix.wild.push(WildRule {
                            assign,
                            lang: p.lang,
                            glob: Glob::compile(p.text.as_bytes()).ok(),
                            glob_at: Glob::compile(format!("{}@{}", p.text, d.name).as_bytes()).ok(),
                        });
                    }
                }
            }
        }
        ix
    }

    fn assign(&self, name: &[u8]) -> Option<VersionAssign> {
        let has_at = name.contains(&b'@');
        let dem = if self.needs_demangle { Some(demangled_key(name)) } else { None };
        let keys: [Option<&[u8]>; 2] = [Some(table_key(name)), dem.as_deref()];

        // Exact matches: the lowest priority number wins.
        let mut best: Option<ExactEntry> = None;
        let mut offer = |e: ExactEntry| {
            if best.is_none_or(|b| e.prio < b.prio) {
                best = Some(e);
            }
        };
        for (slot, key) in keys.iter().enumerate() {
            let Some(key) = *key else { continue };
            if let Some(list) = self.exact[slot].get(key) {
                // A versioned name keeps its own version unless a pattern hides it
                // (assignExactVersion: `versionId != VER_NDX_LOCAL && name contains '@'`).
                if let Some(e) = list.iter().find(|e| !has_at || e.local) {
                    offer(*e);
                }
            }
            if let Some(e) = self.exact_at[slot].get(key) {
                offer(*e);
            }
        }
        if let Some(b) = best {
            return Some(b.assign);
        }

        // Wildcards: the first rule in priority order that matches.
        let non_default = !is_default_versioned(name);
        for r in &self.wild {
            let subject: &[u8] = match r.lang {
                Lang::C => name,
                Lang::Cxx => dem.as_deref().unwrap_or(name),
            };
            // First pass: unversioned names only; second: `pattern@VERSION` against names
            // that are not `@@` defaults (findAllByVersion's `check`).
            if !has_at && r.glob.as_ref().is_some_and(|g| g.matches(subject)) {
                return Some(r.assign);
            }
            if non_default && r.glob_at.as_ref().is_some_and(|g| g.matches(subject)) {
                return Some(r.assign);
            }
        }
        None
    }
}

impl VersionScript {
    /// Merges several `--version-script` files in command-line order (lld reads each into
    /// the same list of definitions): all anonymous patterns join one anonymous version at
    /// index 0, named versions follow in order. Repeated names across files are kept as
    /// separate versions, as lld does.
    pub fn merge(scripts: Vec<VersionScript>) -> VersionScript {
        let mut anon = VersionDef::default();
        let mut has_anon = false;
        let mut named = Vec::new();
        for s in scripts {
            for v in s.versions {
                if v.name.is_empty() {
                    has_anon = true;
                    anon.globals.extend(v.globals);
                    anon.locals.extend(v.locals);
                } else {
                    named.push(v);
                }
            }
        }
        let mut versions = Vec::with_capacity(named.len() + 1);
        if has_anon {
            versions.push(anon);
        }
        versions.extend(named);
        VersionScript { versions, index: OnceLock::new() }
    }

    /// What the script says about the defined symbol `name` (the name as it appears in the
    /// object, mangled, possibly with an `@VER`/`@@VER` suffix): `Local` (hide it), `Global`
    /// (`VER_NDX_GLOBAL`), `Named(i)` (verdef index), or `None` when no pattern matches.
    ///
    /// Mirrors lld's `SymbolTable::scanVersionScript` (see the module docs for the order).
    /// As in lld, a name with a version suffix is matched by exact `local:` patterns on its
    /// base name, and by `pattern@VERSION` for `name@VERSION` in the version that lists
    /// `pattern`; otherwise its own suffix decides, which is the caller's job
    /// ([`split_versioned`]). `extern "C++"` patterns are matched against the full demangled
    /// name (`ns::foo(int)`).
    pub fn assign(&self, name: &[u8]) -> Option<VersionAssign> {
        self.index.get_or_init(|| Index::build(&self.versions)).assign(name)
    }

    /// Named versions in verdef order (the first has index 2).
    pub fn version_names(&self) -> Vec<&str> {
        self.versions.iter().filter(|v| !v.name.is_empty()).map(|v| v.name.as_str()).collect()
    }

    /// lld's warnings about `*` patterns (SymbolTable.cpp scanVersionScript, assignAsterisk):
    /// `*` under both `local:` and `global:`, or `global: *` in several versions. At most one.
    pub fn warnings(&self) -> Vec<String> {
        let (anon_locals, anon_globals) = anon_patterns(&self.versions);
        let defs = lld_defs(&self.versions, &anon_locals, &anon_globals);
        let (mut global_found, mut local_found) = (false, false);
        for (k, d) in defs.iter().enumerate().rev() {
            for (pats, is_local) in [(d.non_local, false), (d.local, true)] {
                for _ in pats.iter().filter(|p| is_star(p)) {
                    if !(is_local || k > 0) {
                        continue;
                    }
                    if (is_local && global_found) || (!is_local && local_found) {
                        return vec!["wildcard pattern '*' is used for both 'local' and 'global' \
                                     scopes in version script"
                            .to_string()];
                    }
                    if !is_local && global_found {
                        return vec!["wildcard pattern '*' is used for multiple version \
                                     definitions in version script"
                            .to_string()];
                    }
                    local_found = is_local;
                    global_found = !is_local;
                }
            }
        }
        Vec::new()
    }

    /// lld's `attempt to reassign symbol` warnings (assignExactVersion): an exact pattern
    /// naming a `defined` symbol that an earlier version (or scope) already took, in lld's
    /// order (each version's globals, then its locals).
    pub fn reassign_warnings<'n>(&self, defined: impl IntoIterator<Item = &'n [u8]>) -> Vec<String> {
        let (anon_locals, anon_globals) = anon_patterns(&self.versions);
        let defs = lld_defs(&self.versions, &anon_locals, &anon_globals);
        let keys: std::collections::HashSet<Vec<u8>> = defined.into_iter().map(|n| table_key(n).to_vec()).collect();
        let mut assigned: std::collections::HashMap<&str, String> = std::collections::HashMap::new();
        let mut out = Vec::new();
        for d in &defs {
            for (pats, is_local) in [(d.non_local, false), (d.local, true)] {
                for p in pats.iter().filter(|p| p.kind == PatternKind::Exact && p.lang != Lang::Cxx) {
                    if !keys.contains(p.text.as_bytes()) {
                        continue;
                    }
                    let label = match (is_local, d.id) {
                        (true, _) | (false, VersionAssign::Local) => "VER_NDX_LOCAL".to_string(),
                        (false, VersionAssign::Global) => "VER_NDX_GLOBAL".to_string(),
                        (false, VersionAssign::Named(_)) => format!("version '{}'", d.name),
                    };
                    match assigned.get(p.text.as_str()) {
                        None => {
                            assigned.insert(p.text.as_str(), label);
                        }
                        Some(old) if *old != label => out.push(format!("attempt to reassign symbol '{}' of {old} to {label}", p.text)),
                        Some(_) => {}
                    }
                }
            }
        }
        out
    }

    /// lld's `--no-undefined-version` check (its default): one message per exact pattern that
    /// matches none of the `defined` symbol names (as `pattern` or `pattern@VERSION`), in lld's
    /// order, e.g. "version script assignment of 'V1' to symbol 'foo' failed: symbol not
    /// defined". `defined` should hold the names of defined, common and lazy symbols.
    pub fn undefined_version_errors<'n>(&self, defined: impl IntoIterator<Item = &'n [u8]>) -> Vec<String> {
        let (anon_locals, anon_globals) = anon_patterns(&self.versions);
        let defs = lld_defs(&self.versions, &anon_locals, &anon_globals);
        let all = || defs.iter().flat_map(|d| d.non_local.iter().chain(d.local));
        let need_cxx = all().any(|p| p.kind == PatternKind::Exact && p.lang == Lang::Cxx);
        let mut keys: [std::collections::HashSet<Vec<u8>>; 2] = Default::default();
        for n in defined {
            keys[0].insert(table_key(n).to_vec());
            if need_cxx {
                keys[1].insert(demangled_key(n));
            }
        }
        let mut out = Vec::new();
        for d in &defs {
            for (pats, label) in [(d.non_local, d.name), (d.local, "local")] {
                for p in pats.iter().filter(|p| p.kind == PatternKind::Exact) {
                    let set = &keys[lang_slot(p.lang)];
                    let at = format!("{}@{}", p.text, d.name);
                    if !set.contains(p.text.as_bytes()) && !set.contains(at.as_bytes()) {
                        out.push(format!(
                            "version script assignment of '{label}' to symbol '{}' failed: \
                             symbol not defined",
                            p.text
                        ));
                    }
                }
            }
        }
        out
    }

    /// The verdef index of a named version (first definition of that name), as used for a
    /// `foo@VER` / `foo@@VER` suffix.
    pub fn version_index(&self, name: &[u8]) -> Option<u16> {
        let k = self.versions.iter().filter(|v| !v.name.is_empty()).position(|v| v.name.as_bytes() == name)?;
        u16::try_from(k + 2).ok()
    }
}

/// Matches symbols against `--dynamic-list` patterns the way lld's
/// `SymbolTable::handleDynamicList` does: exact patterns by name (the demangled name for
/// `extern "C++"`), globs against every name that is not an `@@` default version.
#[derive(Debug)]
pub struct DynamicListMatcher {
    exact: [std::collections::HashSet<Vec<u8>>; 2],
    globs: Vec<(Lang, Glob)>,
    needs_demangle: bool,
}

impl DynamicListMatcher {
    pub fn new(patterns: &[Pattern]) -> DynamicListMatcher {
        let mut m = DynamicListMatcher { exact: Default::default(), globs: Vec::new(), needs_demangle: false };
        for p in patterns {
            m.needs_demangle |= p.lang == Lang::Cxx;
            match p.kind {
                PatternKind::Exact => {
                    m.exact[lang_slot(p.lang)].insert(p.text.as_bytes().to_vec());
                }
                PatternKind::Glob => {
                    if let Ok(g) = Glob::compile(p.text.as_bytes()) {
                        m.globs.push((p.lang, g));
                    }
                }
            }
        }
        m
    }

    pub fn matches(&self, name: &[u8]) -> bool {
        let dem = if self.needs_demangle { Some(demangled_key(name)) } else { None };
        if self.exact[0].contains(table_key(name)) {
            return true;
        }
        if let Some(d) = &dem {
            if self.exact[1].contains(d.as_slice()) {
                return true;
            }
        }
        if is_default_versioned(name) {
            return false;
        }
        self.globs.iter().any(|(lang, g)| match lang {
            Lang::C => g.matches(name),
            Lang::Cxx => g.matches(dem.as_deref().unwrap_or(name)),
        })
    }
}

// ---------------------------------------------------------------------------------------------
// Tests
// ---------------------------------------------------------------------------------------------

#[cfg(test)]
mod tests {
    use super::*;
    use VersionAssign::*;

    fn vs(text: &str) -> VersionScript {
        match parse(text, "t.map") {
            Ok(v) => v,
            Err(e) => panic!("parse failed: {e}\n{text}"),
        }
    }

    fn perr(text: &str) -> String {
        match parse(text, "t.map") {
            Ok(v) => panic!("expected an error for {text:?}, got {v:?}"),
            Err(e) => e,
        }
    }

    fn pat(text: &str, kind: PatternKind, lang: Lang, line: u32) -> Pattern {
        Pattern { text: text.to_string(), kind, lang, line }
    }

    // --- parsing -----------------------------------------------------------------------------

    #[test]
    fn anonymous_with_labels() {
        let s = vs("{ global: foo; bar*; local: *; };");
        assert_eq!(s.versions.len(), 1);
        let v = &s.versions[0];
        assert_eq!(v.name, "");
        assert_eq!(v.globals, vec![pat("foo", PatternKind::Exact, Lang::C, 1), pat("bar*", PatternKind::Glob, Lang::C, 1)]);
        assert_eq!(v.locals, vec![pat("*", PatternKind::Glob, Lang::C, 1)]);
        assert!(s.version_names().is_empty());
    }

    #[test]
    fn anonymous_without_labels_is_global() {
        let s = vs("{ foo; bar; };");
        assert_eq!(s.versions[0].globals.len(), 2);
        assert!(s.versions[0].locals.is_empty());
        assert_eq!(s.assign(b"foo"), Some(Global));
        assert_eq!(s.assign(b"baz"), None);
    }

    #[test]
    fn named_versions_and_parents() {
        let s = vs("VER_1 {\n global:\n  a;\n local:\n  *;\n};\nVER_2 {\n  b;\n} VER_1;\n");
        assert_eq!(s.version_names(), vec!["VER_1", "VER_2"]);
        assert_eq!(s.versions[0].globals, vec![pat("a", PatternKind::Exact, Lang::C, 3)]);
        assert_eq!(s.versions[0].locals, vec![pat("*", PatternKind::Glob, Lang::C, 5)]);
        assert!(s.versions[0].parents.is_empty());
        assert_eq!(s.versions[1].parents, vec!["VER_1".to_string()]);
        assert_eq!(s.assign(b"a"), Some(Named(2)));
        assert_eq!(s.assign(b"b"), Some(Named(3)));
        assert_eq!(s.assign(b"c"), Some(Local));
        assert_eq!(s.version_index(b"VER_2"), Some(3));
        assert_eq!(s.version_index(b"VER_9"), None);
    }

    #[test]
    fn separate_colon_labels_and_empty_versions() {
        let s = vs("V1 { global : a ; local : b ; } ; V2 { } ;");
        assert_eq!(s.versions[0].globals[0].text, "a");
        assert_eq!(s.versions[0].locals[0].text, "b");
        assert!(s.versions[1].globals.is_empty());
        // A bare `local` not followed by ':' is a pattern named "local".
        let s = vs("{ local; };");
        assert_eq!(s.versions[0].globals[0].text, "local");
    }

    #[test]
    fn extern_blocks() {
        let s = vs("V1 {\n  extern \"C++\" {\n    ns::foo*;\n    \"ns::bar(int)\";\n    \"q*\"\n  };\n  extern \"C\" { \"c*\"; d*; };\n  local: extern \"C++\" { hidden*; };\n};");
        let g = &s.versions[0].globals;
        assert_eq!(g[0], pat("ns::foo*", PatternKind::Glob, Lang::Cxx, 3));
        assert_eq!(g[1], pat("ns::bar(int)", PatternKind::Exact, Lang::Cxx, 4));
        assert_eq!(g[2], pat("q*", PatternKind::Exact, Lang::Cxx, 5));
        assert_eq!(g[3], pat("c*", PatternKind::Exact, Lang::C, 7));
        assert_eq!(g[4], pat("d*", PatternKind::Glob, Lang::C, 7));
        assert_eq!(s.versions[0].locals, vec![pat("hidden*", PatternKind::Glob, Lang::Cxx, 8)]);
    }

    #[test]
    fn quoted_patterns_outside_extern_are_still_globs() {
        // lld: readSymbols computes hasWildcard on the quoted token.
        let s = vs("{ \"foo*\"; local: *; };");
        assert_eq!(s.versions[0].globals[0], pat("foo*", PatternKind::Glob, Lang::C, 1));
        assert_eq!(s.assign(b"foo1"), Some(Global));
        // Inside extern "C" a quoted pattern is exact.
        let s = vs("{ extern \"C\" { \"foo*\"; }; local: *; };");
        assert_eq!(s.assign(b"foo1"), Some(Local));
        assert_eq!(s.assign(b"foo*"), Some(Global));
    }

    #[test]
    fn comments() {
        let s = vs("# leading comment\nV1 { /* block\n comment */ a; # trailing\n b; };\n# end");
        assert_eq!(s.versions[0].globals, vec![pat("a", PatternKind::Exact, Lang::C, 3), pat("b", PatternKind::Exact, Lang::C, 4)]);
        let s = vs("{ local: *; # comment\n}; # comment");
        assert_eq!(s.versions[0].locals.len(), 1);
    }

    #[test]
    fn dynamic_list() {
        let l = parse_dynamic_list("{ a; b*; extern \"C++\" { \"f(int)\"; }; };", "d.list").unwrap();
        assert_eq!(
            l,
            vec![pat("a", PatternKind::Exact, Lang::C, 1), pat("b*", PatternKind::Glob, Lang::C, 1), pat("f(int)", PatternKind::Exact, Lang::Cxx, 1)]
        );
        let m = DynamicListMatcher::new(&l);
        assert!(m.matches(b"a"));
        assert!(m.matches(b"bcd"));
        assert!(m.matches(b"_Z1fi"));
        assert!(!m.matches(b"_Z1fl"));
        assert!(!m.matches(b"c"));
        assert!(m.matches(b"b@V1"));
        assert!(!m.matches(b"b@@V1"));
        assert!(m.matches(b"a@@V1"));
        assert_eq!(
            parse_dynamic_list("{ local: a; };", "d.list").unwrap_err(),
            "d.list:1: \"local:\" scope not supported in --dynamic-list\n>>> { local: a; };\n>>>              ^"
        );
        assert_eq!(parse_dynamic_list("{ a; };\nx", "d.list").unwrap_err(), "d.list:1: EOF expected, but got x\n>>> { a; };\n>>>       ^");
        assert_eq!(parse_dynamic_list("{ a; }", "d.list").unwrap_err(), "d.list:1: unexpected EOF");
        assert_eq!(parse_dynamic_list("", "d.list").unwrap_err(), "d.list:1: unexpected EOF");
        assert_eq!(parse_dynamic_list("{ a[; };", "d.list").unwrap_err(), "d.list:1: invalid glob pattern, unmatched '[': a[");
    }

    // --- precedence --------------------------------------------------------------------------

    #[test]
    fn exact_beats_glob() {
        let s = vs("V1 { global: foo_bar; }; V2 { global: foo*; };");
        assert_eq!(s.assign(b"foo_bar"), Some(Named(2)));
        assert_eq!(s.assign(b"foo_baz"), Some(Named(3)));
        let s = vs("V1 { global: foo*; }; V2 { global: foo_bar; };");
        assert_eq!(s.assign(b"foo_bar"), Some(Named(3)));
        assert_eq!(s.assign(b"foo_baz"), Some(Named(2)));
        // An exact local beats a global wildcard of the same version.
        let s = vs("V1 { global: f*; local: foo; };");
        assert_eq!(s.assign(b"foo"), Some(Local));
        assert_eq!(s.assign(b"fab"), Some(Named(2)));
    }

    #[test]
    fn exact_order_first_definition_wins() {
        let s = vs("V1 { foo; }; V2 { foo; };");
        assert_eq!(s.assign(b"foo"), Some(Named(2)));
        // Same named version: global before local.
        let s = vs("V1 { global: foo; local: foo; };");
        assert_eq!(s.assign(b"foo"), Some(Named(2)));
        // Anonymous: lld files its locals under VER_NDX_LOCAL, processed before
        // VER_NDX_GLOBAL, so the exact local wins there.
        let s = vs("{ global: foo; local: foo; };");
        assert_eq!(s.assign(b"foo"), Some(Local));
        // Anonymous exact patterns precede every named one.
        let m = VersionScript::merge(vec![vs("V1 { foo; };"), vs("{ local: foo; };")]);
        assert_eq!(m.assign(b"foo"), Some(Local));
    }

    #[test]
    fn later_wildcard_wins() {
        let s = vs("V1 { global: foo*; }; V2 { global: fo*; };");
        assert_eq!(s.assign(b"foo_x"), Some(Named(3)));
        assert_eq!(s.assign(b"fox"), Some(Named(3)));
        let s = vs("V1 { global: fo*; }; V2 { local: foo*; };");
        assert_eq!(s.assign(b"foo_x"), Some(Local));
        assert_eq!(s.assign(b"fox"), Some(Named(2)));
        // Within one version, global wildcards before local ones.
        let s = vs("V1 { global: f*; local: fo*; };");
        assert_eq!(s.assign(b"foo"), Some(Named(2)));
        // A named version's wildcard beats the anonymous version's.
        let m = VersionScript::merge(vec![vs("{ global: foo*; };"), vs("V1 { local: f*; };")]);
        assert_eq!(m.assign(b"foo1"), Some(Local));
    }

    #[test]
    fn local_star_is_catch_all() {
        let s = vs("V1 { global: foo*; local: *; };");
        assert_eq!(s.assign(b"foo"), Some(Named(2)));
        assert_eq!(s.assign(b"bar"), Some(Local));
        // `*` ranks below every other wildcard, whatever the version order.
        let s = vs("V1 { local: *; }; V2 { global: a*; }; V3 { local: x; };");
        assert_eq!(s.assign(b"abc"), Some(Named(3)));
        assert_eq!(s.assign(b"zzz"), Some(Local));
        assert_eq!(s.assign(b"x"), Some(Local));
        // Among `*` patterns the later version wins.
        let s = vs("V1 { local: *; }; V2 { global: *; };");
        assert_eq!(s.assign(b"q"), Some(Named(3)));
        let s = vs("V1 { global: *; }; V2 { local: *; };");
        assert_eq!(s.assign(b"q"), Some(Local));
        let m = VersionScript::merge(vec![vs("{ local: *; };"), vs("V1 { global: f?o; };")]);
        assert_eq!(m.assign(b"foo"), Some(Named(2)));
        assert_eq!(m.assign(b"fooo"), Some(Local));
    }

    #[test]
    fn extern_cxx_demangled_matching() {
        let s = vs("V1 {\n global:\n  extern \"C++\" {\n    ns::foo*;\n    \"ns::bar(int)\";\n  };\n  local: *;\n};");
        assert_eq!(s.assign(b"_ZN2ns3fooEi"), Some(Named(2)));
        assert_eq!(s.assign(b"_ZN2ns3fooEv"), Some(Named(2)));
        assert_eq!(s.assign(b"_ZN2ns3barEi"), Some(Named(2)));
        assert_eq!(s.assign(b"_ZN2ns3barEl"), Some(Local));
        assert_eq!(s.assign(b"ns_plain"), Some(Local));
        let s = vs("{ extern \"C++\" { \"ns::foo(int)\"; }; local: *; };");
        assert_eq!(s.assign(b"_ZN2ns3fooEi"), Some(Global));
        assert_eq!(s.assign(b"_ZN2ns3fooEl"), Some(Local));
        // C patterns see the mangled name; C++ patterns match an undemangleable name as is.
        let s = vs("{ _ZN2ns*; extern \"C++\" { plain; }; local: *; };");
        assert_eq!(s.assign(b"_ZN2ns3fooEi"), Some(Global));
        assert_eq!(s.assign(b"plain"), Some(Global));
        assert_eq!(s.assign(b"_Zgarbage"), Some(Local));
        // Templates and const member functions use the usual demangler spelling.
        let s = vs("{ extern \"C++\" { \"Foo::get() const\"; \"int max<int>(int, int)\"; }; };");
        assert_eq!(s.assign(b"_ZNK3Foo3getEv"), Some(Global));
        assert_eq!(s.assign(b"_Z3maxIiET_S0_S0_"), Some(Global));
        // llvm's spelling: `>>` and ` (.suffix)`.
        let s = vs("{ extern \"C++\" { \"std::vector<int, std::allocator<int>>::size() const\"; \"f() (.cold.1)\"; g*; }; };");
        assert_eq!(s.assign(b"_ZNKSt6vectorIiSaIiEE4sizeEv"), Some(Global));
        assert_eq!(s.assign(b"_Z1fv.cold.1"), Some(Global));
        assert_eq!(s.assign(b"_Z1gv.llvm.42"), Some(Global));
        assert_eq!(crate::util::demangle::itanium(b"_Z1gv.llvm.42"), b"g() (.llvm.42)".to_vec());
        assert_eq!(crate::util::demangle::itanium(b"_Z1fv.constprop.0.isra.1"), b"f() (.constprop.0.isra.1)".to_vec());
        assert_eq!(
            crate::util::demangle::itanium(b"_Z1fSt6vectorIS_IiSaIiEESaIS1_EE"),
            b"f(std::vector<std::vector<int, std::allocator<int>>, std::allocator<std::vector<int, std::allocator<int>>>>)".to_vec()
        );
    }

    #[test]
    fn versioned_names() {
        let s = vs("V1 { global: foo; bar*; }; V2 { local: baz; };");
        // `foo@@V1`: the version from the name decides (the script says nothing).
        assert_eq!(s.assign(b"foo@@V1"), None);
        // `foo@V1` is matched as `foo@V1` in version V1.
        assert_eq!(s.assign(b"foo@V1"), Some(Named(2)));
        assert_eq!(s.assign(b"foo@V2"), None);
        assert_eq!(s.assign(b"bar1@V1"), Some(Named(2)));
        assert_eq!(s.assign(b"bar1@@V1"), None);
        // Exact local patterns hide versioned names too.
        assert_eq!(s.assign(b"baz@@V1"), Some(Local));
        let s = vs("{ local: *; };");
        assert_eq!(s.assign(b"foo@V1"), None);
        assert_eq!(s.assign(b"foo"), Some(Local));
        assert_eq!(split_versioned(b"foo@@V1"), Some((&b"foo"[..], &b"V1"[..], true)));
        assert_eq!(split_versioned(b"foo@V1"), Some((&b"foo"[..], &b"V1"[..], false)));
        assert_eq!(split_versioned(b"foo@"), Some((&b"foo"[..], &b""[..], false)));
        assert_eq!(split_versioned(b"foo"), None);
        assert_eq!(split_versioned(b"a@b@@c"), Some((&b"a"[..], &b"b@@c"[..], false)));
    }

    #[test]
    fn globs() {
        let s = vs("{ a[b-d]x; n[!0-9]; c[^z]; q?; e\\*; \"s]*\"; r[]]; local: *; };");
        for (n, want) in [
            (&b"acx"[..], Global),
            (b"aex", Local),
            (b"nz", Global),
            (b"n5", Local),
            (b"cy", Global),
            (b"cz", Local),
            (b"q1", Global),
            (b"q12", Local),
            (b"e*", Global),
            (b"ex", Local),
            (b"s]zz", Global),
            (b"r]", Global),
        ] {
            assert_eq!(s.assign(n), Some(want), "{}", String::from_utf8_lossy(n));
        }
        assert!(Glob::compile(b"a*b*c").unwrap().matches(b"aXbYbZc"));
        assert!(!Glob::compile(b"a*b*c").unwrap().matches(b"aXbYbZ"));
        assert!(Glob::compile(b"**").unwrap().matches(b""));
        // '/' in the literal prefix is literal; after it, it also matches '\\' (llvm quirk).
        assert!(!Glob::compile(b"x/*").unwrap().matches(b"x\\y"));
        assert!(Glob::compile(b"*x/y").unwrap().matches(b"ax\\y"));
        assert_eq!(perr("{ a[; };"), "t.map:1: invalid glob pattern, unmatched '[': a[");
        assert_eq!(perr("{\n a[z-a]; };"), "t.map:2: invalid glob pattern: [z-a]: a[z-a]");
        assert_eq!(perr("{ \"a*\\\"; };"), "t.map:1: invalid glob pattern, stray '\\': a*\\");
    }

    #[test]
    fn merged_scripts() {
        let m = VersionScript::merge(vec![vs("{ global: a; };"), vs("V1 { b; };"), vs("{ local: *; };"), vs("V2 { c*; };")]);
        assert_eq!(m.versions.len(), 3);
        assert_eq!(m.versions[0].name, "");
        assert_eq!(m.versions[0].globals.len(), 1);
        assert_eq!(m.versions[0].locals.len(), 1);
        assert_eq!(m.version_names(), vec!["V1", "V2"]);
        assert_eq!(m.assign(b"a"), Some(Global));
        assert_eq!(m.assign(b"b"), Some(Named(2)));
        assert_eq!(m.assign(b"cc"), Some(Named(3)));
        assert_eq!(m.assign(b"z"), Some(Local));
        let m = VersionScript::merge(vec![vs("V1 { a; };"), vs("V2 { b; };")]);
        assert_eq!(m.versions[0].name, "V1");
        assert_eq!(m.assign(b"b"), Some(Named(3)));
        assert!(VersionScript::merge(vec![]).versions.is_empty());
        assert_eq!(VersionScript::merge(vec![]).assign(b"x"), None);
    }

    #[test]
    fn star_warnings() {
        assert!(vs("V1 { global: a; local: *; };").warnings().is_empty());
        assert_eq!(
            vs("V1 { global: *; }; V2 { local: *; };").warnings(),
            vec!["wildcard pattern '*' is used for both 'local' and 'global' scopes in version script"]
        );
        assert_eq!(
            vs("V1 { global: *; }; V2 { global: *; };").warnings(),
            vec!["wildcard pattern '*' is used for multiple version definitions in version script"]
        );
    }

    #[test]
    fn undefined_version_check() {
        let s = vs("V1 { global: foo; bar; b*; extern \"C++\" { \"ns::f(int)\"; }; local: gone; };");
        let defined: [&[u8]; 3] = [b"foo", b"bar@V1", b"_ZN2ns1fEi"];
        assert_eq!(s.undefined_version_errors(defined), vec!["version script assignment of 'local' to symbol 'gone' failed: symbol not defined"]);
        let s = vs("{ global: x; };");
        assert_eq!(s.undefined_version_errors(std::iter::empty()), vec!["version script assignment of 'global' to symbol 'x' failed: symbol not defined"]);
    }

    // --- errors ------------------------------------------------------------------------------

    #[test]
    fn error_missing_semicolon() {
        assert_eq!(perr("VER_1 {\n  global:\n    foo\n};\n"), "t.map:4: ; expected, but got }\n>>> };\n>>> ^");
        assert_eq!(perr("V1 { a; } V0 V2;"), "t.map:1: ; expected, but got V2\n>>> V1 { a; } V0 V2;\n>>>              ^");
        assert_eq!(perr("{ extern \"C++\" { a; b; } }"), "t.map:1: ; expected, but got }\n>>> { extern \"C++\" { a; b; } }\n>>>                          ^");
    }

    #[test]
    fn error_missing_brace() {
        assert_eq!(perr("VER_1 {\n  global: foo;\n\n"), "t.map:2: unexpected EOF");
        assert_eq!(perr("{ foo;"), "t.map:1: unexpected EOF");
        assert_eq!(perr("V1 { a; }"), "t.map:1: unexpected EOF");
        assert_eq!(perr("V1 { a; };\nV2\n"), "t.map:2: unexpected EOF");
        assert_eq!(perr(""), "t.map:1: unexpected EOF");
        assert_eq!(perr("\n\n# only a comment\n"), "t.map:1: unexpected EOF");
    }

    #[test]
    fn error_unknown_token() {
        assert_eq!(perr("V1 ( a; };"), "t.map:1: { expected, but got (\n>>> V1 ( a; };\n>>>    ^");
        assert_eq!(perr("V1 {\n extern \"Java\" { a; };\n};"), "t.map:2: Unknown language\n>>>  extern \"Java\" { a; };\n>>>         ^");
        assert_eq!(perr("}"), "t.map:1: EOF expected, but got }");
        // lld has no "unknown directive" in version scripts: a stray word is a version name.
        assert_eq!(perr("x"), "t.map:1: unexpected EOF");
        assert_eq!(perr("{ a; };\nV1 { b; };"), "t.map:1: EOF expected, but got V1\n>>> { a; };\n>>>       ^");
    }

    #[test]
    fn error_two_anonymous_versions() {
        assert_eq!(perr("{ a; };\n{ b; };"), "t.map:1: EOF expected, but got {\n>>> { a; };\n>>>       ^");
        assert_eq!(
            perr("V1 { a; };\n{ b; };"),
            "t.map:2: anonymous version definition is used in combination with other version definitions\n>>> { b; };\n>>> ^"
        );
    }

    #[test]
    fn error_unterminated_comment_and_quote() {
        assert_eq!(perr("V1 {\n a; /* oops\n };"), "t.map:2: unclosed comment in a linker script");
        assert_eq!(perr("/* x"), "t.map:1: unclosed comment in a linker script");
        assert_eq!(perr("V1 {\n\n  \"foo;\n};"), "t.map:3: unclosed quote");
        // An earlier syntax error wins over a later lexing error, as in lld's lazy lexer.
        assert_eq!(perr("V1 { a }\n\"oops"), "t.map:1: ; expected, but got }\n>>> V1 { a }\n>>>        ^");
    }

    #[test]
    fn error_duplicate_version() {
        assert_eq!(perr("V1 { a; };\nV2 { b; };\nV1 { c; };"), "t.map:3: duplicate version name: V1");
    }

    // --- robustness --------------------------------------------------------------------------

    const FUZZ_N: usize = 20_000;

    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        fn below(&mut self, n: usize) -> usize {
            (self.next() % n.max(1) as u64) as usize
        }
    }

    const NAMES: [&[u8]; 12] = [b"foo", b"foo@V1", b"foo@@V1", b"_ZN2ns3fooEi", b"_Z", b"_ZZZZ", b"@", b"@@", b"", b"a@", b"__Z3barv", b"\xff\xfe*"];

    fn exercise(text: &str) {
        if let Ok(s) = parse(text, "f.map") {
            for n in NAMES {
                let _ = s.assign(n);
            }
            let _ = s.version_names();
            let _ = s.warnings();
            let _ = s.undefined_version_errors(NAMES);
            let m = VersionScript::merge(vec![s.clone(), s]);
            let _ = m.assign(b"foo");
        }
        if let Ok(l) = parse_dynamic_list(text, "f.list") {
            let m = DynamicListMatcher::new(&l);
            for n in NAMES {
                let _ = m.matches(n);
            }
        }
    }

    #[test]
    fn fuzz_random_bytes() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        for _ in 0..FUZZ_N {
            let len = rng.below(64);
            let bytes: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
            exercise(&String::from_utf8_lossy(&bytes));
        }
    }

    #[test]
    fn fuzz_token_soup() {
        const VOCAB: [&str; 30] = [
            "{", "}", ";", ":", "global", "local", "global:", "local:", "extern", "\"C++\"", "\"C\"", "V1", "V2", "foo*", "a[", "[!a-z]", "\\", "\"q*\"",
            "#c\n", "/*x*/", "/*", "\"", "\n", " ", "*", "?", "ns::f*", "<<=", "+=", "é",
        ];
        let mut rng = Rng(0x1234_5678_9abc_def1);
        for _ in 0..FUZZ_N {
            let n = rng.below(24);
            let mut s = String::new();
            for _ in 0..n {
                s.push_str(VOCAB[rng.below(VOCAB.len())]);
                if rng.below(2) == 0 {
                    s.push(' ');
                }
            }
            exercise(&s);
        }
        for n in 0..2_000u64 {
            let mut rng = Rng(n.wrapping_mul(0x2545_f491_4f6c_dd1d) | 1);
            let name: Vec<u8> = (0..rng.below(40)).map(|_| b"_ZNSt3fooEvi0123456789@*?[]IEdKPRv"[rng.below(34)]).collect();
            let s = vs("{ extern \"C++\" { *f*; \"x\"; }; a*; local: *; };");
            let _ = s.assign(&name);
        }
    }

    #[test]
    fn every_truncation_of_valid_scripts() {
        let scripts = [
            "# header\nVER_1 {\n  global:\n    foo; \"bar*\";\n    extern \"C++\" {\n      ns::*;\n      \"f(int)\"\n    };\n  local:\n    *; /* all */\n};\nVER_2 {\n  baz[a-c];\n} VER_1;\n",
            "{ global: a; b*; extern \"C\" { c; }; local: *; };",
            "{ a; b*; extern \"C++\" { \"f(int)\"; }; };",
        ];
        for s in scripts {
            assert!(parse(s, "x").is_ok() || parse_dynamic_list(s, "x").is_ok(), "{s}");
            for (i, _) in s.char_indices() {
                exercise(&s[..i]);
            }
            exercise(s);
        }
    }
}
