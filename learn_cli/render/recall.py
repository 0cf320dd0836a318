"""`learn recall` output: the seed's numbered result layout, a plain twin when piped, and the
JSON document.

The lines are built once (`report_lines`) and printed by rich only on a terminal: when piped
they go out as plain text without importing rich, which the fast path of `learn recall`
(learn_cli/commands/recall_fast.py) relies on.
"""

from __future__ import annotations

from learn_cli.engine.wording import action
from learn_cli.render.console import fancy
from learn_cli.render.text import Line, Styled, age, first_line, headline, safe, usage_line, write_plain

ALSO_NAMES = 4  # places named on a result's "Same fix" line
STAR_SCORE = 0.8  # a ⭐ marks learnings this good (score ≥ 0.8)
TEXT_FIELDS = ("context", "error", "fix", "command", "fix_command")


def report(result, topic: str, labels: dict[str, str], include_archived: bool) -> None:
    """Print the results: styled on a terminal, plain text when piped."""
    fancy_out = fancy()
    lines = report_lines(result, topic, labels, include_archived, fancy_out)
    if fancy_out:
        from learn_cli.render.learning import write_styled

        write_styled(lines)
    else:
        write_plain(lines)


def report_lines(result, topic: str, labels: dict[str, str], include_archived: bool, fancy_out: bool) -> list[Line]:
    out: list[Line] = []
    quoted = safe(topic, one_line=True, limit=80)
    if fancy_out:
        out += [Styled(f'🔍 Searching knowledge base for "{quoted}"...', style="bold"), ""]
    if not result.hits:
        out.append(_nothing(quoted, include_archived))
        return out + _partial(result, labels, fancy_out)
    count = len(result.hits)
    matches = f"{count} {'match' if count == 1 else 'matches'}"
    out.append(Styled(f"Results ({matches}):", style="bold") if fancy_out else f'Results for "{quoted}" ({matches}):')
    for n, hit in enumerate(result.hits, 1):
        out += ["", *_hit(n, hit, labels, fancy_out)]
    if result.more:
        out += ["", Styled("More matches: raise --limit to see them.", style="dim")]
    return out + _partial(result, labels, fancy_out)


def _nothing(quoted: str, include_archived: bool) -> str:
    hint = "try other words" + ("" if include_archived else ", or --all to include archived learnings")
    return f'No learnings match "{quoted}" ({hint}).'


def _hit(n: int, hit, labels: dict[str, str], fancy_out: bool) -> list[Line]:
    rec = hit.record
    archived = "archive" in hit.scope
    where = (
        "Global" if hit.scope.startswith("global") else f"Project: {safe(labels.get(hit.pid, hit.pid), one_line=True)}"
    )
    category = safe(rec.get("category") or rec.get("type") or "?", one_line=True, limit=40)
    status = rec.get("status")
    flag = " (archived)" if archived else (f" ({status})" if status in ("pending", "conflicted") else "")
    star = "⭐ " if fancy_out and hit.score >= STAR_SCORE else ""
    quoted = headline(rec)
    out: list[Line] = [Styled(f"[{n}] ", (f"{star}Score: {hit.score:.2f}", "yellow" if star else ""),
                              f" | {where} | {category}{flag}", style="bold"),
                       f'    "{quoted}"']
    fix = safe(action(rec), one_line=True, limit=200)
    if fix and not _already_said(quoted, fix):
        out.append(f"    Fix: {fix}")
    elif fix and first_line(rec.get("error")):  # the quote is the rule: show what failed instead
        out.append(f"    Error: {safe(first_line(rec.get('error')), one_line=True, limit=200)}")
    if hit.also:
        out.append(_also_line(hit, labels))
    used = f"    Used: {usage_line(rec)}"
    if archived:
        used += f" (last used: {age(rec.get('last_used') or rec.get('created'))})"
    out.append(used)
    out.append(Styled(f"    ID: {safe(rec.get('id'), one_line=True)}", style="dim"))
    return out


def _also_line(hit, labels: dict[str, str]) -> str:
    """The learnings folded into this result: how many, and where (names in rank order)."""
    places = list(dict.fromkeys(_where(h, labels) for h in hit.also))
    rest = len(places) - ALSO_NAMES
    shown = ", ".join(places[:ALSO_NAMES]) + (f" and {rest} more" if rest > 0 else "")
    count = len(hit.also)
    return f"    Same fix: {count} more {'learning' if count == 1 else 'learnings'} ({shown})"


def _where(hit, labels: dict[str, str]) -> str:
    if hit.scope.startswith("global"):
        return "global"
    return safe(labels.get(hit.pid, hit.pid), one_line=True, limit=40)


def _already_said(quoted: str, fix: str) -> bool:
    """The quote already says the fix: a captured learning's context is its whole rule
    ("`pytest tests` fails (dependency): use `python -m pytest tests` instead."), and an import
    or an older writer may store a prose rule as its own fix. Said once."""
    return " ".join(fix.split()).rstrip(".") in " ".join(quoted.split())


def _partial(result, labels: dict[str, str], fancy_out: bool) -> list[Line]:
    mark = "⚠ " if fancy_out else "note: "
    out: list[Line] = []
    if result.timed_out:
        names = [safe(labels.get(p, p), one_line=True) for p in result.not_searched]
        shown = ", ".join(names[:10]) + (f", and {len(names) - 10} more" if len(names) > 10 else "")
        missed = f"{len(names)} {'project' if len(names) == 1 else 'projects'} not searched" + (
            f": {shown}" if names else "")
        out += ["", Styled(f"{mark}Cross-project search stopped at its time bound: {missed}. "
                           "Narrow the topic to search them all.", style="yellow")]
    if result.not_ranked:
        out += ["", Styled(f"{mark}Broad topic: about {result.not_ranked:,} older matches in other projects "
                           "were not ranked. Narrow the topic to see them.", style="yellow")]
    return out


def as_json(result, topic: str, labels: dict[str, str]) -> dict:
    """The `--json` document (documented in docs/cmd-recall.md)."""
    return {
        "query": topic,
        "terms": result.terms,
        "count": len(result.hits),
        "more": result.more,
        "partial": result.partial,
        "timed_out": result.timed_out,
        "not_searched": [{"id": p, "name": labels.get(p, p)} for p in result.not_searched],
        "not_ranked": result.not_ranked,
        "results": [_hit_json(n, h, labels) for n, h in enumerate(result.hits, 1)],
    }


def _hit_json(n: int, hit, labels: dict[str, str]) -> dict:
    rec = dict(hit.record)
    for field in TEXT_FIELDS:
        if isinstance(rec.get(field), str):
            rec[field] = safe(rec[field])
    return {
        "rank": n,
        "id": rec.get("id"),
        "score": round(hit.score, 2),
        "relevance": round(hit.relevance, 3),
        "scope": hit.scope,
        "where": hit.where,
        "project": labels.get(hit.pid, hit.pid) if hit.pid else None,
        "archived": "archive" in hit.scope,
        "all_terms": hit.all_terms,
        "record": rec,
        "also": [{"id": h.record.get("id"), "score": round(h.score, 2), "scope": h.scope,
                  "project": labels.get(h.pid, h.pid) if h.pid else None} for h in hit.also],
    }
