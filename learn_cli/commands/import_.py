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
    as_json: bool = typer.Option(False, "--json", help="Machine-readable report (see docs/cmd-import.md)."),
    trust: bool = typer.Option(False, "--trust", help="Vouch for the file: keep its statuses (else entries "
                               "wait, pending, for a local sighting or `learn resolve ID --keep`)."),
) -> None:
    import orjson

    from learn_cli.engine.exchange import ExchangeError, import_file
    from learn_cli.render.exchange import import_report

    store = open_store(state(ctx))
    try:
        report = import_file(store, Path(file).expanduser(), dry_run=dry_run, loads=orjson.loads, trust=trust)
    except ExchangeError as exc:
        fail(str(exc))
    if as_json:
        json_out(report.as_json())
    else:
        import_report(report)
    if report.entries and report.skipped == report.entries:
        fail(f"nothing imported: all {report.entries} entries of {report.source} were incompatible")
