//! `/map[:file]`: the link.exe-style map lld-link writes (lld's `MapFile.cpp`, as observed).
//!
//! Why this exists: build systems ask lld-link for link.exe's map (`/map`, often with
//! `/mapinfo:exports`) and parse it, so dtld writes the same text. Its parts:
//!
//! * the output's name without its extension; `Timestamp is <hex> (<local time>)`, or
//!   `(Repro mode)` under `/Brepro`; the preferred load address (16 hex digits);
//! * `Start Length Name Class`: per output section, one line per run of consecutive input
//!   sections of the same name (`.text$mn`), with the run's extent, `CODE` for executable code
//!   sections and `DATA` otherwise; synthetic chunks do not count;
//! * `Publics by Value`: every symbol each object names (its own and the globals it refers
//!   to, once each) that is defined and live, except statics, section definitions and labels,
//!   plus the live imports' `__imp_` and thunk symbols; sorted by address, then by first
//!   mention. A line is `sss:oooooooo`, the name (undemangled) padded to 26, image base plus
//!   RVA in 16 digits and the file (`lib:member` for an archive member, `<absolute>`,
//!   `<linker-defined>`, `<common>`); absolute and linker-defined symbols are in section 0;
//! * `entry point at`, then `Static symbols` (the statics, the same way), and with
//!   `/mapinfo:exports` the exports' ordinals and names.

use std::collections::HashSet;
use std::fmt::Write as _;
use std::path::Path;

use super::layout::model::{ChunkKind, Layout};
use super::symtab::{Def, FileId, Kind, SymId, SymRef};
use crate::error::{Error, Result};

/// A symbol of the map: a global, or a file's own symbol.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum MapSym {
    Global(SymId),
    Local(FileId, usize),
}

const IMAGE_SYM_CLASS_LABEL: u8 = 6;

/// `name.ext` → `name`, as LLVM's `replace_extension(.., "")` on a file name.
fn stem(p: &str) -> &str {
    let f = p.rsplit(['/', '\\']).next().unwrap_or(p);
    f.rfind('.').filter(|&i| i > 0).map_or(f, |i| &f[..i])
}

fn file_name(p: &str) -> &str {
    p.rsplit(['/', '\\']).next().unwrap_or(p)
}

/// Writes the map of `l` to `path` (lld's `fatal` when it cannot be opened).
pub fn write(l: &Layout, path: &Path) -> Result<()> {
    let text = text(l);
    crate::outfile::write_atomic(path, text.as_bytes()).map_err(|e| Error::new(format!("cannot open {}: {}", path.display(), crate::error::io_error(&e))))
}

/// The publics and the statics, each sorted by address then first mention.
fn symbols(l: &Layout) -> (Vec<MapSym>, Vec<MapSym>) {
    let r = l.r;
    let (mut publics, mut statics) = (Vec::new(), Vec::new());
    let live_sec = |f: FileId, sec: i32| -> bool {
        let Some(k) = (sec as usize).checked_sub(1) else { return false };
        !r.icf_folded.contains_key(&(f, k as u32)) && l.sec_chunk[f].get(k).copied().flatten().is_some()
    };
    for (f, file) in r.files.iter().enumerate() {
        let Kind::Obj(obj) = &file.kind else { continue };
        for (i, sref) in file.syms.iter().enumerate() {
            match *sref {
                SymRef::Global(id) => match r.symbols[id].def {
                    Def::Regular(df, di) => {
                        let d = &r.obj(df).symbols[di as usize];
                        if d.class != IMAGE_SYM_CLASS_LABEL && live_sec(df, d.section) {
                            publics.push(MapSym::Global(id));
                        }
                    }
                    Def::Undefined | Def::Lazy(..) | Def::Bitcode(..) => {}
                    _ => publics.push(MapSym::Global(id)),
                },
                SymRef::Local { sec, .. } => {
                    let s = &obj.symbols[i];
                    let secdef = s.class == ::object::pe::IMAGE_SYM_CLASS_STATIC && s.naux > 0;
                    if !secdef && s.class != IMAGE_SYM_CLASS_LABEL && live_sec(f, sec as i32) {
                        statics.push(MapSym::Local(f, i));
                    }
                }
                // Absolute statics other than `@feat.00` and `@comp.id` are no DefinedCOFF.
                SymRef::Absolute(_) if !matches!(obj.symbols[i].name, "@feat.00" | "@comp.id") => publics.push(MapSym::Local(f, i)),
                SymRef::Absolute(_) | SymRef::None => {}
            }
        }
    }
    for &f in &r.imports {
        for (name, want) in [(true, l.address_chunk.iter().any(|c| c.0 == f)), (false, l.thunk_chunk.iter().any(|c| c.0 == f))] {
            let imp = super::idata::import(r, f);
            let sym = if name { format!("__imp_{}", imp.symbol) } else { imp.symbol.clone() };
            if let (true, Some(id)) = (want, r.find(&sym)) {
                publics.push(MapSym::Global(id));
            }
        }
    }
    let sort = |v: &mut Vec<MapSym>| {
        let mut seen = HashSet::new();
        v.retain(|s| seen.insert(*s));
        let mut keyed: Vec<(u64, usize, MapSym)> = v.iter().enumerate().map(|(k, &s)| (l.image_base.wrapping_add(rva(l, s)), k, s)).collect();
        keyed.sort_by_key(|&(a, k, _)| (a, k));
        *v = keyed.into_iter().map(|(_, _, s)| s).collect();
    };
    sort(&mut publics);
    sort(&mut statics);
    (publics, statics)
}

fn rva(l: &Layout, s: MapSym) -> u64 {
    match s {
        MapSym::Global(id) => l.sym_rva(id).unwrap_or(0),
        MapSym::Local(f, i) => l.target(f, i).map_or(0, |t| t.0),
    }
}

/// One symbol line.
fn line(l: &Layout, s: MapSym, out: &mut String) {
    let r = l.r;
    let v = rva(l, s);
    let (name, chunk, descr) = match s {
        MapSym::Local(f, i) => {
            let sym = &r.obj(f).symbols[i];
            let chunk = l.target(f, i).and_then(|t| t.1);
            (sym.name, chunk, if chunk.is_none() { "<absolute>".to_string() } else { object_name(l, f) })
        }
        MapSym::Global(id) => {
            let descr = match r.symbols[id].def {
                // `/guard:cf`'s tables: lld made them synthetic symbols.
                Def::Absolute(_) if l.guard.table_chunk(id).is_some() => "<linker-defined>".to_string(),
                Def::Absolute(_) => "<absolute>".to_string(),
                Def::Synthetic(_) => "<linker-defined>".to_string(),
                Def::Common(..) => "<common>".to_string(),
                Def::Regular(df, _) => object_name(l, df),
                Def::ImportData(f) | Def::ImportThunk(f) => object_name(l, f),
                _ => String::new(),
            };
            let chunk = match r.symbols[id].def {
                Def::Absolute(_) | Def::Synthetic(_) | Def::Common(..) => None,
                _ => l.sym_chunk(id),
            };
            (r.symbols[id].name, chunk, descr)
        }
    };
    let (sec, addr) = match (chunk, s) {
        (Some(c), _) if l.chunks[c].osec != usize::MAX => {
            let os = &l.osecs[l.chunks[c].osec];
            (os.index, v.wrapping_sub(os.rva as u64))
        }
        (_, MapSym::Global(id)) if matches!(r.symbols[id].def, Def::Absolute(_)) && l.guard.table_chunk(id).is_none() => (0, l.image_base.wrapping_add(v)),
        (None, MapSym::Local(..)) => (0, l.image_base.wrapping_add(v)),
        _ => (0, 0),
    };
    let _ = write!(out, " {sec:04x}:{addr:08x}       {name:<26} {:016x}", l.image_base.wrapping_add(v));
    if !descr.is_empty() {
        out.push_str("     ");
        out.push_str(&descr);
    }
    out.push('\n');
}

/// `lib:member.obj` for an archive member, else the file's name.
fn object_name(l: &Layout, f: FileId) -> String {
    let file = &l.r.files[f];
    if file.parent.is_empty() {
        file_name(&file.name).to_string()
    } else {
        format!("{}:{}", stem(&file.parent), file_name(&file.obj_name))
    }
}

/// The map as text.
pub fn text(l: &Layout) -> String {
    let c = l.config;
    let mut out = String::new();
    let stamp = c.timestamp.unwrap_or_else(|| std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs() as u32));
    let when = if c.brepro { "Repro mode".to_string() } else { local_time(stamp as i64) };
    let _ = write!(out, " {}\n\n Timestamp is {stamp:08x} ({when})\n\n Preferred load address is {:016x}\n\n", stem(&c.output.to_string_lossy()), l.image_base);
    out.push_str(" Start         Length     Name                   Class\n");
    for os in &l.osecs {
        let code = os.chars & (::object::pe::IMAGE_SCN_CNT_CODE | ::object::pe::IMAGE_SCN_MEM_READ | ::object::pe::IMAGE_SCN_MEM_EXECUTE)
            == ::object::pe::IMAGE_SCN_CNT_CODE | ::object::pe::IMAGE_SCN_MEM_READ | ::object::pe::IMAGE_SCN_MEM_EXECUTE;
        let mut runs: Vec<(&str, u32, u32)> = Vec::new();
        for &k in &os.chunks {
            let ch = &l.chunks[k];
            let ChunkKind::Section { file, sec } = ch.kind else { continue };
            let name = l.r.obj(file).sections[sec as usize].name;
            match runs.last_mut() {
                Some(run) if run.0 == name => run.2 = ch.rva + ch.size,
                _ => runs.push((name, ch.rva, ch.rva + ch.size)),
            }
        }
        for (name, start, end) in runs {
            let _ = writeln!(out, " {:04x}:{:08x} {:08x}H {name:<23} {}", os.index, start - os.rva, end - start, if code { "CODE" } else { "DATA" });
        }
    }
    let (publics, statics) = symbols(l);
    out.push_str("\n  Address         Publics by Value              Rva+Base               Lib:Object\n\n");
    for &s in &publics {
        line(l, s, &mut out);
    }
    let entry = l.r.entry.filter(|_| !c.no_entry).and_then(|id| Some((l.sym_chunk(id)?, l.sym_rva(id)?)));
    let (esec, eaddr) = match entry {
        Some((ch, v)) if l.chunks[ch].osec != usize::MAX => {
            let os = &l.osecs[l.chunks[ch].osec];
            (os.index, v - os.rva as u64)
        }
        _ => (0, 0),
    };
    let _ = write!(out, "\n entry point at         {esec:04x}:{eaddr:08x}\n\n Static symbols\n\n");
    for &s in &statics {
        line(l, s, &mut out);
    }
    if c.map_info_exports {
        out.push_str("\n Exports\n\n  ordinal    name\n\n");
        // lld names an export by its symbol, then by the name it is exported as if another.
        let by_name = l.r.exports_by_table_name();
        for e in &l.exports {
            let spec = by_name.get(e.name.as_str()).map(|&k| &l.r.exports[k].0);
            let name = spec.and_then(|s| s.internal.as_deref()).unwrap_or(&e.name);
            let _ = writeln!(out, "  {:7}    {name}", e.ordinal.unwrap_or(0));
            if name != e.name {
                let _ = writeln!(out, "               exported name: {}", e.name);
            }
        }
    }
    out
}

/// link.exe's `%c`-like local time: `Thu Jan  1 00:00:00 1970`.
fn local_time(t: i64) -> String {
    const DAYS: [&str; 7] = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
    const MONTHS: [&str; 12] = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
    // SAFETY: localtime_r fills the `tm` we own from a time_t we own.
    let tm = unsafe {
        let mut tm: libc::tm = std::mem::zeroed();
        let tt: libc::time_t = t as libc::time_t;
        libc::localtime_r(&tt, &mut tm);
        tm
    };
    format!(
        "{} {} {:2} {:02}:{:02}:{:02} {}",
        DAYS[tm.tm_wday.rem_euclid(7) as usize],
        MONTHS[tm.tm_mon.rem_euclid(12) as usize],
        tm.tm_mday,
        tm.tm_hour,
        tm.tm_min,
        tm.tm_sec,
        tm.tm_year + 1900
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_times() {
        assert_eq!(stem("/a/b/prog.exe"), "prog");
        assert_eq!(stem("lib/libg.lib"), "libg");
        assert_eq!(file_name("C:\\x\\y.obj"), "y.obj");
        assert_eq!(local_time(0).len(), "Thu Jan  1 00:00:00 1970".len());
    }
}
