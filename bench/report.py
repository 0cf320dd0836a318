"""BENCHMARKS.md and bench/latency.svg from one run's figures (bench/run.py), plus the machine
description and the targets of the issue, checked."""

from __future__ import annotations

import json
import os
import platform
import subprocess
import time
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parents[1]
NOTES = ROOT / "bench" / "NOTES.md"
MB_LIMIT = 200

# Whole-process operations, in the order of the tables and the plot's legend.
OPERATIONS = ["capture failure", "capture success (pair)", "context --hook", "recall docker", "rg -i docker",
              "stats", "graph", "promote", "prune", "export", "import", "promote (first run)", "prune (first run)"]
COLOURS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#7f7f7f", "#9467bd", "#8c564b", "#e377c2",
           "#bcbd22", "#17becf", "#393b79", "#e7969c", "#dbdb8d"]


# --------------------------------------------------------------------------------------------
# Machine
# --------------------------------------------------------------------------------------------
def machine_info(python: str, rg: str | None) -> dict:
    info = {
        "cpu": _cpu_model(),
        "cores": os.cpu_count(),
        "memory": _meminfo(),
        "os": f"{_os_release()} (kernel {platform.release()})",
        "python": _run([python, "-c", "import sys, platform; print(platform.python_implementation(), sys.version.split()[0])"]),
        "disk": _disk(),
        "ripgrep": (_run([rg, "--version"]).splitlines() or ["?"])[0] if rg else "not installed",
        "virtualised": _hypervisor(),
        "load": _load(),
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
    }
    return info


def _run(argv: list[str]) -> str:
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=30, check=False).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "?"


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _meminfo() -> str:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                return f"{int(line.split()[1]) / 1024 / 1024:.0f} GiB"
    except OSError:
        pass
    return "?"


def _os_release() -> str:
    try:
        for line in Path("/etc/os-release").read_text().splitlines():
            if line.startswith("PRETTY_NAME="):
                return line.split("=", 1)[1].strip('"')
    except OSError:
        pass
    return platform.platform()


def _disk() -> str:
    out = _run(["df", "-T", "-h", tempfile_dir()]).splitlines()
    if len(out) < 2:
        return "?"
    parts = out[1].split()
    return f"{parts[1]} on {parts[0]}, {parts[2]} ({parts[4]} free)" if len(parts) >= 5 else out[1]


def tempfile_dir() -> str:
    import tempfile

    return tempfile.gettempdir()


def _load() -> str:
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "?"


def _hypervisor() -> str:
    for line in _run(["lscpu"]).splitlines():
        if line.startswith("Hypervisor vendor"):
            return line.split(":", 1)[1].strip()
    return "no"


# --------------------------------------------------------------------------------------------
# Export file for `learn import` when `learn export` is not available
# --------------------------------------------------------------------------------------------
def write_export(home: Path, dest: Path) -> None:
    """The portable export format of SPEC §5, written straight from the home's files."""
    def load(path: Path) -> list:
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return []
        if path.suffix == ".json":
            return orjson.loads(data).get("learnings", [])
        return [orjson.loads(line) for line in data.splitlines() if line.strip()]

    doc = {"format": "self-learning-agent", "version": 1, "exported": time.strftime("%Y-%m-%dT%H:%M:%SZ"),
           "global": [], "projects": {}, "archived": []}
    for name in ("errors.jsonl", "patterns.jsonl", "preferences.json"):
        doc["global"].extend(load(home / "global" / name))
    doc["archived"].extend(load(home / "global" / "archive.jsonl"))
    for folder in sorted((home / "projects").iterdir()):
        meta = orjson.loads((folder / "project.json").read_bytes())
        doc["projects"][folder.name] = dict(meta, learnings=load(folder / "learnings.jsonl"))
        doc["archived"].extend(load(folder / "archive.jsonl"))
    dest.write_bytes(orjson.dumps(doc))


# --------------------------------------------------------------------------------------------
# Targets
# --------------------------------------------------------------------------------------------
def _find(results: list, name: str, size: int) -> dict | None:
    for r in results:
        if r["name"] == name and r["size"] == size:
            return r
    return None


def _ms(value) -> str:
    if value is None:
        return "—"
    return f"{value:,.0f} ms" if value >= 100 else f"{value:.1f} ms"


def check_targets(data: dict) -> list[dict]:
    """One row per target of the issue: what was measured, and met / MISSED / not measured."""
    results = data["results"]
    big, small = max(data["sizes"]), min(data["sizes"])
    rows = []

    def row(target: str, measured: str, met: bool | None, why: str = "", shown: bool = False) -> None:
        verdict = "shown" if shown else "not measured" if met is None else "met" if met else "MISSED"
        rows.append({"target": target, "measured": measured, "verdict": verdict, "why": why})

    for name in ("capture failure", "capture success (pair)"):
        r, r0 = _find(results, name, big), _find(results, name, small)
        if r and "median_ms" in r:
            growth = r["median_ms"] / r0["median_ms"] if r0 and r0.get("median_ms") else None
            ok = r["ratio"] is not None and r["ratio"] <= 4 and (growth is None or growth <= 1.2)
            row(f"`learn {name}`, whole process: ≤ 4× bare interpreter; ≤ 1.2× its {small:,} figure",
                f"{_ms(r['median_ms'])} = {r['ratio']:.2f}× bare ({_ms(r['bare_ms'])}); "
                f"{growth:.2f}× its {small:,} figure" if growth else f"{_ms(r['median_ms'])}", ok)
        else:
            row(f"`learn {name}`", (r or {}).get("error", "no figure"), None)

    r = _find(results, "context --hook", big)
    row("`learn context --hook`, whole process: median ≤ 100 ms",
        _ms(r["median_ms"]) if r and "median_ms" in r else (r or {}).get("error", "no figure"),
        (r["median_ms"] <= 100) if r and "median_ms" in r else None)

    inproc = (data.get("inproc") or {}).get(big) or (data.get("inproc") or {}).get(str(big)) or {}
    rec = inproc.get("recall") or {}
    row(f"`learn recall {data['topic']}` in process: ≤ 50 ms",
        _ms(rec["median_ms"]) if "median_ms" in rec else rec.get("error", "no figure"),
        (rec["median_ms"] <= 50) if "median_ms" in rec else None)
    r, rg = _find(results, f"recall {data['topic']}", big), _find(results, f"rg -i {data['topic']}", big)
    if r and "median_ms" in r and rg and "median_ms" in rg:
        ratio = r["median_ms"] / rg["median_ms"]
        row(f"`learn recall {data['topic']}` whole process: ≤ 2× `rg` over the same files",
            f"{_ms(r['median_ms'])} vs rg {_ms(rg['median_ms'])} = {ratio:.2f}×", ratio <= 2)
    else:
        row(f"`learn recall {data['topic']}` whole process: ≤ 2× `rg`",
            (r or {}).get("error") or (rg or {}).get("error") or "no figure", None)

    for name, limit in (("promote", 3000), ("prune", 3000), ("import", 5000), ("stats", 1000), ("graph", 1000)):
        r = _find(results, name, big)
        label = f"`learn {name}`" + {"import": " of a full export into an empty home",
                                     "promote": " (daily: the home was promoted and pruned yesterday)",
                                     "prune": " (daily)"}.get(name, "")
        row(f"{label}: ≤ {limit / 1000:g} s",
            _ms(r["median_ms"]) if r and "median_ms" in r else (r or {}).get("error", "no figure"),
            (r["median_ms"] <= limit) if r and "median_ms" in r else None)
    for name in ("promote", "prune"):
        r = _find(results, f"{name} (first run)", big)
        if r and "median_ms" in r:
            row(f"`learn {name}`, first run over a home no promotion has seen (once; no target)",
                f"{_ms(r['median_ms'])}, {r['rss_mb']:.0f} MB", None, shown=True)

    peaks = [(r["rss_mb"], r["name"], r["size"]) for r in results
             if "rss_mb" in r and not r["name"].startswith("rg ") and "first run" not in r["name"]]
    if peaks:
        worst = max(peaks)
        row(f"peak memory of any command: ≤ {MB_LIMIT} MB",
            f"{worst[0]:.0f} MB (`{worst[1]}` at {worst[2]:,})", worst[0] <= MB_LIMIT)
    else:
        row(f"peak memory of any command: ≤ {MB_LIMIT} MB", "no figure", None)
    for r in rows:
        r["at"] = big
    return rows


# --------------------------------------------------------------------------------------------
# The report
# --------------------------------------------------------------------------------------------
def write(data: dict, out: Path, svg: Path) -> None:
    svg.parent.mkdir(parents=True, exist_ok=True)
    svg.write_text(plot_svg(data))
    out.write_text(markdown(data, os.path.relpath(svg, out.parent)))


def markdown(data: dict, svg_rel: str) -> str:
    sizes = data["sizes"]
    smoke = " --smoke" if data["smoke"] else ""
    parts = [
        "# Benchmarks\n",
        (f"Written by `make bench` (`bench/run.py{smoke}`) on {data['machine']['date']}, in "
         f"{data['seconds'] / 60:.1f} minutes. Do not edit by hand: run `make bench` again (the "
         "analysis at the end comes from `bench/NOTES.md`).\n"),
        _machine_section(data["machine"]),
        _targets_section(data),
        "## Latency against store size\n",
        f"![median latency of each command against the number of learnings]({svg_rel})\n",
        _medians_section(data, sizes),
        _detail_section(data, sizes),
        _inproc_section(data, sizes),
        _homes_section(data, sizes),
        "## Method\n",
        METHOD.strip() + "\n",
    ]
    if NOTES.exists():
        parts += ["## Analysis\n", NOTES.read_text().strip() + "\n"]
    return "\n".join(parts)


def _table(header: list[str], align: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(align) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def _machine_section(m: dict) -> str:
    cpu = f"{m['cpu']} ({m['cores']} cores" + (f", virtualised: {m['virtualised']})" if m["virtualised"] != "no" else ")")
    rows = [["CPU", cpu], ["memory", m["memory"]], ["OS", m["os"]],
            ["Python", f"{m['python']} (the interpreter of the `learn` entry point)"],
            ["disk", m["disk"]], ["ripgrep", m["ripgrep"]],
            ["load average (1, 5, 15 min)", f"{m.get('load_before', '?')} before the run, {m.get('load', '?')} after"],
            ["runner priority", m.get("priority", "normal")]]
    return "## Machine\n\n" + _table(["", ""], ["---", "---"], rows)


def _targets_section(data: dict) -> str:
    marks = {"met": "✅ met", "MISSED": "❌ **missed**", "not measured": "⚪ not measured", "shown": "— shown"}
    rows = [[t["target"], t["measured"], marks[t["verdict"]]] for t in check_targets(data)]
    title = f"## Targets (at {max(data['sizes']):,} learnings)\n\n"
    return title + _table(["target", "measured", "verdict"], ["---", "---", "---"], rows)


def _medians_section(data: dict, sizes: list[int]) -> str:
    rows = [[_display(name)] + [_cell(_find(data["results"], name, s)) for s in sizes]
            for name in _ordered_names(data)]
    rows.append(["bare interpreter (`python -c pass`)"] + [_ms(_bare_median(data, s)) for s in sizes])
    title = f"### Whole processes: median wall time of {data['runs']} runs after a warm-up\n\n"
    return title + _table(["operation"] + [f"{s:,}" for s in sizes], ["---"] + ["---:"] * len(sizes), rows)


def _detail_section(data: dict, sizes: list[int]) -> str:
    rows = []
    for name in _ordered_names(data):
        for s in sizes:
            r = _find(data["results"], name, s)
            if not r:
                continue
            if "median_ms" not in r:
                rows.append([_display(name), f"{s:,}", r.get("error", "")[:160]] + [""] * 7)
                continue
            ratio = f"{r['ratio']:.2f}×" if r.get("ratio") else ""
            runs = str(r["runs"]) + (f" ({r['note']})" if r.get("note") else "")
            rows.append([_display(name), f"{s:,}", _ms(r["median_ms"]), _ms(r["min_ms"]), _ms(r["max_ms"]),
                         _ms(r.get("cpu_ms")), _ms(r.get("bare_ms")), ratio, f"{r['rss_mb']:.0f} MB", runs])
    intro = ("### Whole processes: detail\n\n"
             "Each run of an operation is followed by a run of the bare interpreter; *× bare* divides the "
             "operation's median by the median of those paired runs. *CPU* is the median user + system "
             "time of the process (unlike wall time, barely moved by other load on the machine). "
             "*Peak RSS* is the largest `ru_maxrss` of the process itself over its runs.\n\n")
    return intro + _table(["operation", "learnings", "median", "min", "max", "CPU", "bare", "× bare", "peak RSS",
                           "runs"], ["---"] + ["---:"] * 9, rows)


def _inproc_of(data: dict, size: int) -> dict:
    inproc = data.get("inproc") or {}
    return inproc.get(size) or inproc.get(str(size)) or {}


def _inproc_section(data: dict, sizes: list[int]) -> str:
    ops: list[str] = []
    for s in sizes:
        ops += [op for op in _inproc_of(data, s) if op not in ops and not op.startswith("_")]
    rows = []
    for op in ops:
        cells = []
        for s in sizes:
            st = _inproc_of(data, s).get(op) or {}
            cells.append(_ms(st["median_ms"]) if "median_ms" in st else (st.get("error") or "—")[:80])
        label = next((_inproc_of(data, s)[op]["call"] for s in reversed(sizes)
                      if "call" in _inproc_of(data, s).get(op, {})), op)
        rows.append([f"`{label}`"] + cells)
    intro = ("### In process\n\n"
             "Median of repeated calls inside one Python process that has already opened the store "
             "(`bench/inproc.py`), over the same homes.\n\n")
    return intro + _table(["operation"] + [f"{s:,}" for s in sizes], ["---"] + ["---:"] * len(sizes), rows)


def _homes_section(data: dict, sizes: list[int]) -> str:
    rows = []
    for s in sizes:
        h = data["homes"].get(s) or data["homes"].get(str(s))
        if not h:
            continue
        bp = h["bench_project"]
        rows.append([f"{h['learnings']:,}", f"{h['projects']:,}", f"{h['live']:,}", f"{h['archived']:,}",
                     f"{h['global_records']:,}", f"{h['docker_records']:,}", f"{h['shared_keys']:,}",
                     f"{bp['name']} ({bp['learnings']:,} learnings)", str(h["sessions"]),
                     f"{h['bytes_jsonl'] / 1e6:.1f} MB", f"{h['bytes_index'] / 1e6:.1f} MB",
                     f"{h['seconds_write']:.1f} s", f"{h['seconds_index']:.1f} s", _maintenance(h)])
    intro = ("## The homes\n\n"
             f"Generated by `bench/generate.py` (seed {data['seed']}), written straight in the store format "
             "and indexed once before any measurement. The benchmark project (working directory of every "
             "command, `cwd` of every hook payload) is the busiest one.\n\n")
    header = ["learnings", "projects", "live", "archived", "global", "with `docker`", "keys in ≥ 2 projects",
              "benchmark project", "sessions", "JSONL", "index", "write", "index build", "yesterday's maintenance"]
    return intro + _table(header, ["---:"] * 7 + ["---"] + ["---:"] * 5 + ["---"], rows)


def _maintenance(home: dict) -> str:
    m = home.get("maintenance") or {}
    if not m:
        return "—"
    return (f"promote {m['seconds_promote']:.1f} s + prune {m['seconds_prune']:.1f} s: {m['promoted']:,} promoted, "
            f"{m['archived']:,} archived, {m['conflicts']:,} conflicts, {m['low_since_changed']:,} scores crossing 0.3")


METHOD = """
- **Whole processes** run the venv's `learn` entry point exactly as a hook or a shell would
  (`SELF_LEARNING_HOME` set, stdout to a file, the benchmark project's folder as the working
  directory). One warm-up run (bytecode and page caches), then the timed runs; wall time is
  spawn to reap. Peak memory is the process's own `ru_maxrss` from `os.wait4`.
- **The bare interpreter** is `python -c pass` with the interpreter of the `learn` entry point,
  run right after every timed run of every operation, so each ratio compares figures taken at
  the same moment.
- **Capture**: every run sends a fresh payload (a new `tool_use_id`). *failure* is a
  `PostToolUseFailure` for `pytest -q tests/test_api.py` with `Exit code 127` / `bash: pytest:
  command not found`, a failure the home already knows (other projects and global), so the run
  looks the fix up and answers with it. *success (pair)* first sends that failure in a new session
  (not timed), then times the `PostToolUse` of `python -m pytest -q tests/test_api.py`, which
  completes the pair and writes the learning. Captures append to the home (a few lines per run).
- **The homes** are generated as a year of learnings that no promotion has seen. A real home
  is promoted at every session end and pruned daily, so each is first measured as it comes
  (**promote / prune, first run**: once each, on a copy: tens of thousands of scores to start
  or stop, conflicts to flag, records to archive) and then maintained: `learn promote` and
  `learn prune` run over it in process with the clock set to the day before. Every other figure
  is taken on the maintained home, a day later.
- **promote** and **prune** (daily) run on a fresh copy of the maintained home each time (the
  copy's index is made as fresh as the original's: `cp -a` keeps sizes and mtimes, the runner
  records the new inodes), so every run has the same work: a day of score decay, plus the
  captures the benchmark itself wrote. **import** reads the `learn export` of the same home into
  a new, empty home each run. The copies and homes of all runs are deleted after the last
  one: deleting 300 MB between runs (on a disk mounted with `discard`) slowed the next run.
- **ripgrep** searches the same JSONL files as `learn recall` (projects' learnings and the global
  files, archives excluded), case-insensitive, printing the matching lines to a file.
"""


def _ordered_names(data: dict) -> list[str]:
    present = []
    for r in data["results"]:
        if r["name"] not in present:
            present.append(r["name"])
    ordered = [n for n in OPERATIONS if n in present]
    return ordered + [n for n in present if n not in ordered]


DISPLAY = {
    "capture failure": "`learn capture` (failure payload)",
    "capture success (pair)": "`learn capture` (success completing a pair)",
    "promote": "`learn promote` (daily, on a copy)",
    "prune": "`learn prune` (daily, on a copy)",
    "promote (first run)": "`learn promote`, first run (on a copy, once)",
    "prune (first run)": "`learn prune`, first run (on a copy, once)",
    "import": "`learn import` (full export, empty home)",
    "rg -i docker": "`rg -i docker` (comparator)",
}


def _display(name: str) -> str:
    return DISPLAY.get(name, f"`learn {name}`")


def _cell(r: dict | None) -> str:
    if not r:
        return "—"
    if "median_ms" not in r:
        return "n/a"
    return _ms(r["median_ms"])


def _bare_median(data: dict, size: int) -> float | None:
    values = [r["bare_ms"] for r in data["results"] if r["size"] == size and r.get("bare_ms")]
    if not values:
        return None
    values.sort()
    return values[len(values) // 2]


# --------------------------------------------------------------------------------------------
# The plot: log-log, one line per operation, plain SVG
# --------------------------------------------------------------------------------------------
def plot_svg(data: dict) -> str:
    import math

    sizes = sorted(data["sizes"])
    names = [n for n in _ordered_names(data) if any("median_ms" in r for r in data["results"] if r["name"] == n)]
    series = {}
    for name in names:
        pts = [(s, r["median_ms"]) for s in sizes if (r := _find(data["results"], name, s)) and "median_ms" in r]
        if pts:
            series[name] = pts
    bare = [(s, b) for s in sizes if (b := _bare_median(data, s))]
    if bare:
        series["bare interpreter"] = bare
    values = [v for pts in series.values() for _, v in pts] or [1.0]
    lo = 10 ** math.floor(math.log10(max(min(values), 0.1)))
    hi = 10 ** math.ceil(math.log10(max(values) * 1.05))
    width, height = 880, 480
    left, right, top, bottom = 70, 270, 40, 50
    pw, ph = width - left - right, height - top - bottom
    xs = [math.log10(s) for s in sizes]
    x0, x1 = (min(xs), max(xs)) if len(xs) > 1 else (xs[0] - 1, xs[0] + 1)

    def x_of(size: float) -> float:
        return left + (math.log10(size) - x0) / (x1 - x0) * pw

    def y_of(ms: float) -> float:
        return top + (1 - (math.log10(max(ms, lo)) - math.log10(lo)) / (math.log10(hi) - math.log10(lo))) * ph

    out = [(f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">'),
           f'<rect width="{width}" height="{height}" fill="white"/>',
           (f'<text x="{left}" y="18" font-size="14" font-weight="bold">learn: median latency against '
            'store size (whole processes, log-log)</text>')]
    decade = lo
    while decade <= hi * 1.0001:
        for step in (1, 2, 5):
            tick = decade * step
            if tick > hi * 1.0001:
                break
            y = y_of(tick)
            major = step == 1
            out.append(f'<line x1="{left}" y1="{y:.1f}" x2="{left + pw}" y2="{y:.1f}" '
                       f'stroke="{"#ccc" if major else "#eee"}"/>')
            out.append(f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end" '
                       f'font-size="{12 if major else 9}" fill="{"#000" if major else "#777"}">{_tick(tick)}</text>')
        decade *= 10
    for s in sizes:
        x = x_of(s)
        out.append(f'<line x1="{x:.1f}" y1="{top}" x2="{x:.1f}" y2="{top + ph}" stroke="#eee"/>')
        out.append(f'<text x="{x:.1f}" y="{top + ph + 18}" text-anchor="middle">{s:,}</text>')
    out.append(f'<text x="{left + pw / 2}" y="{height - 10}" text-anchor="middle">learnings in the store</text>')
    out.append(f'<text transform="translate(16 {top + ph / 2}) rotate(-90)" text-anchor="middle">'
               f'median wall time (ms)</text>')
    for target, label in ((100, "100 ms: context --hook target"), (1000, "1 s: stats, graph"),
                          (3000, "3 s: promote, prune"), (5000, "5 s: import")):
        if lo <= target <= hi:
            y = y_of(target)
            out.append(f'<line x1="{left}" y1="{y:.1f}" x2="{left + pw}" y2="{y:.1f}" stroke="#c00" '
                       f'stroke-dasharray="2 4"/>')
            out.append(f'<text x="{left + pw - 4}" y="{y - 4:.1f}" text-anchor="end" fill="#c00" '
                       f'font-size="10">{label}</text>')
    out.append(f'<rect x="{left}" y="{top}" width="{pw}" height="{ph}" fill="none" stroke="#999"/>')
    for i, (name, pts) in enumerate(series.items()):
        colour = "#000" if name == "bare interpreter" else COLOURS[i % len(COLOURS)]
        dash = ' stroke-dasharray="6 4"' if name in ("bare interpreter", "rg -i docker") else ""
        path = " ".join(f"{'M' if j == 0 else 'L'}{x_of(s):.1f},{y_of(v):.1f}" for j, (s, v) in enumerate(pts))
        out.append(f'<path d="{path}" fill="none" stroke="{colour}" stroke-width="2"{dash}/>')
        for s, v in pts:
            out.append(f'<circle cx="{x_of(s):.1f}" cy="{y_of(v):.1f}" r="3" fill="{colour}"/>')
        ly = top + 10 + i * 18
        out.append(f'<line x1="{left + pw + 16}" y1="{ly}" x2="{left + pw + 40}" y2="{ly}" stroke="{colour}" '
                   f'stroke-width="2"{dash}/>')
        label = name if name in ("bare interpreter",) or name.startswith("rg ") else f"learn {name}"
        out.append(f'<text x="{left + pw + 46}" y="{ly + 4}">{_escape(label)}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def _tick(ms: float) -> str:
    return f"{ms / 1000:g} s" if ms >= 1000 else f"{ms:g} ms"


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


if __name__ == "__main__":  # re-render from a saved run: python bench/report.py results.json
    import sys

    saved = json.loads(Path(sys.argv[1]).read_text())
    write(saved, ROOT / "BENCHMARKS.md", ROOT / "bench" / "latency.svg")
