"""Are the project facts learned from success right? ("This project builds with `X`")

    python bench/working_ways.py [--learn .venv/bin/learn] HISTORY [HISTORY …] [-v] [--json FILE]
                                 [--runs DIR]

Issue 10, cause 7: besides failures, the way a project builds, runs its tests and runs (the one
the agent settled on after another way failed) is a fact for the session-start digest. The
replay kit (`../shared/tools/replay.py`) scores only the answers to failures; this scores the
facts. Each history is replayed in time order through the installed `learn`'s hooks, by the
kit's own `Replayer` and `replay_history`; the digest each session started with is read for
its "This project builds with `X`" lines (`WORKING_GOALS` in engine.goals), and each fact is
judged against what that session then did:

- right: the session ran that goal successfully that way (the way read as learn reads it,
  `capture.learner.working_way`: its folder, setup steps and job without targets; with more
  words, `cmake --build build -j8`, it is still that way);
- failed: the session ran it that way, and that way never worked in it (a fact the session
  contradicts, or code that did not build: this does not tell them apart);
- other_way: the session ran that goal successfully only in other ways (some of them the same
  thing in other words: `cd build && make`);
- unjudged: the session did not run that goal.

It also counts `failed_first`: sessions whose first command of a goal failed run another way
while the digest held a right fact for that goal, the failures a fact read at session start
could have spared (an upper bound: the agent may not have read it).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.corpus import replay_kit
from learn_cli.capture.learner import working_way
from learn_cli.engine.goals import WORKING_GOALS, goal
from learn_cli.text.shell import unwrap

_GOAL_OF_WORDS = {words: name for name, words in WORKING_GOALS.items()}
_FACT_RE = re.compile(r"This project (" + "|".join(map(re.escape, WORKING_GOALS.values())) + r") with `([^`]+)`")


def facts_in(digest: str) -> list[tuple[str, str]]:
    """[(goal, way)] the digest states."""
    return [(_GOAL_OF_WORDS[words], way) for words, way in _FACT_RE.findall(digest or "")]


def judge(facts: list[tuple[str, str]], events: list[dict], root: str) -> list[dict]:
    """Each fact with its verdict against one session's shell events (in order)."""
    ran: dict[str, list] = {}  # goal -> [(outcome, way)] in order
    for event in events:
        if event["tool"] != "Bash" or event["synthetic"] or not event["cmd"]:
            continue
        job = goal(unwrap(event["cmd"]))
        if job in WORKING_GOALS:
            cwd = os.path.relpath(event["cwd"], root) if event["cwd"].startswith(root) else event["cwd"]
            ran.setdefault(job, []).append((event["outcome"], working_way({"cmd": event["cmd"], "cwd": cwd}, root)))
    verdicts = []
    for job, way in facts:
        runs = ran.get(job, [])
        worked = [w for outcome, w in runs if outcome == "ok"]
        if any(follows(w, way) for w in worked):
            verdict = "right"
        elif any(follows(w, way) for outcome, w in runs):
            verdict = "failed"
        else:
            verdict = "other_way" if worked else "unjudged"
        spared = verdict == "right" and runs[0][0] == "fail" and not follows(runs[0][1], way)
        verdicts.append({"goal": job, "way": way, "verdict": verdict, "failed_first": spared})
    return verdicts


def follows(way: str, fact: str) -> bool:
    """Did a command run that way follow the fact? Every word of the fact is in it (`cmake
    --build build -j8` follows "builds with `cmake --build build`")."""
    return bool(way) and set(fact.split()) <= set(way.split())


def replayed(kit, learn: str, path: str, saved: str | None) -> dict:
    """The kit's replay of one history (its events and the digest each session started
    with), or the one saved at `saved` by an earlier run (to judge again without replaying)."""
    if saved and os.path.isfile(saved):
        with open(saved, encoding="utf-8") as fh:
            return json.load(fh)
    replayer = kit.Replayer(learn, "mixed")
    try:
        run = kit.replay_history(kit.load_history(path), replayer)
    finally:
        replayer.close()
        shutil.rmtree(replayer.base, ignore_errors=True)
    if saved:
        with open(saved, "w", encoding="utf-8") as fh:
            json.dump(run, fh)
    return run


def measure(run: dict, verbose: bool = False) -> dict:
    by_session: dict[str, list[dict]] = {}
    root = ""
    for event in run["events"]:
        by_session.setdefault(event["session"], []).append(event)
        root = event["root"]
    counts = {"sessions": len(run["starts"]), "with_facts": 0, "facts": 0, "right": 0, "failed": 0,
              "other_way": 0, "unjudged": 0, "failed_first": 0}
    rows = []
    for start in run["starts"]:
        facts = facts_in(start["text"])
        if not facts:
            continue
        counts["with_facts"] += 1
        for verdict in judge(facts, by_session.get(start["session"], []), root):
            counts["facts"] += 1
            counts[verdict["verdict"]] += 1
            counts["failed_first"] += verdict["failed_first"]
            rows.append(dict(verdict, session=start["session"]))
            if verbose:
                print(f"  {verdict['verdict']:8} {verdict['goal']:5} `{verdict['way']}`  {start['session']}")
    return {"counts": counts, "facts": rows}


def main(argv: list[str]) -> int:
    import argparse

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("history", nargs="+")
    parser.add_argument("--learn", default=".venv/bin/learn")
    parser.add_argument("--json", metavar="FILE")
    parser.add_argument("--runs", metavar="DIR", help="keep each replay here (NAME.json), and judge a kept one "
                        "again instead of replaying")
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args(argv)
    kit = replay_kit()
    results = {}
    for path in args.history:
        name = os.path.basename(path.rstrip("/"))
        if args.verbose:
            print(name)
        saved = os.path.join(args.runs, f"{name}.json") if args.runs else None
        results[name] = measure(replayed(kit, args.learn, path, saved), args.verbose)
        print(name, json.dumps(results[name]["counts"]))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(results, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
