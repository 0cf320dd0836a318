"""`learn export` / `learn import`: the portable JSON format and merging it into a store.

Format (version 1.x):

    {"format": "self-learning-agent", "version": "1.0.0", "exported": "<ISO-8601 UTC>",
     "global": [record, ...],
     "projects": {"<project id>": {"name", "root", "remote", "learnings": [record, ...]}, ...},
     "archived": [record + "archived_from": "global" | "<project id>", ...]}

Every project that has a learning (live or archived) is listed under `projects`, so an
archived entry's `archived_from` always names a listed project (or "global").

Import is untrusted input (SPEC §4): a size limit, the parser's nesting limit, the shape of
each section, and every entry through `coerce_record` (types, caps); text is redacted again;
project ids from the file are folder names only when they are 12 lower-case hex digits, else
a safe id is derived from the project's remote/root/name; names like `../../etc` are display
names, never paths. `deleted` and `updated` are dropped from entries (a `deleted` line would
act as a tombstone in the log).

Merging, per target file (a project's learnings or archive, a global file), in this order:
- **duplicate** (skipped): the entry's id is already in the store, or was merged before (it is
  in a record's `merged_from`), or a record with the same key has the same text (context,
  error and fix, compared after normalising case, spacing and punctuation). So importing a
  file twice adds nothing.
- **conflict**: engine.conflicts finds the entry and a live record of the same scope give
  incompatible advice: the entry is added with status `conflicted`, the record is flagged too.
- **merged** (frequency updated): same key with different text, or a near-duplicate
  (engine.merge.similarity ≥ NEAR_DUPLICATE) of a record of that file: engine.merge.merge
  (frequencies summed, projects unioned, better text); the entry's id joins `merged_from`.
- **new**: everything else; ids are kept (a clash with a different learning gets a new id).
- **skipped**: entries `coerce_record` rejects, with the reason.
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Callable

FORMAT = "self-learning-agent"
VERSION = "1.0.0"
MAX_IMPORT_BYTES = 256 * 1024 * 1024
NEAR_DUPLICATE = 0.85
MAX_MERGED_FROM = 200
REASONS_KEPT = 20
TEXT_FIELDS = ("context", "error", "fix", "command", "fix_command", "project")
_SEP = "\n\x00\n"
_LIVE = ("pending", "active", "global", "conflicted")


class ExchangeError(Exception):
    """The file cannot be imported at all; the message says why in one line."""


# ---------------------------------------------------------------- export


@dataclass
class ExportResult:
    doc: dict
    global_count: int
    archived_count: int
    project_counts: dict  # pid -> live learnings

    @property
    def total(self) -> int:
        return self.global_count + self.archived_count + sum(self.project_counts.values())


def build_export(store, loads: Callable, now: str | None = None) -> ExportResult:
    """The whole store as one export document (text redacted again on the way out)."""
    from learn_cli.store.record import now_iso

    store.refresh(loads=loads)
    known = store.projects()
    globals_, archived, by_project = [], [], {}
    everything = []
    for _rel, scope, pid, rec in store.iter_index("1=1", (), loads):
        rec.pop("updated", None)
        everything.append(rec)
        if scope == "global":
            globals_.append(rec)
        elif scope == "project":
            by_project.setdefault(pid, []).append(rec)
        else:
            rec["archived_from"] = pid if scope == "archive" else "global"
            archived.append(rec)
            if pid:
                by_project.setdefault(pid, [])
    redact_many(everything)
    order = _record_order
    projects = {}
    for pid in sorted(by_project):
        info = known.get(pid) or {}
        projects[pid] = {"name": info.get("name") or pid, "root": info.get("root") or "",
                         "remote": _redact(info.get("remote")) if info.get("remote") else None,
                         "learnings": sorted(by_project[pid], key=order)}
    doc = {"format": FORMAT, "version": VERSION, "exported": now or now_iso(),
           "global": sorted(globals_, key=order), "projects": projects,
           "archived": sorted(archived, key=order)}
    return ExportResult(doc, len(globals_), len(archived),
                        {pid: len(p["learnings"]) for pid, p in projects.items()})


def _record_order(rec: dict) -> tuple:
    return (str(rec.get("created") or ""), str(rec.get("id") or ""))


# ---------------------------------------------------------------- reading an import


@dataclass
class Incoming:
    """One entry of the file on its way into the store."""

    rec: dict
    target: Path
    scope: str  # project | archive | global | global-archive
    pid: str


@dataclass
class ImportPlan:
    source: str
    version: str
    entries: int = 0  # entries in the file
    incoming: list = field(default_factory=list)  # list[Incoming]
    skipped: int = 0
    reasons: list = field(default_factory=list)  # first REASONS_KEPT skip reasons
    projects: dict = field(default_factory=dict)  # safe pid -> {name, root, remote}
    warnings: list = field(default_factory=list)  # section-level problems

    def skip(self, where: str, reason: str) -> None:
        self.skipped += 1
        if len(self.reasons) < REASONS_KEPT:
            self.reasons.append(f"{where}: {reason}")


def read_export(path: Path, loads: Callable) -> dict:
    """The parsed document, or ExchangeError with one specific reason."""
    name = Path(path).name
    try:
        size = os.stat(path).st_size
    except FileNotFoundError:
        raise ExchangeError(f"{path}: no such file") from None
    except OSError as exc:
        raise ExchangeError(f"{path}: {exc.strerror or exc}") from None
    if not os.path.isfile(path):
        raise ExchangeError(f"{path}: not a regular file")
    if size > MAX_IMPORT_BYTES:
        raise ExchangeError(f"{name} is {_mb(size)}: over the import limit of {_mb(MAX_IMPORT_BYTES)}")
    with open(path, "rb") as fh:
        data = fh.read(MAX_IMPORT_BYTES + 1)
    if len(data) > MAX_IMPORT_BYTES:
        raise ExchangeError(f"{name} is over the import limit of {_mb(MAX_IMPORT_BYTES)}")
    try:
        doc = loads(data)
    except (ValueError, UnicodeDecodeError) as exc:
        detail = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        if "depth" in detail or "recursion" in detail:
            raise ExchangeError(f"{name}: nested too deeply to be an export ({detail})") from None
        raise ExchangeError(f"{name} is not JSON ({detail[:80]})") from None
    except RecursionError:
        raise ExchangeError(f"{name}: nested too deeply to be an export") from None
    return doc


def check_format(doc, name: str) -> str:
    """The export's version, or ExchangeError naming what makes it no export of ours."""
    if not isinstance(doc, dict):
        raise ExchangeError(f"{name} is not a learn export: the top level is a JSON {_kind(doc)}, not an object")
    fmt = doc.get("format")
    if fmt is None:
        raise ExchangeError(f'{name} is not a learn export: no "format" field (expected "{FORMAT}")')
    if fmt != FORMAT:
        raise ExchangeError(f'{name} is not a learn export: format {_short(fmt)} (expected "{FORMAT}")')
    version = doc.get("version")
    if not isinstance(version, str) or not re.fullmatch(r"\d+(\.\d+){0,2}", version):
        raise ExchangeError(f"{name}: missing or malformed version {_short(version)} (expected 1.x)")
    if version.split(".")[0] != VERSION.split(".")[0]:
        raise ExchangeError(f"{name}: unsupported export version {version} (this learn reads 1.x)")
    sections = [k for k in ("global", "projects", "archived") if k in doc]
    if not sections:
        raise ExchangeError(f'{name}: no "global", "projects" or "archived" section')
    return version


def plan_import(doc: dict, source: str, store) -> ImportPlan:
    """Validate every entry and decide where it goes (nothing is written)."""
    version = check_format(doc, source)
    plan = ImportPlan(source=source, version=version)
    accepted: list[tuple[dict, Callable]] = []  # (record, where it goes once checked)
    lay = _Paths(store.layout)

    def take(obj, where: str, place: Callable) -> None:
        rec = _accept(obj, where, plan)
        if rec is not None:
            accepted.append((rec, place))

    for n, obj in enumerate(_section(doc, "global", list, plan), 1):
        take(obj, f"global[{n}]", lambda rec: _place_global(rec, plan, store))
    pid_map: dict[str, str] = {}
    for raw_pid, info in _section(doc, "projects", dict, plan).items():
        where = f"projects[{_short(raw_pid)}]"
        if not isinstance(info, dict):
            plan.warnings.append(f"{where}: not an object (skipped)")
            continue
        pid = safe_project_id(raw_pid, info)
        pid_map[str(raw_pid)] = pid
        plan.projects[pid] = _project_info(info, pid)
        learnings = info.get("learnings", [])
        if not isinstance(learnings, list):
            plan.warnings.append(f'{where}: "learnings" is not a list (skipped)')
            continue
        for n, obj in enumerate(learnings, 1):
            take(obj, f"{where}[{n}]", lambda rec, pid=pid, raw=raw_pid: _place_project(rec, pid, raw, plan, lay))
    for n, obj in enumerate(_section(doc, "archived", list, plan), 1):
        origin = obj.get("archived_from") if isinstance(obj, dict) else None
        take(obj, f"archived[{n}]", lambda rec, origin=origin, where=f"archived[{n}]":
             _place_archived(rec, origin, where, pid_map, plan, lay))
    redact_many([rec for rec, _ in accepted])
    for rec, place in accepted:
        _finish(rec, source)
        place(rec)
    plan.entries = len(plan.incoming) + plan.skipped
    return plan


class _Paths:
    """The layout's per-project paths, made once per project (not once per entry)."""

    def __init__(self, layout):
        self.layout = layout
        self.global_archive = layout.global_archive
        self.cache: dict[tuple, Path] = {}

    def learnings(self, pid: str) -> Path:
        return self._get("learnings", pid)

    def archive(self, pid: str) -> Path:
        return self._get("archive", pid)

    def _get(self, kind: str, pid: str) -> Path:
        path = self.cache.get((kind, pid))
        if path is None:
            path = self.cache[(kind, pid)] = getattr(self.layout, kind)(pid)
        return path


def _place_project(rec: dict, pid: str, raw_pid, plan: ImportPlan, lay) -> None:
    _remap_projects(rec, str(raw_pid), pid)
    if rec["status"] == "archived":
        plan.incoming.append(Incoming(rec, lay.archive(pid), "archive", pid))
        return
    if rec["status"] == "global":  # a promoted copy belongs to the global section
        rec["status"] = "active"
    plan.incoming.append(Incoming(rec, lay.learnings(pid), "project", pid))


def _place_global(rec: dict, plan: ImportPlan, store) -> None:
    if rec["status"] == "archived":
        plan.incoming.append(Incoming(rec, store.layout.global_archive, "global-archive", ""))
        return
    if rec["status"] not in ("global", "conflicted"):
        rec["status"] = "global"
    plan.incoming.append(Incoming(rec, store.global_file(rec), "global", ""))


def _place_archived(rec: dict, origin, where: str, pid_map: dict, plan: ImportPlan, lay) -> None:
    rec["status"] = "archived"
    if origin == "global" or origin is None:
        plan.incoming.append(Incoming(rec, lay.global_archive, "global-archive", ""))
        return
    pid = pid_map.get(str(origin)) or (origin if _is_pid(origin) else None)
    if pid is None:
        plan.skip(where, f"archived_from {_short(origin)} is not a project of this file")
        return
    plan.projects.setdefault(pid, {"name": _display_name(rec.get("project")) or pid, "root": "", "remote": None})
    _remap_projects(rec, str(origin), pid)
    plan.incoming.append(Incoming(rec, lay.archive(pid), "archive", pid))


def _section(doc: dict, name: str, kind: type, plan: ImportPlan):
    value = doc.get(name)
    if value is None:
        return kind()
    if not isinstance(value, kind):
        plan.warnings.append(f'"{name}" is a {_kind(value)}, not a {"list" if kind is list else "object"} (skipped)')
        return kind()
    return value


def _accept(obj, where: str, plan: ImportPlan) -> dict | None:
    """coerce_record, then drop what an import must not carry in; None when skipped."""
    from learn_cli.capture.redact import redact
    from learn_cli.store.record import coerce_record

    # Redact before capping (a cap could cut a private key's marker and leave its body); one
    # check over all the entry's text keeps the common case, nothing secret, to one call.
    strings = [v for v in obj.values() if isinstance(v, str)] if isinstance(obj, dict) else []
    joined = _SEP.join(strings)
    clean = redact if joined and redact(joined) != joined else None
    rec, reason = coerce_record(obj, clean=clean)
    if rec is None:
        plan.skip(where, reason)
        return None
    for name in ("deleted", "updated", "archived_from"):
        rec.pop(name, None)
    tags = rec.get("tags")
    if tags is not None and not (isinstance(tags, list) and all(isinstance(t, str) for t in tags)):
        rec.pop("tags")
    return rec


def _finish(rec: dict, source: str) -> None:
    """After redaction: the source, and a key (kept when well-formed, else computed)."""
    rec["source"] = f"import:{_redact(source)}"[:200]
    key = rec.get("key")
    if not (isinstance(key, str) and _key_re().fullmatch(key)):
        from learn_cli.engine.knowledge import key_for

        rec["key"] = key_for(rec)


def safe_project_id(raw, info: dict) -> str:
    """The export's id when it is one of ours (12 hex), else a hash of remote/root/name."""
    if _is_pid(raw):
        return raw
    from learn_cli.store.project import normalize_remote

    remote, root = info.get("remote"), info.get("root")
    if isinstance(remote, str) and remote.strip():
        material = normalize_remote(remote)
    elif isinstance(root, str) and root.strip():
        material = root
    else:
        material = f"import-name:{info.get('name') or raw}"
    return hashlib.sha256(str(material).encode("utf-8", "replace")).hexdigest()[:12]


def _project_info(info: dict, pid: str) -> dict:
    root = info.get("root")
    remote = info.get("remote")
    return {"name": _display_name(_redact(info.get("name")) if isinstance(info.get("name"), str) else None) or pid,
            "root": _redact(_text(root, 1000)) if isinstance(root, str) and root.startswith("/") else "",
            "remote": _redact(_text(remote, 500)) if isinstance(remote, str) and remote.strip() else None}


def _display_name(value) -> str:
    """A name to show, never a path to use: one line, no control characters, capped."""
    if not isinstance(value, str):
        return ""
    spaced = "".join(" " if c.isspace() else c for c in value if c.isprintable() or c.isspace())
    return " ".join(spaced.split())[:100]


def _remap_projects(rec: dict, raw_pid: str, pid: str) -> None:
    projects = [pid if p == raw_pid else p for p in rec.get("projects") or []]
    if pid not in projects:
        projects.append(pid)
    rec["projects"] = projects


# ---------------------------------------------------------------- merging


@dataclass
class ImportReport:
    source: str
    version: str
    entries: int
    new: int = 0
    merged: int = 0
    duplicates: int = 0
    conflicts: int = 0
    skipped: int = 0
    reasons: list = field(default_factory=list)
    warnings: list = field(default_factory=list)
    conflict_pairs: list = field(default_factory=list)  # {incoming, existing, reason, incoming_text, existing_text}
    projects_created: list = field(default_factory=list)
    dry_run: bool = False

    @property
    def processed(self) -> int:
        return self.new + self.merged

    def as_json(self) -> dict:
        return {"source": self.source, "version": self.version, "entries": self.entries, "new": self.new,
                "merged": self.merged, "duplicates": self.duplicates, "conflicts": self.conflicts,
                "skipped": self.skipped, "processed": self.processed, "skipped_reasons": self.reasons,
                "warnings": self.warnings, "conflict_pairs": self.conflict_pairs[:100],
                "projects_created": self.projects_created, "dry_run": self.dry_run}


def import_file(store, path: Path, dry_run: bool = False, loads: Callable | None = None) -> ImportReport:
    """Read, validate and merge an export file into the store."""
    loads = loads or _fast_loads()
    source = _display_name(Path(path).name) or "import"
    doc = read_export(Path(path), loads)
    plan = plan_import(doc, source, store)
    del doc
    return merge_plan(store, plan, dry_run, loads)


def merge_plan(store, plan: ImportPlan, dry_run: bool, loads: Callable) -> ImportReport:
    report = ImportReport(plan.source, plan.version, plan.entries, skipped=plan.skipped,
                          reasons=list(plan.reasons), warnings=list(plan.warnings), dry_run=dry_run)
    store.refresh(loads=loads)
    merger = _Merger(store, report, loads)
    by_target: dict[Path, list[Incoming]] = {}
    for inc in plan.incoming:
        by_target.setdefault(inc.target, []).append(inc)
    for target, items in by_target.items():
        merger.merge_into(target, items)
    known = store.projects()
    receiving = {i.pid for i in plan.incoming}
    report.projects_created = sorted(pid for pid in plan.projects if pid not in known and pid in receiving)
    if not dry_run:
        _create_projects(store, plan, report.projects_created)
        merger.write()
    return report


class _Merger:
    def __init__(self, store, report: ImportReport, loads: Callable):
        self.store = store
        self.report = report
        self.loads = loads
        db = store.index.db
        self.ids: dict[str, str] = dict(db.execute("SELECT id, key FROM learnings"))
        self.merged_from: set[str] = set()
        for (ids,) in db.execute("SELECT json_extract(data, '$.merged_from') FROM learnings "
                                 "WHERE data LIKE '%\"merged_from\"%'"):
            self.merged_from.update(_json_list(ids, loads))
        self.new: dict[Path, list[dict]] = {}
        self.unwritten: set[str] = set()  # ids of entries added by this import (no patch needed)
        self.patches: dict[Path, dict[str, dict]] = {}  # target -> id -> fields to set

    def merge_into(self, target: Path, items: list[Incoming]) -> None:
        existing = self._existing(target)
        fresh = []
        for inc in items:
            rid = inc.rec["id"]
            if rid in self.merged_from:
                self.report.duplicates += 1
                continue
            if rid in self.ids:
                if self.ids[rid] == inc.rec["key"]:
                    self.report.duplicates += 1
                    continue
                from learn_cli.store.record import new_id

                inc.rec["id"] = new_id()
            self.ids[inc.rec["id"]] = inc.rec["key"]
            fresh.append(inc.rec)
        if not fresh:
            return
        conflicted = self._conflicts(target, existing, fresh) if existing else set()
        by_key = {}
        for rec in existing.values():
            by_key.setdefault(rec.get("key"), rec)
        added: list[dict] = []
        for rec in fresh:
            if rec["id"] in conflicted:
                added.append(rec)
                continue
            same = by_key.get(rec["key"])
            if same is None:
                by_key[rec["key"]] = rec
                added.append(rec)
                self.unwritten.add(rec["id"])
            elif _same_text(same, rec):
                self.report.duplicates += 1
            else:
                self._merge(target, same, rec)
        if existing and added:
            added = self._near_duplicates(target, existing, added, conflicted)
        self.report.new += sum(1 for r in added if r["id"] not in conflicted)
        if added:
            self.new.setdefault(target, []).extend(added)

    def _existing(self, target: Path) -> dict[str, dict]:
        rel = self.store.index.rel(target)
        statuses = ("archived",) if target.name == "archive.jsonl" else _LIVE
        marks = ",".join("?" * len(statuses))
        rows = self.store.index.db.execute(f"SELECT data FROM learnings WHERE file = ? AND status IN ({marks})",
                                           (rel, *statuses))
        return {(rec := self.loads(d))["id"]: rec for (d,) in rows}

    def _conflicts(self, target: Path, existing: dict[str, dict], fresh: list[dict]) -> set[str]:
        from learn_cli.engine.conflicts import find_conflicts
        from learn_cli.engine.promotion import summary

        incoming = {r["id"]: r for r in fresh}
        flagged: set[str] = set()
        for a, b, reason in find_conflicts([*existing.values(), *fresh]):
            if (a in incoming) == (b in incoming):
                continue  # both old (not ours to judge now) or both from the file
            mine, theirs = (a, b) if a in incoming else (b, a)
            rec, old = incoming[mine], existing[theirs]
            _flag(rec, theirs)
            patch = self.patches.setdefault(target, {}).setdefault(theirs, {})
            _flag(old, mine)
            patch.update(status=old["status"], conflict_with=old["conflict_with"],
                         pre_conflict_status=old["pre_conflict_status"])
            if mine not in flagged:
                self.report.conflicts += 1
                flagged.add(mine)
            self.report.conflict_pairs.append({"incoming": mine, "existing": theirs, "reason": reason,
                                               "incoming_text": summary(rec), "existing_text": summary(old)})
        return flagged

    def _merge(self, target: Path, into: dict, rec: dict) -> None:
        from learn_cli.engine.merge import merge

        merged = merge(into, rec)
        merged["merged_from"] = (list(into.get("merged_from") or []) + [rec["id"]])[-MAX_MERGED_FROM:]
        if into.get("id") in self.unwritten:
            into.clear()
            into.update(merged)  # an entry of this same file: not written yet, just update it
        else:
            changed = {k: v for k, v in merged.items() if into.get(k) != v and k not in ("id", "updated")}
            self.patches.setdefault(target, {}).setdefault(into["id"], {}).update(changed)
            into.update(merged)
        self.merged_from.add(rec["id"])
        self.report.merged += 1

    def _near_duplicates(self, target: Path, existing: dict, added: list[dict], conflicted: set) -> list[dict]:
        from learn_cli.engine.merge import near_duplicates

        candidates = [r for r in added if r["id"] not in conflicted]
        fresh_ids = {r["id"] for r in candidates}
        keep = {r["id"] for r in added}
        for group in near_duplicates([*existing.values(), *candidates], NEAR_DUPLICATE):
            leader = group[0]
            if leader["id"] in fresh_ids:
                continue  # led by an entry of the file: nothing of the store to merge into
            for rec in group[1:]:
                if rec["id"] in fresh_ids and rec["id"] in keep:
                    keep.discard(rec["id"])
                    if _same_text(leader, rec):
                        self.report.duplicates += 1
                        self.merged_from.add(rec["id"])
                    else:
                        self._merge(target, leader, rec)
        return [r for r in added if r["id"] in keep]

    def write(self) -> None:
        fresh_files = []
        for target, recs in self.new.items():
            target.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            if _fill_if_empty(target, recs):
                fresh_files.append(target)
            else:
                self.store.put_many(target, recs)
        if fresh_files:
            self.store.refresh(fresh_files, loads=self.loads)  # one bulk index pass per new file
        for target, patches in self.patches.items():
            changes = {rid: _setter(fields) for rid, fields in patches.items()}
            size = self.store.index.count("file = ?", (self.store.index.rel(target),))
            self.store.update_many(target, changes, rewrite=2 * len(changes) >= max(size, 1))


def _fill_if_empty(path: Path, recs: list[dict]) -> bool:
    """Write `recs` as the whole content of a file that is missing or empty, atomically and
    under its lock (so no concurrent append is lost); False when the file holds data. The
    index then reads the file once in bulk, instead of one row at a time."""
    from learn_cli.store import jsonl
    from learn_cli.store.locks import file_lock
    from learn_cli.store.record import now_iso

    if path.suffix != ".jsonl":
        return False
    with file_lock(path):
        try:
            if path.stat().st_size:
                return False
        except FileNotFoundError:
            pass
        stamp = now_iso()
        for rec in recs:
            rec["updated"] = stamp
        jsonl.rewrite(path, recs)
    return True


def _flag(rec: dict, other: str) -> None:
    if rec.get("status") != "conflicted":
        rec["pre_conflict_status"] = rec.get("status") or "active"
        rec["status"] = "conflicted"
    rec.setdefault("pre_conflict_status", "active")
    partners = list(rec.get("conflict_with") or [])
    if other not in partners:
        partners.append(other)
    rec["conflict_with"] = partners


def _setter(fields: dict) -> Callable[[dict], dict]:
    def apply(rec: dict) -> dict:
        rec.update(fields)
        return rec

    return apply


def _create_projects(store, plan: ImportPlan, pids: list[str]) -> None:
    from learn_cli.store.project import Project

    for pid in pids:
        info = plan.projects[pid]
        store.register_project(Project(id=pid, name=info["name"], root=info["root"], remote=info["remote"]))


# ---------------------------------------------------------------- helpers


def redact_record(rec: dict) -> dict:
    """Redact the record's free text in place: one pass over all of it joined (the common
    case, nothing secret, costs one call); field by field only when something was found."""
    from learn_cli.capture.redact import redact

    fields = [f for f in TEXT_FIELDS if isinstance(rec.get(f), str) and rec[f]]
    tags = rec.get("tags") if isinstance(rec.get("tags"), list) else []
    joined = _SEP.join([*(rec[f] for f in fields), *(t for t in tags if isinstance(t, str))])
    if not joined or redact(joined) == joined:
        return rec
    for f in fields:
        rec[f] = redact(rec[f])
    if tags:
        rec["tags"] = [redact(t) if isinstance(t, str) else t for t in tags]
    return rec


PARALLEL_MIN = 5000  # records: below this, forking workers costs more than it saves
_WORK: list = []  # the records a forked worker reads (inherited, never pickled)


def redact_many(records: list[dict]) -> None:
    """redact_record over many records, on every CPU when there are many: forked workers read
    the records they inherit and send back only the few fields that changed."""
    workers = min(os.cpu_count() or 1, 8)
    if len(records) < PARALLEL_MIN or workers < 2 or not hasattr(os, "fork"):
        for rec in records:
            redact_record(rec)
        return
    global _WORK
    _WORK = records
    size = -(-len(records) // (workers * 4))
    slices = [(start, min(start + size, len(records))) for start in range(0, len(records), size)]
    try:
        import multiprocessing

        with multiprocessing.get_context("fork").Pool(workers) as pool:
            for changes in pool.imap_unordered(_redacted_fields, slices):
                for index, fields in changes:
                    records[index].update(fields)
    except (OSError, ImportError, ValueError):  # no fork, no /dev/shm, …: do it here
        for rec in records:
            redact_record(rec)
    finally:
        _WORK = []


def _redacted_fields(bounds: tuple[int, int]) -> list[tuple[int, dict]]:
    """In a worker: (index, changed fields) of the records of one slice that held secrets."""
    out = []
    for index in range(*bounds):
        rec = _WORK[index]
        before = {f: rec.get(f) for f in (*TEXT_FIELDS, "tags")}
        redact_record(rec)
        changed = {f: rec.get(f) for f, v in before.items() if rec.get(f) != v}
        if changed:
            out.append((index, changed))
    return out


def _same_text(a: dict, b: dict) -> bool:
    from learn_cli.engine.merge import normalize_text

    return all(normalize_text(a.get(f) or "") == normalize_text(b.get(f) or "") for f in ("context", "error", "fix"))


def _redact(text):
    from learn_cli.capture.redact import redact

    return redact(text) if isinstance(text, str) else text


@cache
def _key_re():
    return re.compile(r"[a-z]{2,8}:[0-9a-zA-Z:._-]{1,100}")


def _is_pid(value) -> bool:
    return isinstance(value, str) and re.fullmatch(r"[0-9a-f]{12}", value) is not None


def _json_list(text, loads) -> list:
    try:
        value = loads(text) if isinstance(text, (str, bytes)) else None
    except ValueError:
        return []
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def _text(value, limit: int) -> str:
    return "".join(c for c in str(value) if c.isprintable())[:limit]


def _short(value, limit: int = 40) -> str:
    text = repr(value) if not isinstance(value, str) else f'"{_text(value, limit)}"'
    return text if len(text) <= limit + 2 else text[:limit] + "…"


def _kind(value) -> str:
    return {dict: "object", list: "array", str: "string", int: "number", float: "number",
            bool: "boolean", type(None): "null"}.get(type(value), type(value).__name__)


def _mb(size: int) -> str:
    return f"{size / (1024 * 1024):.0f} MB"


def _fast_loads() -> Callable:
    try:
        import orjson
    except ImportError:  # pragma: no cover
        import json

        return json.loads
    return orjson.loads
