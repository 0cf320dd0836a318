"""`learn doctor`: check the store, the hooks and capture health; repair what is safe to repair.

Checks, in order (each ends ok, repaired, warn or problem):
  layout       the store's folders and files exist (created when missing)
  permissions  folders 0700, files 0600 (modes repaired)
  index        the SQLite index is sound and matches the files (rebuilt / refreshed)
  data         corrupt lines in every data file, reported as file:line; repaired by moving
               them into `<file>.corrupt` beside it, then folding the file (never dropped)
  logs         record logs far bigger than their live records (compacted)
  disk         free space under the home
  archive      disk used by archived learnings (`learn prune --hard` suggested when large)
  hooks        whether `learn capture` is registered in Claude Code's settings (read-only)
  capture      events captured in the last 7 days, the last capture, warnings in learn.log
  spool        events hooks had no time to learn: learned now (repaired); a problem when
               any were dropped in the last 7 days (counters, not log lines)
Exit 0 when everything is healthy or was repaired, 1 when a problem remains.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import time
from dataclasses import dataclass, field
from pathlib import Path

import typer

from learn_cli.commands._common import json_out, state

OK, REPAIRED, WARN, PROBLEM = "ok", "repaired", "warn", "problem"
DISK_PROBLEM = 50 * 1024**2  # below this, captures start failing
DISK_WARN = 500 * 1024**2
ARCHIVE_WARN_BYTES = 20 * 1024**2
ARCHIVE_WARN_ENTRIES = 10_000
DEAD_LINES_MIN = 20  # compact a log when it has at least this many dead lines …
DEAD_SHARE = 0.5  # … and they are more than half of it
CAPTURE_EVENTS = ("PostToolUseFailure", "PostToolUse", "UserPromptSubmit", "SessionStart", "SessionEnd", "Stop",
                  "PreToolUse")
MAX_DETAILS = 20


@dataclass
class Check:
    name: str
    status: str
    summary: str
    details: list[str] = field(default_factory=list)

    def as_json(self) -> dict:
        return {"name": self.name, "status": self.status, "summary": self.summary, "details": self.details}


def command(
    ctx: typer.Context,
    as_json: bool = typer.Option(False, "--json", help="Machine-readable report (see `learn help doctor`)."),
) -> None:
    from learn_cli.render.doctor import report

    st = state(ctx)
    checks, home = run_checks(st)
    healthy = not any(c.status == PROBLEM for c in checks)
    if as_json:
        json_out({"home": str(home), "healthy": healthy, "checks": [c.as_json() for c in checks]})
    else:
        report(checks, home, healthy)
    if not healthy:
        raise typer.Exit(1)


def run_checks(st) -> tuple[list[Check], Path]:
    from learn_cli.commands._common import open_store
    from learn_cli.store.paths import Layout, resolve_home
    from learn_cli.store.api import StoreError

    home = resolve_home(st.home)
    missing = _missing_layout(Layout(home))
    damaged_index = _damaged_index(Layout(home).index_db)
    try:
        store = open_store(st)
    except StoreError as exc:
        return [Check("layout", PROBLEM, str(exc))], home
    checks = [_layout(store, missing)]
    writable = store.writable()
    checks.append(_permissions(store, writable))
    checks.append(_index(store, damaged_index))
    checks.append(_data(store, writable))
    checks.append(_logs(store, writable))
    checks.append(_disk(store))
    if writable:
        checks.append(_stale_temps(store))
    checks.append(_archive(store))
    project = _project(st)
    checks.append(_hooks(project))
    checks.append(_capture(store, project, checks[-1]))
    checks.append(_spool(store))
    return checks, home


def _project(st):
    from learn_cli.commands._common import current_project

    try:
        return current_project(st, register=False)
    except Exception:  # noqa: BLE001 - a bad --project is reported by other commands; doctor goes on
        return None


# -- layout and permissions ------------------------------------------------------------------

def _missing_layout(lay) -> list[str]:
    wanted = [lay.home, lay.global_dir, lay.projects_dir, lay.sessions_dir, lay.analytics, lay.config,
              lay.global_errors, lay.global_patterns, lay.global_preferences, lay.global_archive, lay.stats]
    return [str(p.relative_to(lay.home)) or "." for p in wanted if not p.exists()]


def _layout(store, missing: list[str]) -> Check:
    if not store.writable():
        return Check("layout", PROBLEM, f"the store at {store.home} is read-only: nothing can be learned or repaired",
                     [f"missing: {m}" for m in missing])
    still = _missing_layout(store.layout)
    if still:
        return Check("layout", PROBLEM, "parts of the store are missing and could not be created", still)
    if "." in missing:
        return Check("layout", REPAIRED, f"there was no store: created one at {store.home}")
    if missing:
        return Check("layout", REPAIRED, f"created {plural(len(missing), 'missing part')} of the store", missing)
    return Check("layout", OK, "folders and files present")


def _permissions(store, writable: bool) -> Check:
    wrong: list[tuple[str, int, int]] = []
    for path, want in _private_paths(store.home):
        try:
            mode = stat.S_IMODE(os.lstat(path).st_mode)
        except OSError:
            continue
        if mode != want:
            wrong.append((path, mode, want))
    if not wrong:
        return Check("permissions", OK, "folders 0700, files 0600")
    details, failed = [], 0
    for path, mode, want in wrong:
        rel = os.path.relpath(path, store.home)
        try:
            if not writable:
                raise PermissionError
            os.chmod(path, want)
            details.append(f"{rel}: {mode:04o} → {want:04o}")
        except OSError:
            failed += 1
            details.append(f"{rel}: {mode:04o}, should be {want:04o} (could not change it)")
    details = _capped(details)
    if failed:
        return Check("permissions", PROBLEM, f"{failed} of {plural(len(wrong), 'path')} have the wrong mode", details)
    return Check("permissions", REPAIRED, f"fixed the mode of {plural(len(wrong), 'path')}", details)


def _capped(details: list[str]) -> list[str]:
    if len(details) <= MAX_DETAILS:
        return details
    return details[:MAX_DETAILS] + [f"… and {len(details) - MAX_DETAILS:,} more"]


def _private_paths(home: Path):
    yield str(home), 0o700
    for dirpath, dirnames, filenames in os.walk(home):
        for name in dirnames:
            path = os.path.join(dirpath, name)
            if not os.path.islink(path):
                yield path, 0o700
        for name in filenames:
            path = os.path.join(dirpath, name)
            if not os.path.islink(path):
                yield path, 0o600


# -- corrupt lines ---------------------------------------------------------------------------

def _data(store, writable: bool) -> Check:
    from learn_cli.store import jsonl

    import orjson

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
    details = _capped(found) + failed
    if failed:
        return Check("data", PROBLEM, f"{plural(len(found), 'corrupt line')}; some could not be set aside", details)
    return Check("data", REPAIRED, f"moved {plural(len(found), 'corrupt line')} into <file>.corrupt beside {'it' if len(found) == 1 else 'them'}", details)


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


# -- index and logs --------------------------------------------------------------------------

def _damaged_index(path: Path) -> bool:
    """An index file that is not an SQLite database (opening the store rebuilds it)."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(16)
    except OSError:
        return False
    return bool(head) and head != b"SQLite format 3\x00"


def _index(store, damaged: bool = False) -> Check:
    import sqlite3

    from learn_cli.store.api import _MemoryIndex

    if isinstance(store.index, _MemoryIndex):
        _refresh_quietly(store)
        return Check("index", WARN, "the index cannot be written here; searches read the files directly (slower)")
    if damaged:
        _refresh_quietly(store)
        return Check("index", REPAIRED, "the index file was not a database; it has been rebuilt from the files")
    try:
        verdict = store.index.db.execute("PRAGMA quick_check").fetchone()[0]
    except sqlite3.DatabaseError as exc:
        verdict = str(exc)
    if verdict != "ok":
        store.index.rebuild(f"doctor: {verdict}")
        _refresh_quietly(store)
        return Check("index", REPAIRED, "the index was damaged and has been rebuilt from the files", [str(verdict)[:200]])
    stale = _stale_files(store)
    _refresh_quietly(store)
    if stale:
        left = _stale_files(store)
        if left:
            return Check("index", PROBLEM, f"{plural(len(left), 'file')} could not be indexed", _capped(left))
        return Check("index", REPAIRED, f"brought the index up to date ({plural(len(stale), 'file')} changed outside learn)",
                     _capped(stale))
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


def _logs(store, writable: bool) -> Check:
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
    for rel, lines, dead in bloated:
        before, after = store.compact(store.path_of(rel))
        details.append(f"{rel}: {before} → {after} lines")
    return Check("logs", REPAIRED, f"compacted {plural(len(bloated), 'log')}", _capped(details))


# -- disk and archive ------------------------------------------------------------------------

def _disk(store) -> Check:
    try:
        usage = shutil.disk_usage(store.home)
    except OSError as exc:
        return Check("disk", WARN, f"free space unknown ({exc.strerror})")
    free = f"{_size(usage.free)} free of {_size(usage.total)}"
    if usage.free < DISK_PROBLEM:
        return Check("disk", PROBLEM, f"almost full: {free}; captures will start failing")
    if usage.free < DISK_WARN:
        return Check("disk", WARN, f"low on space: {free}")
    return Check("disk", OK, free)


def _stale_temps(store) -> Check:
    """Temp files of whole-file rewrites that a killed process left behind (never read as data)."""
    removed = store.remove_stale_temps()
    if removed:
        return Check("temp files", REPAIRED, f"removed {plural(len(removed), 'temp file')} left by an interrupted rewrite",
                     [str(p) for p in removed[:5]])
    return Check("temp files", OK, "none left behind")


def _archive(store) -> Check:
    lay = store.layout
    files = [lay.global_archive] + [lay.archive(pid) for pid in _pids(lay)]
    size = sum(p.stat().st_size for p in files if p.exists())
    entries = store.index.count("scope IN ('archive', 'global-archive')")
    days = _hard_delete_days(store)
    cutoff = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - days * 86400))
    old = store.index.count("scope IN ('archive', 'global-archive') AND "
                            "coalesce(json_extract(data, '$.last_used'), updated) < ?", (cutoff,))
    summary = f"{plural(entries, 'archived learning')}, {_size(size)}"
    if size > ARCHIVE_WARN_BYTES or entries > ARCHIVE_WARN_ENTRIES:
        hint = (f"{old:,} are older than {days} days: `learn prune --hard` deletes them for good" if old
                else f"none is older than {days} days yet; `learn prune --hard` deletes those that are")
        return Check("archive", WARN, f"large archive: {summary}", [hint])
    return Check("archive", OK, summary + (f" ({old:,} older than {days} days)" if old else ""))


def _pids(lay) -> list[str]:
    try:
        return sorted(e.name for e in os.scandir(lay.projects_dir) if e.is_dir())
    except OSError:
        return []


def _hard_delete_days(store) -> int:
    value = store.config().get("hard_delete_days", 90)
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0 else 90


def _size(n: int) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} TB"


# -- hooks -----------------------------------------------------------------------------------

def settings_files(project) -> list[Path]:
    """Claude Code's settings files that may register hooks, user level first."""
    files = [Path.home() / ".claude" / "settings.json"]
    if project is not None:
        root = Path(project.root) / ".claude"
        files += [root / "settings.json", root / "settings.local.json"]
    return files


def registered_events(doc) -> dict[str, list[str]]:
    """event -> commands of its handlers that run `learn capture` / `learn context --hook`."""
    found: dict[str, list[str]] = {}
    hooks = doc.get("hooks") if isinstance(doc, dict) else None
    if not isinstance(hooks, dict):
        return found
    for event, groups in hooks.items():
        for group in groups if isinstance(groups, list) else []:
            handlers = group.get("hooks") if isinstance(group, dict) else None
            for handler in handlers if isinstance(handlers, list) else []:
                command = _handler_command(handler)
                if command and _runs_learn(command):
                    found.setdefault(str(event), []).append(command)
    return found


def _handler_command(handler) -> str:
    if not isinstance(handler, dict) or handler.get("type", "command") != "command":
        return ""
    command = handler.get("command")
    args = handler.get("args")
    parts = [command] if isinstance(command, str) else []
    if isinstance(args, list):
        parts += [str(a) for a in args]
    return " ".join(parts)


def _runs_learn(command: str) -> bool:
    words = command.replace('"', " ").replace("'", " ").split()
    for i, word in enumerate(words):
        program = os.path.basename(word)
        tail = words[i + 1:i + 3]
        if program in ("learn", "learn_cli") and ("capture" in tail or "context" in tail):
            return True
    return False


def _hooks(project) -> Check:
    registered: dict[str, list[str]] = {}
    where: list[str] = []
    details: list[str] = []
    problems: list[str] = []
    disabled = False
    for path in settings_files(project):
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            continue
        except (OSError, ValueError) as exc:
            details.append(f"{_home_path(path)}: unreadable ({str(exc)[:60]})")
            continue
        if isinstance(doc, dict) and doc.get("disableAllHooks") is True:
            disabled = True
            details.append(f"{_home_path(path)}: disableAllHooks is true")
        events = registered_events(doc)
        if events:
            where.append(_home_path(path))
            details.append(f"{_home_path(path)}: {', '.join(sorted(events))}")
        for event, commands in events.items():
            registered.setdefault(event, []).extend(commands)
    for command in sorted({c for cmds in registered.values() for c in cmds}):
        program = command.split()[0]
        if os.path.isabs(program) and not os.access(program, os.X_OK):
            problems.append(f"{program} (registered in a hook) does not exist or cannot run")
    if problems:
        return Check("hooks", PROBLEM, "a registered `learn` cannot run: run `learn hooks install` again",
                     problems + details)
    if not registered:
        return Check("hooks", WARN, "`learn capture` is not registered with Claude Code: run `learn hooks install`",
                     details)
    if disabled:
        return Check("hooks", WARN, "registered, but Claude Code's disableAllHooks is on", details)
    if "PostToolUseFailure" not in registered:
        return Check("hooks", WARN, "registered, but not for PostToolUseFailure: failures are not captured "
                     "(run `learn hooks install`)", details)
    return Check("hooks", OK, f"registered in {', '.join(where)}", details)


def plural(n: int, word: str) -> str:
    return f"{n:,} {word}" if n == 1 else f"{n:,} {word}s"


def _home_path(path: Path) -> str:
    from learn_cli.render.learning import display_path

    return display_path(path)


# -- capture health --------------------------------------------------------------------------

def _capture(store, project, hooks: Check) -> Check:
    from learn_cli.store import analytics

    doc = analytics.read(store.layout.stats)
    week = analytics.window(doc, 7)
    events = week.get("events", 0)
    details = [f"{name}: {count:,}" for name, count in sorted(week.items()) if name != "events"]
    last = _last_capture(doc)
    if last:
        details.append(f"last capture: {last}")
    auto = store.setting("auto_capture", project.id if project else None)
    details.append(f"auto-capture: {'on' if auto else 'off'}{' (this project)' if project else ''}")
    warnings, latest = _recent_warnings(store.layout.log)
    if warnings:
        details.append(f"latest warning: {latest}")
    summary = f"{plural(events, 'event')} captured in the last 7 days"
    if warnings:
        return Check("capture", WARN, summary + f", {plural(warnings, 'warning')} in {_home_path(store.layout.log)}",
                     details)
    if not events and hooks.status == OK and auto:
        return Check("capture", WARN, summary + " although the hooks are registered", details)
    return Check("capture", OK, summary, details)


def _spool(store) -> Check:
    """The spool's counters over the last 7 days, after learning whatever still waits in it."""
    from learn_cli.capture.spool import finish
    from learn_cli.store import analytics

    result = finish(store)
    week = analytics.window(analytics.read(store.layout.stats), 7)
    deferred, replayed, dropped = (week.get(name, 0) for name in ("deferred", "replayed", "dropped"))
    details = [f"last 7 days: {deferred:,} deferred, {replayed:,} learned later, {dropped:,} dropped"]
    if dropped:
        return Check("spool", PROBLEM, f"{plural(dropped, 'event')} dropped in the last 7 days: capture could not "
                     "learn them (reasons in learn.log)", details)
    if result.left:
        why = "the index is busy" if result.busy else "the store is read-only" if not store.writable() else "see learn.log"
        return Check("spool", WARN, f"{plural(result.left, 'event')} waiting in the spool ({why})", details)
    if result.replayed:
        return Check("spool", REPAIRED, f"learned {plural(result.replayed, 'event')} that hooks had spooled", details)
    if deferred:
        return Check("spool", OK, f"{plural(deferred, 'event')} deferred in the last 7 days, all learned since", details)
    return Check("spool", OK, "no event deferred or dropped in the last 7 days")


def _last_capture(doc: dict) -> str | None:
    gauges = doc.get("gauges") if isinstance(doc.get("gauges"), dict) else {}
    stamps = [str(v) for k, v in gauges.items() if "last" in str(k) and isinstance(v, str)]
    if stamps:
        return max(stamps)
    days = [d for d, bucket in (doc.get("days") or {}).items() if isinstance(bucket, dict) and bucket]
    return f"on {max(days)}" if days else None


def _recent_warnings(log: Path, days: int = 7) -> tuple[int, str]:
    cutoff = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - days * 86400))
    try:
        with open(log, "rb") as fh:
            fh.seek(0, os.SEEK_END)
            fh.seek(max(0, fh.tell() - 256 * 1024))  # the log is bounded; its tail is enough
            lines = fh.read().decode("utf-8", "replace").splitlines()
    except OSError:
        return 0, ""
    recent = [ln for ln in lines if ln[:20] >= cutoff and len(ln) > 21]
    return len(recent), (recent[-1][21:][:160] if recent else "")
