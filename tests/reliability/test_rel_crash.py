"""Crash safety (SPEC §1.3): `learn prune`, `learn promote`, `learn import` and the log
compaction are killed with SIGKILL at 50 random moments each (delays from a seeded RNG over
the operation's measured duration). After every kill the store loads, every record is in its
old or its new state (file and content), no record is lost, the index agrees with the files,
and nothing a loader reads is a leftover temp file.

The children come from a fork server (crash_server.py) that has imported `learn` already, so
the kill lands in the work, not in Python's start-up; a few runs go through the real `learn`
executable as well.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import reliability_kit as kit

MOMENTS = kit.volume(50, 20)  # kills per operation
# Kills that must land inside the work: a quiet machine lands ~30% of them (13 and 17 of 50
# seen), so 1 in 5 of 50, and 2 of 20 in `make test` (missed about once in 130 runs there).
KILLS_NEEDED = kit.volume(MOMENTS // 5, 2)
DAY = 86400


# ---------------------------------------------------------------------------------------------
# The fork server (reliability_kit.Server)


@pytest.fixture(scope="module")
def server():
    srv = kit.Server()
    yield srv
    srv.close()


# ---------------------------------------------------------------------------------------------
# Stores to crash


def _iso(days_ago: float) -> str:
    from learn_cli.store.record import now_iso

    return now_iso(time.time() - days_ago * DAY)


def _stale(rng, project) -> dict:
    return kit.error_record(rng, project, frequency=1, impact=0.1, created=_iso(150), last_used=_iso(120),
                            low_since=_iso(60))


def _projects(base: Path, n: int):
    from learn_cli.store.project import identify

    return [identify(kit.project_dir(base, f"app-{i}", remote=f"git@example.com:team/app-{i}.git"))
            for i in range(n)]


def _open(home: Path):
    from learn_cli.store.api import Store

    return Store(home, warn_stderr=False)


def build_prune(home: Path, base: Path) -> dict:
    """Stale learnings to archive, same-key duplicates to merge, low scores to re-score,
    superseded lines to compact, old archived entries for --hard, old session files."""
    rng = random.Random("prune-template")
    store = _open(home)
    projects = _projects(base, 3)
    for n, project in enumerate(projects):
        store.register_project(project)
        path = store.layout.learnings(project.id)
        recs = [kit.error_record(rng, project, frequency=1 if i % 2 else 5, impact=0.5 if i % 2 else 0.8)
                for i in range(150 if n == 0 else 60)]
        recs += [_stale(rng, project) for _ in range(30)]
        for _ in range(15):
            first = kit.error_record(rng, project)
            recs += [first, dict(first, id=_new_id(), context=f"again: {kit.words(rng, 4)}", frequency=2)]
        store.put_many(path, recs)
        store.put_many(path, [dict(r, impact=0.9) for r in recs[:40]])  # superseded lines
        archived = [dict(kit.error_record(rng, project), status="archived", last_used=_iso(200), created=_iso(300))
                    for _ in range(40)]
        store.put_many(store.layout.archive(project.id), archived)
    for i in range(10):
        session = store.layout.sessions_dir / f"old-session-{i}.jsonl"
        session.write_text(json.dumps({"id": f"e{i}", "kind": "failure"}) + "\n")
        os.utime(session, (time.time() - 40 * DAY, time.time() - 40 * DAY))
    store.close()
    return {"argv": ["prune", "--hard"], "cwd": str(base / "app-0")}


def build_promote(home: Path, base: Path) -> dict:
    """The same learning in three projects (promoted: a new global record, `promoted_to` on
    the copies), keys already global (folded), conflicting fixes, stale learnings."""
    rng = random.Random("promote-template")
    store = _open(home)
    projects = _projects(base, 3)
    for project in projects:
        store.register_project(project)
    shared = [kit.error_record(rng, projects[0], frequency=6, impact=0.9) for _ in range(25)]
    already = [kit.error_record(rng, projects[0], frequency=6, impact=0.9) for _ in range(5)]
    store.put_many(store.layout.global_errors,
                   [dict(r, id=_new_id(), status="global", projects=[projects[1].id]) for r in already])
    for n, project in enumerate(projects):
        path = store.layout.learnings(project.id)
        recs = [dict(r, id=_new_id(), project=project.name, projects=[project.id]) for r in shared]
        if n < 2:
            recs += [dict(r, id=_new_id(), project=project.name, projects=[project.id]) for r in already]
        recs += [kit.error_record(rng, project) for _ in range(60)]
        recs += [_stale(rng, project) for _ in range(25)]
        if n == 0:
            for _ in range(5):
                a = kit.error_record(rng, project)
                recs += [a, dict(a, id=_new_id(), fix=f"{kit.word(rng)} reinstall {kit.word(rng)}",
                                 fix_command=None)]
        store.put_many(path, recs)
    store.close()
    return {"argv": ["promote"], "cwd": str(base / "app-0")}


def build_import(home: Path, base: Path) -> dict:
    """An export with new learnings, learnings of a new project, same-key learnings to merge,
    duplicates, ids that collide with other learnings, invalid entries and conflicts."""
    rng = random.Random("import-template")
    store = _open(home)
    projects = _projects(base, 2)
    existing = {}
    for project in projects:
        store.register_project(project)
        recs = [kit.error_record(rng, project) for _ in range(100)]
        store.put_many(store.layout.learnings(project.id), recs)
        existing[project.id] = recs
    store.put_many(store.layout.global_errors,
                   [dict(kit.error_record(rng, projects[0]), status="global") for _ in range(20)])
    store.close()
    a = projects[0]
    mine = existing[a.id]
    entries = [kit.error_record(rng, a) for _ in range(100)]
    entries += [dict(r, id=_new_id(), context=f"seen again while {kit.words(rng, 5)}", frequency=3)
                for r in mine[:20]]  # same key, other text: merged
    entries += [dict(r) for r in mine[20:40]]  # the same learnings: duplicates
    entries += [dict(kit.error_record(rng, a), id=r["id"]) for r in mine[40:50]]  # id collisions
    entries += [dict(r, id=_new_id(), fix=f"{kit.word(rng)} downgrade {kit.word(rng)}", fix_command=None)
                for r in mine[50:60]]  # same error, other fix: conflicts
    entries += [{"id": _new_id(), "type": "error", "context": 42}, {"type": "nonsense", "context": "x"}] * 5
    newcomer = {"name": "newcomer", "root": "/srv/newcomer", "remote": "git@example.com:team/newcomer.git",
                "learnings": [kit.error_record(rng, a, projects=[]) for _ in range(60)]}
    doc = {"format": "self-learning-agent", "version": "1.0.0", "exported": _iso(1), "global": [],
           "projects": {a.id: {"name": a.name, "root": a.root, "remote": a.remote, "learnings": entries},
                        "0123456789ab": newcomer}, "archived": []}
    export = base / "export.json"
    export.write_text(json.dumps(doc))
    return {"argv": ["import", str(export)], "cwd": str(base / "app-0")}


def build_compaction(home: Path, base: Path) -> dict:
    """A log of 1,500 learnings, each rewritten twice since (4,500 lines), two corrupt lines."""
    rng = random.Random("compact-template")
    store = _open(home)
    project = _projects(base, 1)[0]
    store.register_project(project)
    path = store.layout.learnings(project.id)
    recs = [kit.error_record(rng, project) for _ in range(1500)]
    store.put_many(path, recs)
    with open(path, "ab") as fh:
        fh.write(b'{"id": "learn-broken", "type": \n\xff\xfe not json at all\n')
    for bump in (1, 2):
        store.put_many(path, [dict(r, frequency=r["frequency"] + bump) for r in recs])
    store.close()
    return {"compact": str(path), "cwd": str(base / "app-0")}


def _new_id() -> str:
    from learn_cli.store.record import new_id

    return new_id()


# ---------------------------------------------------------------------------------------------
# Checking a crashed store


def bad_lines(home: Path) -> set[bytes]:
    """The raw lines of a store that do not parse (the templates' deliberate garbage)."""
    from learn_cli.store import jsonl

    out = set()
    for path in kit.data_files(home):
        raw = path.read_bytes().split(b"\n")
        out.update(raw[b.line - 1] for b in jsonl.load(path).bad)
    return out


def _load_tolerant(home: Path, known_bad: set[bytes]) -> tuple[dict, int]:
    """rel -> records for every data file. Besides the template's own garbage (which must all
    still be there), a torn last line (a killed append) is the only damage allowed; counted."""
    from learn_cli.store import jsonl

    out, torn, seen_bad = {}, 0, set()
    for path in kit.data_files(home):
        lines = path.read_bytes().split(b"\n")
        last = max((i for i, line in enumerate(lines, 1) if line.strip()), default=0)
        loaded = jsonl.load(path)
        for bad in loaded.bad:
            text = lines[bad.line - 1]
            if text in known_bad:
                seen_bad.add(text)
                continue
            assert bad.line == last, f"{path}:{bad.line}: damaged line inside the file ({bad.reason})"
            torn += 1
        out[str(path.relative_to(home))] = loaded.records
    assert seen_bad == known_bad, "a line that did not parse was dropped"
    return out, torn


class State:
    """Every record of a store by id, as (file, normalized content) pairs; keys of records."""

    def __init__(self, files: dict, known_ids: set | None = None):
        known_ids = known_ids if known_ids is not None else {rid for recs in files.values() for rid in recs}
        self.ids = known_ids
        self.copies: dict[str, set] = {}
        self.keys: dict[str, set] = {}
        self.merged_into: dict[str, str] = {}
        for rel, recs in files.items():
            for rid, rec in recs.items():
                self.copies.setdefault(rid, set()).add((rel, kit.normalized(rec, known_ids)))
                self.keys.setdefault(rel, set()).add(rec.get("key"))
                for gone in rec.get("merged_from") or []:
                    self.merged_into[gone] = rid


def check_crashed(home: Path, before: State, after: State, known_bad: set[bytes]) -> dict:
    files, torn = _load_tolerant(home, known_bad)
    now = State(files, before.ids)
    for rid, copies in before.copies.items():
        if rid not in now.copies:
            assert rid not in after.copies, f"{rid} lost: in the store before and after the run, gone after the kill"
            holder = after.merged_into.get(rid)
            if holder is not None:
                assert rid in now.merged_into, f"{rid} gone without being merged into {holder}"
            continue
        allowed = copies | after.copies.get(rid, set())
        for copy in now.copies[rid]:
            assert copy in allowed, f"{rid} in a state that is neither old nor new: {copy}"
    for rid, copies in now.copies.items():
        if rid in before.copies:
            continue
        for rel, content in copies:  # a record the run creates (a new id each run): same file and key
            key = json.loads(content).get("key")
            assert key in after.keys.get(rel, set()), f"unexpected new record {rid} in {rel}"
    temps = [p.name for p in home.rglob("*.tmp")]
    assert not any(p.endswith((".jsonl", ".json")) for p in temps)
    _index_agrees(home, files)
    archived = {rid for rel, recs in files.items() if rel.endswith("archive.jsonl") for rid in recs}
    return {"torn": torn, "temps": len(temps), "new": sum(1 for r in now.copies if r not in before.copies),
            "archived": archived}


def check_nothing_lost(home: Path, before: State, after: State, known_bad: set[bytes], archived_then: set) -> None:
    """After the interrupted operation was run again (which may go further than one clean run:
    a second prune merges what the first left similar, and `--hard` deletes what the first
    archived): every learning is still there, or merged into one that is, or was meant to go."""
    files, _ = _load_tolerant(home, known_bad)
    now = State(files, before.ids)
    for rid in before.copies:
        if rid not in now.copies:
            assert rid in now.merged_into or rid not in after.copies or rid in archived_then, (
                f"{rid} lost after a re-run"
            )
    _index_agrees(home, files)


def _index_agrees(home: Path, files: dict) -> None:
    store = _open(home)
    try:
        store.refresh()
        for rel, recs in files.items():
            rows = {r[0] for r in store.index.db.execute("SELECT id FROM learnings WHERE file = ?", (rel,))}
            assert rows == set(recs), f"index of {rel} differs from the file"
    finally:
        store.close()


# ---------------------------------------------------------------------------------------------
# The campaign


def _copy(template: Path, dest: Path) -> None:
    if dest.exists():
        shutil.rmtree(dest)
    shutil.copytree(template, dest, symlinks=True)


def campaign(server: kit.Server, tmp_path: Path, name: str, build) -> dict:
    template = tmp_path / "template"
    request = build(template / "home", template / "work")
    known_bad = bad_lines(template / "home")
    before = State(_load_tolerant(template / "home", known_bad)[0])

    ref = tmp_path / "reference"
    errors = tmp_path / "child-errors.txt"
    durations = []
    for _ in range(3):  # the shortest of three clean runs: kills land inside the work on a busy machine too
        _copy(template, ref)
        server.start(_request(request, template, ref))
        status, took = server.wait()
        assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, errors.read_text() if errors.exists() else status
        durations.append(took)
    duration = min(durations)
    after = State(_load_tolerant(ref / "home", known_bad)[0], before.ids)
    assert after.copies != before.copies or name == "compaction", (
        "the operation changed nothing: no crash window to test"
    )

    rng = random.Random(f"crash-{name}")
    killed = finished = torn = temps = reruns = 0
    run = tmp_path / "run"
    for moment in range(MOMENTS):
        _copy(template, run)
        delay = rng.uniform(0, duration)
        pid = server.start(_request(request, template, run))
        time.sleep(delay)
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        status, _ = server.wait()
        if os.WIFSIGNALED(status):
            killed += 1
        else:
            assert os.WEXITSTATUS(status) == 0, errors.read_text() if errors.exists() else status
            finished += 1
        found = check_crashed(run / "home", before, after, known_bad)
        torn += found["torn"]
        temps += found["temps"]
        if moment % 5 == 0:  # the interrupted operation can simply be run again
            server.start(_request(request, template, run))
            status, _ = server.wait()
            assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, (
                errors.read_text() if errors.exists() else status
            )
            check_nothing_lost(run / "home", before, after, known_bad, archived_then=found["archived"])
            reruns += 1
        if found["temps"]:  # what a killed rewrite leaves behind can be cleaned up
            store = _open(run / "home")
            try:
                assert len(store.remove_stale_temps(older_than_s=0)) == found["temps"]
                assert store.remove_stale_temps(older_than_s=0) == []
            finally:
                store.close()
    return {"op": name, "duration_s": round(duration, 3), "moments": MOMENTS, "killed": killed,
            "finished": finished, "torn_tails": torn, "temp_files_left": temps, "reruns_ok": reruns}


def _request(request: dict, template: Path, where: Path) -> dict:
    """The template's request pointed at a copy of it."""
    def moved(value):
        return value.replace(str(template), str(where)) if isinstance(value, str) else value

    out = {k: moved(v) for k, v in request.items() if k != "argv"}
    out["home"] = str(where / "home")
    out["errlog"] = str(where.parent / "child-errors.txt")
    if "argv" in request:
        out["argv"] = [moved(a) for a in request["argv"]]
    return out


@pytest.mark.slow
@pytest.mark.parametrize("name,build", [("prune", build_prune), ("promote", build_promote),
                                        ("import", build_import), ("compaction", build_compaction)])
def test_kill_9_at_random_moments(server, tmp_path, name, build):
    result = campaign(server, tmp_path, name, build)
    print(f"\ncrash {json.dumps(result)}")
    # Enough kills land inside the work for the attack to mean something. The delays are drawn
    # over the shortest clean run, measured once: on a quiet machine a run can finish sooner
    # than that, so 13 and 17 of 50 were seen; 2 in 5 failed there without any fault.
    assert result["killed"] >= KILLS_NEEDED, result


@pytest.mark.parametrize("name,build", [("prune", build_prune), ("promote", build_promote),
                                        ("import", build_import)])
def test_kill_9_of_the_real_executable(tmp_path, name, build):
    """The installed `learn`, killed half-way through its measured run time (3 moments)."""
    template = tmp_path / "template"
    request = build(template / "home", template / "work")
    known_bad = bad_lines(template / "home")
    before = State(_load_tolerant(template / "home", known_bad)[0])
    ref = tmp_path / "reference"
    _copy(template, ref)
    exe = str(Path(sys.executable).with_name("learn"))
    env = kit.learn_env(ref / "home", tmp_path)
    started = time.monotonic()
    argv = _request(request, template, ref)["argv"]
    done = subprocess.run([exe, *argv], env=env, cwd=request["cwd"].replace(str(template), str(ref)),
                          capture_output=True, text=True, timeout=120)
    duration = time.monotonic() - started
    assert done.returncode == 0, done.stderr
    after = State(_load_tolerant(ref / "home", known_bad)[0], before.ids)
    run = tmp_path / "run"
    for fraction in (0.5, 0.75, 0.9):
        _copy(template, run)
        env = kit.learn_env(run / "home", tmp_path)
        proc = subprocess.Popen([exe, *_request(request, template, run)["argv"]], env=env,
                                cwd=request["cwd"].replace(str(template), str(run)),
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(duration * fraction)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        check_crashed(run / "home", before, after, known_bad)


def test_the_checker_catches_a_lost_or_mixed_record(tmp_path):
    """The invariants above can fail: a record dropped, or changed into a third state."""
    from learn_cli.store import jsonl

    template = tmp_path / "template"
    build_prune(template / "home", template / "work")
    known_bad = bad_lines(template / "home")
    before = State(_load_tolerant(template / "home", known_bad)[0])
    path = next(p for p in kit.data_files(template / "home") if p.name == "learnings.jsonl")
    recs = list(jsonl.load(path).records.values())
    for damage in ("drop", "mix"):
        run = tmp_path / damage
        _copy(template, run)
        target = run / path.relative_to(template)
        changed = recs[1:] if damage == "drop" else [dict(recs[0], frequency=999)] + recs[1:]
        jsonl.rewrite(target, changed)
        with pytest.raises(AssertionError, match="lost|neither old nor new"):
            check_crashed(run / "home", before, before, known_bad)
