"""Assemble README.md: docs/readme-head.md (what it is, the two commands, connecting Claude
Code, a day with it), then a table of contents of docs/: one row per command of the CLI
(learn_cli.commands.COMMANDS, the one list of commands, in its order) and the other pages.

Run: python3 tools/build_readme.py   (make readme); with --check: exit 1 when README.md is not
what the generator writes.
"""

from __future__ import annotations

import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from learn_cli.commands import COMMANDS

GUIDES = [
    ("docs/install.md", "Install (clone, pipx, uv), connect, cron, remove everything"),
    ("docs/capture.md", "How automatic capture works with Claude Code"),
    ("docs/agents.md", "Codex CLI, Gemini CLI, Cursor, OpenClaw, knowledge files"),
    ("docs/storage.md", "Store layout, settings, exit codes, output conventions"),
    ("docs/ARCHITECTURE.md", "Modules and their contracts"),
    ("docs/design-notes.md", "Design notes: why it works the way it does"),
    ("BENCHMARKS.md", "Speed at 1,000 / 10,000 / 100,000 learnings"),
    ("RELIABILITY.md", "The tests that try to break it, and their results"),
]


def commands() -> list[tuple[str, str]]:
    """(name, help line) of every command, in the order of learn_cli.commands.COMMANDS."""
    return [(name, help_line) for name, _module, help_line in COMMANDS]


def contents() -> str:
    rows = ["## Documentation", "", "| page | what it covers |", "|---|---|"]
    rows += [f"| [{path}]({path}) | {what} |" for path, what in GUIDES]
    rows += ["", "Every command has a page (also `learn help COMMAND`; every option in `learn help --man`):", "",
             "| command | what it does |", "|---|---|",
             "| [`learn`](docs/cmd-learn.md) | Ask what you learned (on a terminal); "
             "`learn --auto` flips automatic capture. |"]
    for name, help_line in commands():
        page = ROOT / "docs" / f"cmd-{name}.md"
        if not page.exists():
            raise SystemExit(f"docs/cmd-{name}.md is missing")
        rows.append(f"| [`learn {name}`](docs/cmd-{name}.md) | {help_line} |")
    return "\n".join(rows) + "\n"


def main() -> None:
    text = (ROOT / "docs" / "readme-head.md").read_text().rstrip() + "\n\n" + contents()
    if "--check" in sys.argv[1:]:
        if (ROOT / "README.md").read_text() != text:
            raise SystemExit("README.md is stale: run `make readme`")
        return
    (ROOT / "README.md").write_text(text)
    print(f"README.md: {len(text.splitlines())} lines")


if __name__ == "__main__":
    main()
