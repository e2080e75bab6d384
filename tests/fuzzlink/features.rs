//! Named features of a case and how to take each one out (its *ablation*). They serve three
//! purposes:
//!
//! * tags: a case has feature `f` when ablating `f` changes it;
//! * `FUZZLINK_AVOID=f,g`: every generated case has those features ablated, so a long run can
//!   look for new divergences while known ones are still open;
//! * attribution: a divergence is put in the bucket of a known one (a shrunk reproducer) when
//!   ablating that reproducer's essential features makes the divergence go away.

use crate::model::{Kind, Program, ScriptLayout, Strength, Vis};
use crate::shape::{Home, Shape, Variant};

pub type State = (Program, Shape);

/// Every feature, in the order tags are printed.
pub const FEATURES: &[&str] = &[
    "shared",
    "archive",
    "thin-archive",
    "lto",
    "crel",
    "tlsdesc",
    "fsections",
    "opt",
    "pic",
    "no-plt",
    "no-sem-interp",
    "vis-hidden",
    "gcc-compile",
    "gcc-driver",
    "gc",
    "icf",
    "z-now",
    "relr",
    "export-dynamic",
    "no-relax",
    "hash-style",
    "strip",
    "unresolved",
    "notext",
    "lto-O2",
    "separate-code",
    "sort-section",
    "norelro",
    "bsymbolic",
    "bsymbolic-functions",
    "bsymbolic-non-weak-functions",
    "z-defs",
    "nodelete",
    "version-script",
    "as-needed",
    "lib-deps",
    "wrap",
    "defsym",
    "script",
    "script-insert",
    "script-layout",
    "alias",
    "ifunc",
    "common",
    "weak-def",
    "interpose",
    "protected",
    "hidden",
    "in-data",
    "weak-ref",
    "tls",
    "tls-model",
    "versioned",
    "old-version",
    "cxx",
    "exceptions",
    "records",
    "ctor",
    "threads",
    "aligned",
];

fn set<T: PartialEq>(slot: &mut T, to: T) -> bool {
    if *slot == to {
        false
    } else {
        *slot = to;
        true
    }
}

fn variants(s: &mut Shape) -> Vec<&mut Variant> {
    std::iter::once(&mut s.main_variant)
        .chain(s.obj_variants.iter_mut())
        .chain(s.archives.iter_mut().map(|a| &mut a.variant))
        .chain(s.libs.iter_mut().map(|l| &mut l.variant))
        .collect()
}

fn each_variant(s: &mut Shape, f: impl Fn(&mut Variant) -> bool) -> bool {
    let mut changed = false;
    for v in variants(s) {
        changed |= f(v);
    }
    changed
}

/// Removes the link flags (program and libraries) that `pred` selects.
fn drop_flags(s: &mut Shape, pred: impl Fn(&str) -> bool) -> bool {
    let before = s.flags.len() + s.libs.iter().map(|l| l.flags.len()).sum::<usize>();
    s.flags.retain(|f| !pred(f));
    for l in s.libs.iter_mut() {
        l.flags.retain(|f| !pred(f));
    }
    before != s.flags.len() + s.libs.iter().map(|l| l.flags.len()).sum::<usize>()
}

/// Removes the entities `pred` selects.
fn drop_entities(p: &mut Program, pred: impl Fn(&Kind) -> bool) -> bool {
    let mut changed = false;
    let mut i = 0;
    while i < p.ents.len() {
        if pred(&p.ents[i].kind) {
            crate::shrink::remove_entity(p, i);
            changed = true;
        } else {
            i += 1;
        }
    }
    changed
}

/// Takes feature `f` out of the case; false when it had none of it (or `f` is unknown).
pub fn ablate(st: &mut State, f: &str) -> bool {
    let (p, s) = st;
    match f {
        "shared" => {
            let mut c = false;
            for h in s.homes.iter_mut() {
                if matches!(h, Home::Lib(_)) {
                    *h = Home::Object;
                    c = true;
                }
            }
            c
        }
        "archive" => {
            let mut c = false;
            for h in s.homes.iter_mut() {
                if matches!(h, Home::Archive(_)) {
                    *h = Home::Object;
                    c = true;
                }
            }
            c
        }
        "thin-archive" => {
            let used: Vec<usize> = s.homes.iter().filter_map(|h| if let Home::Archive(a) = h { Some(*a) } else { None }).collect();
            let mut c = false;
            for (i, a) in s.archives.iter_mut().enumerate() {
                if used.contains(&i) {
                    c |= set(&mut a.kind, crate::case::ArchiveKind::Regular);
                }
            }
            c
        }
        "lto" => each_variant(s, |v| set(&mut v.lto, false)),
        "crel" => each_variant(s, |v| set(&mut v.crel, false)),
        "tlsdesc" => each_variant(s, |v| set(&mut v.tlsdesc, false)),
        "fsections" => each_variant(s, |v| set(&mut v.fsections, false)),
        "opt" => each_variant(s, |v| set(&mut v.opt, None)),
        "pic" => each_variant(s, |v| set(&mut v.pic, None)),
        "no-plt" => each_variant(s, |v| set(&mut v.no_plt, false)),
        "no-sem-interp" => each_variant(s, |v| set(&mut v.no_sem_interp, false)),
        "vis-hidden" => each_variant(s, |v| set(&mut v.vis_hidden, false)),
        "gcc-compile" => set(&mut s.gcc_compile, false),
        "gcc-driver" => set(&mut s.gcc_driver, false),
        "gc" => drop_flags(s, |f| f.contains("--gc-sections")),
        "icf" => drop_flags(s, |f| f.contains("--icf")),
        "z-now" => drop_flags(s, |f| f.ends_with("-z,now")),
        "relr" => drop_flags(s, |f| f.contains("pack-relative-relocs")),
        "export-dynamic" => drop_flags(s, |f| f.contains("--export-dynamic")),
        "no-relax" => drop_flags(s, |f| f.contains("--no-relax")),
        "hash-style" => drop_flags(s, |f| f.contains("--hash-style")),
        "strip" => drop_flags(s, |f| f.contains("--strip")),
        "unresolved" => drop_flags(s, |f| f.contains("--unresolved-symbols")),
        "notext" => drop_flags(s, |f| f.ends_with("-z,notext")),
        "lto-O2" => drop_flags(s, |f| f == "-Wl,-O2"),
        "separate-code" => drop_flags(s, |f| f.contains("separate-code")),
        "sort-section" => drop_flags(s, |f| f.contains("--sort-section")),
        "norelro" => drop_flags(s, |f| f.ends_with("-z,norelro")),
        "bsymbolic" => drop_flags(s, |f| f == "-Wl,-Bsymbolic"),
        "bsymbolic-functions" => drop_flags(s, |f| f == "-Wl,-Bsymbolic-functions"),
        "bsymbolic-non-weak-functions" => drop_flags(s, |f| f == "-Wl,-Bsymbolic-non-weak-functions"),
        "z-defs" => drop_flags(s, |f| f.ends_with("-z,defs")),
        "nodelete" => drop_flags(s, |f| f.ends_with("-z,nodelete")),
        "version-script" => {
            // Libraries defining versions cannot do without their script.
            let mut c = false;
            for (k, l) in s.libs.iter_mut().enumerate() {
                let versions = p.ents.iter().any(|e| matches!(e.kind, Kind::Versioned) && e.defs.iter().any(|d| s.homes.get(d.tu) == Some(&Home::Lib(k))));
                if !versions {
                    c |= set(&mut l.script, None);
                }
            }
            c
        }
        "as-needed" => {
            let mut c = set(&mut s.as_needed, false);
            for l in s.libs.iter_mut() {
                c |= set(&mut l.as_needed_deps, false);
            }
            c
        }
        "lib-deps" => {
            let mut c = false;
            for l in s.libs.iter_mut() {
                c |= set(&mut l.deps, Vec::new());
            }
            c
        }
        "wrap" => set(&mut p.extras.wrap, None),
        "defsym" => set(&mut p.extras.defsym, None),
        "script" => set(&mut p.extras.script, None),
        "script-insert" | "script-layout" => {
            let which = if f == "script-insert" { ScriptLayout::Insert } else { ScriptLayout::Full };
            match &mut p.extras.script {
                Some((_, layout)) if *layout == which => set(layout, ScriptLayout::None),
                _ => false,
            }
        }
        "alias" => {
            let mut c = false;
            for e in p.ents.iter_mut() {
                if !e.aliases.is_empty() {
                    e.aliases.clear();
                    c = true;
                }
                for u in e.uses.iter_mut() {
                    u.alias = None;
                }
            }
            c
        }
        "ifunc" => {
            let mut c = false;
            for e in p.ents.iter_mut() {
                if let Kind::Func { ifunc, .. } = &mut e.kind {
                    c |= set(ifunc, false);
                }
            }
            c
        }
        "common" => {
            let mut c = false;
            for e in p.ents.iter_mut() {
                if e.defs.iter().any(|d| d.strength == Strength::Tentative) {
                    // One ordinary definition instead of the common symbols.
                    let strong = e.defs.iter().position(|d| d.strength == Strength::Strong);
                    let keep = strong.unwrap_or(0);
                    let mut d = e.defs[keep].clone();
                    d.strength = Strength::Strong;
                    e.defs = vec![d];
                    c = true;
                }
            }
            c
        }
        "weak-def" => {
            let mut c = false;
            for e in p.ents.iter_mut() {
                if e.is_cxx_only() {
                    continue;
                }
                let has_strong = e.defs.iter().any(|d| d.strength == Strength::Strong);
                let before = e.defs.len();
                if has_strong {
                    e.defs.retain(|d| d.strength != Strength::Weak);
                } else if let Some(d) = e.defs.iter_mut().find(|d| d.strength == Strength::Weak) {
                    d.strength = Strength::Strong;
                    c = true;
                    let first = d.tu;
                    e.defs.retain(|d| d.strength != Strength::Weak || d.tu == first);
                }
                c |= before != e.defs.len();
            }
            crate::shrink::prune(p);
            c
        }
        "interpose" => {
            let mut c = false;
            for e in p.ents.iter_mut() {
                let mut seen = false;
                let before = e.defs.len();
                e.defs.retain(|d| {
                    if d.strength != Strength::Strong {
                        return true;
                    }
                    let keep = !seen;
                    seen = true;
                    keep
                });
                c |= before != e.defs.len();
            }
            crate::shrink::prune(p);
            c
        }
        "protected" | "hidden" => {
            let vis = if f == "hidden" { Vis::Hidden } else { Vis::Protected };
            let mut c = false;
            for e in p.ents.iter_mut() {
                for d in e.defs.iter_mut() {
                    if d.vis == vis {
                        c |= set(&mut d.vis, Vis::Default);
                    }
                }
                for a in e.aliases.iter_mut() {
                    if a.vis == vis {
                        c |= set(&mut a.vis, Vis::Default);
                    }
                }
                if vis == Vis::Hidden {
                    match &mut e.kind {
                        Kind::CxxFunc { hidden, .. } | Kind::CxxVar { hidden } => c |= set(hidden, false),
                        _ => {}
                    }
                    for u in e.uses.iter_mut() {
                        c |= set(&mut u.hidden_decl, false);
                    }
                }
            }
            c
        }
        "in-data" => uses(p, |u| set(&mut u.in_data, false)),
        "weak-ref" => {
            let mut c = false;
            for e in p.ents.iter_mut() {
                if !e.defs.is_empty() {
                    for u in e.uses.iter_mut() {
                        c |= set(&mut u.weak, false);
                    }
                }
            }
            c
        }
        "tls" => drop_entities(p, |k| matches!(k, Kind::Tls { .. })),
        "tls-model" => {
            let mut c = uses(p, |u| set(&mut u.model, None));
            for e in p.ents.iter_mut() {
                if let Kind::Tls { def_model, .. } = &mut e.kind {
                    c |= set(def_model, None);
                }
            }
            c
        }
        "versioned" => drop_entities(p, |k| matches!(k, Kind::Versioned)),
        "old-version" => uses(p, |u| set(&mut u.old_version, false)),
        "cxx" => {
            let mut c = drop_entities(p, |k| matches!(k, Kind::CxxFunc { .. } | Kind::CxxVar { .. } | Kind::CxxThrow));
            for t in p.tus.iter_mut() {
                c |= set(&mut t.cxx, false);
                c |= set(&mut t.static_init, false);
            }
            c
        }
        "exceptions" => drop_entities(p, |k| matches!(k, Kind::CxxThrow)),
        "records" => {
            let mut c = false;
            for t in p.tus.iter_mut() {
                c |= set(&mut t.records, 0);
            }
            c
        }
        "ctor" => {
            let mut c = false;
            for t in p.tus.iter_mut() {
                c |= set(&mut t.ctor, None);
                c |= set(&mut t.dtor, false);
                c |= set(&mut t.static_init, false);
            }
            c
        }
        "threads" => set(&mut p.threads, false),
        "aligned" => {
            let mut c = false;
            for e in p.ents.iter_mut() {
                match &mut e.kind {
                    Kind::Data { align, .. } | Kind::Tls { align, .. } => c |= set(align, 0),
                    _ => {}
                }
            }
            c
        }
        _ => false,
    }
}

fn uses(p: &mut Program, f: impl Fn(&mut crate::model::Use) -> bool) -> bool {
    let mut c = false;
    for e in p.ents.iter_mut() {
        for u in e.uses.iter_mut() {
            c |= f(u);
        }
    }
    c
}

/// The features a case has (those whose ablation changes it), after its mode.
pub fn tags(st: &State) -> Vec<String> {
    let mut t = vec![st.1.mode.name().to_string()];
    for f in FEATURES {
        let mut c = st.clone();
        if ablate(&mut c, f) {
            t.push(f.to_string());
        }
    }
    t
}

/// Checks a feature list (`FUZZLINK_AVOID`).
pub fn parse_list(text: &str) -> Result<Vec<String>, String> {
    let list: Vec<String> = text.split(',').map(|s| s.trim().to_string()).filter(|s| !s.is_empty()).collect();
    for f in &list {
        if !FEATURES.contains(&f.as_str()) {
            return Err(format!("unknown feature `{f}` (known: {})", FEATURES.join(", ")));
        }
    }
    Ok(list)
}
