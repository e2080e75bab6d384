# Why this exists: lld's 2019 tests were written for lld's own lit configuration, which expects
# an LLVM build tree with lld built in it. This configuration runs the same tests with Debian's
# LLVM 22 tools and with `ld.lld`/`lld-link` replaced by the runner's shim (scripts/lld-lit/run.py),
# so that any linker can stand in for lld. It is loaded by the stub lit.cfg.py that run.py writes
# into the extracted test tree; everything it needs comes in as lit parameters:
#
#   suite=elf|coff        which of lld's test directories this run covers
#   src_root=DIR          the extracted test/ directory
#   exec_root=DIR         where the tests' %t files go
#   shim_dir=DIR          holds ld.lld, lld-link, ld64.lld, wasm-ld (the shim)
#   compat_dir=DIR        wrappers for LLVM tools that no longer take 2019's single-dash long
#                         options (run.py makes them)
#   llvm_bin=DIR          LLVM 22's tools (FileCheck, not, llvm-mc, ...)
#
# What differs from lld's own configuration, on purpose:
#   * only the x86 target feature is declared, so tests that require another target are
#     UNSUPPORTED (run.py passes only the x86-64 tests anyway);
#   * `shell` is declared (the tests run under bash, as in 2019);
#   * %T (removed from lit) is one shared scratch directory, which is what the few tests that
#     use it need;
#   * FileCheck gets --allow-unused-prefixes: FileCheck since LLVM 13 rejects a test whose
#     --check-prefixes are not all used, which the 2019 tests did not have to care about.
import os
import platform

import lit.formats
import lit.llvm
import lit.util
from lit.llvm.subst import ToolSubst

params = lit_config.params
suite = params["suite"]
llvm_bin = params["llvm_bin"]
shim_dir = params["shim_dir"]
compat_dir = params["compat_dir"]
exec_root = params["exec_root"]

config.name = "lld-2019-" + suite
config.llvm_tools_dir = llvm_bin
config.target_triple = config.host_triple = "x86_64-unknown-linux-gnu"
lit.llvm.initialize(lit_config, config)
llvm_config = lit.llvm.llvm_config
config.test_format = lit.formats.ShTest(execute_external=True)
config.suffixes = [".ll", ".s", ".test", ".yaml"]
config.excludes = ["Inputs"]
config.test_source_root = params["src_root"]
config.test_exec_root = exec_root

# The linker under test (through the shim) and the LLVM tools. The compat wrappers come first.
llvm_config.with_environment("PATH", [shim_dir, compat_dir, llvm_bin], append_path=True)
llvm_config.use_default_substitutions()
llvm_config.add_tool_substitutions([
    ToolSubst(r"ld\.lld", command=os.path.join(shim_dir, "ld.lld")),
    ToolSubst("lld-link", command=os.path.join(shim_dir, "lld-link")),
    ToolSubst(r"ld64\.lld", command=os.path.join(shim_dir, "ld64.lld")),
    ToolSubst("wasm-ld", command=os.path.join(shim_dir, "wasm-ld")),
])
for name in ("ld.lld", "lld-link"):
    config.available_features.add(name)

tools = ["llc", "llvm-as", "llvm-mc", "llvm-nm", "llvm-objdump", "llvm-pdbutil", "llvm-dwarfdump",
         "llvm-readelf", "llvm-readobj", "obj2yaml", "yaml2obj", "opt", "llvm-dis"]
llvm_config.add_tool_substitutions(tools, [compat_dir, llvm_bin])

scratch = os.path.join(exec_root, "Tdir")
os.makedirs(scratch, exist_ok=True)
config.substitutions.insert(0, ("%T", scratch))

features = config.available_features
features.update(["x86", "shell", "demangler", "llvm-64-bits", "zlib"])
if platform.system() in ("Linux", "FreeBSD", "NetBSD"):
    features.add("system-linker-elf")
if suite == "coff":
    # lld-link 22 from Debian merges manifests itself (it is built with libxml2).
    features.update(["libxml2", "manifest_tool"])
tar = lit.util.which("tar", config.environment["PATH"])
if tar:
    import subprocess
    out = subprocess.run([tar, "--version"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                         env={"LANG": "C"}).stdout.decode(errors="replace")
    if "GNU tar" in out:
        features.add("gnutar")

config.environment["LLD_VERSION"] = "LLD 1.0"
config.environment["LLD_IN_TEST"] = "1"
config.environment["FILECHECK_OPTS"] = "--allow-unused-prefixes"
# The shim's settings (log file, timeout, the linker's environment) reach it through these.
for k, v in os.environ.items():
    if k.startswith("LLDLIT_"):
        config.environment[k] = v
