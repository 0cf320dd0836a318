"""Every history into one store, as one user's machine: what do other projects' fixes do?

    python bench/one_store.py [--learn .venv/bin/learn] HISTORY [HISTORY …] [-v] [--json FILE]

The replay kit (`../shared/tools/replay.py`) replays each history into a fresh store of its
own, so it never sees `learn` answer a failure with a fix learned in another project: the reach
across projects that the product promises, and the way it could mislead. Here all the histories
share one store and one HOME, each in its own project folder, their sessions interleaved (the
k-th of a history's n sessions at k/n of the way, as someone working on several projects in the
same months). It is the kit's own `Replayer` and `replay_history`, one session at a time, and
its own judge (`norm_error`, `resolution`, `parse_offer`, `offer_matches`).

Each answer to a failure is judged as the kit judges it (right / wrong / unjudged) and sorted by
where its evidence came from, read from the answer's "seen …" clause:
- here: seen in this project (perhaps elsewhere too);
- elsewhere: seen only in other projects: the answer sharing the store made possible.
`-v` lists every answer from elsewhere, with what the agent did next. The learnings made global
at the end are listed too: every project's session start is given them.
"""

from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.corpus import replay_kit

_SEEN_RE = re.compile(r"known fix \((seen [^)]*)\)")


def interleaved(histories: list[dict]) -> list[tuple[dict, dict]]:
    """[(history, session)] in one order: each history's sessions in their own order, spread over
    the same span (ties broken by the order of the histories given)."""
    order = []
    for h, hist in enumerate(histories):
        count = len(hist["sessions"])
        order.extend(((k + 1) / count, h, k) for k in range(count))
    return [(histories[h], histories[h]["sessions"][k]) for _at, h, k in sorted(order)]


def replay_all(kit, learn: str, paths: list[str]) -> dict[str, list[dict]]:
    """Each history's events (the kit's event dicts, numbered per history in its own order),
    replayed into one store."""
    histories = [kit.load_history(p) for p in paths]
    replayer = kit.Replayer(learn, "mixed")
    events: dict[str, list[dict]] = {hist["project"]: [] for hist in histories}
    try:
        for hist, session in interleaved(histories):
            run = kit.replay_history(dict(hist, sessions=[session]), replayer)
            mine = events[hist["project"]]
            for event in run["events"]:
                mine.append(dict(event, seq=len(mine) + 1))
        problems = list(replayer.errors)
        records = replayer.records()
    finally:
        replayer.close()
        shutil.rmtree(replayer.base, ignore_errors=True)
    return {"events": events, "hook_problems": problems, "records": records}


def where_seen(offer_text: str) -> str:
    """"here" when the answer's evidence includes this project, else "elsewhere"."""
    match = _SEEN_RE.search(offer_text or "")
    return "here" if match is None or "this project" in match.group(1) else "elsewhere"


def judged(kit, events: list[dict]) -> list[dict]:
    """Every answer to a failure in one history, with the kit's verdict and where it was seen."""
    rows = []
    for i, event in enumerate(events):
        if event["outcome"] != "fail" or not event["offer"]:
            continue
        done = kit.resolution(events, i)
        verdict = kit.offer_matches(kit.parse_offer(event["offer"]), event, done)
        rows.append({"seq": event["seq"], "session": event["session"], "cmd": event["cmd"],
                     "offer": event["offer"].split("\n", 1)[0], "agent_did": done["cmd"] if done else None,
                     "verdict": {True: "right", False: "wrong", None: "unjudged"}[verdict],
                     "seen": where_seen(event["offer"])})
    return rows


def shared_failures(events: dict[str, list[dict]], records: list[dict]) -> list[dict]:
    """The failures (by learn's key) met in more than one project: the chances an answer from
    elsewhere had. Each with the projects that met it, and those whose store learned a fix."""
    met: dict[str, dict[str, str]] = {}
    for name, mine in events.items():
        for event in mine:
            if event["outcome"] == "fail" and event.get("learn_key"):
                met.setdefault(event["learn_key"], {}).setdefault(name, (event["cmd"] or event["path"])[:80])
    fixed: dict[str, list] = {}
    for rec in records:  # (a record names its project by the folder's name, as the histories do)
        fixed.setdefault(rec.get("key") or "", []).append({
            "project": rec.get("project"), "status": rec.get("status"),
            "fix": rec.get("fix_command") or rec.get("fix"), "error": (rec.get("error") or "")[:120]})
    return [{"key": key, "met": where, "learned": fixed.get(key, [])}
            for key, where in sorted(met.items()) if len(where) > 1]


def tally(rows: list[dict]) -> dict:
    counts = {where: {"right": 0, "wrong": 0, "unjudged": 0} for where in ("here", "elsewhere")}
    for row in rows:
        counts[row["seen"]][row["verdict"]] += 1
    return counts


def main(argv: list[str]) -> int:
    import argparse

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("history", nargs="+")
    parser.add_argument("--learn", default=".venv/bin/learn")
    parser.add_argument("--json", metavar="FILE")
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args(argv)
    kit = replay_kit()
    replayed = replay_all(kit, args.learn, args.history)
    results, total = {}, []
    for name, events in replayed["events"].items():
        rows = judged(kit, events)
        total.extend(rows)
        results[name] = {"counts": tally(rows), "answers": rows}
        print(name, json.dumps(results[name]["counts"]))
        if args.verbose:
            for row in rows:
                if row["seen"] == "elsewhere":
                    print(f"  {row['verdict']:8} #{row['seq']} {row['cmd'][:90]!r}\n"
                          f"           {row['offer'][:200]}\n           agent: {(row['agent_did'] or '')[:120]}")
    shared = shared_failures(replayed["events"], replayed["records"])
    print("all", json.dumps(tally(total)), f"hook problems: {len(replayed['hook_problems'])}")
    print(f"failures met in more than one project: {len(shared)} keys, a fix learned for "
          f"{sum(1 for s in shared if s['learned'])}")
    made_global = [rec for rec in replayed["records"] if rec.get("status") == "global"]
    print(f"global learnings at the end: {len(made_global)}")
    for rec in made_global:  # what every project's session start is given
        print(f"  {rec.get('type')} seen {rec.get('frequency')}×: {str(rec.get('context'))[:120]!r}")
    if args.verbose:
        for item in shared:
            print(f"  {item['key']} met in {sorted(item['met'])}")
            for rec in item["learned"]:
                fix = str(rec["fix"])[:100]
                print(f"    learned in {rec['project']} ({rec['status']}): {fix!r} for {rec['error']!r}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump({"histories": results, "all": tally(total), "shared": shared, "global": made_global,
                       "hook_problems": replayed["hook_problems"]},
                      fh, indent=1)
    return 1 if replayed["hook_problems"] else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
