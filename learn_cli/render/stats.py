"""`learn stats` output: the seed's double-line box on a terminal, plain lines when piped."""

from __future__ import annotations

from learn_cli.render.console import fancy, out
from learn_cli.render.text import safe
from learn_cli.store.record import TYPE_PLURAL_SHORT

WIDTH = 47  # inside the box
BAR = 16


def report(doc: dict) -> None:
    lines = _lines(doc, fancy())
    if not fancy():
        for line in lines:
            out(line if line is not None else "")
        return
    out("╔" + "═" * WIDTH + "╗")
    for line in lines:
        if line is None:
            out("╠" + "═" * WIDTH + "╣")
        else:
            out("║" + _fit(line) + "║")
    out("╚" + "═" * WIDTH + "╝")


def _fit(text: str) -> str:
    from rich.cells import cell_len, set_cell_size  # the box only: a terminal's rich is loaded

    return set_cell_size(text, WIDTH) if cell_len(text) != WIDTH else text


def _n(value: int, box: bool) -> str:
    return f"{value:,}" if box else str(value)


def _lines(doc: dict, box: bool) -> list:
    """The box's rows (None: a separator); piped, the same facts as plain lines."""
    n = lambda v: _n(v, box)  # noqa: E731
    title = "Self-Learning Agent Stats"
    out: list = [title.center(WIDTH) if box else title]
    if box:
        out.append(None)
    pad = " " if box else ""
    out.append(f"{pad}{'Total Learnings:' if box else 'Total learnings:'}{'     ' if box else ' '}"
               f"{n(doc['total'])} ({n(doc['global'])} global)")
    out.append(f"{pad}Categories:")
    total = doc["total"] or 0
    width = max((len(n(v)) for v in doc["types"].values()), default=1)
    for rtype, count in doc["types"].items():
        label = TYPE_PLURAL_SHORT.get(rtype, rtype)
        share = count / total if total else 0.0
        if box:
            filled = round(share * BAR)
            out.append(f"   {label + ':':<11}{n(count):>{width}}  {'█' * filled}{'░' * (BAR - filled)}  {share:>4.0%}")
        else:
            out.append(f"  {label}: {count} ({share:.0%})")
    other = {k: v for k, v in doc["statuses"].items() if k in ("pending", "conflicted") and v}
    if other:
        out.append(f"{pad}{'Waiting:' if box else 'Waiting:'} " + ", ".join(f"{n(v)} {k}" for k, v in other.items()))
    if box:
        out.append("")
    out.append(f"{pad}{'Top Impact Learnings:' if box else 'Top impact learnings:'}")
    if not doc["top"]:
        out.append(f"{pad}  (none yet)")
    for i, item in enumerate(doc["top"], 1):
        tail = f" (score {item['score']:.2f})"
        lead = f"{pad}{i}. " if box else f"  {i}. "
        out.extend(_rows(safe(item["text"], one_line=True), lead, tail, box))
    if box:
        out.append("")
    out.append(f"{pad}{'Cross-Project Promotions:' if box else 'Cross-project promotions:'} {n(doc['promoted'])}")
    out.append(f"{pad}Archived (stale): {n(doc['archived'])}")
    ctx = doc["context"]
    if ctx.get("budget"):
        out.append(f"{pad}{'Context Budget:' if box else 'Context budget:'} "
                   f"{n(ctx['tokens'])} / {n(ctx['budget'])} tokens")
    if box:
        out.append(None)
    cap = doc["capture"]
    out.append(f"{pad}{'Capture Health' if box else 'Capture health'} (last {cap['days']} days):")
    rows = [("Events captured", cap["events"]), ("Failures captured", cap["failures"]),
            ("Pairs learned", cap["pairs"]), ("Suggestions shown", cap["suggestions"])]
    for label, value in rows:
        out.append(f"   {label + ':':<22}{n(value)}" if box else f"  {label}: {value}")
    ignored = cap.get("ignored", 0)  # (said only when there are some: most stores never ignore)
    helped = f"{n(cap['helped'])} helped, {n(cap['not_helped'])} did not"
    helped += f", {n(ignored)} ignored" if ignored else ""
    out.append(f"   {'Outcome:':<22}{helped}" if box else f"  Outcome: {helped}")
    rate = cap["repeated_failure_rate"]
    shown = (
        ("n/a (no suggestions)" if box else "n/a (no suggestions yet)")
        if rate is None
        else f"{rate:.0%} ({n(cap['not_helped'] + ignored)} of {n(cap['suggestions'])})"
    )
    out.append(f"   {'Repeated failures:':<22}{shown}" if box else f"  Repeated-failure rate: {shown}")
    waiting = f", {n(cap['spooled'])} waiting" if cap["spooled"] else ""
    if box:  # events hooks had no time for: learned later from the spool, or lost
        out.append(f"   {'Deferred events:':<22}{n(cap['deferred'])} ({n(cap['replayed'])} learned, "
                   f"{n(cap['dropped'])} lost{waiting})")
    else:
        out.append(f"  Spool: {cap['deferred']} deferred, {cap['replayed']} learned later, "
                   f"{cap['dropped']} dropped{waiting}")
    helpful = doc["helpful"]
    if helpful["top"]:
        out.append(f"{pad}{'Most Helpful:' if box else 'Most helpful learnings:'}")
        for i, item in enumerate(helpful["top"], 1):
            tail = (
                f" (helped {item['helped']}×)"
                if box
                else f" (helped {item['helped']}, did not help {item['not_helped']})"
            )
            lead = f"{pad}{i}. " if box else f"  {i}. "
            out.extend(_rows(safe(item["text"], one_line=True), lead, tail, box))
    return out


ROWS = 4  # a learning's line wraps over at most this many rows of the box


def _rows(text: str, lead: str, tail: str, box: bool) -> list[str]:
    """One learning's line: whole when piped; in the box, wrapped after `lead` (the rows after
    the first indented as far) over at most ROWS rows, `tail` at its end, the last row cut with
    an ellipsis past them. A rule ends with its fix ("… fails: use `Y` instead."): a single
    row cut at the box's edge showed the problem and lost the fix (issue 10, cause 6)."""
    if not box:
        return [f"{lead}{text}{tail}"]
    import textwrap

    from rich.cells import cell_len, set_cell_size

    room = WIDTH - cell_len(lead) - 1
    rows = textwrap.wrap(text, room, break_on_hyphens=False) or [""]
    if cell_len(rows[-1] + tail) <= room:  # the tail whole, on the last row or a row of its own
        rows[-1] += tail
    else:
        rows.append(tail.strip())
    if len(rows) > ROWS:
        rows = rows[:ROWS]
        rows[-1] = set_cell_size(rows[-1].rstrip("…"), room - 1).rstrip() + "…"
    return [lead + rows[0]] + [" " * cell_len(lead) + row for row in rows[1:]]
