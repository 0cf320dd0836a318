"""How one learning is shown: the "captured" block of `learn` / `learn add`, and the full
layout of `learn show`. Safe text, ages and usage lines come from learn_cli.render.text
(re-exported here).

Everything shown passes through `safe()`. Output goes through rich `Text` objects, never
markup strings, so brackets in captured text print as they are.
"""

from __future__ import annotations

import os
import sys
from functools import lru_cache

from learn_cli.render.console import console, fancy, plain
from learn_cli.render.text import Line, age, headline, plural, safe, usage_line, write_plain  # noqa: F401 (re-exported)

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing

if TYPE_CHECKING:
    from rich.text import Text

# Field order of `learn show`; anything else the record holds follows in name order.
SHOW_FIELDS = ("type", "category", "status", "context", "error", "fix", "project", "projects", "frequency",
               "impact", "created", "last_used", "updated", "source", "key", "tags", "tool", "command",
               "fix_command", "fix_script", "exit_code", "env", "evidence", "helped", "not_helped", "low_since",
               "conflict_with", "schema")


def display_path(path) -> str:
    """A path with the user's home folder shown as `~`."""
    text = str(path)
    home = os.path.expanduser("~")
    if home not in ("", "/") and (text == home or text.startswith(home + os.sep)):
        return "~" + text[len(home):]
    return text


def _stdout():
    return _console_on(sys.stdout)


@lru_cache(maxsize=1)
def _console_on(stream):
    """One console for the process's stdout; a new one when the stdout changed (a caller that
    runs commands in its own process with sys.stdout swapped, as the tests do)."""
    return console()


def write(text: Text | str = "", style: str = "") -> None:
    """One line (or block) to stdout. On a terminal through rich, with `style` for a string;
    always a `Text`, never a markup string: captured brackets and `:emoji:` codes print as they
    are. Piped, `console.plain`: the same text, without importing rich."""
    if not fancy():
        plain(text)
        return
    from rich.text import Text

    _stdout().print(text if isinstance(text, Text) else Text(text, style=style), overflow="fold", crop=False)


def write_styled(lines: list[Line]) -> None:
    """Lines of `render.text` (strings, or `Styled`) through the console."""
    if not fancy():
        write_plain(lines)
        return
    from rich.text import Text

    for line in lines:
        write(line if isinstance(line, str) else Text.assemble(*line.segments, style=line.style))


def arrow() -> str:
    return "→" if fancy() else "->"


# -- `learn` / `learn add`: the "captured" block ---------------------------------------------

def captured(rec: dict, where: str, path, merged_from: int | None, global_merge, home) -> None:
    """The seed's "📝 Learning captured:" block, then where it went and what merged."""
    fancy_out = fancy()
    write("📝 Learning captured:" if fancy_out else "Learning captured:", style="bold")
    rows = [("Type", rec.get("type")), ("Category", rec.get("category")), ("Context", rec.get("context")),
            ("Error", rec.get("error")), ("Fix", rec.get("fix")), ("Impact", f"{float(rec.get('impact', 0)):.1f}"),
            ("Project", where), ("ID", rec.get("id"))]
    for label, value in rows:
        if value not in (None, ""):
            write(f"  {label}: {safe(value, one_line=True, limit=300)}")
    if rec.get("tags"):
        write(f"  Tags: {', '.join(safe(t, one_line=True) for t in rec['tags'])}")
    write()
    shown_path = _relative_to(path, home)
    stored = f"Stored in {where} ({shown_path})"
    write(f"  ✅ {stored}" if fancy_out else stored, style="green" if fancy_out else "")
    if merged_from is not None:
        line = (f"Same learning already known here — merged (frequency: {merged_from} {arrow()} "
                f"{rec.get('frequency')})")
        write(f"  🔄 {line}" if fancy_out else line.replace("—", "-"))
    if global_merge:
        line = f"Similar global learning found — merged (frequency: {global_merge[0]} {arrow()} {global_merge[1]})"
        write(f"  🔍 {line}" if fancy_out else line.replace("—", "-"))


def _relative_to(path, home) -> str:
    from pathlib import Path  # not at the top: `learn show`, piped, never needs it

    try:
        return str(Path(path).relative_to(home))
    except ValueError:
        return display_path(path)


# -- `learn show` ----------------------------------------------------------------------------

def show(rec: dict, file: str, scope: str, score: float, project_labels: dict[str, str]) -> None:
    fancy_out = fancy()
    title = safe(rec.get("id"), one_line=True)
    write(f"🧠 {title}" if fancy_out else title, style="bold")
    width = max(len(_label(f)) for f in SHOW_FIELDS) + 1
    write(f"  {'Score:'.ljust(width + 1)} {score:.2f}")
    write(f"  {'Stored in:'.ljust(width + 1)} {file} ({scope})")
    for field in list(SHOW_FIELDS) + sorted(k for k in rec if k not in SHOW_FIELDS and k != "id"):
        if field not in rec or rec[field] in (None, "", [], {}):
            continue
        value = _show_value(field, rec[field], project_labels)
        label = (_label(field) + ":").ljust(width + 1)
        lines = value.splitlines() or [""]
        write(f"  {label} {lines[0]}")
        for more in lines[1:]:
            write(f"  {' ' * (width + 1)} {more}")


def _label(field: str) -> str:
    return field.replace("_", " ").capitalize()


def _show_value(field: str, value, labels: dict[str, str]) -> str:
    if field == "projects" and isinstance(value, list):
        return ", ".join(safe(labels.get(p, p), one_line=True) for p in value)
    if field in ("created", "last_used", "updated", "low_since"):
        return f"{safe(value, one_line=True)} ({age(value)})"
    if field == "impact" and isinstance(value, (int, float)):
        return f"{value:.2f}"
    if field == "evidence" and isinstance(value, list):
        return plural(len(value), "sighting")
    if isinstance(value, list):
        return ", ".join(safe(v, one_line=True) for v in value)
    if isinstance(value, dict):
        return ", ".join(f"{safe(k, one_line=True)}={safe(v, one_line=True)}" for k, v in value.items())
    return safe(value).strip("\n")
