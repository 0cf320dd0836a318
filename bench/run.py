"""`make bench`: time `learn` on two profiles of home and write BENCHMARKS.md.

    python bench/run.py                 the full run: the synthetic profile at 1k / 10k / 100k
                                        learnings, the realistic one at 1k / 10k / 100k / 300k
                                        entries, one home after the other (~20 minutes on 2 cores)
    python bench/run.py --jobs 2        the same, the homes shared between 2 processes at once
                                        (`make bench`: ~10 minutes on 2 cores)
    python bench/run.py --smoke         a tiny home, few runs, report in the work folder (CI)
    python bench/run.py --boost         as root on a busy shared machine: top scheduling priority
    python bench/run.py --profiles realistic --sizes 100000:1000
                                        one profile at one size (learnings:projects), to time a part

Profiles: *synthetic* (bench/generate.py, written straight in the store format; the home of
the earlier runs, kept for continuity) and *realistic* (bench/realistic.py: an export file with
the mix of real use, imported by `learn import` into an empty home, which is the import figure).

For every store size the runner builds a home, then times whole `learn`
processes: a warm-up run, then N timed runs, each paired with a run of the bare interpreter
(`python -c pass`, the interpreter of the `learn` entry point) so that ratios come from the
same moment of the same machine. Every figure is CPU time (user + system of the process,
os.wait4) beside wall time; verdicts use CPU time, which another engineer's load moves far less.
The hook path also gets instruction counts (valgrind --tool=callgrind), which load does not move
at all. Peak memory is the child's own ru_maxrss (os.wait4). Commands
that change the home (promote, prune) run on a fresh copy each time; `import` runs into a fresh
empty home each time; captures append to the benchmark project's session and learnings (a few
lines per run, accepted). In-process figures come from bench/inproc.py in a child process.
An operation too slow to repeat within the 15-minute budget gets 2 runs (warm-up over SLOW_S)
or its warm-up as the only run (over VERY_SLOW_S); the heavy commands get one run without a
warm-up from 100,000; the report says so. The first promote and prune of a home are measured
on the home itself with its clock a day back (libfaketime): they are the home's maintenance,
which would otherwise cost as much again in process.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import shlex
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench import realistic, report
from bench.generate import BENCH_FAILURE, DAY, generate, iso, maintain
from learn_cli.store.paths import Layout

FULL_SIZES = {"synthetic": [(1_000, 10), (10_000, 100), (100_000, 1_000)],
              "realistic": [(1_000, 10), (10_000, 100), (100_000, 1_000), (300_000, 3_000)]}
SMOKE_SIZES = {"synthetic": [(200, 5)], "realistic": [(200, 5)]}
CAPTURE_NAMES = {"failure": "capture failure", "pair": "capture success (pair)", "success": "capture success (plain)",
                 "prompt": "capture prompt", "start": "capture SessionStart", "end": "capture SessionEnd"}
TOPIC = "docker"
# CPU time of a run of seconds varies by a few per cent between runs (the bare interpreter's
# ratio is what moves), so the slow operations are not repeated for the 15-minute budget:
SLOW_S = 1  # a warm-up slower than this ...
SLOW_RUNS = 2  # ... gets this many timed runs instead of `--runs`
VERY_SLOW_S = 4  # a warm-up slower than this is the only run
PROCESS_TIMEOUT_S = 300  # a process still running then is killed and reported


# --------------------------------------------------------------------------------------------
# Running one process
# --------------------------------------------------------------------------------------------
@dataclass
class Sample:
    wall_ms: float
    cpu_ms: float  # user + system time of the process: what it costs, whatever else the machine does
    rss_mb: float
    code: int
    stdout: str
    stderr: str


class Launcher:
    """bench/spawn.py, started once: spawns each measured process from a small parent, so the
    child's ru_maxrss is its own (see spawn.py for why)."""

    def __init__(self, scratch: Path):
        self.scratch = scratch
        self.proc = None

    def _start(self) -> None:
        self.proc = subprocess.Popen([sys.executable, "-S", str(ROOT / "bench" / "spawn.py")],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def run(self, argv: list[str], env: dict, cwd: str, stdin: bytes | None = None, timeout: float = 300) -> Sample:
        if self.proc is None or self.proc.poll() is not None:
            self._start()
        paths = {name: self.scratch / f"spawn.{name}" for name in ("stdin", "stdout", "stderr")}
        if stdin is not None:
            paths["stdin"].write_bytes(stdin)
        req = {"argv": argv, "env": env, "cwd": cwd, "timeout": timeout, "stdout": str(paths["stdout"]),
               "stderr": str(paths["stderr"]), "stdin": str(paths["stdin"]) if stdin is not None else None}
        self.proc.stdin.write(json.dumps(req) + "\n")
        self.proc.stdin.flush()
        reply = json.loads(self.proc.stdout.readline() or '{"error": "launcher died"}')
        if "error" in reply:
            raise RuntimeError(f"cannot run {argv[0]}: {reply['error']}")
        out, err = (paths[n].read_bytes().decode("utf-8", "replace") for n in ("stdout", "stderr"))
        return Sample(reply["wall_ms"], reply["cpu_ms"], reply["rss_kb"] / 1024, reply["code"], out, err)

    def close(self) -> None:
        if self.proc is not None:
            self.proc.stdin.close()
            self.proc.wait(timeout=10)


# --------------------------------------------------------------------------------------------
# Operations
# --------------------------------------------------------------------------------------------
@dataclass
class Result:
    name: str
    size: int
    profile: str = ""
    samples: list = field(default_factory=list)  # Sample of the operation
    bare: list = field(default_factory=list)  # Sample of the bare interpreter, same runs
    error: str = ""
    note: str = ""

    @property
    def ok(self) -> bool:
        return not self.error and bool(self.samples)

    def stats(self) -> dict:
        if not self.ok:
            return {"error": self.error}
        walls = [s.wall_ms for s in self.samples]
        out = {"median_ms": statistics.median(walls), "min_ms": min(walls), "max_ms": max(walls),
               "runs": len(walls), "rss_mb": max(s.rss_mb for s in self.samples),
               "cpu_ms": statistics.median(s.cpu_ms for s in self.samples)}
        if self.bare:
            bare = statistics.median(s.wall_ms for s in self.bare)
            out["bare_ms"] = bare
            out["bare_cpu_ms"] = statistics.median(s.cpu_ms for s in self.bare)
            out["ratio"] = out["median_ms"] / bare if bare else None
            out["cpu_ratio"] = out["cpu_ms"] / out["bare_cpu_ms"] if out["bare_cpu_ms"] else None
        if self.note:
            out["note"] = self.note
        return out


class Bench:
    def __init__(self, args):
        self.args = args
        self.smoke = args.smoke
        self.runs = args.runs or (3 if self.smoke else 5)
        self.workdir = Path(args.workdir or tempfile.mkdtemp(prefix="learn-bench-"))
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.learn = str(Path(sys.executable).with_name("learn"))
        self.python = sys.executable  # the interpreter of the `learn` entry point: same venv
        self.rg = shutil.which("rg")
        self.results: list[Result] = []
        self.inproc: dict = {}
        self.homes: dict = {}
        self.log_started = time.monotonic()
        self.userhome = self.workdir / "userhome"
        self.userhome.mkdir(exist_ok=True)
        self.launcher = Launcher(self.workdir)
        # Instruction counts take seconds a run under valgrind: not in --smoke (CI).
        self.valgrind = None if self.smoke else shutil.which("valgrind")
        self.faketime = faketime_library()
        self.instructions: list[dict] = []
        self.profile = ""
        self.available = self._available_commands()
        self._counter = 0
        self.hook = self.hook_command()

    # -- plumbing --------------------------------------------------------------------------
    def say(self, msg: str) -> None:
        print(f"[{time.monotonic() - self.log_started:6.1f}s] {msg}", file=sys.stderr, flush=True)

    def env(self, home: Path, at: float | None = None) -> dict:
        """The environment of a measured process; with `at`, its clock starts at that moment
        (libfaketime: the wall clock only, so file times and timeouts stay real)."""
        # No PYTHON* variables: a PYTHONPATH or PYTHONDONTWRITEBYTECODE would change what is measured.
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("CLAUDE", "LEARN_", "SELF_LEARNING", "PYTHON", "FAKETIME", "LD_PRELOAD"))}
        env.update(SELF_LEARNING_HOME=str(home), HOME=str(self.userhome), NO_COLOR="1", COLUMNS="100",
                   LC_ALL="C.UTF-8")
        if at is not None:
            env.update(LD_PRELOAD=self.faketime, TZ="UTC", FAKETIME_DONT_FAKE_MONOTONIC="1",
                       FAKETIME=time.strftime("@%Y-%m-%d %H:%M:%S", time.gmtime(at)))
        return env

    def hook_command(self) -> list[str]:
        """What `learn hooks install` registers in user scope before `capture` (the hook path is
        measured as the agent runs it), asked of this `learn` in a home of its own."""
        userhome = self.workdir / "hook-command-home"
        userhome.mkdir(exist_ok=True)
        env = dict(self.env(self.workdir / "probe-home"), HOME=str(userhome))
        proc = subprocess.run([self.learn, "hooks", "install", "--json"], capture_output=True, text=True,
                              check=False, env=env)
        try:
            return shlex.split(json.loads(proc.stdout)["command"])
        except (ValueError, KeyError, TypeError):
            return [self.learn]

    def _available_commands(self) -> set:
        proc = subprocess.run([self.learn, "--help"], capture_output=True, text=True, check=False,
                              env=self.env(self.workdir / "probe-home"))
        names = set()
        for line in proc.stdout.splitlines():
            parts = line.strip("│ ").split()
            if parts:
                names.add(parts[0])
        if not names & {"capture", "recall"}:  # help text not understood: try everything
            names |= {"capture", "context", "recall", "stats", "graph", "promote", "prune", "export", "import"}
        return names

    def has(self, command: str) -> bool:
        return command in self.available

    def next_id(self) -> str:
        self._counter += 1
        return f"toolu_bench{os.getpid():x}{self._counter:08d}"

    # -- the measuring loop ---------------------------------------------------------------
    def measure(self, name: str, size: int, make_argv, *, home: Path, cwd: str, stdin=None, setup=None,
                teardown=None, timeout: float = PROCESS_TIMEOUT_S, with_bare: bool = True, check=None,
                once: bool = False, max_runs: int = 0, at: float | None = None) -> Result:
        """Warm-up, then `runs` timed runs, each followed by a bare interpreter run; with `once`,
        a single timed run and no warm-up (work that happens once, like a first promotion).

        An operation whose warm-up takes longer than SLOW_S gets SLOW_RUNS timed runs (said in
        the report), so that one pathologically slow command cannot blow the 10-minute budget.
        `teardown` runs after the last run, for every run: deleting a 300 MB home between runs
        put its cleanup (on a disk mounted with `discard`) into the next run's figure."""
        res = Result(name, size, self.profile)
        done: list = []
        if max_runs == 1 and not once:
            once, res.note = True, "1 run, no warm-up: the budget of the full run"
        elif once:
            res.note = "1 run: it happens once"
        runs = 1 if once else min(self.runs, max_runs or self.runs)
        i = 1 if once else 0
        while i <= runs:
            ctx = setup() if setup else {}
            argv = make_argv(ctx)
            payload = stdin(ctx) if callable(stdin) else stdin
            run_home = ctx.get("home", home)
            sample = self.launcher.run(argv, self.env(run_home, at), ctx.get("cwd", cwd), payload, timeout)
            done.append(ctx)
            if sample.code == -9 and sample.wall_ms >= timeout * 1000:
                res.error = f"killed after {timeout:.0f} s"
                break
            if sample.code != 0:
                res.error = f"exit {sample.code}: {(sample.stderr or sample.stdout).strip()[-300:]}"
                break
            if check:
                problem = check(sample)
                if problem:
                    res.error = problem
                    break
            bare = self.launcher.run([self.python, "-c", "pass"], self.env(home), cwd) if with_bare else None
            i += 1
            if i == 1:  # warm-up: bytecode caches, page cache
                if sample.wall_ms > VERY_SLOW_S * 1000:
                    # Too slow to repeat within the budget: the warm-up is the only figure.
                    res.samples.append(sample)
                    if bare:
                        res.bare.append(bare)
                    res.note = f"1 run: it took {sample.wall_ms / 1000:.0f} s, too slow to repeat"
                    break
                if sample.wall_ms > SLOW_S * 1000 and runs > SLOW_RUNS:
                    runs = SLOW_RUNS
                    res.note = f"{SLOW_RUNS} runs: the warm-up took {sample.wall_ms / 1000:.0f} s"
                continue
            res.samples.append(sample)
            if bare:
                res.bare.append(bare)
        for ctx in done if teardown else ():
            teardown(ctx)
        self.results.append(res)
        st = res.stats()
        if res.ok:
            self.say(f"[{self.profile}] {name} @ {size:,}: CPU {st['cpu_ms']:.1f} ms "
                     f"(×{st.get('cpu_ratio') or 0:.2f} bare), wall {st['median_ms']:.1f} ms, {st['rss_mb']:.0f} MB")
        else:
            self.say(f"{name} @ {size:,}: FAILED {res.error}")
        return res

    def skip(self, name: str, size: int, why: str) -> None:
        self.results.append(Result(name, size, self.profile, error=why))
        self.say(f"{name} @ {size:,}: skipped ({why})")

    # -- the homes of the two profiles --------------------------------------------------------
    def synthetic_home(self, learnings: int, projects: int) -> dict:
        """bench/generate.py's home, written straight in the store format (kept for continuity)."""
        out = self.workdir / f"synthetic-{learnings}"
        self.say(f"[synthetic] generating {learnings:,} learnings over {projects:,} projects")
        summary = generate(out, learnings, projects, seed=self.args.seed)
        self.say(f"  written in {summary.seconds_write:.1f} s, indexed in {summary.seconds_index:.1f} s")
        return {"out": out, "summary": summary, "home": Path(summary.home), "export": None}

    def realistic_home(self, entries: int, projects: int) -> dict:
        """bench/realistic.py's export file, imported into an empty home by `learn import`: the
        import is measured (into fresh empty homes) and the last home it built is the one kept."""
        out = self.workdir / f"realistic-{entries}"
        self.say(f"[realistic] generating an export of {entries:,} entries over {projects:,} projects")
        gen, summary = realistic.generate_export(out, entries, projects, seed=self.args.seed)
        self.say(f"  written in {summary.seconds_write:.1f} s ({summary.bytes_export / 1e6:.0f} MB)")
        export = Path(summary.export)
        made: list[Path] = []

        def fresh() -> dict:
            home = Path(tempfile.mkdtemp(dir=out)) / "home"
            made.append(home)
            return {"home": home}

        res = self.measure("import", entries, lambda ctx: [self.learn, "import", str(export)], home=gen.home,
                           cwd=summary.bench_project["root"], setup=fresh, max_runs=self.runs_for(entries, 3))
        if not res.ok:
            raise RuntimeError(f"the realistic home could not be built: {res.error}")
        for home in made[:-1]:
            _rmtree(home.parent)
        gen.home = made[-1]
        gen.layout = Layout(gen.home)
        summary.home = str(gen.home)
        realistic.finish_home(gen, summary)
        self.say(f"  imported: {summary.learnings:,} learnings, {summary.shared_keys:,} keys in ≥ 2 projects")
        return {"out": out, "summary": summary, "home": gen.home, "export": export}

    def runs_for(self, size: int, slow_cap: int) -> int:
        """Timed runs of the heavy commands: one, without a warm-up, from 100,000 (seconds of CPU
        each, stable to a few per cent), for the 15-minute budget."""
        return 1 if size >= 100_000 else min(self.runs, slow_cap)

    # -- one store size --------------------------------------------------------------------
    def bench_size(self, profile: str, learnings: int, projects: int) -> None:
        self.profile = profile
        made = (self.realistic_home if profile == "realistic" else self.synthetic_home)(learnings, projects)
        summary, home = made["summary"], made["home"]
        bench_root = summary.bench_project["root"]
        sessions = summary.sessions_of_bench_project or ["bench-session"]
        size = learnings
        heavy = self.runs_for(size, 3)

        # The first promotion and prune of a home that never had one (generated, or just
        # imported) are yesterday's maintenance; every other figure is taken on the maintained home.
        if self.faketime:
            summary.maintenance = self.first_runs(size, home, bench_root, summary.now - DAY)
        else:  # no clock to set: the first runs on copies, then the maintenance in process
            for command in ("promote", "prune"):
                self.measure(f"{command} (first run)", size, lambda ctx, c=command: [self.learn, c], home=home,
                             cwd=bench_root, setup=lambda: {"home": self.clone(home)},
                             teardown=lambda ctx: _rmtree(ctx["home"].parent), once=True)
            summary.maintenance = maintain(home, summary.now - DAY)
        self.homes.setdefault(profile, {})[learnings] = {k: v for k, v in summary.as_dict().items()
                                                         if k != "projects_list"}
        m = summary.maintenance
        self.say(f"  yesterday's promote and prune: {m['seconds_promote']:.1f} s + {m['seconds_prune']:.1f} s "
                 f"in process, {m['conflicts']:,} conflicts")

        self.bench_captures(size, home, bench_root, sessions)
        self.bench_hook_instructions(size, home, bench_root, sessions)
        self.bench_reads(size, home, bench_root)

        if heavy > 1:
            self.bench_daily(size, home, bench_root, heavy)

        export_file = made["out"] / "bench-export.json"
        self.measure("export", size, lambda ctx: [self.learn, "export", "-o", str(export_file)], home=home,
                     cwd=bench_root, max_runs=heavy)
        if profile == "synthetic":
            if not export_file.exists():
                report.write_export(home, export_file)
            self.measure("import", size, lambda ctx: [self.learn, "import", str(export_file)], home=home,
                         cwd=bench_root, setup=lambda: {"home": Path(tempfile.mkdtemp(dir=self.workdir)) / "h"},
                         teardown=lambda ctx: _rmtree(ctx["home"].parent), max_runs=heavy)
        elif size > 100_000:
            self.skip("import (into a full home)", size, "not run above 100,000: over 5 minutes, the budget")
        else:  # the same file again, into the full home: every entry meets its own copy
            self.measure("import (into a full home)", size, lambda ctx: [self.learn, "import", str(made["export"])],
                         home=home, cwd=bench_root, setup=lambda: {"home": self.clone(home)},
                         teardown=lambda ctx: _rmtree(ctx["home"].parent), max_runs=heavy)

        self.inproc.setdefault(profile, {})[size] = self.in_process(home, bench_root, sessions[0])
        if heavy == 1:  # last: they change the home
            self.bench_daily(size, home, bench_root, heavy)
        if not self.args.keep:
            _rmtree(made["out"])
            self.say(f"removed the {profile} {learnings:,} home")

    def bench_daily(self, size: int, home: Path, root: str, runs: int) -> None:
        """The daily `learn promote` and `learn prune`, each on a fresh copy of the maintained
        home; with a single run (the largest homes) prune runs on the home itself, last, which
        saves copying up to 0.8 GB once (a prune after the day's promote would search the files
        that promote rewrote for duplicates again: a different figure)."""
        for command in ("promote", "prune"):
            if runs == 1 and command == "prune":
                res = self.measure(command, size, lambda ctx: [self.learn, "prune"], home=home, cwd=root, once=True)
                res.note = "1 run, no warm-up, on the home itself (the last figure of this home): the budget"
                continue
            self.measure(command, size, lambda ctx, c=command: [self.learn, c], home=home, cwd=root,
                         setup=lambda: {"home": self.clone(home)}, teardown=lambda ctx: _rmtree(ctx["home"].parent),
                         max_runs=runs)

    def first_runs(self, size: int, home: Path, root: str, at: float) -> dict:
        """`learn promote`, then `learn prune`, each once, on the home itself with the clock at
        `at` (yesterday): measured as the first runs, and they are the home's maintenance."""
        reports = {}
        for command in ("promote", "prune"):
            res = self.measure(f"{command} (first run)", size, lambda ctx, c=command: [self.learn, c, "--json"],
                               home=home, cwd=root, once=True, at=at)
            if not res.ok:
                raise RuntimeError(f"the first {command} failed: {res.error}")
            res.note = "once: on the home itself, its clock a day back"
            reports[command] = (json.loads(res.samples[0].stdout), res.samples[0].wall_ms / 1000)
        (promoted, s_promote), (pruned, s_prune) = reports["promote"], reports["prune"]
        counts = promoted["counts"]
        return {"at": iso(at), "seconds_promote": round(s_promote, 2), "seconds_prune": round(s_prune, 2),
                "promoted": counts["promoted"], "archived": counts["archived"] + pruned["archived"]["count"],
                "conflicts": counts["conflicts"], "low_since_changed": counts["low_since_changed"],
                "merged": pruned["merged"]["removed"]}

    # -- the hook path -----------------------------------------------------------------------
    def payloads(self, root: str, sessions: list) -> dict:
        """One builder per event kind `learn capture` receives, each a fresh payload."""
        transcript = f"{self.userhome}/.claude/projects/p/s.jsonl"

        def base(sid: str, event: str) -> dict:
            return {"session_id": sid, "cwd": root, "transcript_path": transcript, "hook_event_name": event}

        def failure(sid: str) -> dict:
            cmd, err, code = BENCH_FAILURE
            return dict(base(sid, "PostToolUseFailure"), permission_mode="default", tool_name="Bash",
                        tool_input={"command": cmd, "description": "Run the API tests"},
                        tool_use_id=self.next_id(), error=f"Exit code {code}\n{err}", is_interrupt=False,
                        duration_ms=31)

        def success(sid: str, cmd: str, out: str) -> dict:
            return dict(base(sid, "PostToolUse"), permission_mode="default", tool_name="Bash",
                        tool_input={"command": cmd, "description": "Run it"},
                        tool_response={"stdout": out, "stderr": "", "interrupted": False, "isImage": False,
                                       "noOutputExpected": False},
                        tool_use_id=self.next_id(), duration_ms=812)

        return {
            "failure": failure,
            "pair": lambda sid: success(sid, "python -m " + BENCH_FAILURE[0], "........\n8 passed in 0.41s"),
            "success": lambda sid: success(sid, "git status --short", " M src/app.py\n"),
            "prompt": lambda sid: dict(base(sid, "UserPromptSubmit"), permission_mode="default",
                                       prompt_id=self.next_id(), prompt="Run the tests and tidy app.py"),
            "start": lambda sid: dict(base(sid, "SessionStart"), source="startup"),
            "end": lambda sid: dict(base(sid, "SessionEnd"), prompt_id=self.next_id(), reason="other"),
        }

    def bench_captures(self, size: int, home: Path, root: str, sessions: list) -> None:
        """`learn capture` for every event kind. failure / plain success / prompt / SessionStart
        go to the home's live sessions; a pair and a SessionEnd each get a session of their
        own, whose failure (and, for SessionEnd, the fix that follows) is sent first, untimed."""
        make = self.payloads(root, sessions)
        env = self.env(home)

        def live(kind: str):
            return lambda ctx: json.dumps(make[kind](sessions[self._counter % len(sessions)])).encode()

        def own_session(with_fix: bool):
            def setup() -> dict:
                sid = f"bench-{self.next_id()}"
                self.launcher.run(self.hook + ["capture"], env, root, json.dumps(make["failure"](sid)).encode())
                if with_fix:
                    self.launcher.run(self.hook + ["capture"], env, root, json.dumps(make["pair"](sid)).encode())
                return {"sid": sid}
            return setup

        def capture(ctx) -> list:
            return self.hook + ["capture"]

        for kind in ("failure", "success", "prompt", "start"):
            self.measure(CAPTURE_NAMES[kind], size, capture, home=home, cwd=root, stdin=live(kind),
                         check=_valid_hook_output)
        self.measure(CAPTURE_NAMES["pair"], size, capture, home=home, cwd=root, setup=own_session(False),
                     stdin=lambda ctx: json.dumps(make["pair"](ctx["sid"])).encode(), check=_valid_hook_output)
        self.measure(CAPTURE_NAMES["end"], size, capture, home=home, cwd=root, setup=own_session(True),
                     stdin=lambda ctx: json.dumps(make["end"](ctx["sid"])).encode(), check=_valid_hook_output)
        start = json.dumps(make["start"](sessions[0])).encode()
        self.measure("context --hook", size, lambda ctx: self.hook + ["context", "--hook"], home=home, cwd=root,
                     stdin=start, check=_valid_hook_output)

    def bench_hook_instructions(self, size: int, home: Path, root: str, sessions: list) -> None:
        """Instructions executed (callgrind's Ir) by the hook path: a count that does not move
        with the machine's load, unlike any time. One run each: the count barely varies."""
        if not self.valgrind:
            return
        make = self.payloads(root, sessions)
        env = self.env(home)
        capture = self.hook + ["capture"]
        pair, end = f"bench-{self.next_id()}", f"bench-{self.next_id()}"
        runs = [("bare interpreter", [self.python, "-c", "pass"], None, ()),
                (CAPTURE_NAMES["failure"], capture, make["failure"](sessions[0]), ()),
                (CAPTURE_NAMES["success"], capture, make["success"](sessions[0]), ()),
                (CAPTURE_NAMES["prompt"], capture, make["prompt"](sessions[0]), ()),
                (CAPTURE_NAMES["start"], capture, make["start"](sessions[0]), ()),
                ("context --hook", self.hook + ["context", "--hook"], make["start"](sessions[0]), ()),
                # a pair and a SessionEnd in sessions of their own, as bench_captures times them
                # (last: a pair learns, and the next digest is then made afresh)
                (CAPTURE_NAMES["pair"], capture, make["pair"](pair), (make["failure"](pair),)),
                (CAPTURE_NAMES["end"], capture, make["end"](end), (make["failure"](end), make["pair"](end)))]
        for name, argv, payload, before in runs:
            for earlier in before:  # untimed, uncounted
                self.launcher.run(capture, env, root, json.dumps(earlier).encode())
            count = callgrind_instructions(self.valgrind, argv, env, root,
                                           json.dumps(payload).encode() if payload else None)
            self.instructions.append({"profile": self.profile, "name": name, "size": size, "ir": count})
            self.say(f"instructions {name} @ {size:,}: {count:,}" if count else f"instructions {name}: failed")

    # -- read commands -------------------------------------------------------------------------
    def bench_reads(self, size: int, home: Path, root: str) -> None:
        learn = self.learn
        some_id = _some_learning_id(home)
        reads = [(f"recall {TOPIC}", [learn, "recall", TOPIC]), ("stats", [learn, "stats"]),
                 ("graph", [learn, "graph"]), ("show", [learn, "show", some_id]),
                 ("--version", [learn, "--version"]), ("--help", [learn, "--help"])]
        for name, argv in reads:
            self.measure(name, size, lambda ctx, a=argv: a, home=home, cwd=root)
        if self.rg:
            rg_argv = [self.rg, "-i", TOPIC, "-g", "*.jsonl", "-g", "!archive.jsonl",
                       str(home / "projects"), str(home / "global")]
            self.measure(f"rg -i {TOPIC}", size, lambda ctx: rg_argv, home=home, cwd=root,
                         check=lambda s: None if s.stdout else "rg found nothing")
        else:
            self.skip(f"rg -i {TOPIC}", size, "ripgrep not installed (apt-get install ripgrep)")

    def clone(self, home: Path) -> Path:
        """A copy of a home whose index is as fresh as the original's (see fix_index_inodes)."""
        dst = Path(tempfile.mkdtemp(dir=self.workdir)) / "home"
        subprocess.run(["cp", "-a", str(home), str(dst)], check=True)
        fix_index_inodes(dst)
        return dst

    def in_process(self, home: Path, project_root: str, session: str) -> dict:
        argv = [self.python, str(ROOT / "bench" / "inproc.py"), "--home", str(home), "--project", project_root,
                "--topic", TOPIC, "--session", session, "--repeat", "5" if self.smoke else "30"]
        sample = self.launcher.run(argv, self.env(home), project_root, timeout=300)
        if sample.code != 0:
            self.say(f"in-process timings failed: {sample.stderr.strip()[-300:]}")
            return {"error": sample.stderr.strip()[-300:] or f"exit {sample.code}"}
        data = json.loads(sample.stdout)
        for name, st in data.items():
            if name.startswith("_"):
                continue
            if "median_ms" in st:
                self.say(f"in process {name}: median {st['median_ms']:.2f} ms")
            else:
                self.say(f"in process {name}: {st.get('error')}")
        return data


def fix_index_inodes(home: Path) -> None:
    """`cp -a` keeps sizes and mtimes but not inodes, and the index keys freshness on all three:
    record the copies' inodes where size and mtime match, so the copy's index is as fresh as the
    original's (files that differ are left for `learn` to re-read, as it would)."""
    db_path = home / "global" / "index.db"
    if not db_path.exists():
        return
    db = sqlite3.connect(str(db_path), isolation_level=None)
    try:
        rows = db.execute("SELECT path, size, mtime_ns FROM files").fetchall()
        db.execute("BEGIN")
        for path, size, mtime in rows:
            try:
                st = os.stat(home / path)
            except FileNotFoundError:
                continue
            if (st.st_size, st.st_mtime_ns) == (size, mtime):
                db.execute("UPDATE files SET ino=? WHERE path=?", (st.st_ino, path))
        db.execute("COMMIT")
    finally:
        db.close()


def _valid_hook_output(sample: Sample) -> str | None:
    text = sample.stdout.strip()
    if not text:
        return None
    try:
        json.loads(text)
    except ValueError:
        return f"stdout is not hook JSON: {text[:120]!r}"
    return None


def _rmtree(path: Path) -> None:
    shutil.rmtree(path, ignore_errors=True)


# --------------------------------------------------------------------------------------------
# Comparator set-up
# --------------------------------------------------------------------------------------------
def ensure_tool(binary: str, package: str, allow_install: bool) -> str | None:
    """`binary` from Debian's packages when it is missing and we may install (root, apt-get)."""
    found = shutil.which(binary)
    if found or not allow_install or os.geteuid() != 0 or not shutil.which("apt-get"):
        return found
    print(f"installing {package} (apt-get install -y {package})", file=sys.stderr)
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    for argv in (["apt-get", "install", "-y", "-qq", package],
                 ["apt-get", "update", "-qq"], ["apt-get", "install", "-y", "-qq", package]):
        subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=300, check=False)
        if shutil.which(binary):
            break
    return shutil.which(binary)


def faketime_library() -> str | None:
    """libfaketime (Debian's `faketime`), which runs a command with its clock set back."""
    found = glob.glob("/usr/lib/*/faketime/libfaketime.so.1") + glob.glob("/usr/lib/faketime/libfaketime.so.1")
    return found[0] if found else None


def callgrind_instructions(valgrind: str, argv: list[str], env: dict, cwd: str, stdin: bytes | None) -> int | None:
    """Instructions the process executed (callgrind's `Collected`), or None if it failed."""
    try:
        proc = subprocess.run([valgrind, "--tool=callgrind", "--callgrind-out-file=/dev/null", *argv],
                              input=stdin or b"", env=env, cwd=cwd, capture_output=True, timeout=300, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    for line in proc.stderr.decode("utf-8", "replace").splitlines():
        if "Collected :" in line:
            return int(line.rsplit(":", 1)[1])
    return None


def _version_line(binary: str | None) -> str:
    if not binary:
        return "not installed (apt-get install valgrind failed or not root): no instruction counts"
    return subprocess.run([binary, "--version"], capture_output=True, text=True, check=False).stdout.strip()


def index_rows(home: Path, query: str) -> list[tuple]:
    """The rows of one query on a home's index, read directly (the benchmark and its smoke test)."""
    db = sqlite3.connect(str(home / "global" / "index.db"))
    try:
        return db.execute(query).fetchall()
    finally:
        db.close()


def _some_learning_id(home: Path) -> str:
    """The id of a live learning of the home, for `learn show`."""
    rows = index_rows(home, "SELECT id FROM learnings WHERE scope = 'project' ORDER BY id LIMIT 1 OFFSET 7")
    return rows[0][0] if rows else "learn-unknown"


def boost_priority() -> str:
    """Run the rest of the benchmark in a session of its own whose scheduling group has the
    highest priority, so that other work on a shared machine disturbs the figures less.

    Linux schedules sessions (autogroups) fairly against each other before it looks at nice
    values, so `nice -n -20` alone does nothing against a busy session next door. The parent
    waits for the boosted child and exits with its code. Needs root; otherwise a no-op."""
    if os.geteuid() != 0 or not Path("/proc/self/autogroup").exists():
        return "normal (--boost needs root and Linux autogroups)"
    sys.stdout.flush()
    sys.stderr.flush()
    child = os.fork()
    if child:
        _, status = os.waitpid(child, 0)
        sys.exit(os.waitstatus_to_exitcode(status))
    os.setsid()
    try:
        Path("/proc/self/autogroup").write_text("-20")
        os.nice(-20 - os.nice(0))
    except OSError as exc:
        return f"normal (boost failed: {exc})"
    return "boosted: own session, autogroup nice -20, nice -20 (--boost)"


def measure_homes(args, tasks: list[tuple[str, int, int]]) -> dict:
    """Every (profile, learnings, projects) of `tasks`, one after the other: the figures, not the
    report."""
    bench = Bench(args)
    try:
        for profile, learnings, projects in tasks:
            bench.bench_size(profile, learnings, projects)
            # What is measured so far, should a later size not finish (python bench/report.py FILE).
            (bench.workdir / "partial.json").write_text(json.dumps(
                {"profile": profile, "results": [{"profile": r.profile, "name": r.name, "size": r.size,
                                                  **r.stats()} for r in bench.results],
                 "homes": bench.homes, "instructions": bench.instructions}, default=str) + "\n")
        return {"python": bench.python, "rg": bench.rg, "runs": bench.runs, "homes": bench.homes,
                "inproc": bench.inproc, "instructions": bench.instructions,
                "valgrind": _version_line(bench.valgrind) if not args.smoke else "not run in --smoke",
                "results": [{"profile": r.profile, "name": r.name, "size": r.size, **r.stats()}
                            for r in bench.results]}
    finally:
        bench.launcher.close()
        if not (args.keep or args.workdir or args.smoke):
            _rmtree(bench.workdir)


# Rough CPU seconds of one home of each profile, per learning and fixed (the 2026-12-01 runs):
# enough to share the homes between the `--jobs` processes so that they finish together.
COST_PER_LEARNING = {"realistic": 1.2e-3, "synthetic": 2.8e-3}
COST_PER_HOME = 25


def share(tasks: list[tuple[str, int, int]], jobs: int) -> list[list[tuple[str, int, int]]]:
    """The homes split into `jobs` lists of about equal cost (longest first, each to the least
    loaded list), each list in that order."""
    loads = [[0.0, []] for _ in range(jobs)]
    for task in sorted(tasks, key=lambda t: -(COST_PER_LEARNING.get(t[0], 2e-3) * t[1] + COST_PER_HOME)):
        least = min(loads, key=lambda load: load[0])
        least[0] += COST_PER_LEARNING.get(task[0], 2e-3) * task[1] + COST_PER_HOME
        least[1].append(task)
    return [tasks for _, tasks in loads if tasks]


def measure_side_by_side(args, tasks: list[tuple[str, int, int]], workdir: Path) -> dict:
    """The homes shared between `--jobs` child processes that run at once (`share`): on 2 cores
    the run takes about half the time. Each child writes its figures to a file."""
    children = []
    for n, part_tasks in enumerate(share(tasks, args.jobs)):
        part = workdir / f"part{n}.json"
        argv = [sys.executable, str(Path(__file__).resolve()), "--part", str(part),
                "--tasks", ",".join(f"{p}:{s}:{k}" for p, s, k in part_tasks),
                "--workdir", str(workdir / f"part{n}"), "--seed", str(args.seed), "--runs", str(args.runs)]
        argv += ["--smoke"] if args.smoke else []
        argv += ["--keep"] if args.keep else []
        children.append((part, subprocess.Popen(argv)))
    parts = []
    for part, child in children:
        if child.wait() != 0:
            raise RuntimeError(f"a part of the run failed (exit {child.returncode}): {part}")
        parts.append(json.loads(part.read_text()))
    merged = dict(parts[0], homes={}, inproc={}, instructions=[], results=[])
    for part in parts:
        for key in ("homes", "inproc"):
            for profile, by_size in part[key].items():
                merged[key].setdefault(profile, {}).update(by_size)
        merged["instructions"] += part["instructions"]
        merged["results"] += part["results"]
    order = {task: n for n, task in enumerate((p, s) for p, s, _ in tasks)}
    merged["results"].sort(key=lambda r: order.get((r["profile"], r["size"]), 0))  # stable: runs' order within
    merged["instructions"].sort(key=lambda r: order.get((r["profile"], r["size"]), 0))
    return merged


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Benchmark learn on two profiles of home, 1k to 300k learnings.")
    ap.add_argument("--smoke", action="store_true", help="tiny homes, 3 runs; report in the work folder")
    ap.add_argument("--runs", type=int, default=0, help="timed runs per operation (default 5; smoke 3)")
    ap.add_argument("--profiles", default="realistic,synthetic", help="which profiles, in order")
    ap.add_argument("--sizes", default="", help="e.g. 1000:10,10000:100 (learnings:projects), for every profile")
    ap.add_argument("--jobs", type=int, default=1, help="profiles measured side by side, one process each")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--workdir", default="", help="where homes are generated (default: a temp folder)")
    ap.add_argument("--out", default="", help="report path (default BENCHMARKS.md; smoke: in the work folder)")
    ap.add_argument("--svg", default="", help="plot path (default bench/latency.svg; smoke: in the work folder)")
    ap.add_argument("--part", default="", help=argparse.SUPPRESS)  # --jobs: a child's figures, no report
    ap.add_argument("--tasks", default="", help=argparse.SUPPRESS)  # --jobs: a child's profile:learnings:projects
    ap.add_argument("--keep", action="store_true", help="keep the generated homes")
    ap.add_argument("--boost", action="store_true",
                    help="as root: run at the highest scheduling priority (for a busy, shared machine)")
    args = ap.parse_args(argv)
    priority = boost_priority() if args.boost else "normal"
    profiles = [p for p in args.profiles.split(",") if p]
    plan = {p: [tuple(int(x) for x in part.split(":")) for part in args.sizes.split(",")] if args.sizes
            else (SMOKE_SIZES if args.smoke else FULL_SIZES)[p] for p in profiles}
    tasks = [(p, learnings, projects) for p in profiles for learnings, projects in plan[p]]
    if args.part:
        tasks = [(p, int(s), int(k)) for p, s, k in (t.split(":") for t in args.tasks.split(","))]
        Path(args.part).write_text(json.dumps(measure_homes(args, tasks), default=str) + "\n")
        return 0
    started = time.time()
    load_before = " ".join(f"{x:.2f}" for x in os.getloadavg())
    ensure_tool("rg", "ripgrep", allow_install=not args.smoke)
    ensure_tool("valgrind", "valgrind", allow_install=not args.smoke)
    ensure_tool("faketime", "faketime", allow_install=True)
    side_by_side = args.jobs > 1 and len(tasks) > 1
    workdir = Path(args.workdir or tempfile.mkdtemp(prefix="learn-bench-"))
    try:
        figures = measure_side_by_side(args, tasks, workdir) if side_by_side else measure_homes(
            argparse.Namespace(**dict(vars(args), workdir=str(workdir))), tasks)
        out = Path(args.out) if args.out else (workdir / "BENCHMARKS.md" if args.smoke else ROOT / "BENCHMARKS.md")
        svg = Path(args.svg) if args.svg else (
            workdir / "latency.svg" if args.smoke else ROOT / "bench" / "latency.svg")
        data = {
            "machine": dict(report.machine_info(figures["python"], figures["rg"]), load_before=load_before,
                            priority=priority, valgrind=figures["valgrind"],
                            side_by_side=args.jobs if side_by_side else 1),
            "runs": figures["runs"], "smoke": args.smoke, "seed": args.seed,
            "sizes": sorted({s for sizes in plan.values() for s, _ in sizes}),
            "profiles": {p: [s for s, _ in plan[p]] for p in profiles},
            "homes": figures["homes"], "inproc": figures["inproc"], "topic": TOPIC,
            "instructions": figures["instructions"], "results": figures["results"],
            "started": started, "seconds": time.time() - started,
        }
        raw = out.parent / (out.stem + ".json") if args.smoke or args.out else ROOT / "bench" / "results.json"
        raw.write_text(json.dumps(data, indent=1) + "\n")
        report.write(data, out, svg)
        print(f"wrote {out} and {svg} ({data['seconds']:.0f} s in all)", file=sys.stderr)
        print(out)
    finally:
        if not (args.keep or args.workdir or args.smoke):
            _rmtree(workdir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
