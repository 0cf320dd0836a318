"""The large figures of RELIABILITY.md's deadline rows (issue 12): a script, not a test.

    .venv/bin/python tests/reliability/deadline_attack.py [--sessions 256] [--locked-calls 24]

1. `--sessions` agent sessions at once, each a real `learn capture` process per tool call (a
   failure and its fix with an error of its own, a failure and fix of a shared error whose fix
   is known, a user correction, a Stop), while `learn prune`, `learn promote`, `learn import`
   and `learn export` each run in a loop of its own beside them. Then one `learn promote`
   learns whatever is still spooled. Counts every pair, sighting and correction in the store against what was
   sent: lost = sent - learned.
2. With a second process holding `BEGIN IMMEDIATE` on the index the whole time, `--locked-calls`
   hook calls (half one after the other, half at once): how far past its deadline each ended.

Prints one JSON document with the figures. Each call is timed twice: the seconds the agent
waited (`seconds_past_deadline`), and the seconds the hook ran or waited by itself
(`own_seconds_past_deadline`: less its waits for a CPU, read from /proc/<pid>/schedstat; what
the machine's load adds, no hook can shorten).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import reliability_kit as kit
from test_rel_attacks_deadline import IndexLocked, counters, learned

LEARN = str(Path(sys.executable).with_name("learn"))
SEED_EVENTS = 4  # the tool events seed() sends


def call(home: Path, payload: dict) -> tuple[float, int, str, float]:
    """(seconds past its deadline the agent waited, exit code, stderr, seconds past its deadline
    the hook ran or waited by itself: its waits for a CPU not counted, see kit.run_timed)."""
    from learn_cli.capture import events, hook

    timed = kit.run_timed([LEARN, "capture"], json.dumps(payload), kit.learn_env(home, home.parent / "userhome"),
                          timeout=300)
    kind = {"PostToolUseFailure": events.FAILURE, "PostToolUse": events.SUCCESS, "Stop": events.STOP}.get(
        payload["hook_event_name"], events.PROMPT)
    limit = hook.DEADLINES.get(kind, hook.DEFAULT_DEADLINE)
    return timed.wall - limit, timed.proc.returncode, timed.proc.stderr, timed.own - limit


def session(home: Path, cwd: Path, index: int, shared: dict, out: dict) -> None:
    sid, over, bad = f"attack-{index}", [], 0
    marker = f"uniq{kit.letters(index)}z"
    calls = [kit.failure(cwd, sid, f"u{index}f", f"blorp make {marker}", f"Error: blorp cannot find {marker}"),
             kit.success(cwd, sid, f"u{index}s", f"blorp make {marker} --frob"),
             kit.failure(cwd, sid, f"k{index}f", shared["command"], shared["error"]),
             kit.success(cwd, sid, f"k{index}s", shared["fix"]),
             kit.prompt(cwd, sid, f"Don't use npm here, use tool{kit.letters(index)}x instead."),
             {**kit.session_end(cwd, sid), "hook_event_name": "Stop"}]
    for payload in calls:
        late, code, err, own = call(home, payload)
        over.append((late, payload["hook_event_name"], err.strip()[-200:], own))
        if code != 0 or "Traceback" in err:
            bad += 1
            out.setdefault("bad_calls", []).append({"session": sid, "hook": payload["hook_event_name"],
                                                    "exit": code, "stderr": err[-2000:]})
    out[index] = {"over": max(over)[0], "worst": max(over)[:3], "bad": bad, "all": [(o[0], o[1]) for o in over],
                  "own": [(o[3], o[1]) for o in over]}


HOUSEKEEPING = (("prune", "--quiet"), ("promote", "--json"), ("export", "-o", "{export}"), ("import", "{export}"))


def housekeeping(home: Path, cwd: Path, args: tuple, stop: threading.Event, runs: list) -> None:
    """One command in a loop until `stop`: each of HOUSEKEEPING has a thread of its own, so
    that prune, promote, import and export all run while the hooks do (one after the other, a
    prune or promote under this load took the whole run and import never ran)."""
    exported = home.parent / "export.json"
    args = tuple(a.format(export=exported) for a in args)
    while not stop.is_set():
        try:
            proc = kit.learn_exe(home, cwd, *args)
        except subprocess.TimeoutExpired:  # a starved machine: say so, and keep the loop going
            runs.append((args[0], "timeout", "killed after the kit's 120 s"))
        else:
            runs.append((args[0], proc.returncode, proc.stderr[-300:]))


def seed(home: Path, base: Path) -> dict:
    """A shared error whose fix is known (learned in two sessions of another project)."""
    other = kit.project_dir(base, "seed")
    shared = {
        "command": "zorp deploy",
        "error": "Error: zorp deploy cannot reach the glarb",
        "fix": "zorp deploy --glarb",
    }
    for s in range(2):
        for payload in (kit.failure(other, f"seed{s}", f"sf{s}", shared["command"], shared["error"]),
                        kit.success(other, f"seed{s}", f"ss{s}", shared["fix"])):
            assert call(home, payload)[1] == 0
    return shared


def concurrent(tmp: Path, sessions: int) -> dict:
    home, base = tmp / "home", tmp / "work"
    (tmp / "userhome").mkdir(parents=True, exist_ok=True)
    shared = seed(home, base)
    cwd = kit.project_dir(base, "app")
    stop, runs, out = threading.Event(), [], {}
    assert kit.learn_exe(home, cwd, "export", "-o", str(home.parent / "export.json")).returncode == 0  # for import
    keepers = [threading.Thread(target=housekeeping, args=(home, cwd, args, stop, runs), daemon=True)
               for args in HOUSEKEEPING]
    started = time.monotonic()
    for keeper in keepers:
        keeper.start()
    threads = [threading.Thread(target=session, args=(home, cwd, i, shared, out)) for i in range(sessions)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    stop.set()
    for keeper in keepers:
        keeper.join()
    elapsed = time.monotonic() - started
    before = counters(home)
    final = kit.learn_exe(home, cwd, "promote", "--json")
    records = [rec for copies in kit.records_by_id(home).values() for _, rec in copies]
    pairs = sum(1 for i in range(sessions) if len(learned(home, f"uniq{kit.letters(i)}z")) == 1)
    corrections = sum(1 for i in range(sessions) if any(
        r.get("type") == "preference" and f"tool{kit.letters(i)}x" in str(r.get("fix")) for r in records))
    after = counters(home)
    return {
        "sessions": sessions, "hook_calls": sessions * 6, "seconds": round(elapsed, 1),
        "housekeeping_runs": dict(Counter(name for name, _, _ in runs)),
        "housekeeping_failures": [r for r in runs if r[1] != 0 or "Traceback" in r[2]],
        "bad_hook_exits": sum(r["bad"] for k, r in out.items() if k != "bad_calls"),
        "bad_calls": out.get("bad_calls", []),
        "pairs": {"sent": sessions, "learned": pairs, "lost": sessions - pairs},
        "tool_events": {"sent": sessions * 4, "learned": after.get("events", 0) - SEED_EVENTS,
                        "lost": sessions * 4 - (after.get("events", 0) - SEED_EVENTS)},
        "corrections": {"sent": sessions, "learned": corrections, "lost": sessions - corrections},
        "spool": {"deferred": after.get("deferred", 0), "replayed": after.get("replayed", 0),
                  "dropped": after.get("dropped", 0),
                  "replayed_by_final_promote": after.get("replayed", 0) - before.get("replayed", 0),
                  "final_promote_ok": final.returncode == 0},
        "max_seconds_past_deadline": round(max(r["over"] for k, r in out.items() if k != "bad_calls"), 2),
        "worst_calls": sorted((r["worst"] for k, r in out.items() if k != "bad_calls"), reverse=True)[:3],
        "seconds_past_deadline": overruns([o for k, r in out.items() if k != "bad_calls" for o in r["all"]]),
        "own_seconds_past_deadline": overruns([o for k, r in out.items() if k != "bad_calls" for o in r["own"]]),
    }


def overruns(calls: list[tuple[float, str]]) -> dict:
    """How far past their deadlines the calls ended, per hook event: calls, how many ended more
    than 0.5 s past it, and the median, 90th and 99th percentile and the worst."""
    by: dict[str, list[float]] = {}
    for late, name in calls:
        by.setdefault(name, []).append(late)
        by.setdefault("all", []).append(late)
    out = {}
    for name, values in by.items():
        values.sort()
        pick = lambda q, v=values: round(v[min(len(v) - 1, int(q * len(v)))], 2)  # noqa: E731
        out[name] = {"calls": len(values), "over_0.5s": sum(v > 0.5 for v in values),
                     "p50": pick(0.5), "p90": pick(0.9), "p99": pick(0.99), "max": round(values[-1], 2)}
    return out


def locked(tmp: Path, calls: int) -> dict:
    home, base = tmp / "home", tmp / "work"
    (tmp / "userhome").mkdir(parents=True, exist_ok=True)
    cwd = kit.project_dir(base, "app")
    assert call(home, kit.prompt(cwd, "warm", "hello"))[1] == 0
    late: list[float] = []
    own: list[float] = []
    names: list[str] = []
    pairs = [(kit.failure(cwd, f"l{n}", f"lf{n}", "zorp build", f"Error: zorp lost the glarb{kit.letters(n)}q"),
              kit.success(cwd, f"l{n}", f"ls{n}", "zorp build --glarb")) for n in range(calls // 2)]

    def run(pair):
        for payload in pair:
            result = call(home, payload)
            late.append(result[0])
            own.append(result[3])
            names.append(payload["hook_event_name"])

    with IndexLocked(home):
        for pair in pairs[: len(pairs) // 2]:  # one session after the other
            run(pair)
        threads = [threading.Thread(target=run, args=(pair,)) for pair in pairs[len(pairs) // 2:]]  # at once
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    final = kit.learn_exe(home, cwd, "promote", "--json")
    c = counters(home)
    return {"calls": len(late), "max_seconds_past_deadline": round(max(late), 2),
            "seconds_past_deadline": overruns(list(zip(late, names, strict=True))),
            "own_seconds_past_deadline": overruns(list(zip(own, names, strict=True))),
            "min_seconds_past_deadline": round(min(late), 2),
            "spool": {k: c.get(k, 0) for k in ("deferred", "replayed", "dropped")},
            "pairs_learned_after_promote": sum(1 for n in range(calls // 2)
                                               if len(learned(home, f"glarb{kit.letters(n)}q")) == 1),
            "final_promote_ok": final.returncode == 0}


def main() -> int:
    import tempfile

    parser = argparse.ArgumentParser()
    parser.add_argument("--sessions", type=int, default=256)
    parser.add_argument("--locked-calls", type=int, default=24)
    parser.add_argument("--keep", metavar="DIR", help="run in DIR (created) and keep the homes, their learn.log "
                        "and each bad hook call's stderr, for a post-mortem")
    args = parser.parse_args()
    with (contextlib.nullcontext(args.keep) if args.keep else tempfile.TemporaryDirectory()) as tmp:
        report = {"concurrent": concurrent(Path(tmp) / "a", args.sessions),
                  "index_locked": locked(Path(tmp) / "b", args.locked_calls) if args.locked_calls > 0 else None}
    json.dump(report, sys.stdout, indent=2)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
