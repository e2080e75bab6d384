//! Shrinking a divergent case: greedy passes over the program and the shape that drop units,
//! entities, references, definitions, aliases and flags, and reset attributes and compile
//! variants to their plain values, keeping each change only while the case still diverges the
//! same way (same `DivKind`). The result is written as a fixture of the differential harness.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::case::ArchiveKind;
use crate::exec::{run_case, DivKind, Env};
use crate::features::State;
use crate::model::{DataTy, Kind, MainRef, Program, Strength, Vis};
use crate::shape::{self, Home, Shape, Variant};

/// At most this many trial links per shrink, and this much time.
const MAX_TRIES: usize = 600;
const MAX_TIME: Duration = Duration::from_secs(900);

#[derive(Clone, Copy, Debug)]
enum VarRef {
    Main,
    Obj(usize),
    Archive(usize),
    Lib(usize),
}

#[derive(Clone, Copy, Debug)]
enum Op {
    RemoveTu(usize),
    RemoveEnt(usize),
    RemoveUse(usize, usize),
    RemoveDef(usize, usize),
    RemoveAlias(usize),
    SimplifyEnt(usize, u8),
    SimplifyDef(usize, usize, u8),
    SimplifyUse(usize, usize, u8),
    SimplifyTu(usize, u8),
    Threads,
    Defsym,
    Script,
    ScriptInsert,
    Wrap,
    ProgFlag(usize),
    LibFlag(usize, usize),
    LibScript(usize),
    LibDeps(usize),
    LibAsNeededDeps(usize),
    Variant(VarRef, u8),
    HomeToObject(usize),
    ArchiveRegular(usize),
    AsNeeded,
    LibOrder,
    GccDriver,
    GccCompile,
}

fn ops(st: &State) -> Vec<Op> {
    let (p, s) = st;
    let mut v = Vec::new();
    // Big steps first.
    for t in (1..p.tus.len()).rev() {
        v.push(Op::RemoveTu(t));
    }
    for i in (0..p.ents.len()).rev() {
        v.push(Op::RemoveEnt(i));
    }
    for k in 0..s.libs.len() {
        v.push(Op::LibScript(k));
        v.push(Op::LibDeps(k));
        v.push(Op::LibAsNeededDeps(k));
        for j in (0..s.libs[k].flags.len()).rev() {
            v.push(Op::LibFlag(k, j));
        }
    }
    for j in (0..s.flags.len()).rev() {
        v.push(Op::ProgFlag(j));
    }
    v.extend([Op::Threads, Op::Defsym, Op::Script, Op::ScriptInsert, Op::Wrap, Op::AsNeeded, Op::LibOrder, Op::GccDriver, Op::GccCompile]);
    for t in 1..p.tus.len() {
        v.push(Op::HomeToObject(t));
    }
    for a in 0..s.archives.len() {
        v.push(Op::ArchiveRegular(a));
    }
    let mut refs = vec![VarRef::Main];
    refs.extend((0..p.tus.len()).map(VarRef::Obj));
    refs.extend((0..s.archives.len()).map(VarRef::Archive));
    refs.extend((0..s.libs.len()).map(VarRef::Lib));
    for r in refs {
        for f in 0..9 {
            v.push(Op::Variant(r, f));
        }
    }
    for (i, e) in p.ents.iter().enumerate() {
        for j in (0..e.uses.len()).rev() {
            v.push(Op::RemoveUse(i, j));
        }
        for j in (0..e.defs.len()).rev() {
            v.push(Op::RemoveDef(i, j));
        }
        if !e.aliases.is_empty() {
            v.push(Op::RemoveAlias(i));
        }
        for k in 0..4 {
            v.push(Op::SimplifyEnt(i, k));
        }
        for j in 0..e.defs.len() {
            for k in 0..2 {
                v.push(Op::SimplifyDef(i, j, k));
            }
        }
        for j in 0..e.uses.len() {
            for k in 0..6 {
                v.push(Op::SimplifyUse(i, j, k));
            }
        }
    }
    for t in 0..p.tus.len() {
        for k in 0..7 {
            v.push(Op::SimplifyTu(t, k));
        }
    }
    v
}

/// Shifts an index that pointed after a removed one.
fn fix(i: usize, removed: usize) -> usize {
    if i > removed {
        i - 1
    } else {
        i
    }
}

pub fn remove_entity(p: &mut Program, i: usize) {
    p.ents.remove(i);
    for e in p.ents.iter_mut() {
        if let Kind::Func { calls, .. } = &mut e.kind {
            calls.retain(|&c| c != i);
            for c in calls.iter_mut() {
                *c = fix(*c, i);
            }
        }
    }
    let x = &mut p.extras;
    for slot in [&mut x.defsym, &mut x.wrap] {
        *slot = match *slot {
            Some(f) if f == i => None,
            Some(f) => Some(fix(f, i)),
            None => None,
        };
    }
    x.script = match x.script {
        Some((f, _)) if f == i => None,
        Some((f, ins)) => Some((fix(f, i), ins)),
        None => None,
    };
}

/// Removes entities nobody defines or uses any more (and exceptions without their thrower).
pub fn prune(p: &mut Program) {
    let mut i = 0;
    while i < p.ents.len() {
        let e = &p.ents[i];
        let dead = e.viewers().is_empty() || matches!(e.kind, Kind::CxxThrow) && e.defs.is_empty();
        if dead {
            remove_entity(p, i);
        } else {
            i += 1;
        }
    }
}

fn remove_tu(st: &mut State, t: usize) -> bool {
    let (p, s) = st;
    if t == 0 || t >= p.tus.len() {
        return false;
    }
    for e in p.ents.iter_mut() {
        if matches!(e.kind, Kind::CxxThrow) && e.defs.first().is_some_and(|d| d.tu == t) {
            e.defs.clear();
        }
        e.defs.retain(|d| d.tu != t);
        e.uses.retain(|u| u.tu != t);
        for d in e.defs.iter_mut() {
            d.tu = fix(d.tu, t);
        }
        for u in e.uses.iter_mut() {
            u.tu = fix(u.tu, t);
        }
    }
    p.tus.remove(t);
    prune(p);
    s.homes.remove(t);
    s.obj_variants.remove(t);
    s.order.retain(|&x| x != t);
    for x in s.order.iter_mut() {
        *x = fix(*x, t);
    }
    true
}

fn variant(s: &mut Shape, r: VarRef) -> Option<&mut Variant> {
    match r {
        VarRef::Main => Some(&mut s.main_variant),
        VarRef::Obj(t) => s.obj_variants.get_mut(t),
        VarRef::Archive(a) => s.archives.get_mut(a).map(|a| &mut a.variant),
        VarRef::Lib(k) => s.libs.get_mut(k).map(|l| &mut l.variant),
    }
}

/// Sets `slot` to `to`; false when it already was.
fn set<T: PartialEq>(slot: &mut T, to: T) -> bool {
    if *slot == to {
        false
    } else {
        *slot = to;
        true
    }
}

/// Applies `op`; false when it does not apply or changes nothing.
fn apply(st: &mut State, op: Op) -> bool {
    match op {
        Op::RemoveTu(t) => remove_tu(st, t),
        Op::RemoveEnt(i) => {
            if i >= st.0.ents.len() {
                return false;
            }
            remove_entity(&mut st.0, i);
            true
        }
        Op::RemoveUse(i, j) => {
            let Some(e) = st.0.ents.get_mut(i) else { return false };
            if j >= e.uses.len() {
                return false;
            }
            e.uses.remove(j);
            prune(&mut st.0);
            true
        }
        Op::RemoveDef(i, j) => {
            let Some(e) = st.0.ents.get_mut(i) else { return false };
            if j >= e.defs.len() {
                return false;
            }
            if matches!(e.kind, Kind::CxxThrow | Kind::Versioned) {
                return false;
            }
            e.defs.remove(j);
            if e.defs.is_empty() {
                for u in e.uses.iter_mut() {
                    u.weak = true;
                }
            }
            prune(&mut st.0);
            true
        }
        Op::RemoveAlias(i) => {
            let Some(e) = st.0.ents.get_mut(i) else { return false };
            if e.aliases.pop().is_none() {
                return false;
            }
            let n = e.aliases.len();
            for u in e.uses.iter_mut() {
                if u.alias.is_some_and(|a| a >= n) {
                    u.alias = None;
                }
            }
            true
        }
        Op::SimplifyEnt(i, k) => {
            let Some(e) = st.0.ents.get_mut(i) else { return false };
            match (&mut e.kind, k) {
                (Kind::Data { ty, .. }, 0) => set(ty, DataTy::Long),
                (Kind::Data { align, .. }, 1) => set(align, 0),
                (Kind::Data { konst, .. }, 2) => set(konst, false),
                (Kind::Data { section, .. }, 3) => set(section, false),
                (Kind::Func { ifunc, .. }, 0) => set(ifunc, false),
                (Kind::Func { calls, .. }, 1) => calls.pop().is_some(),
                (Kind::Tls { align, .. }, 0) => set(align, 0),
                (Kind::Tls { def_model, .. }, 1) => set(def_model, None),
                (Kind::CxxFunc { hidden, .. }, 0) => set(hidden, false),
                (Kind::CxxFunc { noinline, .. }, 1) => set(noinline, false),
                (Kind::CxxVar { hidden }, 0) => set(hidden, false),
                _ => false,
            }
        }
        Op::SimplifyDef(i, j, k) => {
            let Some(d) = st.0.ents.get_mut(i).and_then(|e| e.defs.get_mut(j)) else { return false };
            match k {
                0 => set(&mut d.vis, Vis::Default),
                _ => d.strength == Strength::Weak && set(&mut d.strength, Strength::Strong),
            }
        }
        Op::SimplifyUse(i, j, k) => {
            let Some(u) = st.0.ents.get_mut(i).and_then(|e| e.uses.get_mut(j)) else { return false };
            match k {
                0 => set(&mut u.weak, false),
                1 => set(&mut u.in_data, false),
                2 => set(&mut u.model, None),
                3 => set(&mut u.alias, None),
                4 => set(&mut u.old_version, false),
                _ => set(&mut u.hidden_decl, false),
            }
        }
        Op::SimplifyTu(t, k) => {
            let p = &mut st.0;
            let views_cxx = p.ents.iter().any(|e| e.is_cxx_only() && e.viewers().contains(&t));
            let Some(tu) = p.tus.get_mut(t) else { return false };
            match k {
                0 => set(&mut tu.ctor, None),
                1 => set(&mut tu.dtor, false),
                2 => set(&mut tu.static_init, false),
                3 => set(&mut tu.records, 0),
                4 => set(&mut tu.retain, false),
                5 => set(&mut tu.main_ref, MainRef::Strong),
                _ => !views_cxx && set(&mut tu.cxx, false),
            }
        }
        Op::Threads => set(&mut st.0.threads, false),
        Op::Defsym => set(&mut st.0.extras.defsym, None),
        Op::Script => set(&mut st.0.extras.script, None),
        Op::ScriptInsert => match &mut st.0.extras.script {
            Some((_, layout)) => set(layout, crate::model::ScriptLayout::None),
            None => false,
        },
        Op::Wrap => set(&mut st.0.extras.wrap, None),
        Op::ProgFlag(j) => {
            j < st.1.flags.len() && {
                st.1.flags.remove(j);
                true
            }
        }
        Op::LibFlag(k, j) => st.1.libs.get_mut(k).is_some_and(|l| {
            j < l.flags.len() && {
                l.flags.remove(j);
                true
            }
        }),
        Op::LibScript(k) => st.1.libs.get_mut(k).is_some_and(|l| set(&mut l.script, None)),
        Op::LibDeps(k) => st.1.libs.get_mut(k).is_some_and(|l| set(&mut l.deps, Vec::new())),
        Op::LibAsNeededDeps(k) => st.1.libs.get_mut(k).is_some_and(|l| set(&mut l.as_needed_deps, false)),
        Op::Variant(r, f) => {
            let Some(v) = variant(&mut st.1, r) else { return false };
            match f {
                0 => set(&mut v.pic, None),
                1 => set(&mut v.fsections, false),
                2 => set(&mut v.lto, false),
                3 => set(&mut v.crel, false),
                4 => set(&mut v.tlsdesc, false),
                5 => set(&mut v.no_sem_interp, false),
                6 => set(&mut v.no_plt, false),
                7 => set(&mut v.opt, None),
                _ => set(&mut v.vis_hidden, false),
            }
        }
        Op::HomeToObject(t) => st.1.homes.get_mut(t).is_some_and(|h| matches!(h, Home::Archive(_) | Home::Lib(_)) && set(h, Home::Object)),
        Op::ArchiveRegular(a) => st.1.archives.get_mut(a).is_some_and(|a| set(&mut a.kind, ArchiveKind::Regular)),
        Op::AsNeeded => set(&mut st.1.as_needed, false),
        Op::LibOrder => {
            let natural: Vec<usize> = (0..st.1.lib_order.len()).collect();
            set(&mut st.1.lib_order, natural)
        }
        Op::GccDriver => set(&mut st.1.gcc_driver, false),
        Op::GccCompile => set(&mut st.1.gcc_compile, false),
    }
}

/// Whether `st` diverges (how, and the link signature), run in `dir` with the compile cache
/// `cache`.
pub fn divergence(env: &Env, st: &State, dir: &Path, cache: &Path) -> Option<(DivKind, Option<String>)> {
    let case = shape::case(&st.0, &st.1);
    match run_case(env, &case, dir, cache).verdict {
        crate::exec::Verdict::Diverged(k, _, sig) => Some((k, sig)),
        _ => None,
    }
}

/// Shrinks case `id` (state `st`), which diverged as `kind`; writes the result as a fixture
/// directory under `out`. Returns the shrunk state, its fixture directory and its essential
/// features (those whose ablation alone makes the divergence go away).
pub fn shrink(env: &Env, st: &State, id: u64, kind: DivKind, signature: Option<&str>, out: &Path) -> Result<(State, PathBuf, Vec<String>), String> {
    let work = env.root.join(format!("shrink-{id}"));
    let cache = work.join("cache");
    dtld_tests::fresh_dir(&cache).map_err(|e| format!("cannot create {}: {e}", cache.display()))?;
    let started = Instant::now();
    let tries = std::cell::Cell::new(0usize);
    let test = |st: &State| -> bool {
        tries.set(tries.get() + 1);
        divergence(env, st, &work.join("try"), &cache).is_some_and(|(k, sig)| k == kind && sig.as_deref() == signature)
    };
    let mut cur: State = st.clone();
    if !test(&cur) {
        return Err("the divergence did not reproduce".to_string());
    }
    loop {
        let mut changed = false;
        let list = ops(&cur);
        for op in list {
            if tries.get() >= MAX_TRIES || started.elapsed() > MAX_TIME {
                break;
            }
            let mut cand = cur.clone();
            if apply(&mut cand, op) && test(&cand) {
                cur = cand;
                changed = true;
            }
        }
        if !changed || tries.get() >= MAX_TRIES || started.elapsed() > MAX_TIME {
            break;
        }
    }
    let mut essential = Vec::new();
    for f in crate::features::tags(&cur).into_iter().skip(1) {
        let mut c = cur.clone();
        if crate::features::ablate(&mut c, &f) && divergence(env, &c, &work.join("try"), &cache).is_none() {
            essential.push(f);
        }
    }
    // The final case, run once more for its divergence text.
    let case = shape::case(&cur.0, &cur.1);
    let ran = run_case(env, &case, &work.join("final"), &cache);
    let detail = match &ran.verdict {
        crate::exec::Verdict::Diverged(_, d, _) => d.clone(),
        other => format!("{other:?}"),
    };
    let name = format!("fuzz-{}-{id}", kind.name());
    let dir = out.join(&name);
    dtld_tests::fresh_dir(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let note = format!(
        "Found by tests/fuzzlink (seed {id}, {} divergence), shrunk in {} tries; essential features: {}.\n{}",
        kind.name(),
        tries.get(),
        if essential.is_empty() { "none found".to_string() } else { essential.join(" ") },
        detail.lines().take(4).collect::<Vec<_>>().join("\n")
    );
    for (file, text) in case.fixture_files(&format!("{name}: a reproducer from the link fuzzer"), &note, ran.lld_error.as_deref()) {
        fs::write(dir.join(&file), text).map_err(|e| format!("write {file}: {e}"))?;
    }
    fs::write(dir.join("divergence.txt"), &detail).map_err(|e| e.to_string())?;
    // The fixture directory holds everything the shrink found.
    let _ = fs::remove_dir_all(&work);
    Ok((cur, dir, essential))
}
