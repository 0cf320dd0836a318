"""The session digest of one project: gather the learnings the agent should see at session
start and hand them to `engine.context.build_context` (SPEC §2.3).

Shared by `learn context` and the SessionStart hook (`learn context --hook`), so it runs at
the start of every agent session: stdlib only (no typer/rich/orjson), and it never scans the
whole store. Two bounded index queries pick the candidates, ranked in SQL by an approximate
score; only those few hundred records are parsed:
- global learnings (`status` global or active in the global files): the best `GLOBAL_POOL` by
  score, of which the `GLOBAL_KEEP` most relevant to the project's stack are parsed
  (build_context then keeps the top 10);
- this project's `active` learnings: the best `PROJECT_POOL` by score.
Stack signals come from marker files in the project root (one directory listing).

The result is kept in the project's folder (`digest-cache.json`) with the stamp of everything
it was made from: size, mtime and inode of the global files and the project's learnings, the
budget, the stack signals, the project's name and root, and the UTC day (scores decay by the
week). A SessionStart whose stamp matches reads that one small file and never opens the index
(issue 14: 95 ms of CPU at 100,000 learnings, most of it the two queries above); any write to
those files, by a hook, a command or a hand edit, changes the stamp. `precompute` makes it
ahead of time, for the writers that end a session (promotion at SessionEnd). `cached` is that
read with no `Store` at all (the home as a string): the SessionStart hook answers from it
without importing sqlite3, pathlib or engine.context (issue 14: the hook at most 3x the bare
interpreter), and falls back to `session_digest` when it finds nothing.
"""

from __future__ import annotations

import os
import time

from learn_cli.store.paths import GLOBAL_DIR, GLOBAL_FILES, LEARNINGS_FILE, PROJECTS_DIR
from learn_cli.text import jsonlite  # not `json`: a kept digest is read without `re`

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~2 ms of every hook)
if TYPE_CHECKING:
    from collections.abc import Callable  # `collections`: ~7 M instructions of a kept digest's read

    from learn_cli.engine.context import ContextResult

GLOBAL_POOL = 500  # global learnings considered (best approximate score first)
GLOBAL_KEEP = 60  # of those, parsed for build_context (most relevant to the stack first)
PROJECT_POOL = 300  # this project's active learnings parsed (best approximate score first)
MAX_CHARS = 9000  # Claude Code cuts hook context at 10,000 characters

# Marker file in the project root -> stack signal (the names engine.context knows).
STACK_FILES = {
    "pyproject.toml": "python", "requirements.txt": "python", "setup.py": "python", "setup.cfg": "python",
    "pipfile": "python", "pipfile.lock": "python", "poetry.lock": "python", "uv.lock": "python",
    "package.json": "node", "package-lock.json": "node", "yarn.lock": "node", "pnpm-lock.yaml": "node",
    "bun.lockb": "node", "bun.lock": "node", "tsconfig.json": "node", "deno.json": "node",
    "dockerfile": "docker", "docker-compose.yml": "docker", "docker-compose.yaml": "docker",
    "compose.yml": "docker", "compose.yaml": "docker", ".dockerignore": "docker",
    "go.mod": "go", "go.sum": "go", "cargo.toml": "rust", "cargo.lock": "rust",
    "gemfile": "ruby", "gemfile.lock": "ruby", "pom.xml": "java", "build.gradle": "java",
    "build.gradle.kts": "java", "composer.json": "php", "composer.lock": "php",
}
STACK_SUFFIXES = {".csproj": "dotnet", ".sln": "dotnet", ".gemspec": "ruby"}

def stack_signals(root) -> frozenset[str]:
    """The stacks a project uses, from marker files in its root ("python", "node", …)."""
    found: set[str] = set()
    try:
        with os.scandir(root) as entries:
            for entry in entries:
                name = entry.name.lower()
                if name in STACK_FILES:
                    found.add(STACK_FILES[name])
                else:
                    suffix = os.path.splitext(name)[1]
                    if suffix in STACK_SUFFIXES:
                        found.add(STACK_SUFFIXES[suffix])
    except OSError:
        pass
    return frozenset(found)


def session_digest(store, project, budget: int | None = None, *, loads: Callable = jsonlite.loads,
                   now=None, keep: bool = True) -> ContextResult:
    """The budgeted digest for `project` (a store.project.Project): the cached one when its
    stamp still matches (never when `now` is given: a chosen clock is a test's or a replay's).
    `keep=False` writes no cache (a dry run writes nothing)."""
    if budget is None:
        budget = store.number("budget", project.id)
    signals = stack_signals(project.root)
    if now is not None:
        return _compute(store, project, budget, signals, loads, now)
    home = str(store.home)
    cache = _cache_path(home, project.id)
    stamp = _stamp(home, project, budget, signals)
    doc = _read_cache(cache, stamp)
    if doc is not None:
        return _result_of(doc)
    result = _compute(store, project, budget, signals, loads, None)
    if keep and _stamp(home, project, budget, signals) == stamp:  # nothing was written meanwhile
        _write_cache(cache, stamp, result)
    return result


def cached(home: str, project, budget: int) -> dict | None:
    """The kept digest of `project` (a store.project.Project) when its stamp still matches, as
    the cache file holds it (`text`, `tokens`, ...); None when it must be made (missing, stale,
    damaged). Reads one small file and stats four: no index, no `Store`."""
    return _read_cache(_cache_path(home, project.id), _stamp(home, project, budget, stack_signals(project.root)))


def precompute(store, project, *, loads: Callable = jsonlite.loads) -> None:
    """Make the project's digest now, so that the next SessionStart only reads it."""
    session_digest(store, project, loads=loads)


CACHE_FILE = "digest-cache.json"
# In the stamp: a kept digest is in the words of the code that made it, so a change of those
# words changes it (2: records without a fix kind worded from their commands, alike rules one line;
# 3: one fix for the same job on other arguments one line; 4: the root folder in words, a subject
# cut no shorter than its program and subcommand; 5: a lesson that teaches nothing, a force push
# an older learn made, left out; 6: a failure's alternative fixes each a line with its own
# sightings, two at most).
_CACHE_VERSION = 6


def _cache_path(home: str, pid: str) -> str:
    return os.path.join(home, PROJECTS_DIR, pid, CACHE_FILE)


def _sources(home: str, pid: str) -> list[str]:
    """The files a digest is made from: the global record files and the project's learnings
    (store.paths.Layout's `global_files()` and `learnings(pid)`, as strings)."""
    return [*(os.path.join(home, GLOBAL_DIR, name) for name in GLOBAL_FILES),
            os.path.join(home, PROJECTS_DIR, pid, LEARNINGS_FILE)]


def _stamp(home: str, project, budget: int, signals: frozenset[str]) -> list:
    files = []
    for path in _sources(home, project.id):
        try:
            st = os.stat(path)
            files.append([st.st_size, st.st_mtime_ns, st.st_ino])
        except OSError:
            files.append(None)
    day = time.strftime("%Y-%m-%d", time.gmtime())
    return [_CACHE_VERSION, day, budget, sorted(signals), project.name, str(project.root), MAX_CHARS, files]


_CACHE_FIELDS = {"text": str, "tokens": int, "items": list, "dropped": int, "merged": int, "before_tokens": int}


def _read_cache(path: str, stamp: list) -> dict | None:
    try:
        with open(path, "rb") as fh:
            doc = jsonlite.loads(fh.read())
        if doc.get("stamp") != stamp:
            return None
    except (OSError, ValueError, AttributeError):
        return None  # missing, partly written by a crash, or of another version: make it again
    if not all(isinstance(doc.get(name), kind) for name, kind in _CACHE_FIELDS.items()):
        return None
    return doc


def _result_of(doc: dict) -> ContextResult:
    from learn_cli.engine.context import ContextResult

    result = ContextResult(doc["text"], doc["tokens"], doc["items"], doc["dropped"], doc["merged"])
    result._before = doc["before_tokens"]
    return result


def _write_cache(path: str, stamp: list, result: ContextResult) -> None:
    doc = {"stamp": stamp, "text": result.text, "tokens": result.tokens, "items": list(result.items),
           "dropped": result.dropped, "merged": result.merged, "before_tokens": result.before_tokens}
    folder, name = os.path.split(path)
    tmp = os.path.join(folder, f".{name}.{os.getpid()}.tmp")  # what a killed write leaves, doctor and prune clear
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(jsonlite.dumps(doc, ensure_ascii=False))
        os.replace(tmp, path)
    except OSError:  # a read-only home, a full disk: the digest is still right, just not kept
        try:
            os.unlink(tmp)
        except OSError:
            pass


def _compute(store, project, budget: int, signals: frozenset[str], loads: Callable, now) -> ContextResult:
    from learn_cli.engine.context import build_context

    lay = store.layout
    store.refresh([*lay.global_files(), lay.learnings(project.id)], loads)
    globals_ = _global_candidates(store.index, signals, loads)
    locals_ = [loads(d) for d in store.index.best_of_project(project.id, PROJECT_POOL)]
    return build_context(globals_, locals_, project.name, signals, budget, MAX_CHARS, root=project.root, now=now)


def _global_candidates(index, signals: frozenset[str], loads: Callable) -> list[dict]:
    rows = index.best_global_bodies(GLOBAL_POOL)
    if not rows:
        return []
    # Keep the pool's order (score) within each relevance level: a stable sort on relevance.
    ranked = sorted(rows, key=lambda row: -_stack_hits(row[1], signals))[:GLOBAL_KEEP]
    wanted = [rowid for rowid, _ in ranked]
    data = index.data_of_rows(wanted)
    return [loads(data[r]) for r in wanted if r in data]


def _stack_hits(body: str, signals: frozenset[str]) -> int:
    """How many of the project's stacks a learning's text names (a cheap proxy of
    engine.context.relevance, used only to choose which records to parse)."""
    if not signals or not body:
        return 0
    from learn_cli.engine.context import STACK_KEYWORDS

    words = set(body.lower().replace("/", " ").replace(",", " ").split())
    return sum(1 for s in signals if words & STACK_KEYWORDS.get(s, frozenset((s,))))
