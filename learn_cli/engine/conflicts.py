"""Learnings that give incompatible advice on the same subject (SPEC §2.1 "Conflict").

Three kinds are found, each in O(n) plus the pairs it reports:

1. **same key, different fixes** – two records with one dedup `key` whose fixes are not
   refinements of each other. A refinement is a fix whose normalised words contain the
   other's in order (`pip install x` → `pip install --user x`) or that is ≥ 0.8 similar;
   a fix that says the opposite of the other ("never X" vs "X") is never a refinement.
2. **reversed** – A→B beside B→A: `command`→`fix_command` (or `error`→`fix`) of one
   record is the other's the other way round.
3. **preference slot** – two statements pick different values of one slot of mutually
   exclusive alternatives (`SLOTS`: "use Jest" vs "use Vitest", "tabs" vs "spaces"), or
   one prefers what the other rejects ("use npm" vs "don't use npm, use pnpm"); plus the
   general negation rule: "never commit .env" vs "always commit .env" (same words once the
   leading never/always/don't/do not are set aside, opposite polarity). Slots and negation
   are read from non-error learnings (preferences, patterns, workflows).

Archived records and records without an id are ignored. By default two records are only
compared when they can be loaded together: they share a project, or one of them is global
(status `global`, or no `projects`). "Use Jest" in one project and "use Vitest" in another
is two projects' facts, not a conflict.
"""

from __future__ import annotations

import re
from functools import cache

from learn_cli.engine.merge import fix_text, normalize_text, text_similarity

REFINEMENT_SIMILARITY = 0.8

# Slot name -> {alias (tuple of words) -> value}. Alternatives within a slot exclude each
# other in one project; two statements conflict when the values they prefer have nothing
# in common ("use uv pip install" prefers both uv and pip, so it agrees with "use pip").
SLOTS: dict[str, dict[tuple[str, ...], str]] = {
    "JS test framework": {("jest",): "jest", ("vitest",): "vitest", ("mocha",): "mocha",
                          ("jasmine",): "jasmine", ("ava",): "ava"},
    "Python test runner": {("pytest",): "pytest", ("unittest",): "unittest",
                           ("nose",): "nose", ("nose2",): "nose"},
    "JS package manager": {("npm",): "npm", ("pnpm",): "pnpm", ("yarn",): "yarn",
                           ("bun",): "bun"},
    "Python package manager": {("pip",): "pip", ("pip3",): "pip", ("poetry",): "poetry",
                               ("uv",): "uv", ("pipenv",): "pipenv", ("pdm",): "pdm",
                               ("conda",): "conda"},
    "indentation": {("tabs",): "tabs", ("tab", "indentation"): "tabs",
                    ("spaces",): "spaces", ("space", "indentation"): "spaces"},
    "quote style": {("single", "quotes"): "single quotes", ("single", "quote"): "single quotes",
                    ("single-quoted",): "single quotes", ("double", "quotes"): "double quotes",
                    ("double", "quote"): "double quotes", ("double-quoted",): "double quotes"},
    "Python formatter": {("black",): "black", ("ruff", "format"): "ruff format",
                         ("yapf",): "yapf", ("autopep8",): "autopep8"},
    "JS formatter": {("prettier",): "prettier", ("biome",): "biome", ("dprint",): "dprint"},
    "line endings": {("lf",): "lf", ("crlf",): "crlf"},
    "container engine": {("docker",): "docker", ("podman",): "podman"},
}
# Slots whose words are too common alone: the statement must also name the subject.
SLOT_SUBJECT = {
    "indentation": {"indent", "indents", "indentation", "indenting", "indented"},
    "indent width": {"indent", "indents", "indentation", "indenting", "indented"},
}
# Words that turn what follows them in a clause into a rejection.
_NEGATORS = {"not", "never", "no", "avoid", "without", "stop", "instead", "rather", "nor"}
_SWITCH_VERBS = {"switch", "switched", "migrate", "migrated", "move", "moved", "change", "changed"}
_PREFER_VERBS = {"prefer", "prefers", "preferred"}
# Words that may open a statement without changing what it is about.
_LEADING_FILLER = {"always", "please", "you", "we", "i", "should", "must", "do", "does",
                   "to", "make", "sure", "ever", "not", "never", "no", "avoid"}
_LEADING_NEGATIVE = {"not", "never", "no", "avoid"}


@cache
def _patterns():
    return (
        re.compile(r"[a-z0-9][a-z0-9+#._-]*[a-z0-9+#]|[a-z0-9]"),
        re.compile(r"[,;:.!?()\[\]]+(?:\s|$)|\s[-–—]+\s|\bbut\b|\bthen\b"),
        re.compile(r"\b(\d{1,2})[\s-]*(?:spaces?|space-indent(?:ed|ation)?)\b"),
    )


# ---------------------------------------------------------------- public


def find_conflicts(records: list[dict], same_scope_only: bool = True) -> list[tuple[str, str, str]]:
    """Pairs of learnings that give incompatible advice: [(id_a, id_b, reason)], each pair once."""
    live = [r for r in records or () if isinstance(r, dict) and _id(r) and r.get("status") != "archived"]
    found: dict[frozenset, tuple[str, str, str]] = {}

    def report(a: dict, b: dict, reason: str) -> None:
        ids = frozenset((_id(a), _id(b)))
        if len(ids) == 2 and ids not in found and (not same_scope_only or _meet(a, b)):
            found[ids] = (_id(a), _id(b), reason)

    _same_key_conflicts(live, report)
    _reversed_conflicts(live, report)
    _statement_conflicts([r for r in live if r.get("type") != "error"], report)
    return list(found.values())


def is_refinement(fix_a, fix_b) -> bool:
    """True when one fix is a more or less detailed version of the other (not a conflict)."""
    na, nb = normalize_text(fix_a), normalize_text(fix_b)
    if not na or not nb or na == nb:
        return True
    cores_b = clause_cores(fix_b)
    if any((not negative, core) in cores_b for negative, core in clause_cores(fix_a)):
        return False  # "never X" is no refinement of "X"
    short, long_ = sorted((na.split(), nb.split()), key=len)
    if _in_order(short, long_):  # `pip install x` ⊂ `pip install --user x`
        return True
    return text_similarity(na, nb) >= REFINEMENT_SIMILARITY


def _in_order(needle: list[str], haystack: list[str]) -> bool:
    words = iter(haystack)
    return all(word in words for word in needle)


def slot_stances(text: str) -> dict[str, tuple[frozenset, frozenset]]:
    """{slot: (preferred values, rejected values)} stated by a text ("use pnpm, not npm")."""
    word_re, clause_re, width_re = _patterns()
    text = _expand_contractions(text)
    words = set(word_re.findall(text))
    preferred: dict[str, set] = {}
    rejected: dict[str, set] = {}
    for clause in clause_re.split(text):
        if not clause or not clause.strip():
            continue
        for slot, value, negative in _clause_mentions(word_re.findall(clause)):
            (rejected if negative else preferred).setdefault(slot, set()).add(value)
        for match in width_re.finditer(clause):
            negative = bool(_NEGATORS & set(word_re.findall(clause[: match.start()])))
            (rejected if negative else preferred).setdefault("indent width", set()).add(f"{match.group(1)} spaces")
    stances = {}
    for slot in preferred.keys() | rejected.keys():
        pro, con = preferred.get(slot, set()), rejected.get(slot, set())
        pro, con = pro - con, con - pro  # said both ways in one text: no stance
        subject = SLOT_SUBJECT.get(slot)
        if subject and not (subject & words) and len(pro | con) < 2:
            continue
        if pro or con:
            stances[slot] = (frozenset(pro), frozenset(con))
    return stances


def statement_core(text: str) -> tuple[bool, str] | None:
    """(negative?, the words after a leading never/always/don't…) of a one-clause text."""
    word_re = _patterns()[0]
    words = word_re.findall(_expand_contractions(text))
    negative = False
    start = 0
    while start < len(words) and words[start] in _LEADING_FILLER:
        negative = negative or words[start] in _LEADING_NEGATIVE
        start += 1
    core = [w.strip("._-") for w in words[start:]]
    core = [w for w in core if w and w not in ("the", "a", "an", "any", "your", "our", "my")]
    return (negative, " ".join(core)) if core else None


# ---------------------------------------------------------------- the three kinds


def _same_key_conflicts(records: list[dict], report) -> None:
    """Copies of one key that give incompatible fixes. Compares distinct fixes, not copies:
    a key seen in 1,000 projects with two fixes is one comparison, not half a million."""
    by_key: dict[str, dict[str, list[dict]]] = {}
    for rec in records:
        key = rec.get("key")
        fix = fix_text(rec)
        if isinstance(key, str) and key and fix:
            by_key.setdefault(key, {}).setdefault(fix, []).append(rec)
    for key, by_fix in by_key.items():
        fixes = list(by_fix)
        for i, fa in enumerate(fixes):
            for fb in fixes[i + 1:]:
                if is_refinement(fa, fb):
                    continue
                first_a, first_b = by_fix[fa][0], by_fix[fb][0]
                for b in by_fix[fb]:
                    report(first_a, b, f"same key {key}: different fixes")
                for a in by_fix[fa][1:]:
                    report(a, first_b, f"same key {key}: different fixes")


def _reversed_conflicts(records: list[dict], report) -> None:
    seen: dict[tuple[str, str], list[dict]] = {}
    for rec in records:
        for src, dst in _directions(rec):
            for other in seen.get((dst, src), ()):
                report(other, rec, f"reversed: {_short(src)} → {_short(dst)} and back")
        for direction in _directions(rec):
            seen.setdefault(direction, []).append(rec)


def _directions(rec: dict) -> set[tuple[str, str]]:
    out = set()
    command = _squash(rec.get("command"))
    for src, dst in (
        (command, _squash(rec.get("fix_command"))),
        (command, _squash(rec.get("fix"))),
        (normalize_text(rec.get("error")), normalize_text(rec.get("fix"))),
    ):
        if src and dst and src != dst:
            out.add((src, dst))
    return out


def _statement_conflicts(records: list[dict], report) -> None:
    by_slot: dict[str, list[tuple[dict, frozenset, frozenset]]] = {}
    by_core: dict[str, tuple[list, list]] = {}
    for rec in records:
        for slot, (pro, con) in _record_stances(rec).items():
            by_slot.setdefault(slot, []).append((rec, pro, con))
        for negative, core in _record_cores(rec):
            by_core.setdefault(core, ([], []))[negative].append(rec)
    for slot, stated in by_slot.items():
        for i, (a, a_pro, a_con) in enumerate(stated):
            for b, b_pro, b_con in stated[i + 1:]:
                if a_pro and b_pro and not a_pro & b_pro:
                    report(a, b, f"{slot}: {_values(a_pro)} vs {_values(b_pro)}")
                elif a_pro & b_con or b_pro & a_con:
                    disputed = _values((a_pro & b_con) | (b_pro & a_con))
                    report(a, b, f"{slot}: one prefers {disputed}, the other rejects it")
    for core, (positive, negative) in by_core.items():
        for a in positive:
            for b in negative:
                report(a, b, f"negation: '{_short(core)}' vs 'not {_short(core)}'")


def _record_stances(rec: dict) -> dict[str, tuple[frozenset, frozenset]]:
    merged: dict[str, tuple[set, set]] = {}
    for text in _statements(rec):
        for slot, (pro, con) in slot_stances(text).items():
            slot_pro, slot_con = merged.setdefault(slot, (set(), set()))
            slot_pro |= pro
            slot_con |= con
    return {slot: (frozenset(p - c), frozenset(c - p)) for slot, (p, c) in merged.items() if (p - c) or (c - p)}


def _record_cores(rec: dict) -> set[tuple[bool, str]]:
    cores = set()
    for text in _statements(rec):
        cores |= clause_cores(text)
    return {(neg, core) for neg, core in cores if (not neg, core) not in cores}


def clause_cores(text) -> set[tuple[bool, str]]:
    """statement_core() of each clause of a text ("don't use npm, use pnpm" has two)."""
    if not isinstance(text, str):
        return set()
    clause_re = _patterns()[1]
    parsed = (statement_core(clause) for clause in clause_re.split(_expand_contractions(text)) if clause)
    return {core for core in parsed if core}


def _statements(rec: dict) -> list[str]:
    return [v for f in ("fix", "context") if isinstance(v := rec.get(f), str) and v.strip()]


# ---------------------------------------------------------------- helpers


def _clause_mentions(words: list[str]):
    """(slot, value, negative?) for each slot alternative named in one clause."""
    negative = switching = preferring = leaving = False
    i = 0
    while i < len(words):
        word = words[i]
        if word in _NEGATORS:
            negative = True
        elif word in _SWITCH_VERBS:
            switching = True
        elif word in _PREFER_VERBS:
            preferring = True
        elif word == "from" and switching and not negative:  # "switch from jest to vitest"
            negative = leaving = True
        elif word == "to" and leaving:
            negative = leaving = False
        elif word == "over" and preferring:
            negative = True
        width = _match_alias(words, i)
        if width:
            slot, value, width = width
            yield slot, value, negative
            i += width
            continue
        i += 1


def _match_alias(words: list[str], i: int):
    for slot, aliases in SLOTS.items():
        for alias, value in aliases.items():
            if tuple(words[i:i + len(alias)]) == alias:
                return slot, value, len(alias)
    return None


def _expand_contractions(text) -> str:
    text = str(text).casefold().replace("’", "'")
    return text.replace("can't", "can not").replace("won't", "will not").replace("n't", " not")


def _meet(a: dict, b: dict) -> bool:
    if "global" in (a.get("status"), b.get("status")):
        return True
    pa, pb = _projects(a), _projects(b)
    return not pa or not pb or bool(pa & pb)


def _projects(rec: dict) -> set[str]:
    projects = rec.get("projects")
    if isinstance(projects, str):
        return {projects}
    return {str(p) for p in projects if p} if isinstance(projects, list) else set()


def _id(rec: dict) -> str:
    value = rec.get("id")
    return value if isinstance(value, str) and value else ""


def _squash(value) -> str:
    return " ".join(value.split()) if isinstance(value, str) else ""


def _short(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _values(values) -> str:
    return "/".join(sorted(values))
