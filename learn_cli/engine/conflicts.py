"""Learnings that give incompatible advice on the same subject (SPEC §2.1 "Conflict").

Three kinds are found, each in O(n) plus the pairs it reports:

1. **same key, contradicting fixes** – two records with one dedup `key` whose fixes say the
   opposite of each other ("never X" vs "X"). Two different fixes of one key are
   alternatives, not a conflict (issue 10): `make -C build` one day and `cd build && make`
   another both work; the lookup offers the best proven one. A fix that was offered and
   failed is handled by its own record (`failed_at`), not by marking both sides.
2. **reversed** – A→B beside B→A: `command`→`fix_command` (or `error`→`fix`) of one
   record is the other's the other way round.
3. **preference slot** – two statements pick different values of one slot of mutually
   exclusive alternatives (`SLOTS`: "use Jest" vs "use Vitest", "tabs" vs "spaces"), or
   one prefers what the other rejects ("use npm" vs "don't use npm, use pnpm"); plus the
   general negation rule: "never commit .env" vs "always commit .env" (same words once the
   leading never/always/don't/do not are set aside, opposite polarity). Slots and negation
   are read from non-error learnings (preferences, patterns, workflows).

Conflicts are counted by stance, not by pair of records (issue 14): when many records say one
thing and many say its contrary, each record is paired with one record of the other side it can
meet (the first), so the pairs reported are linear in the records (17 wordings of "use Jest"
against 17 of "use Vitest" in one project are 33 pairs, not 289). Every record of either side
is still flagged, with a partner that contradicts it.

Archived records and records without an id are ignored. By default two records are only
compared when they can be loaded together: they share a project, or one of them is global
(status `global`, or no `projects`). "Use Jest" in one project and "use Vitest" in another
is two projects' facts, not a conflict.
"""

from __future__ import annotations

from learn_cli.engine.merge import fix_text, normalize_text, text_similarity
from learn_cli.text import rx
from learn_cli.text.hashes import blake2b_hex
from learn_cli.text.lite import cache, lru_cache, namedtuple

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

REFINEMENT_SIMILARITY = 0.8  # engine.knowledge.may_refine rules out what cannot reach it: change both

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
        rx.compile(r"[a-z0-9][a-z0-9+#._-]*[a-z0-9+#]|[a-z0-9]"),
        rx.compile(r"[,;:.!?()\[\]]+(?:\s|$)|\s[-–—]+\s|\s[(\[]|\bbut\b|\bthen\b"),  # "… (an aside)" too
        rx.compile(r"\b(\d{1,2})[\s-]*(?:spaces?|space-indent(?:ed|ation)?)\b"),
    )


# ---------------------------------------------------------------- public


# What conflict detection reads from a record's texts, parsed once (and cached in the index by
# promotion: parsing every statement of 100,000 learnings on every run is most of the cost of
# `learn promote`). A `collections` named tuple: `typing` and `hashlib` cost a SessionEnd hook,
# which checks a few keys, ~27 M instructions (0.7x a bare interpreter) to import.
# - fix: fix_text(): copies of a key are compared by it
# - directions: ((src digest, dst digest, src shortened, dst shortened), ...): command → fix,
#   error → fix; compared by digest (an error text can be 400 characters), shown shortened
# - stances: ((slot, preferred values, rejected values), ...), non-error learnings only
# - cores: ((negative?, core words), ...), non-error learnings only
# (Read back from JSON the inner tuples are lists: only iterated and unpacked, never hashed.)
Features = namedtuple("Features", "fix directions stances cores", module=__name__)


def record_features(rec: dict) -> Features:
    statement = rec.get("type") != "error"
    stances = tuple((slot, tuple(sorted(pro)), tuple(sorted(con)))
                    for slot, (pro, con) in _record_stances(rec).items()) if statement else ()
    cores = tuple(sorted(_record_cores(rec))) if statement else ()
    directions = tuple(sorted((_digest(src), _digest(dst), _short(src), _short(dst)) for src, dst in _directions(rec)))
    return Features(fix_text(rec), directions, stances, cores)


def conflict_terms(key, f: Features) -> list[tuple[str, object]]:
    """(term, variant) of what conflicts_among groups a record by (_Groups.add): its key with
    its fix, each pair of opposite directions with its way, each slot with its stance, each
    statement core with its polarity. Records pair only inside a term stated in two variants
    (two fixes of a key, both ways, two stances, both polarities), so a record that shares no
    term with a record of another variant is in no conflict, and the rows of the terms stated
    two ways are all that conflicts_among needs (the index's terms, promotion.conflict_items)."""
    fix, directions, stances, cores = f
    terms: list[tuple[str, object]] = []
    if isinstance(key, str) and key and fix:
        terms.append((f"k:{key}", fix))
    for src, dst, _src_text, _dst_text in directions:
        way, back = f"{src}>{dst}", f"{dst}>{src}"
        terms.append((f"d:{min(way, back)}", way))
    for slot, pro, con in stances:
        terms.append((f"s:{slot}", "|".join(sorted(pro)) + "/" + "|".join(sorted(con))))
    for negative, core in cores:
        terms.append((f"c:{core}", 1 if negative else 0))
    return terms


def find_conflicts(records: list[dict], same_scope_only: bool = True,
                   features: Callable[[dict], Features] = record_features) -> list[tuple[str, str, str]]:
    """Pairs of learnings that give incompatible advice: [(id_a, id_b, reason)], each pair once.
    `features`: a record's conflict features (record_features, or what the index holds)."""
    live = [r for r in records or () if isinstance(r, dict) and _id(r) and r.get("status") != "archived"]
    return conflicts_among(((r, features(r)) for r in live), same_scope_only)


def conflicts_among(items: Iterable[tuple[dict, Features]], same_scope_only: bool = True,
                    direction_texts: Callable[[dict, str, str], tuple[str, str]] | None = None,
                    ) -> list[tuple[str, str, str]]:
    """find_conflicts() over (record, features) pairs, read one at a time: a caller can stream
    them from the index. A record needs only id, key, status and projects here.

    Work is linear in the records plus the pairs reported: records that state the same thing
    are grouped and groups are compared, and only pairs that can meet are enumerated.

    `direction_texts(rec, src, dst)`: the shortened texts of the direction of a record (the
    digests src → dst), asked only of directions met the other way round too; with it the
    groups hold no texts (at 300,000 learnings ~30 MB of them, held beside a promote's
    entries, for the few reversed pairs a store has)."""
    found: dict[frozenset, tuple[str, str, str]] = {}
    order: dict[int, int] = {}
    groups = _Groups(direction_texts)
    for rec, f in items:
        order[id(rec)] = len(order)
        groups.add(rec, f)

    def report(a: dict, b: dict, reason: str) -> None:
        if order[id(a)] > order[id(b)]:
            a, b = b, a  # report each pair in input order, whichever group found it
        ids = frozenset((_id(a), _id(b)))
        if len(ids) == 2 and ids not in found and (not same_scope_only or _meet(a, b)):
            found[ids] = (_id(a), _id(b), reason)

    groups.report(report, _MeetingPairs() if same_scope_only else _star_pairs)
    return list(found.values())


class _Groups:
    """Records grouped by what they state (key and fix, directions, slot stances, statement
    cores), one record at a time; then group is compared with group."""

    def __init__(self, direction_texts: Callable | None = None):
        self.by_key: dict[str, tuple | dict] = {}  # key -> (fix, rec) until a second copy comes
        # "src>dst" -> (texts, rec) or [texts, recs...]: one string a key, not a tuple of two
        # (at 100,000 learnings ~42,000 directions, held beside the entries a promote loads);
        # the texts are None when `direction_texts` gives them on demand
        self.by_direction: dict[str, tuple | list] = {}
        self.direction_texts = direction_texts
        self.by_slot: dict[str, dict[tuple[frozenset, frozenset], list[dict]]] = {}
        self.by_core: dict[str, tuple[list, list]] = {}

    def add(self, rec: dict, f: Features) -> None:
        fix, directions, stances, cores = f  # (a list read from the index does as well)
        key = rec.get("key")
        if isinstance(key, str) and key and fix:
            known = self.by_key.get(key)
            if known is None:
                self.by_key[key] = (fix, rec)  # most keys have one copy: no dict for them
            else:
                if isinstance(known, tuple):
                    known = self.by_key[key] = {known[0]: [known[1]]}
                known.setdefault(fix, []).append(rec)
        for src, dst, src_text, dst_text in directions:
            way = f"{src}>{dst}"  # digests: hexadecimal
            known = self.by_direction.get(way)
            if known is None:
                self.by_direction[way] = (None, None, rec) if self.direction_texts else (src_text, dst_text, rec)
            else:
                if isinstance(known, tuple):
                    known = self.by_direction[way] = list(known)
                known.append(rec)
        for slot, pro, con in stances:
            self.by_slot.setdefault(slot, {}).setdefault((frozenset(pro), frozenset(con)), []).append(rec)
        for negative, core in cores:
            self.by_core.setdefault(core, ([], []))[negative].append(rec)

    def report(self, report, pairs) -> None:
        _same_key_conflicts(self.by_key, report)
        _reversed_conflicts(self.by_direction, report, pairs, self.direction_texts)
        _statement_conflicts(self.by_slot, self.by_core, report, pairs)


def contradicts(fix_a, fix_b) -> bool:
    """True when one fix says the opposite of the other: "never X" vs "X"."""
    cores_b = _cores(fix_b)  # cached: a key with many fixes compares each with every other
    return any((not negative, core) in cores_b for negative, core in _cores(fix_a))


def _cores(text) -> frozenset:
    return _text_cores(text) if isinstance(text, str) else frozenset()


@lru_cache(maxsize=4096)
def is_refinement(fix_a, fix_b) -> bool:
    """True when one fix is a more or less detailed version of the other (not a conflict).
    Asked once per pair of texts: an import meets the same pair in project after project (on
    the realistic 100,000 export, 23,500 questions about 3,734 pairs, ~70 µs each)."""
    na, nb = normalize_text(fix_a), normalize_text(fix_b)
    if not na or not nb or na == nb:
        return True
    if contradicts(fix_a, fix_b):
        return False  # "never X" is no refinement of "X"
    if _options_swapped(fix_a, fix_b):
        return False  # `--rebase` / `--no-rebase` read alike once the dashes are gone
    if _arguments_swapped(fix_a, fix_b):
        return False  # `cmake --build build` / `cmake --build cmake-build-debug`: another folder
    short, long_ = sorted((na.split(), nb.split()), key=len)
    if _in_order(short, long_):  # `pip install x` ⊂ `pip install --user x`
        return True
    return text_similarity(na, nb) >= REFINEMENT_SIMILARITY


def _options_swapped(fix_a, fix_b) -> bool:
    """Does each fix pass an option the other does not? A more detailed command adds options;
    it does not trade one for another."""
    if not isinstance(fix_a, str) or not isinstance(fix_b, str):
        return False
    opts_a, opts_b = ({word for word in fix.split() if word.startswith("-")} for fix in (fix_a, fix_b))
    return bool(opts_a - opts_b) and bool(opts_b - opts_a)


def _arguments_swapped(fix_a, fix_b) -> bool:
    """Does each fix name a word (an argument: a folder, a target, a package) that the other
    lacks, neither a more detailed spelling of the other (`x` / `'x[extra]'`, `pip` / `pip3`,
    `tests` / `tests/unit`)? Then they do other work: `cmake --build build` and `cmake --build
    cmake-build-debug` build other folders, though their words, split at the dashes, read as
    one inside the other (sflicker/claudec99: the agent's `cmake --build build` was counted a
    sighting of `cmake-build-debug`, which it then kept offering)."""
    if not isinstance(fix_a, str) or not isinstance(fix_b, str):
        return False
    words_a, words_b = ({word.strip("'\"") for word in fix.split() if not word.startswith("-")}
                        for fix in (fix_a, fix_b))
    own_a, own_b = words_a - words_b, words_b - words_a
    return bool(own_a) and bool(own_b) and not any(
        a.startswith(b) or b.startswith(a) for a in own_a for b in own_b)


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


def _same_key_conflicts(by_key: dict[str, tuple | dict], report) -> None:
    """Copies of one key whose fixes contradict each other. Compares distinct fixes, not
    copies: a key seen in 1,000 projects with two fixes is one comparison, not half a million."""
    for key, by_fix in by_key.items():
        if isinstance(by_fix, tuple):
            continue  # one copy
        fixes = list(by_fix)
        for i, fa in enumerate(fixes):
            for fb in fixes[i + 1:]:
                if not contradicts(fa, fb):
                    continue  # alternatives (or refinements) of one another
                first_a, first_b = by_fix[fa][0], by_fix[fb][0]
                for b in by_fix[fb]:
                    report(first_a, b, f"same key {key}: contradicting fixes")
                for a in by_fix[fa][1:]:
                    report(a, first_b, f"same key {key}: contradicting fixes")


def _reversed_conflicts(by_direction: dict[str, tuple | list], report, pairs, direction_texts=None) -> None:
    for way, forth in by_direction.items():
        src, _, dst = way.partition(">")
        back = by_direction.get(f"{dst}>{src}")
        if not back:
            continue
        src_text, dst_text = forth[0], forth[1]
        if direction_texts is not None:
            src_text, dst_text = direction_texts(forth[2], src, dst)
        if (src_text, src) < (dst_text, dst):  # each pair of opposite directions once
            for a, b in pairs(list(forth[2:]), list(back[2:])):
                report(a, b, f"reversed: {src_text} → {dst_text} and back")


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


def _statement_conflicts(by_slot: dict, by_core: dict, report, pairs) -> None:
    for slot, groups in by_slot.items():
        stances = list(groups)
        for i, (a_pro, a_con) in enumerate(stances):
            for b_pro, b_con in stances[i + 1:]:
                if a_pro and b_pro and not a_pro & b_pro:
                    reason = f"{slot}: {_values(a_pro)} vs {_values(b_pro)}"
                elif a_pro & b_con or b_pro & a_con:
                    disputed = _values((a_pro & b_con) | (b_pro & a_con))
                    reason = f"{slot}: one prefers {disputed}, the other rejects it"
                else:
                    continue
                for a, b in pairs(groups[(a_pro, a_con)], groups[(b_pro, b_con)]):
                    report(a, b, reason)
    for core, (positive, negative) in by_core.items():
        for a, b in pairs(positive, negative):
            report(a, b, f"negation: '{_short(core)}' vs 'not {_short(core)}'")


def _record_stances(rec: dict) -> dict[str, tuple[frozenset, frozenset]]:
    merged: dict[str, tuple[set, set]] = {}
    for text in _statements(rec):
        for slot, (pro, con) in _text_stances(text):
            slot_pro, slot_con = merged.setdefault(slot, (set(), set()))
            slot_pro |= pro
            slot_con |= con
    return {slot: (frozenset(p - c), frozenset(c - p)) for slot, (p, c) in merged.items() if (p - c) or (c - p)}


@lru_cache(maxsize=8192)
def _text_stances(text: str) -> tuple:
    """slot_stances() of a text, parsed once per run: copies of a learning repeat their texts."""
    return tuple(slot_stances(text).items())


def _record_cores(rec: dict) -> set[tuple[bool, str]]:
    cores = set()
    for text in _statements(rec):
        cores |= _text_cores(text)
    return {(neg, core) for neg, core in cores if (not neg, core) not in cores}


@lru_cache(maxsize=8192)
def _text_cores(text: str) -> frozenset:
    return frozenset(clause_cores(text))


def clause_cores(text) -> set[tuple[bool, str]]:
    """statement_core() of each clause of a text ("don't use npm, use pnpm" has two)."""
    if not isinstance(text, str):
        return set()
    clause_re = _patterns()[1]
    parsed = (statement_core(clause) for clause in clause_re.split(_expand_contractions(text)) if clause)
    return {core for core in parsed if core}


def _statements(rec: dict) -> list[str]:
    return [v for f in ("fix", "context") if isinstance(v := rec.get(f), str) and v.strip()]


def _star_pairs(side_a: list[dict], side_b: list[dict]):
    """Each record of either side paired with one of the other (the first): |A| + |B| - 1
    pairs, not |A| × |B|."""
    if side_a and side_b:
        yield from ((a, side_b[0]) for a in side_a)
        yield from ((side_a[0], b) for b in side_b[1:])


class _MeetingPairs:
    """Pairs of two sides for one run of conflicts_among: each record of either side paired
    with the first record of the other side it can meet (see _meet), linear in the records
    and the projects they list. A global "use Vitest" against 5,000 "use Jest" of 1,000
    projects is 5,000 pairs; 5,000 project records against 5,000 are at most 10,000, not 25
    million. Each record's projects are read once, and each side's index of its first
    records by project built once, however many other sides it is paired with (a slot's
    stances are paired with one another: at 100,000 learnings 16,112 indexes were built over
    the ~4,000 records of the slots). The sides indexed are kept here, so that the id of a
    list never stands for another."""

    def __init__(self):
        self.projects: dict[int, frozenset | None] = {}  # id(rec) -> projects; None: meets all
        self.indexes: dict[int, tuple] = {}  # id(side) -> (side, first_open, first_in)

    def __call__(self, side_a: list[dict], side_b: list[dict]):
        yield from self._first_meeting(side_a, side_b, False)
        yield from self._first_meeting(side_b, side_a, True)

    def _projects_of(self, rec: dict) -> frozenset | None:
        """The projects of a record, None when it meets every record (global, or none listed)."""
        known = self.projects.get(id(rec), False)
        if known is False:
            projects = None if rec.get("status") == "global" else _projects(rec)
            known = self.projects[id(rec)] = frozenset(projects) if projects else None
        return known

    def _index(self, side: list[dict]) -> tuple:
        """(the first record that lists no project, {project: the first record listing it}),
        each as (position, record)."""
        known = self.indexes.get(id(side))
        if known is None:
            first_open = None
            first_in: dict[str, tuple[int, dict]] = {}
            for n, b in enumerate(side):
                projects = self._projects_of(b)
                if projects is None:
                    if first_open is None:
                        first_open = (n, b)
                else:
                    for p in projects:
                        first_in.setdefault(p, (n, b))
            known = self.indexes[id(side)] = (side, first_open, first_in)
        return known

    def _first_meeting(self, side_a: list[dict], side_b: list[dict], swap: bool):
        """(a, b) for each a of side_a and the first b of side_b it meets (b, a with swap)."""
        _, first_open, first_in = self._index(side_b)
        first_any = (0, side_b[0]) if side_b else None
        for a in side_a:
            projects = self._projects_of(a)
            if projects is None:
                found = first_any
            else:
                found = first_open
                for p in projects:
                    hit = first_in.get(p)
                    if hit is not None and (found is None or hit[0] < found[0]):
                        found = hit
            if found is not None:
                yield (found[1], a) if swap else (a, found[1])


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
            if not _topic_only(words, i, width):
                yield slot, value, negative
            i += width
            continue
        i += 1


def _topic_only(words: list[str], i: int, width: int) -> bool:
    """A tool named last in a clause after "for" is what the clause is about, not a tool it
    prescribes ("keep secrets in the vault for jest"): no stance on the slot ("use uv for pip
    installs" still names pip)."""
    return i > 0 and words[i - 1] == "for" and i + width == len(words)


def _match_alias(words: list[str], i: int):
    for alias, slot, value in _aliases_by_first_word().get(words[i], ()):
        if tuple(words[i:i + len(alias)]) == alias:
            return slot, value, len(alias)
    return None


@cache
def _aliases_by_first_word() -> dict[str, list[tuple[tuple[str, ...], str, str]]]:
    """SLOTS indexed by the first word of each alias, in SLOTS order (the first match wins)."""
    index: dict[str, list] = {}
    for slot, aliases in SLOTS.items():
        for alias, value in aliases.items():
            index.setdefault(alias[0], []).append((alias, slot, value))
    return index


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


def _digest(text: str) -> str:
    return blake2b_hex(text.encode("utf-8", "surrogatepass"), 8)


def _short(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _values(values) -> str:
    return "/".join(sorted(values))
