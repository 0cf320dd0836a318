"""`learn graph` text output: the seed's category tree, connections, hubs and totals."""

from __future__ import annotations

import sys

from rich.text import Text

from learn_cli.render.console import fancy
from learn_cli.render.learning import plural, safe, write


def raw(text: str) -> None:
    """dot / mermaid source: written as is (already escaped), never through rich."""
    sys.stdout.write(text)


def report(graph) -> None:
    box = fancy()
    tee, last, bar, gap = ("├── ", "└── ", "│   ", "    ") if box else ("|-- ", "`-- ", "|   ", "    ")
    both, to = ("←→", "→") if box else ("<->", "->")
    write(Text("🌐 Knowledge Graph" if box else "Knowledge graph", style="bold"))
    write()
    write(Text("Category Tree:" if box else "Category tree:", style="bold" if box else ""))
    if not graph.tree:
        write("  (no learnings yet)")
    for i, (type_label, count, cats) in enumerate(graph.tree):
        end = i == len(graph.tree) - 1
        write(f"{last if end else tee}{safe(type_label, one_line=True)} ({count:,})")
        for j, (category, n) in enumerate(cats):
            write(f"{gap if end else bar}{last if j == len(cats) - 1 else tee}{safe(category, one_line=True)} ({n:,})")
    write()
    write(Text("Cross-Project Connections:" if box else "Cross-project connections:", style="bold" if box else ""))
    if not graph.connections:
        write("  (no learning is shared by two projects yet)")
    for a, b, n in graph.connections:
        write(f"  {safe(graph.label(a), one_line=True)} {both} {safe(graph.label(b), one_line=True)}: "
              f"{plural(n, 'shared learning')}")
    if graph.connected_pairs > len(graph.connections):
        write(f"  ... ({graph.connected_pairs - len(graph.connections):,} more connected pairs)")
    if graph.wide_keys:
        write(f"  ({plural(graph.wide_keys, 'learning')} seen in more than 50 projects: counted as hubs, not pairs)")
    write()
    write(Text("Hub Nodes (most connected):" if box else "Hub nodes (most connected):", style="bold" if box else ""))
    if not graph.hubs:
        write("  (none yet)")
    for i, h in enumerate(graph.hubs, 1):
        write(f'  {i}. "{safe(h["text"], one_line=True)}" {to} {plural(h["projects"], "project")}, '
              f'{plural(h["uses"], "use")}')
    write()
    t = graph.totals
    write(Text(f"Total: {t['active']:,} active | {t['archived']:,} archived | {t['global']:,} global",
               style="bold" if box else ""))
