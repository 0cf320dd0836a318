"""Rich consoles that do the right thing: colour and boxes on a terminal, plain stable text
when piped, and no colour at all under NO_COLOR."""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~2 ms of every start)

if TYPE_CHECKING:
    from rich.console import Console


def console(stderr: bool = False) -> Console:
    # Imported here, not above: `fancy()` also serves output printed without rich.
    from rich.console import Console

    stream = sys.stderr if stderr else sys.stdout
    tty = stream.isatty()
    return Console(
        file=stream,
        force_terminal=tty,
        no_color=bool(os.environ.get("NO_COLOR")) or not tty,
        highlight=False,
        soft_wrap=not tty,
        emoji=tty,
        width=None if tty else 10_000,
    )


def fancy() -> bool:
    """True when stdout is a terminal: use the seed's emoji and boxes; else plain text."""
    return sys.stdout.isatty()


def out(text: str = "", bold: bool = False) -> None:
    """One line to stdout: through rich on a terminal (bold there when asked), else `plain`."""
    if not fancy():
        plain(text)
        return
    from learn_cli.render.learning import write

    write(text, style="bold" if bold else "")


def plain(text) -> None:
    """A line (or block: a string or a rich `Text`) as rich prints it when stdout is not a
    terminal (no style, no wrap at its width of 10,000, tabs expanded), without importing rich:
    ~25 ms of a piped `learn stats`, `graph` or `show`. Flushed, as rich's console does, so that
    a closed pipe is noticed while the command's error guard still runs."""
    sys.stdout.write(f"{text if isinstance(text, str) else text.plain}".expandtabs(8) + "\n")
    sys.stdout.flush()
