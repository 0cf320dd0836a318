"""`learn graph` text output: the seed's category tree, connections, hubs and totals."""

from __future__ import annotations

import sys

from learn_cli.render.console import fancy, out
from learn_cli.render.text import plural, safe


def raw(text: str) -> None:
    """dot / mermaid source: written as is (already escaped), never through rich."""
    sys.stdout.write(text)


def report(graph) -> None:
    box = fancy()
    tee, last, bar, gap = ("├── ", "└── ", "│   ", "    ") if box else ("|-- ", "`-- ", "|   ", "    ")
    both, to = ("←→", "→") if box else ("<->", "->")
    out("🌐 Knowledge Graph" if box else "Knowledge graph", bold=True)
    out()
    out("Category Tree:" if box else "Category tree:", bold=box)
    if not graph.tree:
        out("  (no learnings yet)")
    for i, (type_label, count, cats) in enumerate(graph.tree):
        end = i == len(graph.tree) - 1
        out(f"{last if end else tee}{safe(type_label, one_line=True)} ({count:,})")
        for j, (category, n) in enumerate(cats):
            out(f"{gap if end else bar}{last if j == len(cats) - 1 else tee}{safe(category, one_line=True)} ({n:,})")
    out()
    out("Cross-Project Connections:" if box else "Cross-project connections:", bold=box)
    if not graph.connections:
        out("  (no learning is shared by two projects yet)")
    for a, b, n in graph.connections:
        out(f"  {safe(graph.label(a), one_line=True)} {both} {safe(graph.label(b), one_line=True)}: "
              f"{plural(n, 'shared learning')}")
    if graph.connected_pairs > len(graph.connections):
        out(f"  ... ({graph.connected_pairs - len(graph.connections):,} more connected pairs)")
    if graph.wide_keys:
        out(f"  ({plural(graph.wide_keys, 'learning')} seen in more than 50 projects: counted as hubs, not pairs)")
    out()
    out("Hub Nodes (most connected):" if box else "Hub nodes (most connected):", bold=box)
    if not graph.hubs:
        out("  (none yet)")
    for i, h in enumerate(graph.hubs, 1):
        out(f'  {i}. "{safe(h["text"], one_line=True)}" {to} {plural(h["projects"], "project")}, '
              f'{plural(h["uses"], "use")}')
    out()
    t = graph.totals
    out(f"Total: {t['active']:,} active | {t['archived']:,} archived | {t['global']:,} global", bold=box)
