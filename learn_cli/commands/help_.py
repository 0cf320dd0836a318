"""`learn help [COMMAND]`: the full page of a command (docs/cmd-COMMAND.md), from the copy
shipped inside the package, so it reads the same however `learn` was installed (a clone,
pip, pipx, uv). `learn help --man` opens the man page shipped the same way."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import typer

from learn_cli.commands._common import fail

PACKAGE = Path(__file__).resolve().parents[1]


def docs_dir() -> Path:
    """The docs shipped in the package (learn_cli/docs: a link to ../docs in a clone)."""
    return PACKAGE / "docs"


def man_page() -> Path:
    return PACKAGE / "man" / "learn.1"


def topics() -> list[str]:
    return sorted(p.name[4:-3] for p in docs_dir().glob("cmd-*.md"))


def command(
    topic: str = typer.Argument(None, metavar="COMMAND", help="The command to explain (default: list them).",
                                show_default=False),
    man: bool = typer.Option(False, "--man", help="Open the man page (or print its path when piped)."),
) -> None:
    if man:
        return _man()
    if not topic:
        print("learn help COMMAND: the full page of one command (every option, --json schema, examples).")
        print("Commands: " + ", ".join(topics()))
        print(f"Man page: learn help --man   ({man_page()})")
        return
    page = docs_dir() / f"cmd-{topic}.md"
    if not page.is_file():
        fail(f"no help page for {topic!r}; known: {', '.join(topics())}")
    _show(page.read_text(encoding="utf-8"))


def _man() -> None:
    path = man_page()
    if not path.is_file():
        fail(f"the man page is missing from this install ({path})")
    viewer = shutil.which("man")
    if not sys.stdout.isatty() or viewer is None:
        print(path)
        return
    raise typer.Exit(subprocess.call([viewer, str(path)]))


def _show(text: str) -> None:
    pager = os.environ.get("PAGER") or shutil.which("less")
    if sys.stdout.isatty() and pager and text.count("\n") > 40:
        env = dict(os.environ, LESS=os.environ.get("LESS", "FRX"))
        _page(pager, text, env)
        return
    sys.stdout.write(text)


def _page(pager: str, text: str, env: dict) -> None:
    proc = subprocess.Popen(pager, shell=True, stdin=subprocess.PIPE, env=env)
    try:
        proc.communicate(text.encode("utf-8"))
    except BrokenPipeError:
        pass
