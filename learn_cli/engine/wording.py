"""How a learning's fix is said, by the kind of fix (issue 10, cause 6). The one place.

The hook's answer, the session-start digest, `learn flush`, `stats`, `graph`, `recall` and the
record's own `context` all phrase a fix through here, so they say the same thing about it:

| kind      | the fix is                              | as a rule (digest, CLAUDE.md)          | as the hook's answer                          |
|-----------|-----------------------------------------|----------------------------------------|-----------------------------------------------|
| `retry`   | a corrected command                     | "`X` fails: use `Y` instead."          | "`Y` instead of `X`"                          |
| `between` | commands to run before the same command | "`X` fails: run `Y` first."            | "run `Y` first, then retry `X`"               |
| `edit`    | files edited before the same command    | "`X` fails: edit `a.py` first."        | "edit `a.py` first (it fixed this before), then retry" |
| `path`    | the right path for a file tool          | "`Read x` fails: use `y` instead."     | "use `y` instead"                             |
| `cwd`     | the folder the same command works from  | "`X` fails: run it from `dir`."        | "`cd /abs/dir && X` instead of `X`" (X: the command that just failed) |

A fix that is prose (a correction, a hand-written rule) is shown as it is. Stdlib only: the
hook path imports it.
"""  # noqa: E501 - a Markdown table, one row a line

from __future__ import annotations

KINDS = ("retry", "between", "edit", "path", "cwd")

# kind -> (after "`X` fails (category): ", the hook's body); `{fix}` and `{failed}` are filled in.
_PHRASES = {
    "retry": ("use `{fix}` instead.", "`{fix}` instead of `{failed}`"),
    "between": ("run `{fix}` first.", "run `{fix}` first, then retry `{failed}`"),
    "edit": ("edit `{fix}` first.", "edit `{fix}` first (it fixed this before), then retry"),
    "path": ("use `{fix}` instead.", "use `{fix}` instead"),
    "cwd": ("run it from `{fix}`.", "`cd {fix} && {failed}` instead of `{failed}`"),
}
_WITHOUT_FAILED = {"retry": "use `{fix}` instead", "between": "run `{fix}` first, then retry"}


def fix_kind(rec: dict) -> str:
    """The kind of a record's fix (table above), or "advice" for a fix in prose."""
    kind = rec.get("fix_kind")
    if kind in _PHRASES:
        return kind
    return "retry" if isinstance(rec.get("fix_command"), str) and rec["fix_command"].strip() else "advice"


def steps(fix: str) -> list[str]:
    """The commands of a stored fix (`a && b` is two steps)."""
    return [s.strip() for s in (fix or "").split(" && ") if s.strip()]


def shown_fix(fix: str, kind: str) -> str:
    """The fix as it is shown: an edit fix names its files (`edit a.py && edit b.py` → `a.py, b.py`)."""
    if kind == "edit":
        return ", ".join(step.removeprefix("edit ") for step in steps(fix))
    if kind == "cwd":
        return fix.removeprefix("cd ").strip() or "."
    return fix


def rule_split(kind: str) -> tuple[str, str]:
    """The rule's words before and after the fix: ("use `", "` instead.")."""
    before, _, after = _PHRASES[kind][0].partition("{fix}")
    return before, after


def action(rec: dict, width: int = 200) -> str:
    """What to do, in words, without the failed command: "run `npm install express` first",
    "use `python -m pytest` instead", "run it from `web`" (recall's and show's "Fix:" line)."""
    fix = rec.get("fix_command") or rec.get("fix") or ""
    fix = fix if isinstance(fix, str) else ""
    kind = fix_kind(rec)
    if kind == "advice" or not fix.strip():
        return " ".join(fix.split())[:width]
    before, after = rule_split(kind)
    return f"{before}{_bare(shown_fix(fix, kind), width)}{after}".rstrip(".")


def rule_text(failed: str, category: str, fix: str, kind: str, width: int = 160) -> str:
    """The rule a learning states: "`<failed>` fails (<category>): <what to do>"."""
    before, after = rule_split(kind if kind in _PHRASES else "retry")
    return f"{quote(failed, 120)} fails ({category}): {before}{_bare(shown_fix(fix, kind), width)}{after}"


def hook_body(kind: str, fix: str, failed: str) -> str:
    """What the hook says after "known fix (seen …): " (fix and failed already made safe)."""
    kind = kind if kind in _PHRASES else "retry"
    template = _PHRASES[kind][1] if failed or kind not in _WITHOUT_FAILED else _WITHOUT_FAILED[kind]
    return template.format(fix=shown_fix(fix, kind), failed=failed)


def quote(text: str, cap: int) -> str:
    """Code in backticks on one line, cut to cap characters."""
    return f"`{_bare(text, cap)}`"


def _bare(text: str, cap: int) -> str:
    text = " ".join(text.split()).replace("`", "'")
    return text[: cap - 1] + "…" if len(text) > cap else text
