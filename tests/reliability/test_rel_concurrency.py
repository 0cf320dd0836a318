"""Concurrency: 64 capture processes (16 in `make test`) × 100 hook calls into one project and the global files,
while `learn prune` and `learn promote` run again and again beside them. Afterwards every
record is present exactly once, every counter adds up (no lost update), every file parses and
the index agrees with the files.

On a loaded machine some calls run out of time: their events go to the spool and are learned
by a later hook or by the final `learn promote`. So an event counts as learned either way
(done at once, or spooled then replayed), and none may be lost: the spool ends empty, and its
counters say deferred == replayed, dropped == 0."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import pytest

import reliability_kit as kit

WORKERS = kit.volume(64, 16)  # capture processes
CALLS_PER_WORKER = 100
SHARED = 5
SHARED_PAIRS_PER_WORKER = 25
SEED_PROJECTS = 3


def _learn_exe() -> str:
    return str(Path(sys.executable).with_name("learn"))


def _shared_specs(rng: random.Random) -> list[dict]:
    specs = []
    for _ in range(SHARED):
        prog = kit.word(rng, 2)
        command = f"{prog} deploy {kit.word(rng)}"
        specs.append({"command": command, "fix": f"{command} --{kit.word(rng)}",
                      "error": f"Error: the {kit.word(rng)} {kit.words(rng, 5)} is missing"})
    return specs


def _seed_globals(home: Path, base: Path, specs: list[dict]) -> None:
    """Learn each shared pair in three projects (two sessions each), then promote: the five
    learnings become global, the known fix every worker will be offered and follow."""
    from learn_cli.engine.promotion import run_promotion
    from learn_cli.store.api import Store

    for p in range(SEED_PROJECTS):
        cwd = kit.project_dir(base, f"seed-{p}")
        for s in range(2):
            sid = f"seed-{p}-{s}"
            for k, spec in enumerate(specs):
                for payload in (kit.failure(cwd, sid, f"seed{p}{s}{k}f", spec["command"], spec["error"]),
                                kit.success(cwd, sid, f"seed{p}{s}{k}s", spec["fix"])):
                    assert kit.run_hook(payload, ["--home", str(home)])[0] == 0
    store = Store(home, warn_stderr=False)
    try:
        report = run_promotion(store)
    finally:
        store.close()
    assert len(report.promoted) == SHARED, report.as_json()
    globals_ = kit.load_all(home)["global/errors.jsonl"]
    for spec in specs:
        found = [r for r in globals_.values() if r.get("fix_command") == spec["fix"]]
        assert len(found) == 1 and found[0]["status"] == "global", (spec, found)
        spec.update(key=found[0]["key"], global_id=found[0]["id"], frequency0=found[0].get("frequency", 1),
                    helped0=found[0].get("helped", 0))


class _Housekeeping(threading.Thread):
    """`learn prune` and `learn promote`, one after the other, until told to stop."""

    def __init__(self, env: dict, cwd: Path):
        super().__init__(daemon=True)
        self.env, self.cwd = env, cwd
        self.stop = threading.Event()
        self.runs: list[tuple[str, int, str]] = []

    def run(self) -> None:
        commands = (["prune", "--quiet"], ["promote", "--json"])
        n = 0
        while not self.stop.is_set():
            args = commands[n % 2]
            proc = subprocess.run([_learn_exe(), *args], env=self.env, cwd=self.cwd, capture_output=True,
                                  text=True, timeout=300)
            self.runs.append((args[0], proc.returncode, proc.stderr[-2000:]))
            n += 1


@pytest.mark.slow
def test_processes_x_100_captures_beside_prune_and_promote(tmp_path):
    rng = random.Random(20261129)
    home, base = tmp_path / "home", tmp_path / "work"
    specs = _shared_specs(rng)
    _seed_globals(home, base, specs)
    project = kit.project_dir(base, "shared-app")
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"home": str(home), "project": str(project), "shared": specs}))
    env = kit.learn_env(home, tmp_path / "userhome")
    (tmp_path / "userhome").mkdir()
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(kit.ROOT), env.get("PYTHONPATH")]))

    started = time.monotonic()
    housekeeping = _Housekeeping(env, project)
    housekeeping.start()
    worker = Path(__file__).with_name("concurrency_worker.py")
    procs = [subprocess.Popen([sys.executable, str(worker), str(plan), str(i)], env=env, cwd=project,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for i in range(WORKERS)]
    results = []
    for proc in procs:
        out, err = proc.communicate(timeout=900)
        assert proc.returncode == 0, err[-3000:]
        results.append(json.loads(out))
    housekeeping.stop.set()
    housekeeping.join(timeout=300)
    elapsed = time.monotonic() - started
    final = subprocess.run([_learn_exe(), "promote", "--json"], env=env, cwd=project, capture_output=True, text=True,
                           timeout=600)  # learns what hooks spooled and nobody replayed yet
    assert final.returncode == 0, final.stderr[-2000:]

    # Every call exited 0 with valid-or-empty stdout; prune and promote ran beside them.
    assert sum(r["calls"] for r in results) == WORKERS * CALLS_PER_WORKER
    assert [r for r in results if r["bad_exit"] or r["bad_stdout"]] == []
    kinds = {name for name, _, _ in housekeeping.runs}
    assert kinds == {"prune", "promote"}, housekeeping.runs
    assert [r for r in housekeeping.runs if r[1] != 0 or "Traceback" in r[2]] == []

    # Every file parses; no record id lives in two files.
    kit.every_file_parses(home)
    by_id = kit.records_by_id(home)
    assert {rid: [f for f, _ in copies] for rid, copies in by_id.items() if len(copies) > 1} == {}
    records = [rec for copies in by_id.values() for _, rec in copies]

    # Each unique failure/retry pair: exactly one learning.
    markers = [m for r in results for m in r["markers"]]
    assert len(set(markers)) == len(markers) == WORKERS * 24
    wanted = set(markers)
    hits = Counter(t for rec in records for t in set(str(rec.get("error") or "").split()) if t in wanted)
    assert {m: hits.get(m, 0) for m in markers if hits.get(m, 0) != 1} == {}

    # Each correction: exactly one preference learning.
    for tool in (t for r in results for t in r["corrections"]):
        owners = [r for r in records if r.get("type") == "preference" and tool in f"{r.get('context')} {r.get('fix')}"]
        assert len(owners) == 1, (tool, owners)

    # Shared errors: one learning per key in the project; no sighting or credit lost.
    pid = _pid(project)
    total = WORKERS * SHARED_PAIRS_PER_WORKER // SHARED
    for spec in specs:
        mine = [r for r in records if r.get("key") == spec["key"] and pid in (r.get("projects") or [])
                and r.get("status") != "global"]
        assert len(mine) == 1, (spec["key"], mine)
        own = mine[0]
        glob = [r for r in records if r["id"] == spec["global_id"]]
        assert len(glob) == 1 and glob[0]["status"] == "global"
        # A sighting whose suggestion was the global learning credits it (noted in its `credits`
        # by session and event); the others credit this project's own learning. `learn promote`
        # may fold the project's learning into the global one meanwhile (helped = the larger of
        # the two, by design), so the global count is checked through its credits.
        credited_global = sum(1 for c in glob[0].get("credits") or [] if str(c.get("session")).startswith("conc-"))
        assert own["frequency"] == total, (own["frequency"], total)
        assert own.get("helped", 0) + credited_global == total, (own.get("helped"), credited_global)
        assert glob[0]["helped"] >= spec["helped0"] + credited_global
        assert glob[0]["frequency"] >= spec["frequency0"] + credited_global

    # Counters, as `learn stats` reads them (stats.json plus the notes that hooks short of time
    # left for the next bump to fold): one event per tool call, none lost to a concurrent
    # read-modify-write. Every deferred event was replayed and none dropped. (A hook stopped by
    # its deadline between writing its event into the session buffer and counting it leaves
    # the count to nobody: the replay finds the event already there. So `events` may fall
    # short by at most the deferred events; what was learned, checked above, is exact.)
    from learn_cli.store import analytics

    stats_path = home / "analytics" / "stats.json"
    totals = analytics.read(stats_path)["totals"]
    assert totals.get("dropped", 0) == 0 and totals.get("deferred", 0) == totals.get("replayed", 0), totals
    assert not list((home / "spool").glob("*"))  # every spooled event learned, its files gone
    sent = WORKERS * (CALLS_PER_WORKER - 2) + SEED_PROJECTS * 2 * SHARED * 2
    assert sent - totals.get("deferred", 0) <= totals["events"] <= sent, (totals, sent)
    assert totals["corrections"] == WORKERS
    analytics.bump(stats_path, {})  # the next bump, with no deadline, folds every note left
    assert not list((home / "analytics").glob("pending/*.json"))
    assert json.loads(stats_path.read_text())["totals"] == totals

    # The index agrees with the files.
    _index_matches_files(home)
    warned = Counter(f"{kind}: {text[:60]}" for r in results for kind, text in r["warnings"])
    print(f"\nconcurrency: {WORKERS} processes x {CALLS_PER_WORKER} calls, "
          f"{sum(1 for r in housekeeping.runs if r[0] == 'prune')} prune and "
          f"{sum(1 for r in housekeeping.runs if r[0] == 'promote')} promote runs, {elapsed:.1f}s; "
          f"slowest call {max(r['slowest'] for r in results):.2f}s, "
          f"median {sorted(r['median'] for r in results)[WORKERS // 2] * 1000:.0f} ms; "
          f"{totals.get('deferred', 0)} events deferred and replayed; warnings {dict(warned)}")


def _pid(path: Path) -> str:
    from learn_cli.store.project import identify

    return identify(path).id


def _index_matches_files(home: Path) -> None:
    from learn_cli.store.api import Store

    store = Store(home, warn_stderr=False)
    try:
        store.refresh()
        for rel, recs in kit.load_all(home).items():
            indexed = {row[0] for row in store.index.db.execute("SELECT id FROM learnings WHERE file = ?", (rel,))}
            assert indexed == set(recs), (rel, len(indexed), len(recs))
    finally:
        store.close()
