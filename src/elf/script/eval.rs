//! The expression evaluator of linker scripts: lld's value model, where a value is either
//! absolute or an offset in an output section (so `sym = .` inside `.data` defines a symbol
//! of `.data`), and the arithmetic rules that keep or drop the section (`a + 1` stays in a's
//! section, `a - b` of two section values is absolute). What an expression can ask about the
//! link (symbols, section addresses, the location counter) comes through `Env`, which the
//! script layout stage implements.

use super::ast::{BinOp, Expr};

/// A value: `off` is absolute when `sec` is `None`, else an offset in output section `sec`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Val {
    pub off: u64,
    pub sec: Option<usize>,
    /// `ALIGN(e, a)` applied to a section-relative value aligns the final address.
    pub align: u64,
}

impl Val {
    pub fn abs(v: u64) -> Val {
        Val { off: v, sec: None, align: 1 }
    }
}

/// What expressions read from the link.
pub trait Env {
    /// The absolute address of output section `sec` (for section-relative values).
    fn sec_addr(&self, sec: usize) -> u64;
    fn dot(&self) -> Result<Val, String>;
    fn symbol(&self, name: &str) -> Result<Val, String>;
    fn defined(&self, name: &str) -> bool;
    /// `ADDR`, `LOADADDR`, `SIZEOF`, `ALIGNOF` of an output section by name.
    fn section(&self, name: &str) -> Result<SecInfo, String>;
    fn header_size(&self) -> u64;
    fn max_page_size(&self) -> u64;
    fn common_page_size(&self) -> u64;
    fn region(&self, name: &str) -> Result<(u64, u64), String>;
    /// A failed `ASSERT`.
    fn assert_failed(&self, msg: &str);
}

/// What `ADDR`, `LOADADDR`, `SIZEOF`, `ALIGNOF` read: the section's index (None if it is not in
/// the output), its address, load address, size and alignment.
#[derive(Debug, Clone, Copy)]
pub struct SecInfo {
    pub index: Option<usize>,
    pub addr: u64,
    pub lma: u64,
    pub size: u64,
    pub align: u64,
}

impl Val {
    pub fn value(&self, env: &dyn Env) -> u64 {
        let v = match self.sec {
            Some(s) => env.sec_addr(s).wrapping_add(self.off),
            None => self.off,
        };
        if self.align > 1 {
            align_to(v, self.align)
        } else {
            v
        }
    }
}

pub fn align_to(v: u64, a: u64) -> u64 {
    if a <= 1 {
        v
    } else {
        v.wrapping_add(a - 1) & !(a - 1)
    }
}

fn check_align(v: u64) -> Result<u64, String> {
    let a = v.max(1);
    if !a.is_power_of_two() {
        return Err("alignment must be power of 2".into());
    }
    Ok(a)
}

/// Whether `e` gives an absolute value, decided from its form alone (as lld knows it when it
/// scans relocations, before any address exists): the rules of `eval` with every location
/// counter and `ADDR` section-relative. `sym` says whether a named symbol is absolute.
pub fn is_absolute(e: &Expr, sym: &dyn Fn(&str) -> bool) -> bool {
    match e {
        Expr::Dot | Expr::AlignDot(_) | Expr::Addr(_) | Expr::Assert(..) => false,
        Expr::Sym(s) => sym(s),
        Expr::Bin(BinOp::Add, a, b) => is_absolute(a, sym) && is_absolute(b, sym),
        Expr::Bin(BinOp::Sub, a, b) => is_absolute(a, sym) || !is_absolute(b, sym),
        Expr::Bin(BinOp::And | BinOp::Or, a, _) => is_absolute(a, sym),
        Expr::Cond(_, a, b) => is_absolute(a, sym) && is_absolute(b, sym),
        Expr::Align(a, _) | Expr::SegmentStart(a) => is_absolute(a, sym),
        _ => true,
    }
}

fn uses_dot(e: &Expr) -> bool {
    e.any(&|x| matches!(x, Expr::Dot | Expr::AlignDot(_)))
}

/// Evaluates `e`; errors are lld's messages without the `file:line:` prefix.
pub fn eval(e: &Expr, env: &dyn Env) -> Result<Val, String> {
    let abs = |v: u64| Ok(Val::abs(v));
    match e {
        Expr::Num(v) => abs(*v),
        Expr::Dot => env.dot(),
        Expr::Sym(s) => env.symbol(s),
        Expr::Neg(a) => abs(eval(a, env)?.value(env).wrapping_neg()),
        Expr::Not(a) => abs((eval(a, env)?.value(env) == 0) as u64),
        Expr::BitNot(a) => abs(!eval(a, env)?.value(env)),
        Expr::Bin(op, a, b) => {
            let x = eval(a, env)?;
            let y = eval(b, env)?;
            match op {
                BinOp::Add => match (x.sec, y.sec) {
                    // lld's moveAbsRight: two section-relative values cannot be added. (`.`
                    // and `ALIGN(n)` are section-relative here where lld's ALIGN(n) is
                    // absolute, so sums with them keep the left section.)
                    (Some(_), Some(_)) if !uses_dot(a) && !uses_dot(b) => Err("at least one side of the expression must be absolute".into()),
                    (Some(_), _) => Ok(Val { off: x.off.wrapping_add(y.value(env)), sec: x.sec, align: 1 }),
                    (None, Some(_)) => Ok(Val { off: y.off.wrapping_add(x.off), sec: y.sec, align: 1 }),
                    (None, None) => abs(x.off.wrapping_add(y.off)),
                },
                BinOp::Sub => match (x.sec, y.sec) {
                    (Some(_), Some(_)) => abs(x.value(env).wrapping_sub(y.value(env))),
                    (Some(_), None) => Ok(Val { off: x.off.wrapping_sub(y.off), sec: x.sec, align: 1 }),
                    _ => abs(x.value(env).wrapping_sub(y.value(env))),
                },
                _ => {
                    let (a, b) = (x.value(env), y.value(env));
                    let v = match op {
                        BinOp::Mul => a.wrapping_mul(b),
                        BinOp::Div => {
                            if b == 0 {
                                return Err("division by zero".into());
                            }
                            a / b
                        }
                        BinOp::Rem => {
                            if b == 0 {
                                return Err("modulo by zero".into());
                            }
                            a % b
                        }
                        BinOp::Shl => a.checked_shl(b as u32).unwrap_or(0),
                        BinOp::Shr => a.checked_shr(b as u32).unwrap_or(0),
                        BinOp::Lt => (a < b) as u64,
                        BinOp::Le => (a <= b) as u64,
                        BinOp::Gt => (a > b) as u64,
                        BinOp::Ge => (a >= b) as u64,
                        BinOp::Eq => (a == b) as u64,
                        BinOp::Ne => (a != b) as u64,
                        BinOp::And => a & b,
                        BinOp::Xor => a ^ b,
                        BinOp::Or => a | b,
                        BinOp::LAnd => (a != 0 && b != 0) as u64,
                        BinOp::LOr => (a != 0 || b != 0) as u64,
                        BinOp::Add | BinOp::Sub => unreachable!(),
                    };
                    // lld keeps the section of a bitwise AND/OR with a section value.
                    if matches!(op, BinOp::And | BinOp::Or) && x.sec.is_some() {
                        let base = env.sec_addr(x.sec.unwrap_or(0));
                        return Ok(Val { off: v.wrapping_sub(base), sec: x.sec, align: 1 });
                    }
                    abs(v)
                }
            }
        }
        Expr::Cond(c, a, b) => {
            if eval(c, env)?.value(env) != 0 {
                eval(a, env)
            } else {
                eval(b, env)
            }
        }
        Expr::Absolute(a) => abs(eval(a, env)?.value(env)),
        Expr::Addr(n) => {
            let s = env.section(n)?;
            match s.index {
                Some(i) => Ok(Val { off: 0, sec: Some(i), align: 1 }),
                None => abs(s.addr),
            }
        }
        Expr::LoadAddr(n) => abs(env.section(n)?.lma),
        Expr::SizeOf(n) => abs(env.section(n).map(|s| s.size).unwrap_or(0)),
        Expr::AlignOf(n) => abs(env.section(n)?.align),
        Expr::SizeOfHeaders => abs(env.header_size()),
        Expr::AlignDot(a) => {
            let al = check_align(eval(a, env)?.value(env))?;
            let d = env.dot()?;
            let v = align_to(d.value(env), al);
            match d.sec {
                Some(s) => Ok(Val { off: v.wrapping_sub(env.sec_addr(s)), sec: Some(s), align: 1 }),
                None => abs(v),
            }
        }
        Expr::Align(e, a) => {
            let al = check_align(eval(a, env)?.value(env))?;
            let mut v = eval(e, env)?;
            if v.sec.is_none() {
                v.off = align_to(v.off, al);
            } else {
                v.align = al;
            }
            Ok(v)
        }
        Expr::Defined(n) => abs(env.defined(n) as u64),
        Expr::MaxPageSize => abs(env.max_page_size()),
        Expr::CommonPageSize => abs(env.common_page_size()),
        Expr::DataSegmentAlign(a) => {
            let al = eval(a, env)?.value(env).max(1);
            let d = env.dot()?.value(env);
            abs(align_to(d, al))
        }
        Expr::DataSegmentRelroEnd => {
            let d = env.dot()?.value(env);
            abs(align_to(d, env.common_page_size()))
        }
        Expr::Max(a, b) => abs(eval(a, env)?.value(env).max(eval(b, env)?.value(env))),
        Expr::Min(a, b) => abs(eval(a, env)?.value(env).min(eval(b, env)?.value(env))),
        Expr::Origin(n) => abs(env.region(n)?.0),
        Expr::Length(n) => abs(env.region(n)?.1),
        Expr::Log2Ceil(a) => {
            let v = eval(a, env)?.value(env);
            abs(if v <= 1 { 0 } else { 64 - (v - 1).leading_zeros() as u64 })
        }
        Expr::SegmentStart(a) => eval(a, env),
        Expr::Assert(c, msg) => {
            if eval(c, env)?.value(env) == 0 {
                env.assert_failed(msg);
            }
            env.dot()
        }
    }
}

/// The value of an expression made of numbers only (FILL values, PHDRS flags).
pub fn const_value(e: &Expr) -> Option<u64> {
    struct NoEnv;
    impl Env for NoEnv {
        fn sec_addr(&self, _: usize) -> u64 {
            0
        }
        fn dot(&self) -> Result<Val, String> {
            Err("no location counter".into())
        }
        fn symbol(&self, n: &str) -> Result<Val, String> {
            Err(format!("symbol not found: {n}"))
        }
        fn defined(&self, _: &str) -> bool {
            false
        }
        fn section(&self, n: &str) -> Result<SecInfo, String> {
            Err(format!("undefined section {n}"))
        }
        fn header_size(&self) -> u64 {
            0
        }
        fn max_page_size(&self) -> u64 {
            4096
        }
        fn common_page_size(&self) -> u64 {
            4096
        }
        fn region(&self, n: &str) -> Result<(u64, u64), String> {
            Err(format!("memory region not defined: {n}"))
        }
        fn assert_failed(&self, _: &str) {}
    }
    eval(e, &NoEnv).ok().map(|v| v.off)
}
