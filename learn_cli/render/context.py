"""`learn context` output: the digest as the agent sees it, and on a terminal a footer with
the tokens it costs."""

from __future__ import annotations

import sys

from rich.text import Text

from learn_cli.render.console import fancy
from learn_cli.render.learning import plural, write


def digest(result, project_name: str, budget: int) -> None:
    fancy_out = fancy()
    if not result.text:
        message = f"Nothing to load for {project_name} yet (no active or global learnings)."
        if fancy_out:
            write(Text(f"📭 {message}"))
        else:
            sys.stderr.write(f"learn: {message}\n")
        return
    # The digest is printed exactly as the agent gets it (already sanitized; never re-wrapped).
    sys.stdout.write(result.text.rstrip("\n") + "\n")
    if not fancy_out:
        return
    sys.stdout.flush()
    write()
    shown = len(result.items)
    parts = [f"{result.tokens:,} / {budget:,} tokens", f"{plural(shown, 'learning')} loaded"]
    if result.merged:
        parts.append(f"{result.merged} merged")
    if result.dropped:
        parts.append(f"{plural(result.dropped, 'rule')} left out to fit the budget")
    write(Text("── " + " · ".join(parts) + " ──", style="dim"))
