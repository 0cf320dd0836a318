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
    _quiet_broken_pipe,
    fail,
    json_out,
    open_store,
    state,
)


def default_name() -> str:
    return f"self-learning-export-{time.strftime('%Y%m%d')}.json"


def command(
    ctx: typer.Context,
    output: str = typer.Option(None, "--output", "-o", metavar="FILE|-", help="Where to write (default: self-learning-export-YYYYMMDD.json here; - for stdout).", show_default=False),
    as_json: bool = typer.Option(False, "--json", help="Report as JSON (see `learn help export`)."),
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
            _quiet_broken_pipe()
        return
    path = Path(os.path.expanduser(output)) if output else Path(default_name())
    if path.is_dir():
        path = path / default_name()
    if not path.parent.is_dir():
        fail(f"cannot write {path}: folder {path.parent} does not exist")
    with atomic_output(path) as out:
        result = write_export(store, out, orjson.loads)
    if as_json:
        json_out({"file": str(path.resolve()), "bytes": result.nbytes, "global": result.global_count,
                  "archived": result.archived_count, "projects": result.project_counts, "total": result.total,
                  "format": FORMAT, "version": VERSION})
        return
    labels = {pid: info["label"] for pid, info in store.projects().items()}
    export_report(result, str(path), result.nbytes, labels)


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
