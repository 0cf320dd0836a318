"""The managed block that `learn flush` writes into an agent's knowledge file.

Everything outside the markers stays byte-for-byte. The block's content depends only on the
learnings (no dates, a stable order), so a second flush with nothing new changes no byte.
"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

START = "<!-- learn:start — managed by `learn flush`; edits inside this block are replaced -->"
END = "<!-- learn:end -->"
_START_PREFIX = "<!-- learn:start"
KNOWLEDGE_FILES = ("CLAUDE.md", "AGENTS.md", "GEMINI.md")
TITLE = "## Learned rules"
NOTE = "_Learned by `learn` from failures and their fixes in earlier sessions; `learn recall` shows more._"


class FlushPlan(NamedTuple):
    target: Path
    old_text: str  # the file as it is ('' when missing)
    new_text: str  # the file as it would be
    rules: int  # rules in the block
    dropped_conflicts: int  # rules left out because they contradict each other
    truncated: int  # rules left out by the budget
    tokens: int

    @property
    def changed(self) -> bool:
        return self.old_text != self.new_text


def choose_target(root: Path, target: str | None) -> Path:
    """`auto`: the first knowledge file that exists in the project root, else CLAUDE.md."""
    if target and target != "auto":
        path = Path(target).expanduser()
        return path if path.is_absolute() else root / path
    for name in KNOWLEDGE_FILES:
        if (root / name).exists():
            return root / name
    return root / "CLAUDE.md"


def select_rules(project_recs: list[dict], global_recs: list[dict], root: str | None, budget: int,
                 now=None) -> tuple[list[tuple[str, str]], int, int, int]:
    """(category, line) pairs within the budget; returns (rules, dropped_conflicts, truncated, tokens)."""
    from learn_cli.engine.conflicts import find_conflicts
    from learn_cli.engine.context import is_no_lesson, one_per_statement, summarize
    from learn_cli.engine.scoring import score
    from learn_cli.text.sanitize import estimate_tokens

    live = [r for r in project_recs if r.get("status") == "active"]
    live += [r for r in global_recs if r.get("status") == "global"]
    live = _dedupe_by_key(live)
    contradicted = {i for a, b, why in find_conflicts(live, same_scope_only=False) for i in (a, b)}
    kept = [r for r in live if r.get("id") not in contradicted]
    kept.sort(key=lambda r: (-score(r, now) if now else -score(r), r.get("key") or r.get("id", "")))
    rules: list[tuple[str, str]] = []
    seen_lines: set[str] = set()
    used = estimate_tokens(f"{START}\n{TITLE}\n{NOTE}\n{END}")
    truncated = 0
    for rec in one_per_statement(kept):  # said once, as the session digest says it
        if is_no_lesson(rec):
            continue  # as the session digest passes over it
        line = "- " + _neutralise(summarize(rec, root=root))
        cost = estimate_tokens(line) + 4  # a category heading may come with it
        if line in seen_lines:
            continue
        if used + cost > budget:
            truncated += 1
            continue
        seen_lines.add(line)
        rules.append((str(rec.get("category") or rec.get("type") or "other"), line))
        used += cost
    return rules, len(live) - len(kept), truncated, used


def render_block(rules: list[tuple[str, str]]) -> str:
    """The block, grouped by category, categories and lines in alphabetical order (no churn)."""
    groups: dict[str, list[str]] = {}
    for category, line in rules:
        groups.setdefault(category, []).append(line)
    out = [START, TITLE, "", NOTE]
    for category in sorted(groups):
        out += ["", f"### {category}", *sorted(groups[category])]
    out.append(END)
    return "\n".join(out) + "\n"


def has_block(text: str) -> bool:
    """Whether `text` holds a managed block (its start marker) already."""
    return _START_PREFIX in text


def splice(old: str, block: str) -> str:
    """Replace the managed block in `old`, or append it after a blank line; nothing else moves."""
    start = old.find(_START_PREFIX)
    if start != -1:
        end = old.find(END, start)
        if end != -1:
            end += len(END)
            if old[end:end + 1] == "\n":
                end += 1
            return old[:start] + block + old[end:]
    if not old:
        return block
    sep = "" if old.endswith("\n\n") else ("\n" if old.endswith("\n") else "\n\n")
    return old + sep + block


def _neutralise(text: str) -> str:
    """A rule must never close or fake the block it stands in."""
    return text.replace("<!--", "<!−−").replace("-->", "−−>")


def _dedupe_by_key(recs: list[dict]) -> list[dict]:
    """A promoted global copy and its project original are one rule."""
    best: dict[str, dict] = {}
    for rec in recs:
        key = rec.get("key") or rec.get("id")
        if key not in best or rec.get("status") == "active":
            best[key] = rec
    return list(best.values())
