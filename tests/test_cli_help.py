"""Help reads as conventional text off a terminal (piped, NO_COLOR, TERM=dumb), every option
shows a readable placeholder (the man page too), and shell completion works for bash, zsh and
fish."""

from __future__ import annotations

import os
import re
import shutil
import subprocess

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
