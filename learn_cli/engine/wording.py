"""How a learning's fix is said, by the kind of fix (issue 10, cause 6). The one place.

The hook's answer, the session-start digest, `learn flush`, `stats`, `graph`, `recall` and the
record's own `context` all phrase a fix through here, so they say the same thing about it:

| kind      | the fix is                              | as a rule (digest, CLAUDE.md)          | as the hook's answer                          |
|-----------|-----------------------------------------|----------------------------------------|-----------------------------------------------|
| `retry`   | a corrected command                     | "`X` fails: use `Y` instead."          | "`Y` instead of `X`"                          |
| `between` | commands to run before the same command | "`X` fails: run `Y` first."            | "run `Y` first, then retry `X`"               |
| `edit`    | files edited before the same command    | "`X` fails: edit `a.py` first."        | "edit `a.py` first (it fixed this before), then retry" |
| `path`    | the right path for a file tool          | "`Read x` fails: use `y` instead."     | "use `y` instead"                             |
| `cwd`     | the folder the same command works from  | "`X` fails: run it from `dir`." (the root: "from the project's root folder.") | "`cd /abs/dir && X` instead of `X`" (X: the command that just failed) |

A `retry` that dropped a `cd D` that failed (`cd D && X` failed at its `cd`, X alone worked) is
a rule about where the shell is: agents' shells keep their folder between calls, and `cd D`
fails once the shell is in D already. Said as "use `X` instead." it would mislead a session that
starts at the project's root, where the `cd` is needed: the rule says "drop `cd D` when the
shell is in it." everywhere (the hook's change line too).

The hook's answer then says the change in words: a `retry` its essential change ("drop `-q`",
engine.fixwords), a `cwd` the rule's words ("run it from the project's root folder"). A fix
that is prose (a correction, a hand-written rule) is shown as it is. Stdlib only: the hook
path imports it.
"""  # noqa: E501 - a Markdown table, one row a line

from __future__ import annotations

from learn_cli.store.record import fix_steps as steps  # the one split of a fix into its commands

KINDS = ("retry", "between", "edit", "path", "cwd")

# kind -> (after "`X` fails (category): ", the hook's body); `{fix}` and `{failed}` are filled in.
_PHRASES = {
    "retry": ("use `{fix}` instead.", "`{fix}` instead of `{failed}`"),
    "between": ("run `{fix}` first.", "run `{fix}` first, then retry `{failed}`"),
    "edit": ("edit `{fix}` first.", "edit `{fix}` first (it fixed this before), then retry"),
    "path": ("use `{fix}` instead.", "use `{fix}` instead"),
    "cwd": ("run it from `{fix}`.", "`cd {fix} && {run}` instead of `{failed}`"),
}
_WITHOUT_FAILED = {"retry": "use `{fix}` instead", "between": "run `{fix}` first, then retry"}


def fix_kind(rec: dict) -> str:
    """The kind of a record's fix (table above), or "advice" for a fix in prose.

    A record made without a kind (by hand, by an older version, by another tool's export)
    is read from its commands: the failed command run again is not the fix, the prose says
    what changed ("advice"); a command that changes state for another job is a step to run
    first (`chmod +x run.sh` before `bash run.sh`, `git pull` before `git push`); anything
    else is the corrected command."""
    kind = rec.get("fix_kind")
    if kind in _PHRASES:
        return kind
    fix_command = _text(rec.get("fix_command"))
    if not fix_command:
        return "advice"
    command = _text(rec.get("command"))
    if command == fix_command:
        return "advice"
    return "between" if command and _step_first(command, fix_command) else "retry"


def stated_fix(rec: dict) -> str:
    """The fix a record states, as stored: the command of a command fix, the prose of advice
    (or its command when it has no prose)."""
    if fix_kind(rec) == "advice":
        return _text(rec.get("fix")) or _text(rec.get("fix_command"))
    return _text(rec.get("fix_command")) or _text(rec.get("fix"))


def _text(value) -> str:
    return " ".join(value.split()) if isinstance(value, str) else ""


_STEP_FIRST: dict[tuple[str, str], bool] = {}  # a process's verdicts: a digest asks of each shown rule thrice


def _step_first(command: str, fix_command: str) -> bool:
    from learn_cli.engine.goals import same_job
    from learn_cli.text.effects import is_mutating
    from learn_cli.text.shell import unwrap

    known = _STEP_FIRST.get((command, fix_command))
    if known is None:
        failed, fix = unwrap(command), unwrap(fix_command)
        known = is_mutating(fix_command) and not same_job(failed, fix) and doing(failed) != doing(fix)
        if len(_STEP_FIRST) >= 4096:
            _STEP_FIRST.clear()
        _STEP_FIRST[command, fix_command] = known
    return known


def doing(tokens: list[str]) -> tuple:
    """A command's program and subcommand (`docker build -f x .` -> ("docker", "build")): the
    same two run otherwise are the command corrected, not a step before it."""
    words = [t for t in tokens[1:] if not t.startswith("-")]
    return (tokens[0] if tokens else "", words[0] if words else "")


def shown_fix(fix: str, kind: str) -> str:
    """The fix as it is shown: an edit fix names its files (`edit a.py && edit b.py` → `a.py, b.py`)."""
    if kind == "edit":
        return ", ".join(step.removeprefix("edit ") for step in steps(fix))
    if kind == "cwd":
        return fix.removeprefix("cd ").strip() or "."
    return fix


def rule_parts(kind: str, fix: str, cd_dropped: str = "") -> tuple[str, str, str, bool]:
    """The rule's words before the fix, the fix as shown, the words after it, and whether the
    fix is code: ("use `", "python -m pytest", "` instead.", True). The project's own folder, a
    `cwd` fix of `.`, is said in words: "run it from the project's root folder." (not "from
    `.`", which says nothing in a digest). `cd_dropped`: the folder of a `cd` that failed,
    which the fix dropped (failed_cd_dropped)."""
    kind = kind if kind in _PHRASES else "retry"
    if kind == "retry" and cd_dropped:
        return "drop `", f"cd {cd_dropped}", ALREADY_THERE, True
    shown = shown_fix(fix, kind)
    if kind == "cwd" and shown == ".":
        return "run it from the project's ", ROOT_FOLDER, ".", False
    before, _, after = _PHRASES[kind][0].partition("{fix}")
    return before, shown, after, True


ROOT_FOLDER = "root folder"
ALREADY_THERE = "` when the shell is in it."


def failed_cd_dropped(command: str, fix: str, error: str) -> str:
    """The folder D when the lesson is "drop `cd D`": `command` is `cd D && X`, the error says
    the `cd` itself failed, and the fix is X alone; "" otherwise (a `cd build && make` that
    failed in `make`, fixed by `make` from the root, is a corrected command at any time)."""
    from learn_cli.text.shell import cd_failed, dropped_cd

    folder = dropped_cd(command, fix) if command.startswith("cd") else None
    return folder if folder and cd_failed(error, folder) else ""


def cd_dropped_of(rec: dict) -> str:
    """failed_cd_dropped of a record: the folder of the `cd` its fix dropped, or ""."""
    if fix_kind(rec) != "retry":
        return ""
    error = rec.get("error") if isinstance(rec.get("error"), str) else ""
    return failed_cd_dropped(_text(rec.get("command")), stated_fix(rec), error)


def action(rec: dict, width: int = 200) -> str:
    """What to do, in words, without the failed command: "run `npm install express` first",
    "use `python -m pytest` instead", "run it from `web`" (recall's and show's "Fix:" line)."""
    fix, kind = stated_fix(rec), fix_kind(rec)
    if kind == "advice" or not fix:
        return fix[:width]
    return _rule_end(kind, fix, width, cd_dropped_of(rec)).rstrip(".")


def rule_text(failed: str, category: str, fix: str, kind: str, width: int = 160, error: str = "") -> str:
    """The rule a learning states: "`<failed>` fails (<category>): <what to do>"."""
    cd_dropped = failed_cd_dropped(failed, fix, error) if kind == "retry" else ""
    return f"{quote(failed, 120)} fails ({category}): {_rule_end(kind, fix, width, cd_dropped)}"


def _rule_end(kind: str, fix: str, width: int, cd_dropped: str = "") -> str:
    before, shown, after, _code = rule_parts(kind, fix, cd_dropped)
    return "".join(fenced(before, _bare(shown, width), after))


def hook_body(kind: str, fix: str, failed: str, run: str = "") -> str:
    """What the hook says after "known fix (seen …): " (fix and failed already made safe);
    `run` is what a `cwd` fix runs from its folder, when not the whole failed command (which
    began with a `cd` of its own, that would undo the fix's)."""
    kind = kind if kind in _PHRASES else "retry"
    template = _PHRASES[kind][1] if failed or kind not in _WITHOUT_FAILED else _WITHOUT_FAILED[kind]
    values = {"fix": shown_fix(fix, kind), "failed": failed, "run": run or failed}
    pieces = template.split("`")  # every other piece is code: fenced to show it whole
    return "".join(code_span(piece.format(**values)) if i % 2 else piece.format(**values)
                   for i, piece in enumerate(pieces))


def code_span(text: str) -> str:
    """`text` as inline code, shown whole: a command's own backticks (`mysql -e "SELECT
    \\`year_month\\`"`) kept, the span fenced by one backtick more than the longest run of them
    inside and padded (CommonMark's rule), rather than turned into quotes that change what the
    command does."""
    if "`" not in text:
        return f"`{text}`"
    longest = run = 0
    for ch in text:
        run = run + 1 if ch == "`" else 0
        longest = max(longest, run)
    fence = "`" * (longest + 1)
    return f"{fence} {text} {fence}"


def quote(text: str, cap: int) -> str:
    """Code in backticks on one line, cut to cap characters."""
    return "".join(fenced("`", _bare(text, cap), "`"))


def _bare(text: str, cap: int) -> str:
    text = " ".join(text.split())
    return text[: cap - 1] + "…" if len(text) > cap else text


def fenced(before: str, code: str, after: str) -> tuple[str, str, str]:
    """The single backticks that `before` ends and `after` starts with, around `code`, widened
    for the backticks it holds, as code_span does (`` a `b` ``): the lines of the digest, stats
    and recall show a command as the hook does. Runs of two (rare) become quotes there: those
    lines are sanitized whole, and a fence of three is taken apart as a code block's."""
    if "`" not in code or not before.endswith("`") or not after.startswith("`"):
        return before, code, after
    if "``" in code:
        return before, code.replace("`", "'"), after
    return before + "` ", code, " `" + after
