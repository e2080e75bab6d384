"""Which of lld's tests measure an x86-64 linker.

Why this exists: lld's test/ELF and test/COFF directories test every target lld supports. dtld
links x86-64 only, so the runner measures the tests that target x86-64 (or no target in
particular) and leaves out the rest. lld's tests say their target in several places: a REQUIRES
line, an assembler or compiler triple, a linker emulation (`-m elf_i386`, `-m arm64pe`), a
`/machine:` option, the `Machine:` of an inline YAML object, an IR `target triple`, an
`OUTPUT_FORMAT` in a script, and the machine field of prebuilt objects under `Inputs/`. This
module reads all of them and sorts each test into one class:

  other    names a target that is neither x86-64 nor i386 (ARM, MIPS, PowerPC, ...)
  i386     names 32-bit x86 (i386, i686, iamcu, x32) and nothing else foreign
  x86_64   names x86-64 only
  neutral  names no target (command-line tests, llvm-mc with the host's default triple)

The measured set is x86_64 + neutral (for COFF, also every test under MinGW/: those check the
MinGW driver's translation of the command line, whatever the machine).
"""

import os
import re

ELF_FOREIGN_FEATURES = {
    "arm", "aarch64", "mips", "ppc", "riscv", "amdgpu", "hexagon", "sparc", "msp430", "avr",
    "wasm", "systemz", "loongarch", "bpf", "lanai", "m68k",
}
# Features this setup cannot provide at all (the test is left out, whatever its target).
UNAVAILABLE_FEATURES = {"system-windows", "diasdk", "system-darwin"}

ELF_MACHINES = {
    3: "i386", 6: "i386", 62: "x86_64", 2: "sparc", 8: "mips", 10: "mips", 18: "sparc",
    20: "ppc", 21: "ppc", 40: "arm", 43: "sparc", 83: "avr", 105: "msp430", 164: "hexagon",
    183: "aarch64", 224: "amdgpu", 243: "riscv", 247: "bpf", 258: "loongarch",
}
COFF_MACHINES = {0x8664: "x86_64", 0x14C: "i386", 0x1C0: "arm", 0x1C2: "arm", 0x1C4: "arm",
                 0xAA64: "aarch64", 0xA641: "aarch64", 0xA64E: "aarch64"}

RE_REQUIRES = re.compile(r"\b(?:REQUIRES|UNSUPPORTED)\s*:(.*)")
RE_TRIPLE = re.compile(
    r"(?:^|\s)(?:-{1,2}m?triple|-{1,2}target|-mtriple)(?:=|\s+)[\"']?([A-Za-z0-9_.\-]+)")
RE_IR_TRIPLE = re.compile(r"target\s+triple\s*=\s*\"([^\"]+)\"")
RE_ELF_EMUL = re.compile(r"(?:^|\s)-m\s*((?:elf|armelf|aarch64|i386pe|thumb2pe|arm64pe|msp430|avr)[A-Za-z0-9_]*)")
RE_COFF_MACHINE = re.compile(r"[/-]machine:([A-Za-z0-9]+)", re.I)
RE_YAML_MACHINE = re.compile(r"Machine:\s*((?:EM|IMAGE_FILE_MACHINE)_[A-Z0-9_]+)")
RE_YAML_CLASS = re.compile(r"Class:\s*ELFCLASS(32|64)")
RE_OUTPUT_FORMAT = re.compile(r"OUTPUT_FORMAT\s*\(\s*\"?(elf[A-Za-z0-9_.:\-]+)")
RE_INPUT = re.compile(r"%[pS]/((?:[\w.+\-]+/)*Inputs/[\w.+\-/]+)")


def arch_of_triple(triple):
    t = triple.lower()
    cpu = t.split("-")[0]
    if cpu in ("x86_64", "amd64", "x86-64"):
        return "i386" if t.endswith("gnux32") else "x86_64"
    if re.fullmatch(r"i[3-7]86", cpu) or cpu == "x86":
        return "i386"
    if cpu.startswith(("arm", "thumb")):
        return "arm"
    if cpu in ("aarch64", "arm64", "aarch64_be"):
        return "aarch64"
    if cpu.startswith("mips"):
        return "mips"
    if cpu.startswith(("powerpc", "ppc")):
        return "ppc"
    if cpu.startswith("riscv"):
        return "riscv"
    return cpu


def arch_of_elf_emulation(e):
    e = e.lower()
    if e.startswith(("elf_x86_64", "elf_amd64")):
        return "x86_64"
    if e.startswith(("elf_i386", "elf_iamcu", "elf32_x86_64")):
        return "i386"
    if e in ("i386pep",):
        return "x86_64"
    if e in ("i386pe",):
        return "i386"
    if e in ("thumb2pe", "armpe"):
        return "arm"
    if e in ("arm64pe",):
        return "aarch64"
    return e or "?"


def arch_of_format(f):
    f = f.lower()
    if "x86-64" in f or "x86_64" in f:
        return "x86_64"
    if "i386" in f or "iamcu" in f:
        return "i386"
    return f


def arch_of_yaml_machine(m, elf_class):
    if m in ("EM_X86_64",):
        return "i386" if elf_class == "32" else "x86_64"
    if m in ("EM_386", "EM_IAMCU", "IMAGE_FILE_MACHINE_I386"):
        return "i386"
    if m == "IMAGE_FILE_MACHINE_AMD64":
        return "x86_64"
    if m == "IMAGE_FILE_MACHINE_UNKNOWN":
        return None
    return m.split("_", 1)[1].lower() if "_" in m else m.lower()


def run_lines(text):
    """RUN: lines with their `\\` continuations joined."""
    out, cur = [], ""
    for line in text.splitlines():
        m = re.search(r"RUN:(.*)$", line)
        if not m:
            continue
        part = m.group(1).rstrip()
        if part.endswith("\\"):
            cur += part[:-1] + " "
            continue
        out.append(cur + part)
        cur = ""
    if cur:
        out.append(cur)
    return out


def linker_commands(run):
    """the pieces of a RUN line that invoke ld.lld / lld-link (pipes and && split it)"""
    for seg in re.split(r"\|\||&&|\||;", run):
        words = seg.split()
        while words and words[0] in ("not", "env", "--crash") or (words and "=" in words[0] and not words[0].startswith("-")):
            words = words[1:]
        if words and re.fullmatch(r"(ld\.lld|lld-link|%lld|ld64\.lld)", words[0]):
            yield " ".join(words)


def machines_in_binary(data):
    """architectures of an ELF file, the ELF members of an archive, or a COFF object"""
    found = []
    if data.startswith(b"\x7fELF") or data.startswith(b"!<arch>") or data.startswith(b"!<thin>"):
        for m in re.finditer(rb"\x7fELF", data):
            o = m.start()
            if o + 20 > len(data):
                continue
            little = data[o + 5] == 1
            mach = int.from_bytes(data[o + 18:o + 20], "little" if little else "big")
            arch = ELF_MACHINES.get(mach, "em%d" % mach)
            if arch == "x86_64" and data[o + 4] == 1:
                arch = "i386"  # x32
            found.append(arch)
            if not data.startswith(b"!<"):
                break
    elif len(data) >= 20:
        mach = int.from_bytes(data[0:2], "little")
        if mach in COFF_MACHINES:
            found.append(COFF_MACHINES[mach])
    return found


class Classifier:
    def __init__(self, test_root, suite):
        self.root = test_root
        self.suite = suite

    def evidence(self, rel):
        path = os.path.join(self.root, rel)
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
        ev = []  # (arch or feature, where it was seen)
        unavailable = []
        for line in text.splitlines():
            m = RE_REQUIRES.search(line)
            if not m:
                continue
            required = "REQUIRES" in line.split(":")[0]
            for feat in re.split(r"[\s,&|!()]+", m.group(1)):
                feat = feat.strip().lower()
                if required and feat in ELF_FOREIGN_FEATURES:
                    ev.append((feat, "REQUIRES " + feat))
                if required and feat in UNAVAILABLE_FEATURES:
                    unavailable.append(feat)
        runs = run_lines(text)
        for run in runs:
            for t in RE_TRIPLE.findall(run):
                ev.append((arch_of_triple(t), "triple " + t))
            for cmd in linker_commands(run):
                for e in RE_ELF_EMUL.findall(cmd):
                    ev.append((arch_of_elf_emulation(e), "-m " + e))
                for mach in RE_COFF_MACHINE.findall(cmd):
                    a = mach.lower()
                    a = {"x64": "x86_64", "amd64": "x86_64", "x86": "i386", "i386": "i386",
                         "arm": "arm", "arm64": "aarch64", "arm64ec": "aarch64", "arm64x": "aarch64"}.get(a, a)
                    ev.append((a, "/machine:" + mach))
        for t in RE_IR_TRIPLE.findall(text):
            ev.append((arch_of_triple(t), "IR triple " + t))
        classes = RE_YAML_CLASS.findall(text)
        elf_class = classes[0] if classes and all(c == classes[0] for c in classes) else None
        for m in RE_YAML_MACHINE.findall(text):
            a = arch_of_yaml_machine(m, elf_class)
            if a:
                ev.append((a, "YAML " + m))
        for f in RE_OUTPUT_FORMAT.findall(text):
            a = arch_of_format(f)
            if a:
                ev.append((a, "script " + f))
        seen = set()
        for run in runs:
            for ref in RE_INPUT.findall(run):
                base = os.path.normpath(os.path.join(os.path.dirname(path), ref))
                candidates = [base] if os.path.isfile(base) else []
                if not candidates:
                    # `%p/Inputs/foo` used as a prefix (foo.s, foo.o, ...)
                    d, stem = os.path.split(base)
                    if os.path.isdir(d):
                        candidates = sorted(os.path.join(d, n) for n in os.listdir(d) if n.startswith(stem))[:6]
                for c in candidates:
                    if c in seen or not os.path.isfile(c):
                        continue
                    seen.add(c)
                    with open(c, "rb") as f:
                        data = f.read()
                    name = os.path.basename(c)
                    for a in machines_in_binary(data):
                        ev.append((a, "input %s: %s" % (name, a)))
                    if b"\0" not in data[:4096]:
                        body = data.decode("utf-8", "replace")
                        for t in RE_IR_TRIPLE.findall(body):
                            ev.append((arch_of_triple(t), "input %s: IR triple %s" % (name, t)))
                        cls = RE_YAML_CLASS.findall(body)
                        for m in RE_YAML_MACHINE.findall(body):
                            a = arch_of_yaml_machine(m, cls[0] if cls else None)
                            if a:
                                ev.append((a, "input %s: YAML %s" % (name, m)))
        return ev, unavailable

    def classify(self, rel):
        ev, unavailable = self.evidence(rel)
        archs = {a for a, _ in ev}
        x86 = {"x86", "x86_64", "i386"}
        if unavailable:
            cls = "unavailable"
        elif archs - x86:
            cls = "other"
        elif "i386" in archs:
            cls = "i386"
        elif archs & x86:
            cls = "x86_64"
        else:
            cls = "neutral"
        return cls, sorted({w for _, w in ev} | {"REQUIRES " + u for u in unavailable})


SUITE_DIRS = {"elf": ["ELF"], "coff": ["COFF", "MinGW"]}
SUFFIXES = {"elf": (".s", ".test", ".ll"), "coff": (".s", ".test", ".ll", ".yaml")}


def all_tests(test_root, suite):
    tests = []
    for top in SUITE_DIRS[suite]:
        for d, dirs, files in os.walk(os.path.join(test_root, top)):
            dirs[:] = sorted(x for x in dirs if x != "Inputs")
            for f in sorted(files):
                if f.endswith(SUFFIXES[suite]):
                    tests.append(os.path.relpath(os.path.join(d, f), test_root))
    return sorted(tests)


def select(test_root, suite):
    """[(test, class, evidence list, measured?)] for every test of the suite"""
    c = Classifier(test_root, suite)
    rows = []
    for t in all_tests(test_root, suite):
        cls, ev = c.classify(t)
        measured = cls in ("x86_64", "neutral") or (suite == "coff" and t.startswith("MinGW/") and cls != "unavailable")
        rows.append((t, cls, ev, measured))
    return rows
