"""What the guard (`learn hooks install --guard`) would have stopped on real history, and whether
it should have.

    python bench/guard_replay.py [--learn .venv/bin/learn] HISTORY [HISTORY …] [-v]

The guard denies a shell command before it runs when an active learning says that very command
fails and its fix has helped, once per session (capture.guard). The replay kit installs the
hooks without it, so its figures never see a denial. This replays each history through the
kit's `Replayer` with the guard's hooks installed, sends every PreToolUse through them, and
sorts each denial by what the history shows the command then did:

- spared: the command failed in the history (the denial saved a failed run); `right` when the
  fix the denial gives matches what the agent then ran that worked (the kit's own rule,
  `offer_matches` on the reason's "`X` instead of `Y`");
- spared, hidden: the command "worked" behind a pipe, and its output says it ran nothing (as
  `learn` reads it: text.failure.failed_behind_a_pipe);
- harmful: the command worked in the history: the guard would have stopped a call that works.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.corpus import replay_kit

_FIX_RE = re.compile(r"`([^`]+)` instead of `([^`]+)`")


def guarded_replayer(kit, learn: str):
    """The kit's Replayer, with the hooks `learn hooks install --guard` registers, that keeps
    every PreToolUse answer (the kit keeps only their context)."""
    replayer = kit.Replayer(learn, "mixed")
    done = subprocess.run([replayer.learn, "hooks", "install", "--guard", "--json"], env=replayer.env,
                          cwd=replayer.user, capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        raise SystemExit(f"guard_replay: `learn hooks install --guard` failed: {done.stderr.strip()[-300:]}")
    with open(os.path.join(replayer.user, ".claude", "settings.json"), encoding="utf-8") as fh:
        replayer.settings = json.load(fh).get("hooks", {})
    replayer.denials = []
    fire = replayer.fire

    def fire_keeping_denials(payload, cwd, project_dir, force_real=False):
        if payload["hook_event_name"] != "PreToolUse" or payload.get("tool_name") != "Bash":
            return fire(payload, cwd, project_dir, force_real)
        env = {"CLAUDE_PROJECT_DIR": project_dir, "CLAUDE_CODE_SESSION_ID": payload["session_id"]}
        for handler in replayer.handlers("PreToolUse", "Bash"):
            out = replayer._run_real(handler, payload, cwd, env)
            answer = (json.loads(out) if out else {}).get("hookSpecificOutput") or {}
            if answer.get("permissionDecision") == "deny":
                replayer.denials.append({"tid": payload["tool_use_id"],
                                         "reason": answer.get("permissionDecisionReason") or ""})
        return ""

    replayer.fire = fire_keeping_denials
    return replayer


def judged(kit, history: dict, events: list[dict], denials: list[dict]) -> list[dict]:
    """Each denial with what the command then did in the history."""
    from learn_cli.text.failure import failed_behind_a_pipe

    output = {(session["name"], item.get("n")): item.get("output") or ""
              for session in history["sessions"] for item in session["items"] if item["kind"] == "tool"}
    at = {event["tid"]: i for i, event in enumerate(events)}
    rows = []
    for denial in denials:
        i = at.get(denial["tid"])
        if i is None:
            continue
        event = events[i]
        row = {"seq": event["seq"], "cmd": event["cmd"], "reason": denial["reason"].split("\n", 1)[0]}
        if event["outcome"] == "ok" and failed_behind_a_pipe(event["cmd"], output.get((event["session"], event["n"]))):
            row["verdict"] = "spared, hidden"  # it "worked" behind a pipe, and its output says it ran nothing
        elif event["outcome"] == "ok":
            row["verdict"] = "harmful"
        else:
            found = _FIX_RE.search(denial["reason"])
            offer = {"kind": "retry", "fix": found.group(1), "failed": found.group(2)} if found else None
            right = kit.offer_matches(offer, event, kit.resolution(events, i)) if offer else None
            row["verdict"] = {True: "spared, right", False: "spared, other fix", None: "spared"}[right]
        rows.append(row)
    return rows


def denials_in(kit, learn: str, path: str) -> tuple[list[dict], list[str]]:
    """One history replayed with the guard: its denials judged, and the hook problems."""
    replayer = guarded_replayer(kit, learn)
    try:
        history = kit.load_history(path)
        run = kit.replay_history(history, replayer)
        return judged(kit, history, run["events"], replayer.denials), replayer.errors
    finally:
        replayer.close()
        shutil.rmtree(replayer.base, ignore_errors=True)


def main(argv: list[str]) -> int:
    import argparse

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("history", nargs="+")
    parser.add_argument("--learn", default=".venv/bin/learn")
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args(argv)
    kit = replay_kit()
    harmful = 0
    for path in args.history:
        rows, problems = denials_in(kit, args.learn, path)
        counts: dict[str, int] = {}
        for row in rows:
            counts[row["verdict"]] = counts.get(row["verdict"], 0) + 1
        harmful += counts.get("harmful", 0)
        print(os.path.basename(path.rstrip("/")), json.dumps(counts), f"hook problems: {len(problems)}")
        if args.verbose:
            for row in rows:
                print(f"  {row['verdict']:18} #{row['seq']} {row['cmd'][:80]!r}\n{'':22}{row['reason'][:160]}")
    return 1 if harmful else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
