"""`learn recall` without typer or rich: the command's work, shared with the typer command
(learn_cli/commands/recall.py), and a fast path for pipes and `--json`.

Importing typer (and the pydantic it loads to parse) and rich costs a recall ~100 ms, ten
times the search. When stdout is not a terminal, or `--json` is given, `main` parses recall's
few options itself and prints the same plain text or JSON as the typer command. Anything it
does not understand exactly (help, an unknown option, a value out of range, a terminal
without `--json`) goes to typer, so help and usage errors stay typer's.
"""

from __future__ import annotations

import sys

from learn_cli.commands._common import EXIT_USAGE, State, fail, guarded, json_out, open_store, read_project
from learn_cli.store.jsonl import bulk_loads

DEFAULT_LIMIT = 10
MAX_LIMIT = 1000
FLAGS = {"--all": "include_archived", "--json": "as_json"}
LIMIT_OPTIONS = ("--limit", "-n")


def run(st: State, topic: list[str], limit: int, include_archived: bool, as_json: bool) -> None:
    """Search and print: what `learn recall` does, whichever path parsed it. The records found
    are decoded with the stdlib `json`: they are the index's own `json.dumps`, and importing
    orjson (~9 ms) would cost more than it saves on ~300 of them."""
    from learn_cli.engine.search import search, topic_terms
    from learn_cli.render import recall as render

    text = " ".join(topic).strip()
    if not topic_terms(text):
        fail("the topic has no words to search for", EXIT_USAGE)
    store = open_store(st, create=False)
    project = read_project(st, anywhere=True)
    pid = project.id if project else None  # outside a project: every project alike, global first
    store.refresh(loads=bulk_loads(), archives=include_archived)  # no archived record shown: none checked
    timeout = store.number("search_timeout_s", pid)
    result = search(store, text, project_id=pid, limit=limit, include_archived=include_archived,
                    timeout_s=timeout)
    shown = [h for hit in result.hits for h in (hit, *hit.also)]
    labels = store.labels([hit.pid for hit in shown] + list(result.not_searched))
    if as_json:
        json_out(render.as_json(result, text, labels))
    else:
        render.report(result, text, labels, include_archived)


def main(global_args: list[str], args: list[str]) -> int | None:
    """The fast path: the exit code, or None when typer must take the command. Its regular
    expressions (the topic's words, the redaction of what is shown) come compiled from the
    hooks' cache file when there is one (capture.regex_cache), `re` imported only for a
    pattern the file lacks; recall adds those to the file (never creates it), so the next
    recall imports no `re` (~25 M instructions, 0.65x a bare interpreter's start)."""
    opts = parse(args)
    if opts is None:
        return run_parsed(global_args, opts, run, plain=True)
    return with_cached_regexes(global_args, lambda: run_parsed(global_args, opts, run, plain=True))


def with_cached_regexes(global_args: list[str], call):
    """`call()` with the regular expressions of `text.rx` served from the hooks' cache file
    (capture.regex_cache), the patterns it lacks added to the file (never created here)."""
    from learn_cli.capture import regex_cache

    regex_cache.install_for_home(global_values(global_args)[0], patch=False)
    try:
        return call()
    finally:
        regex_cache.save(create=False)


def run_parsed(global_args: list[str], opts: dict | None, work, plain: bool = False) -> int | None:
    """`work(state, **opts)` under the commands' error guard, or None when typer must take the
    command: options it did not parse, a closed stdout (typer's guard says so), or a terminal
    without `--json` (rich's layout). The fast paths of read_fast.py run here too. `plain`:
    the store's paths are strings (no pathlib), for work that never asks a path for more."""
    if opts is None or sys.stdout is None:
        return None
    if sys.stdout.isatty() and not opts.get("as_json"):
        return None
    home, project = global_values(global_args)
    st = State(home=home, project_path=project, plain=plain)
    try:
        return guarded(lambda: work(st, **opts))
    finally:
        st.close()


def parse(args: list[str]) -> dict | None:
    """recall's arguments after the command name as `run`'s keywords, None for anything but
    the plain forms."""
    topic: list[str] = []
    values = {"limit": DEFAULT_LIMIT, "include_archived": False, "as_json": False}
    rest = iter(args)
    for arg in rest:
        name, eq, value = arg.partition("=")
        if arg in FLAGS:
            values[FLAGS[arg]] = True
        elif arg in LIMIT_OPTIONS or (eq and name == "--limit"):
            limit = _limit(value if eq else next(rest, ""))
            if limit is None:
                return None
            values["limit"] = limit
        elif arg.startswith("-"):
            return None  # --help, an unknown option, `--`: typer's
        else:
            topic.append(arg)
    return dict(values, topic=topic) if topic else None


def _limit(value: str) -> int | None:
    """A limit typer would accept (digits, 1..MAX_LIMIT), else None."""
    if not (value.isascii() and value.isdigit()):
        return None
    limit = int(value)
    return limit if 1 <= limit <= MAX_LIMIT else None


def global_values(global_args: list[str]) -> tuple[str | None, str | None]:
    """(--home, --project) from the leading global options (the last of each wins, as in click)."""
    found: dict[str, str] = {}
    rest = iter(global_args)
    for arg in rest:
        name, eq, value = arg.partition("=")
        found[name] = value if eq else next(rest, "")
    return found.get("--home"), found.get("--project")
