//! Source text for a generated program: one C or C++ file per translation unit.
//!
//! Every unit that defines or uses an entity has *accessors* for it (`fz<unit>_<entity>_rd`,
//! `_wr`, `_ad`, `_call`, ...), exported with default visibility, and `main` calls them all: it
//! prints each value as every unit sees it, writes through one unit and reads through all,
//! and prints the identity classes of the addresses every unit computes (`ids 0 0 1` means the
//! third unit sees another object). Addresses themselves are never printed. Constructors,
//! destructors and C++ initializers print their unit's name, so their order is compared too.
//! All output goes through write(2), so a crash loses nothing already printed.

use std::fmt::Write as _;

use crate::case::Mode;
use crate::model::{DataTy, Entity, Kind, MainRef, Program, ScriptLayout, Strength, Use, Vis};

/// The files of a program: (file name, text) per unit, `main` first.
pub fn sources(p: &Program) -> Vec<(String, String)> {
    (0..p.tus.len()).map(|t| (p.tu_file(t), unit(p, t))).collect()
}

/// The linker script of a program with `Extras::script`, for a link in `mode`.
pub fn linker_script(p: &Program, mode: Mode) -> Option<String> {
    let (f, layout) = p.extras.script?;
    let mut s = format!("fzsa = {};\nPROVIDE(fzprov = 0x1234);\n", p.ents[f].name);
    match layout {
        ScriptLayout::None => {}
        ScriptLayout::Insert => s.push_str("SECTIONS { .fzdata : { *(.data.fz_*) } } INSERT AFTER .data;\n"),
        ScriptLayout::Full if mode == Mode::StaticPie => {}
        ScriptLayout::Full => s.push_str(FULL_LAYOUT),
    }
    Some(s)
}

/// The layout of fixtures/elf/script-reorder, with the sectioned data in `.fzdata`.
const FULL_LAYOUT: &str = "SECTIONS
{
  . = SEGMENT_START(\"text-segment\", 0x200000) + SIZEOF_HEADERS;
  .rodata : { *(.rodata .rodata.*) }
  .eh_frame_hdr : { *(.eh_frame_hdr) }
  .eh_frame : { KEEP(*(.eh_frame)) }
  . = ALIGN(CONSTANT(MAXPAGESIZE));
  .text : { *(.text .text.*) }
  . = ALIGN(CONSTANT(MAXPAGESIZE)) + (. & (CONSTANT(MAXPAGESIZE) - 1));
  .tdata : { *(.tdata .tdata.*) }
  .tbss : { *(.tbss .tbss.*) }
  .init_array : { KEEP(*(SORT_BY_INIT_PRIORITY(.init_array.*))) KEEP(*(.init_array)) }
  .fini_array : { KEEP(*(SORT_BY_INIT_PRIORITY(.fini_array.*))) KEEP(*(.fini_array)) }
  .data.rel.ro : { *(.data.rel.ro .data.rel.ro.*) }
  .dynamic : { *(.dynamic) }
  .got : { *(.got) }
  .data : { *(.data .data.*) }
  .fzdata : ALIGN(64) { *(.data.fz_*) }
  .bss : { *(.bss .bss.*) *(COMMON) }
  PROVIDE(_end = .);
}
";

fn attrs(list: &[&str]) -> String {
    let list: Vec<&str> = list.iter().copied().filter(|a| !a.is_empty()).collect();
    if list.is_empty() {
        String::new()
    } else {
        format!(" __attribute__(({}))", list.join(", "))
    }
}

fn vis_attr(v: Vis) -> &'static str {
    v.attr().unwrap_or("")
}

/// The accessor prefix of entity `e` in unit `t`.
fn acc(t: usize, e: &Entity) -> String {
    format!("fz{t}_{}", e.name)
}

/// A zero initializer for data and TLS whose value says so (bss / tbss).
fn is_zero(val: u32, kind: &Kind) -> bool {
    match kind {
        Kind::Data { konst: false, .. } => val.is_multiple_of(7),
        Kind::Tls { .. } => val.is_multiple_of(5),
        _ => false,
    }
}

fn init_value(val: u32, kind: &Kind) -> u32 {
    if is_zero(val, kind) {
        0
    } else {
        val
    }
}

fn unit(p: &Program, t: usize) -> String {
    let tu = &p.tus[t];
    let mut s = String::new();
    let name = p.tu_name(t);
    let _ = writeln!(s, "/* fuzzlink program {}, unit {name} */", p.id);
    // No system headers: they would cost most of the compile time. The few libc functions
    // are declared here, with glibc's x86-64 types.
    s.push_str("typedef unsigned long uintptr_t;\n#define FZ_API __attribute__((visibility(\"default\")))\n");
    if tu.cxx {
        s.push_str("extern \"C\" {\n");
    }
    s.push_str("long write(int, const void *, unsigned long);\n");
    if t == 0 {
        s.push_str(
            "int vsnprintf(char *, unsigned long, const char *, __builtin_va_list);\n\
             int pthread_create(unsigned long *, const void *, void *(*)(void *), void *);\n\
             int pthread_join(unsigned long, void **);\n",
        );
    }
    s.push_str("__attribute__((unused)) static void fz_say(const char *s) { unsigned long n = 0; while (s[n]) n++; if (write(1, s, n) < 0) {} }\n");
    // Functions called by this unit's definitions that it does not otherwise see: weak
    // references, so that the call is guarded and never an undefined-symbol error.
    for e in &p.ents {
        if let Kind::Func { calls, .. } = &e.kind {
            if e.defs.iter().any(|d| d.tu == t) {
                for &c in calls {
                    let callee = &p.ents[c];
                    if !callee.viewers().contains(&t) {
                        let _ = writeln!(s, "extern long {}(long) __attribute__((weak));", callee.name);
                    }
                }
            }
        }
    }
    for e in &p.ents {
        if !e.is_cxx_only() && e.viewers().contains(&t) {
            c_entity(&mut s, p, t, e);
        }
    }
    if tu.cxx {
        s.push_str("}\n");
        for e in &p.ents {
            if e.is_cxx_only() && e.viewers().contains(&t) {
                cxx_entity(&mut s, t, e);
            }
        }
    }
    unit_extras(&mut s, p, t);
    if t == 0 {
        main_checks(&mut s, p);
    }
    s
}

/// What unit `t` calls `e` by, and how it declared it.
fn use_of(e: &Entity, t: usize) -> Option<&Use> {
    e.uses.iter().find(|u| u.tu == t)
}

fn ref_name(e: &Entity, t: usize) -> String {
    match use_of(e, t) {
        Some(u) if u.old_version => format!("{}_old", e.name),
        Some(Use { alias: Some(a), .. }) if *a < e.aliases.len() => format!("{}_a{a}", e.name),
        _ => e.name.clone(),
    }
}

fn c_entity(s: &mut String, p: &Program, t: usize, e: &Entity) {
    let def = e.defs.iter().position(|d| d.tu == t);
    let u = use_of(e, t);
    let a = acc(t, e);
    let sym = ref_name(e, t);
    match &e.kind {
        Kind::Data { ty, align, konst, section } => {
            let cq = if *konst { "const " } else { "" };
            let dims = match ty {
                DataTy::Long => String::new(),
                DataTy::Array(n) => format!("[{n}]"),
            };
            if let Some(di) = def {
                let d = &e.defs[di];
                if d.strength == Strength::Tentative {
                    let _ = writeln!(s, "long {}{dims};", e.name);
                } else {
                    let v = init_value(d.val, &e.kind);
                    let init = match ty {
                        DataTy::Long => format!("{v}"),
                        DataTy::Array(n) => {
                            format!("{{{}}}", (0..*n).map(|i| if v == 0 { "0".to_string() } else { (v + i as u32).to_string() }).collect::<Vec<_>>().join(", "))
                        }
                    };
                    let align_attr = if *align > 0 { format!("aligned({align})") } else { String::new() };
                    let sec = if *section { format!("section(\".{}.fz_{}\")", if *konst { "rodata" } else { "data" }, e.name) } else { String::new() };
                    let weak = if d.strength == Strength::Weak { "weak" } else { "" };
                    // A namespace-scope const has internal linkage in C++ unless declared extern.
                    let ext = if *konst && p.tus[t].cxx { "extern " } else { "" };
                    let _ = writeln!(s, "{ext}{cq}long {}{dims}{} = {init};", e.name, attrs(&[weak, vis_attr(d.vis), &align_attr, &sec]));
                    if e.alias_home() == Some(di) {
                        for (i, al) in e.aliases.iter().enumerate() {
                            let _ = writeln!(
                                s,
                                "extern {cq}long {}_a{i}{dims}{};",
                                e.name,
                                attrs(&[&format!("alias(\"{}\")", e.name), if al.weak { "weak" } else { "" }, vis_attr(al.vis)])
                            );
                        }
                    }
                }
            } else if let Some(u) = u {
                let _ = writeln!(
                    s,
                    "extern {cq}long {sym}{dims}{};",
                    attrs(&[if u.weak { "weak" } else { "" }, if u.hidden_decl { "visibility(\"hidden\")" } else { "" }])
                );
            }
            let in_data = u.is_some_and(|u| u.in_data);
            let weak = u.is_some_and(|u| u.weak);
            let ptr = if in_data {
                let _ = writeln!(s, "static const void *volatile {a}_p = (const void *)&{sym};");
                format!("{a}_p")
            } else {
                format!("((const void *)&{sym})")
            };
            let guard = if weak { format!("{ptr} != (const void *)0") } else { "1".to_string() };
            let read = match ty {
                DataTy::Long => format!("*(const long *){ptr}"),
                DataTy::Array(n) => format!("((const long *){ptr})[0] * 7 + ((const long *){ptr})[{}]", n - 1),
            };
            let _ = writeln!(s, "FZ_API long {a}_rd(void) {{ return ({guard}) ? {read} : -1; }}");
            if !konst {
                let _ = writeln!(s, "FZ_API void {a}_wr(long x) {{ if ({guard}) *(long *){ptr} = x; }}");
            }
            let _ = writeln!(s, "FZ_API const void *{a}_ad(void) {{ return {ptr}; }}");
        }
        Kind::Tls { align, def_model } => {
            if let Some(di) = def {
                let d = &e.defs[di];
                let align_attr = if *align > 0 { format!("aligned({align})") } else { String::new() };
                let model = def_model.map(|m| format!("tls_model(\"{}\")", m.name())).unwrap_or_default();
                let weak = if d.strength == Strength::Weak { "weak" } else { "" };
                let _ = writeln!(s, "__thread long {}{} = {};", e.name, attrs(&[weak, vis_attr(d.vis), &align_attr, &model]), init_value(d.val, &e.kind));
            } else if let Some(u) = u {
                let model = u.model.map(|m| format!("tls_model(\"{}\")", m.name())).unwrap_or_default();
                let _ = writeln!(s, "extern __thread long {}{};", e.name, attrs(&[&model, if u.hidden_decl { "visibility(\"hidden\")" } else { "" }]));
            }
            let _ = writeln!(s, "FZ_API long {a}_rd(void) {{ return {}; }}", e.name);
            let _ = writeln!(s, "FZ_API void {a}_wr(long x) {{ {} = x; }}", e.name);
            let _ = writeln!(s, "FZ_API const void *{a}_ad(void) {{ return (const void *)&{}; }}", e.name);
        }
        Kind::Func { ifunc, calls } => {
            if let Some(di) = def {
                let d = &e.defs[di];
                let body = |val: u32| {
                    let mut b = format!("unsigned long r = (unsigned long)x * 31u + {val}u;");
                    for (k, &c) in calls.iter().enumerate() {
                        let callee = &p.ents[c];
                        let cname = ref_name(callee, t);
                        let weak = !callee.viewers().contains(&t) || use_of(callee, t).is_some_and(|u| u.weak);
                        if weak {
                            let _ = write!(b, " r ^= (unsigned long)({cname} ? {cname}(x + {}) : 5);", k + 1);
                        } else {
                            let _ = write!(b, " r ^= (unsigned long){cname}(x + {});", k + 1);
                        }
                    }
                    b.push_str(" return (long)(r % 100003u);");
                    b
                };
                if *ifunc {
                    // The resolver is a hidden global: clang looks the ifunc's target up by its
                    // mangled name, and a static function inside `extern "C"` is mangled.
                    let _ = writeln!(s, "static long {}_i0(long x) {{ {} }}", e.name, body(d.val));
                    let _ = writeln!(s, "static long {}_i1(long x) {{ {} }}", e.name, body(d.val + 1));
                    let _ = writeln!(s, "__attribute__((visibility(\"hidden\"))) long (*{0}_resolver(void))(long) {{ return {0}_i{1}; }}", e.name, d.val % 2);
                    let _ = writeln!(s, "long {}(long x){};", e.name, attrs(&[&format!("ifunc(\"{}_resolver\")", e.name), vis_attr(d.vis)]));
                } else {
                    let weak = if d.strength == Strength::Weak { "weak" } else { "" };
                    let _ = writeln!(s, "long {}(long x){};", e.name, attrs(&[weak, vis_attr(d.vis)]));
                    let _ = writeln!(s, "long {}(long x) {{ {} }}", e.name, body(d.val));
                    if e.alias_home() == Some(di) {
                        for (i, al) in e.aliases.iter().enumerate() {
                            let _ = writeln!(
                                s,
                                "long {}_a{i}(long x){};",
                                e.name,
                                attrs(&[&format!("alias(\"{}\")", e.name), if al.weak { "weak" } else { "" }, vis_attr(al.vis)])
                            );
                        }
                    }
                }
            } else if let Some(u) = u {
                let _ = writeln!(
                    s,
                    "extern long {sym}(long){};",
                    attrs(&[if u.weak { "weak" } else { "" }, if u.hidden_decl { "visibility(\"hidden\")" } else { "" }])
                );
            }
            func_accessors(s, &a, &sym, u);
        }
        Kind::Versioned => {
            if let Some(di) = def {
                let d = &e.defs[di];
                let _ = writeln!(s, "long {0}_1(long x) {{ return (long)(((unsigned long)x * 17u + {1}u) % 100003u); }}", e.name, d.val);
                let _ = writeln!(s, "long {0}_2(long x) {{ return (long)(((unsigned long)x * 19u + {1}u) % 100003u); }}", e.name, d.val + 500);
                let _ = writeln!(s, "__asm__(\".symver {0}_1, {0}@FZ_1\");\n__asm__(\".symver {0}_2, {0}@@FZ_2\");", e.name);
                let _ = writeln!(s, "extern long {}(long);", e.name);
            } else if let Some(u) = u {
                if u.old_version {
                    let _ = writeln!(
                        s,
                        "extern long {0}_old(long){1};\n__asm__(\".symver {0}_old, {0}@FZ_1\");",
                        e.name,
                        attrs(&[if u.weak { "weak" } else { "" }])
                    );
                } else {
                    let _ = writeln!(s, "extern long {}(long){};", e.name, attrs(&[if u.weak { "weak" } else { "" }]));
                }
            }
            func_accessors(s, &a, &sym, u);
        }
        Kind::CxxFunc { .. } | Kind::CxxVar { .. } | Kind::CxxThrow => unreachable!("C++ entities are emitted by cxx_entity"),
    }
}

fn func_accessors(s: &mut String, a: &str, sym: &str, u: Option<&Use>) {
    let weak = u.is_some_and(|u| u.weak);
    let target = if u.is_some_and(|u| u.in_data) {
        let _ = writeln!(s, "static long (*volatile {a}_p)(long) = {sym};");
        format!("{a}_p")
    } else {
        sym.to_string()
    };
    if weak {
        let _ = writeln!(s, "FZ_API long {a}_call(long x) {{ return {target} ? {target}(x) : -1; }}");
    } else {
        let _ = writeln!(s, "FZ_API long {a}_call(long x) {{ return {target}(x); }}");
    }
    let _ = writeln!(s, "FZ_API const void *{a}_ad(void) {{ return (const void *){target}; }}");
}

fn cxx_entity(s: &mut String, t: usize, e: &Entity) {
    let a = acc(t, e);
    let val = e.defs.first().map_or(1, |d| d.val);
    match &e.kind {
        Kind::CxxFunc { hidden, noinline } => {
            let at = attrs(&[if *hidden { "visibility(\"hidden\")" } else { "" }, if *noinline { "noinline" } else { "" }]);
            let _ = writeln!(s, "{at} inline long {}(long x) {{ static long n = {val}; n = n * 3 + x; return n % 100003; }}", e.name);
            let _ = writeln!(s, "extern \"C\" FZ_API long {a}_call(long x) {{ return {}(x); }}", e.name);
            let _ = writeln!(s, "extern \"C\" FZ_API const void *{a}_ad(void) {{ return (const void *)&{}; }}", e.name);
        }
        Kind::CxxVar { hidden } => {
            let _ = writeln!(s, "inline long {}{} = {val};", e.name, attrs(&[if *hidden { "visibility(\"hidden\")" } else { "" }]));
            let _ = writeln!(s, "extern \"C\" FZ_API long {a}_rd(void) {{ return {}; }}", e.name);
            let _ = writeln!(s, "extern \"C\" FZ_API void {a}_wr(long x) {{ {} = x; }}", e.name);
            let _ = writeln!(s, "extern \"C\" FZ_API const void *{a}_ad(void) {{ return (const void *)&{}; }}", e.name);
        }
        Kind::CxxThrow => {
            let thrower = e.defs[0].tu;
            let ty = format!("Fz{}", e.name.to_uppercase());
            let _ = writeln!(s, "struct {ty} {{ long v; }};");
            let throw = format!("fz{thrower}_{}_throw", e.name);
            if thrower == t {
                let _ = writeln!(s, "extern \"C\" FZ_API void {throw}(long v) {{ if (v >= 0) throw {ty}{{v + {val}}}; }}");
            } else {
                let _ = writeln!(s, "extern \"C\" FZ_API void {throw}(long v);");
            }
            let _ = writeln!(
                s,
                "extern \"C\" FZ_API long {a}_catch(long v) {{ try {{ {throw}(v); }} catch (const {ty} &e) {{ return e.v * 2 + 1; }} catch (...) {{ return -2; }} return -1; }}"
            );
        }
        _ => unreachable!("C entities are emitted by c_entity"),
    }
}

fn unit_extras(s: &mut String, p: &Program, t: usize) {
    let tu = &p.tus[t];
    let name = p.tu_name(t);
    let ext = if tu.cxx { "extern \"C\" " } else { "" };
    let decl = if tu.cxx { "extern \"C\" " } else { "extern " };
    if let Some(prio) = tu.ctor {
        let c = if prio > 0 { format!("constructor({prio})") } else { "constructor".to_string() };
        let _ = writeln!(s, "{ext}__attribute__(({c})) void fz{t}_ctor(void) {{ fz_say(\"ctor {name}\\n\"); }}");
    }
    if tu.dtor {
        let _ = writeln!(s, "{ext}__attribute__((destructor)) void fz{t}_dtor(void) {{ fz_say(\"dtor {name}\\n\"); }}");
    }
    if tu.cxx && tu.static_init {
        let _ = writeln!(s, "namespace {{ struct FzInit {{ FzInit() {{ fz_say(\"init {name}\\n\"); }} }} fz_init; }}");
    }
    if tu.records > 0 {
        s.push_str("struct fzrec { long v; };\n");
        for k in 0..tu.records {
            let retain = if tu.retain { ", retain" } else { "" };
            let _ =
                writeln!(s, "static const struct fzrec fzrec_{t}_{k} __attribute__((used{retain}, section(\"fzrec\"))) = {{ {} }};", t * 100 + k as usize + 1);
        }
        let _ = writeln!(s, "{decl}const struct fzrec __start_fzrec[] __attribute__((weak, visibility(\"hidden\")));");
        let _ = writeln!(s, "{decl}const struct fzrec __stop_fzrec[] __attribute__((weak, visibility(\"hidden\")));");
        let _ = writeln!(
            s,
            "{ext}FZ_API long fz{t}_recs(void) {{ long n = 0, v = 0; uintptr_t a = (uintptr_t)__start_fzrec, b = (uintptr_t)__stop_fzrec; \
             __asm__ volatile(\"\" : \"+r\"(a), \"+r\"(b)); for (; a < b; a += sizeof(struct fzrec)) {{ n++; v += ((const struct fzrec *)a)->v; }} return n * 100000 + v; }}"
        );
    }
}

/// How `main` calls an accessor of unit `t` (`-1` / null when a weakly referenced unit is
/// missing).
fn call(p: &Program, t: usize, f: &str, args: &str, missing: &str) -> String {
    if t != 0 && p.tus[t].main_ref == MainRef::Weak {
        format!("({f} ? {f}({args}) : {missing})")
    } else {
        format!("{f}({args})")
    }
}

/// The units whose accessors `main` calls.
fn reachable(p: &Program, viewers: Vec<usize>) -> Vec<usize> {
    viewers.into_iter().filter(|&t| t == 0 || p.tus[t].main_ref != MainRef::None).collect()
}

fn main_checks(s: &mut String, p: &Program) {
    let ext = if p.tus[0].cxx { "extern \"C\" " } else { "" };
    // Declarations of the other units' accessors.
    let mut decls = String::new();
    let mut declare = |t: usize, sig: &str| {
        if t != 0 {
            let weak = if p.tus[t].main_ref == MainRef::Weak { " __attribute__((weak))" } else { "" };
            let _ = writeln!(decls, "{ext}FZ_API {sig}{weak};");
        }
    };
    for e in &p.ents {
        for t in reachable(p, e.viewers()) {
            let a = acc(t, e);
            match &e.kind {
                Kind::Data { konst, .. } => {
                    declare(t, &format!("long {a}_rd(void)"));
                    if !konst {
                        declare(t, &format!("void {a}_wr(long)"));
                    }
                    declare(t, &format!("const void *{a}_ad(void)"));
                }
                Kind::Tls { .. } | Kind::CxxVar { .. } => {
                    declare(t, &format!("long {a}_rd(void)"));
                    declare(t, &format!("void {a}_wr(long)"));
                    declare(t, &format!("const void *{a}_ad(void)"));
                }
                Kind::Func { .. } | Kind::Versioned | Kind::CxxFunc { .. } => {
                    declare(t, &format!("long {a}_call(long)"));
                    declare(t, &format!("const void *{a}_ad(void)"));
                }
                Kind::CxxThrow => declare(t, &format!("long {a}_catch(long)")),
            }
        }
    }
    for t in 1..p.tus.len() {
        if p.tus[t].records > 0 && p.tus[t].main_ref != MainRef::None {
            declare(t, &format!("long fz{t}_recs(void)"));
        }
    }
    s.push_str(&decls);
    s.push_str(
        "static void say(const char *fmt, ...) { char b[512]; __builtin_va_list ap; __builtin_va_start(ap, fmt); int n = vsnprintf(b, sizeof b, fmt, ap); __builtin_va_end(ap);\n\
         \x20 if (n > (int)sizeof b - 1) n = (int)sizeof b - 1; if (n > 0 && write(1, b, (unsigned long)n) < 0) {} }\n\
         static uintptr_t fz_hide(const void *p) { uintptr_t x = (uintptr_t)p; __asm__ volatile(\"\" : \"+r\"(x)); return x; }\n\
         static void ids(const char *what, int n, const void *const *a) { say(\"%s ids\", what);\n\
         \x20 for (int i = 0; i < n; i++) { if (!fz_hide(a[i])) { say(\" -\"); continue; } int c = i;\n\
         \x20   for (int j = 0; j < i; j++) if (fz_hide(a[j]) == fz_hide(a[i])) { c = j; break; } say(\" %d\", c); }\n\
         \x20 say(\"\\n\"); }\n",
    );
    // Extras: --defsym, the linker script's symbols, --wrap.
    if p.extras.defsym.is_some() {
        let _ = writeln!(s, "{ext}long fzds(long);");
    }
    if p.extras.script.is_some() {
        let _ = writeln!(s, "{ext}long fzsa(long);\n{ext}char fzprov[];");
    }
    if let Some(w) = p.extras.wrap {
        let n = &p.ents[w].name;
        let _ = writeln!(s, "{ext}long __real_{n}(long);\n{ext}long __wrap_{n}(long x) {{ return __real_{n}(x) + 500000; }}");
    }
    // The TLS thread.
    let tls: Vec<&Entity> = p.ents.iter().filter(|e| matches!(e.kind, Kind::Tls { .. })).collect();
    if p.threads {
        for e in &tls {
            let n = reachable(p, e.viewers()).len();
            let _ = writeln!(s, "static long fzth_{0}_v[{1}]; static const void *fzth_{0}_a[{1}];", e.name, n.max(1));
        }
        s.push_str("static void *fz_thread(void *arg) { (void)arg;\n");
        for e in &tls {
            for (i, t) in reachable(p, e.viewers()).into_iter().enumerate() {
                let a = acc(t, e);
                let _ = writeln!(
                    s,
                    "  fzth_{0}_v[{i}] = {1}; fzth_{0}_a[{i}] = {2};",
                    e.name,
                    call(p, t, &format!("{a}_rd"), "", "-1"),
                    call(p, t, &format!("{a}_ad"), "", "0")
                );
            }
        }
        s.push_str("  return 0; }\n");
    }
    s.push_str("int main(void) {\n  say(\"main\\n\");\n");
    for e in &p.ents {
        entity_checks(s, p, e);
    }
    for t in 0..p.tus.len() {
        if p.tus[t].records > 0 && (t == 0 || p.tus[t].main_ref != MainRef::None) {
            let _ = writeln!(s, "  say(\"recs {} %ld\\n\", {});", p.tu_name(t), call(p, t, &format!("fz{t}_recs"), "", "-1"));
        }
    }
    if p.threads && !tls.is_empty() {
        s.push_str("  { unsigned long th; if (pthread_create(&th, 0, fz_thread, 0) == 0) pthread_join(th, 0); else say(\"no thread\\n\"); }\n");
        for e in &tls {
            let ts = reachable(p, e.viewers());
            let n = ts.len();
            if n == 0 {
                continue;
            }
            let _ = write!(s, "  say(\"{} thread\"", e.name);
            let _ = writeln!(s, ");");
            for i in 0..n {
                let _ = writeln!(s, "  say(\" %ld\", fzth_{}_v[{i}]);", e.name);
            }
            let main_addrs: Vec<String> = ts.iter().map(|&t| call(p, t, &format!("{}_ad", acc(t, e)), "", "0")).collect();
            let thread_addrs: Vec<String> = (0..n).map(|i| format!("fzth_{}_a[{i}]", e.name)).collect();
            let _ = writeln!(
                s,
                "  say(\"\\n\"); {{ const void *a[] = {{ {}, {} }}; ids(\"{} main+thread\", {}, a); }}",
                main_addrs.join(", "),
                thread_addrs.join(", "),
                e.name,
                2 * n
            );
        }
    }
    if let Some(f) = p.extras.defsym {
        extra_checks(s, p, f, "fzds", "defsym");
    }
    if let Some((f, _)) = p.extras.script {
        extra_checks(s, p, f, "fzsa", "script");
        // The absolute symbol's value, not its address: in a PIE that would depend on ASLR.
        s.push_str("  say(\"fzprov %d\\n\", (int)(fz_hide(fzprov) == 0x1234));\n");
    }
    s.push_str("  say(\"end\\n\");\n  return 0;\n}\n");
}

fn extra_checks(s: &mut String, p: &Program, f: usize, sym: &str, what: &str) {
    let e = &p.ents[f];
    let _ = writeln!(s, "  say(\"{what} %ld\\n\", {sym}(9));");
    let mut addrs = vec![format!("(const void *){sym}")];
    addrs.extend(reachable(p, e.viewers()).into_iter().map(|t| call(p, t, &format!("{}_ad", acc(t, e)), "", "0")));
    let _ = writeln!(s, "  {{ const void *a[] = {{ {} }}; ids(\"{what}\", {}, a); }}", addrs.join(", "), addrs.len());
}

fn entity_checks(s: &mut String, p: &Program, e: &Entity) {
    let ts = reachable(p, e.viewers());
    if ts.is_empty() {
        return;
    }
    let n = &e.name;
    let reads = |s: &mut String, label: &str| {
        let _ = write!(s, "  say(\"{n} {label}\");");
        for &t in &ts {
            let _ = write!(s, " say(\" %ld\", {});", call(p, t, &format!("{}_rd", acc(t, e)), "", "-1"));
        }
        s.push_str(" say(\"\\n\");\n");
    };
    let addrs = |s: &mut String| {
        let list: Vec<String> = ts.iter().map(|&t| call(p, t, &format!("{}_ad", acc(t, e)), "", "0")).collect();
        let _ = writeln!(s, "  {{ const void *a[] = {{ {} }}; ids(\"{n}\", {}, a); }}", list.join(", "), list.len());
    };
    match &e.kind {
        Kind::Data { konst, align, .. } => {
            reads(s, "rd");
            if !konst {
                let w = ts[e.writer % ts.len()];
                let f = format!("{}_wr", acc(w, e));
                if w != 0 && p.tus[w].main_ref == MainRef::Weak {
                    let _ = writeln!(s, "  if ({f}) {f}(4242);");
                } else {
                    let _ = writeln!(s, "  {f}(4242);");
                }
                reads(s, "after");
            }
            addrs(s);
            if *align > 0 {
                let t = ts[0];
                let _ = writeln!(s, "  say(\"{n} aligned %d\\n\", (int)(fz_hide({}) % {align}u == 0));", call(p, t, &format!("{}_ad", acc(t, e)), "", "0"));
            }
        }
        Kind::Tls { align, .. } => {
            reads(s, "rd");
            let w = ts[e.writer % ts.len()];
            let f = format!("{}_wr", acc(w, e));
            if w != 0 && p.tus[w].main_ref == MainRef::Weak {
                let _ = writeln!(s, "  if ({f}) {f}(777);");
            } else {
                let _ = writeln!(s, "  {f}(777);");
            }
            reads(s, "after");
            addrs(s);
            if *align > 0 {
                let t = ts[0];
                let _ = writeln!(s, "  say(\"{n} aligned %d\\n\", (int)(fz_hide({}) % {align}u == 0));", call(p, t, &format!("{}_ad", acc(t, e)), "", "0"));
            }
        }
        Kind::CxxVar { .. } => {
            reads(s, "rd");
            let w = ts[e.writer % ts.len()];
            let f = format!("{}_wr", acc(w, e));
            if w != 0 && p.tus[w].main_ref == MainRef::Weak {
                let _ = writeln!(s, "  if ({f}) {f}(777);");
            } else {
                let _ = writeln!(s, "  {f}(777);");
            }
            reads(s, "after");
            addrs(s);
        }
        Kind::Func { .. } | Kind::Versioned => {
            let _ = write!(s, "  say(\"{n} call\");");
            for &t in &ts {
                let _ = write!(s, " say(\" %ld\", {});", call(p, t, &format!("{}_call", acc(t, e)), "3", "-1"));
            }
            s.push_str(" say(\"\\n\");\n");
            addrs(s);
        }
        Kind::CxxFunc { .. } => {
            let _ = write!(s, "  say(\"{n} call\");");
            for (i, &t) in ts.iter().enumerate() {
                let _ = write!(s, " say(\" %ld\", {});", call(p, t, &format!("{}_call", acc(t, e)), &format!("{}", i + 1), "-1"));
            }
            s.push_str(" say(\"\\n\");\n");
            addrs(s);
        }
        Kind::CxxThrow => {
            let _ = write!(s, "  say(\"{n} catch\");");
            for (i, &t) in ts.iter().enumerate() {
                let _ = write!(s, " say(\" %ld\", {});", call(p, t, &format!("{}_catch", acc(t, e)), &format!("{}", i + 2), "-1"));
            }
            s.push_str(" say(\"\\n\");\n");
        }
    }
}
