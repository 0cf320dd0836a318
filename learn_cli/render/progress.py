"""A progress bar for long work over many records, on a terminal only (never when piped)."""

from __future__ import annotations

import contextlib
import sys


@contextlib.contextmanager
def progress_bar(enabled: bool):
    """Yields `update(phase, done, total)` (or None when disabled); the bar goes away at the end."""
    if not enabled or not sys.stderr.isatty():
        yield None
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from learn_cli.render.console import console

    with Progress(TextColumn("  {task.description:<10}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=console(stderr=True), transient=True) as bar:
        tasks: dict[str, int] = {}

        def update(phase: str, done: int, total: int) -> None:
            if phase not in tasks:
                tasks[phase] = bar.add_task(phase, total=total)
            bar.update(tasks[phase], completed=done, total=total)

        yield update
