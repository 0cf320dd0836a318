"""The SQLite index (sound, and up to date with the files) and the record logs it measures
(compacted when mostly superseded lines)."""

from __future__ import annotations

from pathlib import Path

from learn_cli.doctor import OK, PROBLEM, REPAIRED, WARN, Check, capped, plural

DEAD_LINES_MIN = 20  # compact a log when it has at least this many dead lines …
DEAD_SHARE = 0.5  # … and they are more than half of it


def damaged_index(path: Path) -> bool:
    """An index file that is not an SQLite database (opening the store rebuilds it)."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(16)
    except OSError:
        return False
    return bool(head) and head != b"SQLite format 3\x00"


def index(store, damaged: bool = False) -> Check:
    from learn_cli.store.index import MemoryIndex

    if isinstance(store.index, MemoryIndex):
        _refresh_quietly(store)
        return Check("index", WARN, "the index cannot be written here; searches read the files directly (slower)")
    if damaged:
        _refresh_quietly(store)
        return Check("index", REPAIRED, "the index file was not a database; it has been rebuilt from the files")
    verdict = store.index.integrity()
    if verdict != "ok":
        store.index.rebuild(f"doctor: {verdict}")
        _refresh_quietly(store)
        return Check(
            "index", REPAIRED, "the index was damaged and has been rebuilt from the files", [str(verdict)[:200]]
        )
    stale = _stale_files(store)
    _refresh_quietly(store)
    if stale:
        left = _stale_files(store)
        if left:
            return Check("index", PROBLEM, f"{plural(len(left), 'file')} could not be indexed", capped(left))
        return Check(
            "index",
            REPAIRED,
            f"brought the index up to date ({plural(len(stale), 'file')} changed outside learn)",
            capped(stale),
        )
    return Check("index", OK, f"up to date ({store.index.count():,} learnings)")


def _refresh_quietly(store) -> None:
    """Bring the index up to date; bad lines are the data check's to report, not warnings."""
    import orjson

    store.index.refresh_all(orjson.loads)


def _stale_files(store) -> list[str]:
    from learn_cli.store.index import _stat

    known = store.index._known_stats()
    stale = []
    for path in store.data_files():
        rel = store.index.rel(path)
        st = _stat(path)
        if rel in known and known[rel] != st:  # files never indexed yet are simply indexed
            stale.append(rel)
    return stale


def logs(store, writable: bool) -> Check:
    bloated = []
    for rel, (lines, dead, _bad) in store.index.file_stats().items():
        if dead >= DEAD_LINES_MIN and dead > DEAD_SHARE * lines:
            bloated.append((rel, lines, dead))
    if not bloated:
        return Check("logs", OK, "no log needs compacting")
    if not writable:
        return Check("logs", WARN, f"{len(bloated)} logs are mostly superseded lines (read-only: not compacted)",
                     [f"{rel}: {dead} of {lines} lines dead" for rel, lines, dead in bloated])
    details = []
    for rel, _lines, _dead in bloated:
        before, after = store.compact(store.path_of(rel))
        details.append(f"{rel}: {before} → {after} lines")
    return Check("logs", REPAIRED, f"compacted {plural(len(bloated), 'log')}", capped(details))


def keys(store) -> Check:
    """Were the learnings keyed again since this release's key rules came (engine.rekey)? Only
    a prune does it: with every learning in one write, and their duplicates folded after."""
    from learn_cli.engine import rekey
    from learn_cli.text.keys import ERROR_KEY

    last = rekey.last_rules(store)
    if last == rekey.rules_fingerprint():
        return Check("keys", OK, "keyed by this release's rules")
    stored = store.index.count_of_key_kind(ERROR_KEY)
    if not stored:
        return Check("keys", OK, "no learning of an error to key")
    if last is None:
        return Check("keys", OK, f"the next `learn prune` checks the keys of {plural(stored, 'error learning')}")
    return Check("keys", WARN, f"the key rules changed since the last prune: run `learn prune` to key "
                               f"{plural(stored, 'error learning')} again")

