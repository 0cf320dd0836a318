"""How one learning is shown: safe text, ages, usage lines, the "captured" block of `learn` /
`learn add`, and the full layout of `learn show`.

Everything shown passes through `safe()`: secrets redacted again (records imported or edited
by hand may hold some), control characters removed (a captured ANSI escape must not drive
the user's terminal). Output goes through rich `Text` objects, never markup strings, so
brackets in captured text print as they are.
"""

from __future__ import annotations

import os
import re
from datetime import datetime, timezone
from functools import cache
from pathlib import Path

from rich.text import Text

from learn_cli.render.console import console, fancy

# Field order of `learn show`; anything else the record holds follows in name order.
SHOW_FIELDS = ("type", "category", "status", "context", "error", "fix", "project", "projects", "frequency",
               "impact", "created", "last_used", "updated", "source", "key", "tags", "tool", "command",
               "fix_command", "exit_code", "env", "evidence", "helped", "not_helped", "low_since",
               "conflict_with", "schema")


@cache
def _control_re() -> re.Pattern:
    return re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def safe(value, one_line: bool = False, limit: int | None = None) -> str:
    """Text fit to print: redacted, without control characters, optionally one line and cut."""
    from learn_cli.capture.redact import redact

    text = "" if value is None else str(value)
    text = _control_re().sub("", redact(text).replace("\t", "    "))
    if one_line:
        text = " ".join(text.split())
    if limit is not None and len(text) > limit:
        text = text[: max(limit - 1, 0)].rstrip() + "…"
    return text


def headline(rec: dict, limit: int = 160) -> str:
    """The one line that says what a learning is about: its context, else its error's first
    meaningful line, else its fix."""
    for field in ("context", "error", "fix"):
        text = rec.get(field)
        if isinstance(text, str) and text.strip():
            line = next((ln for ln in text.splitlines() if ln.strip()), "")
            return safe(line, one_line=True, limit=limit)
    return "(no text)"


def plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def age(iso, now: datetime | None = None) -> str:
    """`today`, `1 day ago`, `45 days ago` (or `unknown`)."""
    from learn_cli.engine.scoring import parse_time

    moment = parse_time(iso)
    if moment is None:
        return "unknown"
    days = int(((now or datetime.now(timezone.utc)) - moment).total_seconds() // 86400)
    if days <= 0:
        return "today"
    return f"{plural(days, 'day')} ago"


def usage_line(rec: dict) -> str:
    """`7 times across 4 projects`, `2 times`, `1 time`."""
    from learn_cli.engine.scoring import frequency_of, project_count

    n = frequency_of(rec)
    projects = project_count(rec)
    text = "1 time" if n == 1 else f"{n} times"
    return f"{text} across {projects} projects" if projects > 1 else text


def display_path(path) -> str:
    """A path with the user's home folder shown as `~`."""
    text = str(path)
    home = os.path.expanduser("~")
    if home not in ("", "/") and (text == home or text.startswith(home + os.sep)):
        return "~" + text[len(home):]
    return text


@cache
def _stdout():
    return console()


def write(text: Text | str = "") -> None:
    """One line (or block) to stdout; styles only where the console allows them. Always a
    `Text`, never a markup string: captured brackets and `:emoji:` codes print as they are."""
    _stdout().print(text if isinstance(text, Text) else Text(text), overflow="fold", crop=False)


def arrow() -> str:
    return "→" if fancy() else "->"


# -- `learn` / `learn add`: the "captured" block ---------------------------------------------

def captured(rec: dict, where: str, path, merged_from: int | None, global_merge, home) -> None:
    """The seed's "📝 Learning captured:" block, then where it went and what merged."""
    fancy_out = fancy()
    write(Text("📝 Learning captured:" if fancy_out else "Learning captured:", style="bold"))
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
    write(Text(f"  ✅ {stored}" if fancy_out else stored, style="green" if fancy_out else ""))
    if merged_from is not None:
        line = (f"Same learning already known here — merged (frequency: {merged_from} {arrow()} "
                f"{rec.get('frequency')})")
        write(f"  🔄 {line}" if fancy_out else line.replace("—", "-"))
    if global_merge:
        line = f"Similar global learning found — merged (frequency: {global_merge[0]} {arrow()} {global_merge[1]})"
        write(f"  🔍 {line}" if fancy_out else line.replace("—", "-"))


def _relative_to(path, home) -> str:
    try:
        return str(Path(path).relative_to(home))
    except ValueError:
        return display_path(path)


# -- `learn show` ----------------------------------------------------------------------------

def show(rec: dict, file: str, scope: str, score: float, project_labels: dict[str, str]) -> None:
    fancy_out = fancy()
    title = safe(rec.get("id"), one_line=True)
    write(Text(f"🧠 {title}" if fancy_out else title, style="bold"))
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
