"""The replay kit's exact-memory oracle, and the same oracle made causal.

    python bench/causal_oracle.py ../shared/histories/leegmoore-codex [HISTORY …]

`../shared/tools/replay.py` scores `learn` against an oracle that, on a recurring failure,
offers the command that resolved the latest earlier failure of the same normalised error. That
resolution may come *after* the failure being answered: when a command fails twice in a row
before it is fixed, the oracle answers the second failure with the fix of the first, which had
not happened yet. No learner that answers at the time of a failure can have it. The causal
oracle offers only a resolution that came before the failure. Both use the kit's own functions
(`norm_error`, `resolution`, `matches`), without running `learn`.
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


def oracles(kit, events: list[dict]) -> dict:
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
            for name, pool in (("oracle_right", known), ("causal_oracle_right", before)):
                if done is not None and pool and kit.matches(pool[-1]["cmd"], failure["cmd"], done["cmd"],
                                                             (PROJECT_ROOT,)):
                    counts[name] += 1
        seen[key] = seen.get(key, 0) + 1
        if done is not None:
            memory.setdefault(key, []).append(done)
    return counts


def main(argv: list[str] | None = None) -> int:
    kit = replay_kit()
    for folder in argv if argv is not None else sys.argv[1:]:
        counts = oracles(kit, tool_events(kit, kit.load_history(folder)))
        print(json.dumps({"history": os.path.basename(folder.rstrip("/")), **counts}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
