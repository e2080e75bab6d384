"""The chart of a benchmark run: an SVG written next to scripts/bench.py's Markdown table.

Why this exists: a table of ratios is hard to read at a glance; a chart shows at once where dtld
is faster or leaner than the reference linker and where it is not. It draws, per workload, each
linker's ratio to the reference (ld.lld-22; GNU ld for the GCC LTO workloads): wall time on the
left, then CPU time (when the run measured it) and peak RSS, with the reference at 1. It writes
the SVG itself (the Python standard library only, so the benchmark needs no plotting package),
with fixed formatting so that a recorded run committed to docs/ diffs cleanly.

Input rows are bench.py's `Row`s (below); a linker that failed a workload has no bar.
"""

import collections
from xml.sax.saxutils import escape

# One row of a run: wall and CPU seconds, peak RSS in KiB, the one-process run's wall seconds;
# ref is the reference linker's name (or "ld.lld-22's pe-thinlto-dll" and the like); t, c, m the
# wall, CPU and RSS ratios to it, tf and cf the wall and CPU ratios to the fastest peer (mold 3.0
# or wild); any of them None when not measured. fails: why the linker failed the workload (its
# link or the check of its output), else None.
Row = collections.namedtuple("Row", "workload linker wall cpu rss wall1 ref t c m tf cf fails")

# By the longest matching prefix of the linker's label ("mold 3.0", "wild 0.10", ...).
COLORS = {"dtld": "#1f6fb4", "dtld-before": "#8fb8dc", "mold": "#e8871e", "mold 3": "#b0451a",
          "wild": "#2e9d4a"}
OTHER = "#8c8c8c"
LEFT = 250          # workload labels
PANEL = 300         # each panel's plotting width
GAP = 60            # between the panels
BAR = 13
BAR_GAP = 3
GROUP_GAP = 12
TOP = 92            # title, legend, panel headings


def color(linker):
    keys = [k for k in COLORS if linker.startswith(k)]
    return COLORS[max(keys, key=len)] if keys else OTHER


def ratio(text):
    """'0.77x' -> 0.77; '-' (no reference) -> None."""
    try:
        return float(text.rstrip("x").strip("()"))
    except ValueError:
        return None


def _scale_max(values):
    """The axis end: at least 2 (so 1 sits mid-panel), rounded up to a half."""
    top = max([2.0] + [v for v in values if v is not None])
    return (int(top * 2) + 1) / 2 if top * 2 != int(top * 2) else top


def _text(x, y, s, size=12, anchor="start", fill="#222", weight="normal"):
    bold = ' font-weight="bold"' if weight == "bold" else ""
    return f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" text-anchor="{anchor}" fill="{fill}"{bold}>{escape(s)}</text>'


def write_svg(path, rows, title, subtitle):
    """Writes the chart of `rows` to `path`; returns False (and writes nothing) when no row has a
    ratio to draw."""
    groups = {}  # workload -> (reference, [(linker, wall ratio, CPU ratio, RSS ratio)])
    for r in rows:
        group = groups.setdefault(r.workload, (r.ref, []))
        if r.linker == r.ref or r.t is None:
            continue  # the reference is the line at 1; a failed link has no bar
        group[1].append((r.linker, r.t, r.c, r.m))
    groups = {k: v for k, v in groups.items() if v[1]}
    if not groups:
        return False
    linkers = []
    for _, bars in groups.values():
        for linker, *_ in bars:
            if linker not in linkers:
                linkers.append(linker)
    # (index into a bar's ratios, heading); the CPU panel only when the run measured CPU time.
    panels = [(1, "wall time / reference"), (2, "CPU time / reference"), (3, "peak RSS / reference")]
    if all(bar[2] is None for _, bars in groups.values() for bar in bars):
        panels = [(1, "link time / reference"), (3, "peak RSS / reference")]  # an older table
    panels = [(LEFT + i * (PANEL + GAP), _scale_max(bar[k] for _, bars in groups.values() for bar in bars), heading, k)
              for i, (k, heading) in enumerate(panels)]

    height = TOP + sum(len(b) * (BAR + BAR_GAP) + GROUP_GAP for _, b in groups.values()) + 22
    width = LEFT + len(panels) * PANEL + (len(panels) - 1) * GAP + 70
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
           f'font-family="DejaVu Sans, Helvetica, Arial, sans-serif">',
           f'<rect width="{width}" height="{height}" fill="#ffffff"/>',
           _text(12, 22, title, 15, weight="bold"),
           _text(12, 40, subtitle, 11, fill="#555")]
    # Legend.
    x = 12
    for linker in linkers:
        out.append(f'<rect x="{x}" y="50" width="12" height="12" fill="{color(linker)}"/>')
        out.append(_text(x + 17, 60, linker, 12))
        x += 30 + 8 * len(linker)
    out.append(_text(x + 10, 60, "ratio to the reference linker (dashed line = 1); lower is better", 11, fill="#555"))

    # Banded rows first, so the grid and the bars are drawn over them.
    y = TOP
    for i, (_, bars) in enumerate(groups.values()):
        block = len(bars) * (BAR + BAR_GAP) - BAR_GAP
        if i % 2 == 0:
            out.append(f'<rect x="4" y="{y - 4}" width="{width - 8}" height="{block + 8}" fill="#f3f5f8"/>')
        y += block + GROUP_GAP
    plot_top, plot_bottom = TOP, y - GROUP_GAP + 6
    for x0, vmax, heading, _ in panels:
        out.append(_text(x0 + PANEL / 2, TOP - 10, heading, 12, "middle", weight="bold"))
        step = 0.5 if vmax <= 4 else 1.0
        v = 0.0
        while v <= vmax + 1e-9:
            gx = x0 + PANEL * v / vmax
            dashed = abs(v - 1.0) < 1e-9
            out.append(f'<line x1="{gx:.1f}" y1="{plot_top - 4}" x2="{gx:.1f}" y2="{plot_bottom}" '
                       + ('stroke="#333" stroke-width="1.2" stroke-dasharray="4 3"/>' if dashed else 'stroke="#e3e3e3" stroke-width="1"/>'))
            out.append(_text(gx, plot_bottom + 14, f"{v:g}", 10, "middle", fill="#555"))
            v += step

    y = TOP
    for name, (ref, bars) in groups.items():
        block = len(bars) * (BAR + BAR_GAP) - BAR_GAP
        out.append(_text(LEFT - 12, y + block / 2 - 1, name, 12, "end"))
        out.append(_text(LEFT - 12, y + block / 2 + 11, f"vs {ref}", 10, "end", fill="#777"))
        for bar in bars:
            linker = bar[0]
            for x0, vmax, _, k in panels:
                value = bar[k]
                if value is None:
                    continue
                w = PANEL * min(value, vmax) / vmax
                out.append(f'<rect x="{x0}" y="{y}" width="{w:.1f}" height="{BAR}" fill="{color(linker)}"><title>{escape(f"{name}, {linker}: {value:.2f}x")}</title></rect>')
                label = _text(x0 + w + 4, y + BAR - 2, f"{value:.2f}×", 10, fill="#333")
                # A white halo keeps the value readable where it crosses the line at 1.
                out.append(label.replace("<text ", '<text stroke="#fff" stroke-width="3" paint-order="stroke" ', 1))
            y += BAR + BAR_GAP
        y += GROUP_GAP - BAR_GAP
    out.append("</svg>")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("\n".join(out) + "\n")
    return True


def rows_from_markdown(text):
    """bench.py's rows back from a table it wrote (in target/bench/results.md or copied into
    docs/): today's (`| workload | linker | wall (ms) | CPU (ms) | peak RSS (MiB) | ... | wall / ref
    | CPU / ref | RSS / ref | ...`) or the older one without CPU time (`| workload | linker | time
    (ms) | peak RSS (MiB) | time / ref | RSS / ref |`). The reference is bench.py's: GNU ld for the
    gcc-lto workloads, ld.lld-22 for the others."""
    rows, heading = [], None
    names = {"time (ms)": "wall", "wall (ms)": "wall", "cpu (ms)": "cpu", "peak rss (mib)": "rss",
             "1-process wall (ms)": "wall1", "time / ref": "t", "wall / ref": "t", "cpu / ref": "c",
             "rss / ref": "m", "wall / fastest peer": "tf", "cpu / lowest peer": "cf",
             "time / gnu ld": "t", "rss / gnu ld": "m"}
    old = {"wall": 2, "rss": 3, "t": 4, "m": 5}  # a bare row of the older table, no heading
    for line in text.splitlines():
        if not line.strip().startswith("|"):
            heading = None
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if cells[:2] == ["workload", "linker"]:
            heading = {names[c.lower()]: i for i, c in enumerate(cells) if c.lower() in names}
            continue
        cols = heading
        if cols is None and len(cells) == 6 and cells[4].rstrip(")").endswith("x"):
            cols = old
        if cols is None or "wall" not in cols or len(cells) <= max(cols.values()):
            continue
        try:
            wall = float(cells[cols["wall"]]) / 1000
        except ValueError:
            continue  # the separator line, or a linker that failed the workload

        def num(key, scale):
            v = cells[cols[key]] if key in cols else "-"
            return float(v) * scale if v not in ("", "-") else None

        def rat(key):
            return ratio(cells[cols[key]]) if key in cols else None
        name = cells[0]
        ref = "ld.bfd" if "gcc-lto" in name else "ld.lld-22"
        rows.append(Row(name, cells[1], wall, num("cpu", 0.001), num("rss", 1024.0), num("wall1", 0.001), ref,
                        rat("t"), rat("c"), rat("m"), rat("tf"), rat("cf"), None))
    return rows


if __name__ == "__main__":
    # Redraws the chart of a recorded table: bench_chart.py TABLE.md OUT.svg "subtitle"
    import sys
    if len(sys.argv) != 4:
        sys.exit("usage: bench_chart.py TABLE.md OUT.svg SUBTITLE")
    with open(sys.argv[1], encoding="utf-8") as fh:
        table = rows_from_markdown(fh.read())
    title = "dtld: link time and peak memory relative to the reference linker"
    if any(r.c is not None for r in table):
        title = "dtld: wall time, CPU time and peak memory relative to the reference linker"
    if not write_svg(sys.argv[2], table, title, sys.argv[3]):
        sys.exit(f"bench_chart: no rows with ratios in {sys.argv[1]}")
    print(f"bench_chart: {len(table)} rows drawn into {sys.argv[2]}")
