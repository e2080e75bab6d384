"""Compare a run of lld's tests with dtld against the ld.lld-22 baseline and say why each test fails.

Why this exists: a pass count alone does not tell an engineer what to do next. For every test
that ld.lld-22 passes and the linker under test does not, this module finds the first point where
the two runs part (the first linker invocation that succeeds under one and fails under the other,
a crash, or the first FileCheck line that does not match), names the mechanism (`kind`) and the
missing lld feature (`package`, from packages.py), and writes the results as plain files that
scripts and people can read. It also compares two results directories (--compare).

Files written into the results directory:
  summary.txt, summary.json   counts, run times, failures per kind and per package
  baseline-pass.txt           tests ld.lld-22 passes (the measured set)
  pass.txt                    tests of the measured set the linker passes
  fail.tsv                    test, kind, package, first difference, reason (one line each)
  workplan.md                 the failures grouped by work package, largest first (Markdown)
  crashes.tsv                 every linker invocation that panicked, died of a signal or timed
                              out, in any selected test (also ones lit counted as passing)
  extra-pass.txt              tests the linker passes and ld.lld-22 does not
"""

import collections
import json
import os
import re

import packages

OK = ("PASS", "XFAIL")

KINDS = collections.OrderedDict([
    ("crash", "the linker panicked, died of a signal or timed out"),
    ("program-name", "passes once `dtld:` is renamed to `ld.lld:`/`lld-link:` in its messages"),
    ("refused", "ld.lld-22 links, dtld stops with an error"),
    ("no-error", "ld.lld-22 reports an error, dtld links"),
    ("wording", "both refuse the link; dtld's message is not the one the test expects"),
    ("tool-error", "an LLVM tool rejects or complains about dtld's output"),
    ("output", "both link; the output (or printed text) differs from what the test expects"),
    ("other", "none of the above (read the test)"),
])


def read_lines(path):
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [x.strip() for x in f if x.strip()]


class Run:
    """one lit run: per-test status, lit output and linker invocations"""

    def __init__(self, out, name):
        self.dir = os.path.join(out, name)
        self.status = {}
        self.output = {}
        p = os.path.join(self.dir, "results.json")
        if os.path.exists(p):
            with open(p) as f:
                for t in json.load(f)["tests"]:
                    n = t["name"].split(" :: ", 1)[1]
                    self.status[n] = t["code"]
                    self.output[n] = t.get("output", "")
        self.links_dir = os.path.join(self.dir, "links")

    def links(self, test):
        """[(kind, rc, ms, args, stderr lines)] in invocation order"""
        p = os.path.join(self.links_dir, test.replace("/", "__") + ".tsv")
        rows = []
        if not os.path.exists(p):
            return rows
        with open(p, errors="replace") as f:
            for line in f:
                f5 = line.rstrip("\n").split("\t")
                if len(f5) < 5:
                    continue
                kind, rc, ms, args, err = f5[:5]
                rows.append((kind, int(rc), int(ms or 0), normalise(args), [x for x in err.split("\x1f") if x.strip()]))
        return rows


RE_RUNDIR = re.compile(r"\S*?/(?:lld22|dtld|dtld-rename)/(exec|shim|links)/")
RE_SRC = re.compile(r"\S*?/src/[0-9a-f]{40}/test/")


def normalise(s):
    """run-specific paths out: %X/ for the exec root, %S/ for lld's test directory"""
    s = RE_RUNDIR.sub(lambda m: "%X/" if m.group(1) == "exec" else "", s)
    return RE_SRC.sub("%S/", s)


def terse(s):
    """a message for a one-line reason: test-local paths reduced to file names"""
    return re.sub(r"%[XS]/(?:[\w.+-]+/)*", "", s)


def short(s, n=170):
    s = " ".join(s.split())
    return s if len(s) <= n else s[: n - 3] + "..."


def first_message(lines, prog_re=r"^(?:dtld|ld\.lld|lld-link|ld\.lld-22|lld-link-22): "):
    """the first error (else warning) line of a linker's stderr, without the program name"""
    for kind in ("error:", "warning:"):
        for x in lines:
            if kind in x:
                return normalise(re.sub(prog_re, "", x))
    return normalise(re.sub(prog_re, "", lines[0])) if lines else ""


def filecheck_failure(out):
    """(check directive, expected pattern, nearest actual line) of the first FileCheck error"""
    m = re.search(r"^\S+:\d+:\d+: error: ([A-Za-z0-9_-]+(?:-[A-Z]+)?): (.*)$\n(.*)$", out, re.M)
    if not m:
        if "FileCheck error: '<stdin>' is empty" in out or "FileCheck error: '-' is empty" in out:
            return ("EMPTY", "", "")
        return None
    directive, what, pattern = m.group(1), m.group(2), m.group(3).strip()
    rest = out[m.end():]
    got = ""
    pm = re.search(r"note: possible intended match here\n(.*)\n", rest)
    if pm:
        got = pm.group(1).strip()
    else:
        sm = re.search(r"note: scanning from here\n(.*)\n", rest)
        if sm:
            got = sm.group(1).strip()
    if "is not on the line after" in what or "is on the same line" in what:
        directive += " (order)"
    elif "excluded string found" in what or "NOT" in directive:
        directive += " (found)"
    return (directive, pattern, got)


RE_TOOL_ERR = re.compile(r"^(?:\S*/)?(llvm-[a-z0-9-]+|obj2yaml|yaml2obj)(?::| \([^)]*\):) error: (.*)$", re.M)


def failing_command(out):
    """the last `# RUN: at line N` command of the lit output (the one that failed)"""
    runs = re.findall(r"^(.*?) # RUN: at line (\d+)$", out, re.M)
    return (runs[-1][0], int(runs[-1][1])) if runs else ("", 0)


def explain(test, ref, dut, ren):
    """(kind, first difference, facts for the package rules) of a test the linker fails"""
    out = dut.output.get(test, "")
    lr, ld = ref.links(test), dut.links(test)
    facts = {"test": test, "msg": "", "lldmsg": "", "check": "", "got": "", "args": "", "tool": ""}
    crashed = [x for x in ld if x[0] not in ("OK", "ERROR")]
    if dut.status.get(test) == "TIMEOUT" or crashed:
        k = crashed[0] if crashed else None
        facts["msg"] = first_message(k[4]) if k else "lit timeout"
        facts["args"] = k[3] if k else ""
        what = "%s (rc %d): %s" % (k[0], k[1], short(" ".join(k[4]), 200)) if k else "lit: test timed out"
        return "crash", what, facts
    if ren is not None and ren.status.get(test) in OK:
        fc = filecheck_failure(out)
        facts["check"] = fc[1] if fc else ""
        return "program-name", "expects `%s`" % short(fc[1] if fc else "ld.lld: ...", 150), facts
    # the first invocation whose outcome differs (the RUN lines are the same, so the n-th
    # invocation of one run is the n-th of the other)
    for i, (a, b) in enumerate(zip(lr, ld)):
        if a[3] != b[3]:
            break  # arguments differ: a RUN line made them from an earlier output; stop aligning
        if a[1] == 0 and b[1] != 0:
            facts.update(msg=first_message(b[4]), args=b[3])
            return "refused", "dtld: %s" % short(facts["msg"], 200), facts
        if a[1] != 0 and b[1] == 0:
            facts.update(lldmsg=first_message(a[4]), args=a[3])
            return "no-error", "ld.lld: %s" % short(facts["lldmsg"], 200), facts
    fc = filecheck_failure(out)
    cmd, line = failing_command(out)
    tool = RE_TOOL_ERR.search(out)
    both_failed = [(a, b) for a, b in zip(lr, ld) if a[1] != 0 and b[1] != 0 and a[3] == b[3]]
    if ld:
        facts["args"] = ld[-1][3]
    if fc:
        facts.update(check=fc[1], got=fc[2])
    if tool and not (fc and fc[0] != "EMPTY" and "shim/" in cmd):
        facts["tool"] = tool.group(2)
        return "tool-error", "%s: %s" % (tool.group(1), short(normalise(tool.group(2)), 190)), facts
    if both_failed and fc and re.search(r"shim/(ld\.lld|lld-link)", cmd):
        a, b = both_failed[-1]
        facts.update(msg=first_message(b[4]), lldmsg=first_message(a[4]), args=b[3])
        if fc[0] == "EMPTY":
            return "wording", "dtld prints nothing the test reads; ld.lld: %s" % short(facts["lldmsg"], 150), facts
        return "wording", "expects `%s`; dtld: %s" % (short(fc[1], 100), short(normalise(facts["msg"]), 120)), facts
    if fc:
        if fc[0] == "EMPTY":
            who = re.sub(r"^\S*/", "", cmd.split("|")[0].strip().split(" ")[0]) if cmd else "?"
            if re.search(r"shim/(ld\.lld|lld-link)", cmd.split("|")[0] if cmd else ""):
                # the linker's own printout (a map, --print-*, --verbose, a warning) is missing
                facts["msg"] = first_message(ld[-1][4]) if ld and ld[-1][4] else ""
                return "output", "line %d: the linker printed nothing (`%s`)%s" % (
                    line, short(normalise(cmd.split("|")[0]), 90),
                    ("; dtld: " + short(facts["msg"], 80)) if facts["msg"] else ""), facts
            return "output", "line %d: `%s` printed nothing" % (line, short(normalise(cmd.split("|")[0]), 110)), facts
        got = (" ~ got `%s`" % short(normalise(fc[2]), 90)) if fc[2] else ""
        return "output", "line %d %s: `%s`%s" % (line, fc[0], short(normalise(fc[1]), 110), got), facts
    last = [x for x in out.splitlines() if x.strip() and x.strip() != "--"]
    return "other", "lit %s; %s" % (dut.status.get(test, "missing"), short(normalise(last[-1]) if last else "", 170)), facts


def crash_rows(dut, tests):
    rows = []
    for t in tests:
        for kind, rc, ms, args, err in dut.links(t):
            if kind not in ("OK", "ERROR"):
                rows.append((t, kind, rc, short(args, 400), short(" | ".join(err), 500)))
        if dut.status.get(t) == "TIMEOUT" and not any(r[0] == t for r in rows):
            rows.append((t, "LIT-TIMEOUT", 0, "", ""))
    return rows


def analyse(out, test_root, tests, meta):
    ref, dut = Run(out, "lld22"), Run(out, "dtld")
    ren = Run(out, "dtld-rename") if os.path.isdir(os.path.join(out, "dtld-rename")) else None
    base = [t for t in tests if ref.status.get(t) in OK]
    passed = [t for t in base if dut.status.get(t) in OK]
    failed = [t for t in base if dut.status.get(t) not in OK]
    extra = [t for t in tests if ref.status.get(t) not in OK and dut.status.get(t) in OK]
    rules = packages.Rules(meta["suite"], test_root)
    rows = []
    for t in failed:
        kind, first, facts = explain(t, ref, dut, ren)
        pkg, reason = rules.package(kind, facts, first)
        rows.append((t, kind, pkg, first, reason))
    crashes = crash_rows(dut, tests)

    def write(name, lines):
        with open(os.path.join(out, name), "w") as f:
            f.writelines(x + "\n" for x in lines)

    write("baseline-pass.txt", base)
    write("pass.txt", passed)
    write("extra-pass.txt", extra)
    write("fail.tsv", ["\t".join(r) for r in rows])
    write("crashes.tsv", ["%s\t%s\trc=%d\t%s\t%s" % r for r in crashes])

    by_kind = collections.Counter(r[1] for r in rows)
    by_pkg = collections.Counter(r[2] for r in rows)
    ref_counts = collections.Counter(ref.status.get(t, "MISSING") for t in tests)
    dut_counts = collections.Counter(dut.status.get(t, "MISSING") for t in tests)
    run_secs = {}
    for name in ("lld22", "dtld", "dtld-rename"):
        p = os.path.join(out, name, "run.json")
        if os.path.exists(p):
            with open(p) as f:
                run_secs[name] = json.load(f)["seconds"]
    summary = dict(meta)
    summary.update({
        "selected": len(tests), "baseline_pass": len(base), "pass": len(passed), "fail": len(failed),
        "extra_pass": len(extra), "crash_invocations": len(crashes),
        "lld22_status": dict(ref_counts), "dtld_status": dict(dut_counts),
        "fail_by_kind": dict(by_kind), "fail_by_package": dict(by_pkg), "run_seconds": run_secs,
    })
    with open(os.path.join(out, "summary.json"), "w") as f:
        json.dump(summary, f, indent=1, sort_keys=True)

    lines = []
    lines.append("lld tests (%s, lld %s): %d selected (x86-64 and machine-neutral)%s"
                 % (meta["suite"], meta["lld_commit"][:12], len(tests),
                    (", filter %s" % short(meta["filter"], 60)) if meta.get("filter") else ""))
    lines.append("ld.lld-22: %s" % ", ".join("%s %d" % kv for kv in sorted(ref_counts.items())))
    lines.append("dtld:      %s" % ", ".join("%s %d" % kv for kv in sorted(dut_counts.items())))
    pct = 100.0 * len(passed) / max(1, len(base))
    lines.append("dtld passes %d of the %d tests ld.lld-22 passes (%.1f%%); fails %d" % (len(passed), len(base), pct, len(failed)))
    lines.append("dtld passes %d tests that ld.lld-22 fails (extra-pass.txt)" % len(extra))
    kinds = collections.Counter(c[1] for c in crashes)
    lines.append("crashes (panic/signal/timeout invocations, any selected test): %s"
                 % (", ".join("%s %d" % kv for kv in sorted(kinds.items())) if kinds else "none"))
    lines.append("run time: %s" % ", ".join("%s %.0fs" % kv for kv in run_secs.items()))
    lines.append("")
    lines.append("failures by kind:")
    for k, desc in KINDS.items():
        if by_kind.get(k):
            lines.append("  %4d  %-13s %s" % (by_kind[k], k, desc))
    lines.append("")
    lines.append("failures by work package (workplan.md):")
    for p, n in by_pkg.most_common():
        lines.append("  %4d  %-22s %s" % (n, p, packages.PACKAGES.get(p, ("?",))[0]))
    text = "\n".join(lines) + "\n"
    write("workplan.md", [workplan(rows, by_pkg)])
    write("summary.txt", [text.rstrip("\n")])
    return text


def workplan(rows, by_pkg):
    """the failures as Markdown, one section per work package, largest first; tests that fail
    for the same stated reason share one line"""
    out = []
    for p, n in by_pkg.most_common():
        title, src, what = packages.PACKAGES.get(p, (p, "-", ""))
        out.append("### %s (%d)\n" % (title, n))
        out.append("%s lld: `%s`.\n" % (what, src) if src != "-" else "%s\n" % what)
        by_reason = collections.OrderedDict()
        for t, kind, pkg, first, reason in sorted(r for r in rows if r[2] == p):
            by_reason.setdefault(terse(reason or first).replace("|", "\\|"), []).append(t)
        for reason, tests in by_reason.items():
            names = ", ".join("`%s`" % (t.split("/", 1)[1] if t.count("/") else t) for t in tests)
            out.append("- %s: %s" % (names, reason))
        out.append("")
    return "\n".join(out)


def load_results(d):
    s = os.path.join(d, "summary.json")
    if not os.path.exists(s):
        raise SystemExit("compare: %s has no summary.json (not a results directory?)" % d)
    with open(s) as f:
        meta = json.load(f)
    fails = {}
    for line in read_lines(os.path.join(d, "fail.tsv")):
        f = line.split("\t")
        fails[f[0]] = f
    return meta, set(read_lines(os.path.join(d, "baseline-pass.txt"))), set(read_lines(os.path.join(d, "pass.txt"))), fails


def compare(old, new):
    """print the tests newly passing and newly failing in `new` compared with `old`"""
    mo, bo, po, fo = load_results(old)
    mn, bn, pn, fn = load_results(new)
    if mo.get("suite") != mn.get("suite"):
        print("compare: %s is a %s run, %s a %s run" % (old, mo.get("suite"), new, mn.get("suite")))
        return 2
    common = bo & bn
    newly_pass = sorted(t for t in common if t in pn and t not in po)
    newly_fail = sorted(t for t in common if t in po and t not in pn)
    print("compare %s (%d/%d) -> %s (%d/%d), %d tests in both baselines"
          % (old, len(po & bo), len(bo), new, len(pn & bn), len(bn), len(common)))
    print("newly passing: %d" % len(newly_pass))
    for t in newly_pass:
        print("  + %s" % t)
    print("newly failing: %d" % len(newly_fail))
    for t in newly_fail:
        f = fn.get(t, [t, "?", "?", "?"])
        print("  - %s\t%s\t%s" % (t, f[1], f[3] if len(f) > 3 else ""))
    changed = sorted(t for t in common if t in fo and t in fn and fo[t][1] != fn[t][1])
    if changed:
        print("still failing, for another kind of reason: %d" % len(changed))
        for t in changed:
            print("  ~ %s\t%s -> %s\t%s" % (t, fo[t][1], fn[t][1], fn[t][3]))
    only = sorted(bn - bo)
    if only:
        print("in the new baseline only (not compared): %d" % len(only))
    return 1 if newly_fail else 0
