"""`learn export [-o FILE|-]`: every learning (global, per project, archived) in one portable
JSON file, written as it is read from the store, atomically (mode 0600: it holds your
learnings)."""

from __future__ import annotations

import os
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import BinaryIO

import typer

from learn_cli.commands._common import (
    EXIT_USAGE,
    fail,
    json_out,
    open_store,
    quiet_broken_pipe,
    state,
)


def default_name() -> str:
    return f"self-learning-export-{time.strftime('%Y%m%d')}.json"


def command(
    ctx: typer.Context,
    output: str = typer.Option(None, "--output", "-o", metavar="FILE|-", show_default=False,
                               help="Where to write (default: self-learning-export-YYYYMMDD.json here; - for stdout)."),
    as_json: bool = typer.Option(False, "--json", help="Report as JSON (see `learn help export`)."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="Print nothing unless there is an error."),
) -> None:
    import orjson

    from learn_cli.engine.exchange import FORMAT, VERSION, write_export
    from learn_cli.render.exchange import export_report

    if output == "-" and as_json:
        fail("--json reports on a file: it cannot go with -o - (the export itself is JSON)", EXIT_USAGE)
    store = open_store(state(ctx), create=False)
    if output == "-":
        try:
            write_export(store, sys.stdout.buffer, orjson.loads)
            sys.stdout.flush()
        except BrokenPipeError:  # the reader had enough (`learn export -o - | head`): not an error
            quiet_broken_pipe()
        return
    path = Path(os.path.expanduser(output)) if output else Path(default_name())
    if path.is_dir():
        path = path / default_name()
    if not path.parent.is_dir():
        fail(f"cannot write {path}: folder {path.parent} does not exist")
    from learn_cli.render.progress import working
    from learn_cli.render.prune import size

    with atomic_output(path) as out:
        counted = CountingWriter(out)
        with working(f"Exporting to {path.name}", not (quiet or as_json), lambda: f"{size(counted.nbytes)} "):
            result = write_export(store, counted, orjson.loads)
    if quiet:
        return
    if as_json:
        json_out({"file": str(path.resolve()), "bytes": result.nbytes, "global": result.global_count,
                  "archived": result.archived_count, "projects": result.project_counts, "total": result.total,
                  "format": FORMAT, "version": VERSION})
        return
    labels = {pid: info["label"] for pid, info in store.projects().items()}
    export_report(result, str(path), result.nbytes, labels)


class CountingWriter:
    """`out`, counting the bytes written through it (for the progress line)."""

    def __init__(self, out: BinaryIO):
        self.out, self.nbytes = out, 0

    def write(self, data: bytes) -> int:
        self.nbytes += len(data)
        return self.out.write(data)


@contextmanager
def atomic_output(path: Path) -> Iterator[BinaryIO]:
    """A buffered file that becomes `path` (mode 0600) only once all of it is written and
    synced: a temp file in the same folder, renamed; removed if anything fails."""
    from learn_cli.store.jsonl import _fsync_dir

    fd, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")  # mode 0600
    try:
        with os.fdopen(fd, "wb", buffering=1 << 20) as out:
            yield out
            out.flush()
            os.fsync(out.fileno())
        os.replace(temp, path)
        _fsync_dir(path.parent)
    except BaseException:
        with suppress(FileNotFoundError):
            os.unlink(temp)
        raise
