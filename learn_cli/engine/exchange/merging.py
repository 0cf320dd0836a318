"""Merging entries into a target file (duplicate, conflict, merged, new: see the package's
docstring), one target at a time, without deep copies."""

from __future__ import annotations

import marshal
from collections.abc import Callable, Iterable
from functools import lru_cache
from pathlib import Path

from learn_cli.store.paths import ARCHIVE_FILE

from .common import (
    _LIVE,
    MAX_MERGED_FROM,
    NEAR_DUPLICATE,
    _dumps,
    _has_data,
    _json_list,
)
from .report import ImportReport, Incoming
from .staging import _Staging

# ---------------------------------------------------------------- merging


class _Merger:
    """Merges the entries of each target file with what the store holds (see the module's
    docstring). A target with nothing in it yet is written whole as soon as its entries are
    merged (staged, or held in memory by a dry run); the others are written at the end."""

    HELD_AS_RECORDS = 1000  # entries of a target held as they are (the rest: marshalled, `add`)

    def __init__(self, store, report: ImportReport, loads: Callable, staging: _Staging | None, now=None):
        self.store = store
        self.now = now  # the import's clock: the archive clocks of the records it writes start then
        self.report = report
        self.loads = loads
        self.staging = staging
        self.ids: dict[str, str] = store.index.keys_by_id()
        self.merged_from: set[str] = set()
        for (ids,) in store.index.merged_from_fields():
            self.merged_from.update(_json_list(ids, loads))
        self.batches: dict[Path, list[dict | bytes]] = {}  # target -> entries not merged yet (add)
        self.new: dict[Path, list[dict]] = {}  # target that had data -> records to append at the end
        self.held: dict[Path, bytes] = {}  # dry run: the lines staging would have written
        self.unwritten: set[str] = set()  # ids of entries added by this import (no patch needed)
        self.patches: dict[Path, dict[str, dict]] = {}  # target -> id -> fields to set

    def add(self, inc: Incoming) -> None:
        """Hold an entry until its target is merged. Past HELD_AS_RECORDS entries of a target,
        and in an archive (which takes entries until the end of the file), marshalled: a fifth
        of the memory of the record (exact for every value JSON gives), and none of the small
        objects that, held among the short-lived ones of the entries read after them, kept the
        memory of the largest project and of the archives from being given back."""
        rec, held = inc.rec, inc.rec
        batch = self.batches.setdefault(inc.target, [])
        if len(batch) >= self.HELD_AS_RECORDS or inc.target.name == ARCHIVE_FILE:
            try:
                held = marshal.dumps(rec)
            except ValueError:  # pragma: no cover - nothing JSON gives (held as it is)
                pass
        # With its id and key: an entry known by its id is never unmarshalled (a file imported again).
        batch.append((rec["id"], rec["key"], held))

    def close(self, targets: Iterable[Path] | None = None) -> None:
        """Merge the entries gathered for `targets` (every target when None)."""
        for target in list(self.batches) if targets is None else targets:
            held = self.batches.pop(target, None)
            if held:
                self._merge_batch(target, held)

    def _merge_batch(self, target: Path, items: list[tuple[str, str, dict | bytes]]) -> None:
        empty = self._is_empty(target)
        self.merge_into(target, items)
        _normalized_text.cache_clear()  # its texts are this target's: held longer, they only pin memory
        if empty and target in self.new:
            recs = self.new.pop(target)
            self.unwritten.difference_update(r["id"] for r in recs)  # a later entry patches them
            if self.staging is None:
                self.held[target] = b"\n".join(_dumps(r)[0] for r in recs)  # read for a project listed twice
            else:
                self._start_clocks(target, recs)
                self.staging.add(target, recs)

    def _is_empty(self, target: Path) -> bool:
        """A log that holds nothing yet (nor has been given anything by this import)."""
        if target in self.held or self.staging and target in self.staging.targets:
            return False
        if not str(target).endswith(".jsonl") or _has_data(target):
            return False
        return not self.store.index.count_in_file(self.store.index.rel(target))

    def merge_into(self, target: Path, items: list[tuple[str, str, dict | bytes]]) -> None:
        """Merge the entries held for a target ((id, key, the record or its marshalled bytes),
        each taken out of `items` as it is read: the bytes are not held beside the records)."""
        fresh = []
        loads = marshal.loads
        for n, (rid, key, held) in enumerate(items):
            items[n] = None
            if rid in self.merged_from:
                self.report.duplicates += 1
                continue
            if rid in self.ids and self.ids[rid] == key:
                self.report.duplicates += 1
                continue
            rec = held if type(held) is dict else loads(held)
            if rid in self.ids:
                from learn_cli.store.record import new_id

                # Another learning has its id: a new one, and the id it came with remembered
                # (as a merge remembers it), so that importing its file again finds it.
                rec["id"] = new_id()
                rec["merged_from"] = [*_ids_of(rec.get("merged_from")), rid][-MAX_MERGED_FROM:]
            self.ids[rec["id"]] = rec["key"]
            fresh.append(rec)
        if not fresh:
            return  # (the target's records are not read: a file imported again)
        from learn_cli.engine.knowledge import same_learning

        # First the target's records of the entries' keys: when every entry is a copy of one
        # of them, nothing else of the target is read (a file imported again, or part of it).
        existing = self._existing(target, sorted({rec["key"] for rec in fresh}))
        by_key = _by_key(existing)
        judged = _not_copies(fresh, by_key) if existing else fresh
        if judged:
            existing = self._existing(target)
            by_key = _by_key(existing)
        conflicted = self._conflicts(target, existing, judged) if existing and judged else set()
        added: list[dict] = []
        for rec in fresh:
            if rec["id"] in conflicted:
                added.append(rec)
                continue
            same = next((old for old in by_key.get(rec["key"], ()) if same_learning(old, rec)), None)
            if same is None:  # a new key, or another fix of a known one: an alternative
                by_key.setdefault(rec["key"], []).append(rec)
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

    def _existing(self, target: Path, keys: list[str] | None = None) -> dict[str, dict]:
        """The target's records by id (of these keys only, when given), in id order, then
        those a dry run holds for it."""
        if self.staging and target in self.staging.targets:
            self.staging.index()  # a second batch for a target (a project listed twice)
        rel = self.store.index.rel(target)
        statuses = ("archived",) if target.name == "archive.jsonl" else _LIVE
        rows = self.store.index.data_in_file(rel, statuses, keys)
        found = {(rec := self.loads(d))["id"]: rec for (d,) in rows}
        held = (self.loads(line) for line in self.held.get(target, b"").splitlines())
        wanted = None if keys is None else set(keys)
        found.update((r["id"], r) for r in held
                     if r.get("status") in statuses and (wanted is None or r.get("key") in wanted))
        return found

    def _conflicts(self, target: Path, existing: dict[str, dict], fresh: list[dict]) -> set[str]:
        from learn_cli.engine.conflicts import find_conflicts, record_features
        from learn_cli.engine.promotion import derived_features, summary

        incoming = {r["id"]: r for r in fresh}
        flagged: set[str] = set()
        # The target's records as the index holds them: their features too, where a promote or
        # prune derived them (~35 us a record otherwise; 36,000 records of an import into a
        # maintained home of 100,000). The entries' ids are none of the store's (merge_into).
        derived = derived_features(self.store, self.store.index.rel(target), self.loads)
        features = (lambda rec: derived.get(rec["id"]) or record_features(rec)) if derived else record_features
        for a, b, reason in find_conflicts([*existing.values(), *fresh], features=features):
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

        # An untrusted entry never changes a learning's text or counters: it is only noted
        # (merged_from), so importing it again is a duplicate.
        merged = merge(into, rec) if self.trusted else dict(into)
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
        if not candidates:  # only conflicted entries: no group can take one (a file imported again)
            return added
        fresh_ids = {r["id"] for r in candidates}
        keep = {r["id"] for r in added}
        # (only the groups that may hold a candidate: the others are not acted on below)
        for group in near_duplicates([*existing.values(), *candidates], NEAR_DUPLICATE, around=candidates):
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
        self.staging.commit()
        for target, recs in self.new.items():
            target.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            self._start_clocks(target, recs)
            self.store.put_many(target, recs)
        for target, patches in self.patches.items():
            changes = {rid: _setter(fields) for rid, fields in patches.items()}
            size = self.store.index.count_in_file(self.store.index.rel(target))
            self.store.update_many(target, changes, rewrite=2 * len(changes) >= max(size, 1))

    def _start_clocks(self, target: Path, recs: list[dict]) -> None:
        """Start (or stop) the archive clock, `low_since`, of the live records about to be
        written, as the next promote or prune would (scoring.update_low_since): the first run
        after an import then has no clock to write into every file it brought."""
        from learn_cli.engine.scoring import update_low_since

        if self.now is None or target.name == ARCHIVE_FILE:
            return
        for rec in recs:
            if rec.get("status") in _LIVE or rec.get("status") is None:
                update_low_since(rec, self.now)


def _by_key(records: dict[str, dict]) -> dict[str, list[dict]]:
    """Records by key, in their order (the entries added to a target join them)."""
    by_key: dict[str, list[dict]] = {}
    for rec in records.values():
        by_key.setdefault(rec.get("key"), []).append(rec)
    return by_key


def _ids_of(value) -> list[str]:
    """The ids of a `merged_from` as an entry brings it (any shape: it is untrusted)."""
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def _not_copies(fresh: list[dict], by_key: dict[str, list[dict]]) -> list[dict]:
    """The entries that are not a copy of a record of the target: one with the text of the
    first record of its key that is the same learning is a duplicate, and is not judged for
    conflicts (that record has been: flagged again, the copy would be added as a conflicted
    record at every import of its file)."""
    from learn_cli.engine.knowledge import same_learning

    def copy(rec: dict) -> bool:
        same = next((old for old in by_key.get(rec["key"], ()) if same_learning(old, rec)), None)
        return same is not None and _same_text(same, rec)

    return [rec for rec in fresh if not copy(rec)]


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


def _same_text(a: dict, b: dict) -> bool:
    return all(_normalized(a.get(f)) == _normalized(b.get(f)) for f in ("context", "error", "fix"))


def _normalized(text) -> str:
    return _normalized_text(text) if isinstance(text, str) else ""


@lru_cache(maxsize=16384)
def _normalized_text(text: str) -> str:
    """merge.normalize_text, once per text of a target: a learning that many entries merge
    into is compared with each of them."""
    from learn_cli.engine.merge import normalize_text

    return normalize_text(text)
