"""`learn flush`: write this project's active rules into the agent's knowledge file."""

from __future__ import annotations

import os
import stat
import sys

import typer

from learn_cli.commands._common import current_project, fail, json_out, open_store, state


def command(
    ctx: typer.Context,
    target: str = typer.Option("auto", "--target",
                               help="auto (first of CLAUDE.md, AGENTS.md, GEMINI.md that exists, else CLAUDE.md), "
                                    "one of those names, or a path."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Show the block and what would change; write nothing."),
    as_json: bool = typer.Option(False, "--json", help="Machine-readable result."),
) -> None:
    from pathlib import Path

    from learn_cli.engine.flush import choose_target, has_block, render_block, select_rules, splice
    from learn_cli.store.jsonl import atomic_write

    st = state(ctx)
    store = open_store(st)
    project = current_project(st, register=False)  # a flush learns nothing about the folder
    root = Path(project.root)
    path = choose_target(root, target)
    if path.exists() and not path.is_file():
        fail(f"--target {path}: not a file")
    if not path.parent.is_dir():
        fail(f"cannot write {path}: folder {path.parent} does not exist")
    old = _read(path)
    store.refresh([store.layout.learnings(project.id), *store.layout.global_files()])
    project_recs = [
        r for _, _, _, r in store.iter_index("project", "active", project.id)
    ]
    global_recs = [r for _, _, _, r in store.iter_index("global", "global")]
    budget = store.number("budget", project.id)
    rules, dropped, truncated, tokens = select_rules(project_recs, global_recs, project.root, budget)
    # No rules and no block yet: an empty block in a new file (or appended to the user's) is
    # noise; a block that is there is emptied, since its rules are no longer active.
    nothing = not rules and not has_block(old)
    new = old if nothing else splice(old, render_block(rules))
    changed = new != old
    if changed and not dry_run:
        mode = stat.S_IMODE(path.stat().st_mode) if path.exists() else 0o666 & ~_umask()
        atomic_write(path, new.encode("utf-8", "surrogateescape"), mode=mode)
    result = {"target": str(path), "rules": len(rules), "dropped_conflicts": dropped, "truncated": truncated,
              "tokens": tokens, "budget": budget, "changed": changed, "written": changed and not dry_run,
              "dry_run": dry_run}
    if as_json:
        json_out(result)
        return
    _report(result, render_block(rules) if dry_run else None, nothing)


def _read(path) -> str:
    try:
        return path.read_bytes().decode("utf-8", "surrogateescape")
    except FileNotFoundError:
        return ""
    except OSError as exc:
        fail(f"cannot read {path}: {exc.strerror}")


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _report(result: dict, block: str | None, nothing: bool) -> None:
    out = sys.stdout
    if block is not None:
        out.write(block)
        verb = "would change" if result["changed"] else "would leave unchanged"
        out.write(f"\n(dry run: {verb} {result['target']})\n")
        return
    if nothing:
        fate = "left as it was" if os.path.exists(result["target"]) else "not created"
        out.write(f"Nothing to write: no active rules for this project, and no global ones yet "
                  f"({result['target']} {fate})\n")
    elif not result["changed"]:
        out.write(f"{result['target']}: up to date ({result['rules']} rules, {result['tokens']} tokens)\n")
    else:
        out.write(f"Wrote {result['rules']} rules to {result['target']} "
                  f"({result['tokens']} / {result['budget']} tokens)\n")
    if result["dropped_conflicts"]:
        out.write(f"Left out {result['dropped_conflicts']} contradicting rules (see `learn promote`).\n")
    if result["truncated"]:
        out.write(f"Left out {result['truncated']} lower-scored rules to stay within the budget.\n")
