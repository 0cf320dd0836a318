"""The one-line reports of `learn forget` and `learn restore`."""

from __future__ import annotations

from pathlib import Path

from rich.text import Text

from learn_cli.render.console import fancy
from learn_cli.render.learning import write

ICONS = {"Archived": "🗄 ", "Deleted": "🗑 ", "Restored": "♻️  "}


def moved(verb: str, rid: str, headline: str, dest: Path | None, home: Path, undo: str | None = None,
          merged_into: str | None = None) -> None:
    """`Archived learn-… ("headline") to projects/<id>/archive.jsonl`, then how to undo it."""
    line = f'{verb} {rid} ("{headline}")'
    if dest is not None:
        line += f" {'into' if merged_into else 'to'} {_rel(dest, home)}"
    if merged_into:
        line += f", merged into {merged_into} (the same learning, captured again since)"
    write(Text((ICONS.get(verb, "") if fancy() else "") + line))
    if undo:
        write(f"  Undo with: {undo}")


def _rel(path: Path, home: Path) -> str:
    try:
        return str(Path(path).relative_to(home))
    except ValueError:
        return str(path)
