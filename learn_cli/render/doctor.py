"""`learn doctor` output: one line per check, its details indented below it."""

from __future__ import annotations

from rich.text import Text

from learn_cli.render.console import fancy
from learn_cli.render.learning import display_path, safe, write

ICON = {"ok": "✅", "repaired": "🔧", "warn": "⚠️ ", "problem": "❌"}
STYLE = {"ok": "green", "repaired": "cyan", "warn": "yellow", "problem": "red"}


def report(checks, home, healthy: bool) -> None:
    fancy_out = fancy()
    title = f"learn doctor: {display_path(home)}"
    write(Text(f"🩺 {title}" if fancy_out else title, style="bold" if fancy_out else ""))
    write()
    width = max(len(c.name) for c in checks)
    for check in checks:
        line = Text()
        if fancy_out:
            line.append(f"  {ICON[check.status]} ")
            line.append(check.name.ljust(width), style="bold")
            line.append(
                f"  {safe(check.summary, one_line=True)}", style=STYLE[check.status] if check.status != "ok" else ""
            )
        else:
            line.append(f"{check.status.ljust(8)} {check.name.ljust(width)}  {safe(check.summary, one_line=True)}")
        write(line)
        indent = " " * (width + (7 if fancy_out else 11))
        for detail in check.details:
            write(Text(f"{indent}{safe(detail, one_line=True)}", style="dim" if fancy_out else ""))
    write()
    counts = {s: sum(1 for c in checks if c.status == s) for s in ICON}
    parts = [f"{counts[s]} {s}" for s in ("repaired", "warn", "problem") if counts[s]]
    verdict = "healthy" if healthy else "problems remain"
    summary = f"Result: {verdict}" + (f" ({', '.join(parts)})" if parts else "")
    write(Text(summary, style=("green" if healthy else "red") if fancy_out else ""))
