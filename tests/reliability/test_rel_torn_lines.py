"""Crash safety of appends (issue 12): a kill -9 inside an append must never leave a half line
inside a log.

A `learn promote` killed while it appended left a torn line in the middle of a learnings log:
the next writer saw that the file did not end with a newline and wrote one before its own
line, so the half line stayed inside the file for good (every later load reported it as
corrupt). Now a writer that finds a torn tail (under the file's lock, so its writer is dead)
keeps the half line in `<file>.corrupt` and cuts it off before appending; a whole record
that only lacks its newline is kept.

The kill lands inside the write system call itself: a real `learn promote` (the fork server's
child, crash_server.py) appends its re-scored records to a project's log in one write of
~1.5 MB, and is stopped by SIGKILL while the kernel copies it, which leaves the first part of
the batch in the file, exactly as a crash does. Other processes append new learnings to the
same log through the store, before, during and after the kill.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import time
from pathlib import Path

import pytest

import reliability_kit as kit

# Learnings the promote leaves alone, and re-scores: fewer than half, so the promote appends
# them (one write of ~1.5 MB) rather than rewriting the file.
KEPT, RESCORED = 700, 600
RACERS = 3
KILLS = 4
DAY = 86400


def _record(n: int, who: str) -> dict:
    from learn_cli.store.record import make_record

    rec = make_record(context=f"{who} context {n} " + "x" * 400, fix=f"fix {who} {n}")
    rec["id"] = f"learn-{who}-{n:06d}"
    return rec


def _promote_template(home: Path, base: Path) -> tuple[Path, set]:
    """A project whose log `learn promote` patches with one append: RESCORED learnings, low
    scored for 200 days, get their archive clock (`low_since`); KEPT others stay as they are."""
    from learn_cli.store.api import Store
    from learn_cli.store.project import identify
    from learn_cli.store.record import now_iso

    rng = random.Random("torn-promote")
    store = Store(home, warn_stderr=False)
    project = identify(kit.project_dir(base, "app"))
    store.register_project(project)
    pad = kit.words(rng, 300)[:1800]
    old = now_iso(time.time() - 200 * DAY)
    recs = [kit.error_record(rng, project, key=f"torn-{n:05d}", error=f"Error: case {n} {pad}")
            for n in range(KEPT)]
    recs += [kit.error_record(rng, project, key=f"torn-{KEPT + n:05d}", error=f"Error: case {KEPT + n} {pad}",
                              frequency=1, impact=0.1, created=old, last_used=old) for n in range(RESCORED)]
    path = store.layout.learnings(project.id)
    store.put_many(path, recs)
    store.close()
    return path.relative_to(home), {r["id"] for r in recs}


def _racer(home: Path, path: Path, who: str, acked: Path, stop: Path) -> None:
    """Child: new learnings appended through the store (as a capture adds one), one after the
    other, each acknowledged once written; five more once the parent says stop. (Learnings
    the promote leaves alone: re-scored ones would make it rewrite the file, not append.)"""
    from learn_cli.store.api import Store
    from learn_cli.store.project import identify

    rng = random.Random(who)
    project = identify(home.parent / "work" / "app")
    after_stop = n = 0
    while after_stop < 5:
        after_stop += stop.exists()
        rec = kit.error_record(rng, project, id=f"learn-{who}-{n:06d}", key=f"racer-{who}-{n}")
        store = Store(home, warn_stderr=False)
        try:
            store.put_many(path, [rec])
        finally:
            store.close()
        with open(acked, "a") as fh:
            fh.write(rec["id"] + "\n")
        n += 1
        time.sleep(rng.uniform(0, 0.01))


def _fork(fn, *args) -> int:
    pid = os.fork()
    if pid == 0:
        code = 0
        try:
            fn(*args)
        except BaseException:  # noqa: BLE001 - a failed child is reported by its status
            import traceback

            traceback.print_exc()
            code = 1
        os._exit(code)
    return pid


def _lines(path: Path) -> list[bytes]:
    return path.read_bytes().split(b"\n")


def _kill_inside_the_write(server, run: Path, after: float) -> bool:
    """`learn promote` in `run`, killed `after` seconds into its big append. True when it died
    of that signal (it may also finish first, or die before the write has copied anything)."""
    pid = server.start({"home": str(run / "home"), "cwd": str(run / "work" / "app"), "argv": ["promote"],
                        "kill_in_big_write": after, "errlog": str(run / "child-errors.txt")})
    status, _ = server.wait()
    assert pid and (os.WIFSIGNALED(status) or os.WEXITSTATUS(status) == 0), (run / "child-errors.txt").read_text()
    return os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGALRM


def _one_kill(server, template: Path, run: Path, rel: Path, ids: set, after: float) -> dict:
    from learn_cli.store import jsonl
    from learn_cli.store.api import Store

    shutil.copytree(template, run, symlinks=True)
    home, path = run / "home", run / "home" / rel
    acked, stop = run / "acked.txt", run / "stop"
    racers = [_fork(_racer, home, path, f"r{i}", acked, stop) for i in range(RACERS)]
    try:
        killed = _kill_inside_the_write(server, run, after)
    finally:
        stop.touch()
        for pid in racers:
            _, status = os.waitpid(pid, 0)
            assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, "a racing appender failed"

    loaded = jsonl.load(path)
    assert loaded.bad == [], f"damaged lines inside the log: {loaded.bad[:3]}"  # the racers wrote after the kill
    assert _lines(path)[-1] == b"", "the file ends with a whole line"
    assert ids <= set(loaded.records), "a learning of the promoted store was lost"
    assert set(acked.read_text().split()) <= set(loaded.records), "an acknowledged append was lost"
    store = Store(home, warn_stderr=False)
    try:
        store.refresh()
        indexed = {r[0] for r in store.index.db.execute("SELECT id FROM learnings WHERE file = ?", (str(rel),))}
        assert indexed == set(loaded.records), "the index differs from the file"
    finally:
        store.close()
    corrupt = path.with_name(path.name + ".corrupt")
    clocked = sum(1 for rid in ids if loaded.records[rid].get("low_since"))
    return {"killed": killed, "torn": corrupt.exists(), "rescored_kept": clocked}


def test_kill_9_inside_promotes_append_with_racing_appends_leaves_only_whole_lines(tmp_path):
    template = tmp_path / "template"
    rel, ids = _promote_template(template / "home", template / "work")
    server = kit.Server()
    rng = random.Random("torn-lines")
    results = []
    try:
        for n in range(KILLS * 2):  # KILLS, or more until two kills have cut the write (a fast disk)
            if n >= KILLS and sum(r["torn"] for r in results) >= 2:
                break
            results.append(_one_kill(server, template, tmp_path / f"k{n}", rel, ids, rng.uniform(0.00005, 0.0004)))
    finally:
        server.close()
    print(f"\ntorn-lines {json.dumps(results)}")
    # the attack works: some kills cut the big write part way (a torn tail the racers then met)
    assert sum(r["torn"] for r in results) >= 2, results
    assert any(0 < r["rescored_kept"] < RESCORED for r in results if r["torn"]), results


def test_a_reader_skips_a_torn_last_line_and_the_next_writer_cuts_it(tmp_path):
    from learn_cli.store import jsonl

    path = tmp_path / "learnings.jsonl"
    recs = [_record(n, "a") for n in range(5)]
    jsonl.append(path, recs)
    whole = path.read_bytes()
    torn = jsonl.utf8(jsonl.dumps(_record(99, "torn")))[:-30]
    path.write_bytes(whole + torn)
    loaded = jsonl.load(path)
    assert set(loaded.records) == {r["id"] for r in recs}
    assert [b.line for b in loaded.bad] == [6]  # named, not loaded
    new = _record(7, "b")
    jsonl.append(path, [new])
    assert path.read_bytes() == whole + jsonl.utf8(jsonl.dumps(new)) + b"\n"
    assert path.with_name("learnings.jsonl.corrupt").read_bytes() == torn + b"\n"


@pytest.mark.parametrize("limit_at", [0.3, 0.6])
def test_a_short_write_leaves_the_file_as_it_was(tmp_path, limit_at):
    """A write that the file size limit cuts short is undone: no half line, the old content."""
    import resource

    from learn_cli.store import jsonl

    path = tmp_path / "learnings.jsonl"
    jsonl.append(path, [_record(0, "a")])
    before = path.read_bytes()
    payload_size = len(jsonl.dumps(_record(1, "b"))) * 50
    pid = os.fork()
    if pid == 0:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (len(before) + int(payload_size * limit_at),) * 2)
        code = 4  # never back into pytest: an unexpected error is a status too
        try:
            jsonl.append(path, [_record(n, "b") for n in range(50)])
            code = 3
        except OSError:
            code = 0
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
    assert path.read_bytes() == before


def test_the_spool_never_writes_through_a_planted_symlink(tmp_path):
    """The spool's files are the home's files too: opened without following a link (issue 12)."""
    from learn_cli.store import spool

    outside = tmp_path / "outside.txt"
    outside.write_bytes(b"keep me\n")
    files = spool.SpoolFiles(tmp_path / "home")
    files.dir.mkdir(parents=True, mode=0o700)
    (files.dir / "s1.jsonl").symlink_to(outside)
    with pytest.raises(OSError):
        files.append("s1", {"id": "x", "event": {}})
    assert outside.read_bytes() == b"keep me\n"


# ---------------------------------------------------------------------------------------------
# learn.log: the same care as the record files (issue 12)


def test_a_torn_log_line_is_set_aside_before_the_next_line(tmp_path):
    """A hook ended by its hard stop (os._exit) or a kill -9 half way through a log line: the
    next writer keeps the half line in learn.log.corrupt, and the log holds whole lines only."""
    from learn_cli.store import log

    path = tmp_path / "learn.log"
    log.warn("first warning", path, stderr=False)
    whole = path.read_bytes()
    torn = b"2026-12-01T16:00:00Z a hook stopped at its time li"
    path.write_bytes(whole + torn)
    log.warn("second warning", path, stderr=False)
    lines = path.read_bytes().split(b"\n")
    assert lines[0] + b"\n" == whole and lines[1].endswith(b" second warning") and lines[2:] == [b""]
    assert path.with_name("learn.log.corrupt").read_bytes() == torn + b"\n"


def test_a_log_line_waits_for_the_log_lock_no_longer_than_the_hook_deadline(tmp_path, monkeypatch):
    """The log is written under its lock, like every file of the home, and the wait for it is
    bounded by the hook's deadline: a line that cannot be written in time is dropped (the
    counters keep the counts), never a reason to hold the agent."""
    from learn_cli.store import deadline, log
    from learn_cli.store.locks import file_lock

    monkeypatch.setattr(log, "LOCK_WAIT_S", 30.0)  # so the hook's deadline is the only bound
    path = tmp_path / "learn.log"
    ready_r, ready_w = os.pipe()
    go_r, go_w = os.pipe()

    def hold_the_lock() -> None:  # another process, until told to let go
        with file_lock(path):
            os.write(ready_w, b"x")
            os.read(go_r, 1)

    pid = _fork(hold_the_lock)
    try:
        assert os.read(ready_r, 1) == b"x"
        deadline.set_deadline(time.monotonic() + 0.05)
        started = time.monotonic()
        log.warn("while the lock is held", path, stderr=False)
        waited = time.monotonic() - started
        deadline.set_deadline(None)
        assert waited < 5, waited  # the deadline's 50 ms (and a loaded machine's delays), not LOCK_WAIT_S
        assert not path.exists() or b"while the lock is held" not in path.read_bytes()
    finally:
        deadline.set_deadline(None)
        os.write(go_w, b"x")
        os.waitpid(pid, 0)
    log.warn("after the lock is free", path, stderr=False)
    assert path.read_bytes().endswith(b" after the lock is free\n")


def test_concurrent_log_writers_leave_whole_lines(tmp_path):
    """6 processes × 60 distinct warnings of ~500 characters, beside a torn line left by a
    killed writer: every warning is there once, on a whole line; the half line is set aside."""
    from learn_cli.store import log

    path = tmp_path / "learn.log"
    path.write_bytes(b"2026-12-01T16:00:00Z half a li")

    def writer(who: str) -> None:
        for n in range(60):
            log.warn(f"{who} {n:03d} " + "w" * 480, path, stderr=False)

    pids = [_fork(writer, f"p{i}") for i in range(6)]
    for pid in pids:
        _, status = os.waitpid(pid, 0)
        assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
    lines = path.read_bytes().split(b"\n")
    assert lines[-1] == b""
    messages = sorted(line.split(b" ")[1:3] for line in lines[:-1])
    assert messages == sorted([f"p{i}".encode(), f"{n:03d}".encode()] for i in range(6) for n in range(60))
    assert path.with_name("learn.log.corrupt").read_bytes() == b"2026-12-01T16:00:00Z half a li\n"
