"""Text fit to print, without rich: `safe()`, headlines, ages, usage lines, and plain lines to
stdout. Rich is not imported here (nor by what this imports): the piped `learn recall` fast
path prints through this module, and importing rich costs it 15-30 ms.

Everything shown passes through `safe()`: secrets redacted again (records imported or edited
by hand may hold some), control characters removed (a captured ANSI escape must not drive
the user's terminal).
"""

from __future__ import annotations

import sys

from learn_cli.store.score import UTC, datetime  # the C module alone: see store.score
from learn_cli.text import rx
from learn_cli.text.lite import cache


class Styled:
    """One line with rich styles, which only a terminal shows: segments (text, or (text,
    style) pairs) and a style for the whole line, as `rich.text.Text.assemble` takes them."""

    __slots__ = ("segments", "style")

    def __init__(self, *segments: str | tuple[str, str], style: str = ""):
        self.segments = segments
        self.style = style

    def __str__(self) -> str:
        return "".join(part if isinstance(part, str) else part[0] for part in self.segments)


Line = str | Styled  # one output line


@cache
def _control_re():
    return rx.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def safe(value, one_line: bool = False, limit: int | None = None) -> str:
    """Text fit to print: redacted, without control characters, optionally one line and cut."""
    from learn_cli.text.redact import redact

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
        line = first_line(rec.get(field))
        if line:
            return safe(line, one_line=True, limit=limit)
    return "(no text)"


def first_line(text) -> str:
    """The first line of a text field that holds anything ("" for none, or not text)."""
    return next((line for line in text.splitlines() if line.strip()), "") if isinstance(text, str) else ""


def plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def age(iso, now: datetime | None = None) -> str:
    """`today`, `1 day ago`, `45 days ago` (or `unknown`)."""
    from learn_cli.engine.scoring import parse_time

    moment = parse_time(iso)
    if moment is None:
        return "unknown"
    days = int(((now or datetime.now(UTC)) - moment).total_seconds() // 86400)
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


def write_plain(lines: list[Line]) -> None:
    """Lines to stdout without styles, flushed here so that a closed pipe is noticed while the
    command's error guard still runs (as rich's console does)."""
    sys.stdout.write("".join(f"{line}\n" for line in lines))
    sys.stdout.flush()
