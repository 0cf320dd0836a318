"""Storing a learning the way every entry point must: the same learning merges, never
duplicates, and another fix of a key is an alternative beside it (`same_learning`).

Used by `learn`, `learn add`, `learn import`, prune and automatic capture, so the lookup
(`find_same`) and the rule of what is one learning live in one place.
"""

from __future__ import annotations

from learn_cli.store.record import LIVE_STATUSES, fix_text, now_iso
from learn_cli.text.lite import namedtuple
from learn_cli.text.sanitize import normalize_text

LIVE = LIVE_STATUSES

# What remember() did (a `collections` named tuple: `typing` costs a capture ~3 ms to import):
# record: the record as stored; path: the file it is in; merged: merged into an existing
# learning with the same key; before_frequency: that learning's frequency before the merge
# (or None); global_merge: (old frequency, new frequency) of a global learning bumped too, or None.
Outcome = namedtuple("Outcome", "record path merged before_frequency global_merge", module=__name__)


def same_learning(a: dict, b: dict) -> bool:
    """Are two records of one key the same learning? The same fix, or one a more or less
    detailed version of the other (`pip install x` / `pip install 'x[extra]'`). Another fix of
    the key is an alternative, kept beside it (issue 10). Capture, import and prune apply this
    rule; `learn add` keys a hand-written rule by its lesson's text, so the same lesson is one
    learning whatever its fix."""
    if a.get("key") != b.get("key"):
        return False
    fix_a, fix_b = fix_text(a), fix_text(b)
    if not may_refine(fix_a, fix_b):
        return False  # (a capture meets other fixes of its key: engine.conflicts is ~3 M instructions to import)
    from learn_cli.engine.conflicts import is_refinement

    return is_refinement(fix_a, fix_b)


def may_refine(fix_a, fix_b) -> bool:
    """False only when `engine.conflicts.is_refinement` is False: the texts differ, neither's
    words hold the other's, and they share too few words for the similarity it asks (at least
    0.8, the mean of the words' Jaccard index and a character ratio of at most 1: a Jaccard
    index of 0.6; 0.59 here, against rounding)."""
    na, nb = normalize_text(fix_a), normalize_text(fix_b)
    if not na or not nb or na == nb:
        return True
    words_a, words_b = set(na.split()), set(nb.split())
    return words_a <= words_b or words_b <= words_a or len(words_a & words_b) >= 0.59 * len(words_a | words_b)


def key_for(rec: dict) -> str:
    """The dedup key of a record that has none yet."""
    from learn_cli.text.keys import error_key, text_key

    if rec.get("type", "error") == "error" and (rec.get("error") or "").strip():
        return error_key(rec["error"], rec.get("command"), rec.get("tool"))
    # The lesson is the context; the same lesson re-entered with another fix is one learning.
    return text_key(str(rec.get("context") or rec.get("fix") or ""))


def give_key(rec: dict) -> None:
    """Key a record that has none from its own text, and note that its text gave that key
    (`key_from_text`: how engine.rekey tells that the key rules changed for it)."""
    from learn_cli.text.keys import ERROR_KEY

    rec["key"] = key_for(rec)
    if rec["key"].startswith(ERROR_KEY):
        rec["key_from_text"] = rec["key"]


def find_same(store, key: str, path, matches=lambda rec: True) -> tuple | None:
    """The live learning with this key in this file (the first that `matches` accepts: capture
    asks for the same fix too), if any: what every entry point that stores a learning asks."""
    wanted = store.index.rel(path)
    for rel, _scope, _pid, rec in store.index.by_key(key, LIVE, file=wanted):
        if matches(rec):
            return store.path_of(rel), rec
    return None


def remember(store, project, rec: dict, to_global: bool = False, bump_global: bool = True) -> Outcome:
    """Store `rec` in the project's file (or the global one); merge with the same key."""
    from learn_cli.engine.merge import merge

    rec.setdefault("key", "")
    if not rec["key"]:
        give_key(rec)
    if project is not None:
        rec["project"] = rec.get("project") or project.name
        projects = list(rec.get("projects") or [])
        if project.id not in projects:
            projects.append(project.id)
        rec["projects"] = projects
    if to_global:
        rec["status"] = "global"
        path = store.global_file(rec)
    else:
        path = store.layout.learnings(project.id)
        store.layout.ensure_project(project.id)
    store.refresh([path])
    same = find_same(store, rec["key"], path)
    if same is None:
        store.put(path, rec)
        outcome = Outcome(rec, path, False, None, None)
    else:
        before = int(same[1].get("frequency") or 1)
        merged = store.update(path, same[1]["id"], lambda cur: _merged(merge, cur, rec))
        outcome = Outcome(merged or same[1], path, True, before, None)
    if bump_global and not to_global:
        outcome = outcome._replace(global_merge=_bump_global(store, project, rec))
    return outcome


def _merged(merge, current: dict, new: dict) -> dict:
    out = merge(current, new)
    out["last_used"] = now_iso()
    return out


def _bump_global(store, project, rec: dict) -> tuple[int, int] | None:
    """A global learning with the same key was seen again: frequency + 1, project added."""
    path = store.global_file(rec)
    store.refresh([path])
    same = find_same(store, rec["key"], path)
    if same is None:
        return None
    before = int(same[1].get("frequency") or 1)

    def bump(cur: dict) -> dict:
        cur["frequency"] = before + 1
        cur["last_used"] = now_iso()
        if project is not None and project.id not in (cur.get("projects") or []):
            cur["projects"] = list(cur.get("projects") or []) + [project.id]
        return cur

    store.update(path, same[1]["id"], bump)
    return before, before + 1
