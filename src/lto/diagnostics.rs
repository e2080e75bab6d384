//! What the user's LLVM prints during a successful thin link, shown as lld shows it.
//!
//! lld runs LTO in its own process, so LLVM's warnings (`linking module flags 'foo': IDs have
//! conflicting values`, `ignoring debug info with an invalid version`) come out as lld
//! warnings naming the input (`lib.a(m.o at 8)`), and reports asked for with `-mllvm` (such as
//! `-time-passes`) are printed as they are. dtld runs `llvm-lto2` in a child, which prints the
//! same text on its stderr but names modules by their staged IDs. `render` turns that text into
//! what the link passes on through its `Diag` (`Diag::forward`, so `--fatal-warnings` and `-w`
//! apply as to lld's): diagnostic lines as `dtld: warning:` (or `remark:`) with module IDs
//! replaced by lld's names, report lines (indented or `===` rules, as LLVM's timers and
//! statistics print them) unchanged.

use super::bitcode::Module;

/// `stderr` of a successful `llvm-lto2 run` over `modules`, as lines for `Diag::forward`.
pub fn render(stderr: &[u8], modules: &[Module]) -> String {
    if stderr.iter().all(u8::is_ascii_whitespace) {
        return String::new();
    }
    let text = String::from_utf8_lossy(stderr);
    let mut out = String::new();
    for line in text.lines() {
        out.push_str(&render_line(line, modules));
        out.push('\n');
    }
    out
}

/// One line as `Diag::forward` takes it (see the module comment).
fn render_line(line: &str, modules: &[Module]) -> String {
    if line.is_empty() || line.starts_with([' ', '\t', '=']) {
        return line.to_string();
    }
    let line = line.strip_prefix("llvm-lto2: ").unwrap_or(line);
    let (kind, msg) = match line.strip_prefix("remark: ") {
        Some(r) => ("remark", r),
        None => ("warning", line.strip_prefix("warning: ").unwrap_or(line)),
    };
    format!("dtld: {kind}: {}", with_names(msg, modules))
}

/// `msg` with every module ID that appears in it as a whole path replaced by the module's
/// name; longer IDs first, so that an ID that ends another is not replaced inside it.
fn with_names(msg: &str, modules: &[Module]) -> String {
    let mut ms: Vec<&Module> = modules.iter().filter(|m| !m.id.is_empty() && m.id != m.name).collect();
    ms.sort_by_key(|m| std::cmp::Reverse(m.id.len()));
    let mut out = String::with_capacity(msg.len());
    let mut rest = msg;
    'scan: while !rest.is_empty() {
        let at_boundary = out.is_empty() || out.ends_with([' ', '(', '\'', '"', '`']);
        if at_boundary {
            for m in &ms {
                if let Some(after) = rest.strip_prefix(m.id.as_str()) {
                    if after.is_empty() || after.starts_with([' ', ')', '\'', '"', ':', ',', '`']) {
                        out.push_str(&m.name);
                        rest = after;
                        continue 'scan;
                    }
                }
            }
        }
        let c = rest.chars().next().unwrap_or(' ');
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn module(id: &str, name: &str) -> Module {
        Module { id: id.into(), name: name.into(), data: b"", source: None, resolutions: Vec::new(), place: true, store: None }
    }

    #[test]
    fn llvm_lines_as_lld_prints_them() {
        let ms = [module("0a1b-t2.bc", "t.a(t2.bc at 8)"), module("x-0a1b-t2.bc", "other.bc")];
        assert_eq!(
            render_line("linking module flags 'foo': IDs have conflicting values ('i32 2' from 0a1b-t2.bc with 'i32 1' from ld-temp.o)", &ms),
            "dtld: warning: linking module flags 'foo': IDs have conflicting values ('i32 2' from t.a(t2.bc at 8) with 'i32 1' from ld-temp.o)"
        );
        assert_eq!(
            render_line("ignoring debug info with an invalid version (1) in x-0a1b-t2.bc", &ms),
            "dtld: warning: ignoring debug info with an invalid version (1) in other.bc"
        );
        assert_eq!(render_line("remark: 0a1b-t2.bc:3:1: f inlined", &ms), "dtld: remark: t.a(t2.bc at 8):3:1: f inlined");
        assert_eq!(
            render_line("  Total Execution Time: 0.0033 seconds (0.0033 wall clock)", &ms),
            "  Total Execution Time: 0.0033 seconds (0.0033 wall clock)"
        );
        assert_eq!(render_line("===----===", &ms), "===----===");
        // Not a whole path: left alone.
        assert_eq!(render_line("see y0a1b-t2.bc", &ms), "dtld: warning: see y0a1b-t2.bc");
    }
}
