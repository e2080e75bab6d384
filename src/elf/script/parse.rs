//! The parser of linker-script layout commands: `SECTIONS`, `MEMORY`, `PHDRS`, assignments
//! (`PROVIDE`, `HIDDEN`, `ASSERT`), `REGION_ALIAS`, `INSERT`, `INCLUDE`, and the expression
//! language, into `ast` values with `file:line` positions.
//!
//! The lexer is context-aware, as linker scripts need: in an expression `a+b` is three tokens,
//! in a statement `*(.text.*)` is a file pattern and a parenthesised list, and in an input
//! section description `*libc.a:printf.o` is one pattern. The caller (`script::Parser`) hands
//! over at a command keyword; `parse_command` returns the command and where it ends.

use super::ast::*;
use crate::error::{Error, Result};

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Stmt,
    Expr,
    Pattern,
}

#[derive(Debug, Clone)]
struct Tok {
    text: String,
    quoted: bool,
    start: usize,
}

impl Tok {
    fn is(&self, s: &str) -> bool {
        !self.quoted && self.text == s
    }
}

pub struct Lexer<'a> {
    name: &'a str,
    src: &'a [u8],
    pos: usize,
    /// The start of the last token read (for messages).
    last: usize,
    /// Directories searched for `INCLUDE` files (besides the current directory).
    include_dirs: &'a [std::path::PathBuf],
    include_depth: usize,
}

const ASSIGN_OPS: &[&str] = &["<<=", ">>=", "+=", "-=", "*=", "/=", "&=", "|=", "^="];
const EXPR_OPS: &[&str] = &["<<=", ">>=", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||", "+=", "-=", "*=", "/=", "&=", "|=", "^="];

impl<'a> Lexer<'a> {
    fn line_of(&self, pos: usize) -> usize {
        self.src[..pos.min(self.src.len())].iter().filter(|&&c| c == b'\n').count() + 1
    }

    pub fn here(&self) -> Pos {
        Pos { file: self.name.to_string(), line: self.line_of(self.last), ctx: String::new() }
    }

    /// `here()` with lld's context lines at the last token read (for errors reported after the
    /// command is parsed).
    fn here_ctx(&self) -> Pos {
        let msg = self.err_at(self.last, "").to_string();
        let ctx = msg.find('\n').map(|k| msg[k..].to_string()).unwrap_or_default();
        Pos { ctx, ..self.here() }
    }

    fn err_at(&self, at: usize, msg: &str) -> Error {
        let at = at.min(self.src.len());
        let line = self.line_of(at);
        let ls = self.src[..at].iter().rposition(|&c| c == b'\n').map_or(0, |p| p + 1);
        let le = self.src[at..].iter().position(|&c| c == b'\n').map_or(self.src.len(), |p| at + p);
        let text = String::from_utf8_lossy(&self.src[ls..le]).trim_end_matches('\r').to_string();
        let col = String::from_utf8_lossy(&self.src[ls..at]).chars().count();
        let loc = super::ast::Loc { line, col, line_text: text };
        Error::new(super::ast::format_error(self.name, Some(&loc), line, msg))
    }

    fn err(&self, msg: &str) -> Error {
        self.err_at(self.last, msg)
    }

    fn eof_err(&self) -> Error {
        let line = self.line_of(self.src.len().saturating_sub(1));
        Error::new(format!("{}:{}: unexpected EOF", self.name, line))
    }

    fn skip_ws(&mut self) -> Result<()> {
        let s = self.src;
        while self.pos < s.len() {
            let c = s[self.pos];
            if c.is_ascii_whitespace() {
                self.pos += 1;
            } else if c == b'/' && s.get(self.pos + 1) == Some(&b'*') {
                let start = self.pos;
                match s[self.pos + 2..].windows(2).position(|w| w == b"*/") {
                    Some(p) => self.pos += p + 4,
                    None => return Err(Error::new(format!("{}:{}: unclosed comment in a linker script", self.name, self.line_of(start)))),
                }
            } else if c == b'#' {
                while self.pos < s.len() && s[self.pos] != b'\n' {
                    self.pos += 1;
                }
            } else {
                break;
            }
        }
        Ok(())
    }

    fn read(&mut self, mode: Mode) -> Result<Option<Tok>> {
        self.skip_ws()?;
        let s = self.src;
        let start = self.pos;
        if start >= s.len() {
            return Ok(None);
        }
        self.last = start;
        let c = s[start];
        if c == b'"' {
            match s[start + 1..].iter().position(|&c| c == b'"') {
                Some(p) => {
                    self.pos = start + 1 + p + 1;
                    let text = String::from_utf8_lossy(&s[start + 1..start + 1 + p]).into_owned();
                    return Ok(Some(Tok { text, quoted: true, start }));
                }
                None => return Err(Error::new(format!("{}:{}: unclosed quote", self.name, self.line_of(start)))),
            }
        }
        let rest = &s[start..];
        let word = |c: u8| -> bool {
            match mode {
                Mode::Expr => c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b'$' | b'@'),
                Mode::Stmt => {
                    !c.is_ascii_whitespace() && !matches!(c, b'(' | b')' | b'{' | b'}' | b';' | b',' | b'"' | b'=' | b':' | b'<' | b'>' | b'&' | b'|')
                }
                Mode::Pattern => !c.is_ascii_whitespace() && !matches!(c, b'(' | b')' | b'{' | b'}' | b';' | b',' | b'"'),
            }
        };
        if mode != Mode::Pattern {
            let ops = if mode == Mode::Expr { EXPR_OPS } else { ASSIGN_OPS };
            for op in ops {
                if rest.starts_with(op.as_bytes()) {
                    self.pos = start + op.len();
                    return Ok(Some(Tok { text: op.to_string(), quoted: false, start }));
                }
            }
        }
        if !word(c) {
            // One punctuation character.
            let ch = String::from_utf8_lossy(&rest[..utf8_len(c).min(rest.len())]).into_owned();
            self.pos = start + ch.len().max(1);
            return Ok(Some(Tok { text: ch, quoted: false, start }));
        }
        let mut end = start;
        while end < s.len() && word(s[end]) {
            if s[end] == b'/' && s.get(end + 1) == Some(&b'*') {
                break;
            }
            if mode == Mode::Stmt && end > start && ASSIGN_OPS.iter().any(|op| s[end..].starts_with(op.as_bytes())) {
                break;
            }
            end += 1;
        }
        self.pos = end;
        Ok(Some(Tok { text: String::from_utf8_lossy(&s[start..end]).into_owned(), quoted: false, start }))
    }

    fn next(&mut self, mode: Mode) -> Result<Tok> {
        match self.read(mode)? {
            Some(t) => Ok(t),
            None => Err(self.eof_err()),
        }
    }

    fn peek(&mut self, mode: Mode) -> Result<Option<Tok>> {
        let (p, l) = (self.pos, self.last);
        let t = self.read(mode);
        self.pos = p;
        self.last = l;
        t
    }

    fn peek_is(&mut self, mode: Mode, s: &str) -> Result<bool> {
        Ok(self.peek(mode)?.is_some_and(|t| t.is(s)))
    }

    fn consume(&mut self, mode: Mode, s: &str) -> Result<bool> {
        if self.peek_is(mode, s)? {
            self.next(mode)?;
            return Ok(true);
        }
        Ok(false)
    }

    fn expect(&mut self, mode: Mode, s: &str) -> Result<()> {
        let t = self.next(mode)?;
        if !t.is(s) {
            return Err(self.err_at(t.start, &format!("{s} expected, but got {}", t.text)));
        }
        Ok(())
    }
}

fn utf8_len(c: u8) -> usize {
    match c {
        0xf0..=0xff => 4,
        0xe0..=0xef => 3,
        0xc0..=0xdf => 2,
        _ => 1,
    }
}

/// An output section description with nothing but its name and place.
fn blank_desc(name: String, pos: Pos) -> OutDesc {
    OutDesc {
        name,
        addr: None,
        noload: false,
        nonalloc: false,
        lma: None,
        align: None,
        subalign: None,
        constraint: None,
        cmds: Vec::new(),
        region: None,
        lma_region: None,
        phdrs: Vec::new(),
        fill: None,
        pos,
    }
}

/// lld's numbers: `0x` hex, `h` suffix hex, decimal with `K`/`M` suffixes.
pub fn parse_int(tok: &str) -> Option<u64> {
    let lower = tok.to_ascii_lowercase();
    if let Some(h) = lower.strip_prefix("0x") {
        return u64::from_str_radix(h, 16).ok();
    }
    if let Some(h) = lower.strip_suffix('h') {
        return u64::from_str_radix(h, 16).ok();
    }
    if let Some(d) = lower.strip_suffix('k') {
        return d.parse::<u64>().ok().map(|v| v * 1024);
    }
    if let Some(d) = lower.strip_suffix('m') {
        return d.parse::<u64>().ok().map(|v| v * 1024 * 1024);
    }
    if !lower.bytes().all(|c| c.is_ascii_digit()) || lower.is_empty() {
        return None;
    }
    lower.parse().ok()
}

fn precedence(op: &str) -> i32 {
    match op {
        "*" | "/" | "%" => 8,
        "+" | "-" => 7,
        "<<" | ">>" => 6,
        "<" | "<=" | ">" | ">=" | "==" | "!=" => 5,
        "&" => 4,
        "^" => 3,
        "|" => 2,
        "&&" => 1,
        "||" => 0,
        _ => -1,
    }
}

fn binop(op: &str) -> BinOp {
    match op {
        "*" => BinOp::Mul,
        "/" => BinOp::Div,
        "%" => BinOp::Rem,
        "+" => BinOp::Add,
        "-" => BinOp::Sub,
        "<<" => BinOp::Shl,
        ">>" => BinOp::Shr,
        "<" => BinOp::Lt,
        "<=" => BinOp::Le,
        ">" => BinOp::Gt,
        ">=" => BinOp::Ge,
        "==" => BinOp::Eq,
        "!=" => BinOp::Ne,
        "&" => BinOp::And,
        "^" => BinOp::Xor,
        "|" => BinOp::Or,
        "&&" => BinOp::LAnd,
        _ => BinOp::LOr,
    }
}

fn is_c_ident(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty() && !b[0].is_ascii_digit() && b.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'_' || *c == b'.' || *c == b'$')
}

impl<'a> Lexer<'a> {
    pub fn new(name: &'a str, src: &'a [u8], pos: usize, include_dirs: &'a [std::path::PathBuf]) -> Self {
        Lexer { name, src, pos, last: pos, include_dirs, include_depth: 0 }
    }

    pub fn pos(&self) -> usize {
        self.pos
    }

    pub fn expr(&mut self) -> Result<Expr> {
        let lhs = self.primary()?;
        self.expr1(lhs, 0)
    }

    fn expr1(&mut self, mut lhs: Expr, min_prec: i32) -> Result<Expr> {
        loop {
            let Some(t) = self.peek(Mode::Expr)? else { return Ok(lhs) };
            if t.is("?") {
                self.next(Mode::Expr)?;
                let a = self.expr()?;
                self.expect(Mode::Expr, ":")?;
                let b = self.expr()?;
                return Ok(Expr::Cond(Box::new(lhs), Box::new(a), Box::new(b)));
            }
            if t.quoted {
                return Ok(lhs);
            }
            let p1 = precedence(&t.text);
            if p1 < min_prec || p1 < 0 {
                return Ok(lhs);
            }
            self.next(Mode::Expr)?;
            let mut rhs = self.primary()?;
            while let Some(t2) = self.peek(Mode::Expr)? {
                let p2 = if t2.quoted { -1 } else { precedence(&t2.text) };
                if p2 <= p1 {
                    break;
                }
                rhs = self.expr1(rhs, p2)?;
            }
            lhs = Expr::Bin(binop(&t.text), Box::new(lhs), Box::new(rhs));
        }
    }

    fn paren_expr(&mut self) -> Result<Expr> {
        self.expect(Mode::Expr, "(")?;
        let e = self.expr()?;
        self.expect(Mode::Expr, ")")?;
        Ok(e)
    }

    /// `(name)` read as a statement word (section names such as `.text.foo`).
    fn paren_literal(&mut self) -> Result<String> {
        self.expect(Mode::Expr, "(")?;
        let t = self.next(Mode::Pattern)?;
        self.expect(Mode::Expr, ")")?;
        Ok(t.text)
    }

    fn two_args(&mut self) -> Result<(Expr, Expr)> {
        self.expect(Mode::Expr, "(")?;
        let a = self.expr()?;
        self.expect(Mode::Expr, ",")?;
        let b = self.expr()?;
        self.expect(Mode::Expr, ")")?;
        Ok((a, b))
    }

    fn primary(&mut self) -> Result<Expr> {
        if self.peek_is(Mode::Expr, "(")? {
            return self.paren_expr();
        }
        let t = self.next(Mode::Expr)?;
        if !t.quoted {
            match t.text.as_str() {
                "~" => return Ok(Expr::BitNot(Box::new(self.primary()?))),
                "!" => return Ok(Expr::Not(Box::new(self.primary()?))),
                "-" => return Ok(Expr::Neg(Box::new(self.primary()?))),
                "+" => return self.primary(),
                _ => {}
            }
        }
        if t.quoted {
            return Ok(Expr::Sym(t.text));
        }
        Ok(match t.text.as_str() {
            "ABSOLUTE" => Expr::Absolute(Box::new(self.paren_expr()?)),
            "ADDR" => Expr::Addr(self.paren_literal()?),
            "LOADADDR" => Expr::LoadAddr(self.paren_literal()?),
            "SIZEOF" => Expr::SizeOf(self.paren_literal()?),
            "ALIGNOF" => Expr::AlignOf(self.paren_literal()?),
            "SIZEOF_HEADERS" => Expr::SizeOfHeaders,
            "ALIGN" | "NEXT" => {
                self.expect(Mode::Expr, "(")?;
                let e = self.expr()?;
                if self.consume(Mode::Expr, ")")? {
                    Expr::AlignDot(Box::new(e))
                } else {
                    self.expect(Mode::Expr, ",")?;
                    let a = self.expr()?;
                    self.expect(Mode::Expr, ")")?;
                    Expr::Align(Box::new(e), Box::new(a))
                }
            }
            "ASSERT" => {
                let (e, msg) = self.assert_args()?;
                Expr::Assert(Box::new(e), msg)
            }
            "CONSTANT" => {
                let c = self.paren_literal()?;
                match c.as_str() {
                    "MAXPAGESIZE" => Expr::MaxPageSize,
                    "COMMONPAGESIZE" => Expr::CommonPageSize,
                    // lld's caret: the `)` just read.
                    _ => return Err(self.err(&format!("unknown constant: {c}"))),
                }
            }
            "DATA_SEGMENT_ALIGN" => {
                let (a, _) = self.two_args()?;
                Expr::DataSegmentAlign(Box::new(a))
            }
            "DATA_SEGMENT_END" => {
                self.paren_expr()?;
                Expr::Dot
            }
            "DATA_SEGMENT_RELRO_END" => {
                self.two_args()?;
                Expr::DataSegmentRelroEnd
            }
            "DEFINED" => Expr::Defined(self.paren_literal()?),
            "LENGTH" | "len" | "l" if self.peek_is(Mode::Expr, "(")? => Expr::Length(self.paren_literal()?),
            "ORIGIN" | "org" | "o" if self.peek_is(Mode::Expr, "(")? => Expr::Origin(self.paren_literal()?),
            "MAX" | "MIN" => {
                let (a, b) = self.two_args()?;
                if t.text == "MAX" {
                    Expr::Max(Box::new(a), Box::new(b))
                } else {
                    Expr::Min(Box::new(a), Box::new(b))
                }
            }
            "LOG2CEIL" => Expr::Log2Ceil(Box::new(self.paren_expr()?)),
            "SEGMENT_START" => {
                self.expect(Mode::Expr, "(")?;
                self.next(Mode::Pattern)?;
                self.expect(Mode::Expr, ",")?;
                let e = self.expr()?;
                self.expect(Mode::Expr, ")")?;
                Expr::SegmentStart(Box::new(e))
            }
            "." => Expr::Dot,
            s => {
                if let Some(v) = parse_int(s) {
                    Expr::Num(v)
                } else if s.as_bytes()[0].is_ascii_digit() || !is_c_ident(s) {
                    return Err(self.err_at(t.start, &format!("malformed number: {s}")));
                } else {
                    Expr::Sym(s.to_string())
                }
            }
        })
    }

    fn assert_args(&mut self) -> Result<(Expr, String)> {
        self.expect(Mode::Expr, "(")?;
        let e = self.expr()?;
        self.expect(Mode::Expr, ",")?;
        let msg = self.next(Mode::Pattern)?.text;
        self.expect(Mode::Expr, ")")?;
        Ok((e, msg))
    }

    /// After `name`: `= expr`, `+= expr`, ... (the operator not yet read).
    fn symbol_assign(&mut self, name: String, name_start: usize) -> Result<Assign> {
        let op = self.next(Mode::Expr)?;
        let pos = self.here();
        let text_start = self.pos;
        let e = self.expr()?;
        let text = String::from_utf8_lossy(&self.src[text_start..self.pos]).trim().to_string();
        let e = match op.text.as_str() {
            "=" => e,
            o if ASSIGN_OPS.contains(&o) => {
                let cur = if name == "." { Expr::Dot } else { Expr::Sym(name.clone()) };
                Expr::Bin(binop(&o[..o.len() - 1]), Box::new(cur), Box::new(e))
            }
            _ => return Err(self.err_at(op.start, &format!("unexpected {}", op.text))),
        };
        let _ = name_start;
        Ok(Assign { name, expr: e, provide: false, hidden: false, pos, text })
    }

    /// An assignment starting with token `t` (already read), or `None` when `t` starts none.
    fn assignment(&mut self, t: &Tok) -> Result<Option<Assign>> {
        if t.quoted {
            if self.peek(Mode::Stmt)?.is_some_and(|n| n.is("=") || ASSIGN_OPS.contains(&n.text.as_str())) {
                let a = self.symbol_assign(t.text.clone(), t.start)?;
                self.expect(Mode::Stmt, ";")?;
                return Ok(Some(a));
            }
            return Ok(None);
        }
        let a = match t.text.as_str() {
            "ASSERT" => {
                let pos = self.here();
                let (e, msg) = self.assert_args()?;
                Assign { name: ".".into(), expr: Expr::Assert(Box::new(e), msg), provide: false, hidden: false, pos, text: String::new() }
            }
            "PROVIDE" | "HIDDEN" | "PROVIDE_HIDDEN" => {
                self.expect(Mode::Stmt, "(")?;
                let n = self.next(Mode::Stmt)?;
                // lld: the name, then `=` (a compound assignment is no PROVIDE).
                if let Some(eq) = self.peek(Mode::Stmt)? {
                    if !eq.is("=") {
                        self.next(Mode::Stmt)?;
                        return Err(self.err(&format!("= expected, but got {}", eq.text)));
                    }
                }
                let mut a = self.symbol_assign(n.text, n.start)?;
                self.expect(Mode::Expr, ")")?;
                a.provide = t.text != "HIDDEN";
                a.hidden = t.text != "PROVIDE";
                a
            }
            _ => {
                let Some(n) = self.peek(Mode::Stmt)? else { return Ok(None) };
                if !(n.is("=") || ASSIGN_OPS.contains(&n.text.as_str())) || n.quoted {
                    return Ok(None);
                }
                self.symbol_assign(t.text.clone(), t.start)?
            }
        };
        // lld: `;` after an assignment (optional after ASSERT at the end of a block).
        if !self.consume(Mode::Stmt, ";")? && t.text != "ASSERT" {
            let n = self.next(Mode::Stmt)?;
            return Err(self.err_at(n.start, &format!("; expected, but got {}", n.text)));
        }
        Ok(Some(a))
    }

    fn sort_kind(&mut self) -> Result<SortKind> {
        let Some(t) = self.peek(Mode::Pattern)? else { return Ok(SortKind::Default) };
        let k = match t.text.as_str() {
            "SORT" | "SORT_BY_NAME" => SortKind::Name,
            "SORT_BY_ALIGNMENT" => SortKind::Alignment,
            "SORT_BY_INIT_PRIORITY" => SortKind::Priority,
            "SORT_NONE" => SortKind::None,
            _ => return Ok(SortKind::Default),
        };
        if t.quoted {
            return Ok(SortKind::Default);
        }
        self.next(Mode::Pattern)?;
        Ok(k)
    }

    fn file_patterns(&mut self) -> Result<Globs> {
        let mut v = Vec::new();
        loop {
            let t = self.next(Mode::Pattern)?;
            if t.is(")") {
                return Ok(Globs(v));
            }
            v.push(t.text);
        }
    }

    fn section_list(&mut self, outer: SortKind, inner: SortKind, out: &mut Vec<SectionPattern>) -> Result<()> {
        loop {
            let Some(t) = self.peek(Mode::Pattern)? else { return Err(self.eof_err()) };
            if t.is(")") {
                return Ok(());
            }
            let mut exclude = Globs::default();
            if t.is("EXCLUDE_FILE") {
                self.next(Mode::Pattern)?;
                self.expect(Mode::Pattern, "(")?;
                exclude = self.file_patterns()?;
            }
            let mut names = Vec::new();
            loop {
                let Some(t) = self.peek(Mode::Pattern)? else { return Err(self.eof_err()) };
                if t.is(")") || t.is("EXCLUDE_FILE") {
                    break;
                }
                if t.is("(") || t.is("{") || t.is("}") || t.is(";") {
                    self.next(Mode::Pattern)?;
                    return Err(self.err_at(t.start, "section pattern is expected"));
                }
                self.next(Mode::Pattern)?;
                if t.is(",") {
                    continue;
                }
                names.push(t.text);
            }
            if names.is_empty() {
                return Err(self.err("section pattern is expected"));
            }
            out.push(SectionPattern { exclude_files: exclude, names: Globs(names), sort_outer: outer, sort_inner: inner });
        }
    }

    fn input_rules(&mut self, file: String, exclude_files: Globs, keep: bool) -> Result<InputDesc> {
        self.expect(Mode::Pattern, "(")?;
        let mut patterns = Vec::new();
        loop {
            if self.consume(Mode::Pattern, ")")? {
                break;
            }
            let outer = self.sort_kind()?;
            if outer != SortKind::Default {
                self.expect(Mode::Pattern, "(")?;
                let inner = self.sort_kind()?;
                if inner != SortKind::Default {
                    self.expect(Mode::Pattern, "(")?;
                    self.section_list(outer, inner, &mut patterns)?;
                    self.expect(Mode::Pattern, ")")?;
                } else {
                    self.section_list(outer, inner, &mut patterns)?;
                }
                self.expect(Mode::Pattern, ")")?;
            } else {
                self.section_list(outer, SortKind::Default, &mut patterns)?;
            }
        }
        Ok(InputDesc { file, exclude_files, patterns, keep, with_flags: 0, without_flags: 0 })
    }

    /// An input section description starting with `t` (a file pattern, `KEEP`,
    /// `EXCLUDE_FILE`).
    fn input_desc(&mut self, t: Tok) -> Result<InputDesc> {
        if t.is("KEEP") {
            self.expect(Mode::Pattern, "(")?;
            let mut flags = (0, 0);
            if self.consume(Mode::Pattern, "INPUT_SECTION_FLAGS")? {
                flags = self.section_flags()?;
            }
            let f = self.next(Mode::Pattern)?;
            let mut d = self.input_desc_file(f, true)?;
            (d.with_flags, d.without_flags) = flags;
            self.expect(Mode::Pattern, ")")?;
            return Ok(d);
        }
        if t.is("INPUT_SECTION_FLAGS") {
            let flags = self.section_flags()?;
            let f = self.next(Mode::Pattern)?;
            let mut d = self.input_desc_file(f, false)?;
            (d.with_flags, d.without_flags) = flags;
            return Ok(d);
        }
        self.input_desc_file(t, false)
    }

    /// `INPUT_SECTION_FLAGS(flag & !flag ...)` after the keyword (lld's
    /// readInputSectionFlags): flags a section must have and must not have.
    fn section_flags(&mut self) -> Result<(u64, u64)> {
        self.expect(Mode::Pattern, "(")?;
        let (mut with, mut without) = (0u64, 0u64);
        loop {
            let t = self.next(Mode::Pattern)?;
            let name = t.text.trim_matches('"');
            let (negated, name) = match name.strip_prefix('!') {
                Some(n) => (true, n),
                None => (false, name),
            };
            let flag = parse_int(name).or(match name {
                "SHF_WRITE" => Some(0x1),
                "SHF_ALLOC" => Some(0x2),
                "SHF_EXECINSTR" => Some(0x4),
                "SHF_MERGE" => Some(0x10),
                "SHF_STRINGS" => Some(0x20),
                "SHF_INFO_LINK" => Some(0x40),
                "SHF_LINK_ORDER" => Some(0x80),
                "SHF_OS_NONCONFORMING" => Some(0x100),
                "SHF_GROUP" => Some(0x200),
                "SHF_TLS" => Some(0x400),
                "SHF_COMPRESSED" => Some(0x800),
                "SHF_EXCLUDE" => Some(0x8000_0000),
                "SHF_ARM_PURECODE" => Some(0x2000_0000),
                _ => None,
            });
            match flag {
                Some(v) if negated => without |= v,
                Some(v) => with |= v,
                None => return Err(self.err_at(t.start, &format!("unrecognised flag: {name}"))),
            }
            if self.consume(Mode::Pattern, ")")? {
                return Ok((with, without));
            }
            if !self.consume(Mode::Pattern, "&")? {
                let t = self.next(Mode::Pattern)?;
                return Err(self.err_at(t.start, "expected & or )"));
            }
        }
    }

    fn input_desc_file(&mut self, t: Tok, keep: bool) -> Result<InputDesc> {
        if t.is("EXCLUDE_FILE") {
            self.expect(Mode::Pattern, "(")?;
            let ex = self.file_patterns()?;
            let f = self.next(Mode::Pattern)?;
            return self.input_rules(f.text, ex, keep);
        }
        if !self.peek_is(Mode::Pattern, "(")? {
            // A bare file name: all its sections.
            let pat = SectionPattern {
                exclude_files: Globs::default(),
                names: Globs(vec!["*".into()]),
                sort_outer: SortKind::Default,
                sort_inner: SortKind::Default,
            };
            return Ok(InputDesc { file: t.text, exclude_files: Globs::default(), patterns: vec![pat], keep, with_flags: 0, without_flags: 0 });
        }
        self.input_rules(t.text, Globs::default(), keep)
    }

    /// A fill value: `FILL(expr)` takes an expression, `} =fill` only a primary (lld's
    /// readFill), so `=0x90 /DISCARD/ : ...` is not read as a division.
    fn fill_value(&mut self, primary_only: bool) -> Result<u32> {
        let at = self.pos;
        let e = if primary_only { self.primary()? } else { self.expr()? };
        let v = match e {
            Expr::Num(v) => v,
            _ => super::eval::const_value(&e).unwrap_or(0),
        };
        if v > u32::MAX as u64 {
            return Err(self.err_at(at, &format!("filler expression result does not fit 32-bit: 0x{v:x}")));
        }
        Ok(v as u32)
    }

    fn section_directive(&mut self, d: &mut OutDesc) -> Result<bool> {
        let (p, l) = (self.pos, self.last);
        if !self.consume(Mode::Stmt, "(")? {
            return Ok(false);
        }
        let t = self.next(Mode::Stmt)?;
        match t.text.as_str() {
            "NOLOAD" => d.noload = true,
            "COPY" | "INFO" | "OVERLAY" => d.nonalloc = true,
            _ => {
                self.pos = p;
                self.last = l;
                return Ok(false);
            }
        }
        self.expect(Mode::Stmt, ")")?;
        Ok(true)
    }

    fn output_section(&mut self, name: String) -> Result<OutDesc> {
        let pos = self.here();
        let mut d = blank_desc(name, pos);
        if !self.peek_is(Mode::Stmt, ":")? && !self.section_directive(&mut d)? {
            d.addr = Some(self.expr()?);
            if self.peek_is(Mode::Stmt, "(")? && !self.section_directive(&mut d)? {
                let paren = self.next(Mode::Stmt)?;
                let t = self.peek(Mode::Stmt)?.map(|t| t.text).unwrap_or_default();
                return Err(self.err_at(paren.start, &format!("unknown section directive: {t}")));
            }
        }
        self.expect(Mode::Stmt, ":")?;
        if self.consume(Mode::Stmt, "AT")? {
            d.lma = Some(self.paren_expr()?);
        }
        if self.consume(Mode::Stmt, "ALIGN")? {
            d.align = Some(self.paren_expr()?);
        }
        if self.consume(Mode::Stmt, "SUBALIGN")? {
            d.subalign = Some(self.paren_expr()?);
        }
        if self.consume(Mode::Stmt, "ONLY_IF_RO")? {
            d.constraint = Some(Constraint::ReadOnly);
        } else if self.consume(Mode::Stmt, "ONLY_IF_RW")? {
            d.constraint = Some(Constraint::ReadWrite);
        }
        self.expect(Mode::Stmt, "{")?;
        loop {
            let t = self.next(Mode::Pattern)?;
            if t.is("}") {
                break;
            }
            if t.is(";") {
                continue;
            }
            // Re-read as a statement word when it may be an assignment (`x=1` or `. += 4`).
            let (sp, sl) = (self.pos, self.last);
            self.pos = t.start;
            let ts = self.next(Mode::Stmt)?;
            if let Some(a) = self.assignment(&ts)? {
                d.cmds.push(InCmd::Assign(a));
                continue;
            }
            self.pos = sp;
            self.last = sl;
            if t.quoted {
                d.cmds.push(InCmd::Input(self.input_desc(t)?));
                continue;
            }
            match t.text.as_str() {
                "BYTE" | "SHORT" | "LONG" | "QUAD" => {
                    let size = match t.text.as_str() {
                        "BYTE" => 1,
                        "SHORT" => 2,
                        "LONG" => 4,
                        _ => 8,
                    };
                    let e = self.paren_expr()?;
                    d.cmds.push(InCmd::Data(size, e));
                }
                "CONSTRUCTORS" => {}
                "FILL" => {
                    // lld's caret: the FILL just read.
                    if !self.peek_is(Mode::Expr, "(")? {
                        let got = self.peek(Mode::Expr)?.map(|t| t.text).unwrap_or_default();
                        return Err(self.err(&format!("( expected, but got {got}")));
                    }
                    self.expect(Mode::Expr, "(")?;
                    d.fill = Some(self.fill_value(false)?);
                    self.expect(Mode::Expr, ")")?;
                }
                "SORT" if self.peek_is(Mode::Pattern, "(")? && self.peek2_is("CONSTRUCTORS")? => {
                    self.expect(Mode::Pattern, "(")?;
                    self.expect(Mode::Pattern, "CONSTRUCTORS")?;
                    self.expect(Mode::Pattern, ")")?;
                }
                "INCLUDE" => {
                    let inner = self.include_text()?;
                    if let Some((name, text)) = inner {
                        let mut sub = Lexer::new(&name, &text, 0, self.include_dirs);
                        sub.include_depth = self.include_depth + 1;
                        let mut wrapped = d.clone();
                        wrapped.cmds.clear();
                        // The included text is read as more of this section's commands.
                        let mut body = Vec::new();
                        sub.section_body(&mut body)?;
                        d.cmds.extend(body);
                    }
                }
                _ => d.cmds.push(InCmd::Input(self.input_desc(t)?)),
            }
        }
        if self.consume(Mode::Stmt, ">")? {
            d.region = Some(self.next(Mode::Pattern)?.text);
        }
        if self.peek_is(Mode::Stmt, "AT")? {
            let (p, l) = (self.pos, self.last);
            self.next(Mode::Stmt)?;
            if self.consume(Mode::Stmt, ">")? {
                d.lma_region = Some(self.next(Mode::Pattern)?.text);
            } else {
                self.pos = p;
                self.last = l;
            }
        }
        if d.lma.is_some() && d.lma_region.is_some() {
            // lld reports this one without the script's position.
            return Err(Error::new("section can't have both LMA and a load region"));
        }
        while self.peek(Mode::Stmt)?.is_some_and(|t| t.is(":")) {
            self.next(Mode::Stmt)?;
            d.phdrs.push(self.next(Mode::Pattern)?.text);
        }
        if self.peek(Mode::Stmt)?.is_some_and(|t| t.is("=")) {
            self.next(Mode::Stmt)?;
            d.fill = Some(self.fill_value(true)?);
        }
        self.consume(Mode::Stmt, ",")?;
        Ok(d)
    }

    fn peek2_is(&mut self, s: &str) -> Result<bool> {
        let (p, l) = (self.pos, self.last);
        let _ = self.read(Mode::Pattern)?;
        let r = self.peek_is(Mode::Pattern, s);
        self.pos = p;
        self.last = l;
        r
    }

    /// Commands of an output section until the end of the text (an `INCLUDE`d file).
    fn section_body(&mut self, out: &mut Vec<InCmd>) -> Result<()> {
        let mut d = blank_desc(String::new(), self.here());
        // Parse as if inside braces: wrap by reading until EOF.
        while let Some(t) = self.read(Mode::Pattern)? {
            if t.is(";") {
                continue;
            }
            self.pos = t.start;
            let ts = self.next(Mode::Stmt)?;
            if let Some(a) = self.assignment(&ts)? {
                d.cmds.push(InCmd::Assign(a));
                continue;
            }
            self.pos = t.start;
            let t = self.next(Mode::Pattern)?;
            d.cmds.push(InCmd::Input(self.input_desc(t)?));
        }
        out.extend(d.cmds);
        Ok(())
    }

    /// `INCLUDE file` (keyword already read): the file's name and contents.
    fn include_text(&mut self) -> Result<Option<(String, Vec<u8>)>> {
        let t = self.next(Mode::Pattern)?;
        if self.include_depth > 16 {
            return Err(self.err_at(t.start, "there is a cycle in linker script INCLUDEs"));
        }
        let mut cands = vec![std::path::PathBuf::from(&t.text)];
        cands.extend(self.include_dirs.iter().map(|d| d.join(&t.text)));
        for c in cands {
            if let Ok(data) = std::fs::read(&c) {
                return Ok(Some((c.to_string_lossy().into_owned(), data)));
            }
        }
        Err(self.err_at(t.start, &format!("cannot find linker script {}", t.text)))
    }

    /// The commands inside `SECTIONS { ... }` (the `{` already read) until `}`.
    fn sections_body(&mut self, out: &mut Vec<SecCmd>, until_eof: bool) -> Result<()> {
        loop {
            let Some(t) = self.read(Mode::Stmt)? else {
                if until_eof {
                    return Ok(());
                }
                return Err(self.eof_err());
            };
            if t.is("}") && !until_eof {
                return Ok(());
            }
            if t.is(";") {
                continue;
            }
            if let Some(a) = self.assignment(&t)? {
                out.push(SecCmd::Assign(a));
                continue;
            }
            if t.is("INCLUDE") {
                if let Some((name, text)) = self.include_text()? {
                    let mut sub = Lexer::new(&name, &text, 0, self.include_dirs);
                    sub.include_depth = self.include_depth + 1;
                    sub.sections_body(out, true)?;
                }
                continue;
            }
            if t.is("OVERLAY") {
                self.overlay(out)?;
                continue;
            }
            // An output section description: the name was read as a statement word.
            let name = t.text.clone();
            if !t.quoted && (t.text.len() == 1 && "(){},".contains(t.text.as_str())) {
                return Err(self.err_at(t.start, &format!("unexpected {}", t.text)));
            }
            out.push(SecCmd::Out(self.output_section(name)?));
        }
    }

    /// `OVERLAY [addr] : [AT(lma)] { name { rules } [:phdr]... }` (the keyword read), as lld
    /// reads it: every section at the overlay's address (the first one's), load addresses one
    /// after the other from `lma`, then `.` at the address plus the largest size.
    fn overlay(&mut self, out: &mut Vec<SecCmd>) -> Result<()> {
        let addr = if self.consume(Mode::Stmt, ":")? {
            None
        } else {
            let e = self.expr()?;
            self.expect(Mode::Stmt, ":")?;
            Some(e)
        };
        // Without AT the first section has no load address of its own (it may share the
        // previous section's PT_LOAD, as in ld.lld 22).
        let lma = if self.consume(Mode::Stmt, "AT")? { Some(self.paren_expr()?) } else { None };
        self.expect(Mode::Stmt, "{")?;
        let mut names: Vec<String> = Vec::new();
        loop {
            let t = self.next(Mode::Pattern)?;
            if t.is("}") {
                break;
            }
            let mut d = blank_desc(t.text.clone(), self.here());
            self.expect(Mode::Stmt, "{")?;
            loop {
                let r = self.next(Mode::Pattern)?;
                if r.is("}") {
                    break;
                }
                d.cmds.push(InCmd::Input(self.input_desc(r)?));
            }
            while self.peek(Mode::Stmt)?.is_some_and(|t| t.is(":")) {
                self.next(Mode::Stmt)?;
                d.phdrs.push(self.next(Mode::Pattern)?.text);
            }
            match (names.first(), names.last()) {
                (Some(first), Some(prev)) => {
                    d.addr = Some(Expr::Addr(first.clone()));
                    d.lma = Some(Expr::Bin(BinOp::Add, Box::new(Expr::LoadAddr(prev.clone())), Box::new(Expr::SizeOf(prev.clone()))));
                }
                _ => {
                    d.addr = addr.clone();
                    d.lma = lma.clone();
                }
            }
            names.push(d.name.clone());
            out.push(SecCmd::Out(d));
        }
        let pos = self.here();
        let base = match names.first() {
            Some(first) => Expr::Addr(first.clone()),
            None => addr.unwrap_or(Expr::Dot),
        };
        let largest = names.iter().map(|n| Expr::SizeOf(n.clone())).reduce(|a, b| Expr::Max(Box::new(a), Box::new(b))).unwrap_or(Expr::Num(0));
        let expr = Expr::Bin(BinOp::Add, Box::new(base), Box::new(largest));
        out.push(SecCmd::Assign(Assign { name: ".".into(), expr, provide: false, hidden: false, pos, text: String::new() }));
        Ok(())
    }

    fn memory(&mut self) -> Result<Vec<MemRegion>> {
        self.expect(Mode::Stmt, "{")?;
        let mut v = Vec::new();
        loop {
            let t = self.next(Mode::Stmt)?;
            if t.is("}") {
                return Ok(v);
            }
            if t.is("INCLUDE") {
                return Err(self.err_at(t.start, "INCLUDE inside MEMORY is not supported in linker scripts by dtld"));
            }
            let name = t.text;
            let (mut flags, mut neg) = (0u64, 0u64);
            if self.consume(Mode::Stmt, "(")? {
                let a = self.next(Mode::Pattern)?;
                let mut invert = false;
                for c in a.text.chars() {
                    let f = match c.to_ascii_lowercase() {
                        '!' => {
                            invert = !invert;
                            continue;
                        }
                        'w' => object::elf::SHF_WRITE as u64,
                        'x' => object::elf::SHF_EXECINSTR as u64,
                        'a' | 'r' | 'l' | 'i' => object::elf::SHF_ALLOC as u64,
                        _ => return Err(self.err_at(a.start, "invalid memory region attribute")),
                    };
                    if invert {
                        neg |= f;
                    } else {
                        flags |= f;
                    }
                }
                self.expect(Mode::Stmt, ")")?;
            }
            self.expect(Mode::Stmt, ":")?;
            // lld's caret for a wrong keyword: the token before it.
            let prev = self.last;
            let kw = self.next(Mode::Stmt)?;
            if !matches!(kw.text.as_str(), "ORIGIN" | "org" | "o") {
                return Err(self.err_at(prev, "expected one of: ORIGIN, org, or o"));
            }
            self.expect(Mode::Stmt, "=")?;
            let origin = self.expr()?;
            self.expect(Mode::Stmt, ",")?;
            let prev = self.last;
            let kw = self.next(Mode::Stmt)?;
            if !matches!(kw.text.as_str(), "LENGTH" | "len" | "l") {
                return Err(self.err_at(prev, "expected one of: LENGTH, len, or l"));
            }
            self.expect(Mode::Stmt, "=")?;
            let length = self.expr()?;
            // lld reports a region defined twice here, at the length's last token.
            let pos = self.here_ctx();
            v.push(MemRegion { name, origin, length, flags, neg_flags: neg, pos });
        }
    }

    fn phdrs(&mut self) -> Result<Vec<PhdrDecl>> {
        self.expect(Mode::Stmt, "{")?;
        let mut v = Vec::new();
        loop {
            let t = self.next(Mode::Stmt)?;
            if t.is("}") {
                return Ok(v);
            }
            let ty = self.next(Mode::Stmt)?;
            let p_type = match parse_int(&ty.text) {
                Some(n) => n as u32,
                None => match ty.text.as_str() {
                    "PT_NULL" => 0,
                    "PT_LOAD" => 1,
                    "PT_DYNAMIC" => 2,
                    "PT_INTERP" => 3,
                    "PT_NOTE" => 4,
                    "PT_SHLIB" => 5,
                    "PT_PHDR" => 6,
                    "PT_TLS" => 7,
                    "PT_GNU_EH_FRAME" => 0x6474e550,
                    "PT_GNU_STACK" => 0x6474e551,
                    "PT_GNU_RELRO" => 0x6474e552,
                    "PT_OPENBSD_RANDOMIZE" => 0x65a3dbe6,
                    "PT_OPENBSD_WXNEEDED" => 0x65a3dbe7,
                    "PT_OPENBSD_BOOTDATA" => 0x65a41be6,
                    _ => return Err(self.err_at(ty.start, &format!("invalid program header type: {}", ty.text))),
                },
            };
            let mut d = PhdrDecl { name: t.text, p_type, filehdr: false, phdrs: false, at: None, flags: None };
            loop {
                let k = self.next(Mode::Stmt)?;
                match k.text.as_str() {
                    ";" => break,
                    "FILEHDR" => d.filehdr = true,
                    "PHDRS" => d.phdrs = true,
                    "AT" => d.at = Some(self.paren_expr()?),
                    "FLAGS" => {
                        let e = self.paren_expr()?;
                        d.flags = Some(super::eval::const_value(&e).unwrap_or(0) as u32);
                    }
                    _ => return Err(self.err_at(k.start, &format!("unexpected header attribute: {}", k.text))),
                }
            }
            v.push(d);
        }
    }

    /// One layout command whose keyword `kw` (or the symbol name of an assignment) starts at
    /// the current position.
    pub fn command(&mut self) -> Result<Vec<LayoutCmd>> {
        let t = self.next(Mode::Stmt)?;
        if let Some(a) = self.assignment(&t)? {
            return Ok(vec![LayoutCmd::Assign(a)]);
        }
        match t.text.as_str() {
            "SECTIONS" => {
                self.expect(Mode::Stmt, "{")?;
                let mut cmds = Vec::new();
                self.sections_body(&mut cmds, false)?;
                // INSERT AFTER|BEFORE x
                if self.peek_is(Mode::Stmt, "INSERT")? {
                    self.next(Mode::Stmt)?;
                    let w = self.next(Mode::Stmt)?;
                    let after = match w.text.as_str() {
                        "AFTER" => true,
                        "BEFORE" => false,
                        _ => return Err(self.err_at(w.start, &format!("expected AFTER/BEFORE, but got '{}'", w.text))),
                    };
                    let anchor = self.next(Mode::Pattern)?.text;
                    return Ok(vec![LayoutCmd::Insert(Insert { after, anchor, cmds, at: 0 })]);
                }
                Ok(vec![LayoutCmd::Sections(cmds)])
            }
            "MEMORY" => Ok(vec![LayoutCmd::Memory(self.memory()?)]),
            "PHDRS" => Ok(vec![LayoutCmd::Phdrs(self.phdrs()?)]),
            "REGION_ALIAS" => {
                let pos = self.here();
                self.expect(Mode::Stmt, "(")?;
                let a = self.next(Mode::Pattern)?.text;
                self.expect(Mode::Stmt, ",")?;
                let r = self.next(Mode::Pattern)?.text;
                self.expect(Mode::Stmt, ")")?;
                let pos = Pos { line: pos.line, ..self.here_ctx() };
                Ok(vec![LayoutCmd::RegionAlias(a, r, pos)])
            }
            x => Err(self.err_at(t.start, &format!("{x} is not supported in linker scripts by dtld"))),
        }
    }
}

/// Parses one layout command starting at byte `pos` of `src`: the commands and the byte
/// offset after it.
pub fn parse_command(name: &str, src: &[u8], pos: usize, include_dirs: &[std::path::PathBuf]) -> Result<(Vec<LayoutCmd>, usize)> {
    let mut lx = Lexer::new(name, src, pos, include_dirs);
    let cmds = lx.command()?;
    Ok((cmds, lx.pos()))
}

/// Parses an expression (tests).
#[cfg(test)]
pub fn parse_expr(name: &str, text: &str) -> Result<Expr> {
    let mut lx = Lexer::new(name, text.as_bytes(), 0, &[]);
    let e = lx.expr()?;
    if let Some(t) = lx.read(Mode::Expr)? {
        return Err(lx.err_at(t.start, &format!("unexpected {}", t.text)));
    }
    Ok(e)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cmds(s: &str) -> Vec<LayoutCmd> {
        parse_command("t", s.as_bytes(), 0, &[]).unwrap().0
    }

    #[test]
    fn sections_and_exprs() {
        let c = cmds("SECTIONS { . = 0x1000 + SIZEOF_HEADERS; .text : { *(.text .text.*) KEEP(*(.init)) } foo = .; .data ALIGN(16) : AT(0x2000) { x.o(.data) } >ram :ph =0x90, /DISCARD/ : { *(.comment) } }");
        let LayoutCmd::Sections(v) = &c[0] else { panic!() };
        assert_eq!(v.len(), 5);
        let SecCmd::Out(o) = &v[1] else { panic!() };
        assert_eq!(o.name, ".text");
        let SecCmd::Out(d) = &v[3] else { panic!() };
        assert_eq!(d.region.as_deref(), Some("ram"));
        assert_eq!(d.phdrs, vec!["ph".to_string()]);
        assert_eq!(d.fill, Some(0x90));
        assert!(d.lma.is_some());
        let SecCmd::Out(x) = &v[4] else { panic!() };
        assert_eq!(x.name, "/DISCARD/");
        assert_eq!(
            parse_expr("t", "1+2*3").unwrap(),
            Expr::Bin(BinOp::Add, Box::new(Expr::Num(1)), Box::new(Expr::Bin(BinOp::Mul, Box::new(Expr::Num(2)), Box::new(Expr::Num(3)))))
        );
        assert!(matches!(parse_expr("t", "a ? 1 : 2").unwrap(), Expr::Cond(..)));
        assert_eq!(parse_int("4K"), Some(4096));
        assert_eq!(parse_int("10h"), Some(16));
    }

    #[test]
    fn fill_before_discard_is_not_a_division() {
        let c = cmds("SECTIONS { .text : { *(.text) } =0x90 /DISCARD/ : { *(.foo) } }");
        let LayoutCmd::Sections(v) = &c[0] else { panic!() };
        let names: Vec<&str> = v.iter().filter_map(|c| if let SecCmd::Out(d) = c { Some(d.name.as_str()) } else { None }).collect();
        assert_eq!(names, [".text", "/DISCARD/"]);
        let SecCmd::Out(d) = &v[0] else { panic!() };
        assert_eq!(d.fill, Some(0x90));
    }

    #[test]
    fn overlay() {
        let c = cmds("SECTIONS { OVERLAY 0x1000 : AT (0x4000) { .a { *(.a) } .b { *(.b) } :ph } }");
        let LayoutCmd::Sections(v) = &c[0] else { panic!() };
        assert_eq!(v.len(), 3);
        let SecCmd::Out(a) = &v[0] else { panic!() };
        assert_eq!((a.addr.clone(), a.lma.clone()), (Some(Expr::Num(0x1000)), Some(Expr::Num(0x4000))));
        let SecCmd::Out(b) = &v[1] else { panic!() };
        assert_eq!(b.addr, Some(Expr::Addr(".a".into())));
        assert_eq!(b.phdrs, vec!["ph".to_string()]);
        assert!(matches!(&v[2], SecCmd::Assign(d) if d.name == "."));
        // lld's messages for what an overlay section may not have.
        let e = parse_command("t", b"SECTIONS { OVERLAY 0x1000 : AT ( 0x2000 ) { .out.aaa 0x3000 : { *(.aaa) } } }", 0, &[]).unwrap_err();
        assert!(e.to_string().contains("t:1: { expected, but got 0x3000"), "{e}");
        let e = parse_command("t", b"SECTIONS { OVERLAY 0x1000 : AT ( 0x2000 ) { .out.aaa { *(.aaa) } > AX AT>FLASH } }", 0, &[]).unwrap_err();
        assert!(e.to_string().contains("t:1: { expected, but got AX"), "{e}");
    }

    #[test]
    fn assignments() {
        let c = cmds("PROVIDE_HIDDEN(foo = . + 4);");
        let LayoutCmd::Assign(a) = &c[0] else { panic!() };
        assert!(a.provide && a.hidden);
        let c = cmds("x=1;");
        assert!(matches!(&c[0], LayoutCmd::Assign(a) if a.name == "x" && a.expr == Expr::Num(1)));
        let c = cmds("SECTIONS { .a : { . += 4; BYTE(1) } }");
        let LayoutCmd::Sections(v) = &c[0] else { panic!() };
        let SecCmd::Out(o) = &v[0] else { panic!() };
        assert_eq!(o.cmds.len(), 2);
    }
}
