"""Labelled real failures, measured the way live capture decides them.

    python bench/corpus.py pairing    FILE.jsonl [FILE.jsonl …] [-v] [--part all|tune|held]
    python bench/corpus.py recurrence FILE.jsonl [FILE.jsonl …] [-v] [--part …]

FILE is in the format of `../shared/corpora/agent-retries.jsonl` (see its README): a failed
command, its error, a label (`retry`, `no_retry`, `unrelated`) and the retry or the next command.

- `pairing`: is the retry paired with its failure, and is the next command after a failure the
  agent gave up on left alone? Asked of `capture.learner.retried_step` (is_retry, the error-text
  rules, the step of a chain the error names) as the PostToolUse hook asks it, after
  `text.failure.found_nothing` (a search that matched nothing is no failure to the hook).
- `recurrence`: a retry that worked, sent through the installed `learn`'s hooks as Claude Code
  sends them (the replay kit's payloads), then the same failure again: in the same project, and
  in a third project after one sighting in each of two others. The answer is judged with the
  replay kit's match rule. Needs `../shared/tools/replay.py` and `make install`.

`bench/data/harvest-round8.jsonl` holds 170 such cases (133 retries), read from public agent
transcripts by helpers who had not seen the learner's code (session 37), none from a repository
that `../shared/corpora` names; secrets they showed are replaced by `<REDACTED>`.
`bench/data/harvest-round9.jsonl` holds 170 more (119 retries; session 41), harvested the same
way from repositories and transcripts that neither of those uses (Codex, Gemini CLI, opencode
and Qwen Code among them), with reruns after an edit labelled `same_command_after_edit`.
`bench/data/harvest-round10.jsonl` holds 30 (18 retries), harvested the same way later in
session 41, after that session's changes, from transcripts no earlier round used, until the
search service's budget ran out: small, an unseen check rather than a figure to tune on.
`bench/data/harvest-round11.jsonl` holds 180 (127 retries; session 42), harvested the same way
from transcripts no earlier round used (Codex on Windows PowerShell among them), measured before
any change of that session. `bench/data/harvest-round12.jsonl` holds 186 (131 retries; session
43), harvested the same way by four helpers, each on its own ecosystems, measured before any of
it was read; `harvest-round13.jsonl` 153 (117 retries), harvested after that session's changes
for round 12; `harvest-round14.jsonl` 152 (113 retries; session 44), harvested the same way and
measured before any of it was read; `harvest-round15.jsonl` 150 (118 retries; session 44, Copilot
CLI, opencode, Gemini CLI, Pi and Claude Code), harvested after that session's changes;
`harvest-round16.jsonl` 134 (105 retries; session 45: C/C++/Rust projects, 17 of them from
sflicker/claudec99, whose history bench/data/histories holds; DevOps; Codex; Python/JS),
measured before any of it was read; `harvest-round17.jsonl` 104 (82 retries; session 45: Claude
Code on Windows, Go/.NET/Maven, Gemini CLI, IBM Bob, goose, Flutter, Xcode), measured the same way;
`harvest-round18.jsonl` 113 (76 retries; session 45: git/gh, Python backends, Copilot CLI, Gemini
CLI, ssh and deploys), measured the same way; `harvest-round19.jsonl` 162 (126 retries; session 45:
test loops, environments and installs, opencode and Codex, web apps), measured the same way;
`harvest-round20.jsonl` 60 (47 retries; session 45: Claude Code, Amazon Q Developer CLI, Kiro
CLI), measured the same way; `harvest-round21.jsonl` 106 (82 retries; session 46: scripting and
data, Codex and opencode eval runs, .NET and TypeScript, git and Gemini CLI) and
`harvest-round22.jsonl` 138 (101 retries; Gemini CLI, Codex, Claude Code in other languages,
eval-harness trajectories), `harvest-round23.jsonl` 108 (87 retries; Windows shells, MySQL,
a CLI behind permission hooks, macOS scripting) and `harvest-round24.jsonl` 103 (75 retries; Go,
Laravel and Elixir backends in Claude Code, Codex on Windows, opencode, Kilo CLI, IBM Bob, LaTeX),
each measured the same way; `harvest-round25.jsonl` 122 (95 retries; session 47: Python and
JS/TS projects in Claude Code, Codex on C/C++ and CUDA, Gemini CLI and Copilot CLI, a third of
them on Windows), measured the same way; `harvest-round26.jsonl` 109 (78 retries; DevOps work and
data and ML in Claude Code, Codex on Python, JS and Go projects, Amp threads), measured the same
way; `harvest-round27.jsonl` 122 (97 retries; common tools' errors in Claude Code, Maven and .NET
in Codex, git and GitHub work, Windows shells in Codex, Claude Code and Cursor), measured the same
way; `harvest-round28.jsonl` 107 (86 retries; monorepos, Codex failures by exit status, research
runs in Claude Code, Roo Code and IBM Bob on Windows, less common languages), measured the same
way; `harvest-round29.jsonl` 87 (72 retries; mobile apps, databases and migrations, macOS tooling,
usage errors that exit 2), measured the same way; `harvest-round30.jsonl` 119 (88 retries; session 48:
Claude Code found by its error headers, Codex by its output, unread leads (system-spec-kit, ParEval),
missing programs and modules) and `harvest-round31.jsonl` 103 (78 retries; ai-inventor research runs
and Codex on PowerShell, cloud and deploy CLIs, environments, test runners), each measured the same way;
`harvest-round32.jsonl` 83 (64 retries; Python tooling, Codex on Rust and Go, a Laravel project's
Claude Code sessions, TypeScript tooling), measured the same way; `harvest-round33.jsonl` 90 (69
retries; servers and ports, headless and CI runs, Linux administration, Ruby and Rails), measured the
same way; `harvest-round34.jsonl` 94 (72 retries; Claude Code found by common errors, Copilot CLI and IBM
Bob, Codex on Windows PowerShell), measured the same way; `harvest-round35.jsonl` 142 (116 retries;
session 49: databases and migrations, Codex on Python and TypeScript, mobile and desktop apps, git
and GitHub, agents other than Claude Code and Codex, less common toolchains), measured the same way;
`harvest-round36.jsonl` 176 (135 retries; Claude Code's VS Code panel exports, projects in other
languages, saved histories, OpenHands and Codex raw logs), measured the same way; `harvest-round37.jsonl`
170 (134 retries; more VS Code panel exports, other Claude Code export formats, half-read leads,
OpenHands and SWE-agent trajectories), measured the same way.

The split into a tune part and a held-out part is the test suite's (tests/test_pairing.py): a
case is held out when the SHA-256 of its id ends in 6–9 (as a number, modulo 10). Use `--part
held` for a figure on cases whose misses you have not read.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
REPLAY_KIT = ROOT.parent / "shared" / "tools" / "replay.py"


def held_out(case_id: str) -> bool:
    return int(hashlib.sha256(case_id.encode()).hexdigest(), 16) % 10 >= 6


def load(paths: list[str], part: str) -> list[dict]:
    rows = []
    for path in paths:
        with open(path, encoding="utf-8") as fh:
            rows += [json.loads(line) for line in fh if line.strip()]
    return [r for r in rows if part == "all" or held_out(r["id"]) == (part == "held")]


def _one_line(text: str | None) -> str:
    """The text on one line, as transcripts that wrap long commands are read; a line ended by a
    backslash is continued, as the shell reads it (`aws ssm get-parameters \\⏎  --path x`). A
    comment line keeps the newline that ends it (`# check the version⏎python --version`): a
    display does not wrap into one, and flattened, the comment would swallow the command."""
    lines = re.sub(r"\\\n", " ", text or "").split("\n")
    out = ""
    for line in lines:
        words = " ".join(line.split())
        if words:
            out += ("" if not out or out.endswith("\n") else " ") + words
            out += "\n" if words.startswith("#") else ""
    return out.strip()


# Agents whose transcripts show a command as it was sent, its newlines real (a heredoc, a
# script of several lines); Claude Code's terminal export wraps long lines for the display, its
# VS Code panel's export (`IN` / the command / `OUT`, round 36) does not.
RAW_AGENTS = frozenset({"codex", "gemini-cli", "opencode", "copilot-cli", "amp", "claude-code-vscode"})


def export_of(row: dict) -> str | None:
    """The agent whose export a case was read from, as as_sent takes it: Claude Code's VS Code
    panel is told apart by the source the case names."""
    agent = row.get("agent")
    return "claude-code-vscode" if agent == "claude-code" and "VS Code" in (row.get("source") or "") else agent


def _as_written(text: str | None) -> str:
    """The text as the agent wrote it (a heredoc's indentation matters), its ends trimmed."""
    return (text or "").strip()


def as_sent(command: str | None, agent: str | None = None) -> str:
    """The command as an agent's hook receives it. Codex's transcripts show every command in
    its shell wrapper and folder (`/bin/zsh -lc 'pytest -q' in /home/x/app`), but its hooks
    carry the command alone (`pytest -q`: ../shared/reference/real-payloads/codex-*). Gemini
    CLI's show the tool's arguments (`{"command": "npm i", "directory": "web"}`), and its hooks
    carry them as they are, the command in `command` (the folder is not sent here). The lines
    of a RAW_AGENTS command are kept; any other is read on one line (`_one_line`)."""
    from learn_cli.text.shell import inner_command

    try:
        arguments = json.loads(command or "")
    except ValueError:
        arguments = None
    if isinstance(arguments, dict) and isinstance(arguments.get("command"), str):
        command = arguments["command"]
    line = _as_written(command) if agent in RAW_AGENTS else _one_line(command)
    # `/bin/zsh -lc '…' in /Users/m/Opencode Env` (a folder may hold spaces)
    wrapped = re.match(r"^(\S*(?:ba|z)?sh -l?c .*?['\"]) in (/[^'\"]+|<[^<>]+>)$", line, re.S)
    if not wrapped:  # on Windows: `"C:\…\powershell.exe" -Command '…' in D:\proj` (a folder may hold spaces)
        wrapped = re.match(r"^((?:\"[^\"]*|\S*)(?:powershell|pwsh)(?:\.exe)?\"? -Command .*?['\"]) in [A-Za-z]:\\",
                           line, re.I | re.S)
        if wrapped:
            return _powershell_script(wrapped.group(1))
    return inner_command(wrapped.group(1) if wrapped else line)


def _powershell_script(line: str) -> str:
    """The script of `powershell.exe -Command '<script>'`, as Codex's hooks carry it on Windows
    (its transcripts show the wrapper, quoted the POSIX way, as they do `bash -lc`)."""
    from learn_cli.text.shell import tokenize

    tokens = tokenize(line)
    return tokens[-1].strip() if len(tokens) == 3 and tokens[1].lower() == "-command" else line


def error_text(row: dict) -> str:
    """The error as the hook receives it: the export's `Error: ` prefix dropped, the useful tail
    that the corpus keeps apart joined on. A shell result in Gemini CLI's fields (`Command: …
    Output: (empty) Error: (none) Exit Code: 1`) is read as its hook reads it (agents.gemini):
    the command's own output, then its status."""
    from learn_cli.agents import gemini

    text = (row.get("error_output") or "").removeprefix("Error: ")
    fields = gemini.shell_fields(text)
    if gemini._exit_code(fields) is not None:
        text = "\n".join(filter(None, [f"Exit code {gemini._exit_code(fields)}", gemini._shell_output(fields, text)]))
    tail = row.get("error_tail")
    return f"{text}\n{tail}" if tail and tail not in text else text


# --- pairing -----------------------------------------------------------------------------


def paired(failed: str, ok: str, error: str) -> bool:
    from learn_cli.capture.learner import retried_step
    from learn_cli.text.failure import found_nothing

    if found_nothing(failed, error):
        return False  # a search that matched nothing is taken as a success (capture.events.as_observed)
    return retried_step(failed, ok, error) is not None


def pairing(rows: list[dict], verbose: bool) -> dict:
    sys.path.insert(0, str(ROOT))
    retries = [r for r in rows if r["label"] == "retry" and r.get("retry_command")]
    others = [r for r in rows if r["label"] != "retry" and r.get("next_command")]
    missed = [r for r in retries
              if not paired(as_sent(r["failed_command"], export_of(r)), as_sent(r["retry_command"], export_of(r)),
                            error_text(r))]
    false = [r for r in others
             if paired(as_sent(r["failed_command"], export_of(r)), as_sent(r["next_command"], export_of(r)),
                       error_text(r))]
    found = len(retries) - len(missed)
    if verbose:
        for title, group, second in (("missed", missed, "retry_command"), ("false pair", false, "next_command")):
            for r in group:
                print(f"{title} {r['id']} [{r.get('retry_kind') or r['label']}]\n  failed: "
                      f"{_one_line(r['failed_command'])[:160]}\n  then:   {_one_line(r[second])[:160]}")
    return {"retries": len(retries), "paired": found, "recall": round(found / max(1, len(retries)), 3),
            "others": len(others), "false_pairs": len(false),
            "precision": round(found / max(1, found + len(false)), 3)}


# --- recurrence --------------------------------------------------------------------------


def replay_kit():
    """`../shared/tools/replay.py`, loaded as a module (bench/causal_oracle.py uses it too)."""
    spec = importlib.util.spec_from_file_location("replay_kit", REPLAY_KIT)
    if spec is None or not REPLAY_KIT.is_file():
        raise SystemExit(f"bench: the replay kit is not at {REPLAY_KIT}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class _Sessions:
    """One fresh store per case; every hook runs in the replay kit's in-process worker (the
    installed `learn`'s `hook.handle`), the store folder passed with each payload."""

    def __init__(self, kit, learn: str, base: str):
        self.replayer = kit.Replayer(learn, base=base)  # (runs `learn hooks install` once, as the kit does)
        self.case = 0

    def start_case(self) -> None:
        self.case += 1
        self.home = os.path.join(self.replayer.base, f"store-{self.case}")

    def session(self, project: str, steps: list[tuple[str, str, str]]) -> str:
        """Run one session of (command, outcome, error) in `project`; the answer to its last failure."""
        root = self.replayer.project(f"case{self.case}-{project}", f"https://github.com/example/{project}.git")
        sid = f"{self.case}-{project}-{len(steps)}-{os.urandom(4).hex()}"
        fire = self._fire_in(root, sid)
        fire("SessionStart", source="startup", model="claude-sonnet-4-6")
        fire("UserPromptSubmit", permission_mode="default", prompt="carry on")
        answer = ""
        for n, (command, outcome, error) in enumerate(steps):
            call = {"permission_mode": "default", "tool_name": "Bash", "tool_use_id": f"toolu_{sid}_{n}",
                    "tool_input": {"command": command, "description": ""}}
            fire("PreToolUse", **call)
            if outcome == "ok":
                fire("PostToolUse", duration_ms=100, tool_response={
                    "stdout": "", "stderr": "", "interrupted": False, "isImage": False, "noOutputExpected": False},
                     **call)
            else:
                answer = fire("PostToolUseFailure", error=error, is_interrupt=False, duration_ms=100, **call)
        fire("Stop", permission_mode="default", stop_hook_active=False, last_assistant_message="")
        fire("SessionEnd", reason="other")
        return answer

    def _fire_in(self, root: str, sid: str):
        rp = self.replayer

        def fire(event: str, **fields) -> str:
            payload = {"session_id": sid, "transcript_path": os.path.join(rp.user, f"{sid}.jsonl"), "cwd": root,
                       "hook_event_name": event, **fields}
            out = rp._run_inproc(payload, root, {"CLAUDE_PROJECT_DIR": root, "CLAUDE_CODE_SESSION_ID": sid,
                                                 "SELF_LEARNING_HOME": self.home})
            answer = json.loads(out) if isinstance(out, str) and out else out
            context = (answer or {}).get("hookSpecificOutput") or {}
            return context.get("additionalContext") or ""

        return fire


def _uncut(command: str) -> str:
    """The command without an export's cut mark, and without its comment lines (`# try a custom
    path⏎PLAYWRIGHT_BROWSERS_PATH=… npx playwright install`): the kit would take `#` for the
    program the agent ran."""
    lines = [line for line in command.split("\n") if not line.lstrip().startswith("#")]
    return "\n".join(lines).rstrip().removesuffix("…").rstrip()


def _judge(kit, answer: str, failed: str, fix: str) -> str:
    offer = kit.parse_offer(answer)
    if not offer:
        return "none"
    # An export cut both commands with "…" (`python -c " import json…`): the kit takes the "…"
    # off an offered fix (learn's own shortening) and would then look for `json` in `json…`.
    done = {"cmd": _uncut(fix), "between": []}
    ok = kit.offer_matches(offer, {"cmd": _uncut(failed), "root": "/nonexistent"}, done)
    return "right" if ok else "wrong"


def recurrence(rows: list[dict], learn: str, verbose: bool) -> dict:
    kit = replay_kit()
    cases = [r for r in rows if r["label"] == "retry" and r.get("retry_outcome", "success") == "success"
             and r.get("retry_command")]
    base = tempfile.mkdtemp(prefix="learn-corpus-")
    sessions = _Sessions(kit, learn, base)
    tally = {"same": {"right": 0, "wrong": 0, "none": 0}, "third": {"right": 0, "wrong": 0, "none": 0}}
    try:
        for r in cases:
            agent = export_of(r)
            failed, fix, error = as_sent(r["failed_command"], agent), as_sent(r["retry_command"], agent), error_text(r)
            pair = [(failed, "fail", error), (fix, "ok", "")]
            sessions.start_case()
            sessions.session("a", pair)
            answer = sessions.session("a", [(failed, "fail", error)])
            same = _judge(kit, answer, failed, fix)
            sessions.start_case()
            sessions.session("a", pair)
            sessions.session("b", pair)
            third = _judge(kit, sessions.session("c", [(failed, "fail", error)]), failed, fix)
            tally["same"][same] += 1
            tally["third"][third] += 1
            if verbose and (same != "right" or third != "right"):
                print(f"{r['id']}: same project {same}, third project {third}\n  failed: {failed[:160]}\n"
                      f"  fix:    {fix[:160]}\n  answer: {_one_line(answer)[:240]}")
    finally:
        sessions.replayer.close()
        shutil.rmtree(base, ignore_errors=True)
    for problem in sessions.replayer.errors if verbose else []:
        print(f"hook problem: {problem}")  # an exception the real hook would have swallowed
    return {"cases": len(cases), **{f"{where}_{k}": v for where, t in tally.items() for k, v in t.items()},
            "hook_problems": len(sessions.replayer.errors)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("measure", choices=("pairing", "recurrence"))
    parser.add_argument("files", nargs="+")
    parser.add_argument("--part", choices=("all", "tune", "held"), default="all")
    parser.add_argument("--learn", default=str(ROOT / ".venv" / "bin" / "learn"))
    parser.add_argument("-v", "--verbose", action="store_true", help="list every miss")
    args = parser.parse_args(argv)
    rows = load(args.files, args.part)
    result = pairing(rows, args.verbose) if args.measure == "pairing" else recurrence(rows, args.learn, args.verbose)
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
