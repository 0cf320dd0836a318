"""The replay kit's exact-memory oracle, and the same oracle made causal.

    python bench/causal_oracle.py ../shared/histories/leegmoore-codex [HISTORY …] [-v]

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
    """The counts; each recurring failure the oracle gets right is appended to `hits`."""
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
            if right["oracle_right"] and hits is not None:
                hits.append({"seq": failure["seq"], "causal": right["causal_oracle_right"], "failed": failure["cmd"],
                             "error": failure["error"], "offered": known[-1]["cmd"], "agent": done["cmd"],
                             "edited_first": _edited_between(events, i, done)})
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


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    verbose = "-v" in args
    kit = replay_kit()
    for folder in [a for a in args if a != "-v"]:
        hits: list[dict] = []
        counts = oracles(kit, tool_events(kit, kit.load_history(folder)), hits)
        print(json.dumps({"history": os.path.basename(folder.rstrip("/")), **counts,
                          "oracle_right_after_an_edit": sum(h["edited_first"] for h in hits)}))
        for hit in hits if verbose else []:
            print(f"- seq {hit['seq']}: {'causal' if hit['causal'] else 'NOT causal'}"
                  f"{', files edited before the resolution' if hit['edited_first'] else ''}")
            for name in ("failed", "error", "offered", "agent"):
                print(f"    {name:8}: {_line(hit[name])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
