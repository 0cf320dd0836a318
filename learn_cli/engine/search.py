"""Recall: search this project's, the global and other projects' learnings through the FTS5
index, ranked by relevance × score (SPEC §5 `learn recall`).

The topic never reaches MATCH as typed: it is cut into words the way the index tokenizer cuts
text, and each word is quoted (FTS5 syntax in it is inert). Tiers, best first, each run only
while fewer than `limit` candidates are found (a later tier can never outrank an earlier one):
  1. every word (AND);
  2. any informative word (OR, leaving out words found in most learnings: bm25 gives them no
     weight, and they would only make the query slow);
  3. any word (OR).

One tier walks the index newest rows first, in windows of about `WINDOW` matches, each
ranked in SQL (`ORDER BY bm25 LIMIT`), so the work per query stays bounded:
- the cross-project search has a time bound (config `search_timeout_s`, SQLite's progress
  handler interrupts a running query): past it, this project and the global store are still
  searched whole, and the other projects whose rows were not reached are named;
- a topic so broad that more than `MAX_RANKED` matches would be ranked stops there too
  (this project and global still searched whole) and says how many matches were left out.
Only the best `SCORED` candidates are read in full and scored:
  rank = relevance (bm25 normalised to 0..1) × (score + SCORE_FLOOR) × scope boost
(this project 1.25, global 1.15, other projects 1.0; archived × 0.8).
Results whose fix reads the same are one lesson: folded into the best of them (`Hit.also`), so
the copies each project keeps of one learning take one place among the `limit` shown.

Stdlib only; the caller passes `loads` (orjson's in commands).
"""

from __future__ import annotations

import time

from learn_cli.engine.scoring import score as score_of
from learn_cli.store.index import (
    FtsNear,
    sqlite3,  # the C module alone (store.index says why)
)
from learn_cli.text import jsonlite, rx
from learn_cli.text.lite import cache, namedtuple

TYPE_CHECKING = False  # recall's fast path imports no `collections` (text.lite says why)
if TYPE_CHECKING:
    from collections.abc import Callable

MAX_TERMS = 8
MAX_TERM_CHARS = 64
PREFIX_MIN = 4  # words this long also match longer words ("dock" finds "docker")
CANDIDATES = 200  # rows taken from each ranked query
SCORED = 300  # candidates read in full and scored
FOLD_BATCH = 3  # candidates read in full at a time per result shown, so copies of a lesson fold
FOLD_MIN = 30  # ... and at least this many a time (~1 ms at 100,000)
WINDOW = 10_000  # matches ranked per step
MAX_RANKED = 20_000  # matches ranked at most per tier (a topic broader than this is cut)
COMMON_SHARE = 0.5  # a word in more than half of all learnings ranks nothing: OR skips it
SCORE_FLOOR = 0.1  # unscored (score 0) learnings still show when they match well
BOOST = {"project": 1.25, "global": 1.15, "other": 1.0}
ARCHIVED_FACTOR = 0.8
PROGRESS_STEPS = 2_000  # SQLite VM steps between deadline checks inside one query

LIVE_SCOPES = ("project", "global")
ARCHIVE_SCOPES = ("archive", "global-archive")


# record; scope: project | archive | global | global-archive; pid: project id ('' for global);
# file: path relative to the store home; relevance: bm25 normalised to 0..1 over the
# candidates; score: the learning's score (SPEC §2.1); rank: what the order is by (within its
# tier); all_terms: holds every word of the topic; where: "project" (this one), "global" or
# "other". (namedtuple: typing.NamedTuple costs ~2 ms of `learn recall`'s start.)
Hit = namedtuple("Hit", "record scope pid file relevance score rank all_terms where also", defaults=((),))
# also: the lesser hits folded into this one (the same fix, said the same way: one lesson kept
# in several projects, or learned for several commands), best first


class SearchResult:
    """What a search found, and whether it is complete."""

    def __init__(self, terms: list[str]):
        self.terms = terms
        self.hits: list[Hit] = []
        self.more = False  # more matches than shown
        self.timed_out = False
        self.not_searched: list[str] = []  # project ids left out by the time bound
        self.not_ranked = 0  # matches left out because the topic is too broad (an upper bound)
        self.elapsed_ms = 0.0

    @property
    def partial(self) -> bool:
        return self.timed_out or self.not_ranked > 0


@cache
def _word_re():
    # The index tokenizer is unicode61 with '-' and '_' as token characters: cut the same way.
    return rx.compile(r"[\w\-]+", rx.UNICODE)


def topic_terms(topic) -> list[str]:
    """The distinct words of a topic (a string or a list of strings), lower-cased, capped."""
    text = " ".join(topic) if isinstance(topic, (list, tuple)) else str(topic or "")
    terms: list[str] = []
    for word in _word_re().findall(text.lower()):
        word = word[:MAX_TERM_CHARS]
        if word.strip("-_") and word not in terms:
            terms.append(word)
    return terms[:MAX_TERMS]


def term_query(term: str) -> str:
    """One word as an FTS5 expression: quoted (inert), prefix when long enough, and matching
    its flag spellings too (the index keeps `--platform` as one token)."""
    core = term.lstrip("-")
    if not core:
        return _quote(term, False)
    prefix = len(core) >= PREFIX_MIN
    forms = [core] + ([f"-{core}", f"--{core}"] if core == term else [term])
    return "(" + " OR ".join(_quote(f, prefix) for f in dict.fromkeys(forms)) + ")"


def _quote(word: str, prefix: bool) -> str:
    return '"' + word.replace('"', '""') + '"' + ("*" if prefix else "")


def fts_queries(terms: list[str]) -> tuple[str, str]:
    """(all words, any word) as safe FTS5 MATCH expressions."""
    parts = [term_query(t) for t in terms]
    return " AND ".join(parts), " OR ".join(parts)


def search(store, topic, *, project_id: str | None = None, limit: int = 10, include_archived: bool = False,
           timeout_s: float | None = None, loads: Callable = jsonlite.loads, now=None,
           clock: Callable[[], float] = time.monotonic) -> SearchResult:
    """Search the index; see the module docstring for the order of work and the ranking."""
    started = clock()
    result = SearchResult(topic_terms(topic))
    if not result.terms or limit <= 0:
        return result
    deadline = None if timeout_s is None else started + max(0.0, float(timeout_s))
    run = _Run(store.index, result, project_id or "", include_archived, clock, deadline)
    for query, all_terms in run.plan():
        if len(run.found) >= limit:
            break  # later tiers would rank below what is already found
        run.tier(query, all_terms)
    _finish(store, run, limit, loads, now)
    result.elapsed_ms = (clock() - started) * 1000
    return result


class _Run:
    """One search: the queries, the candidates found so far, the deadline."""

    def __init__(self, index, result: SearchResult, pid: str, archived: bool, clock, deadline: float | None):
        self.index = index
        self.result = result
        self.pid = pid
        self.clock = clock
        self.deadline = deadline
        self.near = FtsNear(pid, archived, BOOST["project"], BOOST["global"], CANDIDATES)
        self.found: dict[int, list] = {}  # rowid -> [bm25 relevance, holds all words]
        self.stopped_at: int | None = None  # rows below this rowid were not searched

    def plan(self) -> list[tuple[str, bool]]:
        """The tiers, best first: every word (AND); any informative word (OR without the words
        found in most learnings, which rank nothing); any word."""
        terms = self.result.terms
        and_q, or_q = fts_queries(terms)
        if not self.index.fts_any(or_q):  # not a count: the first match of a common word is enough
            return []
        if len(terms) == 1:
            return [(or_q, True)]  # one word: a match holds every word
        total = self.index.row_total()
        counts = {t: self.index.fts_count(term_query(t)) for t in terms}
        tiers = [(and_q, True)] if all(counts.values()) else []
        informative = [t for t in terms if 0 < counts[t] <= total * COMMON_SHARE]
        if informative and len(informative) < len([t for t in terms if counts[t]]):
            tiers.append((fts_queries(informative)[1], False))
        tiers.append((or_q, False))
        return tiers

    # -- one tier (all words, or any word) -------------------------------------------------
    def tier(self, query: str, all_terms: bool) -> None:
        """Every scope, newest rows first, window by window until the deadline; this project
        and the global store are always searched whole."""
        if self.stopped_at is not None:
            return self._ranked(all_terms, self.index.ranked_near(query, self.near))
        high = self.index.next_rowid()
        ranked = 0
        while high > 0:
            low = self.index.fts_window_start(query, high, WINDOW)
            try:
                with self.index.interrupt_at(self.deadline, self.clock, PROGRESS_STEPS):
                    if self.deadline is not None and self.clock() >= self.deadline:
                        raise sqlite3.OperationalError("interrupted")
                    self._ranked(all_terms, self.index.ranked_in_window(query, low, high, self.near))
            except sqlite3.OperationalError as exc:
                if "interrupt" not in str(exc):
                    raise
                return self._stop(query, all_terms, high)
            ranked += WINDOW
            if low == 0:
                return
            if ranked >= MAX_RANKED:
                self._ranked(all_terms, self.index.ranked_near(query, self.near, below=low))
                self.result.not_ranked = max(self.result.not_ranked, self.index.fts_count_below(query, low))
                return
            high = low

    def _ranked(self, all_terms: bool, matches) -> None:
        """Take in (rowid, bm25) matches as candidates, each with its best relevance."""
        for rowid, bm25 in matches:
            slot = self.found.setdefault(rowid, [0.0, all_terms])
            slot[0] = max(slot[0], -bm25)
            slot[1] = slot[1] or all_terms

    def _stop(self, query: str, all_terms: bool, high: int) -> None:
        """Past the deadline: finish this project and global, name the projects not reached."""
        self.stopped_at = high
        self.result.timed_out = True
        self._ranked(all_terms, self.index.ranked_near(query, self.near, below=high))
        self.result.not_searched = self.index.other_projects_below(high, self.near)


def _finish(store, run: _Run, limit: int, loads: Callable, now) -> None:
    """Score the best candidates, keep the top `limit`, read those in full. A candidate is
    scored from the index's score columns (`score_inputs`: what the score reads), so only
    the few shown are decoded, not all SCORED of them (an older index's rows without the
    columns are read in full)."""
    if not run.found:
        return
    top_relevance = max(v[0] for v in run.found.values()) or 1.0
    pre = sorted(run.found.items(), key=lambda kv: (kv[1][1], kv[1][0]), reverse=True)[:SCORED]
    rows = store.index.placed_scores([rowid for rowid, _ in pre])
    unfilled = [rowid for rowid, row in rows.items() if row[3] is None]
    records = {rowid: loads(data) for rowid, data in store.index.data_of_rows(unfilled).items()} if unfilled else {}
    ranked = []
    for rowid, (relevance, all_terms) in pre:
        row = rows.get(rowid)
        if row is None:
            continue
        file, scope, pid, frequency, impact, used = row
        rec = records.get(rowid)
        value = score_of(rec if rec is not None else {"frequency": frequency, "impact": impact, "last_used": used},
                         now)
        where = "global" if scope.startswith("global") else ("project" if pid == run.pid else "other")
        norm = relevance / top_relevance
        rank = norm * (value + SCORE_FLOOR) * BOOST[where] * (ARCHIVED_FACTOR if "archive" in scope else 1.0)
        ranked.append((rowid, Hit(rec, scope, pid, file, round(norm, 4), value, rank, all_terms, where)))
    ranked.sort(key=lambda item: (item[1].all_terms, item[1].rank), reverse=True)
    run.result.hits, run.result.more = _fold(store, ranked, limit, loads)


def _fold(store, ranked: list, limit: int, loads: Callable) -> tuple[list, bool]:
    """The best `limit` lessons, and whether more matches exist than are shown or folded. The
    ranked candidates are read in full a batch at a time: a hit whose fix is said as a better
    one's is folded into it (`Hit.also`), so ten copies of one lesson (each project keeps its
    own; one fix learned for many commands) fill one place, not ten."""
    groups: dict = {}  # lesson -> index in hits
    hits: list = []
    left = start = 0  # candidates read but neither shown nor folded; candidates read
    while start < len(ranked) and len(hits) < limit:
        batch = ranked[start:start + max(limit * FOLD_BATCH, FOLD_MIN)]
        start += len(batch)
        data = store.index.data_of_rows([rowid for rowid, hit in batch if hit.record is None])
        for rowid, hit in batch:
            if hit.record is None:
                if rowid not in data:  # rewritten away between the two reads: as if it had not matched
                    continue
                hit = hit._replace(record=loads(data[rowid]))
            lesson = _lesson(hit.record)
            if lesson and lesson in groups:
                best = hits[groups[lesson]]
                hits[groups[lesson]] = best._replace(also=best.also + (hit,))
            elif len(hits) == limit:
                left += 1
            else:
                if lesson:
                    groups[lesson] = len(hits)
                hits.append(hit)
    return hits, left > 0 or start < len(ranked)


def _lesson(rec: dict) -> str:
    """What makes two learnings one lesson for a reader: the same fix (its command, else its
    prose), spacing aside: "npm config set prefix ~/.npm-global" run first, whatever `npm
    install -g` failed. "" (never folded) without a fix. Read from the fields as stored, not
    from their wording, which works out the kind of an older record from its commands: for 30
    candidates, 3.4 M instructions of a recall's ~190 M at 100,000."""
    for field in ("fix_command", "fix"):
        value = rec.get(field)
        if isinstance(value, str) and value.strip():
            return " ".join(value.split())
    return ""
