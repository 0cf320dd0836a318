"""Time the hook path of one or more installs of `learn` on the same homes (a before / after).

    python bench/hookpath.py --workdir /tmp/hooks --sizes 1000:10,300000:3000 --runs 9 \\
        --learn before=/tmp/old/.venv/bin/learn --learn after=.venv/bin/learn [--rounds 2] [--callgrind]

For each size: a bench/generate.py home (kept in the work folder, made once and maintained
as `make bench` does), then per round and per install every event kind of `learn capture`
and `learn context --hook`, as bench/run.py measures them (the hook command each install's
`learn hooks install` registers; warm-up, then `--runs` runs, each followed by the install's
bare `python -c pass`; medians of user + sys). With `--callgrind`, the instructions of each
kind at the smallest size (one run each). Prints one table per measure; `--json` keeps the
figures.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench import run
from bench.generate import generate

KINDS = ("failure", "success", "prompt", "start", "pair", "end")


def home_of(workdir: Path, learnings: int, projects: int) -> dict:
    out = workdir / f"h{learnings}"
    saved = out / "summary.json"
    if not saved.exists():
        summary = generate(out, learnings, projects, maintained=True)
        saved.write_text(json.dumps(summary.as_dict(), default=str))
    info = json.loads(saved.read_text())
    return {"home": Path(info["home"]), "root": info["bench_project"]["root"],
            "sessions": info["sessions_of_bench_project"] or ["bench-session"]}


def use(bench: run.Bench, learn: str) -> None:
    """Point the runner at another install: its `learn`, its interpreter, its hook command
    (`PATH#script`: the `learn` script itself, whatever `hooks install` registers)."""
    learn, _, how = learn.partition("#")
    bench.learn = learn
    bench.python = str(Path(learn).with_name("python"))
    bench.hook = [learn] if how == "script" else bench.hook_command()


def instructions(bench: run.Bench, home: dict, copy: Path) -> dict:
    """Callgrind's count of each kind, after a warm-up run of it (as the timed runs have), on
    `copy`, a fresh copy of the home, with the same payloads for every install: what a hook
    does depends on what the hooks before it left (a digest to remake, regexes to cache)."""
    if copy.exists():
        shutil.rmtree(copy)
    shutil.copytree(home["home"], copy, symlinks=True)
    bench._counter = 0
    make = bench.payloads(home["root"], home["sessions"])
    env, root, sid = dict(bench.env(copy), PYTHONHASHSEED="0"), home["root"], home["sessions"][0]  # steadier counts
    counts = {"bare": run.callgrind_instructions(bench.valgrind, [bench.python, "-c", "pass"], env, root, None)}

    def payload(kind: str) -> bytes:
        session = sid
        if kind in ("pair", "end"):  # a session of its own, its failure (and fix) first
            session = f"bench-{bench.next_id()}"
            bench.launcher.run(bench.hook + ["capture"], env, root, json.dumps(make["failure"](session)).encode())
            if kind == "end":
                bench.launcher.run(bench.hook + ["capture"], env, root, json.dumps(make["pair"](session)).encode())
        return json.dumps(make["start" if kind == "context" else kind](session)).encode()

    for kind in KINDS + ("context",):
        argv = bench.hook + (["context", "--hook"] if kind == "context" else ["capture"])
        bench.launcher.run(argv, env, root, payload(kind))
        counts[kind] = run.callgrind_instructions(bench.valgrind, argv, env, root, payload(kind))
    return counts


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--sizes", default="1000:10")
    ap.add_argument("--learn", action="append", required=True,
                    help="NAME=PATH of a `learn` script (PATH#script: run it as the hook)")
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--callgrind", action="store_true")
    ap.add_argument("--skip-cpu", action="store_true")
    ap.add_argument("--json", default="")
    ap.add_argument("--boost", action="store_true", help="as root: top scheduling priority (bench/run.py --boost)")
    args = ap.parse_args(argv)
    if args.boost:
        print(run.boost_priority(), file=sys.stderr)
    workdir = Path(args.workdir)
    installs = [tuple(item.split("=", 1)) for item in args.learn]
    sizes = [tuple(int(x) for x in part.split(":")) for part in args.sizes.split(",")]
    bench = run.Bench(argparse.Namespace(smoke=False, runs=args.runs, workdir=str(workdir / "runner"), seed=7))
    figures: dict = {"cpu": [], "ir": {}}
    try:
        for learnings, projects in sizes:
            home = home_of(workdir, learnings, projects)
            for rnd in range(args.rounds if not args.skip_cpu else 0):
                for name, learn in installs:
                    use(bench, learn)
                    bench.profile = f"{name} r{rnd + 1}"
                    bench.results = []
                    bench.bench_captures(learnings, home["home"], home["root"], home["sessions"])
                    for res in bench.results:
                        st = res.stats()
                        figures["cpu"].append({"install": name, "round": rnd + 1, "size": learnings,
                                               "name": res.name, **st})
            if args.callgrind and (learnings, projects) == sizes[0]:
                for name, learn in installs:
                    use(bench, learn)
                    figures["ir"][name] = instructions(bench, home, workdir / "runner" / "ir-home")
                    bench.say(f"instructions {name}: {figures['ir'][name]}")
    finally:
        bench.launcher.close()
    print(table(figures, installs))
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=1, default=str) + "\n")
    return 0


def table(figures: dict, installs: list) -> str:
    lines = []
    if figures["cpu"]:
        lines += ["| operation | size | " + " | ".join(f"{n} (× bare CPU; ms)" for n, _ in installs) + " |",
                  "|---|---|" + "---|" * len(installs)]
        keys = sorted({(r["size"], r["name"]) for r in figures["cpu"]}, key=lambda k: (k[0], k[1]))
        for size, op in keys:
            cells = []
            for name, _ in installs:
                rows = [r for r in figures["cpu"] if (r["install"], r["size"], r["name"]) == (name, size, op)]
                cells.append(" / ".join(f"{r.get('cpu_ratio') or 0:.2f} ({r.get('cpu_ms', 0):.1f}; bare "
                                        f"{r.get('bare_cpu_ms', 0):.1f})" if "cpu_ms" in r else "failed"
                                        for r in rows))
            lines.append(f"| {op} | {size:,} | " + " | ".join(cells) + " |")
    if figures["ir"]:
        lines += ["", "| instructions (M, × bare) | " + " | ".join(n for n, _ in installs) + " |",
                  "|---|" + "---|" * len(installs)]
        for kind in ("bare",) + KINDS + ("context",):
            cells = []
            for name, _ in installs:
                ir = figures["ir"][name]
                count, bare = ir.get(kind), ir.get("bare")
                cells.append(f"{count / 1e6:.1f} ({count / bare:.2f}×)" if count and bare else "failed")
            lines.append(f"| {kind} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
