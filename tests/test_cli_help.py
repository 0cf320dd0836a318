"""Help reads as conventional text off a terminal (piped, NO_COLOR, TERM=dumb), every option
shows a readable placeholder (the man page too), and shell completion works for bash, zsh and
fish."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

import pytest

from conftest import run_with_terminal
from learn_cli.cli import app, run
from learn_cli.help import build

BOX = re.compile("[╭╮╰╯│─]")
PYTHON_TYPES = re.compile(r"<(str|bool|int|float|list\[[^\]]*\]|int range|float range)>|\{[A-Z]+\.\.\.\}|[A-Z]_\b")


def all_command_paths() -> list[list[str]]:
    root = build(app)
    paths = [[]]
    for name, cmd in root.commands.items():
        paths.append([name])
        paths.extend([name, sub] for sub in getattr(cmd, "commands", {}))
    return paths


def test_every_help_is_plain_text_with_readable_placeholders(capsys):
    paths = all_command_paths()
    assert ["hooks", "install"] in paths and ["completion"] in paths
    for path in paths:
        assert run([*path, "--help"]) == 0
        out = capsys.readouterr().out
        assert out.startswith("Usage: learn"), path
        assert not BOX.search(out), (path, out)
        assert not PYTHON_TYPES.search(out), (path, out)
    run(["--help"])
    top = capsys.readouterr().out
    assert "--home DIR" in top and "--project DIR" in top
    run(["recall", "--help"])
    recall = capsys.readouterr().out
    assert "Usage: learn recall [OPTIONS] TOPIC...\n" in recall and "-n, --limit N" in recall
    run(["graph", "--help"])
    assert "--format [text|json|dot|mermaid]" in capsys.readouterr().out


def test_the_packaged_top_help_is_what_typer_prints(capsys, monkeypatch):
    """man/help.txt (served by `learn --help` off a terminal, without typer) is typer's own
    plain output at the widest layout; after changing a command or its help line: `make man`."""
    monkeypatch.setenv("COLUMNS", "80")
    assert run(["--help"]) == 0
    typer_text = capsys.readouterr().out
    assert (learn_root() / "man" / "help.txt").read_text(encoding="utf-8") == typer_text, "run `make man`"


@pytest.mark.parametrize("columns", ["80", "200", None])
def test_top_help_off_a_terminal_is_served_without_typer(learn, columns):
    """Piped `learn --help` / `-h` print the packaged text and never import typer; a layout
    narrower than click's widest is typer's to wrap."""
    env = {k: v for k, v in learn.env.items() if k != "COLUMNS"}
    if columns:
        env["COLUMNS"] = columns
    probe = ("import sys; from learn_cli.__main__ import main; code = main([sys.argv[1]]); "
             "sys.stdout.flush(); sys.exit(code if 'typer' not in sys.modules else 99)")
    packaged = (learn_root() / "man" / "help.txt").read_text(encoding="utf-8")
    for flag in ("--help", "-h"):
        done = subprocess.run([sys.executable, "-c", probe, flag], env=env, capture_output=True, text=True,
                              check=False)
        assert (done.returncode, done.stdout) == (0, packaged)


def test_top_help_into_a_closed_pipe_or_stdout_is_quiet(learn):
    """`learn --help | head -1`, and a closed stdout: exit 0 or typer's answer, no traceback."""
    proc = subprocess.run(f"'{learn.exe}' --help | head -1", shell=True, env=learn.env, capture_output=True,
                          text=True, check=False)
    assert proc.stdout == "Usage: learn [OPTIONS] COMMAND [ARGS]...\n" and "Traceback" not in proc.stderr
    closed = subprocess.run([learn.exe, "--help"], env=learn.env, capture_output=True, text=True, check=False,
                            preexec_fn=lambda: os.close(1))
    assert "Traceback" not in closed.stderr and "Exception ignored" not in closed.stderr


def test_a_narrow_layout_is_left_to_typer(learn):
    env = dict(learn.env, COLUMNS="60")
    narrow = subprocess.run([learn.exe, "--help"], env=env, capture_output=True, text=True, check=True).stdout
    assert narrow.startswith("Usage: learn [OPTIONS] COMMAND [ARGS]...")
    assert narrow != (learn_root() / "man" / "help.txt").read_text(encoding="utf-8")  # wrapped at 60


def on_a_terminal(learn, *args, env=None) -> str:
    """`learn ARGS` with stdout on a pseudo-terminal; what it printed."""
    shown, _err, code = run_with_terminal([learn.exe, *args], dict(learn.env, **(env or {})))
    assert code == 0
    return shown


def test_boxes_only_on_a_colour_terminal(learn):
    env = {k: v for k, v in learn.env.items() if k != "NO_COLOR"}
    learn.env = env
    assert BOX.search(on_a_terminal(learn, "recall", "--help", env={"TERM": "xterm-256color"}))
    assert not BOX.search(on_a_terminal(learn, "recall", "--help", env={"TERM": "dumb"}))
    assert not BOX.search(on_a_terminal(learn, "recall", "--help", env={"TERM": "xterm", "NO_COLOR": "1"}))
    piped = learn("--help", check=0).stdout
    assert piped.startswith("Usage: learn [OPTIONS] COMMAND [ARGS]...") and not BOX.search(piped)


def test_the_man_page_shows_the_same_placeholders(learn):
    man = (learn_root() / "man" / "learn.1").read_text()
    assert r"\-\-type\fR \fITYPE\fR" in man and "TYPE_" not in man
    assert r"\fBlearn recall\fR [\fIOPTIONS\fR] \fITOPIC...\fR" in man
    assert r"\fBlearn completion\fR" in man  # regenerated (make man) after the last command was added


def learn_root():
    from pathlib import Path

    return Path(__file__).resolve().parents[1]


def test_completion_scripts_and_answers(learn):
    for shell, marker in (("bash", "complete -o default -F"), ("zsh", "#compdef learn"),
                          ("fish", "complete --command learn")):
        script = learn("completion", shell, check=0).stdout
        assert marker in script and "_LEARN_COMPLETE" in script
    bad = learn("completion", "tcsh")
    assert bad.returncode == 2 and "bash, zsh, fish" in bad.stderr
    zsh = learn(env={"_LEARN_COMPLETE": "complete_zsh", "_TYPER_COMPLETE_ARGS": "learn hooks ins"}, check=0)
    assert "install" in zsh.stdout and "uninstall" not in zsh.stdout
    fish = learn(env={"_LEARN_COMPLETE": "complete_fish", "_TYPER_COMPLETE_FISH_ACTION": "get-args",
                      "_TYPER_COMPLETE_ARGS": "learn rec"}, check=0)
    assert "recall" in fish.stdout


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash not installed")
def test_bash_completes_through_the_generated_script(learn):
    script = learn("completion", "bash", check=0).stdout
    bindir = learn.tmp / "bin"
    bindir.mkdir()
    (bindir / "learn").symlink_to(learn.exe)
    probe = (f"{script}\nCOMP_WORDS=(learn rec); COMP_CWORD=1; _learn_completion learn; "
             'printf "%s\\n" "${COMPREPLY[@]}"\n'
             "COMP_WORDS=(learn graph --format ''); COMP_CWORD=3; _learn_completion learn; "
             'printf "%s\\n" "${COMPREPLY[@]}"\n')
    env = dict(learn.env, PATH=f"{bindir}:{learn.env['PATH']}")
    out = subprocess.run(
        ["bash", "--norc", "-c", probe], check=False, capture_output=True, text=True, env=env, timeout=30
    )
    assert out.returncode == 0, out.stderr
    words = out.stdout.split()
    assert "recall" in words
    assert {"text", "json", "dot", "mermaid"} <= set(words)


def test_help_pages_ship_inside_the_package(learn):
    listing = learn("help", check=0).stdout
    assert "recall" in listing and "hooks" in listing
    page = learn("help", "hooks", check=0).stdout
    assert page.startswith("# learn hooks\n")
    man = learn.proc("help", "--man", check=0).stdout.strip()  # the installed package, not the tree
    assert man.endswith("learn.1") and "site-packages" in man and os.path.isfile(man)
    missing = learn("help", "nosuch")
    assert missing.returncode == 1 and "no help page for 'nosuch'" in missing.stderr


def test_every_command_has_a_help_page():
    pages = {p.name[4:-3] for p in (learn_root() / "docs").glob("cmd-*.md")}
    assert set(build(app).commands) <= pages
