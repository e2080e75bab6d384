//! Link shapes: how one generated program is compiled and linked. A shape places every unit
//! (the primary object, more objects, regular / thin / index-less archives, up to two shared
//! libraries, or archives in static links), picks each container's compile variant (PIC or
//! not, `-ffunction-sections`, ThinLTO, CREL, TLSDESC, `-fno-plt`, ...), the link mode, the
//! driver, and the flags of every link (`--gc-sections`, `--icf`, `-z now`, RELR, version
//! scripts, `-Bsymbolic`, `--as-needed`, ...). `case()` turns a program and a shape into the
//! differential harness's fixture model, so a reproducer is written out as a fixture exactly
//! as it was linked.

use crate::case::{ArchiveKind, Case, Group, LibCase, Mode};
use crate::codegen;
use crate::model::{Kind, Program, Strength, Unit, Vis};
use crate::rng::Rng;

/// Where a unit goes.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Home {
    Main,
    Object,
    /// An archive of the executable's link (`libfza.a`, `libfzb.a`, or in static links the
    /// archive that replaces library k: index 2 + k).
    Archive(usize),
    Lib(usize),
}

/// A container's compile flags beyond the harness's defaults.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Variant {
    /// `-fPIC`, `-fPIE` or `-fno-pic` instead of the container's default.
    pub pic: Option<&'static str>,
    pub fsections: bool,
    pub lto: bool,
    pub crel: bool,
    pub tlsdesc: bool,
    pub no_sem_interp: bool,
    pub no_plt: bool,
    /// `-O0` or `-O2` instead of `-O1`.
    pub opt: Option<&'static str>,
    pub vis_hidden: bool,
}

impl Variant {
    /// The flags, in a fixed order (`fcommon`: the container holds tentative definitions).
    pub fn flags(&self, fcommon: bool) -> Vec<String> {
        let mut f: Vec<&str> = Vec::new();
        if let Some(p) = self.pic {
            f.push(p);
        }
        if let Some(o) = self.opt {
            f.push(o);
        }
        if self.fsections {
            f.extend(["-ffunction-sections", "-fdata-sections"]);
        }
        if self.crel {
            f.push(CREL);
        }
        if self.tlsdesc {
            f.push("-mtls-dialect=gnu2");
        }
        if self.no_sem_interp {
            f.push("-fno-semantic-interposition");
        }
        if self.no_plt {
            f.push("-fno-plt");
        }
        if self.vis_hidden {
            f.push("-fvisibility=hidden");
        }
        if fcommon {
            f.push("-fcommon");
        }
        f.into_iter().map(String::from).collect()
    }
}

pub const CREL: &str = "-Wa,--crel,--allow-experimental-crel";

/// What a shared library's version script says.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Script {
    /// `{ global: *; };` (with the nodes `FZ_1`, `FZ_2` when the library defines versions).
    All,
    /// `{ global: fz*; <names>; local: *; };`, a name left out now and then (`seed`).
    Anonymous(u64),
    /// `FZ_1 { global: fz*; <names>; local: *; }; FZ_2 { global: <names>; } FZ_1;`
    Versions(u64),
}

#[derive(Clone, Debug)]
pub struct ArchiveShape {
    pub kind: ArchiveKind,
    pub variant: Variant,
}

#[derive(Clone, Debug)]
pub struct LibShape {
    pub variant: Variant,
    pub flags: Vec<String>,
    pub script: Option<Script>,
    /// Earlier libraries this one links against.
    pub deps: Vec<usize>,
    /// `-Wl,--as-needed` before those.
    pub as_needed_deps: bool,
}

#[derive(Clone, Debug)]
pub struct Shape {
    pub mode: Mode,
    pub gcc_driver: bool,
    pub gcc_compile: bool,
    /// Per unit.
    pub homes: Vec<Home>,
    /// The units in link order (objects, and members within an archive or library).
    pub order: Vec<usize>,
    pub main_variant: Variant,
    /// Per unit: its variant when it is an object.
    pub obj_variants: Vec<Variant>,
    /// `libfza.a`, `libfzb.a`, then one per planned library (used in static links).
    pub archives: Vec<ArchiveShape>,
    pub libs: Vec<LibShape>,
    /// The libraries in the program's link order.
    pub lib_order: Vec<usize>,
    /// `-Wl,--as-needed` before the libraries on the program's link line.
    pub as_needed: bool,
    /// The program's link flags.
    pub flags: Vec<String>,
}

fn gen_variant(r: &mut Rng, lib: bool) -> Variant {
    let pic_choices: &[&'static str] = if lib { &["-fno-pic"] } else { &["-fPIC", "-fPIE", "-fno-pic"] };
    let mut v = Variant {
        pic: if r.chance(if lib { 3 } else { 15 }) { Some(*r.pick(pic_choices)) } else { None },
        fsections: r.chance(45),
        lto: r.chance(25),
        crel: false,
        tlsdesc: r.chance(25),
        no_sem_interp: r.chance(12),
        no_plt: r.chance(12),
        opt: if r.chance(25) { Some(*r.pick(&["-O0", "-O2"])) } else { None },
        vis_hidden: r.chance(5),
    };
    // A palette entry differs from the plain variant.
    if v == Variant::default() {
        v.fsections = true;
    }
    v
}

/// The compile variants the shapes of one program choose from (the first is the plain one):
/// few, so that most objects are compiled once per program and reused by its shapes.
fn palette(p: &Program) -> (Vec<Variant>, Vec<Variant>) {
    let mut r = Rng::new(&[p.id, 7]);
    let exe = vec![Variant::default(), gen_variant(&mut r, false), gen_variant(&mut r, false)];
    let lib = vec![Variant::default(), gen_variant(&mut r, true)];
    (exe, lib)
}

fn choose(r: &mut Rng, palette: &[Variant], gcc: bool) -> Variant {
    let mut v = palette[r.weighted(&[(45, 0), (30, 1), (25, palette.len() - 1)])].clone();
    if gcc {
        v.lto = false;
    }
    v
}

/// Draws shape `shape` of program `p`.
pub fn generate(p: &Program, shape: u64) -> Shape {
    let (exe_palette, lib_palette) = palette(p);
    let mut r = Rng::new(&[p.id, shape, 1]);
    let mode = if (p.has_interposition() || p.has_old_version_refs()) && p.nlibs > 0 {
        r.weighted(&[(55, Mode::Pie), (45, Mode::NoPie)])
    } else if p.nlibs > 0 {
        r.weighted(&[(40, Mode::Pie), (32, Mode::NoPie), (14, Mode::Static), (14, Mode::StaticPie)])
    } else {
        r.weighted(&[(35, Mode::Pie), (30, Mode::NoPie), (20, Mode::Static), (15, Mode::StaticPie)])
    };
    let gcc_compile = r.chance(8);
    let gcc_driver = r.chance(10);
    let ntus = p.tus.len();
    let narchives = r.range(1, 2);
    let mut homes = Vec::new();
    for t in 0..ntus {
        let mut home = if t == 0 {
            Home::Main
        } else {
            match p.tus[t].plan {
                Unit::Exe => {
                    if r.chance(60) {
                        Home::Object
                    } else {
                        Home::Archive(r.below(narchives))
                    }
                }
                Unit::Lib(k) => {
                    if mode.is_static() {
                        if r.chance(80) {
                            Home::Archive(2 + k)
                        } else {
                            Home::Object
                        }
                    } else {
                        Home::Lib(k)
                    }
                }
            }
        };
        // Now and then against the plan (errors and odd resolutions are wanted too).
        if t != 0 && r.chance(5) && !p.pinned(t) {
            home = match r.below(3) {
                0 => Home::Object,
                1 => Home::Archive(r.below(narchives)),
                _ if !mode.is_static() && p.nlibs > 0 => Home::Lib(r.below(p.nlibs)),
                _ => Home::Object,
            };
        }
        if p.exe_only(t) && matches!(home, Home::Lib(_)) && r.chance(90) {
            home = Home::Object;
        }
        homes.push(home);
    }
    // Two libraries merged into one.
    if p.nlibs == 2 && r.chance(10) {
        for h in homes.iter_mut() {
            if *h == Home::Lib(1) {
                *h = Home::Lib(0);
            }
        }
    }
    let mut order: Vec<usize> = (1..ntus).collect();
    r.shuffle(&mut order);
    let main_variant = {
        let mut v = choose(&mut r, &exe_palette, gcc_compile);
        // The primary source has no group flags of its own: keep its PIC mode the mode's.
        v.pic = None;
        v
    };
    let obj_variants = (0..ntus).map(|_| choose(&mut r, &exe_palette, gcc_compile)).collect();
    let mut archives = Vec::new();
    for i in 0..2 + p.nlibs {
        let kind = r.weighted(&[(70, ArchiveKind::Regular), (25, ArchiveKind::Thin), (5, ArchiveKind::NoIndex)]);
        let palette = if i >= 2 && !mode.is_static() { &lib_palette } else { &exe_palette };
        archives.push(ArchiveShape { kind, variant: choose(&mut r, palette, gcc_compile) });
    }
    let mut libs = Vec::new();
    for k in 0..p.nlibs {
        let mut flags = Vec::new();
        for (pct, flag) in [
            (12, "-Wl,-Bsymbolic"),
            (6, "-Wl,-Bsymbolic-functions"),
            (3, "-Wl,-Bsymbolic-non-weak-functions"),
            (8, "-Wl,-z,defs"),
            (20, "-Wl,--gc-sections"),
            (8, "-Wl,--icf=all"),
            (10, "-Wl,-z,now"),
            (8, "-Wl,-z,pack-relative-relocs"),
            (4, "-Wl,--hash-style=sysv"),
            (3, "-Wl,-z,nodelete"),
        ] {
            if r.chance(pct) {
                flags.push(flag.to_string());
            }
        }
        let needs_versions = lib_defines_versions(p, k);
        let script = if needs_versions || r.chance(35) {
            let seed = r.next();
            Some(match r.below(3) {
                0 => Script::All,
                1 if !needs_versions => Script::Anonymous(seed),
                _ => Script::Versions(seed),
            })
        } else {
            None
        };
        let deps = if k > 0 && r.chance(75) { vec![k - 1] } else { Vec::new() };
        libs.push(LibShape { variant: choose(&mut r, &lib_palette, gcc_compile), flags, script, deps, as_needed_deps: r.chance(25) });
    }
    let mut lib_order: Vec<usize> = (0..p.nlibs).collect();
    if r.chance(20) {
        lib_order.reverse();
    }
    let as_needed = r.chance(15);
    let mut flags = Vec::new();
    let dynamic = matches!(mode, Mode::Pie | Mode::NoPie);
    for (pct, flag, ok) in [
        (30, "-Wl,--gc-sections", true),
        (10, "-Wl,--icf=all", true),
        (5, "-Wl,--icf=safe", true),
        (20, "-Wl,-z,now", true),
        (5, "-Wl,-z,norelro", true),
        (5, "-Wl,--hash-style=sysv", dynamic),
        (4, "-Wl,--hash-style=both", dynamic),
        (12, "-Wl,-z,pack-relative-relocs", mode != Mode::Static),
        (12, "-Wl,--export-dynamic", true),
        (4, "-Wl,-O2", true),
        (5, "-Wl,--no-relax", true),
        (4, "-Wl,-z,separate-code", true),
        (4, "-Wl,-z,notext", mode == Mode::Pie),
        (3, "-Wl,--sort-section=name", true),
        (3, "-Wl,--strip-all", true),
        (3, "-Wl,--unresolved-symbols=ignore-all", true),
        (3, "-Wl,-Bsymbolic", true),
    ] {
        if ok && r.chance(pct) {
            flags.push(flag.to_string());
        }
    }
    let mut s = Shape { mode, gcc_driver, gcc_compile, homes, order, main_variant, obj_variants, archives, libs, lib_order, as_needed, flags };
    // CREL (`clang -Wa,--crel`) for one container in a few cases.
    if !gcc_compile && r.chance(5) {
        match r.below(4) {
            0 => s.main_variant.crel = true,
            1 => {
                let t = r.range(0, ntus - 1);
                s.obj_variants[t].crel = true;
            }
            2 => {
                let a = r.below(s.archives.len());
                s.archives[a].variant.crel = true;
            }
            _ => {
                if let Some(l) = s.libs.first_mut() {
                    l.variant.crel = true;
                } else {
                    s.main_variant.crel = true;
                }
            }
        }
    }
    if gcc_driver {
        // dtld links LLVM bitcode through the LLVM clang names (`-plugin .../LLVMgold.so`) or
        // `--lto-llvm-dir`/`DTLD_LLVM_DIR` (docs/lto.md); gcc passes neither, and `-flto` on
        // gcc's command line means GCC's LTO. ThinLTO is for clang links only.
        for v in std::iter::once(&mut s.main_variant)
            .chain(s.obj_variants.iter_mut())
            .chain(s.archives.iter_mut().map(|a| &mut a.variant))
            .chain(s.libs.iter_mut().map(|l| &mut l.variant))
        {
            v.lto = false;
        }
    }
    for v in std::iter::once(&mut s.main_variant)
        .chain(s.obj_variants.iter_mut())
        .chain(s.archives.iter_mut().map(|a| &mut a.variant))
        .chain(s.libs.iter_mut().map(|l| &mut l.variant))
    {
        if v.lto {
            // A bitcode file has no relocation sections of its own.
            v.crel = false;
        }
    }
    s
}

/// Whether a planned library defines versioned symbols (its links need the nodes `FZ_1`, `FZ_2`).
fn lib_defines_versions(p: &Program, lib: usize) -> bool {
    p.ents.iter().any(|e| matches!(e.kind, Kind::Versioned) && e.defs.iter().any(|d| p.tus[d.tu].plan == Unit::Lib(lib)))
}

/// The global names the units `members` define (for version scripts), in a fixed order.
fn defined_names(p: &Program, members: &[usize]) -> Vec<String> {
    let mut names = Vec::new();
    for e in &p.ents {
        if e.is_cxx_only() || matches!(e.kind, Kind::Versioned) {
            continue;
        }
        for (i, d) in e.defs.iter().enumerate() {
            if !members.contains(&d.tu) || d.vis == Vis::Hidden {
                continue;
            }
            if !names.contains(&e.name) {
                names.push(e.name.clone());
            }
            if e.alias_home() == Some(i) && d.strength != Strength::Tentative {
                for (k, a) in e.aliases.iter().enumerate() {
                    if a.vis != Vis::Hidden {
                        names.push(format!("{}_a{k}", e.name));
                    }
                }
            }
        }
    }
    names
}

fn version_script(p: &Program, members: &[usize], script: Script) -> String {
    let versions = p.ents.iter().any(|e| matches!(e.kind, Kind::Versioned) && e.defs.iter().any(|d| members.contains(&d.tu)));
    let names = defined_names(p, members);
    let keep = |seed: u64| -> Vec<String> {
        let mut r = Rng::new(&[seed]);
        names.iter().filter(|_| !r.chance(8)).cloned().collect()
    };
    match script {
        Script::All if versions => "FZ_1 { };\nFZ_2 { global: *; } FZ_1;\n".to_string(),
        Script::All => "{ global: *; };\n".to_string(),
        Script::Anonymous(seed) if !versions => {
            let list: String = keep(seed).iter().map(|n| format!(" {n};")).collect();
            format!("{{ global: fz*;{list} local: *; }};\n")
        }
        Script::Anonymous(seed) | Script::Versions(seed) => {
            let kept = keep(seed);
            let mut r = Rng::new(&[seed, 2]);
            let (mut v1, mut v2) = (String::new(), String::new());
            // `local: *` would also hide the names `.symver` gives versions to: listing the
            // name in `FZ_1` keeps both of its versions global.
            for e in &p.ents {
                if matches!(e.kind, Kind::Versioned) && e.defs.iter().any(|d| members.contains(&d.tu)) {
                    v1.push_str(&format!(" {};", e.name));
                }
            }
            for n in kept {
                if r.chance(50) {
                    v1.push_str(&format!(" {n};"));
                } else {
                    v2.push_str(&format!(" {n};"));
                }
            }
            let v2 = if v2.is_empty() { String::new() } else { format!(" global:{v2}") };
            format!("FZ_1 {{ global: fz*;{v1} local: *; }};\nFZ_2 {{{v2} }} FZ_1;\n")
        }
    }
}

/// The flags of a group relative to the case-wide `CFlags` (`main`): its own variant's flags
/// and the negations of what `main` has and it does not.
fn group_flags(v: &Variant, fcommon: bool, main: &[String], lib: bool, mode: Mode) -> Vec<String> {
    let mine = v.flags(fcommon);
    let mut out = Vec::new();
    for f in main {
        if mine.contains(f) {
            continue;
        }
        let neg = match f.as_str() {
            "-ffunction-sections" => "-fno-function-sections",
            "-fdata-sections" => "-fno-data-sections",
            CREL => "-Wa,--no-crel",
            "-mtls-dialect=gnu2" => "-mtls-dialect=gnu",
            "-fno-semantic-interposition" => "-fsemantic-interposition",
            "-fno-plt" => "-fplt",
            "-O0" | "-O2" => "-O1",
            "-fvisibility=hidden" => "-fvisibility=default",
            "-fcommon" => "-fno-common",
            "-fPIC" | "-fPIE" | "-fno-pic" => {
                if lib {
                    "-fPIC"
                } else {
                    mode.compile_flag()
                }
            }
            _ => continue,
        };
        if !out.iter().any(|o: &String| o == neg) && !mine.iter().any(|m| m == neg) {
            out.push(neg.to_string());
        }
    }
    out.extend(mine);
    out
}

/// The fixture-level case for `p` linked as `s`.
pub fn case(p: &Program, s: &Shape) -> Case {
    let mut files: Vec<(String, String)> = codegen::sources(p);
    let fcommon = |units: &[usize]| units.iter().any(|&t| p.needs_fcommon(t));
    let main_flags = s.main_variant.flags(fcommon(&[0]));
    // ThinLTO: `Lto: thin` when any executable unit is bitcode; the primary opts out through
    // `CFlags` when it is native.
    let exe_lto = s.main_variant.lto
        || s.order.iter().any(|&t| match s.homes[t] {
            Home::Object => s.obj_variants[t].lto,
            Home::Archive(a) => s.archives[a].variant.lto,
            _ => false,
        });
    let mut cflags = main_flags.clone();
    if exe_lto && !s.main_variant.lto {
        cflags.push("-fno-lto".to_string());
    }
    let lto_flag = |v: &Variant, exe: bool| -> Vec<String> {
        match (exe, exe_lto, v.lto, s.main_variant.lto) {
            (true, true, true, false) => vec!["-flto=thin".to_string()],
            (true, true, false, true) => vec!["-fno-lto".to_string()],
            (false, _, true, _) => vec!["-flto=thin".to_string()],
            _ => Vec::new(),
        }
    };
    let mut objects = Vec::new();
    for &t in &s.order {
        if s.homes[t] == Home::Object {
            let v = &s.obj_variants[t];
            let mut fl = group_flags(v, fcommon(&[t]), &main_flags, false, s.mode);
            fl.extend(lto_flag(v, true));
            objects.push(Group { files: vec![p.tu_file(t)], cflags: fl });
        }
    }
    let mut archives = Vec::new();
    for (a, sh) in s.archives.iter().enumerate() {
        let members: Vec<usize> = s.order.iter().copied().filter(|&t| s.homes[t] == Home::Archive(a)).collect();
        if members.is_empty() {
            continue;
        }
        let mut fl = group_flags(&sh.variant, fcommon(&members), &main_flags, false, s.mode);
        fl.extend(lto_flag(&sh.variant, true));
        let name = if a < 2 { format!("libfz{}.a", ["a", "b"][a]) } else { format!("libfz{}.a", a - 2) };
        archives.push((name, sh.kind, Group { files: members.iter().map(|&t| p.tu_file(t)).collect(), cflags: fl }));
    }
    // Libraries: only those with members, renumbered in order.
    let mut libs = Vec::new();
    let mut lib_index = vec![None; s.libs.len()];
    for (k, sh) in s.libs.iter().enumerate() {
        let members: Vec<usize> = s.order.iter().copied().filter(|&t| s.homes[t] == Home::Lib(k)).collect();
        if members.is_empty() {
            continue;
        }
        let name = format!("libfz{k}.so");
        let mut fl = group_flags(&sh.variant, fcommon(&members), &main_flags, true, s.mode);
        fl.extend(lto_flag(&sh.variant, false));
        let mut link_args = Vec::new();
        if sh.variant.lto {
            link_args.push("-flto=thin".to_string());
        }
        let deps: Vec<String> = sh.deps.iter().filter_map(|&d| lib_index[d].map(|i: usize| libs_name(&libs, i))).collect();
        if !deps.is_empty() {
            if sh.as_needed_deps {
                link_args.push("-Wl,--as-needed".to_string());
            }
            link_args.extend(deps);
        }
        link_args.extend(sh.flags.iter().cloned());
        // A library that ended up with versioned definitions (a unit moved or two libraries
        // merged) needs the nodes `FZ_1` and `FZ_2`.
        let versions = p.ents.iter().any(|e| matches!(e.kind, Kind::Versioned) && e.defs.iter().any(|d| members.contains(&d.tu)));
        if let Some(script) = sh.script.or(versions.then_some(Script::All)) {
            let map = format!("libfz{k}.map");
            files.push((map.clone(), version_script(p, &members, script)));
            link_args.push(format!("-Wl,--version-script=$SRC/{map}"));
        }
        lib_index[k] = Some(libs.len());
        libs.push(LibCase { name, group: Group { files: members.iter().map(|&t| p.tu_file(t)).collect(), cflags: fl }, link_args, linked: true });
    }
    let mut link_args = Vec::new();
    let order: Vec<usize> = s.lib_order.iter().filter_map(|&k| lib_index[k]).collect();
    let natural = order.windows(2).all(|w| w[0] < w[1]);
    if !libs.is_empty() && (s.as_needed || !natural) {
        // The libraries go on the program's link line through `LinkArgs` (as `Dlopen`
        // libraries), so that `--as-needed` and their order can be said.
        for l in libs.iter_mut() {
            l.linked = false;
        }
        if s.as_needed {
            link_args.push("-Wl,--as-needed".to_string());
        }
        link_args.extend(order.iter().map(|&i| libs[i].name.clone()));
        if s.as_needed {
            link_args.push("-Wl,--no-as-needed".to_string());
        }
    }
    link_args.extend(s.flags.iter().cloned());
    if let Some(f) = p.extras.defsym {
        link_args.push(format!("-Wl,--defsym=fzds={}", p.ents[f].name));
    }
    if let Some(script) = codegen::linker_script(p, s.mode) {
        files.push(("fz.lds".to_string(), script));
        link_args.push("-Wl,-T,$SRC/fz.lds".to_string());
    }
    if let Some(w) = p.extras.wrap {
        link_args.push(format!("-Wl,--wrap={}", p.ents[w].name));
    }
    Case {
        mode: s.mode,
        gcc_driver: s.gcc_driver,
        gcc_compile: s.gcc_compile,
        lto: exe_lto,
        cflags,
        primary: p.tu_file(0),
        objects,
        archives,
        libs,
        link_args,
        files,
    }
}

fn libs_name(libs: &[LibCase], i: usize) -> String {
    libs[i].name.clone()
}
