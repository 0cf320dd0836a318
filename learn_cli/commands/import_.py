"""`learn import FILE`: merge an export into this store (new, merged, duplicates, conflicts,
incompatible entries skipped with reasons)."""

from __future__ import annotations

from pathlib import Path

import typer

from learn_cli.commands._common import fail, json_out, open_store, state


def command(
    ctx: typer.Context,
    file: str = typer.Argument(..., metavar="FILE", help="An export made by `learn export`.", show_default=False),
    dry_run: bool = typer.Option(False, "--dry-run", help="Report what would happen; write nothing."),
    as_json: bool = typer.Option(False, "--json", help="Machine-readable report (see `learn help import`)."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="Print nothing unless there is an error."),
    trust: bool = typer.Option(False, "--trust", help="Vouch for the file: keep its statuses (else entries "
                               "wait, pending, for a local sighting or `learn resolve ID --keep`)."),
) -> None:
    import orjson

    from learn_cli.engine.exchange import ExchangeError, check_export, import_file
    from learn_cli.render.exchange import import_report
    from learn_cli.render.progress import working

    source = Path(file).expanduser()
    try:
        check_export(source)  # before the store: `learn import typo.json` creates no home
    except ExchangeError as exc:
        fail(str(exc))
    store = open_store(state(ctx))
    try:
        with working(f"Importing {source.name}", not (quiet or as_json), lambda: _size(source)):
            report = import_file(store, source, dry_run=dry_run, loads=orjson.loads, trust=trust)
    except ExchangeError as exc:
        fail(str(exc))
    if as_json and not quiet:
        json_out(report.as_json())
    elif not quiet:
        import_report(report, trusted=trust)
    if report.entries and report.skipped == report.entries:
        fail(f"nothing imported: all {report.entries} entries of {report.source} were incompatible")


def _size(path: Path) -> str:
    from learn_cli.render.prune import size

    try:
        return f"({size(path.stat().st_size)}) "
    except OSError:
        return ""
