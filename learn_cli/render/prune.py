"""`learn prune` output: the seed's four-step report, plus storage and the --hard hint."""

from __future__ import annotations

from rich.text import Text

from learn_cli.render.console import fancy
from learn_cli.render.learning import plural, write

STEP = "        "


def entries(n: int, adjective: str = "") -> str:
    return f"{n:,} {adjective}{'entry' if n == 1 else 'entries'}"


def size(n: int) -> str:
    n = abs(n)
    if n < 1024:
        return f"{n} B"
    if n < 1024 * 1024:
        return f"{n / 1024:.0f} KB"
    return f"{n / (1024 * 1024):.1f} MB"


def report(rep) -> None:
    box = fancy()
    arrow, minus = ("→", "−") if box else ("->", "-")
    verb = "Would archive" if rep.dry_run else "Archived"
    title = "Pruning knowledge base" + (" (dry run: nothing is written)" if rep.dry_run else "") + "..."
    write(Text(f"🧹 {title}" if box else title, style="bold"))
    write()
    write("  [1/4] Archiving stale learnings (score < 0.3 for 30+ days)...")
    write(f"{STEP}{verb}: {entries(len(rep.archived))}")
    write()
    write("  [2/4] Merging duplicates...")
    groups = len(rep.merged)
    kind = "pair" if groups and rep.removed == groups else "group"
    write(f"{STEP}Merged: {plural(groups, kind)} {arrow} {entries(groups, 'unified ')}")
    write(f"{STEP}Removed: {entries(rep.removed, 'redundant ')}")
    if rep.rekeyed:
        keyed = "Would key again" if rep.dry_run else "Keyed again"
        write(f"{STEP}{keyed}: {entries(rep.rekeyed)} (the key rules changed since they were stored)")
    write()
    write("  [3/4] Recalculating all scores...")
    write(f"{STEP}Updated: {entries(rep.scored)}")
    write(f"{STEP}Score changes: {entries(rep.rescored)} rescored")
    write()
    write("  [4/4] Compressing context...")
    if rep.budget and rep.dry_run:  # the digest of the store as it is: the prune would change it
        write(f"{STEP}Now: {rep.tokens_after:,} tokens (measured again by a real prune, on what it leaves)")
    elif rep.budget:
        saved = max(rep.tokens_before - rep.tokens_after, 0)
        share = f" ({saved / rep.tokens_before:.0%})" if rep.tokens_before else ""
        write(f"{STEP}Before: {rep.tokens_before:,} tokens")
        write(f"{STEP}After: {rep.tokens_after:,} tokens")
        write(f"{STEP}Saved: {saved:,} tokens{share}" if saved else f"{STEP}Saved: 0 tokens ({_why_none(rep)})")
    else:
        write(f"{STEP}(no current project)")
    write()
    write("  Storage:")
    write(f"{STEP}Logs compacted: {plural(rep.compacted_files, 'file')} ({rep.lines_folded:,} superseded lines)")
    write(f"{STEP}Old sessions removed: {rep.sessions_removed:,}")
    if rep.hard:
        write(f"{STEP}Deleted for good (--hard): {rep.hard_deleted:,} archived entries unused for "
              f"{rep.hard_delete_days}+ days")
    write(f"{STEP}Archive: {entries(rep.archive_entries)}, {size(rep.archive_bytes)}")
    write()
    done = "Dry run complete (nothing written)" if rep.dry_run else "Prune complete"
    write(Text(f"  ✅ {done}" if box else f"  {done}", style="bold green" if box else ""))
    change = rep.entries_after - rep.entries_before
    sign = "+" if change > 0 else (minus if change < 0 else "±")
    write(f"  Entries: {rep.entries_before:,} {arrow} {rep.entries_after:,} ({sign}{abs(change):,})")
    if not rep.dry_run:
        saved = rep.disk_saved
        write(f"  Disk saved: {size(saved)}" if saved >= 0 else f"  Disk used: +{size(saved)}")
    if rep.budget:
        write(f"  Context budget: {rep.tokens_after:,} / {rep.budget:,} tokens")
    if rep.large_archive:
        hint = (f"{entries(rep.archive_old, 'archived ')} unused for {rep.hard_delete_days}+ days "
                f"(archive: {size(rep.archive_bytes)}): `learn prune --hard` deletes them for good.")
        write()
        write(Text(f"  💡 {hint}" if box else f"  Hint: {hint}", style="yellow" if box else ""))


def _why_none(rep) -> str:
    """Why compression saved nothing: the digest's headings and wording ("`X` fails: use `Y`
    instead", one line a rule) cost more than they save on a few short learnings. "already
    compact" alone read wrong beside an After larger than the Before."""
    extra = rep.tokens_after - rep.tokens_before
    if extra <= 0:
        return "already compact"
    return f"the digest's headings and wording add {extra:,}"
