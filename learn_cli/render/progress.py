"""Progress for long work, on a terminal only (never when piped): a bar over many records,
or a spinner with the time spent for work whose size is unknown (import, export)."""

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


@contextlib.contextmanager
def working(label: str, enabled: bool = True, detail=None):
    """A spinner with the time spent (and `detail()`, e.g. bytes written), on a terminal's
    stderr only, shown once the work has lasted `after` seconds: quick runs stay silent, and
    so do pipes, `--json` and `-q` (pass `enabled=False`)."""
    if not enabled or not sys.stderr.isatty():
        yield
        return
    import os
    import threading

    from rich.progress import Progress, ProgressColumn, SpinnerColumn, TextColumn, TimeElapsedColumn
    from rich.text import Text

    from learn_cli.render.console import console

    class Detail(ProgressColumn):
        def render(self, task) -> Text:
            return Text(detail() if detail else "")

    after = float(os.environ.get("LEARN_PROGRESS_AFTER", "1.0"))
    spinner = Progress(SpinnerColumn(), TextColumn(f"  {label}"), Detail(), TimeElapsedColumn(),
                       console=console(stderr=True), transient=True, redirect_stdout=False,
                       redirect_stderr=False)
    spinner.add_task(label, total=None)
    lock, done = threading.Lock(), []

    def show() -> None:
        with lock:  # never start once the work is over: nothing would stop the display
            if not done:
                spinner.start()

    timer = threading.Timer(after, show)
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        with lock:
            done.append(True)
            timer.cancel()
        spinner.stop()
