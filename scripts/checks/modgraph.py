#!/usr/bin/env python3
"""Why this exists: CONTRIBUTING.md's layout rules (one stage per module, shared data below the
stages that use it, no module importing a later one) only hold if something checks them. This
reads the crate's sources as text (no compiler needed), builds the graph of which module refers
to which (one module per file: `use crate::elf::layout::Layout`, `super::LE`, `child::f()`),
and reports:

* import cycles: every strongly connected component of more than one module, with one cycle
  of it spelled out (`a -> b -> a`);
* files over the size limit (1,500 lines, tests aside) and functions over 150 lines;
* writes to stderr (`eprintln!`, `eprint!`, `std::io::stderr`) outside the modules allowed to
  print (the diagnostics module and the places listed in ALLOWED_STDERR, each with its reason);
* `Box::leak` and `mem::forget` outside `util/keep.rs`, which says what the link keeps until
  the process exits and why.

A path is resolved to the longest prefix that names a module of the crate, so `crate::elf::Sym`
depends on `elf` (its `mod.rs`), wherever `Sym` was first defined: a re-export through a parent
is a dependency on the parent; `pub(in crate::a)` is a visibility, not a dependency. Code under `#[cfg(test)]` is left out: tests may reach anything.

Usage: scripts/checks/modgraph.py [--root src] [--crate-name dtld] [--graph] [--cycles-only | --limits-only] [--scope elf,driver]
Exit status 1 if anything is reported. `--graph` prints every edge (for a picture:
`| sed 's/ -> / /' | tsort`), `--cycles-only` checks only the import cycles, `--limits-only`
everything but them: the size limits and the stderr rule. CI runs it without flags.
"""
import argparse
import os
import re
import sys

FILE_LIMIT = 1500
FN_LIMIT = 150

# Modules that may write to stderr themselves, and why (everything else goes through Diag).
ALLOWED_STDERR = {
    "diag": "the diagnostics module: the one place that prints a link's messages",
}


def strip(text):
    """Source text with comments and string/char literals blanked (newlines kept)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == "r" and re.match(r'r#*"', text[i:i + 10]) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            m = re.match(r'r(#*)"', text[i:])
            close = '"' + m.group(1)
            j = text.find(close, i + len(m.group(0)))
            j = n if j < 0 else j + len(close)
            out.append('""' + re.sub(r"[^\n]", " ", text[i + 2:j]))
            i = j
        elif c == '"' or (c == "b" and text.startswith('b"', i)):
            j = i + (2 if c == "b" else 1)
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            j += 1
            out.append('""' + re.sub(r"[^\n]", " ", text[i + 2:j]))
            i = j
        elif c == "'":
            # A char literal ('a', '\n', '\u{1f}'), not a lifetime ('a).
            m = re.match(r"'(\\u\{[0-9a-fA-F]+\}|\\.|[^\\'])'", text[i:])
            if m:
                out.append(" " * len(m.group(0)))
                i += len(m.group(0))
            else:
                out.append(c)
                i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def drop_cfg_test(code, remove=False):
    """Blanks items under `#[cfg(test)]` (a module or a function with its braces), or with
    `remove` takes them out, lines and all."""
    out = list(code)
    for m in re.finditer(r"#\[cfg\(test\)\]", code):
        j = code.find("{", m.end())
        semi = code.find(";", m.end())
        if j < 0 or (0 <= semi < j):
            continue
        depth, k = 0, j
        while k < len(code):
            if code[k] == "{":
                depth += 1
            elif code[k] == "}":
                depth -= 1
                if depth == 0:
                    break
            k += 1
        for p in range(m.start(), min(k + 1, len(code))):
            if out[p] != "\n" or remove:
                out[p] = "" if remove else " "
    return "".join(out)


def modules(root, crate):
    """{module path tuple: file} for the crate rooted at root/lib.rs (and main.rs's own)."""
    mods = {}

    def walk(path, file):
        mods[path] = file
        text = strip(open(file, encoding="utf-8").read())
        base = os.path.dirname(file)
        stem = os.path.basename(file)
        own_dir = base if stem in ("mod.rs", "lib.rs", "main.rs") else os.path.join(base, stem[:-3])
        for m in re.finditer(r"(?m)^\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)\s*;", text):
            name = m.group(1)
            pre = text[max(0, m.start() - 200):m.start()]
            pm = re.search(r'#\[path\s*=\s*""\s*\]\s*$', pre)
            cands = [os.path.join(own_dir, name + ".rs"), os.path.join(own_dir, name, "mod.rs")]
            if pm:
                continue
            for c in cands:
                if os.path.exists(c):
                    walk(path + (name,), c)
                    break

    walk((crate,), os.path.join(root, "lib.rs"))
    return mods


def expand_use(tree):
    """`a::{b, c::{d, e}}` -> ['a::b', 'a::c::d', 'a::c::e'] (aliases and globs kept as paths)."""
    tree = re.sub(r"\s+as\s+", "@as@", tree)
    tree = re.sub(r"\s+", "", tree)
    depth = 0
    for i, ch in enumerate(tree):
        if ch == "{":
            if depth == 0:
                prefix = tree[:i]
                inner = tree[i + 1:tree.rfind("}")]
                parts, d, last = [], 0, 0
                for k, c in enumerate(inner):
                    if c == "{":
                        d += 1
                    elif c == "}":
                        d -= 1
                    elif c == "," and d == 0:
                        parts.append(inner[last:k])
                        last = k + 1
                parts.append(inner[last:])
                res = []
                for p in parts:
                    if not p:
                        continue
                    for e in expand_use(p):
                        res.append(prefix + e if e != "self" else prefix.rstrip(":"))
                return res
            depth += 1
    return [tree.split("@as@")[0]]


def resolve(segs, here, mods, crate):
    """The module a path (list of segments) lands in, seen from module `here`, or None."""
    if not segs:
        return None
    if segs[0] == "crate":
        cur = (crate,)
        segs = segs[1:]
    elif segs[0] == "super":
        cur = here
        while segs and segs[0] == "super":
            cur = cur[:-1]
            segs = segs[1:]
    elif segs[0] == "self":
        cur = here
        segs = segs[1:]
    elif here + (segs[0],) in mods:
        cur = here
    else:
        return None
    best = cur if cur in mods else None
    for s in segs:
        cur = cur + (s,)
        if cur in mods:
            best = cur
        else:
            break
    return best


def edges_of(path, file, mods, crate):
    stripped = strip(open(file, encoding="utf-8").read())
    # `pub(in crate::a::b)` names where an item is visible, not a module it uses.
    code = re.sub(r"\bpub\(in\s+[^)]*\)", "pub", drop_cfg_test(stripped))
    deps = set()
    for m in re.finditer(r"\buse\s+([^;]+);", code):
        for p in expand_use(m.group(1)):
            t = resolve([s for s in p.split("::") if s and s != "*"], path, mods, crate)
            if t:
                deps.add(t)
            if p.endswith("::*"):
                t = resolve([s for s in p[:-3].split("::") if s], path, mods, crate)
                if t:
                    deps.add(t)
    for m in re.finditer(r"(?<![\w:])((?:crate|super|self|[a-z_][a-z0-9_]*)(?:::[A-Za-z_][A-Za-z0-9_]*)+)", code):
        t = resolve(m.group(1).split("::"), path, mods, crate)
        if t:
            deps.add(t)
    deps.discard(path)
    return deps, code, drop_cfg_test(stripped, remove=True).count("\n") + 1


def sccs(graph):
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            out.append(comp)

    sys.setrecursionlimit(10000)
    for v in list(graph):
        if v not in index:
            visit(v)
    return out


def one_cycle(comp, graph):
    """A shortest cycle through the component's first module (BFS)."""
    comp_set = set(comp)
    start = min(comp)
    prev = {start: None}
    queue = [start]
    while queue:
        v = queue.pop(0)
        for w in sorted(graph.get(v, ())):
            if w not in comp_set:
                continue
            if w == start:
                path = [v]
                while prev[path[-1]] is not None:
                    path.append(prev[path[-1]])
                return list(reversed(path)) + [start]
            if w not in prev:
                prev[w] = v
                queue.append(w)
    return [start]


def long_functions(code):
    """(name, first line, lines) of every fn body over FN_LIMIT lines."""
    res = []
    for m in re.finditer(r"\bfn\s+(\w+)[^{;]*\{", code):
        j = m.end() - 1
        depth, k = 0, j
        while k < len(code):
            if code[k] == "{":
                depth += 1
            elif code[k] == "}":
                depth -= 1
                if depth == 0:
                    break
            k += 1
        first = code.count("\n", 0, m.start()) + 1
        last = code.count("\n", 0, k) + 1
        if last - first + 1 > FN_LIMIT:
            res.append((m.group(1), first, last - first + 1))
    return res


def name(p):
    return "::".join(p[1:]) or p[0]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "src"))
    ap.add_argument("--crate-name", default="dtld")
    ap.add_argument("--graph", action="store_true")
    ap.add_argument("--cycles-only", action="store_true")
    ap.add_argument("--scope", default="", help="comma-separated top-level modules: report only the cycles that reach one (CI holds the ones already free of cycles)")
    ap.add_argument("--limits-only", action="store_true", help="check all but the import cycles: the size limits and the stderr rule (CI)")
    a = ap.parse_args()
    mods = modules(os.path.normpath(a.root), a.crate_name)
    # `#[macro_export]` macros live at the crate root by Rust's rules, but a use of one
    # (`crate::bail!`) depends on the module that defines it, not on the root.
    exported = {}
    for p, f in mods.items():
        for m in re.finditer(r"#\[macro_export\]\s*macro_rules!\s*(\w+)", open(f, encoding="utf-8").read()):
            exported[m.group(1)] = p
    graph, codes, sizes = {}, {}, {}
    for p, f in mods.items():
        graph[p], codes[p], sizes[p] = edges_of(p, f, mods, a.crate_name)
        if (a.crate_name,) in graph[p] and p != (a.crate_name,):
            text = strip(open(f, encoding="utf-8").read())
            root_items = set(re.findall(r"(?<![\w:])crate::([a-z_][a-z0-9_]*)", text))
            root_items = {i for i in root_items if (a.crate_name, i) not in mods}
            if root_items and root_items <= set(exported):
                graph[p].discard((a.crate_name,))
                for i in root_items:
                    if exported[i] != p:
                        graph[p].add(exported[i])
    problems = 0
    if a.graph:
        for p in sorted(graph):
            for q in sorted(graph[p]):
                print("%s -> %s" % (name(p), name(q)))
    scope = [x for x in a.scope.split(",") if x]
    in_scope = lambda comp: not scope or any(name(p).split("::")[0] in scope for p in comp)
    for comp in sorted((c for c in sccs(graph) if len(c) > 1 and not a.limits_only and in_scope(c)), key=len, reverse=True):
        problems += 1
        cyc = one_cycle(comp, graph)
        print("cycle: %d modules: %s" % (len(comp), ", ".join(sorted(name(p) for p in comp))))
        print("  e.g. %s" % " -> ".join(name(p) for p in cyc))
    if not a.cycles_only:
        for p in sorted(mods):
            if sizes[p] > FILE_LIMIT:
                problems += 1
                print("file over %d lines (tests aside): %s: %d" % (FILE_LIMIT, os.path.relpath(mods[p]), sizes[p]))
            for fn, first, n in long_functions(codes[p]):
                problems += 1
                print("function over %d lines: %s:%d: fn %s: %d lines" % (FN_LIMIT, os.path.relpath(mods[p]), first, fn, n))
            if name(p) != "util::keep":
                for m in re.finditer(r"\bBox::leak\b|\bmem::forget\b", codes[p]):
                    problems += 1
                    print("leak outside util/keep.rs (say why there): %s:%d" % (os.path.relpath(mods[p]), codes[p].count("\n", 0, m.start()) + 1))
            if name(p) not in ALLOWED_STDERR:
                for m in re.finditer(r"\beprintln!|\beprint!|\bstd::io::stderr\b|\bio::stderr\(\)", codes[p]):
                    problems += 1
                    print("stderr write outside the diagnostics module: %s:%d" % (os.path.relpath(mods[p]), codes[p].count("\n", 0, m.start()) + 1))
    print("modgraph: %d modules, %d edges, %d problems" % (len(mods), sum(len(v) for v in graph.values()), problems))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
