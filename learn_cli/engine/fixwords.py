"""The essential change of a fix, in words: "drop `-q`", "`make` → `cmake --build build`".

A learning stores the failed command and the whole fix; the agent reading it later needs the
difference. `essential_change(failed, fix, kind)` states it when a short statement is clearer
than the full command, else returns "":

- kind "path": "use path `src/app.py`"; kind "between": "run `pip install requests` first";
- kind "retry": both commands without plumbing (text.shell.normalize_command) are compared
  step by step (the segments of `a && b`), then word by word inside a changed step:
  - steps added before a step that stays: "run `git fetch origin b` first" (a lone `cd X`:
    "run it from `X`"); added at the end: "then run `X`";
  - steps dropped: "drop `cd circuits/vote`"; steps added after that only read (`&& ls`)
    are left out: they look, they do not fix; the last step the output was piped into,
    dropped: "drop `| jq .`";
  - inside a step: words only removed -> "drop `-q`"; only added -> "add `--release`" (the
    same change to several steps is said once);
    added in front of the program -> "`pytest` → `python -m pytest`"; replaced ->
    "`--no-commit` → `--force`", or the whole step when its program changed;
  - more than two changes, a step piped into another or no longer (the steps are not run
    one after the other), or a statement about as long as the fix: "";
  - the same steps: a `timeout N` prefix dropped after it was not installed ("drop
    `timeout 60`"), glob words quoted after zsh found no match ("quote `fastapi[all]`"),
    else "".
Other kinds ("edit", "") get "", and so does a command an export cut short (`…`). Stdlib only;
nothing compiled at import.
"""

from __future__ import annotations

from learn_cli.text.shell import TRUNCATION, normalize_command, split_segments_ops, tokenize, windows_alike

__all__ = ["essential_change"]

MAX_PHRASES = 2  # beyond this the full command says it better
MAX_WORDS = 12  # a side of a `a → b` statement longer than this is no summary
MAX_TOKEN = 60  # a longer word is code or a message
MAX_STATEMENT = 120  # characters: a longer statement is no clearer than the command


def essential_change(failed: str, fix: str, kind: str) -> str:
    """The change from `failed` to `fix` in a few words, or "" (see the module doc)."""
    fix = " ".join((fix or "").split())
    if not fix:
        return ""
    if kind == "path":
        return f"use path {_code(fix)}"
    if kind == "between":
        return f"run {_code(fix)} first"
    if kind != "retry" or not failed or TRUNCATION in failed or TRUNCATION in fix:
        return ""  # (a command an export cut short has lost words: its difference is a guess)
    (old, old_pipes), (new, new_pipes) = _steps(failed), _steps(fix)
    if old == new:  # the same work: only its plumbing or its quoting can have changed
        return _timeout_phrase(failed, fix) or _quote_phrase(failed, fix) or _semicolon_phrase(failed, fix)
    if old_pipes == new_pipes + 1 and old[:len(new)] == new and len(old) == len(new) + 1 and new:
        return f"drop {_code('| ' + _words(old[-1]))}"  # `curl -s URL | jq .` -> `curl -s URL`
    if not old or not new or old_pipes != new_pipes:
        return ""  # (a step piped in, `echo beijing | python main.py`, is no step run first)
    phrases = _step_phrases(old, new)
    if not phrases or len(phrases) > MAX_PHRASES or not all(phrases):
        return ""
    text = "; ".join(phrases)
    return text if len(text) <= MAX_STATEMENT and len(text) < len(fix) + 24 else ""


def _timeout_phrase(failed: str, fix: str) -> str:
    """"drop `timeout 60`" (not installed: a Mac without coreutils), else ""."""
    from learn_cli.text.shell import timeout_prefixes

    old = timeout_prefixes(failed)
    return f"drop {_code(old[0])}" if old and not timeout_prefixes(fix) else ""


def _semicolon_phrase(failed: str, fix: str) -> str:
    """"join the steps with `;`, not `&&`" (Windows PowerShell 5), else ""."""
    from learn_cli.text.shell import semicolons_for_ands

    return "join the steps with `;`, not `&&`" if semicolons_for_ands(failed, fix) else ""


def _quote_phrase(failed: str, fix: str) -> str:
    """"quote `fastapi[all]`" (a glob zsh found no match for; a Windows path bash took the
    backslashes of), else ""."""
    from learn_cli.text.shell import words_to_quote

    still_bare = set(words_to_quote(fix))
    quoted = [word for word in words_to_quote(failed) if word not in still_bare]
    return f"quote {', '.join(_code(word) for word in quoted[:MAX_PHRASES])}" if quoted else ""


class _Step(tuple):
    """A step's words (compared as a tuple), and the step as it was written (`text`): what a
    phrase that names the whole step shows, so that its quoting stays the shell's. Words
    quoted again would not: `export JAVA_HOME=$(/usr/libexec/java_home -v 17)` single-quoted
    sets JAVA_HOME to the words `$(…)` (round 17)."""

    text = ""


def _step(segment: str) -> _Step:
    step = _Step(tokenize(segment))
    step.text = " ".join(segment.split())
    return step


def _steps(command: str) -> tuple[list[tuple[str, ...]], int]:
    """The steps of a command (its segments), each as words, plumbing removed; and how many of
    them feed the next one (plumbing such as `| tail` removed)."""
    parts = split_segments_ops(normalize_command(command))
    steps = [step for step in (_step(seg) for seg, _op in parts) if step]
    return steps, sum(op in ("|", "|&") for _seg, op in parts)


def _step_phrases(old: list[tuple[str, ...]], new: list[tuple[str, ...]]) -> list[str] | None:
    phrases: list[str] = []
    for tag, a, b, start in _diff(old, new):
        if tag == "insert" and start < len(old):
            phrases.append(_run_first(b))  # before a step that stays: a step the job needed first
        elif tag == "insert":
            if all(_only_reads(step) for step in b):
                continue  # `&& ls src`: looking at the result
            phrases.append(f"then run {_code(_join_steps(b))}")
        elif tag == "delete":
            phrases.append(f"drop {_code(_join_steps(a))}")
        elif len(a) == len(b) and (len(a) == 1 or all(x[:1] == y[:1] for x, y in zip(a, b, strict=True))):
            for x, y in zip(a, b, strict=True):  # each step changed on its own (several: the same
                inner = _word_phrases(x, y)  # program each); a change to both cmake steps (`-q`
                if inner is None:  # dropped) is said once
                    return None
                phrases.extend(p for p in inner if p not in phrases)
        elif len(a) + len(b) <= 3 and all(len(step) <= MAX_WORDS for step in [*a, *b]):
            phrases.append(f"{_code(_join_steps(a))} → {_code(_join_steps(b))}")  # `make` → `cd build && make -j4`
        else:
            return None
    return phrases


def _run_first(steps: list[tuple[str, ...]]) -> str:
    if len(steps) == 1 and steps[0][:1] == ("cd",) and len(steps[0]) == 2:
        return f"run it from {_code(steps[0][1])}"
    return f"run {_code(_join_steps(steps))} first"


def _word_phrases(a: tuple[str, ...], b: tuple[str, ...]) -> list[str] | None:
    """What changed inside one step, or None when it is too much to say briefly. The lines a
    look shows (`sed -n '1,240p'`, then `'1,220p'`) are not what changed."""
    if len(a) == len(b):
        b = tuple(x if windows_alike(x, y) else y for x, y in zip(a, b, strict=True))
    ops = _diff(list(a), list(b))
    if a[:1] != b[:1]:  # the program changed
        if len(ops) == 1 and ops[0][0] != "replace":
            _tag, x, y, _start = ops[0]  # a front end added or dropped: name the program with it
            program = a[len(x)] if len(a) > len(x) else ""
            return [_swap([*x, program], [*y, program])]  # `pytest` → `python -m pytest`
        if len(ops) == 1:
            return [_swap(ops[0][1], ops[0][2])]  # `./build.sh` → `bash build.sh`
        return [_swap(list(a), list(b))]  # `make` → `cmake --build build`
    phrases = []
    for tag, x, y, _start in ops:
        if tag == "insert":
            phrases.append(f"add {_code(_words(y))}")
        elif tag == "delete":
            phrases.append(f"drop {_code(_words(x))}")
        else:
            phrases.append(_swap(x, y))
    if len(phrases) > MAX_PHRASES or any(not p for p in phrases):
        return None
    return phrases


def _swap(a: list[str], b: list[str]) -> str:
    """`a` → `b`; "" for long runs or for code and prose (an inline script rewritten is
    said better by the full command)."""
    if len(a) > MAX_WORDS or len(b) > MAX_WORDS or not any(a) or not any(b):
        return ""
    if any(len(t) > MAX_TOKEN or "\n" in t or " " in t.strip() for t in [*a, *b]):
        return ""
    return f"{_code(_words(a))} → {_code(_words(b))}"


def _diff(a: list, b: list) -> list[tuple[str, list, list, int]]:
    """Change runs between two sequences by longest common subsequence:
    (insert|delete|replace, run of a, run of b, where the run starts in a)."""
    n, m = len(a), len(b)
    if n * m > 40_000:
        return [("replace", list(a), list(b), 0)]
    lcs = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(n - 1, -1, -1):
        for j in range(m - 1, -1, -1):
            lcs[i][j] = lcs[i + 1][j + 1] + 1 if a[i] == b[j] else max(lcs[i + 1][j], lcs[i][j + 1])
    ops: list[tuple[str, list, list, int]] = []
    i = j = 0
    run_a: list = []
    run_b: list = []

    def flush() -> None:
        if run_a or run_b:
            tag = "replace" if run_a and run_b else "delete" if run_a else "insert"
            ops.append((tag, run_a.copy(), run_b.copy(), i - len(run_a)))
            run_a.clear()
            run_b.clear()

    while i < n or j < m:
        if i < n and j < m and a[i] == b[j]:
            flush()
            i, j = i + 1, j + 1
        elif j < m and (i == n or lcs[i][j + 1] >= lcs[i + 1][j]):
            run_b.append(b[j])
            j += 1
        else:
            run_a.append(a[i])
            i += 1
    flush()
    return ops


def _only_reads(step: tuple[str, ...]) -> bool:
    from learn_cli.text.effects import is_read_only

    return is_read_only(_words(step))


def _join_steps(steps) -> str:
    return " && ".join(_words(step) for step in steps)


def _words(tokens) -> str:
    return getattr(tokens, "text", "") or " ".join(_quote(t) for t in tokens)


def _quote(token: str) -> str:
    if token and token != "!" and not any(c.isspace() or c in "'\"`$;&|<>(){}*?#" for c in token):
        return token  # (a `!` in a word is history expansion only at an interactive prompt)
    return "'" + token.replace("'", "'\\''") + "'"


def _code(text: str) -> str:
    from learn_cli.engine.wording import code_span

    return code_span(text)
