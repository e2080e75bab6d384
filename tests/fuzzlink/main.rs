//! The differential link fuzzer (issue 39): seeded random C/C++ programs linked in random
//! shapes by dtld and by ld.lld-22; both links must give the same verdict and both programs
//! the same exit status, stdout and stderr. See docs/reliability.md ("Differential link
//! fuzzing") for what the generator covers and how to run it.
//!
//! A case is named by one number, its seed: program `seed / 16`, shape `seed % 16`. Every
//! program is compiled once per compile variant (a content-addressed cache) and linked in its
//! 16 shapes. One trial per program (`fuzzlink/cases-<first>-<last>`), so libtest-mimic runs
//! programs in parallel on every core and `cargo test -- <filter>` for other targets skips
//! the fuzzer. A divergence prints its seed and a replay command; it is attributed to a known
//! one (`KNOWN`: the `fuzz-*` fixtures) when the errors' signature or its essential features
//! say so, and otherwise shrunk (units, entities, flags dropped while it still diverges the
//! same way) and written as a fixture of the differential harness under
//! `<target>/fuzzlink/repro/fuzz-<kind>-<seed>/`. A divergence of an open bucket (a known
//! ld.lld-22 bug) is linked again by dtld and GNU ld (`referee`): where dtld's and ld.lld's
//! programs differ, GNU ld's must behave as dtld's.
//!
//! Environment:
//! - `FUZZLINK_SEED`: the first case (default 0); `FUZZLINK_CASES`: how many (default 2,000;
//!   `FUZZLINK_LONG=1`: 100,000).
//! - `FUZZLINK_SEEDS`: these cases instead (seeds separated by commas or blanks).
//! - `FUZZLINK_SHRINK`: how many divergences to shrink (default 4; 0 = none).
//! - `FUZZLINK_KEEP=1`: keep every case's directory (divergent ones are always kept).
//! - `FUZZLINK_AVOID=<feature,...>`: leave these features out of every case (`features.rs`),
//!   to look for new divergences while known ones are open.
//! - `FUZZLINK_DRIVER=1`: run every link through clang instead of running the linker command
//!   clang would run (`exec::LinkTemplates`; slower, for checking that shortcut).
//! - `DTLD`: the linker under test.

mod case;
mod codegen;
mod exec;
mod features;
mod model;
mod rng;
mod shape;
mod shrink;

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use dtld_tests::{check_tools, find_dtld, find_in_path, fresh_dir, lock_target_subdir, target_dir, wrapper_dir, CLANG, CLANGXX, GCC, LLD, LLVM_AR};
use libtest_mimic::{Arguments, Failed, Trial};

use exec::{DivKind, Env, Verdict};

/// Shapes per program (the low bits of a seed).
pub const SHAPES: u64 = 16;

struct Config {
    start: u64,
    count: u64,
    shrink: usize,
    keep: bool,
    /// Features ablated from every case (`FUZZLINK_AVOID`).
    avoid: Vec<String>,
    /// The cases to run instead of `count` from `start` (`FUZZLINK_SEEDS`: a run's divergent
    /// seeds, to replay them all at once).
    seeds: Option<Vec<u64>>,
}

impl Config {
    fn from_env() -> Result<Config, String> {
        let num = |key: &str| -> Result<Option<u64>, String> {
            match std::env::var(key) {
                Ok(v) if !v.is_empty() => v.replace('_', "").parse().map(Some).map_err(|_| format!("${key}={v} is not a number")),
                _ => Ok(None),
            }
        };
        let long = std::env::var("FUZZLINK_LONG").is_ok_and(|v| !v.is_empty() && v != "0");
        Ok(Config {
            start: num("FUZZLINK_SEED")?.unwrap_or(0),
            count: num("FUZZLINK_CASES")?.unwrap_or(if long { 100_000 } else { 2_000 }),
            shrink: num("FUZZLINK_SHRINK")?.unwrap_or(4) as usize,
            keep: std::env::var("FUZZLINK_KEEP").is_ok_and(|v| !v.is_empty() && v != "0"),
            avoid: features::parse_list(&std::env::var("FUZZLINK_AVOID").unwrap_or_default())?,
            seeds: match std::env::var("FUZZLINK_SEEDS") {
                Ok(v) if !v.trim().is_empty() => {
                    let mut list = Vec::new();
                    for w in v.split(|c: char| c == ',' || c.is_whitespace()).filter(|w| !w.is_empty()) {
                        list.push(w.parse().map_err(|_| format!("$FUZZLINK_SEEDS: {w} is not a seed"))?);
                    }
                    list.sort_unstable();
                    list.dedup();
                    Some(list)
                }
                _ => None,
            },
        })
    }
}

/// One divergent (or broken) case.
#[derive(Clone)]
struct Finding {
    id: u64,
    kind: Option<DivKind>,
    tags: Vec<String>,
    summary: String,
    /// The bucket it was attributed to (by name).
    bucket: Option<String>,
    /// For a case of an open bucket (an ld.lld-22 bug): what GNU ld's link of it says.
    referee: Option<Referee>,
}

/// GNU ld's opinion on a divergence that is a known ld.lld-22 bug (`referee`): the evidence
/// that the difference is lld's, case by case.
#[derive(Clone, Debug)]
enum Referee {
    /// GNU ld's program behaves as dtld's where dtld's and ld.lld's differ (the exit status
    /// of an exit divergence, the stdout lines of a stdout one); `entirely`: in everything.
    Agrees { entirely: bool },
    /// GNU ld's program behaves as ld.lld's where dtld's differs (the first such place): the
    /// case is not ld.lld's bug and fails as a regression.
    Differs(String),
    /// GNU ld could not link the case (an option it lacks, a script it reads otherwise), its
    /// program differs from both (GNU ld's own way), or the divergence is not one of programs.
    Unavailable(String),
}

impl Referee {
    fn text(&self) -> String {
        match self {
            Referee::Agrees { entirely: true } => "GNU ld's program behaves as dtld's".to_string(),
            Referee::Agrees { entirely: false } => "GNU ld's program behaves as dtld's where ld.lld's differs".to_string(),
            Referee::Differs(d) => format!("GNU ld sides with ld.lld: {d}"),
            Referee::Unavailable(why) => format!("GNU ld cannot judge: {why}"),
        }
    }
}

/// A known divergence: a shrunk reproducer and the features it needs. A new divergence
/// belongs to it when the new case has those features and stops diverging without them.
#[derive(Clone)]
struct Bucket {
    name: String,
    /// Its essential features (those whose ablation alone ends the divergence).
    features: Vec<String>,
    /// For a link that diverged: a pattern of the errors' signature (`exec::link_signature`).
    signature: Option<regex::Regex>,
    what: String,
    /// Its fixture (`fixtures/elf/<name>`) says `//#Open:`: dtld does not fix it yet, so a run
    /// reports its cases without failing. A closed bucket's cases fail the run (a regression).
    open: bool,
}

/// Features that change the whole shape of a link: taking one out ends nearly every
/// divergence, so they say nothing about which one a case has.
const STRUCTURAL: &[&str] = &["shared", "archive", "thin-archive", "lib-deps"];

/// The link modes, as case tags: a bucket may name one (its cases are of that mode only).
const MODES: &[&str] = &["pie", "nopie", "static", "static-pie"];

/// Divergences known when this was written, with the features that cause them (each has a
/// fixture in fixtures/elf/; they fail until dtld is fixed). Listed so that a run attributes
/// their many occurrences by a cheap check instead of shrinking each one again.
/// More specific buckets come first: a case with an ifunc and a script is checked against the
/// script bucket before the ifunc one. Open buckets are tried before closed ones (`attribute`).
const KNOWN: &[(&str, &[&str], Option<&str>, &str)] = &[
    ("fuzz-crel", &["crel"], None, "CREL relocation sections ignored"),
    ("fuzz-copyrel-alias-interposed", &["alias", "interpose"], None, "the aliased name of a copied alias not bound to the copy"),
    ("fuzz-copyrel-alias", &["alias"], None, "one copy relocation per alias of a copied variable"),
    ("fuzz-lto-import-order", &["lto", "pic"], None, "ThinLTO imports in another module order than lld's (module IDs)"),
    ("fuzz-wrap-hidden-reference", &["wrap", "hidden"], None, "a hidden reference renamed by --wrap does not hide the wrapped symbol"),
    ("fuzz-merge-section-relocs", &["gcc-compile"], None, "relocations of a mergeable constant section dropped"),
    ("fuzz-tls-ie-add-r12", &["gcc-compile", "tls"], None, "IE to LE relaxation of an add into %r12"),
    ("fuzz-tls-misaligned-segment", &["script-layout", "tls"], None, "TP offsets of a TLS segment a script starts off its alignment"),
    ("fuzz-wrap-defsym-ifunc", &["wrap", "defsym", "ifunc"], None, "--defsym of a wrapped ifunc typed by the real symbol"),
    ("fuzz-wrap-real-weak-only", &["wrap", "weak-ref"], None, "__real_ of a weakly referenced wrapped name extracted its member"),
    ("fuzz-wrap-defining-object", &["wrap"], None, "--wrap does not redirect references in the defining object"),
    ("fuzz-undef-abs-nopie", &["nopie", "unresolved"], None, "absolute address of an undefined symbol in a non-PIE left to the loader"),
    ("fuzz-bsymbolic-last-wins", &["bsymbolic", "bsymbolic-functions"], None, "-Bsymbolic and -Bsymbolic-functions both applied (lld: the last wins)"),
    ("fuzz-bsymbolic-non-weak-functions", &[], Some(r"^lib: dtld fails: unknown argument '-Bsymbolic-non-weak-functions'"), "option not supported"),
    (
        "fuzz-lto-version-script-hidden",
        &[],
        Some(r"^lib: dtld fails: version script assignment of '[^']*' to symbol '_' failed: symbol not defined \| ld.lld links$"),
        "version script checked after LTO",
    ),
    ("fuzz-shlib-undefined", &[], Some(r"^dtld links \| ld.lld fails: undefined reference: _$"), "--no-allow-shlib-undefined not enforced"),
    (
        // Seed 1123828 (long run 9): `fzsa = f1;` where f1 is a library function with a
        // canonical PLT entry in the non-PIE program.
        "fuzz-script-canonical-plt",
        &["script"],
        Some(r"^dtld fails: _:1: symbol not found: _ \| ld.lld links$"),
        "a script assignment naming a library symbol with a canonical PLT entry",
    ),
    (
        // Seed 909126: no LTO, a weak hidden definition --gc-sections collected.
        "fuzz-gc-weak-hidden-referenced-by-dso",
        &["gc", "weak-def"],
        Some(r"^dtld fails: non-exported symbol '_' in _ is referenced by DSO _ \| ld.lld fails: undefined reference: _$"),
        "a weak definition --gc-sections collected not reported as an undefined reference",
    ),
    (
        "fuzz-lto-hidden-referenced-by-dso",
        &[],
        Some(r"^dtld fails: non-exported symbol '_' in _ is referenced by DSO _ \| ld.lld fails: undefined reference: _$"),
        "a hidden bitcode definition a DSO references stays visible to LTO",
    ),
    (
        "fuzz-symver-undefined-shared",
        &[],
        Some(r"^lib: dtld links \| ld.lld fails: undefined symbol: _@FZ_1$"),
        "undefined versioned reference accepted in -shared",
    ),
    (
        "fuzz-hidden-referenced-by-dso",
        &[],
        Some(r"^dtld links \| ld.lld fails: non-exported symbol '_' in _ is referenced by DSO _$"),
        "hidden symbol referenced by a DSO accepted",
    ),
    (
        "fuzz-tpoff32-shared-message",
        &[],
        Some(r"^lib: dtld fails: _:\(_\): relocation R_X86_64_TPOFF32 against preemptible symbol"),
        "TPOFF32 in -shared: message",
    ),
    (
        "fuzz-tpoff32-shared-bsymbolic",
        &[],
        Some(
            r"^lib: dtld fails: relocation R_X86_64_(32|PC32) cannot be used against symbol '_'; recompile with -fPIC \| ld.lld fails: relocation R_X86_64_TPOFF32 against _ cannot be used with -shared$",
        ),
        "TPOFF32 in -shared not reported when the symbol is not preemptible",
    ),
    ("fuzz-script-insert", &[], Some(r"^dtld fails: INSERT AFTER \S+ is not supported by dtld"), "INSERT not supported"),
    (
        "fuzz-script-undefined-message",
        &[],
        Some(r"^dtld fails: --?defsym:1: symbol not found: _ \| ld.lld fails: _:1: symbol not found: _$"),
        "script location in the message",
    ),
    ("fuzz-script-shared-target", &[], Some(r"^dtld links \| ld.lld fails: _:1: symbol not found: _$"), "script assignment from a shared symbol accepted"),
    (
        "fuzz-pc32-shared-undefined",
        &[],
        Some(
            r"^lib: dtld (links|fails: relocation R_X86_64_32 cannot be used against symbol '_'; recompile with -fPIC) \| ld.lld fails: relocation R_X86_64_PC32 cannot be used against symbol '_'; recompile with -fPIC$",
        ),
        "PC32 to a preemptible symbol in -shared accepted",
    ),
    ("fuzz-symver-weak-lazy-static", &[], Some(r"^dtld links \| ld.lld fails: undefined symbol: _@@FZ_2$"), "weak reference meeting a lazy name@@VER"),
    (
        "fuzz-abs64-text-pie",
        &[],
        Some(r"^dtld links \| ld.lld fails: relocation R_X86_64_64 cannot be used against local symbol; recompile with -fPIC$"),
        "text relocation in a PIE accepted",
    ),
    (
        "fuzz-weak-undef-abs-pie",
        &[],
        Some(
            r"^dtld (links|fails: relocation R_X86_64_\w+ cannot be used against (local )?symbol.*) \| ld.lld fails: relocation R_X86_64_(32|PC32) cannot be used against symbol '_'; recompile with -fPIC$",
        ),
        "non-PIC references to an undefined weak symbol in a PIE accepted",
    ),
    (
        "fuzz-symver-reloc-message",
        &[],
        Some(
            r"^dtld fails: relocation R_X86_64_\w+ cannot be used against symbol '_'; recompile with -fPIC \| ld.lld fails: relocation R_X86_64_\w+ cannot be used against symbol '_@@FZ_2'; recompile with -fPIC$",
        ),
        "versioned name in the message",
    ),
    (
        "fuzz-lto-archive-symver",
        &["lto", "versioned"],
        Some(r"^dtld fails: undefined symbol: _ \| ld.lld links$"),
        "bitcode member defining a name only through .symver not pulled",
    ),
    ("fuzz-lto-symver-exe-order", &["lto", "versioned"], None, "versions in a ThinLTO executable exported in another order"),
    (
        "fuzz-script-ifunc-alias-static-pie",
        &["script", "ifunc"],
        Some(r"^run: dtld exit 0, ld\.lld signal 11$"),
        "ld.lld-22's program crashes: an IRELATIVE of a script alias of an ifunc names the implementation (any link mode)",
    ),
    (
        // The same lld bug through a --defsym alias (seeds 304266-304270).
        "fuzz-script-ifunc-alias-static-pie",
        &["defsym", "ifunc"],
        Some(r"^run: dtld exit 0, ld\.lld signal 11$"),
        "ld.lld-22's program crashes: an IRELATIVE of a --defsym alias of an ifunc names another function",
    ),
    (
        // The same lld bug where the function the IRELATIVE names returns: lld's program calls
        // another ifunc's implementation through the alias (seeds 1315030, 1315036 of long run
        // 11, static: `fzds = f3` got f0's resolver). Before the closed defsym/ifunc buckets;
        // the referee (GNU ld) must side with dtld, or the case fails as a regression.
        "fuzz-script-ifunc-alias-static-pie",
        &["defsym", "ifunc"],
        None,
        "ld.lld-22's program calls another function through a --defsym alias of an ifunc (its IRELATIVE names another resolver)",
    ),
    (
        // And through a script alias (seeds 1319601-1319613 of long run 11, static, PIE and
        // non-PIE: `fzsa = f2;` where lld's IRELATIVE names f1's resolver; GNU ld behaves as
        // dtld). Before the closed script/ifunc buckets; the referee guards against masking them.
        "fuzz-script-ifunc-alias-static-pie",
        &["script", "ifunc"],
        None,
        "ld.lld-22's program calls another function through a script alias of an ifunc (its IRELATIVE names another resolver)",
    ),
    // Seed 1333245 (long run 11): an --as-needed library only a collected section needed
    // strongly: its symbols were not demoted after --gc-sections, so a version need named it.
    ("fuzz-as-needed-gc-verneed", &["gc", "as-needed"], None, "a library --gc-sections left unneeded still named by a version need"),
    ("fuzz-icf-shlib-undefined", &["icf", "export-dynamic"], None, "a symbol in a section --icf folded seen as dead by --no-allow-shlib-undefined"),
    ("fuzz-versioned-name-in-message", &["vis-hidden", "versioned"], None, "a default-versioned name without its @@VER in lld's message"),
    ("fuzz-defsym-O2-lld-call", &["lto-O2", "defsym"], None, "ld.lld-22 -O2 calls another function than a --defsym alias names (an lld bug)"),
    // The same lld bug through a linker-script alias (`fzsa = f5;`, seed 309052).
    ("fuzz-defsym-O2-lld-call", &["lto-O2", "script"], None, "ld.lld-22 -O2 calls another function than a script alias names (an lld bug)"),
    ("fuzz-defsym-shared-canonical", &["defsym", "nopie"], None, "--defsym of a library symbol the executable gives a canonical PLT entry or a copy"),
    ("fuzz-defsym-ifunc-gc", &["defsym", "ifunc", "gc"], None, "--gc-sections collected what only a --defsym reads"),
    ("fuzz-script-ifunc-alias-static", &["script", "ifunc"], None, "address identity of a script alias of an ifunc in a static link"),
    ("fuzz-script-ifunc-alias", &["script", "ifunc"], None, "script alias of an ifunc is not an ifunc"),
    ("fuzz-script-separate-code", &["script-layout", "separate-code"], None, "SECTIONS layout with -z separate-code crashes"),
    ("fuzz-gotpcrelx-absolute", &["script"], None, "GOTPCRELX to an absolute symbol relaxed in a PIE"),
    ("fuzz-ifunc-needed-order", &["as-needed", "ifunc"], None, "libraries loaded in another order (DT_NEEDED)"),
    ("fuzz-ifunc-exe-referenced-by-dso", &["ifunc"], None, "executable's ifunc referenced by a DSO exported differently"),
];

#[derive(Default)]
struct Stats {
    cases: u64,
    same: u64,
    both_failed: u64,
    /// First error message → count and the first seed, for the links both linkers refused.
    errors: BTreeMap<String, (u64, u64)>,
    findings: Vec<Finding>,
    buckets: Vec<Bucket>,
    shrinks_started: usize,
    /// Seconds spent compiling, linking, running (summed over threads).
    times: [f64; 3],
}

struct Ctx {
    env: Env,
    cfg: Config,
    stats: Mutex<Stats>,
}

fn main() {
    let args = Arguments::from_args();
    let started = Instant::now();
    let cfg = match Config::from_env() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("fuzzlink: {e}");
            std::process::exit(2);
        }
    };
    let _lock = lock_target_subdir("fuzzlink", "link fuzzer");
    let ctx = setup(cfg).map(Arc::new);
    let mut trials = Vec::new();
    let (start, count) = match &ctx {
        Ok(c) => (c.cfg.start, c.cfg.count),
        Err(_) => (0, 1),
    };
    // One trial per program: the run's seeds (`FUZZLINK_SEEDS`, or `count` from `start`) by
    // program.
    let mut by_program: BTreeMap<u64, Vec<u64>> = BTreeMap::new();
    let seeds: Vec<u64> = match ctx.as_ref().ok().and_then(|c| c.cfg.seeds.clone()) {
        Some(list) => list,
        None => (start..start + count).collect(),
    };
    for id in seeds {
        by_program.entry(id / SHAPES).or_default().push(id);
    }
    for (program, ids) in by_program {
        let ctx = ctx.clone();
        trials.push(Trial::test(format!("fuzzlink/cases-{}-{}", ids[0], ids[ids.len() - 1]), move || {
            let ctx = ctx.map_err(Failed::from)?;
            run_batch(&ctx, program, &ids).map_err(Failed::from)
        }));
    }
    let conclusion = libtest_mimic::run(&args, trials);
    if let Ok(ctx) = &ctx {
        summary(ctx, started);
    }
    conclusion.exit();
}

fn setup(cfg: Config) -> Result<Ctx, String> {
    check_tools(&[CLANG, CLANGXX, LLD, LLVM_AR, GCC])?;
    let dtld = find_dtld()?;
    let root = target_dir().join("fuzzlink");
    let tools = root.join(".tools");
    let io = |e: std::io::Error| format!("cannot set up {}: {e}", tools.display());
    let lld = find_in_path(LLD).ok_or("ld.lld-22 not in PATH")?;
    let gcc_dtld_dir = wrapper_dir(&tools.join("gcc-dtld"), "ld", &dtld).map_err(io)?;
    let gcc_lld_dir = wrapper_dir(&tools.join("gcc-lld"), "ld.lld", &lld).map_err(io)?;
    let mut versions = Vec::new();
    for tool in [CLANG, GCC] {
        let out = std::process::Command::new(tool).arg("--version").output().map_err(|e| format!("{tool} --version: {e}"))?;
        versions.extend(out.stdout);
    }
    let via_driver = std::env::var("FUZZLINK_DRIVER").is_ok_and(|v| !v.is_empty() && v != "0");
    let templates = exec::LinkTemplates::new(tools.join("templates")).map_err(io)?;
    let stats = Stats {
        buckets: KNOWN
            .iter()
            .map(|(n, f, sig, w)| Bucket {
                name: n.to_string(),
                features: f.iter().map(|s| s.to_string()).collect(),
                signature: sig.map(|s| regex::Regex::new(s).expect("valid KNOWN pattern")),
                what: w.to_string(),
                open: fixture_is_open(n),
            })
            .collect(),
        ..Stats::default()
    };
    Ok(Ctx { env: Env { dtld, root, gcc_dtld_dir, gcc_lld_dir, versions, via_driver, templates }, cfg, stats: Mutex::new(stats) })
}

/// Whether the harness fixture of known divergence `name` is still marked `//#Open:` (a
/// fixture directory's `main.c`/`main.cc`, or `<name>.c`/`<name>.cc`).
fn fixture_is_open(name: &str) -> bool {
    let dir = dtld_tests::workspace_root().join("fixtures").join("elf");
    let candidates = [dir.join(name).join("main.c"), dir.join(name).join("main.cc"), dir.join(format!("{name}.c")), dir.join(format!("{name}.cc"))];
    candidates.iter().filter_map(|p| fs::read_to_string(p).ok()).any(|t| t.lines().any(|l| l.trim_start().starts_with("//#Open:")))
}

/// The command that replays one case.
fn replay_command(ctx: &Ctx, id: u64) -> String {
    let avoid = if ctx.cfg.avoid.is_empty() { String::new() } else { format!("FUZZLINK_AVOID={} ", ctx.cfg.avoid.join(",")) };
    format!("{avoid}FUZZLINK_SEED={id} FUZZLINK_CASES=1 FUZZLINK_KEEP=1 cargo test --release -p dtld-tests --test fuzzlink")
}

/// Case `id`: shape `id % SHAPES` of program `p`, without the avoided features.
fn make_state(ctx: &Ctx, p: &model::Program, id: u64) -> features::State {
    let mut st = (p.clone(), shape::generate(p, id % SHAPES));
    for f in &ctx.cfg.avoid {
        features::ablate(&mut st, f);
    }
    st
}

fn run_batch(ctx: &Ctx, program: u64, ids: &[u64]) -> Result<(), String> {
    let t0 = Instant::now();
    let p = model::generate(program);
    let bdir = ctx.env.root.join(format!("p{program}"));
    let cache = bdir.join("cache");
    fresh_dir(&cache).map_err(|e| format!("cannot create {}: {e}", cache.display()))?;
    let (mut same, mut both_failed, mut open_known, mut kept) = (0u64, 0u64, 0u64, false);
    let mut failures = Vec::new();
    let n = ids.len();
    for &id in ids {
        let st = make_state(ctx, &p, id);
        let case = shape::case(&st.0, &st.1);
        let dir = bdir.join(format!("c{id}"));
        let ran = exec::run_case(&ctx.env, &case, &dir, &cache);
        {
            let mut stats = ctx.stats.lock().unwrap();
            for i in 0..3 {
                stats.times[i] += ran.times[i];
            }
        }
        let mut keep = ctx.cfg.keep;
        match &ran.verdict {
            Verdict::Same => same += 1,
            Verdict::BothFailed(e) => {
                both_failed += 1;
                ctx.stats.lock().unwrap().errors.entry(exec::error_class(e)).or_insert((0, id)).0 += 1;
            }
            Verdict::Diverged(kind, detail, signature) => {
                keep = true;
                let tags = features::tags(&st);
                write_repro(&dir, id, &ran.commands, detail, &replay_command(ctx, id));
                let bucket =
                    attribute(ctx, &st, &tags, signature.as_deref(), &bdir.join("attr"), &cache).or_else(|| new_bucket(ctx, &st, id, *kind, signature.clone()));
                let open = bucket.as_ref().is_some_and(|b| ctx.stats.lock().unwrap().buckets.iter().any(|k| &k.name == b && k.open));
                let referee = open.then(|| referee(ctx, &case, &dir.join("gnu-ld"), &cache, *kind, &ran));
                eprintln!(
                    "fuzzlink: DIVERGENCE seed {id} ({}) [{}]{}: {}{}\n  replay: {}",
                    kind.name(),
                    tags.join(" "),
                    bucket.as_ref().map_or(String::new(), |b| format!(" -> {b}")),
                    first_line(detail),
                    referee.as_ref().map_or(String::new(), |r| format!("\n  {}", r.text())),
                    replay_command(ctx, id)
                );
                // An open bucket is an ld.lld-22 bug only where GNU ld does not side with ld.lld.
                let lld_sided = matches!(referee, Some(Referee::Differs(_)));
                if open && !lld_sided {
                    open_known += 1;
                } else {
                    failures.push(format!(
                        "seed {id}: {} divergence{}{}: {}\n  kept: {}\n  replay: {}",
                        kind.name(),
                        bucket.as_ref().map_or(String::new(), |b| format!(" ({b})")),
                        if lld_sided { ", but GNU ld's program behaves as ld.lld's, not as dtld's" } else { "" },
                        first_line(detail),
                        dir.display(),
                        replay_command(ctx, id)
                    ));
                }
                ctx.stats.lock().unwrap().findings.push(Finding { id, kind: Some(*kind), tags, summary: first_line(detail), bucket, referee });
            }
            Verdict::Broken(e) => {
                keep = true;
                write_repro(&dir, id, &ran.commands, e, &replay_command(ctx, id));
                eprintln!("fuzzlink: BROKEN CASE seed {id} (a generator or tool problem): {}\n  replay: {}", first_line(e), replay_command(ctx, id));
                failures.push(format!("seed {id}: broken case: {e}\n  kept: {}", dir.display()));
                ctx.stats.lock().unwrap().findings.push(Finding {
                    id,
                    kind: None,
                    tags: features::tags(&st),
                    summary: first_line(e),
                    bucket: None,
                    referee: None,
                });
            }
        }
        if keep {
            if ctx.cfg.keep {
                write_repro(&dir, id, &ran.commands, &format!("{:?}", ran.verdict), &replay_command(ctx, id));
            }
            kept = true;
        } else {
            let _ = fs::remove_dir_all(&dir);
        }
    }
    {
        let mut st = ctx.stats.lock().unwrap();
        st.cases += n as u64;
        st.same += same;
        st.both_failed += both_failed;
    }
    eprintln!(
        "fuzzlink: seeds {}-{} (program {program}): {n} cases, {same} same, {both_failed} both failed, {} divergent ({open_known} of them known and open), {:.1} s",
        ids[0],
        ids[ids.len() - 1],
        failures.len() as u64 + open_known,
        t0.elapsed().as_secs_f64()
    );
    if !ctx.cfg.keep {
        let _ = fs::remove_dir_all(&cache);
    }
    if !kept {
        let _ = fs::remove_dir_all(&bdir);
    }
    if failures.is_empty() {
        Ok(())
    } else {
        Err(failures.join("\n"))
    }
}

fn first_line(s: &str) -> String {
    s.lines().find(|l| !l.trim().is_empty()).unwrap_or("").chars().take(200).collect()
}

fn write_repro(dir: &Path, id: u64, commands: &[String], detail: &str, replay: &str) {
    let _ = fs::create_dir_all(dir);
    let mut text = format!("#!/bin/sh\n# fuzzlink seed {id}; replay: {replay}\nset -x\n");
    for c in commands {
        text.push_str(c);
        text.push('\n');
    }
    let _ = fs::write(dir.join("commands.sh"), text);
    let _ = fs::write(dir.join("divergence.txt"), detail);
}

/// GNU ld's opinion on a case of an open bucket (a known ld.lld-22 bug) whose programs
/// diverged (`lld`: that run): the case is linked again by dtld and by GNU ld (in `dir`,
/// through the same compile cache) and both programs run. Where dtld's and ld.lld's programs
/// differ, GNU ld's must behave as dtld's (other differences between GNU ld and ld.lld, such
/// as the address identity of an ifunc in a static link, are not the bucket's).
fn referee(ctx: &Ctx, case: &case::Case, dir: &Path, cache: &Path, kind: DivKind, lld: &exec::Ran) -> Referee {
    if !matches!(kind, DivKind::Exit | DivKind::Stdout) || lld.programs.len() != 2 {
        return Referee::Unavailable(format!("a {} divergence, not one of programs", kind.name()));
    }
    let ran = exec::run_case_against(&ctx.env, case, dir, cache, exec::Who::Bfd);
    write_repro(dir, 0, &ran.commands, &format!("{:?}", ran.verdict), "GNU ld's link of the case (the referee)");
    let r = match (&ran.verdict, ran.programs.as_slice()) {
        (Verdict::Same, _) => Referee::Agrees { entirely: true },
        (_, [(d_status, d_out), (b_status, b_out)]) => {
            let (l_status, l_out) = &lld.programs[1];
            if kind == DivKind::Exit {
                if b_status == d_status {
                    Referee::Agrees { entirely: false }
                } else if b_status == l_status && b_out == l_out {
                    // Ended as ld.lld's, at the same point (a crash before `main` is another
                    // failure than ld.lld's crash after half the output: seed 1401718).
                    Referee::Differs(format!("GNU ld's program {b_status}, as ld.lld's, with its output; dtld's {d_status}"))
                } else {
                    Referee::Unavailable(format!("GNU ld's program {b_status}, dtld's {d_status}, ld.lld's {l_status}"))
                }
            } else {
                let lines = |b: &[u8]| String::from_utf8_lossy(b).lines().map(String::from).collect::<Vec<_>>();
                let (d, l, g) = (lines(d_out), lines(l_out), lines(b_out));
                let n = d.len().max(l.len());
                let show = |v: &Vec<String>, i: usize| format!("{:?}", v.get(i).map_or("<end>", |s| s.as_str()));
                let differing: Vec<usize> = (0..n).filter(|&i| d.get(i) != l.get(i)).collect();
                if let Some(&i) = differing.iter().find(|&&i| g.get(i) == l.get(i)) {
                    Referee::Differs(format!("stdout line {}: GNU ld {} as ld.lld, dtld {}", i + 1, show(&g, i), show(&d, i)))
                } else if let Some(&i) = differing.iter().find(|&&i| g.get(i) != d.get(i)) {
                    Referee::Unavailable(format!("stdout line {}: dtld {}, ld.lld {}, GNU ld {}", i + 1, show(&d, i), show(&l, i), show(&g, i)))
                } else {
                    Referee::Agrees { entirely: false }
                }
            }
        }
        (Verdict::Diverged(DivKind::LinkVerdict | DivKind::LibVerdict, d, Some(sig)), _) if sig.contains("GNU ld fails") => {
            Referee::Unavailable(first_error_of(d).unwrap_or_else(|| first_line(d)))
        }
        // The links themselves differ (dtld's linked the first time): no programs to compare.
        (Verdict::Diverged(_, d, _), _) => Referee::Unavailable(first_line(d)),
        (Verdict::BothFailed(e), _) => Referee::Unavailable(format!("both fail: {e}")),
        (Verdict::Broken(e), _) => Referee::Unavailable(first_line(e)),
    };
    // Kept (beside the case) when GNU ld does not agree, to look at.
    if !ctx.cfg.keep && matches!(r, Referee::Agrees { .. }) {
        let _ = fs::remove_dir_all(dir);
    }
    r
}

/// The first linker error in a divergence's detail (GNU ld's words: `ld.bfd: <message>`).
fn first_error_of(detail: &str) -> Option<String> {
    detail.lines().find_map(|l| l.split_once("ld.bfd: ").or_else(|| l.split_once("/ld: ")).map(|(_, m)| m.chars().take(160).collect()))
}

/// The known bucket this divergence belongs to. A link that diverged belongs to a bucket whose
/// pattern its signature matches (and whose features it has, if the bucket names any). Otherwise it belongs to the first bucket without a pattern
/// whose specific features it has and which are each essential to it: taking any one of them
/// out ends the divergence, as for the bucket's shrunk reproducer.
fn attribute(ctx: &Ctx, st: &features::State, tags: &[String], signature: Option<&str>, dir: &Path, cache: &Path) -> Option<String> {
    let all = ctx.stats.lock().unwrap().buckets.clone();
    // The open buckets (lld's bugs) first: a case one of them explains is that known
    // difference, not a regression of a fixed bucket whose features it happens to have too
    // (seed 806796: lld's -O2 call through a --defsym alias, in a case with --wrap).
    let buckets: Vec<&Bucket> = all.iter().filter(|b| b.open).chain(all.iter().filter(|b| !b.open)).collect();
    if let Some(sig) = signature {
        let fits = |b: &&&Bucket| b.signature.as_ref().is_some_and(|re| re.is_match(sig)) && b.features.iter().all(|f| tags.contains(f));
        if let Some(b) = buckets.iter().find(fits) {
            return Some(b.name.clone());
        }
    }
    'bucket: for b in buckets.iter().filter(|b| b.signature.is_none()) {
        // A link mode a bucket names must be the case's (it is not ablated: every case has one).
        if !b.features.iter().filter(|f| MODES.contains(&f.as_str())).all(|f| tags.contains(f)) {
            continue;
        }
        let specific: Vec<&String> = b.features.iter().filter(|f| !STRUCTURAL.contains(&f.as_str()) && !MODES.contains(&f.as_str())).collect();
        if specific.is_empty() || !specific.iter().all(|f| tags.contains(f)) {
            continue;
        }
        for f in specific {
            let mut c = st.clone();
            features::ablate(&mut c, f);
            let still = shrink::divergence(&ctx.env, &c, dir, cache);
            let _ = fs::remove_dir_all(dir);
            if still.is_some() {
                continue 'bucket;
            }
        }
        return Some(b.name.clone());
    }
    None
}

/// Shrinks a divergence no bucket explains (while the run's shrink budget lasts) and makes its
/// reproducer a new bucket.
fn new_bucket(ctx: &Ctx, st: &features::State, id: u64, kind: DivKind, signature: Option<String>) -> Option<String> {
    {
        let mut stats = ctx.stats.lock().unwrap();
        if stats.shrinks_started >= ctx.cfg.shrink {
            return None;
        }
        stats.shrinks_started += 1;
    }
    eprintln!("fuzzlink: shrinking seed {id} ({})...", kind.name());
    let t0 = Instant::now();
    match shrink::shrink(&ctx.env, st, id, kind, signature.as_deref(), &ctx.env.root.join("repro")) {
        Ok((_, dir, essential)) => {
            let name = dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            eprintln!("fuzzlink: seed {id} shrunk in {:.0} s to {} (essential features: {})", t0.elapsed().as_secs_f64(), dir.display(), essential.join(" "));
            let what = format!("{} divergence, {}", kind.name(), dir.display());
            let mut stats = ctx.stats.lock().unwrap();
            // The same cause shrunk from another case often keeps one feature more or less:
            // the run counts it with the bucket whose essential features nest with these, and
            // keeps the smaller set.
            let nested = |b: &Bucket| {
                b.signature.is_none()
                    && signature.is_none()
                    && !b.features.is_empty()
                    && !essential.is_empty()
                    && (b.features.iter().all(|f| essential.contains(f)) || essential.iter().all(|f| b.features.contains(f)))
            };
            if let Some(b) = stats.buckets.iter_mut().find(|b| nested(b)) {
                if essential.len() < b.features.len() {
                    b.features = essential;
                }
                eprintln!("fuzzlink: seed {id} counted with {} (its features nest with these)", b.name);
                return Some(b.name.clone());
            }
            let signature = signature.map(|s| regex::Regex::new(&format!("^{}$", regex::escape(&s))).expect("escaped pattern"));
            stats.buckets.push(Bucket { name: name.clone(), features: essential, signature, what, open: false });
            Some(name)
        }
        Err(e) => {
            eprintln!("fuzzlink: shrinking seed {id} failed: {e}");
            None
        }
    }
}

fn summary(ctx: &Ctx, started: Instant) {
    let st = ctx.stats.lock().unwrap();
    if st.cases == 0 {
        return;
    }
    let secs = started.elapsed().as_secs_f64();
    eprintln!(
        "\nfuzzlink summary: {} cases (seeds {}{}) in {:.0} s ({:.0} cases/min): {} same, {} both failed alike, {} divergent, {} broken",
        st.cases,
        match &ctx.cfg.seeds {
            Some(list) => format!("{} listed", list.len()),
            None => format!("{}..{}", ctx.cfg.start, ctx.cfg.start + ctx.cfg.count),
        },
        if ctx.cfg.avoid.is_empty() { String::new() } else { format!(", avoiding {}", ctx.cfg.avoid.join(",")) },
        secs,
        st.cases as f64 * 60.0 / secs,
        st.same,
        st.both_failed,
        st.findings.iter().filter(|f| f.kind.is_some()).count(),
        st.findings.iter().filter(|f| f.kind.is_none()).count()
    );
    eprintln!("  time in compiles {:.0} s, links {:.0} s, program runs {:.0} s (all threads)", st.times[0], st.times[1], st.times[2]);
    let mut by_kind: BTreeMap<&str, Vec<u64>> = BTreeMap::new();
    for f in &st.findings {
        by_kind.entry(f.kind.map_or("broken", |k| k.name())).or_default().push(f.id);
    }
    for (k, ids) in &by_kind {
        let shown: Vec<String> = ids.iter().take(12).map(|i| i.to_string()).collect();
        eprintln!("  {k}: {} (seeds {}{})", ids.len(), shown.join(" "), if ids.len() > 12 { " ..." } else { "" });
    }
    let mut by_tag: BTreeMap<&str, usize> = BTreeMap::new();
    for f in st.findings.iter().filter(|f| f.kind.is_some()) {
        for t in &f.tags {
            *by_tag.entry(t.as_str()).or_default() += 1;
        }
    }
    if !by_tag.is_empty() {
        let tags: Vec<String> = by_tag.iter().map(|(t, n)| format!("{t}={n}")).collect();
        eprintln!("  features of the divergent cases: {}", tags.join(" "));
    }
    for b in &st.buckets {
        let ids: Vec<String> = st.findings.iter().filter(|f| f.bucket.as_deref() == Some(&b.name)).map(|f| f.id.to_string()).collect();
        if !ids.is_empty() {
            let sig = b.signature.as_ref().map_or(String::new(), |s| format!(" /{s}/"));
            eprintln!(
                "  {}: {} [{}]{sig} ({}): seeds {}",
                b.name,
                ids.len(),
                b.features.join(" "),
                b.what,
                ids.iter().take(10).cloned().collect::<Vec<_>>().join(" ")
            );
        }
    }
    let judged: Vec<&Referee> = st.findings.iter().filter_map(|f| f.referee.as_ref()).collect();
    if !judged.is_empty() {
        let agrees = judged.iter().filter(|r| matches!(r, Referee::Agrees { .. })).count();
        let entirely = judged.iter().filter(|r| matches!(r, Referee::Agrees { entirely: true })).count();
        let differs: Vec<String> = st.findings.iter().filter(|f| matches!(f.referee, Some(Referee::Differs(_)))).map(|f| f.id.to_string()).take(20).collect();
        let unavailable = judged.iter().filter(|r| matches!(r, Referee::Unavailable(_))).count();
        eprintln!(
            "  GNU ld on the known ld.lld-22 bugs: behaves as dtld where ld.lld differs in {agrees} of {} ({entirely} in everything), sides with ld.lld in {} (seeds {}), cannot judge {unavailable}",
            judged.len(),
            judged.len() - agrees - unavailable,
            differs.join(" ")
        );
    }
    let unattributed: Vec<String> = st.findings.iter().filter(|f| f.kind.is_some() && f.bucket.is_none()).map(|f| f.id.to_string()).collect();
    if !unattributed.is_empty() {
        eprintln!(
            "  not attributed to a known divergence: {} (seeds {})",
            unattributed.len(),
            unattributed.iter().take(20).cloned().collect::<Vec<_>>().join(" ")
        );
    }
    for f in st.findings.iter().filter(|f| f.bucket.is_none()).take(30) {
        eprintln!("  seed {} {}: {}", f.id, f.kind.map_or("broken", |k| k.name()), f.summary);
    }
    let mut errs: Vec<(&String, &(u64, u64))> = st.errors.iter().collect();
    errs.sort_by_key(|e| std::cmp::Reverse(e.1 .0));
    if !errs.is_empty() {
        eprintln!("  links both linkers refused, by first error (count, first seed):");
        for (e, (n, seed)) in errs.iter().take(10) {
            eprintln!("    {n:6} {seed:8}  {e}");
        }
    }
}
