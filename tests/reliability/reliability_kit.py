"""Helpers shared by the reliability suite: hook payloads, in-process hook calls, a reader that
checks every file of a home, record builders, the secrets corpus.

Imported by the test modules of this folder as `reliability_kit` (pytest puts the folder on
sys.path: there is no __init__.py).
"""

from __future__ import annotations

import collections
import importlib.util
import io
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
ROOT = TESTS.parent
DATA = TESTS / "data"
HERE = Path(__file__).resolve().parent
# `make fuzz` (LEARN_TESTS_FULL=1): the volume attacks at full size; `make test` sizes them
# down (tests/conftest.py).
FULL = os.environ.get("LEARN_TESTS_FULL") == "1"


def volume(full: int, ci: int) -> int:
    """How many of something an attack makes: `full` with `make fuzz`, `ci` in `make test`."""
    return full if FULL else ci

# Letters only, no a-f-only runs: random words never look like hex, numbers or versions, so
# error keys and near-duplicate detection treat every generated text as distinct.
_ONSETS = "bdgklmnprstvz"
_VOWELS = "aeiou"


def word(rng: random.Random, syllables: int = 3) -> str:
    return "".join(rng.choice(_ONSETS) + rng.choice(_VOWELS) for _ in range(syllables)) + rng.choice("xyzqw")


def letters(number: int) -> str:
    """A number spelled in letters g..p (so it survives every key normalisation)."""
    return "".join("ghijklmnop"[int(d)] for d in str(number))


def words(rng: random.Random, n: int) -> str:
    return " ".join(word(rng) for _ in range(n))


# ---------------------------------------------------------------------------------------------
# Hook payloads (Claude Code shapes, reference/agent-hooks.md)


def _base(cwd, event: str, sid: str) -> dict:
    return {"session_id": sid, "transcript_path": "/tmp/t.jsonl", "cwd": str(cwd),
            "permission_mode": "default", "hook_event_name": event}


def failure(cwd, sid: str, tuid: str, command: str, error: str, code: int = 1) -> dict:
    doc = _base(cwd, "PostToolUseFailure", sid)
    doc.update(tool_name="Bash", tool_input={"command": command, "description": "run"}, tool_use_id=tuid,
               error=f"Exit code {code}\n{error}", is_interrupt=False)
    return doc


def success(cwd, sid: str, tuid: str, command: str, stdout: str = "ok") -> dict:
    doc = _base(cwd, "PostToolUse", sid)
    doc.update(tool_name="Bash", tool_input={"command": command, "description": "run"}, tool_use_id=tuid,
               tool_response={"stdout": stdout, "stderr": "", "interrupted": False, "isImage": False})
    return doc


def prompt(cwd, sid: str, text: str) -> dict:
    doc = _base(cwd, "UserPromptSubmit", sid)
    doc["prompt"] = text
    return doc


def session_end(cwd, sid: str) -> dict:
    doc = _base(cwd, "SessionEnd", sid)
    doc["reason"] = "other"
    return doc


# ---------------------------------------------------------------------------------------------
# Running the hook in this process (stdin must be a real file: the hook reads its fd)


def run_hook(payload, argv=(), entry=None) -> tuple[int, str, str]:
    """`learn capture` in this process: (exit code, stdout, stderr)."""
    from learn_cli.capture import hook

    entry = entry or hook.main
    data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    real = sys.stdin, sys.stdout, sys.stderr
    with tempfile.TemporaryFile() as fh:
        fh.write(data)
        fh.seek(0)
        out, err = io.StringIO(), io.StringIO()
        sys.stdin, sys.stdout, sys.stderr = fh, out, err
        try:
            code = entry(list(argv))
        finally:
            sys.stdin, sys.stdout, sys.stderr = real
    return code, out.getvalue(), err.getvalue()


def check_hook_stdout(text: str) -> dict | None:
    """Empty, or exactly one JSON object with hookSpecificOutput (raises AssertionError)."""
    if text == "":
        return None
    assert text.endswith("\n") and text.count("\n") == 1, repr(text[:300])
    doc = json.loads(text)
    assert isinstance(doc, dict) and set(doc) == {"hookSpecificOutput"}, doc
    inner = doc["hookSpecificOutput"]
    assert isinstance(inner.get("hookEventName"), str) and isinstance(inner.get("additionalContext"), str), doc
    return doc


# ---------------------------------------------------------------------------------------------
# Reading a home the way a careful auditor would


def data_files(home: Path) -> list[Path]:
    """Every record file of the store (what the index is built from)."""
    home = Path(home)
    files = [home / "global" / n for n in ("errors.jsonl", "patterns.jsonl", "preferences.json", "archive.jsonl")]
    projects = home / "projects"
    if projects.is_dir():
        for d in sorted(projects.iterdir()):
            if d.is_dir():
                files += [d / "learnings.jsonl", d / "archive.jsonl"]
    return [f for f in files if f.exists()]


def load_all(home: Path) -> dict[str, dict]:
    """rel path -> {id: record} for every data file; asserts every line of every file parses."""
    from learn_cli.store import jsonl

    out = {}
    for path in data_files(home):
        loaded = jsonl.load(path)
        assert not loaded.bad, f"{path}: {loaded.bad[:3]}"
        out[str(path.relative_to(home))] = loaded.records
    return out


def every_file_parses(home: Path) -> int:
    """Every .jsonl and .json file under the home parses completely; returns files checked."""
    from learn_cli.store import jsonl

    checked = 0
    for path in Path(home).rglob("*"):
        if not path.is_file():
            continue
        if path.suffix == ".jsonl":
            bad = jsonl.parse_log(str(path), path.read_bytes()).bad
            assert not bad, f"{path}: {bad[:3]}"
        elif path.suffix == ".json":
            data = path.read_bytes()
            if data.strip():  # an empty document reads as empty, by design
                json.loads(data)
        else:
            continue
        checked += 1
    return checked


def records_by_id(home: Path) -> dict[str, list[tuple[str, dict]]]:
    """id -> [(rel file, record), ...] over all data files."""
    out: dict[str, list] = {}
    for rel, recs in load_all(home).items():
        for rid, rec in recs.items():
            out.setdefault(rid, []).append((rel, rec))
    return out


_ISO = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$")


def normalized(rec: dict, known_ids: set | frozenset = frozenset()) -> str:
    """A record's content without what depends on the moment it was written: times, and (given
    the ids that existed before) the ids of records made since, which differ on every run."""
    def norm(value):
        if isinstance(value, str) and _ISO.match(value):
            return "<time>"
        if known_ids and isinstance(value, str) and value.startswith("learn-") and value not in known_ids:
            return "<new id>"
        if isinstance(value, dict):
            return {k: norm(v) for k, v in value.items() if k != "updated"}
        if isinstance(value, list):
            return [norm(v) for v in value]
        return value

    return json.dumps(norm(rec), sort_keys=True)


def tree_bytes(home: Path, skip=("index.db", ".lock")) -> dict[str, bytes]:
    """Every file's bytes under home (derived index and lock files left out)."""
    out = {}
    for path in sorted(Path(home).rglob("*")):
        if path.is_file() and not any(s in path.name for s in skip):
            out[str(path.relative_to(home))] = path.read_bytes()
    return out


# ---------------------------------------------------------------------------------------------
# Building stores directly (fast set-up for the crash and import tests)


def project_dir(base: Path, name: str, remote: str | None = None) -> Path:
    path = Path(base) / name
    path.mkdir(parents=True, exist_ok=True)
    if remote:
        (path / ".git").mkdir(exist_ok=True)
        (path / ".git" / "config").write_text(f'[remote "origin"]\n\turl = {remote}\n')
    return path


def error_record(rng: random.Random, project, **fields) -> dict:
    from learn_cli.engine.knowledge import key_for
    from learn_cli.store.record import make_record

    prog = word(rng, 2)
    rec = make_record(type="error", category="dependency", error=f"Error: {words(rng, 6)} not found",
                      fix=f"{prog} install {word(rng)}", context=f"running {prog} {word(rng)}",
                      command=f"{prog} {word(rng)}", project=project.name, projects=[project.id],
                      source="manual", status="active", impact=0.8, frequency=5)
    rec.update(fields)
    rec["key"] = fields.get("key") or key_for(rec)
    return rec


def secrets_corpus():
    """tests/data/secrets_corpus.py, loaded by path (it is not a package)."""
    path = DATA / "secrets_corpus.py"
    spec = importlib.util.spec_from_file_location("secrets_corpus", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def learn_env(home: Path, userhome: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE", "LEARN_"))}
    env.update(SELF_LEARNING_HOME=str(home), NO_COLOR="1", HOME=str(userhome), COLUMNS="100",
               PYTHONDONTWRITEBYTECODE="1")
    return env


def learn_exe(home: Path, cwd: Path, *args, input=None) -> subprocess.CompletedProcess:
    """The installed `learn` as a separate process in `cwd` (a dict or list input is sent as JSON)."""
    env = learn_env(home, cwd.parent / "userhome")
    (cwd.parent / "userhome").mkdir(exist_ok=True)
    if isinstance(input, (dict, list)):
        input = json.dumps(input)
    return subprocess.run([str(Path(sys.executable).with_name("learn")), *map(str, args)], input=input,
                          capture_output=True, text=True, cwd=cwd, env=env, timeout=120, check=False)


def learn_here(home: Path, cwd: Path, *args, input=None) -> subprocess.CompletedProcess:
    """`learn_exe` in this process (tests/conftest.py's `Learn`, the hook calls included): the
    same entry point, environment, folders and streams, without a process start (~0.1 s of CPU
    for a hook, ~0.3 s for a command). For what a command or hook writes and prints; what only a
    process shows (exit codes of the real binary, signals, limits, several at once) keeps
    `learn_exe`. Not from threads: it switches the process's environment and folder."""
    from conftest import Learn

    learn = Learn(home, cwd, cwd.parent)
    return learn.hook(*args, input=input)


# ---------------------------------------------------------------------------------------------
# A home that cannot be written


def read_only(home: Path, tmp: Path):
    """Make `home` read-only for the `with` block; yields the uid to run `learn` as (None: the
    current user). A read-only bind mount where the machine allows it, else an unprivileged
    user (root writes through chmod), else a folder without write permission. Skips the test
    when none of these is possible."""
    import contextlib
    import shutil

    import pytest

    @contextlib.contextmanager
    def made_read_only():
        if subprocess.run(["mount", "--bind", str(home), str(home)], capture_output=True).returncode == 0:
            if subprocess.run(["mount", "-o", "remount,bind,ro", str(home)], capture_output=True).returncode == 0:
                try:
                    yield None
                finally:
                    subprocess.run(["umount", "-l", str(home)], capture_output=True)
                return
            subprocess.run(["umount", "-l", str(home)], capture_output=True)
        if os.geteuid() == 0 and shutil.which("setpriv"):
            for path in [tmp, *tmp.rglob("*")]:
                os.chmod(path, 0o755 if path.is_dir() else 0o644)
            if not all(os.access(parent, os.X_OK, effective_ids=False) for parent in tmp.parents):
                pytest.skip("the temporary folder is not reachable by an unprivileged user")
            yield 65534
            return
        if os.geteuid() != 0:
            os.chmod(home, 0o500)
            try:
                yield None
            finally:
                os.chmod(home, 0o700)
            return
        pytest.skip("no way to make the home read-only here (no bind mount, no setpriv)")

    return made_read_only()


def as_user(uid: int | None) -> list[str]:
    """The command prefix that runs a program as `uid` (nothing for the current user)."""
    return [] if uid is None else ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups"]


class Server:
    """The fork server of crash_server.py: each request's child starts its work at once (the
    server imported `learn` already), so a kill -9 lands in the work, not in Python's start-up."""

    def __init__(self):
        script = Path(__file__).with_name("crash_server.py")
        env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
        self.proc = subprocess.Popen([sys.executable, str(script)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     text=True, env=env, bufsize=1)

    def start(self, request: dict) -> int:
        self.proc.stdin.write(json.dumps(request) + "\n")
        self.proc.stdin.flush()
        return json.loads(self.proc.stdout.readline())["pid"]

    def wait(self) -> tuple[int, float]:
        done = json.loads(self.proc.stdout.readline())
        return done["status"], done["elapsed"]

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


# ---------------------------------------------------------------------------------------------
# Timing a process by what it does, not by the machine's queue


def cpu_wait(schedstat: str = "/proc/thread-self/schedstat") -> float:
    """Seconds a task has spent runnable but not running (field 2 of /proc/…/schedstat); 0
    where there is no /proc (macOS): the wall clock is then all there is to go by."""
    try:
        with open(schedstat) as fh:
            return int(fh.read().split()[1]) / 1e9
    except FileNotFoundError:
        return 0.0


Timed = collections.namedtuple("Timed", "own wall proc")


PIPE_CAPACITY = 64 * 1024  # Linux's default pipe buffer


def prefilled_pipe(data: bytes) -> int:
    """The read end of a pipe that already holds `data` and is closed for writing."""
    read, write = os.pipe()
    try:
        os.write(write, data)
    finally:
        os.close(write)
    return read


def run_timed(cmd: list[str], input: str, env: dict, timeout: float, cwd=None) -> Timed:
    """Run a process to its end: its own seconds, its wall-clock seconds, the process. Its own
    seconds run from its start to its end, less the time it waited for a CPU and the time this
    thread waited for one before seeing the end: what a loaded machine adds and no process can
    shorten. What it runs and every wait of its own (a lock, a sleep, the disk) count."""
    queued = cpu_wait()
    payload = input.encode()
    # An agent writes the payload as it starts the hook. A thread of this process, one of
    # hundreds under one GIL on a starved machine, can take more than 10 s to write it, and a
    # hook rightly stops waiting for a payload long before that: the payload is in the pipe
    # before the process starts (a pipe holds 64 KiB), as the agent would have it.
    prefilled = len(payload) < PIPE_CAPACITY
    stdin = prefilled_pipe(payload) if prefilled else subprocess.PIPE
    started = time.monotonic()
    try:
        proc = subprocess.Popen(cmd, stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                env=env, cwd=cwd)
    finally:
        if prefilled:
            os.close(stdin)
    streams: dict = {}
    readers = [threading.Thread(target=lambda name, fh: streams.__setitem__(name, fh.read()), args=(name, fh))
               for name, fh in (("out", proc.stdout), ("err", proc.stderr))]
    timed_out = threading.Event()
    killer = threading.Timer(timeout, lambda: (timed_out.set(), proc.kill()))
    for thread in (*readers, killer):
        thread.start()
    if not prefilled:
        try:
            proc.stdin.write(input)
            proc.stdin.close()
        except BrokenPipeError:
            pass
    os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOWAIT)  # ended, not reaped: its schedstat is still there
    wall = time.monotonic() - started
    own = wall - cpu_wait(f"/proc/{proc.pid}/schedstat") - (cpu_wait() - queued)
    killer.cancel()
    proc.wait()
    for thread in readers:
        thread.join()
    if timed_out.is_set():
        raise subprocess.TimeoutExpired(cmd, timeout)
    return Timed(own, wall, subprocess.CompletedProcess(cmd, proc.returncode, streams["out"], streams["err"]))
