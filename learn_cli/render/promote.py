"""`learn promote` and `learn resolve` output: the seed's promotion report (emoji on a terminal,
the same lines without them when piped) and the interactive conflict questions."""

from __future__ import annotations

from rich.text import Text

from learn_cli.render.console import fancy
from learn_cli.render.learning import plural, safe, write

SCANNING_LINES = 10  # more projects than this: one summary line (and a progress bar on a terminal)
SHOWN = {"promoted": 20, "candidates": 10, "archived": 10, "conflicts": 10}


def header(dry_run: bool) -> None:
    text = "Running promotion check across all projects" + (" (dry run: nothing is written)" if dry_run else "") + "..."
    if fancy():
        write(Text(f"🔄 {text}", style="bold"))
        write()
    else:
        write(text)


def report(rep, labels: dict[str, str]) -> None:
    icon = _icons()
    _scanning(rep, labels)
    write()
    write(Text(f"{icon['results']}Promotion Results:" if fancy() else "Promotion results:", style="bold"))
    _section(
        f"{icon['promoted']}Promoted to global (score > 0.7, or seen in 3+ projects):",
        rep.promoted,
        SHOWN["promoted"],
        lambda p: _line(p, "projects") + (" (merged into existing global)" if p.get("merged") else ""),
    )
    _section(f"{icon['candidates']}Candidates (score 0.3-0.7, or too few projects):", rep.candidates,
             SHOWN["candidates"], lambda c: _line(c, "projects"))
    _section(f"{icon['archived']}Archived (score < 0.3 for 30+ days):", rep.archived, SHOWN["archived"],
             lambda a: f'"{safe(a["text"], one_line=True)}" (score: {a["score"]:.2f}, stale {a["stale_days"]} days)')
    if rep.conflicts:
        _section(f"{icon['conflicts']}Conflicts (neither is promoted until resolved):", rep.conflicts,
                 SHOWN["conflicts"], _conflict_line)
    counts = rep.counts()
    parts = [
        f"{counts['promoted']} promoted",
        plural(counts["candidates"], "candidate"),
        f"{counts['archived']} archived",
    ]
    if counts["conflicts"]:
        parts.append(plural(counts["conflicts"], "conflict"))
    suffix = " (dry run: nothing written)" if rep.dry_run else ""
    write(Text(f"  Summary: {', '.join(parts)}{suffix}", style="bold" if fancy() else ""))


def spooled(result) -> None:
    """What `learn promote` learned from the spool (events hooks had no time for), if anything."""
    if result is None or not (result.replayed or result.dropped or result.left):
        return
    parts = [f"learned {plural(result.replayed, 'event')} that hooks had spooled"]
    if result.dropped:
        parts.append(f"dropped {plural(result.dropped, 'event')} that could not be learned (see learn.log)")
    if result.left:
        parts.append(f"{plural(result.left, 'event')} still waiting (the index was busy)")
    text = "; ".join(parts)
    write(text[0].upper() + text[1:] + ".")
    write()


def conflict_hint() -> None:
    write("  Resolve with `learn resolve ID --keep` (or `--drop`), or run `learn promote` on a terminal.")


def _icons() -> dict[str, str]:
    if fancy():
        return {"results": "📊 ", "promoted": "✅ ", "candidates": "💡 ", "archived": "🗄 ", "conflicts": "⚠ "}
    return dict.fromkeys(("results", "promoted", "candidates", "archived", "conflicts"), "")


def _scanning(rep, labels: dict[str, str]) -> None:
    scanned = sorted(rep.scanned.items(), key=lambda kv: (-kv[1], labels.get(kv[0], kv[0])))
    if len(scanned) <= SCANNING_LINES:
        for pid, n in scanned:
            write(f"  Scanning: {safe(labels.get(pid, pid), one_line=True)} ({plural(n, 'learning')})")
    else:
        total = sum(n for _, n in scanned)
        write(f"  Scanned: {len(scanned):,} projects ({plural(total, 'learning')})")
    if rep.global_count:
        write(f"  Global: {plural(rep.global_count, 'learning')}")


def _section(title: str, items: list, limit: int, line) -> None:
    write(f"  {title}")
    if not items:
        write("    (none)")
        write()
        return
    for item in items[:limit]:
        write(f"    - {line(item)}")
    if len(items) > limit:
        write(f"    ... ({len(items) - limit:,} more; `learn promote --json` lists up to 100)")
    write()


def _line(item: dict, _what: str) -> str:
    return (f'"{safe(item["text"], one_line=True)}" (score: {item["score"]:.2f}, '
            f'seen in {plural(item["projects"], "project")})')


def _conflict_line(c: dict) -> str:
    new = "" if c.get("new") else " [still open]"
    return (f'{c["a"]} "{safe(c["a_text"], one_line=True, limit=60)}" vs {c["b"]} '
            f'"{safe(c["b_text"], one_line=True, limit=60)}" ({safe(c["reason"], one_line=True, limit=80)}){new}')


def ask_conflicts(store, conflicts: list) -> int:
    """Ask, for each open conflict, which learning to keep. Returns how many were resolved."""
    import typer

    from learn_cli.engine.promotion import ResolveError, resolve_conflict

    resolved = 0
    write()
    for n, c in enumerate(conflicts, 1):
        write(
            Text(
                f"⚠ Conflict {n} of {len(conflicts)}: {safe(c['reason'], one_line=True, limit=100)}",
                style="bold yellow",
            )
        )
        write(f'  [1] {c["a"]}  "{safe(c["a_text"], one_line=True)}"')
        write(f'  [2] {c["b"]}  "{safe(c["b_text"], one_line=True)}"')
        try:
            answer = typer.prompt("  Keep which? 1, 2, s (skip) or q (quit)", default="s", show_default=True)
        except (EOFError, KeyboardInterrupt, typer.Abort):
            write()
            break
        answer = answer.strip().lower()
        if answer in ("q", "quit"):
            break
        if answer not in ("1", "2"):
            write("  Skipped.")
            continue
        try:
            result = resolve_conflict(store, c["a"] if answer == "1" else c["b"], keep=True)
        except ResolveError as exc:
            write(f"  Already resolved ({exc}).")
            continue
        resolution(result, indent="  ")
        resolved += 1
    return resolved


def resolution(result, indent: str = "") -> None:
    icon = "✅ " if fancy() else ""
    for rec in result.kept:
        write(f'{indent}{icon}Kept {rec["id"]} ("{_text(rec)}"): {rec.get("status")}')
    icon = "🗄 " if fancy() else ""
    for rec in result.archived:
        write(f'{indent}{icon}Archived {rec["id"]} ("{_text(rec)}"); `learn restore {rec["id"]}` brings it back')


def _text(rec: dict) -> str:
    from learn_cli.engine.promotion import summary

    return safe(summary(rec, 70), one_line=True)
