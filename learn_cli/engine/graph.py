"""`learn graph`: the knowledge graph as data — category tree, cross-project connections,
hub nodes, totals — and its dot / mermaid renderings.

Everything comes from index aggregates; no record is parsed except the few hubs shown.
- tree: live learnings (project and global files, not archived) counted by type, category;
- connections: two projects are connected by every learning they share, i.e. whose key
  (a learning without a key is its own) appears in both project files or lists both in
  `projects`. Pairs are counted per key, which is quadratic only in the number of projects
  one learning is seen in; a learning seen in more than WIDE_KEY projects is a hub of
  everything and is counted as a hub, not as pairs (`wide_keys` says how many);
- hubs: learnings by number of projects, then uses (the global copy's frequency, or the sum
  of the project copies' when that is larger);
- totals: live (every status but archived), archived, global.
"""

from __future__ import annotations

import heapq
from collections import Counter
from collections.abc import Callable
from itertools import combinations

from learn_cli.store.record import TYPE_PLURAL
from learn_cli.store.record import TYPES as TYPE_ORDER
from learn_cli.text import jsonlite

WIDE_KEY = 50
CONNECTIONS_SHOWN = 10
HUBS_SHOWN = 5


class Graph:
    """What `learn graph` shows. A plain class, not a dataclass: `dataclasses` imports
    `inspect`, ~70 M instructions, half of a piped `learn graph` on a home of a thousand."""

    def __init__(self, labels: dict | None = None):
        self.tree: list = []  # [(type label, count, [(category, count), ...])]
        self.connections: list = []  # [(pid a, pid b, shared)] best first
        self.connected_pairs = 0
        self.wide_keys = 0
        self.hubs: list = []  # [{key, id, text, projects, uses, project_ids}]
        self.totals: dict = {}  # {active, archived, global}
        self.labels: dict = labels or {}  # pid -> display label

    def as_json(self) -> dict:
        return {
            "tree": [{"type": t, "count": n, "categories": [{"category": c, "count": k} for c, k in cats]}
                     for t, n, cats in self.tree],
            "connections": [{"a": {"id": a, "name": self.label(a)}, "b": {"id": b, "name": self.label(b)},
                             "shared": n} for a, b, n in self.connections],
            "connected_pairs": self.connected_pairs,
            "wide_keys": self.wide_keys,
            "hubs": [{k: v for k, v in h.items() if k != "project_ids"} for h in self.hubs],
            "totals": self.totals,
        }

    def label(self, pid: str) -> str:
        return self.labels.get(pid, pid)


def build_graph(store, loads: Callable = jsonlite.loads, connections: int = CONNECTIONS_SHOWN,
                hubs: int = HUBS_SHOWN) -> Graph:
    store.refresh(loads=loads)
    index = store.index
    graph = Graph(labels={pid: info["label"] for pid, info in store.projects().items()})
    graph.tree, graph.totals = _tree_and_totals(index)
    projects_of = _keys(index, loads)
    pairs = Counter()
    for pids in projects_of.values():
        if len(pids) > WIDE_KEY:
            graph.wide_keys += 1
        elif len(pids) > 1:
            pairs.update(combinations(sorted(pids), 2))
    graph.connected_pairs = len(pairs)
    # the strongest pairs: cut by count first (cheap), then order the few kept by name
    strongest = heapq.nlargest(connections, pairs.values()) if pairs else []
    floor = strongest[-1] if len(strongest) >= connections else 0
    named = [(*sorted((a, b), key=lambda p: (graph.label(p), p)), n) for (a, b), n in pairs.items() if n >= floor]
    named.sort(key=lambda c: (-c[2], graph.label(c[0]), graph.label(c[1])))
    graph.connections = named[:connections]
    graph.hubs = _hubs(index, projects_of, hubs, loads)
    return graph


def _tree_and_totals(index) -> tuple[list, dict]:
    """The category tree of live learnings and the totals, from one aggregate scan."""
    by_type: dict[str, dict[str, int]] = {}
    totals = {"active": 0, "archived": 0, "global": 0}
    for scope, rtype, category, status, n in index.kind_counts():
        if scope in ("archive", "global-archive") or status == "archived":
            totals["archived"] += n
            continue
        totals["active"] += n
        totals["global"] += n if scope == "global" else 0
        cats = by_type.setdefault(rtype or "?", {})
        cats[category or "?"] = cats.get(category or "?", 0) + n
    order = [t for t in TYPE_ORDER if t in by_type] + sorted(t for t in by_type if t not in TYPE_ORDER)
    tree = []
    for rtype in order:
        cats = sorted(by_type[rtype].items(), key=lambda kv: (-kv[1], kv[0]))
        tree.append((TYPE_PLURAL.get(rtype, rtype), sum(n for _, n in cats), cats))
    return tree, totals


def _keys(index, loads: Callable) -> dict[str, set]:
    """key -> the projects it is seen in, for every key that may be seen in more than one (the
    others join no pair and are no hub), in one scan. The usual list, just the file's own
    project, is recognised as text."""
    projects_of: dict[str, set] = {}
    for key, pid, projects in index.projects_by_shared_key():
        seen = projects_of.get(key)
        if seen is None:
            seen = projects_of[key] = set()
        if pid:
            seen.add(pid)
            if projects == f'["{pid}"]':
                continue
        if isinstance(projects, str) and projects.startswith("["):
            seen.update(p for p in loads(projects) if isinstance(p, str) and p)
    return projects_of


def _uses(index, keys: list[str]) -> dict[str, int]:
    """Uses of each learning: its global copy's frequency, or its project copies' sum if larger."""
    out: dict[str, int] = {}
    by_column = {
        "key": [k for k in keys if not k.startswith("id:")],
        "id": [k[3:] for k in keys if k.startswith("id:")],
    }
    for column, values in by_column.items():
        prefix = "id:" if column == "id" else ""
        out.update((prefix + k, max(local or 0, global_ or 0)) for k, local, global_ in index.uses(column, values))
    return out


def _hubs(index, projects_of: dict, limit: int, loads: Callable) -> list:
    """The learnings seen in the most projects, then with the most uses."""
    from learn_cli.engine.promotion import title

    shared = [k for k, p in projects_of.items() if len(p) > 1]
    if not shared:
        return []
    # uses only break ties: read them for the keys that can still make the list
    cutoff = heapq.nlargest(limit, (len(projects_of[k]) for k in shared))[-1]
    contenders = [k for k in shared if len(projects_of[k]) >= cutoff]
    uses = _uses(index, contenders)
    ranked = sorted(contenders, key=lambda k: (-len(projects_of[k]), -uses.get(k, 1), k))[:limit]
    hubs = []
    for key in ranked:
        if key.startswith("id:"):
            row = index.first_with_id(key[3:])
        else:
            row = index.best_live_with_key(key)
        if row is None:
            continue
        rec = loads(row[1])
        hubs.append({"key": key, "id": row[0], "text": title(rec), "projects": len(projects_of[key]),
                     "uses": uses.get(key, 1), "project_ids": sorted(projects_of[key])})
    return hubs


# ---------------------------------------------------------------- dot and mermaid


def _elements(graph: Graph):
    """The drawing both notations share, in order: ("node", id, label, shape, note) and ("edge",
    a, b, style, shared). Shapes: total, type, category, project, hub (its note: how widely it
    is used); edge styles: tree, shared (by `shared` learnings), hub."""
    ids = _NodeIds()
    root = ids.get("root")
    yield "node", root, _total_label(graph), "total", ""
    for type_label, count, cats in graph.tree:
        t = ids.get(f"type:{type_label}")
        yield "node", t, f"{type_label} ({count})", "type", ""
        yield "edge", root, t, "tree", 0
        for category, n in cats:
            c = ids.get(f"cat:{type_label}:{category}")
            yield "node", c, f"{category} ({n})", "category", ""
            yield "edge", t, c, "tree", 0
    for pid in _shown_projects(graph):
        yield "node", ids.get("p:" + pid), graph.label(pid), "project", ""
    for a, b, n in graph.connections:
        yield "edge", ids.get("p:" + a), ids.get("p:" + b), "shared", n
    for h in graph.hubs:
        node = ids.get(f"hub:{h['key']}")
        yield "node", node, h["text"], "hub", f"{h['projects']} projects, {h['uses']} uses"
        for pid in h["project_ids"][:10]:
            yield "edge", node, ids.get("p:" + pid), "hub", 0


class _Notation:
    """How one graph language writes `_elements`: node and edge templates, the (opening,
    closing) around a label for each shape, how a hub's note joins its label, the escaping."""

    def __init__(self, head, tail, node, shapes, note, edges, escape):
        self.head, self.tail, self.node, self.shapes = head, tail, node, shapes
        self.note, self.edges, self.escape = note, edges, escape

    def render(self, graph: Graph) -> str:
        lines = list(self.head)
        for kind, a, b, style, extra in _elements(graph):
            if kind == "node":
                opening, closing = self.shapes[style]
                label = self.note.format(label=b, note=extra) if extra else b
                lines.append(self.node.format(id=a, open=opening, label=self.escape(label), close=closing))
            else:
                lines.append(self.edges[style].format(a=a, b=b, n=extra, width=min(1 + extra / 5, 6)))
        return "\n".join(lines + list(self.tail)) + "\n"


def to_dot(graph: Graph) -> str:
    """Graphviz (undirected): type → category tree, project ↔ project edges, hubs → projects."""
    return _DOT.render(graph)


def to_mermaid(graph: Graph) -> str:
    """Mermaid flowchart: the same nodes and edges as to_dot."""
    return _MERMAID.render(graph)


class _NodeIds:
    """Node names we make up (n1, n2, …): nothing from a record is ever an identifier."""

    def __init__(self):
        self.names: dict[str, str] = {}

    def get(self, thing: str) -> str:
        if thing not in self.names:
            self.names[thing] = f"n{len(self.names) + 1}"
        return self.names[thing]


def _shown_projects(graph: Graph) -> list[str]:
    seen: dict[str, None] = {}
    for a, b, _ in graph.connections:
        seen.setdefault(a)
        seen.setdefault(b)
    for h in graph.hubs:
        for pid in h["project_ids"][:10]:
            seen.setdefault(pid)
    return list(seen)


def _total_label(graph: Graph) -> str:
    t = graph.totals
    return f"{t.get('active', 0)} active | {t.get('archived', 0)} archived | {t.get('global', 0)} global"


def _dot(text: str) -> str:
    """A dot double-quoted string body: backslashes and quotes escaped, one line."""
    text = "".join(c if c.isprintable() or c == "\n" else " " for c in str(text))
    text = text.replace("\\", "\\\\").replace('"', '\\"')
    return text.replace("\n", "\\n")


def _mermaid(text: str) -> str:
    """A mermaid quoted label: characters that could end or reshape it become entity codes."""
    out = []
    for c in str(text):
        if c.isalnum() or c in _MERMAID_PLAIN:
            out.append(c)
        elif c.isprintable():
            out.append(f"#{ord(c)};")
        else:
            out.append(" ")
    return "".join(out)


_MERMAID_PLAIN = frozenset(" .,:/()+-_'=!?@*~$%^&")



_DOT = _Notation(
    head=("graph knowledge {", '  graph [rankdir=LR, label="learn knowledge graph"];', "  node [shape=box];"),
    tail=("}",), node='  {id} [label="{label}"{close}];', note="{label}\n{note}",
    shapes={"total": ("", ", shape=doubleoctagon"), "type": ("", ""), "category": ("", ", shape=plaintext"),
            "project": ("", ", shape=ellipse"), "hub": ("", ", shape=note")},
    edges={"tree": "  {a} -- {b};", "hub": "  {a} -- {b} [style=dashed];",
           "shared": '  {a} -- {b} [label="{n}", penwidth={width:.1f}];'},
    escape=_dot)
_MERMAID = _Notation(
    head=("graph LR",), tail=(), node='  {id}{open}"{label}"{close}', note="{label} ({note})",
    shapes={"total": ("{{", "}}"), "type": ("[", "]"), "category": ("[", "]"), "project": ("([", "])"),
            "hub": (">", "]")},
    edges={"tree": "  {a} --> {b}", "hub": "  {a} -.- {b}", "shared": '  {a} ---|"{n} shared"| {b}'},
    escape=_mermaid)
