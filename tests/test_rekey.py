"""Learnings keyed by older key rules find their failures again after a release (engine.rekey,
`learn prune`'s first step): a learning keeps the key its own text gave (`key_from_text`);
when the rules change, those whose text they now key otherwise take the new key, the others
are not touched, and a copy learned since under the new key is folded in."""

from __future__ import annotations

import json

from learn_cli.engine import rekey
from learn_cli.engine.merge import merge
from learn_cli.store.api import Store
from learn_cli.store.record import make_record
from tests.test_capture_e2e import Session, _two_sessions, learned

OUTPUT = ('npm error Missing script: "test"\nnpm error\nnpm error To see a list of scripts, run:\n'
          "npm error   npm run")
OLD = "err:0123456789abcdef"  # the key an older release's rules gave this text


def _learn_npm_test(learn):
    cwd = learn.project("shop-ui", files={"package.json": '{"scripts": {"test:unit": "vitest"}}'})
    return cwd, _two_sessions(learn, cwd, "npm test", OUTPUT, "npm run test")


def _rewrite(learn, cwd, **fields) -> None:
    """The project's learning as an older release would have stored it (None: without that field)."""
    [rec] = learned(learn, cwd)

    def change(cur: dict) -> dict:
        cur.update(fields)
        return {name: value for name, value in cur.items() if value is not None}

    store = Store(learn.home, warn_stderr=False)
    try:
        store.update(store.layout.learnings(rec["projects"][0]), rec["id"], change)
    finally:
        store.close()


def _failure_answer(learn, cwd) -> str | None:
    s = Session(learn, cwd)
    s.start()
    return s.bash("npm test", fails=OUTPUT)


def test_a_captured_learning_keeps_the_key_its_text_gives(learn):
    _cwd, rec = _learn_npm_test(learn)
    assert rec["key_from_text"] == rekey.key_from_text(rec) == rec["key"]


def test_a_learning_keyed_by_older_rules_answers_again_after_a_prune(learn):
    cwd, rec = _learn_npm_test(learn)
    _rewrite(learn, cwd, key=OLD, key_from_text=OLD)
    assert _failure_answer(learn, cwd) is None  # today's key does not find it

    doc = learn.json("prune", cwd=cwd)
    assert doc["rekeyed"] == 1
    [now] = learned(learn, cwd)
    assert now["key"] == now["key_from_text"] == rec["key"] and now["id"] == rec["id"]
    assert "npm run test" in (_failure_answer(learn, cwd) or "")
    assert learn.json("prune", cwd=cwd)["rekeyed"] == 0  # once per change of the rules


def test_a_copy_learned_since_under_the_new_key_is_folded_in(learn):
    cwd, rec = _learn_npm_test(learn)
    _rewrite(learn, cwd, key=OLD, key_from_text=OLD)
    for _ in range(2):  # learned again under today's key, as it is after an upgrade
        s = Session(learn, cwd)
        s.start()
        s.bash("npm test", fails=OUTPUT)
        s.bash("npm run test", stdout="ok")
        s.end()
    assert len(learned(learn, cwd)) == 2

    doc = learn.json("prune", cwd=cwd)
    assert doc["rekeyed"] == 1 and doc["merged"]["removed"] == 1
    [one] = learned(learn, cwd)
    assert one["key"] == rec["key"] and one["frequency"] >= 4


def test_rules_that_did_not_change_for_a_text_leave_its_key(learn):
    cwd, rec = _learn_npm_test(learn)
    _rewrite(learn, cwd, key=OLD)  # a key of its own; its text keys as it did when stored
    assert learn.json("prune", cwd=cwd)["rekeyed"] == 0
    assert learned(learn, cwd)[0]["key"] == OLD


def test_a_learning_from_before_key_from_text_gets_a_baseline_and_keeps_its_key(learn):
    cwd, rec = _learn_npm_test(learn)
    _rewrite(learn, cwd, key=OLD, key_from_text=None)
    [before] = learned(learn, cwd)
    assert "key_from_text" not in before

    assert learn.json("prune", cwd=cwd)["rekeyed"] == 0
    [after] = learned(learn, cwd)
    assert after["key"] == OLD and after["key_from_text"] == rec["key"]


def test_the_scan_waits_for_a_change_of_the_rules(learn):
    cwd, rec = _learn_npm_test(learn)
    learn.json("prune", cwd=cwd)  # the rules of this release are noted
    _rewrite(learn, cwd, key=OLD, key_from_text=OLD)
    assert learn.json("prune", cwd=cwd)["rekeyed"] == 0  # same rules: not scanned again
    (learn.home / "analytics" / rekey.RULES_FILE).write_text(json.dumps({"rules": "an older release"}))
    assert learn.json("prune", cwd=cwd)["rekeyed"] == 1


def test_a_dry_run_counts_and_writes_nothing(learn):
    cwd, _rec = _learn_npm_test(learn)
    _rewrite(learn, cwd, key=OLD, key_from_text=OLD)
    assert learn.json("prune", "--dry-run", cwd=cwd)["rekeyed"] == 1
    assert learned(learn, cwd)[0]["key"] == OLD
    assert not (learn.home / "analytics" / rekey.RULES_FILE).exists()
    assert learn.json("prune", cwd=cwd)["rekeyed"] == 1


def test_the_report_says_what_was_keyed_again(learn):
    cwd, _rec = _learn_npm_test(learn)
    _rewrite(learn, cwd, key=OLD, key_from_text=OLD)
    out = learn("prune", cwd=cwd, check=0).stdout
    assert "        Keyed again: 1 entry (the key rules changed since they were stored)\n" in out


def test_keyed_again_leaves_what_has_no_error_key():
    note = make_record(context="Use pnpm", fix="pnpm i", key="txt:abc")
    assert rekey.keyed_again(note) is None
    no_text = make_record(error=" ", fix="x", key=OLD, key_from_text=OLD)
    assert rekey.keyed_again(no_text) is None


def test_a_merge_keeps_key_from_text_only_with_the_text_it_came_from():
    a = make_record(error="ModuleNotFoundError: No module named 'jose'", fix="pip install python-jose", key=OLD,
                    key_from_text=OLD)
    longer = dict(a, id="other", error=a["error"] + "\n  File \"app.py\", line 1", key_from_text="err:1111111111111111")
    assert merge(a, dict(a, id="same")).get("key_from_text") == OLD
    assert "key_from_text" not in merge(a, longer)  # the text is the other copy's now
    no_basis = {k: v for k, v in a.items() if k != "key_from_text"}
    assert "key_from_text" not in merge(no_basis, dict(a, id="x"))  # not `into`'s: it was keyed otherwise


def test_the_rules_fingerprint_follows_the_version(monkeypatch):
    import learn_cli

    first = rekey.rules_fingerprint()
    assert first == rekey.rules_fingerprint() and len(first) == 16
    monkeypatch.setattr(learn_cli, "__version__", learn_cli.__version__ + ".post1")
    assert rekey.rules_fingerprint() != first


def test_the_scan_reports_its_progress(learn):
    """A first prune under new rules keys every error learning's text again (~0.4 ms each): on
    a large home that is long work, and the bar says so."""
    from learn_cli.engine.prune import run_prune

    cwd, _rec = _learn_npm_test(learn)
    _rewrite(learn, cwd, key=OLD, key_from_text=OLD)
    seen = []
    store = Store(learn.home, warn_stderr=False)
    try:
        report = run_prune(store, progress=lambda phase, done, total: seen.append((phase, done, total)))
    finally:
        store.close()
    keying = [(done, total) for phase, done, total in seen if phase == "keying"]
    assert report.rekeyed == 1 and keying[0] == (0, 1) and keying[-1] == (1, 1)


def test_doctor_says_when_the_keys_wait_for_a_prune(learn):
    cwd, _rec = _learn_npm_test(learn)

    def keys() -> dict:
        return next(c for c in learn.json("doctor", cwd=cwd, check=None)["checks"] if c["name"] == "keys")

    assert keys()["status"] == "ok" and "next `learn prune` checks the keys of 1 error learning" in keys()["summary"]
    learn.json("prune", cwd=cwd)
    assert keys() == {"details": [], "name": "keys", "status": "ok", "summary": "keyed by this release's rules"}
    (learn.home / "analytics" / rekey.RULES_FILE).write_text(json.dumps({"rules": "an older release"}))
    assert keys()["status"] == "warn" and "run `learn prune`" in keys()["summary"]
