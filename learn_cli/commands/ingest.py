"""`learn ingest [PATH…]`: learn from past sessions of Claude Code, Codex CLI and Gemini CLI (SPEC §3).

Default PATH: `$CLAUDE_CONFIG_DIR/projects` or `~/.claude/projects` (every `*.jsonl` below it,
subagent transcripts included), plus `~/.codex/sessions` and `~/.gemini/tmp` when they exist.
Idempotent: a second run adds nothing; a transcript that grew is read from where the last run
stopped. The work is learn_cli.capture.ingest.
"""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from learn_cli.commands._common import fail, json_out, open_store, state


def command(
    ctx: typer.Context,
    paths: list[str] = typer.Argument(None, metavar="[PATH]...", show_default=False,
                                      help="Session log files or folders (default: ~/.claude/projects, "
                                           "~/.codex/sessions, ~/.gemini/tmp)."),
    as_json: bool = typer.Option(False, "--json", help="Machine-readable summary (see `learn help ingest`)."),
) -> None:
    """Learn from past sessions (Claude Code, Codex CLI, Gemini CLI): failures, their fixes, user corrections."""
    import orjson

    from learn_cli.capture.ingest import Ingest, IngestBusy, default_roots, find_transcripts

    roots = [Path(p).expanduser() for p in paths] if paths else default_roots()
    for root in roots if paths else []:
        if not root.exists():
            fail(f"{root}: no such file or folder")
    files = find_transcripts(roots)
    store = open_store(state(ctx))
    total = sum(_size(f) for f in files)
    with _progress(enabled=not as_json and bool(files), total=total) as advance:
        try:
            summary = Ingest(store, loads=orjson.loads, progress=advance).run(files)
        except IngestBusy as exc:
            fail(f"{exc}; try again when it has finished")
    summary["paths"] = [str(r) for r in roots]
    if as_json:
        json_out(summary)
    else:
        _report(summary, roots, found=bool(files))


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


class _progress:
    """A bytes progress bar on stderr when it is a terminal; a no-op callback otherwise."""

    def __init__(self, enabled: bool, total: int):
        self.enabled = enabled and sys.stderr.isatty()
        self.total = total
        self.bar = None

    def __enter__(self):
        if not self.enabled:
            return lambda _n: None
        from rich.progress import (
            BarColumn,
            DownloadColumn,
            Progress,
            TextColumn,
            TimeRemainingColumn,
            TransferSpeedColumn,
        )

        from learn_cli.render.console import console

        self.bar = Progress(TextColumn("  📥 transcripts"), BarColumn(), DownloadColumn(), TransferSpeedColumn(),
                            TimeRemainingColumn(), console=console(stderr=True), transient=True)
        self.bar.__enter__()
        task = self.bar.add_task("ingest", total=max(1, self.total))
        return lambda n: self.bar.advance(task, n) if n else None

    def __exit__(self, *exc):
        if self.bar is not None:
            self.bar.__exit__(*exc)
        return False


def _shown(path: Path) -> str:
    """A path under the home folder as `~/…` (shorter, and no user name on screen)."""
    import os

    home = os.path.expanduser("~")
    text = str(path)
    return "~" + text[len(home):] if home not in ("", "/") and (text == home or text.startswith(home + "/")) else text


def _report(s: dict, roots: list[Path], found: bool) -> None:
    from learn_cli.render.console import fancy

    where = ", ".join(_shown(r) for r in roots)
    out = sys.stdout.write
    if not found:
        out(f"No Claude Code transcripts found in {where}.\n" if fancy() else f"transcripts: 0: {where}\n")
        return
    mb = s["bytes"] / 1_000_000
    if fancy() and not s["files"]:
        out(f"✅ Nothing new in {where}: all {s['files_skipped']:,} transcripts were ingested before.\n")
        return
    if fancy():
        out(f"📥 Ingested Claude Code transcripts from {where}\n\n")
        out(f"  Read: {s['files']:,} transcripts ({s['files_skipped']:,} unchanged, skipped), "
            f"{s['lines']:,} lines, {mb:,.1f} MB in {s['seconds']:.1f}s\n")
        out(f"  Tool calls: {s['tool_calls']:,} ({s['failures']:,} failed; "
            f"{s['ignored_errors']:,} refusals and rejections, not learnings)\n")
        out("  Processing:\n")
        out(f"    ✅ New learnings: {s['learnings_new']:,} ({s['learnings_activated']:,} became active)\n")
        out(f"    🔄 Merged with existing: {s['learnings_merged']:,}\n")
        out(f"    🗣  User corrections: {s['corrections']:,}\n")
        if s["malformed"]:
            out(f"    ⚠  Malformed lines skipped: {s['malformed']:,}\n")
        if s["capture_off"]:
            out(f"    ⏭  Events of projects with capture off: {s['capture_off']:,}\n")
        out("\n  ✅ Ingest complete. `learn context` shows what the agent will see; `learn recall TOPIC` searches.\n")
        return
    out(f"transcripts: {s['files']} (unchanged, skipped: {s['files_skipped']})\n")
    out(f"lines: {s['lines']} (malformed: {s['malformed']})\n")
    out(f"tool calls: {s['tool_calls']} (failures: {s['failures']}, ignored errors: {s['ignored_errors']})\n")
    out(f"learnings: {s['learnings_new']} new, {s['learnings_merged']} merged, {s['learnings_activated']} activated\n")
    out(f"corrections: {s['corrections']}\n")
    if s["capture_off"]:
        out(f"capture off: {s['capture_off']} events skipped\n")
    out(f"time: {s['seconds']:.1f}s ({s['lines_per_s']} lines/s)\n")
