"""Corrupt lines in the record logs and unreadable JSON documents: reported as file:line,
repaired by moving them into `<file>.corrupt` beside the file, then folding it (never dropped)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from learn_cli.doctor import OK, PROBLEM, REPAIRED, Check, capped, plural


def data(store, writable: bool) -> Check:
    import orjson

    from learn_cli.store import jsonl

    found: list[str] = []
    repaired = 0
    failed: list[str] = []
    # The index (just refreshed) knows how many bad lines each file has: read only those files.
    with_bad = {rel for rel, (_lines, _dead, bad) in store.index.file_stats().items() if bad}
    for path in store.data_files():
        if store.index.rel(path) not in with_bad:
            continue
        loaded = jsonl.load(path, orjson.loads)
        if not loaded.bad:
            continue
        rel = os.path.relpath(path, store.home)
        found.extend(f"{rel}:{b.line}: {b.reason}" for b in loaded.bad)
        try:
            if not writable:
                raise PermissionError("read-only")
            repaired += _set_aside_bad_lines(store, Path(path))
        except OSError as exc:
            failed.append(f"{rel}: not repaired ({exc.strerror or exc})")
    for path in _json_docs(store):
        problem = _json_doc_problem(path)
        if problem is None:
            continue
        rel = os.path.relpath(path, store.home)
        found.append(f"{rel}: {problem}")
        try:
            if not writable:
                raise PermissionError("read-only")
            _set_aside_doc(store, path)
            repaired += 1
        except OSError as exc:
            failed.append(f"{rel}: not repaired ({exc.strerror or exc})")
    if not found:
        return Check("data", OK, "no corrupt lines")
    details = capped(found) + failed
    if failed:
        return Check("data", PROBLEM, f"{plural(len(found), 'corrupt line')}; some could not be set aside", details)
    return Check(
        "data",
        REPAIRED,
        f"moved {plural(len(found), 'corrupt line')} into <file>.corrupt beside {'it' if len(found) == 1 else 'them'}",
        details,
    )


def _set_aside_bad_lines(store, path: Path) -> int:
    """Move the lines that do not parse into `<file>.corrupt` (appended, synced), then rewrite
    the file with its good records folded, all under the file's lock."""
    from learn_cli.store import jsonl
    from learn_cli.store.locks import file_lock

    with file_lock(path):
        data = path.read_bytes()
        if str(path).endswith(".json"):
            loaded = jsonl.load(path)
            items = _doc_items(data)
            bad = b"".join(json.dumps(items[b.line - 1]).encode() + b"\n" for b in loaded.bad
                           if 0 < b.line <= len(items))
            _append_corrupt(path, bad or data)
            jsonl.rewrite(path, loaded.records.values())
            count = len(loaded.bad)
        else:
            loaded = jsonl.parse_log(str(path), data)
            raw = data.split(b"\n")
            _append_corrupt(path, b"".join(raw[b.line - 1] + b"\n" for b in loaded.bad))
            jsonl.rewrite(path, loaded.records.values())
            count = len(loaded.bad)
    store.refresh([path])
    return count


def _doc_items(data: bytes) -> list:
    try:
        doc = json.loads(data)
    except ValueError:
        return []
    items = doc.get("learnings") if isinstance(doc, dict) else None
    return items if isinstance(items, list) else []


def _append_corrupt(path: Path, payload: bytes) -> None:
    if not payload:
        return
    target = path.with_name(path.name + ".corrupt")
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        os.write(fd, payload)
        os.fsync(fd)
    finally:
        os.close(fd)


def _json_docs(store) -> list[Path]:
    """Settings and metadata documents that must be JSON objects."""
    lay = store.layout
    docs = [lay.config, lay.stats]
    try:
        pids = [e.name for e in os.scandir(lay.projects_dir) if e.is_dir()]
    except OSError:
        pids = []
    for pid in sorted(pids):
        docs.extend(p for p in (lay.project_json(pid), lay.overrides(pid)) if p.exists())
    return docs


def _json_doc_problem(path: Path) -> str | None:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"unreadable ({exc.strerror})"
    if not data.strip():
        return None
    try:
        doc = json.loads(data)
    except ValueError as exc:
        return f"not JSON ({str(exc)[:60]})"
    return None if isinstance(doc, dict) else "not a JSON object"


def _set_aside_doc(store, path: Path) -> None:
    """Keep the unreadable document as `<name>.corrupt`; write what the store can rebuild."""
    from learn_cli.store import jsonl
    from learn_cli.store.paths import DEFAULT_CONFIG

    _append_corrupt(path, path.read_bytes())
    lay = store.layout
    if path == lay.config:
        body = dict(DEFAULT_CONFIG)
    elif path == lay.stats:
        body = {"schema": 1}
    elif path.name == "project.json":
        pid = path.parent.name
        known = store.index.project_names().get(pid, {})
        body = {"id": pid, "name": known.get("name") or pid, "root": known.get("root"), "remote": known.get("remote")}
    else:
        body = {}
    jsonl.atomic_write(path, (json.dumps(body, indent=2) + "\n").encode())
    store._config = None
