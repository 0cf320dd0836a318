"""The replay kit's exact-memory oracle, and the same oracle made causal.

    python bench/causal_oracle.py ../shared/histories/leegmoore-codex [HISTORY …] [-v]
    python bench/causal_oracle.py HISTORY --held-from SESSION [--replay REPLAY.json]

`../shared/tools/replay.py` scores `learn` against an oracle that, on a recurring failure,
offers the command that resolved the latest earlier failure of the same normalised error. That
resolution may come *after* the failure being answered: when a command fails twice in a row
before it is fixed, the oracle answers the second failure with the fix of the first, which had
not happened yet. No learner that answers at the time of a failure can have it. The causal
oracle offers only a resolution that came before the failure. Both use the kit's own functions
(`norm_error`, `resolution`, `matches`), without running `learn`.

`-v` lists every recurring failure the oracle gets right: whether the causal oracle gets it too,
and whether the agent edited files between the failure and the command that "resolved" it (then
the edit was the fix, and the resolution, often a rebuild or the same command again, only ran it).
`--held-from SESSION` gives the figures of the sessions before it (tune) and from it on (held),
and with `--replay` (the kit's `--json` output for that history) learn's offers on each part.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.corpus import replay_kit

PROJECT_ROOT = "/project"  # stands for <ROOT>: the match rule only needs it to be the same everywhere


def tool_events(kit, history: dict) -> list[dict]:
    """The history's tool events in replay order, with the fields the kit's measures read."""
    events = []
    for session in history["sessions"]:
        for item in session["items"]:
            if item["kind"] != "tool":
                continue
            command = kit._sub(item.get("command") or "", PROJECT_ROOT) if item["tool"] == "Bash" else ""
            events.append({"seq": len(events) + 1, "sid": session["name"], "tool": item["tool"], "cmd": command,
                           "path": item.get("path", ""), "outcome": item["outcome"],
                           "error": kit._sub(item.get("error", ""), PROJECT_ROOT),
                           "synthetic": bool(item.get("synthetic")), "root": PROJECT_ROOT})
    return events


def oracles(kit, events: list[dict], hits: list[dict] | None = None) -> dict:
    """The counts; each recurring failure, with the oracles' verdicts, is appended to `hits`."""
    seen: dict[str, int] = {}
    memory: dict[str, list[dict]] = {}  # normalised error -> earlier resolutions, in order
    counts = {"recurring": 0, "oracle_right": 0, "causal_oracle_right": 0}
    for i, failure in enumerate(events):
        if failure["outcome"] != "fail":
            continue
        key = kit.norm_error(failure["error"], failure["cmd"] or failure["path"])
        done = kit.resolution(events, i)
        if seen.get(key):
            counts["recurring"] += 1
            known = memory.get(key, [])
            before = [r for r in known if r["seq"] < failure["seq"]]
            right = {}
            for name, pool in (("oracle_right", known), ("causal_oracle_right", before)):
                right[name] = bool(done is not None and pool and kit.matches(pool[-1]["cmd"], failure["cmd"],
                                                                             done["cmd"], (PROJECT_ROOT,)))
                counts[name] += right[name]
            if hits is not None:  # every recurring failure, the oracle's verdicts on it
                hits.append({"seq": failure["seq"], "sid": failure["sid"], "right": right["oracle_right"],
                             "causal": right["causal_oracle_right"], "failed": failure["cmd"],
                             "error": failure["error"], "offered": known[-1]["cmd"] if known else "",
                             "agent": done["cmd"] if done else "",
                             "edited_first": bool(done) and _edited_between(events, i, done)})
        seen[key] = seen.get(key, 0) + 1
        if done is not None:
            memory.setdefault(key, []).append(done)
    return counts


def _edited_between(events: list[dict], at: int, done: dict) -> bool:
    return any(e["tool"] in ("Edit", "Write", "MultiEdit", "NotebookEdit") and e["outcome"] == "ok"
               for e in events[at + 1:] if e["seq"] < done["seq"])


def _line(text: str, width: int = 150) -> str:
    text = " ⏎ ".join(text.split("\n"))
    return text if len(text) <= width else text[: width - 1] + "…"


def by_part(hits: list[dict], sessions: list[str], held_from: str, replay: dict | None) -> dict:
    """The figures of the sessions before `held_from` (tune) and from it on (held), the
    oracles' from `hits`, learn's from a replay's `--json` output (its history's offers)."""
    held = set(sessions[sessions.index(held_from):]) if held_from in sessions else set()
    offers = [o for o in (replay or {}).get("offers", []) if o.get("recurring")]
    parts = {}
    for part, inside in (("tune", lambda sid: sid not in held), ("held", lambda sid: sid in held)):
        mine = [h for h in hits if inside(h["sid"])]
        figures = {"recurring": len(mine), "oracle_right": sum(h["right"] for h in mine),
                   "causal_oracle_right": sum(h["causal"] for h in mine)}
        if replay is not None:
            theirs = [o for o in offers if inside(o["session"])]
            figures.update(learn_offered=len(theirs), learn_right=sum(o["right"] is True for o in theirs),
                           learn_wrong=sum(o["right"] is False for o in theirs))
        parts[part] = figures
    return parts


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("histories", nargs="+")
    parser.add_argument("-v", "--verbose", action="store_true", help="list each hit of the oracle")
    parser.add_argument("--held-from", metavar="SESSION", help="sessions from this one on are the held-out part")
    parser.add_argument("--replay", metavar="JSON", help="a replay.py --json output of the one history, for "
                        "learn's figures per part")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    kit = replay_kit()
    replay = None
    if args.replay:
        with open(args.replay, encoding="utf-8") as fh:
            replay = next(iter(json.load(fh)["histories"].values()))
    for folder in args.histories:
        history = kit.load_history(folder)
        hits: list[dict] = []
        counts = oracles(kit, tool_events(kit, history), hits)
        hits_right = [h for h in hits if h["right"]]
        print(json.dumps({"history": os.path.basename(folder.rstrip("/")), **counts,
                          "oracle_right_after_an_edit": sum(h["edited_first"] for h in hits_right)}))
        if args.held_from:
            sessions = [s["name"] for s in history["sessions"]]
            print(json.dumps(by_part(hits, sessions, args.held_from, replay)))
        for hit in hits_right if args.verbose else []:
            print(f"- seq {hit['seq']}: {'causal' if hit['causal'] else 'NOT causal'}"
                  f"{', files edited before the resolution' if hit['edited_first'] else ''}")
            for name in ("failed", "error", "offered", "agent"):
                print(f"    {name:8}: {_line(hit[name])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
