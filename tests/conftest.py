"""Shared fixtures. End-to-end tests run the installed `learn` executable in a subprocess with
a temporary home (SELF_LEARNING_HOME); nothing here touches the real `~`."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

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


class Learn:
    """Runs `learn` as a user would: a real process, a throwaway home, a project folder."""

    def __init__(self, home: Path, cwd: Path, tmp: Path):
        self.home = home
        self.cwd = cwd
        self.tmp = tmp
        self.exe = learn_executable()
        self.env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE", "LEARN_"))}
        self.env.update(SELF_LEARNING_HOME=str(home), NO_COLOR="1", HOME=str(tmp / "userhome"),
                        COLUMNS="100", PYTHONDONTWRITEBYTECODE="1")
        (tmp / "userhome").mkdir(exist_ok=True)

    def __call__(self, *args, input=None, cwd=None, env=None, timeout=60, check=None) -> subprocess.CompletedProcess:
        full_env = dict(self.env, **(env or {}))
        if isinstance(input, (dict, list)):
            input = json.dumps(input)
        proc = subprocess.run([self.exe, *map(str, args)], input=input, capture_output=True, text=True,
                              cwd=str(cwd or self.cwd), env=full_env, timeout=timeout)
        if check is not None:
            assert proc.returncode == check, (proc.returncode, proc.stdout, proc.stderr)
        return proc

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
