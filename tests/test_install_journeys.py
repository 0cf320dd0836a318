"""The two ways a newcomer installs learn, end to end: from a clone (`make install`, then
`make uninstall` leaves nothing), and as a tool from the repository (`uv tool install`, which
is what `pipx install .` does too). Each time the hooks name the `learn` that was installed
(its interpreter on its package's hook entry script), and that `learn` carries its own docs
(`learn help`, the man page)."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def journey_env(tmp: Path, bindir: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE", "LEARN_", "MAKE", "UV_"))}
    home = tmp / "userhome"
    home.mkdir(exist_ok=True)
    env.update(HOME=str(home), SELF_LEARNING_HOME=str(tmp / "store"), NO_COLOR="1",
               PATH=f"{bindir}:{env.get('PATH', '/usr/bin:/bin')}", PYTHONDONTWRITEBYTECODE="1")
    return env


def run(args, env, cwd=None, timeout=300) -> subprocess.CompletedProcess:
    proc = subprocess.run([str(a) for a in args], capture_output=True, text=True, env=env, cwd=cwd,
                          timeout=timeout, check=False)
    assert proc.returncode == 0, (args, proc.stdout, proc.stderr)
    return proc


def hooks_run_the_installed_learn(learn: Path, env: dict, project: Path) -> None:
    """`learn hooks install` registers this learn, and the registered commands run."""
    run([learn, "hooks", "install"], env)
    settings = Path(env["HOME"]) / ".claude" / "settings.json"
    doc = json.loads(settings.read_text())
    start = doc["hooks"]["SessionStart"][0]["hooks"][0]["command"]
    capture = doc["hooks"]["PostToolUseFailure"][0]["hooks"][0]["command"]
    # the installed learn's interpreter (its script's #! line), without `site`, on its package's entry script
    python = learn.resolve().read_text().splitlines()[0].removeprefix("#!")
    words = shlex.split(capture)
    assert words[:2] == [python, "-S"] and words[2].endswith(os.path.join("learn_cli", "hook_entry.py"))
    assert os.path.isfile(words[2]) and Path(words[2]).resolve().is_relative_to(Path(python).parents[1])
    assert start == shlex.join(words[:3]) + " context --hook" and capture == shlex.join(words[:3]) + " capture"
    failure = {"session_id": "s1", "cwd": str(project), "hook_event_name": "PostToolUseFailure",
               "tool_name": "Bash", "tool_input": {"command": "pytest"}, "tool_use_id": "t1",
               "error": "bash: pytest: command not found", "is_interrupt": False}
    proc = subprocess.run(["sh", "-c", capture], input=json.dumps(failure), capture_output=True, text=True,
                          env=env, cwd=project, timeout=60, check=False)
    assert proc.returncode == 0 and proc.stderr == ""
    assert (Path(env["SELF_LEARNING_HOME"]) / "config.json").is_file()  # the capture made the store


def carries_its_docs(learn: Path, env: dict) -> None:
    assert run([learn, "help", "hooks"], env).stdout.startswith("# learn hooks\n")
    man = Path(run([learn, "help", "--man"], env).stdout.strip())
    assert man.is_file() and man.read_text().startswith(".TH LEARN 1")


def test_from_a_clone_make_install_then_uninstall_leaves_nothing(tmp_path):
    prefix = tmp_path / "prefix"
    env = journey_env(tmp_path, prefix / "bin")
    # -o: the virtualenv is the one the tests run from (make test just built it); never rebuild it here
    out = run(["make", "-s", "-C", ROOT, "-o", ".venv/.installed", "install", f"PREFIX={prefix}"], env).stdout
    assert out.startswith("make install writes: ")  # where it writes, said before it writes
    learn = prefix / "bin" / "learn"
    assert learn.is_symlink()
    installed = {str(p.relative_to(prefix)) for p in prefix.rglob("*") if p.is_file()}
    assert installed == {"bin/learn", "share/man/man1/learn.1", "share/bash-completion/completions/learn",
                         "share/zsh/site-functions/_learn", "share/fish/vendor_completions.d/learn.fish"}
    project = tmp_path / "work" / "api"
    (project / ".git").mkdir(parents=True)
    hooks_run_the_installed_learn(learn, env, project)
    carries_its_docs(learn, env)
    run(["make", "-s", "-C", ROOT, "uninstall", f"PREFIX={prefix}"], env)
    assert not prefix.exists()
    assert not (Path(env["HOME"]) / ".claude").exists()  # the hooks it registered went with it
    assert (ROOT / ".venv" / "bin" / "learn").exists()  # the clone's own virtualenv stays (make clean)


def source_tree(dest: Path) -> Path:
    """What a clone holds for building the package (no caches, no virtualenv)."""
    dest.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, dest / name)
    skip = shutil.ignore_patterns("__pycache__", "*.pyc")
    for name in ("docs", "man", "learn_cli"):
        shutil.copytree(ROOT / name, dest / name, symlinks=True, ignore=skip)
    return dest


def test_as_a_tool_uv_tool_install_from_the_repository(tmp_path):
    uv = Path(sys.executable).with_name("uv")
    assert uv.exists(), "uv is a test dependency: run `make install` (pip install '.[test]')"
    bindir, tools = tmp_path / "bin", tmp_path / "tools"
    env = journey_env(tmp_path, bindir)
    env.update(UV_TOOL_DIR=str(tools), UV_TOOL_BIN_DIR=str(bindir), UV_NO_PROGRESS="1",
               UV_CACHE_DIR=str(ROOT / ".venv" / "uv-cache"))  # a cache beside the venv, never in ~
    source = source_tree(tmp_path / "src")
    run([uv, "tool", "install", "--python", sys.executable, source], env)
    learn = bindir / "learn"
    assert run([learn, "--version"], env).stdout.startswith("learn ")
    carries_its_docs(learn, env)
    project = tmp_path / "work" / "api"
    (project / ".git").mkdir(parents=True)
    hooks_run_the_installed_learn(learn, env, project)
    run([learn, "hooks", "uninstall"], env)
    run([uv, "tool", "uninstall", "learn-cli"], env)
    assert not learn.exists() and not (tools / "learn-cli").exists()
    assert not (Path(env["HOME"]) / ".claude").exists()


@pytest.mark.skipif(shutil.which("make") is None, reason="make not installed")
def test_make_says_where_it_writes_without_writing(tmp_path):
    out = run(["make", "-s", "-n", "-C", ROOT, "-o", ".venv/.installed", "install", f"PREFIX={tmp_path / 'p'}"],
              journey_env(tmp_path, tmp_path)).stdout
    assert f"{tmp_path / 'p'}/bin/learn" in out and not (tmp_path / "p").exists()


def test_the_documented_crontab_line_is_quiet_on_success(learn):
    """The line of docs/install.md, with this machine's path, in cron's bare environment."""
    text = (ROOT / "docs" / "install.md").read_text()
    line = next(ln for ln in text.splitlines() if ln.endswith(" prune -q") and ln.startswith("17 4 "))
    command = line.split(None, 5)[5].replace("/home/you/.local/bin/learn", learn.exe)
    for i in range(3):
        learn("add", f"thing {i} needs a fix", "--fix", "do it", check=0)
    cron_env = {"PATH": "/usr/bin:/bin", "HOME": learn.env["HOME"], "SHELL": "/bin/sh",
                "SELF_LEARNING_HOME": learn.env["SELF_LEARNING_HOME"]}
    proc = subprocess.run(["sh", "-c", command], capture_output=True, text=True, env=cron_env, timeout=60, check=False)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")
