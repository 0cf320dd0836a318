"""`learn export [-o FILE|-]`: every learning (global, per project, archived) in one portable
JSON file, written atomically (mode 0600: it holds your learnings)."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import typer

from learn_cli.commands._common import EXIT_USAGE, fail, json_out, open_store, state


def default_name() -> str:
    return f"self-learning-export-{time.strftime('%Y%m%d')}.json"


def command(
    ctx: typer.Context,
    output: str = typer.Option(None, "--output", "-o", metavar="FILE|-", help="Where to write (default: self-learning-export-YYYYMMDD.json here; - for stdout).", show_default=False),
    as_json: bool = typer.Option(False, "--json", help="Report as JSON (see docs/cmd-export.md)."),
) -> None:
    import orjson

    from learn_cli.engine.exchange import build_export
    from learn_cli.render.exchange import export_report
    from learn_cli.store.jsonl import atomic_write

    if output == "-" and as_json:
        fail("--json reports on a file: it cannot go with -o - (the export itself is JSON)", EXIT_USAGE)
    store = open_store(state(ctx))
    result = build_export(store, orjson.loads)
    data = orjson.dumps(result.doc, option=orjson.OPT_INDENT_2) + b"\n"
    if output == "-":
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
        return
    path = Path(os.path.expanduser(output)) if output else Path(default_name())
    if path.is_dir():
        path = path / default_name()
    if not path.parent.is_dir():
        fail(f"cannot write {path}: folder {path.parent} does not exist")
    atomic_write(path, data)
    if as_json:
        json_out({"file": str(path.resolve()), "bytes": len(data), "global": result.global_count,
                  "archived": result.archived_count, "projects": result.project_counts, "total": result.total,
                  "format": result.doc["format"], "version": result.doc["version"]})
        return
    labels = {pid: info["label"] for pid, info in store.projects().items()}
    export_report(result, str(path), len(data), labels)
