"""Shared fixtures. Command tests run `learn` with a temporary home (SELF_LEARNING_HOME): in this
process for the typer commands, in a real process of the installed `learn` for the hook path and
process-level behaviour (see `Learn`); nothing here touches the real `~`."""

from __future__ import annotations

import contextlib
import gc
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import settings

# `make test` (CI) sizes the volume attacks of tests/reliability to keep its CPU time in
# bounds; `make fuzz` sets LEARN_TESTS_FULL=1 and runs them at full size. The fuzzers
# (test_rel_fuzz.py) draw as many inputs as the hypothesis profile says: 1,000 each in CI,
# 10,000 in full. The property tests elsewhere name their own counts.
FULL = os.environ.get("LEARN_TESTS_FULL") == "1"
settings.register_profile("ci", max_examples=1_000)
settings.register_profile("fuzz", max_examples=10_000)
settings.load_profile("fuzz" if FULL else "ci")

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"


def learn_executable() -> str:
    """The `learn` installed beside the interpreter running the tests (the venv's)."""
    candidate = Path(sys.executable).with_name("learn")
    if candidate.exists():
        return str(candidate)
    found = shutil.which("learn")
    if not found:
        pytest.exit("the `learn` executable is not installed: run `make install` first", 2)
    return found


def pytest_sessionstart(session) -> None:
    """Stop at once when the installed `learn` is not the code in this tree (`make install`
    reinstalls it after every change; running pytest alone after an edit would test the old)."""
    probe = subprocess.run([sys.executable, "-c", "import learn_cli, os; print(os.path.dirname(learn_cli.__file__))"],
                           capture_output=True, text=True, cwd="/", check=False)
    installed = Path(probe.stdout.strip()) if probe.returncode == 0 else None
    if installed is None:
        pytest.exit("learn_cli is not installed in this interpreter: run `make install` first", 2)
    source = ROOT / "learn_cli"
    stale = [str(p.relative_to(source)) for p in sorted(source.rglob("*.py"))
             if not (installed / p.relative_to(source)).is_file()
             or (installed / p.relative_to(source)).read_bytes() != p.read_bytes()]
    if stale:
        pytest.exit(f"the installed learn ({installed}) differs from the source in {len(stale)} files "
                    f"({', '.join(stale[:3])}...): run `make install`", 2)


def _is_hook_call(args: list[str]) -> bool:
    """The hook path, which agents run as a process on every tool call: its clock starts with
    the process, SIGALRM bounds it, stdout carries only hook JSON, the regex cache patches `re`
    for the process. `learn(...)` always sends it to the real executable."""
    from learn_cli.__main__ import split_global_options

    rest = split_global_options(args)[1]
    return rest[:1] == ["capture"] or (rest[:1] == ["context"] and "--hook" in rest)


class Learn:
    """Runs `learn` as a user would, with a throwaway home and a project folder.

    `learn(*args, input=None, cwd=None, env=None, check=None)` -> CompletedProcess-like
    (returncode, stdout, stderr). Typer commands run IN THIS PROCESS: `learn_cli.__main__.main`,
    what the installed script calls, with the state a fresh process would have: the environment
    is exactly `self.env` (+ `env`), the working directory `cwd`, `sys.argv[0]` the installed
    executable, stdin a file holding `input` (empty without it), stdout and stderr pipes (not a
    terminal); `SystemExit` becomes the exit code. Afterwards the environment, cwd, argv,
    streams, umask, the garbage collector (`learn_cli.cli.run` disables it for the command's
    short life) and the store's deadline are put back, so nothing leaks into the next call.
    A process costs ~0.3 s of CPU (python + typer + rich imports); a call here ~10 ms.

    `learn.proc(...)` (same arguments, plus `timeout`) runs the installed executable in a real
    process. Kept for:
      - the hook path (`learn capture ...`, `learn context --hook`): `learn(...)` sends those to
        `proc` itself, as the agents run them; `learn.hook(...)` runs them in this process, for
        tests about what a hook learns rather than about its process;
      - end-to-end journeys (test_install_journeys, test_readme, tools/demo.sh) and the
        reliability attacks (tests/reliability, their own kit: crashes, concurrency, limits);
      - what only a process shows: the real binary's exit code and streams, signals,
        timeouts, terminal and NO_COLOR detection (`run_with_terminal`), file descriptors,
        several processes at once.
    """

    def __init__(self, home: Path, cwd: Path, tmp: Path):
        self.home = home
        self.cwd = cwd
        self.tmp = tmp
        self.exe = learn_executable()
        self.env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE", "LEARN_", "PYTEST_"))}
        self.env.update(SELF_LEARNING_HOME=str(home), NO_COLOR="1", HOME=str(tmp / "userhome"),
                        COLUMNS="100", PYTHONDONTWRITEBYTECODE="1")
        (tmp / "userhome").mkdir(exist_ok=True)

    @property
    def hook_command(self) -> str:
        """What `learn hooks install` registers before `capture` in user and local scope (and
        `learn hooks install` run in this process computes): this `learn`'s interpreter, without
        `site`, on the hook entry script of the learn_cli this process imported."""
        import shlex

        import learn_cli

        entry = os.path.join(os.path.dirname(learn_cli.__file__), "hook_entry.py")
        return f"{shlex.quote(str(Path(self.exe).with_name('python')))} -S {shlex.quote(entry)}"

    def hook_args(self, command: str) -> list[str]:
        """The `learn` arguments of a registered hook command (after `learn` or the entry script)."""
        import shlex

        prefix = shlex.split(self.hook_command)
        argv = shlex.split(command)
        assert argv[:len(prefix)] == prefix or argv[0] == self.exe, command
        return argv[len(prefix):] if argv[:len(prefix)] == prefix else argv[1:]

    def __call__(self, *args, input=None, cwd=None, env=None, timeout=60, check=None) -> subprocess.CompletedProcess:
        argv = list(map(str, args))
        if _is_hook_call(argv):
            return self.proc(*argv, input=input, cwd=cwd, env=env, timeout=timeout, check=check)
        from learn_cli.capture import regex_cache

        try:
            return self._in_process(argv, input, cwd, env, check)
        finally:
            regex_cache.uninstall()  # recall's fast path reads the hooks' cache, as its process would

    def hook(self, *args, input=None, cwd=None, env=None, check=None) -> subprocess.CompletedProcess:
        """A hook call (`capture ...`, `context --hook ...`) IN THIS PROCESS: the executable's
        entry point, argument parsing, guard, stdout JSON and regex cache included, minus the
        process: its start-up (~0.1 s of CPU a call), and its hard stop (the alarm raises into
        the work rather than ending the process). For tests about what the hook learns or
        answers; what only the process shows (exit code and streams of the real binary, the
        deadline, concurrency, crash-safety) stays with `learn(...)`, a real process."""
        from learn_cli.capture import regex_cache

        try:
            return self._in_process(list(map(str, args)), input, cwd, env, check)
        finally:
            regex_cache.uninstall()  # the hook patches `re` for its process; commands use it untouched

    def _in_process(self, argv, input, cwd, env, check) -> subprocess.CompletedProcess:
        if isinstance(input, (dict, list)):
            input = json.dumps(input)
        proc = run_in_process(self.exe, argv, input, str(cwd or self.cwd), dict(self.env, **(env or {})))
        if check is not None:
            assert proc.returncode == check, (proc.returncode, proc.stdout, proc.stderr)
        return proc

    def proc(self, *args, input=None, cwd=None, env=None, timeout=60, check=None) -> subprocess.CompletedProcess:
        """The installed `learn` in a real process."""
        full_env = dict(self.env, **(env or {}))
        if isinstance(input, (dict, list)):
            input = json.dumps(input)
        proc = subprocess.run([self.exe, *map(str, args)], input=input, capture_output=True, text=True,
                              cwd=str(cwd or self.cwd), env=full_env, timeout=timeout)
        if check is not None:
            assert proc.returncode == check, (proc.returncode, proc.stdout, proc.stderr)
        return proc

    def typer(self, *args, env=None) -> subprocess.CompletedProcess:
        """The typer app alone (`learn_cli.cli.run`: no fast path), in this process."""
        from learn_cli.cli import run

        return run_in_process(self.exe, list(map(str, args)), None, str(self.cwd), dict(self.env, **(env or {})),
                              entry=run)

    def json(self, *args, **kw):
        proc = self(*args, "--json", **kw)
        assert proc.returncode == 0, (proc.stdout, proc.stderr)
        return json.loads(proc.stdout)

    def project(self, name: str, remote: str | None = None, files: dict | None = None) -> Path:
        """A project folder; with `remote`, a git repository whose origin is that URL."""
        path = self.tmp / "work" / name
        path.mkdir(parents=True, exist_ok=True)
        if remote:
            git = path / ".git"
            git.mkdir(exist_ok=True)
            (git / "config").write_text(f'[core]\n\tbare = false\n[remote "origin"]\n\turl = {remote}\n')
        for rel, text in (files or {}).items():
            (path / rel).parent.mkdir(parents=True, exist_ok=True)
            (path / rel).write_text(text)
        return path


class _Pipe(io.BytesIO):
    """What a command writes to stdout or stderr; still readable after the command closed it."""

    def close(self) -> None:
        pass


def _universal_newlines(data: bytes, errors: str) -> str:
    """What `subprocess.run(text=True)` makes of a stream."""
    return data.decode("utf-8", errors).replace("\r\n", "\n").replace("\r", "\n")


def run_in_process(exe: str, argv: list[str], input: str | None, cwd: str, env: dict,
                   entry=None) -> subprocess.CompletedProcess:
    """`learn argv` in this process, isolated as `Learn.__call__` describes (`entry`: another
    entry point than `learn_cli.__main__.main`, called with argv)."""
    from learn_cli.__main__ import main
    from learn_cli.store import deadline

    main = entry or main

    saved_env, saved_cwd, saved_argv = dict(os.environ), os.getcwd(), sys.argv
    saved_streams = sys.stdin, sys.stdout, sys.stderr
    gc_was_on = gc.isenabled()
    umask = os.umask(0o022)
    os.umask(umask)
    out, err = _Pipe(), _Pipe()
    stdin = io.TextIOWrapper(tempfile.TemporaryFile(), encoding="utf-8")  # a file: the hook reads its fd
    stdin.write(input or "")
    stdin.seek(0)
    stdout = io.TextIOWrapper(out, encoding="utf-8", write_through=True)
    stderr = io.TextIOWrapper(err, encoding="utf-8", errors="backslashreplace", write_through=True)
    code = 0
    try:
        os.environ.clear()
        os.environ.update(env)
        os.chdir(cwd)
        sys.argv = [exe, *argv]
        sys.stdin, sys.stdout, sys.stderr = stdin, stdout, stderr
        try:
            code = main(argv)
        except SystemExit as exc:
            if exc.code is None or isinstance(exc.code, int):
                code = exc.code or 0
            else:
                print(exc.code, file=sys.stderr)
                code = 1
        with contextlib.suppress(ValueError):  # a command may have closed its stdout
            stdout.flush()
            stderr.flush()
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved_streams
        sys.argv = saved_argv
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
        os.umask(umask)
        deadline.set_deadline(None)
        if gc_was_on:
            gc.enable()
        stdin.close()
    return subprocess.CompletedProcess([exe, *argv], code if isinstance(code, int) else 0,
                                       _universal_newlines(out.getvalue(), "strict"),
                                       _universal_newlines(err.getvalue(), "backslashreplace"))


@pytest.fixture
def learn(tmp_path) -> Learn:
    home = tmp_path / "home"
    cwd = tmp_path / "work" / "web-api"
    cwd.mkdir(parents=True)
    return Learn(home, cwd, tmp_path)


@pytest.fixture
def store(tmp_path):
    """A Store in a temporary home, for in-process tests."""
    from learn_cli.store.api import Store

    s = Store(tmp_path / "home", warn_stderr=False)
    yield s
    s.close()


@pytest.fixture
def home(tmp_path) -> Path:
    """The temporary home of an in-process hook test (tests/test_capture_learner.py's Agent)."""
    return tmp_path / "home"


@pytest.fixture
def proj(tmp_path):
    """proj(name): a project folder under the temporary work folder, made on first use."""
    def make(name: str) -> Path:
        path = tmp_path / "work" / name
        path.mkdir(parents=True, exist_ok=True)
        return path
    return make


def shared_path(*parts) -> Path:
    """A file under ../shared; skips the test when shared/ is not beside the project."""
    path = SHARED.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"{path} not present")
    return path


def run_with_terminal(argv: list, env: dict, cwd=None, stream: str = "stdout") -> tuple[str, str, int]:
    """Run `argv` with its stdout (or stderr) on a pseudo-terminal, the other stream piped:
    (what reached the terminal, what was piped, the exit code)."""
    import pty

    master, slave = pty.openpty()
    streams = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE, stream: slave}
    try:
        proc = subprocess.run([str(a) for a in argv], text=True, cwd=cwd, env=env, timeout=60, check=False,
                              **streams)
    finally:
        os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:  # EIO: the terminal's other end closed, all read
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    piped = proc.stderr if stream == "stdout" else proc.stdout
    return b"".join(chunks).decode("utf-8", "replace"), piped, proc.returncode
