"""Attacks on the hook's deadline (issue 12, "holding the agent and losing events").

Each test reproduces a finding of an independent attack on the capture path:
- SQLite waits ignored the hook's deadline: with another process holding the index's write lock,
  one `learn capture` held the agent 30 s (busy_timeout), and learn.log said it had not;
- hooks beside housekeeping and a busy index lost events (stopped at the deadline, dropped),
  and `learn doctor` still said "healthy" (the log writes each kind of warning once an hour);
- a read-only home lost the session-start digest and the known-fix answer (the stats lock file
  was opened read-write and the error escaped).
Now every wait of a hook ends at its deadline, an event that could not be learned in time goes
to the spool and is learned later, exactly once, and counters say what was deferred, learned
later and dropped. The large figures (256 hooks, housekeeping looping) come from
`deadline_attack.py` in this folder; these runs are small enough for CI.

Hooks run as real processes. Most use `learn_cli.capture.hook.main` with shorter deadlines
(`HOOK` below: the same code, its DEADLINES constants lowered) so a test waits seconds, not
the 8 s a real tool event gets; one call goes through the installed `learn` unchanged.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest

import reliability_kit as kit

LEARN = str(Path(sys.executable).with_name("learn"))
SHORT = 2.0  # the deadline of every event in HOOK
# How far past its deadline a hook process may end (start-up and exit included; its waits for a
# CPU not counted). The target is 0.5 s (RELIABILITY.md, measured by deadline_attack.py); tests
# leave room for a slow CI machine, where the old code overshot by 28 s.
TOLERANCE = 1.5
HOOK = ("import sys\n"
        "from learn_cli.capture import hook\n"
        "hook.HARD_EXIT = True\n"  # as in the `learn` executable
        f"hook.DEFAULT_DEADLINE = {SHORT}\n"
        "hook.DEADLINES = {k: min(v, hook.DEFAULT_DEADLINE) for k, v in hook.DEADLINES.items()}\n"
        "sys.exit(hook.main(sys.argv[1:]))\n")
LOCKER = ("import sqlite3, sys, time\n"
          "db = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=60)\n"
          "db.execute('BEGIN IMMEDIATE')\n"
          "print('locked', flush=True)\n"
          "sys.stdin.read()\n")


def hook(
    home: Path, payload: dict, *, real: bool = False, timeout: float = 60
) -> tuple[float, subprocess.CompletedProcess]:
    """(seconds the hook held the agent by itself, the process) for one hook call: its time from
    start to end less its waits for a CPU (kit.run_timed). A loaded machine's queue is not a
    wait of the hook's; its locks, sleeps and disk are, and each must end at its deadline."""
    cmd = [LEARN, "capture"] if real else [sys.executable, "-c", HOOK]
    env = kit.learn_env(home, home.parent / "userhome")
    (home.parent / "userhome").mkdir(exist_ok=True)
    timed = kit.run_timed(cmd + ["--home", str(home)], json.dumps(payload), env, timeout)
    return timed.own, timed.proc


class IndexLocked:
    """Another process holding `BEGIN IMMEDIATE` on the index (the write lock) until closed."""

    def __init__(self, home: Path):
        self.proc = subprocess.Popen([sys.executable, "-c", LOCKER, str(home / "global" / "index.db")],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert self.proc.stdout.readline().strip() == "locked"

    def release(self) -> None:
        if self.proc.poll() is None:
            self.proc.stdin.close()
            self.proc.wait(timeout=30)

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.release()


def counters(home: Path) -> dict:
    from learn_cli.store import analytics

    return analytics.window(analytics.read(home / "analytics" / "stats.json"), 7)


def log_tail(home: Path) -> str:
    """The end of learn.log, for an assertion's message: a loss it counted says there why."""
    log = home / "learn.log"
    return log.read_text(errors="replace")[-3000:] if log.exists() else "(no learn.log)"


def spool_lines(home: Path) -> list[str]:
    folder = home / "spool"
    if not folder.is_dir():
        return []
    files = sorted([*folder.glob("*.jsonl"), *folder.glob("*.batch")])
    return [line for p in files for line in p.read_text().splitlines() if line.strip()]


def learned(home: Path, marker: str) -> list[dict]:
    return [rec for copies in kit.records_by_id(home).values() for _, rec in copies if marker in str(rec.get("error"))]


def fresh_home(tmp_path: Path) -> tuple[Path, Path]:
    """A store with its index and the project registered (no hook: none may be deferred)."""
    from learn_cli.store.project import identify

    home, cwd = tmp_path / "home", kit.project_dir(tmp_path / "work", "app")
    store = _store(home)
    try:
        store.register_project(identify(cwd))
        store.index.note_project(*identify(cwd)[:3], None)
    finally:
        store.close()
    return home, cwd


# ---------------------------------------------------------------------------------------------
# 1. The index held by another process


def test_a_locked_index_holds_no_hook_past_its_deadline_and_loses_nothing(tmp_path):
    home, cwd = fresh_home(tmp_path)
    with IndexLocked(home):
        waits = []
        for _n, payload in enumerate([kit.failure(cwd, "s1", "f1", "zorp build", "Error: zorp lost the glarb"),
                                     kit.success(cwd, "s1", "k1", "zorp build --glarb")]):
            waited, proc = hook(home, payload, timeout=SHORT + 10)
            waits.append(waited)
            assert proc.returncode == 0 and proc.stdout == "", proc.stderr
            assert "spool" in proc.stderr, proc.stderr  # says what happened: deferred, not lost
        assert max(waits) <= SHORT + TOLERANCE, waits
        assert learned(home, "glarb") == []
        assert len(spool_lines(home)) == 2
    # The session's next hook learns the pair first, in order (or, on a loaded machine where its
    # second for the spool is not enough, spools its own event behind them); `learn promote`
    # learns whatever is left. Exactly once either way.
    waited, proc = hook(home, kit.prompt(cwd, "s1", "Don't use npm here, use pnpm instead."), real=True)
    assert proc.returncode == 0 and proc.stdout == ""
    assert kit.learn_exe(home, cwd, "promote", "--json").returncode == 0
    recs = learned(home, "glarb")
    assert len(recs) == 1 and recs[0]["fix_command"] == "zorp build --glarb", recs
    assert spool_lines(home) == []
    c = counters(home)
    assert c.get("deferred") in (2, 3) and c.get("replayed") == c.get("deferred") and not c.get("dropped"), c
    assert c.get("corrections") == 1, c
    log = (home / "learn.log").read_text()
    assert "not held up" not in log and "spool" in log


def test_the_real_executable_with_its_real_deadline(tmp_path):
    """`learn capture` as installed: a failure with the index locked ends within its 8 s."""
    from learn_cli.capture.hook import DEFAULT_DEADLINE

    home, cwd = fresh_home(tmp_path)
    with IndexLocked(home):
        waited, proc = hook(home, kit.failure(cwd, "s1", "f1", "zorp build", "Error: zorp lost the glarb"),
                            real=True, timeout=DEFAULT_DEADLINE + 30)
    assert proc.returncode == 0 and proc.stdout == ""
    assert waited <= DEFAULT_DEADLINE + TOLERANCE, waited
    assert len(spool_lines(home)) == 1 and counters(home).get("deferred") == 1


# ---------------------------------------------------------------------------------------------
# 2. Many hooks, housekeeping and a busy index at once


SESSIONS = 6
PAIRS = 4


def _session(home: Path, cwd: Path, index: int, out: dict) -> None:
    worst = (0.0, "", "")
    for n in range(PAIRS):
        marker = f"mark{kit.letters(index)}q{kit.letters(n)}"
        for payload in (kit.failure(cwd, f"conc-{index}", f"f{index}-{n}", f"blorp make {marker}",
                                    f"Error: blorp cannot find {marker}"),
                        kit.success(cwd, f"conc-{index}", f"k{index}-{n}", f"blorp make {marker} --frob")):
            waited, proc = hook(home, payload, timeout=SHORT + 30)
            worst = max(worst, (waited, payload["hook_event_name"], proc.stderr[-300:]))
            assert proc.returncode == 0, proc.stderr
            kit.check_hook_stdout(proc.stdout)
    out[index] = worst


def _housekeeping(home: Path, cwd: Path, stop: threading.Event, runs: list) -> None:
    """An index lock held for two deadlines, then prune, promote and export, round and round."""
    n = 0
    while not stop.is_set():
        if n % 4 == 0:
            with IndexLocked(home):
                stop.wait(SHORT * 2)
            runs.append(("lock", 0, ""))
        else:
            args = [("prune", "--quiet"), ("promote", "--json"), ("export", "-o", str(home.parent / "x.json"))][
                n % 4 - 1
            ]
            proc = kit.learn_exe(home, cwd, *args)
            runs.append((args[0], proc.returncode, proc.stderr[-500:]))
        n += 1


def test_hooks_beside_housekeeping_and_a_busy_index_lose_no_event(tmp_path):
    home, cwd = fresh_home(tmp_path)
    stop, runs, worst = threading.Event(), [], {}
    keeper = threading.Thread(target=_housekeeping, args=(home, cwd, stop, runs), daemon=True)
    keeper.start()
    sessions = [threading.Thread(target=_session, args=(home, cwd, i, worst)) for i in range(SESSIONS)]
    for t in sessions:
        t.start()
    for t in sessions:
        t.join(timeout=600)
    stop.set()
    keeper.join(timeout=120)
    assert len(worst) == SESSIONS
    assert [r for r in runs if r[1] != 0 or "Traceback" in r[2]] == []
    assert {r[0] for r in runs} >= {"prune", "lock"}, runs
    assert max(worst.values())[0] <= SHORT + TOLERANCE, worst

    promote = kit.learn_exe(home, cwd, "promote", "--json")  # learns whatever is still spooled
    assert promote.returncode == 0, promote.stderr
    assert spool_lines(home) == []
    kit.every_file_parses(home)
    for index in range(SESSIONS):
        for n in range(PAIRS):
            marker = f"mark{kit.letters(index)}q{kit.letters(n)}"
            recs = learned(home, marker)
            assert len(recs) == 1 and recs[0]["fix_command"].endswith("--frob"), (
                marker, recs, counters(home), (home / "sessions" / f"conc-{index}.jsonl").read_text()[-3000:],
                (home / "learn.log").read_text()[-2000:])
    c = counters(home)
    assert c.get("dropped", 0) == 0 and c.get("deferred", 0) == c.get("replayed", 0), c
    assert c.get("deferred", 0) > 0, c  # the busy index did make hooks defer: the spool was used
    assert c.get("successes") == SESSIONS * PAIRS and c.get("failures") == SESSIONS * PAIRS, c


# ---------------------------------------------------------------------------------------------
# 3. Doctor and stats tell the truth


def test_doctor_and_stats_report_dropped_events(tmp_path):
    home, cwd = fresh_home(tmp_path)
    (home / "spool").mkdir(exist_ok=True)
    (home / "spool" / "s1.jsonl").write_text('{"this is not": "an event"\n')  # cut short: cannot be learned
    with IndexLocked(home):
        for n in range(2):
            assert (
                hook(home, kit.failure(cwd, "s1", f"f{n}", "zorp build", "Error: zorp lost the glarb"))[1].returncode
                == 0
            )
    doctor = kit.learn_exe(home, cwd, "doctor")
    assert doctor.returncode == 1, doctor.stdout
    assert "1 event dropped" in doctor.stdout and "healthy" not in doctor.stdout.splitlines()[-1], doctor.stdout
    doc = json.loads(kit.learn_exe(home, cwd, "stats", "--json").stdout)["capture"]
    deferred = doc["deferred"]  # 2, or 3 when a loaded machine made the warm-up late too
    assert deferred >= 2 and (doc["replayed"], doc["dropped"], doc["spooled"]) == (deferred, 1, 0), doc
    assert f"{deferred} deferred, {deferred} learned later, 1 dropped" in doctor.stdout
    text = kit.learn_exe(home, cwd, "stats").stdout
    assert f"{deferred} deferred, {deferred} learned later, 1 dropped" in text, text


def test_an_event_that_cannot_be_spooled_is_counted_as_dropped(tmp_path):
    home, cwd = fresh_home(tmp_path)
    (home / "spool").write_text("a file where the spool folder should be")
    with IndexLocked(home):
        waited, proc = hook(home, kit.failure(cwd, "s1", "f1", "zorp build", "Error: zorp lost the glarb"))
    assert proc.returncode == 0 and waited <= SHORT + TOLERANCE
    assert "lost" in proc.stderr
    assert counters(home).get("dropped") == 1
    doctor = kit.learn_exe(home, cwd, "doctor", "--json")
    assert json.loads(doctor.stdout)["healthy"] is False


# An alarm the kernel delivered just before a deadline.held() block began is run by Python
# inside the block. It is simulated here by calling the alarm's handler where spooling begins,
# in the real hook code otherwise (HARD_EXIT, as in the `learn` executable). Found by
# deadline_attack.py: 1 event in ~1,500 vanished, neither learned, spooled nor counted.
ALARM_INSIDE_SPOOLING = ("import json, sys\n"
                         "from learn_cli.capture import hook\n"
                         "from learn_cli.store import deadline\n"
                         "hook.HARD_EXIT = True\n"
                         "home, payload, way = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3]\n"
                         "event = hook._to_event('claude-code', payload)\n"
                         "spool = hook._spool\n"
                         "def alarm_then_spool(*args):\n"
                         "    sig = deadline.signals()\n"
                         "    sig.getsignal(sig.SIGALRM)(sig.SIGALRM, None)\n"
                         "    spool(*args)\n"
                         "hook._spool = alarm_then_spool\n"
                         "hook._arm(60)\n"
                         "hook._pending.update(stage='event', home=home, event=event, project=None, limit=8.0)\n"
                         "hook._ready_to_spool()\n"
                         "if way == 'hard stop':\n"
                         "    hook._hard_stop()\n"
                         "else:\n"
                         "    hook._defer(home, event, None, 'behind earlier events of its session')\n"
                         "print('not stopped')\n")


@pytest.mark.parametrize("way", ["hard stop", "the hook's own deferral"])
def test_an_alarm_that_lands_inside_spooling_waits_for_the_event_to_be_spooled(tmp_path, way):
    home, cwd = fresh_home(tmp_path)
    payload = kit.failure(cwd, "s1", "f1", "zorp build", "Error: zorp lost the glarb")
    proc = subprocess.run([sys.executable, "-c", ALARM_INSIDE_SPOOLING, str(home), json.dumps(payload), way],
                          capture_output=True, text=True, timeout=60, env=kit.learn_env(home, tmp_path / "userhome"))
    assert proc.returncode == 0, proc.stderr
    assert "not stopped" not in proc.stdout  # the put-off alarm did end the process, once the event was safe
    from learn_cli.capture.spool import Spool

    assert sum(Spool(home).waiting().values()) == 1
    assert counters(home).get("deferred") == 1


# ---------------------------------------------------------------------------------------------
# 4. The spool itself: exactly once, private, redacted, no torn line


def _store(home: Path):
    from learn_cli.store.api import Store

    return Store(home, warn_stderr=False)


def test_replay_is_exactly_once_even_when_a_replayer_dies_before_noting_its_work(tmp_path):
    from learn_cli.agents import claude
    from learn_cli.capture import spool
    from learn_cli.store.project import identify

    home, cwd = fresh_home(tmp_path)
    queue = spool.Spool(home)
    project = identify(cwd)
    secret = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    for payload in (kit.failure(cwd, "s1", "f1", "zorp push", f"Error: zorp lost the glarb (token {secret})"),
                    kit.success(cwd, "s1", "k1", "zorp push --glarb")):
        queue.defer(claude.to_event(payload), project, "test")
    assert secret not in (home / "spool" / "s1.jsonl").read_text()
    assert stat.S_IMODE(os.stat(home / "spool").st_mode) == 0o700
    assert stat.S_IMODE(os.stat(home / "spool" / "s1.jsonl").st_mode) == 0o600

    store = _store(home)
    try:
        with queue.replaying("s1") as mine:
            assert mine
            queue.take_live("s1")
        (batch,) = queue.batches("s1")
        saved = batch.read_bytes()
        result = queue.replay(store)
        assert (result.replayed, result.dropped, queue.sessions()) == (2, 0, set())
        batch.write_bytes(saved)  # as if the replayer died after learning, before noting it
        result = queue.replay(store)
        assert (result.replayed, queue.sessions()) == (2, set())
    finally:
        store.close()
    recs = learned(home, "glarb")
    assert len(recs) == 1 and len(recs[0]["evidence"]) == 1 and recs[0]["frequency"] == 1, recs
    assert queue.waiting() == {}


def test_a_replayer_killed_between_removing_a_batch_and_its_notes_leaves_the_spool_empty(tmp_path):
    """Found by the 64-process concurrency test on a loaded machine: a hook's replayer ended
    (hard stop, kill -9) after removing a finished batch and before removing its progress
    notes left `<session>.<ns>.done` in the spool for good. The next command removes it."""
    from learn_cli.agents import claude
    from learn_cli.capture import spool
    from learn_cli.store import spool as files
    from learn_cli.store.project import identify

    home, cwd = fresh_home(tmp_path)
    queue = spool.Spool(home)
    queue.defer(claude.to_event(kit.failure(cwd, "s1", "f1", "zorp push", "Error: zorp lost the glarb")),
                identify(cwd), "test")
    with queue.replaying("s1") as mine:
        assert mine
        queue.take_live("s1")
    (batch,) = queue.batches("s1")
    files.note(batch, "line:0", "done")
    batch.unlink()  # as a replayer killed between the two unlinks of remove() leaves it
    assert [p.suffix for p in (home / "spool").iterdir() if p.suffix != ".lock"] == [".done"]
    store = _store(home)
    try:
        result = spool.finish(store)
    finally:
        store.close()
    assert (result.replayed, result.dropped, result.waiting) == (0, 0, {})
    assert list((home / "spool").iterdir()) == []


def _appender(home: str, n: int) -> None:
    from learn_cli.store.spool import SpoolFiles

    files = SpoolFiles(home)
    for i in range(n):
        files.append("s1", {"id": f"{os.getpid()}-{i}", "pad": "x" * 3000})


def test_appends_racing_a_replayer_taking_the_file_lose_no_line(tmp_path):
    import multiprocessing

    from learn_cli.store import spool as files

    home = tmp_path / "home"
    home.mkdir()
    queue = files.SpoolFiles(home)
    ctx = multiprocessing.get_context("fork")
    procs = [ctx.Process(target=_appender, args=(str(home), 150)) for _ in range(6)]
    for p in procs:
        p.start()
    while any(p.is_alive() for p in procs):
        with queue.replaying("s1") as mine:
            assert mine
            queue.take_live("s1")
    for p in procs:
        p.join()
        assert p.exitcode == 0
    keys = [key for batch in [*queue.batches("s1"), queue.dir / "s1.jsonl"] for key, item in files.items(batch)]
    assert sum(queue.waiting().values()) == 6 * 150
    assert len(keys) == len(set(keys)) == 6 * 150
    assert not any(k.startswith("line:") for k in keys)  # no torn or glued line


# ---------------------------------------------------------------------------------------------
# 5. A read-only home


@pytest.fixture
def read_only_home(tmp_path):
    """A seeded home with a known fix, then made read-only (reliability_kit.read_only)."""
    home, cwd = tmp_path / "home", kit.project_dir(tmp_path / "work", "app")
    for s in range(2):
        for payload in (kit.failure(cwd, f"s{s}", f"f{s}", "zorp build", "Error: zorp lost the glarb"),
                        kit.success(cwd, f"s{s}", f"k{s}", "zorp build --glarb")):
            assert hook(home, payload)[1].returncode == 0
    assert learned(home, "glarb")[0]["status"] == "active"
    with kit.read_only(home, tmp_path) as user:
        yield home, cwd, kit.as_user(user)


def test_a_read_only_home_still_gives_the_digest_and_the_known_fix(read_only_home):
    home, cwd, as_user = read_only_home
    before = kit.tree_bytes(home)
    env = kit.learn_env(home, home.parent / "userhome")

    def run(*args, payload):
        return subprocess.run([*as_user, LEARN, *args], input=json.dumps(payload), capture_output=True, text=True,
                              env=env, cwd=cwd, timeout=60)

    start = run("context", "--hook", payload=kit.session_end(cwd, "s9") | {"hook_event_name": "SessionStart"})
    doc = kit.check_hook_stdout(start.stdout)
    assert doc and "zorp build --glarb" in doc["hookSpecificOutput"]["additionalContext"], (start.stdout, start.stderr)
    fail = run("capture", payload=kit.failure(cwd, "s9", "f9", "zorp build", "Error: zorp lost the glarb"))
    doc = kit.check_hook_stdout(fail.stdout)
    assert doc and "zorp build --glarb" in doc["hookSpecificOutput"]["additionalContext"], (fail.stdout, fail.stderr)
    assert "Traceback" not in start.stderr + fail.stderr
    assert kit.tree_bytes(home) == before


# ---------------------------------------------------------------------------------------------
# 6. The spool costs nothing when unused


def test_an_unused_spool_is_never_created(tmp_path):
    home, cwd = fresh_home(tmp_path)
    for payload in (kit.failure(cwd, "s1", "f1", "zorp build", "Error: zorp lost the glarb"),
                    kit.success(cwd, "s1", "k1", "zorp build --glarb")):
        assert hook(home, payload)[1].returncode == 0
    assert not (home / "spool").exists()
