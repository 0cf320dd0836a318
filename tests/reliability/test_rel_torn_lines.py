"""Crash safety of appends (issue 12): a kill -9 inside an append must never leave a half line
inside a log.

A `learn promote` killed while it appended left a torn line in the middle of a learnings log:
the next writer saw that the file did not end with a newline and wrote one before its own
line, so the half line stayed inside the file for good (every later load reported it as
corrupt). Now a writer that finds a torn tail (under the file's lock, so its writer is dead)
keeps the half line in `<file>.corrupt` and cuts it off before appending; a whole record
that only lacks its newline is kept.

The kill lands inside the write system call itself: the appending child is stopped by
SIGKILL while the kernel copies a large payload (a promote's batch of records), which
leaves the first part of it in the file, exactly as a crash does. Appenders in other
processes race it, before, during and after the kill.
"""

from __future__ import annotations

import json
import os
import random
import signal
import time
import types
from pathlib import Path

import pytest

BIG_BATCH = 12_000  # records in the killed append (~7 MB: the write takes milliseconds)
RACERS = 3
RACER_APPENDS = 40
KILLS = 8


def _record(n: int, who: str) -> dict:
    from learn_cli.store.record import make_record

    rec = make_record(context=f"{who} context {n} " + "x" * 400, fix=f"fix {who} {n}")
    rec["id"] = f"learn-{who}-{n:06d}"
    return rec


def _big_appender(path: Path, ready_w: int, batch: list) -> None:
    """Child: append one big batch; tell the parent the moment the write begins."""
    from learn_cli.store import jsonl
    from learn_cli.store.locks import file_lock

    real = os

    def write(fd, data):
        if len(data) > 1 << 20:
            real.write(ready_w, b"w")
        return real.write(fd, data)

    jsonl.os = types.SimpleNamespace(**{k: getattr(real, k) for k in dir(real) if not k.startswith("__")})
    jsonl.os.write = write
    with file_lock(path):
        jsonl.append(path, batch)


def _racer(path: Path, who: str, acked: Path) -> None:
    """Child: small appends under the lock, one after the other; each acknowledged once written."""
    from learn_cli.store import jsonl
    from learn_cli.store.locks import file_lock

    rng = random.Random(who)
    for n in range(RACER_APPENDS):
        rec = _record(n, who)
        with file_lock(path):
            jsonl.append(path, [rec])
        with open(acked, "a") as fh:
            fh.write(rec["id"] + "\n")
        time.sleep(rng.uniform(0, 0.004))


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


def _one_kill(tmp: Path, rng: random.Random, batch: list) -> dict:
    from learn_cli.store import jsonl

    path = tmp / "learnings.jsonl"
    jsonl.append(path, [_record(n, "seed") for n in range(20)])
    acked = tmp / "acked.txt"
    ready_r, ready_w = os.pipe()
    big = _fork(_big_appender, path, ready_w, batch)
    racers = [_fork(_racer, path, f"r{i}", acked) for i in range(RACERS)]
    os.close(ready_w)
    assert os.read(ready_r, 1) == b"w"
    time.sleep(rng.uniform(0, 0.002))
    os.kill(big, signal.SIGKILL)
    os.close(ready_r)
    _, status = os.waitpid(big, 0)
    killed = os.WIFSIGNALED(status)
    for pid in racers:
        _, status = os.waitpid(pid, 0)
        assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, "a racing appender failed"

    lines = _lines(path)
    loaded = jsonl.load(path)
    inside = [b for b in loaded.bad if b.line < len(lines)]  # a torn last line is allowed (its writer died)
    assert inside == [], f"damaged lines inside the log: {inside[:3]}"
    corrupt = path.with_name(path.name + ".corrupt")
    set_aside = corrupt.read_bytes() if corrupt.exists() else b""
    jsonl.append(path, [_record(0, "next")])  # the next writer
    lines = _lines(path)
    assert lines[-1] == b"", "the file ends with a whole line"
    loaded = jsonl.load(path)
    assert loaded.bad == [], f"damaged lines inside the log: {loaded.bad[:3]}"
    for _n, raw in enumerate(lines[:-1], 1):
        json.loads(raw)  # every line is a whole record
    ids = set(loaded.records)
    assert {f"learn-seed-{n:06d}" for n in range(20)} <= ids
    assert set(acked.read_text().split()) <= ids, "an acknowledged append was lost"
    big_ids = {rid for rid in ids if rid.startswith("learn-big-")}
    set_aside = set_aside or (corrupt.read_bytes() if corrupt.exists() else b"")
    torn = killed and 0 < len(big_ids) < BIG_BATCH
    return {"killed": killed, "torn": bool(set_aside), "partial_batch": torn,
            "kept_records_of_killed_batch": len(big_ids)}


def test_kill_9_inside_an_append_with_racing_appends_leaves_only_whole_lines(tmp_path):
    rng = random.Random("torn-lines")
    batch = [_record(n, "big") for n in range(BIG_BATCH)]
    results = []
    for n in range(KILLS * 2):  # KILLS, or more until two kills have cut the write (a fast disk)
        if n >= KILLS and sum(r["torn"] for r in results) >= 2:
            break
        where = tmp_path / f"k{n}"
        where.mkdir()
        results.append(_one_kill(where, rng, batch))
    print(f"\ntorn-lines {json.dumps(results)}")
    # the attack works: some kills cut the big write part way (a torn tail the racers then met)
    assert sum(r["torn"] for r in results) >= 2, results


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
        try:
            jsonl.append(path, [_record(n, "b") for n in range(50)])
            os._exit(3)
        except OSError:
            os._exit(0)
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
