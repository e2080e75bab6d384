//! lld-link's `/guard:cf` (Control Flow Guard tables) against lld-link-22.
//!
//! Why this exists: a Windows loader that enforces CFG rejects an indirect call to a function
//! missing from `GuardFidTable`, so dtld's tables must hold what lld-link's hold, at the same
//! addresses. C compiled by clang-22 with `-Xclang -cfguard` (address-taken statics and
//! externals, a table of function pointers, exported functions, a dllimported function whose
//! address is taken (`.giats$y`), a returns-twice call (`.gljmp$y`)), one object built without
//! guard CF (its relocations count as address-taking) and a hand-written `_load_config_used`
//! are linked into a DLL and an EXE by both linkers, with `/guard:cf` and its variants
//! (`/opt:icf`, `/guard:cf,ehcont` with `/opt:noref`, a later `/guard:` that turns it off, no
//! `/guard:` at all). The file headers, section headers and `llvm-readobj-22 --coff-load-config`
//! (the Guard* fields and every table, with addresses) must be equal, and so must the
//! warnings; the trial also checks that lld's tables are not empty, so that it tests something.
//!
//! Trials work in `<target>/guardcf-tests/<trial>/`, deleted when they pass (kept on failure,
//! or always with `DTLD_HARNESS_KEEP=1`). `DTLD` names the linker under test.

use std::path::Path;

use dtld_tests::trial::{keep_requested, run_in, TrialDir};
use dtld_tests::{check_tools, find_dtld, target_dir, CLANG};
use libtest_mimic::{Arguments, Failed, Trial};

const LLD_LINK: &str = "lld-link-22";
const READOBJ: &str = "llvm-readobj-22";

/// The DLL: address-taken statics and externals in a table, exports (code and data).
const LIB_C: &str = r#"typedef int (*fn)(int);
static int sq(int x) { return x * x; }
int twice(int x) { return 2 * x; }
int same_a(int x) { return x + 7; }
int same_b(int x) { return x + 7; }
static fn table[] = { sq, twice, same_a, same_b };
__declspec(dllexport) int apply(int i, int x) { return table[i & 3](x); }
__declspec(dllexport) int plain(int x) { return x - 1; }
__declspec(dllexport) int data_export = 42;
int DllMain(void *h, unsigned r, void *p) { return 1; }
"#;

/// The EXE: a static and an import whose addresses are taken, a returns-twice call.
const EXE_C: &str = r#"typedef int (*fn)(int);
__declspec(dllimport) int apply(int, int);
__declspec(dllimport) int plain(int);
__attribute__((returns_twice)) int my_setjmp(void *buf);
static int local_cb(int x) { return x ^ 5; }
int other(int x) { return x + 1; }
fn pick(int k) { return k ? local_cb : plain; }
void *buf[32];
int mainCRTStartup(void) {
  volatile fn f = pick(3);
  if (my_setjmp(buf)) return 1;
  return f(2) + apply(1, 2) + other(0);
}
"#;

/// Built without guard CF: every function its relocations reach is address-taken.
const NOCFG_C: &str = r#"int other(int x);
int helper(int x) { return x * 3; }
int (*nocfg_ptr)(int) = helper;
int (*nocfg_ptr2)(int) = other;
"#;

/// `my_setjmp`, the guard check pointers and `_load_config_used` (winnt.h's 64-bit
/// `IMAGE_LOAD_CONFIG_DIRECTORY`, 312 bytes, with the fields the linker fills).
const LC_S: &str = r#"        .text
        .globl my_setjmp
        .def my_setjmp; .scl 2; .type 32; .endef
my_setjmp:
        xorl %eax, %eax
        retq
        .def guard_check_nop; .scl 3; .type 32; .endef
guard_check_nop:
        retq
        .data
        .p2align 3
        .globl __guard_check_icall_fptr
__guard_check_icall_fptr:
        .quad guard_check_nop
        .globl __guard_dispatch_icall_fptr
__guard_dispatch_icall_fptr:
        .quad guard_check_nop
        .section .rdata,"dr"
        .p2align 3
        .globl _load_config_used
_load_config_used:
        .long 312
        .fill 108, 1, 0
        .quad __guard_check_icall_fptr
        .quad __guard_dispatch_icall_fptr
        .quad __guard_fids_table
        .quad __guard_fids_count
        .long __guard_flags
        .fill 12, 1, 0
        .quad __guard_iat_table
        .quad __guard_iat_count
        .quad __guard_longjmp_table
        .quad __guard_longjmp_count
        .fill 72, 1, 0
        .quad __guard_eh_cont_table
        .quad __guard_eh_cont_count
        .fill 32, 1, 0
"#;

const DLL: &[&str] = &["-nodefaultlib", "-dll", "-entry:DllMain", "lib.obj", "lc.obj"];
const EXE: &[&str] = &["-nodefaultlib", "-entry:mainCRTStartup", "-subsystem:console", "exe.obj", "nocfg.obj", "lc.obj", "g.lib"];

/// (name, output, base arguments, more arguments, what lld's load configuration must show).
type Variant = (&'static str, &'static str, &'static [&'static str], &'static [&'static str], &'static [&'static str]);

const VARIANTS: &[Variant] = &[
    ("dll", "g.dll", DLL, &["-guard:cf"], &["GuardFlags [ (0x10500)", "GuardFidTable ["]),
    ("dll-icf", "g.dll", DLL, &["-guard:cf", "-opt:icf"], &["GuardFidTable ["]),
    ("exe", "g.exe", EXE, &["-guard:cf"], &["GuardFidTable [", "GuardIatTable [", "GuardLJmpTable ["]),
    ("exe-ehcont-noref", "g.exe", EXE, &["-guard:cf,ehcont", "-opt:noref"], &["GuardFlags [ (0x410500)", "GuardFidTable ["]),
    ("exe-last-guard-off", "g.exe", EXE, &["-guard:cf", "-guard:nolongjmp"], &["GuardFlags [ (0x100)"]),
    ("exe-no-guard", "g.exe", EXE, &[], &["GuardFlags [ (0x100)"]),
];

fn main() {
    let args = Arguments::from_args();
    let trials = vec![Trial::test("guardcf/tables", || run_trial("guardcf/tables").map_err(Failed::from))];
    libtest_mimic::run(&args, trials).exit();
}

fn run_trial(name: &str) -> Result<(), String> {
    check_tools(&[CLANG, LLD_LINK, READOBJ])?;
    let dtld = find_dtld()?;
    let dir = target_dir().join("guardcf-tests").join(name.replace('/', "-"));
    run_in(&dir, keep_requested(), &[format!("linker under test: {}", dtld.display())], |t| tables(t, &dtld))
}

fn tables(t: &TrialDir, dtld: &Path) -> Result<(), String> {
    for (file, text) in [("lib.c", LIB_C), ("exe.c", EXE_C), ("nocfg.c", NOCFG_C), ("lc.s", LC_S)] {
        t.write(file, text)?;
        let cfguard: &[&str] = if file == "lib.c" || file == "exe.c" { &["-Xclang", "-cfguard"] } else { &[] };
        let obj = file.replace(".c", ".obj").replace(".s", ".obj");
        t.ok(t.cmd(CLANG).args(["--target=x86_64-pc-windows-msvc", "-c", "-O1"]).args(cfguard).arg(file).arg("-o").arg(obj))?;
    }
    // The import library both EXE links read.
    t.ok(t.cmd(LLD_LINK).args(DLL).args(["-guard:cf", "-out:g.dll", "-implib:g.lib"]))?;
    for v in VARIANTS {
        let &(name, _, _, _, expect) = v;
        let lld = link(t, (LLD_LINK.as_ref(), &[]), "lld", v)?;
        let ours = link(t, (dtld.as_os_str(), &["-flavor", "link"]), "dtld", v)?;
        if lld != ours {
            return Err(format!("{name}: dtld and lld-link-22 differ\n{}", first_difference(&lld, &ours)));
        }
        for e in expect {
            if !lld.contains(e) {
                return Err(format!("{name}: lld-link-22's output lacks `{e}`: the inputs no longer test what they should\n{lld}"));
            }
        }
    }
    Ok(())
}

/// Links one variant with `program` and its first arguments into `<who>-<name>/<out>`; returns
/// the warnings and the headers and load configuration as llvm-readobj-22 prints them.
fn link(t: &TrialDir, (program, pre): (&std::ffi::OsStr, &[&str]), who: &str, v: &Variant) -> Result<String, String> {
    let &(name, out, base, more, _) = v;
    let dir = format!("{who}-{name}");
    std::fs::create_dir_all(t.path(&dir)).map_err(|e| e.to_string())?;
    let o = t.run(t.cmd(program).args(pre).args(base).args(more).arg(format!("-out:{dir}/{out}")))?;
    if !o.success() {
        return Err(format!("{name}: {who} failed ({}):\n{}", o.status_text(), o.stderr_text()));
    }
    // Warnings without the program name.
    let warnings: String = o.stderr_text().lines().map(|l| l.split_once(": ").map_or(l, |x| x.1)).collect::<Vec<_>>().join("\n");
    let dump = t.ok(t.cmd(READOBJ).args(["--file-headers", "--sections", "--coff-load-config"]).arg(format!("{dir}/{out}")))?;
    let dump = String::from_utf8_lossy(&dump.stdout).lines().filter(|l| !l.starts_with("File:") && !l.contains("TimeDateStamp")).collect::<Vec<_>>().join("\n");
    Ok(format!("warnings:\n{warnings}\n{dump}"))
}

fn first_difference(a: &str, b: &str) -> String {
    for (i, (x, y)) in a.lines().zip(b.lines()).enumerate() {
        if x != y {
            return format!("line {}:\n  lld-link-22: {x}\n  dtld:        {y}", i + 1);
        }
    }
    format!("lengths differ: {} and {} lines", a.lines().count(), b.lines().count())
}
