"""Learnings stored under older key rules are keyed again: `learn prune`'s first step.

A failure finds its learning by key: `text.keys.error_key` of the error, the command and the
tool. Releases change those rules (an error's noise lines, a look at a missing file keyed by
what it reads), and a learning stored before keeps its old key: no failure finds it again,
though `recall` still shows it, and the same lesson is learned a second time under the new key.

So a learning with an error key keeps `key_from_text`: the key its own stored text (`error`,
`command`, `tool`: redacted, shortened, normalised) gave when it was stored. When the sources
the rules are made of (`learn_cli/text`, and the version) differ from those of the last prune
that did this (analytics/key-rules.json), every live learning with an error key is keyed from
its text again:

- its text gives `key_from_text` still: the rules did not change for it; nothing is written;
- it gives another key: the rules changed for it; it takes that key (and `key_from_text`),
  and the duplicate merge that follows folds it with a copy learned since under the new key;
- it has no `key_from_text` (stored before there was one, or by hand): it gets one, the
  baseline of the next change; its key stays, since which rules made that key is unknown.

The text's key decides whether the rules changed, not what the key is: the key was made from
the whole error and the command as run, the text is what the record keeps. The two agree for
most learnings (108 of 116 of a replayed real history's store); where they do not, the text's
new key is the best there is once the rules moved.
"""

from __future__ import annotations

from collections.abc import Callable

from learn_cli.text.keys import ERROR_KEY

RULES_FILE = "key-rules.json"


def rules_fingerprint() -> str:
    """What the key rules are made of: the sources of `learn_cli/text` and the version."""
    import hashlib
    import os

    import learn_cli
    from learn_cli import text

    digest = hashlib.sha1(learn_cli.__version__.encode())
    folder = os.path.dirname(text.__file__)
    for name in sorted(os.listdir(folder)):
        if name.endswith(".py"):
            with open(os.path.join(folder, name), "rb") as fh:
                digest.update(name.encode() + b"\0" + fh.read())
    return digest.hexdigest()[:16]


def key_from_text(rec: dict) -> str:
    """The key a learning's stored text gives under today's rules."""
    from learn_cli.text.keys import error_key

    return error_key(rec.get("error") or "", rec.get("command") or None, rec.get("tool") or None)


def keyed_again(rec: dict) -> dict | None:
    """The fields to change for the key today's rules give the record (`key_from_text`, and
    `key` when the rules changed for it), or None when they stand (the module docstring)."""
    if not str(rec.get("key") or "").startswith(ERROR_KEY) or not str(rec.get("error") or "").strip():
        return None
    now = key_from_text(rec)
    before = rec.get("key_from_text")
    if before == now:
        return None
    if before and now != rec["key"]:
        return {"key": now, "key_from_text": now}
    return {"key_from_text": now}


def changes(store, loads: Callable, progress: Callable | None = None) -> dict[int, tuple[str, dict]] | None:
    """Index rowid -> (its file, `keyed_again`'s fields) of every live learning with an error
    key whose text the rules key otherwise now; None when they are the rules of the last prune
    that asked (`remember_rules` once it wrote the changes: prune writes them with its others,
    so that a killed prune leaves each learning as it was or as it is after the prune)."""
    if last_rules(store) == rules_fingerprint():
        return None
    total = store.index.count_of_key_kind(ERROR_KEY) if progress else 0
    out: dict[int, tuple[str, dict]] = {}
    for n, (rowid, rel, data) in enumerate(store.index.live_rows_of_key_kind(ERROR_KEY)):
        if progress and n % 500 == 0:
            progress("keying", n, total)  # ~0.4 ms a learning: a minute at 100,000 error learnings
        rec = loads(data) if data else None
        fields = keyed_again(rec) if isinstance(rec, dict) else None
        if fields is not None:
            out[rowid] = (rel, fields)
    out.update(_project_facts_keyed_again(store, loads))
    if progress:
        progress("keying", total, total)
    return out


def _project_facts_keyed_again(store, loads: Callable) -> dict[int, tuple[str, dict]]:
    """Each project's facts under the key every project's facts of a goal once shared
    (engine.goals.shared_fact_key), keyed as their project's own (project_fact_key)."""
    from learn_cli.engine.goals import WORKING_GOALS, project_fact_key, shared_fact_key
    from learn_cli.store.record import is_project_fact

    out: dict[int, tuple[str, dict]] = {}
    for goal in WORKING_GOALS:
        for rowid, rel, data in store.index.live_rows_of_key_kind(shared_fact_key(goal)):
            rec = loads(data) if data else None
            projects = rec.get("projects") if isinstance(rec, dict) and is_project_fact(rec) else None
            if isinstance(projects, list) and projects and isinstance(projects[0], str):
                out[rowid] = (rel, {"key": project_fact_key(goal, projects[0])})
    return out


def remember_rules(store) -> None:
    """The rules the learnings are keyed by now (analytics/key-rules.json, derived data)."""
    import json

    from learn_cli.store.jsonl import atomic_write

    try:
        atomic_write(_rules_path(store), json.dumps({"rules": rules_fingerprint()}).encode(), durable=False)
    except OSError:
        pass  # scanned again at the next prune: nothing changes twice


def _rules_path(store):
    return store.layout.analytics / RULES_FILE


def last_rules(store) -> str | None:
    """The fingerprint of the rules the last prune keyed learnings by, or None (none did yet)."""
    import json

    try:
        return json.loads(_rules_path(store).read_bytes()).get("rules")
    except (OSError, ValueError, AttributeError):
        return None  # derived data: missing or unreadable, the learnings are checked again
