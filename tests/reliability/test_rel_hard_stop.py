"""The hook's time limit landing anywhere (issue 12: a hook exited non-zero, events were lost).

The 256-session attack (deadline_attack.py) found hooks that printed "Exception ignored in:
<function _get_module_lock…>" with a traceback, ran on far past their deadline, and events
that were neither learned nor spooled. The cause: SIGALRM raised an exception into whatever
the process was doing. Landing inside an import, it was swallowed by the import machinery
(the hook carried on, and the next import of that module found it half initialised); landing
between writes, it left work that nobody counted. Now the alarm never raises into the work:
waits and phases stop by themselves at the deadline, and a process still running past it is
ended by a hard stop that first spools its event (importing nothing), then exits 0.

Here the deadline is drawn at random over a hook's whole run, start-up and imports included,
for real hook processes; then the same with the process frozen (SIGSTOP) past its deadline,
as a process starved of CPU is.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import reliability_kit as kit
from test_rel_attacks_deadline import counters, fresh_home, learned, log_tail, spool_lines

PAIRS = 12


def _harness(limit: float) -> str:
    """A hook process whose every deadline is `limit` s after its start, with no reserve: the
    soft stop and the hard stop fall at the same moment, anywhere in the run."""
    return ("import sys\n"
            "from learn_cli.capture import hook\n"
            "hook.HARD_EXIT = True\n"
            f"hook.DEFAULT_DEADLINE = {limit}\n"
            "hook.DEADLINES = {k: hook.DEFAULT_DEADLINE for k in hook.DEADLINES}\n"
            "hook.SPOOL_RESERVE = 0.0\n"
            "hook.HARD_GRACE = 0.0\n"
            "sys.exit(hook.main(sys.argv[1:]))\n")


def _run(home: Path, payload: dict, limit: float) -> subprocess.CompletedProcess:
    env = kit.learn_env(home, home.parent / "userhome")
    (home.parent / "userhome").mkdir(exist_ok=True)
    return subprocess.run([sys.executable, "-c", _harness(limit), "--home", str(home)], input=json.dumps(payload),
                          capture_output=True, text=True, env=env, timeout=120)


def _clean(proc: subprocess.CompletedProcess) -> None:
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr and "Exception ignored" not in proc.stderr, proc.stderr
    kit.check_hook_stdout(proc.stdout)


def test_a_deadline_anywhere_in_the_run_never_breaks_a_hook_nor_loses_its_event(tmp_path):
    home, cwd = fresh_home(tmp_path)
    rng = random.Random("hard-stop")
    limits = []
    for n in range(PAIRS):
        marker = f"stop{kit.letters(n)}q"
        for payload in (
            kit.failure(cwd, f"hs{n}", f"f{n}", f"blorp make {marker}", f"Error: blorp cannot find {marker}"),
            kit.success(cwd, f"hs{n}", f"k{n}", f"blorp make {marker} --frob"),
        ):
            # start-up, imports, opening the store, learning: a hook runs 35-150 ms here, so
            # the limits fall over all of it (0.01-0.8 s left 2 of 24 inside a 40 ms hook, then none)
            limit = rng.uniform(0.005, 0.2)
            limits.append(limit)
            _clean(_run(home, payload, limit))
    promote = kit.learn_exe(home, cwd, "promote", "--json")
    assert promote.returncode == 0, promote.stderr
    assert spool_lines(home) == []
    c = counters(home)
    assert c.get("deferred", 0) > 0, c  # the limits did stop hooks part way
    assert c.get("dropped", 0) == 0 and c.get("deferred") == c.get("replayed"), (c, log_tail(home))
    for n in range(PAIRS):
        recs = learned(home, f"stop{kit.letters(n)}q")
        assert len(recs) == 1 and recs[0]["fix_command"].endswith("--frob"), (n, recs, c)
    kit.every_file_parses(home)


def _frozen_past_its_deadline(home: Path, payload: dict, limit: float) -> tuple[float, subprocess.Popen]:
    """Start a hook, freeze it (SIGSTOP) until well past its deadline, let it go: the seconds
    it then takes to end by itself (a starved process gets the CPU back long after its alarm).

    Not counted: the time it then waits for a CPU, nor the time this process waits for one
    before it sees the end (a loaded machine's, which no hook can shorten); counted: what it
    runs and every wait of its own (a lock, a sleep, the disk)."""
    env = kit.learn_env(home, home.parent / "userhome")
    (home.parent / "userhome").mkdir(exist_ok=True)
    harness = _harness(limit).replace("hook.SPOOL_RESERVE = 0.0\n", f"hook.SPOOL_RESERVE = {limit / 4}\n")
    proc = subprocess.Popen([sys.executable, "-c", harness, "--home", str(home)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    proc.stdin.write(json.dumps(payload).encode())
    proc.stdin.close()
    time.sleep(0.05)  # inside its start-up or its work
    os.kill(proc.pid, signal.SIGSTOP)
    time.sleep(limit + 1.0)
    hook_stat, own_stat = f"/proc/{proc.pid}/schedstat", "/proc/thread-self/schedstat"
    hook_queued, own_queued = kit.cpu_wait(hook_stat), kit.cpu_wait(own_stat)
    resumed = time.monotonic()
    os.kill(proc.pid, signal.SIGCONT)
    os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOWAIT)  # ended, not reaped: its schedstat is still there
    took = time.monotonic() - resumed
    took -= (kit.cpu_wait(hook_stat) - hook_queued) + (kit.cpu_wait(own_stat) - own_queued)
    proc.wait(timeout=60)
    return took, proc


def test_a_hook_starved_past_its_deadline_ends_at_once_and_keeps_its_event(tmp_path):
    home, cwd = fresh_home(tmp_path)
    limit = 1.0
    after = []
    for n in range(3):
        marker = f"starve{kit.letters(n)}q"
        for payload in (
            kit.failure(cwd, f"sv{n}", f"f{n}", f"blorp make {marker}", f"Error: blorp cannot find {marker}"),
            kit.success(cwd, f"sv{n}", f"k{n}", f"blorp make {marker} --frob"),
            {**kit.session_end(cwd, f"sv{n}"), "hook_event_name": "Stop"},
        ):
            took, proc = _frozen_past_its_deadline(home, payload, limit)
            err = proc.stderr.read().decode()
            _clean(subprocess.CompletedProcess([], proc.returncode, proc.stdout.read().decode(), err))
            after.append(took)
    # the target is 0.5 s; the room above it is for a slow CI machine's CPU
    assert max(after) <= 1.5, after
    assert kit.learn_exe(home, cwd, "promote", "--json").returncode == 0
    c = counters(home)
    assert c.get("dropped", 0) == 0 and c.get("deferred") == c.get("replayed"), (c, log_tail(home))
    for n in range(3):
        recs = learned(home, f"starve{kit.letters(n)}q")
        assert len(recs) == 1 and recs[0]["fix_command"].endswith("--frob"), (n, recs, c)


def test_a_hook_starved_after_reading_its_payload_keeps_its_event(tmp_path):
    """The hard stop falls after the payload was read and before its event is known (a starved
    process parses and imports slowly: 3 s here, a sleep standing for the CPU it waits for).
    Its retries for the agent's payload (2 s: stdin may never close) are not the bound then:
    it waits for the event and spools it. Before, the hook gave up and the event was lost."""
    home, cwd = fresh_home(tmp_path)
    slow = _harness(0.5).replace("sys.exit(", "import time\nparse = hook._parse\n"
                                 "hook._parse = lambda data: time.sleep(3) or parse(data)\nsys.exit(")
    env = kit.learn_env(home, home.parent / "userhome")
    (home.parent / "userhome").mkdir(exist_ok=True)
    for payload in (kit.failure(cwd, "slow", "f1", "blorp make slowq", "Error: blorp cannot find slowq"),
                    kit.success(cwd, "slow", "k1", "blorp make slowq --frob")):
        proc = subprocess.run([sys.executable, "-c", slow, "--home", str(home)], input=json.dumps(payload),
                              capture_output=True, text=True, env=env, timeout=120)
        _clean(proc)
    assert kit.learn_exe(home, cwd, "promote", "--json").returncode == 0
    c = counters(home)
    assert c.get("deferred") == 2 and c.get("replayed") == 2 and not c.get("dropped"), c
    recs = learned(home, "slowq")
    assert len(recs) == 1 and recs[0]["fix_command"].endswith("--frob"), (recs, c)


def test_in_process_the_time_limit_stops_stuck_work(tmp_path, monkeypatch):
    """Where the hook is not its own process (tests, `learn ingest`), the alarm raises into the
    work instead of ending the process: a learner stuck for 30 s is stopped at the time limit,
    with one warning on stderr and nothing on stdout."""
    from learn_cli.capture import hook, learner

    def stuck(*_args, **_kw):
        time.sleep(30)

    monkeypatch.setattr(learner, "on_failure", stuck)
    monkeypatch.setattr(hook, "DEFAULT_DEADLINE", 0.3)
    payload = kit.failure(tmp_path, "s-stuck", "toolu_stuck", "pytest tests", "bash: pytest: command not found", 127)
    queued, started = kit.cpu_wait(), time.monotonic()
    code, out, err = kit.run_hook(payload, ["--home", str(tmp_path / "home")])
    # its own time: a loaded machine's queue for the CPU is not a wait of the hook's
    assert time.monotonic() - started - (kit.cpu_wait() - queued) < 3
    assert code == 0 and out == "" and "time limit" in err


def test_a_hard_stop_while_its_own_replay_takes_the_live_file_still_spools_its_event(tmp_path, monkeypatch):
    """A replay renames the session's live spool file under an exclusive flock. A hard stop
    landing there spools the hook's event into that same file: a flock is per open file, so the
    append waited for a lock its own process held, gave up, and the event was lost (CI saw
    `dropped` 1 in test_a_hook_starved_past_its_deadline_…). The stop now waits for the rename."""
    import signal as signals

    from learn_cli.store import deadline
    from learn_cli.store import spool as files

    monkeypatch.setattr(files, "SHARE_WAIT_S", 0.2)
    queue = files.SpoolFiles(tmp_path / "home")
    queue.append("s1", {"n": 1})
    outcome = []

    def hard_stop(_signum, _frame):
        if deadline.must_wait():
            return  # as the hook's handler: raised again when the held block ends
        try:
            queue.append("s1", {"n": 2})
            outcome.append("spooled")
        except TimeoutError:
            outcome.append("lost")

    rename = os.rename

    def rename_as_the_alarm_falls(source, target):
        signals.raise_signal(signals.SIGALRM)
        rename(source, target)

    previous = signals.signal(signals.SIGALRM, hard_stop)
    try:
        monkeypatch.setattr(os, "rename", rename_as_the_alarm_falls)
        queue.take_live("s1")
    finally:
        monkeypatch.setattr(os, "rename", rename)
        signals.signal(signals.SIGALRM, previous)
    assert outcome == ["spooled"]
    lines = [line for p in (tmp_path / "home" / "spool").iterdir() if p.suffix in (".jsonl", ".batch")
             for line in p.read_text().splitlines() if line.strip()]
    assert sorted(lines) == ['{"n":1}', '{"n":2}']
