"""`learn export` / `learn import` output, as in the seed's transcripts."""

from __future__ import annotations

from rich.text import Text

from learn_cli.render.console import fancy
from learn_cli.render.learning import safe, write
from learn_cli.render.prune import size

PROJECTS_SHOWN = 20
CONFLICTS_SHOWN = 2
REASONS_SHOWN = 5


def entries(n: int) -> str:
    return f"{n:,} {'entry' if n == 1 else 'entries'}"


def export_report(result, shown_path: str, nbytes: int, labels: dict[str, str]) -> None:
    box = fancy()
    write(Text("📦 Exporting all learnings..." if box else "Exporting all learnings...", style="bold" if box else ""))
    write()
    write(f"  Global learnings: {entries(result.global_count)}")
    write("  Project learnings:")
    projects = sorted(result.project_counts.items(), key=lambda kv: (-kv[1], labels.get(kv[0], kv[0])))
    if not projects:
        write("    (none)")
    for pid, n in projects[:PROJECTS_SHOWN]:
        write(f"    {safe(labels.get(pid, result.names[pid]), one_line=True)}: {entries(n)}")
    if len(projects) > PROJECTS_SHOWN:
        rest = projects[PROJECTS_SHOWN:]
        write(f"    ... and {len(rest):,} more projects ({entries(sum(n for _, n in rest))})")
    write()
    write(
        Text(f"  ✅ Exported to {shown_path}" if box else f"  Exported to {shown_path}", style="green" if box else "")
    )
    write(f"  File size: {size(nbytes)}")
    write(f"  Total entries: {result.total:,} (including {result.archived_count:,} archived)")
    write("  Format: Self-Learning Agent v1.0.0 portable JSON")


def import_report(rep, trusted: bool = False) -> None:
    box = fancy()
    icon = (lambda s: s + " ") if box else (lambda s: "")
    title = (
        f"Importing from {safe(rep.source, one_line=True)}"
        + (" (dry run: nothing is written)" if rep.dry_run else "")
        + "..."
    )
    write(Text(f"📥 {title}" if box else title, style="bold" if box else ""))
    write()
    write(f"  Source: {entries(rep.entries)} (Self-Learning Agent v{safe(rep.version, one_line=True)} format)")
    for warning in rep.warnings:
        write(f"  {icon('⚠')}{'' if box else 'warning: '}{safe(warning, one_line=True)}")
    write()
    would = "would be " if rep.dry_run else ""
    write("  Processing:")
    write(f"    {icon('✅')}New learnings {would}added: {rep.new:,}")
    # untrusted, an entry that matches a learning only notes its id there (merging.py)
    merged = "frequency updated" if trusted else "noted, your learning unchanged"
    write(f"    {icon('🔄')}Merged with existing: {rep.merged:,} ({merged})")
    write(f"    {icon('⏭')}Duplicates skipped: {rep.duplicates:,}")
    write(f"    {icon('⚠')}Conflicts detected: {rep.conflicts:,}")
    if rep.skipped:
        write(f"    {icon('✗')}Skipped (incompatible): {rep.skipped:,}")
        for reason in rep.reasons[:REASONS_SHOWN]:
            write(f"        - {safe(reason, one_line=True, limit=160)}")
        if rep.skipped > REASONS_SHOWN:
            write(f"        ... ({rep.skipped - REASONS_SHOWN:,} more; `--json` lists the first 20 reasons)")
    if rep.conflict_pairs:
        write()
        write("  Conflicts (require resolution):")
        for n, c in enumerate(rep.conflict_pairs[:CONFLICTS_SHOWN], 1):
            write(
                f'    {n}. "{safe(c["incoming_text"], one_line=True, limit=60)}" vs existing '
                f'"{safe(c["existing_text"], one_line=True, limit=60)}" ({safe(c["reason"], one_line=True, limit=60)})'
            )
        if len(rep.conflict_pairs) > CONFLICTS_SHOWN:
            write(f"    ... ({len(rep.conflict_pairs) - CONFLICTS_SHOWN:,} more)")
        write()
        write("  Run `learn promote` to resolve conflicts.")
    else:
        write()
    done = "Dry run complete" if rep.dry_run else "Import complete"
    write(Text(f"  {done}: {rep.processed:,} entries processed, {rep.new:,} new.", style="bold" if box else ""))
    if rep.new and not trusted:
        write("  Untrusted file: its new learnings reach no agent until your own sessions confirm them or you "
              "accept them (`learn resolve ID --keep`). Your own export? `--trust` keeps its statuses.")
