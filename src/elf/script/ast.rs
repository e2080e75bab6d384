//! The layout part of a linker script as data: `SECTIONS`, `MEMORY`, `PHDRS`, assignments and
//! `ASSERT`s, each with the place it was written (`file:line`) for lld-worded errors. The parser
//! (`parse`) builds it, the loader gathers every script's commands into one `LayoutScript` in
//! the configuration, and the script layout stage (`place`) interprets it.

/// Where a command or expression was written: `file:line`, as lld prefixes its messages.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Pos {
    pub file: String,
    pub line: usize,
    /// lld's context lines for an error found after parsing (`\n>>> <line>\n>>> <caret>`),
    /// when the command recorded them; empty otherwise.
    pub ctx: String,
}

impl std::fmt::Display for Pos {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.file, self.line)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinOp {
    Mul,
    Div,
    Rem,
    Add,
    Sub,
    Shl,
    Shr,
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
    And,
    Xor,
    Or,
    LAnd,
    LOr,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Expr {
    Num(u64),
    /// The location counter `.`.
    Dot,
    Sym(String),
    Neg(Box<Expr>),
    Not(Box<Expr>),
    BitNot(Box<Expr>),
    Bin(BinOp, Box<Expr>, Box<Expr>),
    Cond(Box<Expr>, Box<Expr>, Box<Expr>),
    Absolute(Box<Expr>),
    Addr(String),
    LoadAddr(String),
    SizeOf(String),
    AlignOf(String),
    SizeOfHeaders,
    /// `ALIGN(a)`: the location counter aligned to `a`.
    AlignDot(Box<Expr>),
    /// `ALIGN(e, a)`: `e` aligned to `a`.
    Align(Box<Expr>, Box<Expr>),
    Defined(String),
    MaxPageSize,
    CommonPageSize,
    DataSegmentAlign(Box<Expr>),
    DataSegmentRelroEnd,
    Max(Box<Expr>, Box<Expr>),
    Min(Box<Expr>, Box<Expr>),
    Origin(String),
    Length(String),
    Log2Ceil(Box<Expr>),
    /// `SEGMENT_START(name, default)`: the default (lld ignores the segment name).
    SegmentStart(Box<Expr>),
    /// `ASSERT(e, msg)` used as an expression: the location counter.
    Assert(Box<Expr>, String),
}

/// `sym = expr;` (or `. = expr;`), with `PROVIDE`/`HIDDEN` wrappers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Assign {
    /// `.` for the location counter.
    pub name: String,
    pub expr: Expr,
    pub provide: bool,
    pub hidden: bool,
    pub pos: Pos,
    /// The expression as written (for `--defsym`-style handling without `SECTIONS`).
    pub text: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SortKind {
    #[default]
    Default,
    None,
    Name,
    Alignment,
    Priority,
}

/// A glob list (`*`, `?`, `[...]`) matched against a name.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Globs(pub Vec<String>);

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SectionPattern {
    pub exclude_files: Globs,
    pub names: Globs,
    pub sort_outer: SortKind,
    pub sort_inner: SortKind,
}

/// `filepattern(section patterns)`, perhaps inside `KEEP(...)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputDesc {
    pub file: String,
    /// `EXCLUDE_FILE(...)` written before the file pattern.
    pub exclude_files: Globs,
    pub patterns: Vec<SectionPattern>,
    pub keep: bool,
    /// `INPUT_SECTION_FLAGS(a & !b)`: flags a section must have, and must not.
    pub with_flags: u64,
    pub without_flags: u64,
}

impl InputDesc {
    /// Whether a section's flags pass the description's `INPUT_SECTION_FLAGS`.
    pub fn flags_match(&self, flags: u64) -> bool {
        flags & self.with_flags == self.with_flags && flags & self.without_flags == 0
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InCmd {
    Assign(Assign),
    Input(InputDesc),
    /// `BYTE`, `SHORT`, `LONG`, `QUAD`: size in bytes and value.
    Data(u8, Expr),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Constraint {
    ReadOnly,
    ReadWrite,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutDesc {
    pub name: String,
    pub addr: Option<Expr>,
    pub noload: bool,
    /// `(COPY)`, `(INFO)`, `(OVERLAY)`: not allocated.
    pub nonalloc: bool,
    pub lma: Option<Expr>,
    pub align: Option<Expr>,
    pub subalign: Option<Expr>,
    pub constraint: Option<Constraint>,
    pub cmds: Vec<InCmd>,
    pub region: Option<String>,
    pub lma_region: Option<String>,
    pub phdrs: Vec<String>,
    pub fill: Option<u32>,
    pub pos: Pos,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SecCmd {
    Assign(Assign),
    Out(OutDesc),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemRegion {
    pub name: String,
    pub origin: Expr,
    pub length: Expr,
    /// Attribute letters (`rwx`, `!w`): which orphan sections may go there.
    pub flags: u64,
    pub neg_flags: u64,
    pub pos: Pos,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PhdrDecl {
    pub name: String,
    pub p_type: u32,
    pub filehdr: bool,
    pub phdrs: bool,
    pub at: Option<Expr>,
    pub flags: Option<u32>,
}

/// `INSERT AFTER|BEFORE section`: the SECTIONS commands of that script go next to `section`
/// in the default layout instead of replacing it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Insert {
    pub after: bool,
    pub anchor: String,
    pub cmds: Vec<SecCmd>,
    /// How many commands `LayoutScript::cmds` held when this block was read (lld appends the
    /// block's commands to its command list there, then moves the descriptions).
    pub at: usize,
}

impl Insert {
    /// The names of the block's output section descriptions (lld's `InsertCommand::names`).
    pub fn names(&self) -> Vec<&str> {
        self.cmds
            .iter()
            .filter_map(|c| match c {
                SecCmd::Out(o) => Some(o.name.as_str()),
                SecCmd::Assign(_) => None,
            })
            .collect()
    }

    /// `AFTER` or `BEFORE`.
    pub fn word(&self) -> &'static str {
        if self.after {
            "after"
        } else {
            "before"
        }
    }
}

/// One layout command as the parser returns it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LayoutCmd {
    /// The commands of one `SECTIONS { ... }` block (without INSERT).
    Sections(Vec<SecCmd>),
    /// A `SECTIONS { ... } INSERT AFTER|BEFORE x` block.
    Insert(Insert),
    /// An assignment outside `SECTIONS`.
    Assign(Assign),
    Memory(Vec<MemRegion>),
    Phdrs(Vec<PhdrDecl>),
    RegionAlias(String, String, Pos),
}

/// Every layout command of the link's scripts, in command-line order.
#[derive(Debug, Clone, Default)]
pub struct LayoutScript {
    pub has_sections: bool,
    /// SECTIONS contents and top-level assignments, in order.
    pub cmds: Vec<SecCmd>,
    pub inserts: Vec<Insert>,
    pub memory: Vec<MemRegion>,
    pub phdrs: Vec<PhdrDecl>,
    pub aliases: Vec<(String, String, Pos)>,
}

impl LayoutScript {
    /// Adds one command; a memory region defined twice, or an alias naming a region that is
    /// already defined or not yet, is lld's error (at the command's place in the script).
    pub fn add(&mut self, c: LayoutCmd) -> std::result::Result<(), String> {
        let defined = |s: &Self, n: &str| s.memory.iter().any(|m| m.name == n) || s.aliases.iter().any(|(a, _, _)| a == n);
        match &c {
            LayoutCmd::Memory(m) => {
                for (k, r) in m.iter().enumerate() {
                    if defined(self, &r.name) || m[..k].iter().any(|o| o.name == r.name) {
                        return Err(format!("{}: region '{}' already defined{}", r.pos, r.name, r.pos.ctx));
                    }
                }
            }
            LayoutCmd::RegionAlias(a, r, p) => {
                if defined(self, a) {
                    return Err(format!("{p}: redefinition of memory region '{a}'{}", p.ctx));
                }
                if !defined(self, r) {
                    return Err(format!("{p}: memory region '{r}' is not defined{}", p.ctx));
                }
            }
            _ => {}
        }
        match c {
            LayoutCmd::Sections(v) => {
                self.has_sections = true;
                self.cmds.extend(v);
            }
            LayoutCmd::Insert(mut i) => {
                i.at = self.cmds.len();
                self.inserts.push(i);
            }
            LayoutCmd::Assign(a) => self.cmds.push(SecCmd::Assign(a)),
            LayoutCmd::Memory(m) => self.memory.extend(m),
            LayoutCmd::Phdrs(p) => self.phdrs.extend(p),
            LayoutCmd::RegionAlias(a, r, p) => self.aliases.push((a, r, p)),
        }
        Ok(())
    }

    /// With a SECTIONS command, INSERT blocks become part of its command list as lld's
    /// `processInsertCommands` arranges it: each block's commands where the block was read,
    /// then its output section descriptions moved next to the description named by the block.
    /// A name that no description has would be an orphan section's, which dtld cannot place
    /// before orphan placement: that is refused.
    pub fn splice_inserts(&mut self) -> std::result::Result<(), String> {
        let inserts = std::mem::take(&mut self.inserts);
        for i in inserts.iter().rev() {
            let at = i.at.min(self.cmds.len());
            self.cmds.splice(at..at, i.cmds.iter().cloned());
        }
        let is_out = |c: &SecCmd, name: &str| matches!(c, SecCmd::Out(o) if o.name == name);
        for i in &inserts {
            let mut moves = Vec::new();
            for name in i.names() {
                if let Some(k) = self.cmds.iter().position(|c| is_out(c, name)) {
                    moves.push(self.cmds.remove(k));
                }
            }
            let Some(k) = self.cmds.iter().position(|c| is_out(c, &i.anchor)) else {
                return Err(format!(
                    "INSERT {} {}: {} is not an output section of the SECTIONS command (inserting next to an orphan section is not supported by dtld)",
                    i.word().to_uppercase(),
                    i.anchor,
                    i.anchor
                ));
            };
            let k = if i.after { k + 1 } else { k };
            self.cmds.splice(k..k, moves);
        }
        Ok(())
    }

    /// Whether an assignment uses `DATA_SEGMENT_RELRO_END` (lld's seenRelroEnd: then, and
    /// without SECTIONS, `.relro_padding` exists and goes just before that assignment).
    pub fn seen_relro_end(&self) -> bool {
        self.assigns().iter().any(|a| is_relro_end(&a.expr))
    }

    /// Every assignment, wherever written.
    pub fn assigns(&self) -> Vec<&Assign> {
        let mut v = Vec::new();
        let cmds = self.cmds.iter().chain(self.inserts.iter().flat_map(|i| i.cmds.iter()));
        for c in cmds {
            match c {
                SecCmd::Assign(a) => v.push(a),
                SecCmd::Out(o) => {
                    for ic in &o.cmds {
                        if let InCmd::Assign(a) = ic {
                            v.push(a);
                        }
                    }
                }
            }
        }
        v
    }

    /// Every symbol an expression names (kept alive and looked up like `-u`).
    pub fn referenced_symbols(&self) -> Vec<String> {
        let mut out = Vec::new();
        for a in self.assigns() {
            a.expr.symbols(&mut out);
        }
        let cmds = self.cmds.iter().chain(self.inserts.iter().flat_map(|i| i.cmds.iter()));
        for c in cmds {
            if let SecCmd::Out(o) = c {
                for e in [&o.addr, &o.lma, &o.align, &o.subalign].into_iter().flatten() {
                    e.symbols(&mut out);
                }
                for ic in &o.cmds {
                    if let InCmd::Data(_, e) = ic {
                        e.symbols(&mut out);
                    }
                }
            }
        }
        out
    }
}

impl Expr {
    /// The expressions directly inside this one, left to right (every walk over the tree goes
    /// through this one list of the variants that hold operands).
    pub fn children(&self) -> Vec<&Expr> {
        match self {
            Expr::Neg(a)
            | Expr::Not(a)
            | Expr::BitNot(a)
            | Expr::Absolute(a)
            | Expr::AlignDot(a)
            | Expr::DataSegmentAlign(a)
            | Expr::Log2Ceil(a)
            | Expr::SegmentStart(a)
            | Expr::Assert(a, _) => vec![a],
            Expr::Bin(_, a, b) | Expr::Align(a, b) | Expr::Max(a, b) | Expr::Min(a, b) => vec![a, b],
            Expr::Cond(a, b, c) => vec![a, b, c],
            _ => Vec::new(),
        }
    }

    /// Whether `f` holds for this expression or any expression inside it.
    pub fn any(&self, f: &dyn Fn(&Expr) -> bool) -> bool {
        f(self) || self.children().into_iter().any(|c| c.any(f))
    }

    /// The symbols the expression reads, in order of appearance.
    pub fn symbols(&self, out: &mut Vec<String>) {
        if let Expr::Sym(s) = self {
            out.push(s.clone());
        }
        for c in self.children() {
            c.symbols(out);
        }
    }
}

/// Whether `e` contains `DATA_SEGMENT_RELRO_END`.
pub fn is_relro_end(e: &Expr) -> bool {
    e.any(&|x| matches!(x, Expr::DataSegmentRelroEnd))
}

/// Glob matching as linker scripts use it: `*`, `?`, `[a-z]`, `[!a]`, `\` escapes.
pub fn glob_match(pat: &str, s: &str) -> bool {
    let p: Vec<char> = pat.chars().collect();
    let t: Vec<char> = s.chars().collect();
    glob_at(&p, &t)
}

fn glob_at(p: &[char], t: &[char]) -> bool {
    let (mut pi, mut ti) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        if pi < p.len() {
            match p[pi] {
                '*' => {
                    star = Some((pi, ti));
                    pi += 1;
                    continue;
                }
                '?' => {
                    pi += 1;
                    ti += 1;
                    continue;
                }
                '[' => {
                    if let Some((ok, len)) = class_match(&p[pi..], t[ti]) {
                        if ok {
                            pi += len;
                            ti += 1;
                            continue;
                        }
                    } else if t[ti] == '[' {
                        pi += 1;
                        ti += 1;
                        continue;
                    }
                }
                '\\' if pi + 1 < p.len() => {
                    if p[pi + 1] == t[ti] {
                        pi += 2;
                        ti += 1;
                        continue;
                    }
                }
                c => {
                    if c == t[ti] {
                        pi += 1;
                        ti += 1;
                        continue;
                    }
                }
            }
        }
        match star {
            Some((sp, st)) => {
                pi = sp + 1;
                ti = st + 1;
                star = Some((sp, st + 1));
            }
            None => return false,
        }
    }
    while pi < p.len() && p[pi] == '*' {
        pi += 1;
    }
    pi == p.len()
}

/// `[...]` at the start of `p`: whether `c` matches and the class's length.
fn class_match(p: &[char], c: char) -> Option<(bool, usize)> {
    let mut i = 1;
    let neg = i < p.len() && (p[i] == '!' || p[i] == '^');
    if neg {
        i += 1;
    }
    let mut ok = false;
    let mut first = true;
    while i < p.len() {
        if p[i] == ']' && !first {
            return Some((ok != neg, i + 1));
        }
        first = false;
        if i + 2 < p.len() && p[i + 1] == '-' && p[i + 2] != ']' {
            if p[i] <= c && c <= p[i + 2] {
                ok = true;
            }
            i += 3;
        } else {
            if p[i] == c {
                ok = true;
            }
            i += 1;
        }
    }
    None
}

impl Globs {
    pub fn matches(&self, s: &str) -> bool {
        self.0.iter().any(|p| glob_match(p, s))
    }
}

/// Where a token is, for `file:line:` messages and the `>>>` excerpt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Loc {
    pub line: usize,
    /// Column of the token in `line_text`, in characters.
    pub col: usize,
    pub line_text: String,
}

/// `name:line: msg` plus the `>>>` excerpt pointing at `loc`, as lld prints script errors.
pub(crate) fn format_error(name: &str, loc: Option<&Loc>, line: usize, msg: &str) -> String {
    let mut s = format!("{name}:{line}: {msg}");
    if let Some(loc) = loc {
        if loc.col <= 256 {
            let text: String = loc.line_text.chars().take(loc.col + 80).map(|c| if c.is_control() && c != '\t' { '?' } else { c }).collect();
            s.push_str(&format!("\n>>> {text}\n>>> {}^", " ".repeat(loc.col)));
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs() {
        assert!(glob_match("*", ".text"));
        assert!(glob_match(".text.*", ".text.foo"));
        assert!(!glob_match(".text.*", ".text"));
        assert!(glob_match(".t?xt", ".text"));
        assert!(glob_match("[a-c]x", "bx"));
        assert!(!glob_match("[!a-c]x", "bx"));
        assert!(glob_match("*foo*bar", "xxfooyybar"));
        assert!(!glob_match("*foo*bar", "xxfooyybarz"));
    }
}
