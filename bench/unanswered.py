"""Failures that went unanswered although their key had a proven fix (issue 10's done-when:
"no recurring failure whose key has an active fix goes unanswered").

    python bench/unanswered.py ../shared/histories/leegmoore-codex [HISTORY …] [--learn .venv/bin/learn]

Each history is replayed by `../shared/tools/replay.py`'s own Replayer (its payloads, its
throwaway store, the installed hooks); then, for every failure `learn` did not answer, the
learnings of the failure's key (learn's own key, as the kit records it) are read from the end
store, and their evidence is placed on the history's timeline: a learning with `min_evidence`
(2) sightings before that failure, or a global one, was proven then. The kit itself diagnoses
only the failures its exact-memory oracle got right; this looks at all of them.

A listed failure is not always a fault: a fix that failed after it was offered is not offered
again until it works (issue 10), and "run it from the project's root folder" is not said in the
root. Each is listed with what was proven, to read.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.corpus import replay_kit

MIN_EVIDENCE = 2  # the default `min_evidence`: sightings that make a learning active


def unanswered(rows: list[dict], events: list[dict], records: list[dict],
               min_evidence: int = MIN_EVIDENCE) -> list[dict]:
    """The kit's measured failures (`rows`) with no offer whose key had a proven learning then:
    each as {"event", "proven": [(record, sightings before it)]}."""
    at = {event["tid"]: index for index, event in enumerate(events)}
    found = []
    for row in rows:
        if row["offer"]:
            continue
        event = events[row["i"]]
        proven = []
        for rec in records:
            if rec.get("key") != event.get("learn_key") or rec.get("type", "error") != "error":
                continue
            before = sum(1 for e in rec.get("evidence") or () if at.get(e.get("event"), len(events)) < row["i"])
            if before >= min_evidence or rec.get("status") == "global":
                proven.append((rec, before))
        if proven:
            found.append({"event": event, "proven": proven})
    return found


def replay(kit, path: str, learn: str) -> tuple[str, list[dict]]:
    history = kit.load_history(path)
    replayer = kit.Replayer(learn, "mixed", 50, budget_s=200)
    try:
        run = kit.replay_history(history, replayer)
    finally:
        replayer.close()
    try:
        result = kit.measure(run, replayer)
        return history["project"], unanswered(result["rows"], run["events"], result["records"])
    finally:
        shutil.rmtree(replayer.base, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("histories", nargs="+", help="history folders (events.jsonl and meta.json)")
    parser.add_argument("--learn", default=str(Path(__file__).resolve().parents[1] / ".venv" / "bin" / "learn"))
    args = parser.parse_args(argv)
    kit = replay_kit()
    for path in args.histories:
        project, found = replay(kit, path, args.learn)
        print(f"{project}: {len(found)} failures unanswered with a proven fix for their key")
        for item in found:
            event = item["event"]
            folder = os.path.relpath(event["cwd"], event["root"]) if event.get("cwd") and event.get("root") else "."
            print(f"  seq {event['seq']} ({event['session']}:{event['line']}) in {folder}: {event['cmd'][:100]}")
            for rec, before in item["proven"][:3]:
                print(f"    {rec.get('status')}, {before} sightings before: {str(rec.get('fix'))[:90]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
