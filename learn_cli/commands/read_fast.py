"""`learn stats`, `learn show ID` and `learn graph` without typer: the commands' work, shared
with their typer commands (stats.py, show.py, graph.py), and a fast path for pipes and `--json`.

Importing typer and registering every command costs ~75 ms of CPU, more than these commands'
own work on a home of a thousand learnings (issue 14: ≤ 150 ms). As for `learn recall`
(recall_fast.py): when stdout is not a terminal, or `--json` is given, `main` parses the
command's few options itself and prints what the typer command prints; anything it does not
understand exactly (help, an unknown option or format, a missing id) goes to typer, so help
and usage errors stay typer's.
"""

from __future__ import annotations

import os

from learn_cli.commands._common import State, fail, json_out, open_store, read_project
from learn_cli.commands.recall_fast import run_parsed, with_cached_regexes
from learn_cli.store.jsonl import bulk_loads

GRAPH_FORMATS = ("text", "json", "dot", "mermaid")


def stats(st: State, as_json: bool) -> None:
    from learn_cli.engine.stats import gather
    from learn_cli.render import stats as render

    store = open_store(st, create=False)
    doc = gather(store, read_project(st, anywhere=True), loads=bulk_loads())
    if as_json:
        json_out(doc)
    else:
        render.report(doc)


def show(st: State, rid: str, as_json: bool) -> None:
    from learn_cli.engine.scoring import score
    from learn_cli.render import learning as render

    store = open_store(st, create=False)
    path, rec, scope = find(store, rid)
    file = os.path.relpath(path, store.home)
    value = score(rec)
    if as_json:
        json_out({"file": file, "scope": scope, "score": round(value, 2), "record": rec})
        return
    labels = {pid: info["label"] for pid, info in store.projects().items()}
    render.show(rec, file, scope, value, labels)


def find(store, rid: str):
    """(path, record, scope) of a learning by id or unique prefix; one clear line when none."""
    rid = rid.strip()
    if not rid:
        fail("no id given")
    store.refresh(loads=bulk_loads())
    found = store.get(rid)
    if found is None:
        fail(f"no learning with id {rid!r} (find ids with `learn recall TOPIC`)")
    path, rec = found
    scope, _pid = store.index.scope_of(path)
    return path, rec, scope


def graph(st: State, fmt: str, as_json: bool) -> None:
    from learn_cli.engine.graph import build_graph, to_dot, to_mermaid
    from learn_cli.render import graph as render

    store = open_store(st, create=False)
    built = build_graph(store, loads=bulk_loads())
    if as_json or fmt == "json":
        json_out(built.as_json())
    elif fmt == "dot":
        render.raw(to_dot(built))
    elif fmt == "mermaid":
        render.raw(to_mermaid(built))
    else:
        render.report(built)


# name: (the work, its positional arguments, its flags, its options with a value and their choices)
COMMANDS = {
    "stats": (stats, (), {"--json": "as_json"}, {}),
    "show": (show, ("rid",), {"--json": "as_json"}, {}),
    "graph": (graph, (), {"--json": "as_json"}, {"--format": ("fmt", GRAPH_FORMATS), "-f": ("fmt", GRAPH_FORMATS)}),
}
DEFAULTS = {"as_json": False, "fmt": "text"}


def main(name: str, global_args: list[str], args: list[str]) -> int | None:
    """The fast path of command `name`: the exit code, or None when typer must take it. Its
    regular expressions come compiled from the hooks' cache file when there is one, as
    recall's do (recall_fast.main)."""
    opts, work = parse(name, args), COMMANDS[name][0]
    if opts is None:
        return run_parsed(global_args, opts, work)
    return with_cached_regexes(global_args, lambda: run_parsed(global_args, opts, work, plain=True))


def parse(name: str, args: list[str]) -> dict | None:
    """The command's arguments as its work's keywords, None for anything but the plain forms."""
    _work, positional, flags, valued = COMMANDS[name]
    values = {key: DEFAULTS[key] for key in (*flags.values(), *(v[0] for v in valued.values()))}
    words: list[str] = []
    rest = iter(args)
    for arg in rest:
        option, eq, value = arg.partition("=")
        if arg in flags:
            values[flags[arg]] = True
        elif arg in valued or (eq and option.startswith("--") and option in valued):
            key, choices = valued[option if eq else arg]
            value = value if eq else next(rest, "")
            if value not in choices:
                return None  # typer names the choices
            values[key] = value
        elif arg.startswith("-"):
            return None  # --help, an unknown option, `--`: typer's
        else:
            words.append(arg)
    if len(words) != len(positional):
        return None
    return dict(values, **dict(zip(positional, words, strict=True)))
