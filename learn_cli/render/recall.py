"""`learn recall` output: the seed's numbered result layout, a plain twin when piped, and the
JSON document."""

from __future__ import annotations

from rich.text import Text

from learn_cli.render.console import fancy
from learn_cli.render.learning import age, headline, safe, usage_line, write

STAR_SCORE = 0.8  # a ⭐ marks learnings this good (score ≥ 0.8)
TEXT_FIELDS = ("context", "error", "fix", "command", "fix_command")


def report(result, topic: str, labels: dict[str, str], include_archived: bool) -> None:
    fancy_out = fancy()
    quoted = safe(topic, one_line=True, limit=80)
    if fancy_out:
        write(Text(f'🔍 Searching knowledge base for "{quoted}"...', style="bold"))
        write()
    if not result.hits:
        _nothing(quoted, include_archived)
        _partial(result, labels, fancy_out)
        return
    count = len(result.hits)
    head = f"Results ({count} {'match' if count == 1 else 'matches'}):"
    write(Text(head if fancy_out else f'Results for "{quoted}" ({count} {"match" if count == 1 else "matches"}):',
               style="bold" if fancy_out else ""))
    for n, hit in enumerate(result.hits, 1):
        write()
        _hit(n, hit, labels, fancy_out)
    if result.more:
        write()
        write(Text("More matches: raise --limit to see them.", style="dim" if fancy_out else ""))
    _partial(result, labels, fancy_out)


def _nothing(quoted: str, include_archived: bool) -> None:
    hint = "try other words" + ("" if include_archived else ", or --all to include archived learnings")
    write(f'No learnings match "{quoted}" ({hint}).')


def _hit(n: int, hit, labels: dict[str, str], fancy_out: bool) -> None:
    rec = hit.record
    archived = "archive" in hit.scope
    where = "Global" if hit.scope.startswith("global") else f"Project: {safe(labels.get(hit.pid, hit.pid), one_line=True)}"
    category = safe(rec.get("category") or rec.get("type") or "?", one_line=True, limit=40)
    status = rec.get("status")
    flag = " (archived)" if archived else (f" ({status})" if status in ("pending", "conflicted") else "")
    star = "⭐ " if fancy_out and hit.score >= STAR_SCORE else ""
    header = Text(f"[{n}] ", style="bold")
    header.append(f"{star}Score: {hit.score:.2f}", style="yellow" if fancy_out and star else "")
    header.append(f" | {where} | {category}{flag}")
    write(header)
    write(f'    "{headline(rec)}"')
    fix = rec.get("fix") or rec.get("fix_command")
    if fix:
        write(f"    Fix: {safe(fix, one_line=True, limit=200)}")
    used = f"    Used: {usage_line(rec)}"
    if archived:
        used += f" (last used: {age(rec.get('last_used') or rec.get('created'))})"
    write(used)
    write(Text(f"    ID: {safe(rec.get('id'), one_line=True)}", style="dim" if fancy_out else ""))


def _partial(result, labels: dict[str, str], fancy_out: bool) -> None:
    mark = "⚠ " if fancy_out else "note: "
    if result.timed_out:
        names = [safe(labels.get(p, p), one_line=True) for p in result.not_searched]
        shown = ", ".join(names[:10]) + (f", and {len(names) - 10} more" if len(names) > 10 else "")
        write()
        write(Text(f"{mark}Cross-project search stopped at its time bound: "
                   f"{len(names)} {'project' if len(names) == 1 else 'projects'} not searched"
                   + (f": {shown}" if names else "") + ". Narrow the topic to search them all.",
                   style="yellow" if fancy_out else ""))
    if result.not_ranked:
        write()
        write(Text(f"{mark}Broad topic: about {result.not_ranked:,} older matches in other projects were not "
                   "ranked. Narrow the topic to see them.", style="yellow" if fancy_out else ""))


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
    }
