"""`learn doctor`: check the store, the hooks and capture health; repair what is safe to repair.

Checks, in order (each ends ok, repaired, warn or problem):
  layout       the store's folders and files exist (created when missing)
  permissions  folders 0700, files 0600 (modes repaired)
  index        the SQLite index is sound and matches the files (rebuilt / refreshed)
  data         corrupt lines in every data file, reported as file:line; repaired by moving
               them into `<file>.corrupt` beside it, then folding the file (never dropped)
  logs         record logs far bigger than their live records (compacted)
  disk         free space under the home
  archive      disk used by archived learnings (`learn prune --hard` suggested when large)
  hooks        whether `learn capture` is registered in Claude Code's settings (read-only):
               each agent module's doctor_check (learn_cli.agents)
  capture      events captured in the last 7 days, the last capture, warnings in learn.log
  spool        events hooks had no time to learn: learned now (repaired); a problem when
               any were dropped in the last 7 days (counters, not log lines)
Exit 0 when everything is healthy or was repaired, 1 when a problem remains.
"""

from __future__ import annotations

from pathlib import Path

import typer

from learn_cli.commands._common import json_out, state
from learn_cli.doctor import PROBLEM, Check


def command(
    ctx: typer.Context,
    as_json: bool = typer.Option(False, "--json", help="Machine-readable report (see `learn help doctor`)."),
) -> None:
    from learn_cli.render.doctor import report

    st = state(ctx)
    checks, home = run_checks(st)
    healthy = not any(c.status == PROBLEM for c in checks)
    if as_json:
        json_out({"home": str(home), "healthy": healthy, "checks": [c.as_json() for c in checks]})
    else:
        report(checks, home, healthy)
    if not healthy:
        raise typer.Exit(1)


def run_checks(st) -> tuple[list[Check], Path]:
    from learn_cli.commands._common import open_store
    from learn_cli.doctor import capture, data, files, index
    from learn_cli.store.api import StoreError
    from learn_cli.store.paths import Layout, resolve_home

    home = resolve_home(st.home)
    missing = files.missing_layout(Layout(home))
    damaged_index = index.damaged_index(Layout(home).index_db)
    try:
        store = open_store(st)
    except StoreError as exc:
        return [Check("layout", PROBLEM, str(exc))], home
    checks = [files.layout(store, missing)]
    writable = store.writable()
    checks.append(files.permissions(store, writable))
    checks.append(index.index(store, damaged_index))
    checks.append(data.data(store, writable))
    checks.append(index.logs(store, writable))
    checks.append(index.keys(store))
    checks.append(files.disk(store))
    if writable:
        checks.append(files.stale_temps(store))
    checks.append(files.archive(store))
    project = _project(st)
    hooks = capture.hooks(project)
    checks.extend(hooks)
    checks.append(capture.capture(store, project, hooks))
    checks.append(capture.spool(store))
    return checks, home


def _project(st):
    from learn_cli.commands._common import current_project

    try:
        return current_project(st, register=False)
    except Exception:  # noqa: BLE001 - a bad --project is reported by other commands; doctor goes on
        return None
