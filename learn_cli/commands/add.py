"""`learn add TEXT`: store a learning without questions. Also the shared logic of the
interactive `learn`: where TEXT goes, which type and category to suggest, validation.

Where TEXT goes (documented in docs/cmd-add.md):
- TEXT that reads like an error message (`ModuleNotFoundError: …`, `npm ERR! …`, `error: …`,
  `Permission denied`, …) of an error learning is stored as its `error`, so its key is an
  error key and automatic capture finds it the next time that failure happens anywhere;
- any other TEXT is stored as its `context` (what was learned / being done);
- `--context` and `--error` fill their fields explicitly; TEXT then takes the other one
  (a usage error when it has no place left).
Type and category, when not given: an error message (or `--error`) → type error, category by
the capture classifier; other text → the first keyword rule of `HINTS` that matches, else
pattern/coding. A category alone decides the type (`config` → error, `testing` → workflow, …).
"""

from __future__ import annotations

import re
from functools import cache

import typer

from learn_cli.commands._common import EXIT_USAGE, current_project, fail, json_out, open_store, state
from learn_cli.text.failure import CATEGORIES

TYPE_OF_CATEGORY = {
    **{c: "error" for c in CATEGORIES},
    "workflow": "pattern", "coding": "pattern", "deployment": "pattern",
    "tooling": "preference", "style": "preference",
    "ci-cd": "workflow", "testing": "workflow",
}
DEFAULT_IMPACT = 0.7
MAX_TAGS = 20

# (pattern over lower-cased text, type, category); the first match wins.
HINTS = (
    (r"\b(ci|ci/cd|pipeline|github actions|gitlab-ci|jenkins)\b", "workflow", "ci-cd"),
    (r"\b(tests?|pytest|jest|vitest|unittest|coverage|fixtures?)\b", "workflow", "testing"),
    (r"\b(indent\w*|tabs|spaces|naming|formatting|code style|quotes|line length)\b", "preference", "style"),
    (r"\b(prefer|instead of|rather than|don'?t use|do not use|never use)\b|\buse \S+,? not\b", "preference", "tooling"),
    (r"\b(deploy\w*|release|production|staging|rollout)\b", "pattern", "deployment"),
    (r"(^|\s)--?[a-z]|\b(config\w*|env|environment variable|settings?|flags?|options?|platform)\b", "error", "config"),
)


@cache
def _error_re() -> re.Pattern:
    return re.compile(
        r"traceback \(most recent call last\)|\b\w+(error|exception)\b|(^|\n)\s*(error|fatal|panic)\b[:\[]|"
        r"\berror:|\berr!|permission denied|no such file or directory|command not found|cannot find module|"
        r"\bcannot (open|find|import|load|resolve|read|write)\b|connection refused|timed out|"
        r"segmentation fault|exit (code|status) \d+|\b[ew]\d{4}\b", re.IGNORECASE)


def looks_like_error(text: str) -> bool:
    return bool(_error_re().search(text or ""))


def suggest(text: str) -> tuple[str, str]:
    """(type, category) for a learning given only its text."""
    if looks_like_error(text):
        from learn_cli.text.failure import categorize

        return "error", categorize(text)
    low = (text or "").lower()
    for pattern, rtype, category in HINTS:
        if re.search(pattern, low):
            return rtype, category
    return "pattern", "coding"


def check_category(category: str) -> str:
    value = category.strip().lower()
    if not re.fullmatch(r"[a-z][a-z0-9-]{0,39}", value):
        fail(f"--category must be one lower-case word such as config or ci-cd (got {category!r})", EXIT_USAGE)
    return value


def check_impact(impact: float, name: str = "--impact") -> float:
    if not 0.0 <= impact <= 1.0:  # also rejects nan
        fail(f"{name} must be between 0.0 and 1.0 (got {impact})", EXIT_USAGE)
    return round(float(impact), 2)


def build_record(text: str, *, fix: str | None = None, type_: str | None = None, category: str | None = None,
                 impact: float = DEFAULT_IMPACT, context: str | None = None, error: str | None = None,
                 tags: list[str] | None = None) -> dict:
    """A new manual learning from user input: validated, placed, redacted and capped."""
    from learn_cli.store.record import FIELD_CAPS, TYPES, make_record
    from learn_cli.text.redact import redact

    text = (text or "").strip()
    if not text:
        fail("nothing to store: TEXT is empty", EXIT_USAGE)
    if type_ is not None and type_.strip().lower() not in TYPES:
        fail(f"--type must be one of {', '.join(TYPES)} (got {type_!r})", EXIT_USAGE)
    impact = check_impact(impact)
    category = check_category(category) if category is not None else None
    rtype = type_.strip().lower() if type_ else None
    guessed_type, guessed_category = suggest(text)
    rtype = (rtype or (TYPE_OF_CATEGORY.get(category) if category else None)
             or ("error" if (error or "").strip() else guessed_type))
    if category is None:
        category = guessed_category if TYPE_OF_CATEGORY.get(guessed_category) == rtype else _default_category(rtype)
    fields = _place(text, rtype, context, error)
    rec = make_record(type=rtype, category=category, fix=(fix or "").strip(), impact=impact, source="manual",
                      status="active", **fields)
    for field, cap in FIELD_CAPS.items():
        if isinstance(rec.get(field), str):
            rec[field] = redact(rec[field])[:cap]
    clean_tags = []
    for tag in tags or []:
        tag = " ".join(redact(tag).split()).lower()[:40]
        if tag and tag not in clean_tags:
            clean_tags.append(tag)
    if clean_tags:
        rec["tags"] = clean_tags[:MAX_TAGS]
    return rec


def _default_category(rtype: str) -> str:
    from learn_cli.store.record import DEFAULT_CATEGORY

    return DEFAULT_CATEGORY.get(rtype, "coding")


def _place(text: str, rtype: str, context: str | None, error: str | None) -> dict:
    """Put TEXT in `error` or `context` (see the module docstring)."""
    context = (context or "").strip() or None
    error = (error or "").strip() or None
    if error and rtype != "error":
        fail(f"--error is for error learnings; this one is a {rtype}", EXIT_USAGE)
    slots = ["error", "context"] if rtype == "error" and looks_like_error(text) else ["context", "error"]
    if rtype != "error":
        slots.remove("error")
    given = {"context": context, "error": error}
    for slot in slots:
        if given[slot] is None:
            given[slot] = text
            break
    else:
        if rtype != "error":
            fail(f"TEXT is the context of a {rtype} learning, and --context is given too (drop one)", EXIT_USAGE)
        fail("TEXT has no place: --context and --error are both given (drop one, or TEXT)", EXIT_USAGE)
    return {k: v for k, v in given.items() if v is not None}


def store_learning(st, rec: dict, to_global: bool):
    """Remember `rec` in this project (or globally); returns (Outcome, where-label, store)."""
    from learn_cli.engine.knowledge import remember

    store = open_store(st)
    project = current_project(st)
    outcome = remember(store, project, rec, to_global=to_global)
    where = "global" if to_global else store.projects().get(project.id, {}).get("label", project.name)
    return outcome, where, store


def report(outcome, where: str, store, as_json: bool) -> None:
    if as_json:
        json_out({
            "id": outcome.record["id"],
            "file": (str(outcome.path.relative_to(store.home)) if outcome.path.is_relative_to(store.home)
                     else str(outcome.path)),
            "merged": outcome.merged,
            "frequency_before": outcome.before_frequency,
            "global_merge": ({"before": outcome.global_merge[0], "after": outcome.global_merge[1]}
                             if outcome.global_merge else None),
            "record": outcome.record,
        })
        return
    from learn_cli.render.learning import captured

    captured(outcome.record, where, outcome.path, outcome.before_frequency if outcome.merged else None,
             outcome.global_merge, store.home)


def command(
    ctx: typer.Context,
    text: str = typer.Argument(..., metavar="TEXT", show_default=False,
                               help="What you learned (an error message, a rule, a preference)."),
    fix: str = typer.Option(None, "--fix", help="What fixes it / what to do.", show_default=False),
    type_: str = typer.Option(None, "--type", show_default=False,
                              help="error, pattern, preference or workflow (default: guessed)."),
    category: str = typer.Option(None, "--category", show_default=False,
                                 help="e.g. config, dependency, testing (default: guessed)."),
    impact: float = typer.Option(DEFAULT_IMPACT, "--impact", help="How much it matters, 0.0 to 1.0."),
    context: str = typer.Option(None, "--context", help="What was being done (default: TEXT).", show_default=False),
    error: str = typer.Option(None, "--error", show_default=False,
                              help="The error text (default: TEXT when it reads like one)."),
    tag: list[str] = typer.Option(None, "--tag", help="A keyword; repeat for more.", show_default=False),
    global_: bool = typer.Option(False, "--global", help="Store it as a global learning (all projects)."),
    as_json: bool = typer.Option(False, "--json", help="Machine-readable result (see `learn help add`)."),
) -> None:
    rec = build_record(text, fix=fix, type_=type_, category=category, impact=impact, context=context,
                       error=error, tags=tag)
    outcome, where, store = store_learning(state(ctx), rec, global_)
    report(outcome, where, store, as_json)
