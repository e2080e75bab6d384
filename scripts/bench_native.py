"""The native real-program workloads of scripts/bench.py and DTLTO against LLVM's distributor.

Why this exists: issue 15's native targets (faster than mold on a large archive-heavy link and on
a large link with debug information), its DTLTO target (dtld with dtld-distribute against
ld.lld-22 with LLVM's reference distributor) and issue 37's big link (clang itself, against mold
3.0 and wild) need real programs, built once and kept under target/ (clang-static under
$BENCH_ROOT, shared with other checkouts): this file prepares them (`scripts/bench.py
--prepare`) and describes their links.

  openssl-native      OpenSSL 4.0.3's `openssl` program (crates.io's openssl-src 400.0.2+4.0.3
                      sources), compiled by clang-22 -O2 -fPIE, no LTO: 57 objects, libapps.a,
                      libssl.a, libcrypto.a (~1,000 members), linked -pie
  openssl-native-g    the same compiled with -O2 -g (DWARF 5: .debug_str, .debug_line_str, ...)
  large-debug         dtld-reapi's debug build (tokio, tonic, prost, rustls; every crate with full
                      DWARF; --gc-sections as rustc links), its final link captured by ld.lld-22
                      with --reproduce (scripts/real-programs/rust-debug.sh) and replayed from the
                      extracted tree (`@response.txt`, --chroot .) by every linker
  clang-static        clang-22 itself, linked statically from Debian's LLVM/clang archives (the big
                      link of the field: 5 objects, 241 archives, a 230 MB PIE with 84k dynamic
                      symbols): ../shared/workloads/clang-static/build.sh writes its link line into
                      $BENCH_ROOT/build/clang-static (link.args, for the clang driver), check.sh
                      runs the linked clangs; it needs Debian's libclang-22-dev, llvm-22-dev and
                      libpolly-22-dev, and is skipped, with the reason, without them
  lua-dtlto-e2e       Lua 5.4 ThinLTO objects linked end to end through DTLTO, no cache: dtld
                      with dtld-distribute against ld.lld-22 with LLVM's llvm/utils/dtlto/local.py
                      (the base), and ld.lld-22 with dtld-distribute as a third column

LLVM's local.py is not part of dtld (Apache-2.0 WITH LLVM-exception, and the project copies no
code): the bench reads it from $DTLD_LLVM_LOCAL_PY, else target/bench/llvm-dtlto-local.py, and
--prepare fetches it from LLVM_LOCAL_PY_URL into that place when it is missing.
"""

import glob
import os
import shutil
import subprocess
import sys
import urllib.request

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
OUT = os.path.join(ROOT, "target", "bench")
# llvm-project's main as of 2026-11 (the file has not changed since DTLTO landed in LLVM 21).
LLVM_LOCAL_PY_URL = "https://raw.githubusercontent.com/llvm/llvm-project/245f4660973134fe62f80713141b3f056f0273f7/llvm/utils/dtlto/local.py"
OPENSSL_VARIANTS = {"openssl-native": "-O2 -fPIE", "openssl-native-g": "-O2 -g -fPIE"}
# The ThinLTO tree of the openssl-thin-link and openssl-relink-* workloads (scripts/bench.py's
# --openssl default): the same sources and configuration, compiled to ThinLTO bitcode.
OPENSSL_THIN = "openssl-thin"
OPENSSL_CFLAGS = dict(OPENSSL_VARIANTS, **{OPENSSL_THIN: "-O2 -flto=thin -fPIE"})
BENCH_ROOT = os.environ.get("BENCH_ROOT", os.path.expanduser("~/.cache/dtld-bench"))
CLANG_STATIC = os.path.join(BENCH_ROOT, "build", "clang-static")
# What build.sh needs of Debian's LLVM dev packages (one library of each).
CLANG_STATIC_LIBS = ("libclangFrontendTool.a", "libLLVMSupport.a", "libPolly.a")


def slug(label):
    """A linker's label as a file name part: "mold 3.0" -> "mold-3.0"."""
    return label.replace(" ", "-").replace("/", "-")


def openssl_tree(name):
    if name == OPENSSL_THIN:
        return os.path.join(ROOT, "target", "openssl", "src")
    return os.path.join(ROOT, "target", "bench", name, "src")


def openssl_sources():
    """The OpenSSL sources of the openssl-src crate in cargo's registry (`cargo fetch` of any
    crate depending on it brings them; `cargo download`-free: the registry cache suffices)."""
    home = os.environ.get("CARGO_HOME", os.path.expanduser("~/.cargo"))
    found = sorted(glob.glob(os.path.join(home, "registry", "src", "*", "openssl-src-400.0.2+4.0.3", "openssl")))
    return found[-1] if found else None


def prepare_openssl(name, log):
    """Configures and builds OpenSSL's libraries and programs for workload `name` (as the ThinLTO
    tree of docs/bench.md, without -flto), unless already built."""
    tree = openssl_tree(name)
    if os.path.isfile(os.path.join(tree, "libcrypto.a")) and os.path.isfile(os.path.join(tree, "apps", "libapps.a")):
        return
    srcs = openssl_sources()
    if not srcs:
        raise RuntimeError("bench: openssl-src-400.0.2+4.0.3 is not in cargo's registry; run `cargo fetch` in a crate that depends on openssl-src = \"=400.0.2\"")
    shutil.rmtree(tree, ignore_errors=True)
    shutil.copytree(srcs, tree, symlinks=True)
    log(f"bench: building OpenSSL for {name} in {os.path.relpath(tree, ROOT)} (several minutes)")
    cfg = ["./Configure", "linux-x86_64", "no-asm", "no-shared", "no-module", "no-legacy", "no-tests", "no-docs",
           "no-comp", "no-zlib", "CC=clang-22", "AR=llvm-ar-22", "RANLIB=llvm-ranlib-22", f"CFLAGS={OPENSSL_CFLAGS[name]}"]
    subprocess.run(cfg, cwd=tree, check=True, stdout=subprocess.DEVNULL)
    jobs = str(os.cpu_count() or 2)
    # One target per make: `make -jN build_libs build_programs` runs both targets' `depend`
    # steps at once, and they race on the .d files.
    for goal in ("build_libs", "build_programs"):
        subprocess.run(["nice", "make", f"-j{jobs}", goal, "LDFLAGS=-fuse-ld=lld"], cwd=tree, check=True, stdout=subprocess.DEVNULL)


def openssl_link(tree):
    """The inputs of the `openssl` program's link, relative to its tree (as OpenSSL's Makefile)."""
    apps = os.path.join(tree, "apps")
    objs = sorted(os.path.join("apps", f) for f in os.listdir(apps) if f.startswith("openssl-bin-") and f.endswith(".o"))
    objs.append("apps/lib/openssl-bin-cmp_mock_srv.o")
    return objs + ["-L.", "apps/libapps.a", "-lssl", "-lcrypto", "-ldl", "-pthread"]


def large_debug_tree():
    """The extracted --reproduce tree of scripts/real-programs/rust-debug.sh (dtld-reapi's debug
    build: tokio, tonic, prost, rustls, every crate with full DWARF)."""
    return os.path.join(ROOT, "target", "real-programs", "rust-debug", "replay", "dtld-reapi")


def prepare_large_debug(dtld, log):
    """Runs scripts/real-programs/rust-debug.sh once (it builds dtld-reapi in debug mode, captures
    its final link with ld.lld-22's --reproduce and extracts the tar), unless its tree exists."""
    if os.path.isfile(os.path.join(large_debug_tree(), "response.txt")):
        return
    log("bench: building dtld-reapi in debug mode for large-debug (scripts/real-programs/rust-debug.sh, several minutes)")
    subprocess.run(["bash", os.path.join(ROOT, "scripts", "real-programs", "rust-debug.sh"), dtld], cwd=ROOT, check=True)


def prepare_local_py(log):
    p = local_py()
    if os.path.isfile(p):
        return
    log(f"bench: fetching LLVM's DTLTO distributor from {LLVM_LOCAL_PY_URL}")
    os.makedirs(os.path.dirname(p), exist_ok=True)
    with urllib.request.urlopen(LLVM_LOCAL_PY_URL, timeout=60) as r, open(p, "wb") as fh:
        fh.write(r.read())


def local_py():
    return os.environ.get("DTLD_LLVM_LOCAL_PY", os.path.join(OUT, "llvm-dtlto-local.py"))


def llvm_libdir():
    try:
        return subprocess.run(["llvm-config-22", "--libdir"], stdout=subprocess.PIPE, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "/usr/lib/llvm-22/lib"


def clang_static_missing(workloads, built=True):
    """Why the clang-static workload cannot run (None when it can): its scripts, Debian's LLVM
    dev packages, or (with `built`) its build in $BENCH_ROOT."""
    d = os.path.join(workloads, "clang-static")
    if not (os.path.isfile(os.path.join(d, "build.sh")) and os.path.isfile(os.path.join(d, "check.sh"))):
        return f"no clang-static/build.sh and check.sh in {os.path.abspath(workloads)} (give --workloads DIR)"
    lib = llvm_libdir()
    for a in CLANG_STATIC_LIBS:
        if not os.path.isfile(os.path.join(lib, a)):
            return (f"Debian's LLVM dev packages are missing (no {os.path.join(lib, a)}): "
                    "apt-get install -y libclang-22-dev llvm-22-dev libpolly-22-dev")
    if built and not os.path.isfile(os.path.join(CLANG_STATIC, "link.args")):
        return f"not built in {CLANG_STATIC} (scripts/bench.py --prepare --only clang-static runs its build.sh)"
    return None


def clang_static_check(workloads):
    return os.path.join(workloads, "clang-static", "check.sh")


def prepare_clang_static(workloads, log):
    """Runs the workload's build.sh (about 30 s) unless its link line is there; says why not when
    it cannot (the run then reports the workload as skipped)."""
    why = clang_static_missing(workloads, built=False)
    if why or os.path.isfile(os.path.join(CLANG_STATIC, "link.args")):
        if why:
            log(f"bench: clang-static cannot be prepared: {why}")
        return
    log(f"bench: building the clang-static workload into {CLANG_STATIC} (its build.sh, about 30 s)")
    subprocess.run(["bash", os.path.join(workloads, "clang-static", "build.sh")], check=True,
                   env={**os.environ, "BENCH_ROOT": BENCH_ROOT, "JOBS": str(os.cpu_count() or 1)})


def prepare(names, dtld, log, workloads):
    """--prepare: builds what the named workloads (all if empty) need and is missing."""
    for name in OPENSSL_VARIANTS:
        if not names or name in names:
            prepare_openssl(name, log)
    if not names or any(n.startswith("openssl-") and n not in OPENSSL_VARIANTS for n in names):
        prepare_openssl(OPENSSL_THIN, log)
    if not names or "large-debug" in names:
        prepare_large_debug(dtld, log)
    if not names or "lua-dtlto-e2e" in names:
        prepare_local_py(log)
    if not names or "clang-static" in names:
        prepare_clang_static(workloads, log)


def native_workloads(linkers, only, link_command, clang, workloads):
    """[(name, {linker: (cmd, cwd, env)}, {linker: output})] of the native real-program links that
    are present, and [(name, why)] of those that cannot run (clang-static)."""
    out, skipped = [], []
    work = os.path.join(OUT, "work-native")
    os.makedirs(work, exist_ok=True)
    for name in OPENSSL_VARIANTS:
        tree = openssl_tree(name)
        if (only and name not in only) or not os.path.isfile(os.path.join(tree, "libcrypto.a")):
            continue
        links, outs = {}, {}
        for lname, l in linkers:
            outs[lname] = os.path.join(work, f"{name}.{slug(lname)}")
            links[lname] = (link_command([clang, f"-fuse-ld={l}", "-pie", *openssl_link(tree), "-o", outs[lname]], tree), tree, None)
        out.append((name, links, outs))
    repro = large_debug_tree()
    if (not only or "large-debug" in only) and os.path.isfile(os.path.join(repro, "response.txt")):
        links, outs = {}, {}
        for lname, l in linkers:
            exe = {"lld": "ld.lld-22", "mold": "mold"}.get(l, l)
            # A later -o wins over the response file's; relative, because mold reads an absolute
            # output path below --chroot too.
            outs[lname] = os.path.join(repro, f"large-debug.{slug(lname)}")
            links[lname] = ([exe, "@response.txt", "-o", f"large-debug.{slug(lname)}"], repro, None)
        out.append(("large-debug", links, outs))
    if not only or "clang-static" in only:
        why = clang_static_missing(workloads)
        if why:
            skipped.append(("clang-static", why))
        else:
            # The clang driver's own link line (link.args: --gc-sections, -rdynamic, the objects,
            # archives and system libraries), PIE as Debian's clang-22 links by default.
            work = os.path.join(OUT, "work-clang-static")
            os.makedirs(work, exist_ok=True)
            links, outs = {}, {}
            for lname, l in linkers:
                outs[lname] = os.path.join(work, f"clang-static.{slug(lname)}")
                cmd = link_command([clang, f"-fuse-ld={l}", f"@{os.path.join(CLANG_STATIC, 'link.args')}", "-o", outs[lname]], work)
                links[lname] = (cmd, work, None)
            out.append(("clang-static", links, outs))
    return out, skipped


def dtlto_e2e_workloads(linkers, dist, only, link_command, clang):
    """lua-dtlto-e2e (see the docstring): [(name, links, outputs)] when Lua's ThinLTO objects and
    LLVM's local.py are present."""
    lua = os.path.join(ROOT, "target", "real-programs", "lua", "obj-pic-lto-thin")
    if (only and "lua-dtlto-e2e" not in only) or not os.path.isdir(lua):
        return []
    if not os.path.isfile(local_py()):
        print(f"bench: lua-dtlto-e2e skipped: no LLVM local.py at {local_py()} (scripts/bench.py --prepare --only lua-dtlto-e2e)", flush=True)
        return []
    objs = [os.path.join(lua, f) for f in sorted(os.listdir(lua)) if f.endswith(".o") and f != "luac.o"]
    work = os.path.join(OUT, "work-dtlto-e2e")
    links, outs = {}, {}
    sides = [(lname, l, [f"-fthinlto-distributor={dist}"]) for lname, l in linkers if lname in ("dtld", "dtld-before")]
    # lld starts the distributor with posix_spawn, without a PATH search: an absolute python3.
    python = shutil.which("python3") or sys.executable
    sides.append(("ld.lld-22", "lld", [f"-fthinlto-distributor={python}", f"-Xthinlto-distributor={local_py()}"]))
    sides.append(("ld.lld-22+dtld-distribute", "lld", [f"-fthinlto-distributor={dist}"]))
    for lname, l, dflags in sides:
        d = os.path.join(work, lname)
        os.makedirs(d, exist_ok=True)
        outs[lname] = os.path.join(d, "lua")
        links[lname] = (link_command([clang, f"-fuse-ld={l}", "-flto=thin", "-pie", *dflags, *objs, "-lm", "-o", outs[lname]], d), d, None)
    return [("lua-dtlto-e2e", links, outs)]
