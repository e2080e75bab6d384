//! The program model of the link fuzzer: translation units and the entities (variables,
//! functions, TLS variables, C++ inline entities, exceptions, versioned symbols) they define
//! and reference, and the generator that draws a random program from a seed.
//!
//! A program is generated without knowing how it will be linked: each unit only has a *planned*
//! link unit (the executable or one of up to two shared libraries) so that the references the
//! generator makes are mostly resolvable (a hidden symbol is only referenced from its own link
//! unit, two strong definitions of one symbol sit in different link units). The link shape
//! (`shape.rs`) then places the units (objects, archives, libraries), picks the compile variants,
//! the mode and the flags, and sometimes moves a unit against the plan, so that errors are
//! exercised too.

use crate::rng::Rng;

/// The link unit a translation unit is planned for.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Unit {
    Exe,
    Lib(usize),
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Vis {
    Default,
    Hidden,
    Protected,
}

impl Vis {
    pub fn attr(self) -> Option<&'static str> {
        match self {
            Vis::Default => None,
            Vis::Hidden => Some("visibility(\"hidden\")"),
            Vis::Protected => Some("visibility(\"protected\")"),
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum TlsModel {
    GlobalDynamic,
    LocalDynamic,
    InitialExec,
    LocalExec,
}

impl TlsModel {
    pub fn name(self) -> &'static str {
        match self {
            TlsModel::GlobalDynamic => "global-dynamic",
            TlsModel::LocalDynamic => "local-dynamic",
            TlsModel::InitialExec => "initial-exec",
            TlsModel::LocalExec => "local-exec",
        }
    }
}

/// How `main` reaches a unit's accessors.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum MainRef {
    /// Ordinary references (an archive member is pulled in by them).
    Strong,
    /// Weak references: the unit is only linked when something else pulls it in; `main`
    /// prints -1 for what it cannot reach.
    Weak,
    /// None at all: the unit shows itself only through constructors, records and the
    /// definitions other units use.
    None,
}

#[derive(Clone, Debug)]
pub struct Tu {
    pub cxx: bool,
    pub plan: Unit,
    /// A constructor, with a priority (101..) or without (`Some(0)`).
    pub ctor: Option<u16>,
    pub dtor: bool,
    /// A C++ global object whose constructor prints (dynamic initialization).
    pub static_init: bool,
    /// Records in the section `fzrec`, summed through `__start_fzrec`/`__stop_fzrec`.
    pub records: u8,
    /// The records carry `__attribute__((retain))`.
    pub retain: bool,
    pub main_ref: MainRef,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Strength {
    Strong,
    Weak,
    /// A tentative definition (`long g;` compiled with `-fcommon`): a common symbol.
    Tentative,
}

#[derive(Clone, Debug)]
pub struct Def {
    pub tu: usize,
    pub strength: Strength,
    pub vis: Vis,
    /// What this definition contributes (initial value, function constant), so the output
    /// shows which definition won.
    pub val: u32,
}

#[derive(Clone, Debug)]
pub struct Alias {
    pub weak: bool,
    pub vis: Vis,
}

#[derive(Clone, Debug)]
pub struct Use {
    pub tu: usize,
    /// Reference an alias instead of the entity's own name.
    pub alias: Option<usize>,
    /// A weak reference (the accessors test the address first).
    pub weak: bool,
    /// TLS: the model on the declaration.
    pub model: Option<TlsModel>,
    /// The accessors go through a pointer stored in data (a data relocation) instead of a
    /// direct reference from code.
    pub in_data: bool,
    /// Versioned functions: reference the non-default version `FZ_1` through `.symver`.
    pub old_version: bool,
    /// The declaration says `visibility("hidden")` (the compiler may then access it
    /// directly; only right when it is defined in the same link unit).
    pub hidden_decl: bool,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DataTy {
    Long,
    Array(usize),
}

#[derive(Clone, Debug)]
pub enum Kind {
    Data {
        ty: DataTy,
        align: u32,
        konst: bool,
        section: bool,
    },
    /// `calls`: other function entities the definitions call (lower ids only).
    Func {
        ifunc: bool,
        calls: Vec<usize>,
    },
    Tls {
        align: u32,
        def_model: Option<TlsModel>,
    },
    /// A function with two versions, `FZ_1` and the default `FZ_2`, in its defining unit.
    Versioned,
    /// A C++ inline function with a static local, emitted in every unit that uses it.
    CxxFunc {
        hidden: bool,
        noinline: bool,
    },
    /// A C++17 inline variable.
    CxxVar {
        hidden: bool,
    },
    /// An exception type thrown in the defining unit and caught in the users.
    CxxThrow,
}

#[derive(Clone, Debug)]
pub struct Entity {
    pub name: String,
    pub kind: Kind,
    pub defs: Vec<Def>,
    /// Aliases, defined next to the first definition that can carry them.
    pub aliases: Vec<Alias>,
    pub uses: Vec<Use>,
    /// Which viewer `main` writes through (an index into `viewers()`, modulo its length).
    pub writer: usize,
}

impl Entity {
    /// The units that have accessors for this entity: its defining units, then its users.
    pub fn viewers(&self) -> Vec<usize> {
        let mut v: Vec<usize> = self.defs.iter().map(|d| d.tu).collect();
        v.extend(self.uses.iter().map(|u| u.tu));
        v
    }

    /// The definition that carries the aliases: the first strong one, else the first weak one.
    pub fn alias_home(&self) -> Option<usize> {
        self.defs.iter().position(|d| d.strength == Strength::Strong).or_else(|| self.defs.iter().position(|d| d.strength == Strength::Weak))
    }

    pub fn is_cxx_only(&self) -> bool {
        matches!(self.kind, Kind::CxxFunc { .. } | Kind::CxxVar { .. } | Kind::CxxThrow)
    }

    pub fn is_func_like(&self) -> bool {
        matches!(self.kind, Kind::Func { .. } | Kind::Versioned)
    }
}

/// What a generated linker script says besides its symbol assignments.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScriptLayout {
    /// Nothing: the default layout.
    None,
    /// `SECTIONS { .fzdata : { *(.data.fz_*) } } INSERT AFTER .data;`
    Insert,
    /// A whole `SECTIONS` layout (after fixtures/elf/script-reorder), the sectioned data in an
    /// output section of its own; everything it does not name is an orphan. Not in static-pie
    /// links, which ld.lld-22 cannot give a working layout this way.
    Full,
}

/// Program-level link features (they change what `main` declares, so they are part of the
/// program, not of the shape).
#[derive(Clone, Debug, Default)]
pub struct Extras {
    /// `--defsym=fzds=<function entity>`.
    pub defsym: Option<usize>,
    /// A linker script with `fzsa = <function entity>;` and `PROVIDE(fzprov = ...)`, and a
    /// layout of its own (`ScriptLayout`).
    pub script: Option<(usize, ScriptLayout)>,
    /// `--wrap=<function entity>`, with `__wrap_` defined in main.
    pub wrap: Option<usize>,
}

#[derive(Clone, Debug)]
pub struct Program {
    pub id: u64,
    pub tus: Vec<Tu>,
    pub ents: Vec<Entity>,
    pub nlibs: usize,
    /// `main` checks the TLS variables from a second thread too.
    pub threads: bool,
    pub extras: Extras,
}

impl Program {
    pub fn tu_name(&self, tu: usize) -> String {
        if tu == 0 {
            "main".to_string()
        } else {
            format!("u{tu}")
        }
    }

    pub fn tu_file(&self, tu: usize) -> String {
        format!("{}.{}", self.tu_name(tu), if self.tus[tu].cxx { "cc" } else { "c" })
    }

    /// Whether a unit holds tentative definitions (it is compiled with `-fcommon`).
    pub fn needs_fcommon(&self, tu: usize) -> bool {
        self.ents.iter().any(|e| e.defs.iter().any(|d| d.tu == tu && d.strength == Strength::Tentative))
    }

    /// Whether a unit uses local-exec TLS (it can only be linked into the executable).
    pub fn exe_only(&self, tu: usize) -> bool {
        tu == 0
            || self.ents.iter().any(|e| {
                e.uses.iter().any(|u| u.tu == tu && u.model == Some(TlsModel::LocalExec))
                    || (matches!(e.kind, Kind::Tls { def_model: Some(TlsModel::LocalExec), .. }) && e.defs.iter().any(|d| d.tu == tu))
            })
    }

    /// Whether a unit takes part in local-dynamic or local-exec TLS accesses (as the accessing
    /// or the defining unit): such code is only right while the two stay in one module, so
    /// shapes never move these units against the plan.
    pub fn pinned(&self, tu: usize) -> bool {
        self.ents.iter().any(|e| {
            let local = e.uses.iter().any(|u| matches!(u.model, Some(TlsModel::LocalDynamic | TlsModel::LocalExec)));
            e.uses.iter().any(|u| u.tu == tu && matches!(u.model, Some(TlsModel::LocalDynamic | TlsModel::LocalExec)))
                || local && e.defs.iter().any(|d| d.tu == tu)
        })
    }

    /// Entities with two strong definitions (they need two link units).
    pub fn has_interposition(&self) -> bool {
        self.ents.iter().any(|e| e.defs.iter().filter(|d| d.strength == Strength::Strong).count() > 1)
    }

    /// References to a non-default version (only a shared library can resolve them).
    pub fn has_old_version_refs(&self) -> bool {
        self.ents.iter().any(|e| e.uses.iter().any(|u| u.old_version))
    }

    pub fn has_tls(&self) -> bool {
        self.ents.iter().any(|e| matches!(e.kind, Kind::Tls { .. }))
    }
}

/// Draws program `id`.
pub fn generate(id: u64) -> Program {
    let mut r = Rng::new(&[id]);
    let nlibs = r.weighted(&[(30, 0), (45, 1), (25, 2)]);
    let ntus = r.range(2, 6);
    let cxx_program = r.chance(25);
    let mut tus = Vec::new();
    for i in 0..ntus {
        let plan = if i == 0 || nlibs == 0 {
            Unit::Exe
        } else if i <= nlibs {
            // Every planned library gets at least one unit.
            Unit::Lib(i - 1)
        } else if r.chance(45) {
            Unit::Exe
        } else {
            Unit::Lib(r.below(nlibs))
        };
        let cxx = cxx_program && (i == 0 && r.chance(50) || i > 0 && r.chance(55));
        let ctor = if r.chance(35) { Some(if r.chance(40) { 101 + r.below(20) as u16 } else { 0 }) } else { None };
        let main_ref = if i == 0 { MainRef::Strong } else { r.weighted(&[(82, MainRef::Strong), (11, MainRef::Weak), (7, MainRef::None)]) };
        tus.push(Tu {
            cxx,
            plan,
            ctor,
            dtor: r.chance(20),
            static_init: cxx && r.chance(30),
            records: if r.chance(30) { r.range(1, 3) as u8 } else { 0 },
            retain: r.chance(30),
            main_ref,
        });
    }
    let mut p = Program { id, tus, ents: Vec::new(), nlibs, threads: false, extras: Extras::default() };
    let nents = r.range(3, 10);
    for _ in 0..nents {
        let e = gen_entity(&mut r, &p);
        if let Some(e) = e {
            p.ents.push(e);
        }
    }
    p.threads = p.has_tls() && r.chance(70);
    // `--defsym` and script assignments name a function the executable defines.
    let funcs: Vec<usize> = (0..p.ents.len())
        .filter(|&i| {
            matches!(p.ents[i].kind, Kind::Func { .. }) && p.ents[i].defs.iter().any(|d| d.strength == Strength::Strong && p.tus[d.tu].plan == Unit::Exe)
        })
        .collect();
    if !funcs.is_empty() {
        if r.chance(8) {
            p.extras.defsym = Some(*r.pick(&funcs));
        }
        if r.chance(7) {
            p.extras.script = Some((*r.pick(&funcs), *r.pick(&[ScriptLayout::None, ScriptLayout::Insert, ScriptLayout::Full])));
        }
        if r.chance(6) {
            p.extras.wrap = Some(*r.pick(&funcs));
        }
    }
    p
}

fn pick_vis(r: &mut Rng, hidden: u32, protected: u32) -> Vis {
    r.weighted(&[(100 - hidden - protected, Vis::Default), (hidden, Vis::Hidden), (protected, Vis::Protected)])
}

/// Units other than `exclude` that `filter` accepts, shuffled.
fn candidates(r: &mut Rng, p: &Program, exclude: &[usize], filter: impl Fn(usize) -> bool) -> Vec<usize> {
    let mut v: Vec<usize> = (0..p.tus.len()).filter(|t| !exclude.contains(t) && filter(*t)).collect();
    r.shuffle(&mut v);
    v
}

fn gen_entity(r: &mut Rng, p: &Program) -> Option<Entity> {
    let id = p.ents.len();
    let cxx_tus: Vec<usize> = (0..p.tus.len()).filter(|&t| p.tus[t].cxx).collect();
    let c_tus: Vec<usize> = (0..p.tus.len()).filter(|&t| !p.tus[t].cxx).collect();
    #[derive(Clone, Copy)]
    enum K {
        Data,
        Func,
        Tls,
        Versioned,
        CxxFunc,
        CxxVar,
        CxxThrow,
    }
    let cx = if cxx_tus.is_empty() { 0 } else { 1 };
    let k = r.weighted(&[(30, K::Data), (30, K::Func), (14, K::Tls), (5, K::Versioned), (8 * cx, K::CxxFunc), (5 * cx, K::CxxVar), (5 * cx, K::CxxThrow)]);
    let writer = r.below(8);
    match k {
        K::CxxFunc | K::CxxVar => {
            let mut viewers = cxx_tus.clone();
            r.shuffle(&mut viewers);
            viewers.truncate(r.range(1, viewers.len()));
            let hidden = r.chance(15);
            let kind = match k {
                K::CxxFunc => Kind::CxxFunc { hidden, noinline: r.chance(50) },
                _ => Kind::CxxVar { hidden },
            };
            let val = r.below(900) as u32 + 10;
            let name = format!("{}{id}", if matches!(k, K::CxxFunc) { "c" } else { "k" });
            let defs = viewers.iter().map(|&tu| Def { tu, strength: Strength::Weak, vis: Vis::Default, val }).collect();
            Some(Entity { name, kind, defs, aliases: Vec::new(), uses: Vec::new(), writer })
        }
        K::CxxThrow => {
            let thrower = *r.pick(&cxx_tus);
            let users = candidates(r, p, &[thrower], |t| p.tus[t].cxx);
            let n = r.range(0, users.len().min(3));
            let uses = users[..n].iter().map(|&tu| plain_use(tu)).collect();
            Some(Entity {
                name: format!("x{id}"),
                kind: Kind::CxxThrow,
                defs: vec![Def { tu: thrower, strength: Strength::Strong, vis: Vis::Default, val: r.below(900) as u32 + 10 }],
                aliases: Vec::new(),
                uses,
                writer,
            })
        }
        K::Data | K::Func | K::Tls | K::Versioned => {
            let kind = match k {
                K::Data => Kind::Data {
                    ty: if r.chance(25) { DataTy::Array(r.range(2, 6)) } else { DataTy::Long },
                    align: if r.chance(15) { *r.pick(&[16, 64, 4096]) } else { 0 },
                    konst: r.chance(12),
                    section: r.chance(10),
                },
                K::Func => Kind::Func { ifunc: r.chance(10), calls: Vec::new() },
                K::Tls => Kind::Tls {
                    align: if r.chance(12) { *r.pick(&[16, 64]) } else { 0 },
                    def_model: if r.chance(15) { Some(*r.pick(&[TlsModel::InitialExec, TlsModel::LocalDynamic, TlsModel::GlobalDynamic])) } else { None },
                },
                _ => Kind::Versioned,
            };
            let prefix = match k {
                K::Data => "g",
                K::Func => "f",
                K::Tls => "t",
                _ => "v",
            };
            let mut e = Entity { name: format!("{prefix}{id}"), kind, defs: Vec::new(), aliases: Vec::new(), uses: Vec::new(), writer };
            gen_defs(r, p, &mut e, &c_tus);
            gen_uses(r, p, &mut e);
            if let Kind::Func { calls, .. } = &mut e.kind {
                // Calls to earlier functions the defining units can see.
                for _ in 0..r.range(0, 2) {
                    let earlier: Vec<usize> = (0..p.ents.len()).filter(|&j| p.ents[j].is_func_like()).collect();
                    if earlier.is_empty() {
                        break;
                    }
                    let callee = *r.pick(&earlier);
                    if !calls.contains(&callee) {
                        calls.push(callee);
                    }
                }
            }
            Some(e)
        }
    }
}

fn plain_use(tu: usize) -> Use {
    Use { tu, alias: None, weak: false, model: None, in_data: false, old_version: false, hidden_decl: false }
}

fn gen_defs(r: &mut Rng, p: &Program, e: &mut Entity, c_tus: &[usize]) {
    let ntus = p.tus.len();
    let is_data = matches!(e.kind, Kind::Data { .. });
    let scalar_data = matches!(&e.kind, Kind::Data { ty: DataTy::Long, align: 0, konst: false, section: false });
    let ifunc = matches!(e.kind, Kind::Func { ifunc: true, .. });
    let versioned = matches!(e.kind, Kind::Versioned);
    let is_tls = matches!(e.kind, Kind::Tls { .. });
    let val = |r: &mut Rng| r.below(900) as u32 + 10;
    // No definition at all: every reference is weak.
    if !versioned && !ifunc && !is_tls && r.chance(5) {
        return;
    }
    // Versioned functions live in a library when there is one (in an executable, without a
    // version script, both versions are exported under the bare name).
    let home = if versioned && p.nlibs > 0 {
        let libs: Vec<usize> = (0..ntus).filter(|&t| p.tus[t].plan != Unit::Exe).collect();
        *r.pick(&libs)
    } else {
        r.below(ntus)
    };
    // Common symbols: tentative definitions in C units, sometimes with one initialized one.
    if scalar_data && r.chance(12) && !c_tus.is_empty() {
        let mut cs = c_tus.to_vec();
        r.shuffle(&mut cs);
        cs.truncate(r.range(1, cs.len().min(3)));
        for &tu in &cs {
            e.defs.push(Def { tu, strength: Strength::Tentative, vis: Vis::Default, val: 0 });
        }
        if r.chance(30) {
            let others = candidates(r, p, &cs, |_| true);
            if let Some(&tu) = others.first() {
                e.defs.push(Def { tu, strength: Strength::Strong, vis: Vis::Default, val: val(r) });
            }
        }
        return;
    }
    let (hidden, protected) = if versioned { (0, 0) } else { (14, 6) };
    let strength = if !ifunc && r.chance(10) { Strength::Weak } else { Strength::Strong };
    let vis = pick_vis(r, hidden, protected);
    e.defs.push(Def { tu: home, strength, vis, val: val(r) });
    if versioned {
        return;
    }
    let home_plan = p.tus[home].plan;
    // A second definition: weak in any other unit, or strong in another link unit
    // (interposition: the executable's wins, or the library's own under -Bsymbolic).
    if r.chance(18) {
        let weak_ok = !ifunc;
        let other_units = candidates(r, p, &[home], |t| p.tus[t].plan != home_plan);
        let any_other = candidates(r, p, &[home], |_| true);
        if weak_ok && r.chance(55) {
            if let Some(&tu) = any_other.first() {
                e.defs.push(Def { tu, strength: Strength::Weak, vis: pick_vis(r, 10, 5), val: val(r) });
            }
        } else if let Some(&tu) = other_units.first() {
            if !is_tls || r.chance(50) {
                e.defs.push(Def { tu, strength: Strength::Strong, vis: pick_vis(r, 10, 5), val: val(r) });
            }
        }
    }
    // Aliases of the first definition (not of ifuncs or TLS).
    if !ifunc && !is_tls && r.chance(if is_data { 30 } else { 18 }) {
        for _ in 0..r.range(1, 2) {
            e.aliases.push(Alias { weak: r.chance(30), vis: pick_vis(r, 10, 8) });
        }
    }
}

fn gen_uses(r: &mut Rng, p: &Program, e: &mut Entity) {
    let def_tus: Vec<usize> = e.defs.iter().map(|d| d.tu).collect();
    let no_def = e.defs.is_empty();
    let hidden_home = e.defs.first().filter(|d| d.vis == Vis::Hidden).map(|d| p.tus[d.tu].plan);
    let is_tls = matches!(e.kind, Kind::Tls { .. });
    let def_plan = e.defs.first().map(|d| p.tus[d.tu].plan);
    let users = candidates(r, p, &def_tus, |t| hidden_home.is_none_or(|h| p.tus[t].plan == h));
    let n = if users.is_empty() { 0 } else { r.range(if no_def { 1 } else { 0 }, users.len().min(3)) };
    let naliases = e.aliases.len();
    for &tu in &users[..n] {
        let same_unit = def_plan == Some(p.tus[tu].plan);
        let model = if is_tls && r.chance(50) {
            let mut models = vec![TlsModel::GlobalDynamic, TlsModel::InitialExec];
            if same_unit {
                models.push(TlsModel::LocalDynamic);
                if p.tus[tu].plan == Unit::Exe {
                    models.push(TlsModel::LocalExec);
                }
            }
            Some(*r.pick(&models))
        } else {
            None
        };
        let alias = if naliases > 0 && r.chance(60) { Some(r.below(naliases)) } else { None };
        e.uses.push(Use {
            tu,
            alias,
            weak: no_def || (!is_tls && r.chance(8)),
            model,
            in_data: !is_tls && r.chance(20),
            // A reference to the non-default version only resolves against a library's
            // version definitions.
            // (from the executable, which links against every library: a library's reference
            // would need the defining one on its own link line).
            old_version: matches!(e.kind, Kind::Versioned) && matches!(def_plan, Some(Unit::Lib(_))) && p.tus[tu].plan == Unit::Exe && r.chance(30),
            hidden_decl: !is_tls && same_unit && r.chance(5),
        });
    }
}
