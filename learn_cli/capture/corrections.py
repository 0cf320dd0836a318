"""User corrections in prompts -> preference rules, negation kept (SPEC §2.4).

"don't use npm, use pnpm", "never commit .env", "always run the linter first", "use ruff
instead of flake8", "stop adding comments". A sentence counts only when the correction opens
it (after filler such as "please", "no,", "from now on"), so "I don't know why this fails" or
"it never worked" are not corrections. The rule keeps the user's own words, so a "never" stays
a never (headroom dropped it: "Never commit secrets" became "commit secrets", §5 item 3).

Stdlib only; the patterns compile on first use.
"""

from __future__ import annotations

from learn_cli.text import rx
from learn_cli.text.lite import cache, namedtuple

MAX_RULE = 200
MAX_SENTENCES = 40

# Verbs a "don't"/"never"/"always" correction is about (an instruction on how to work).
_VERBS = (
    "use|using|run|running|commit|push|force-push|pull|call|add|install|import|edit|modify|touch|write|"
    "create|delete|remove|put|mock|change|rename|merge|rebase|skip|disable|ignore|print|log|store|"
    "hardcode|hard-code|format|reformat|amend|squash|deploy|publish|upload|generate|bump|upgrade|"
    "downgrade|update|leave|check|include|expose|send|pass|return|catch|swallow|suppress|comment|"
    "introduce|break|rely|depend|prefer|keep|ask|pin|activate|sign|test|lint|start|stop|open|close|"
    "make|set|type|wrap|inline|vendor|copy|move|mix|declare|define|let|build|bypass|silence|"
    "commit|reset|revert|checkout|switch|drop|truncate|rewrite|refactor|restart|kill|ship|release|"
    "go|work|write|read|output|emit|return|raise|throw|assume|guess|invent|touch|bother|add"
)
_FILLER = (
    r"(?:(?:please|pls|plz|and|also|but|so|ok|okay|no|nope|nah|actually|again|hey|wait|"
    r"important|note|fyi|seriously|reminder|remember|going forward|from now on|in (?:the )?future|"
    r"next time|in this (?:repo|repository|project|codebase)|here|for this (?:repo|project)|"
    r"i said|i told you|like i said|as i said|one more thing|btw|by the way)\b[\s,:;!\-–—]*)*"
)


# text: the rule in the user's words, e.g. "Never commit .env."; polarity: "never" | "always" |
# "instead"; category: "tooling" | "style". (Runs in a hook: no typing import.)
Correction = namedtuple("Correction", "text polarity category", module=__name__)


@cache
def _patterns() -> tuple:
    verbs = rf"(?:{_VERBS})\b"
    never = rx.compile(
        rf"^{_FILLER}(?:you\s+)?(?:(?:should|must|need\s+to|have\s+to)\s+)?"
        rf"(?:don'?t|do\s+not|dont|never|shouldn'?t|should\s+not|must\s+not|mustn'?t|can'?t|cannot|"
        rf"please\s+don'?t)\s+(?:ever\s+|again\s+)?{verbs}",
        rx.I,
    )
    stop = rx.compile(rf"^{_FILLER}(?:stop|quit|avoid)\s+(?:[a-z][\w-]*ing)\b", rx.I)
    always = rx.compile(
        rf"^{_FILLER}(?:you\s+)?(?:(?:should|must)\s+)?(?:always|only)\s+{verbs}"
        rf"|^{_FILLER}(?:make\s+sure\s+(?:to|you)|remember\s+to|be\s+sure\s+to)\s+{verbs}",
        rx.I,
    )
    instead = rx.compile(
        rf"^{_FILLER}(?:(?:we|this\s+(?:repo|project)|you\s+should|please)\s+)?(?:use|uses|prefer|prefers)\s+"
        r"\S.{0,80}?\s+(?:instead\s+of|rather\s+than|over|not|to)\s+\S",
        rx.I,
    )
    # Sentences, then clauses joined by a dash, a semicolon or "and"/"but" before a correction.
    split = rx.compile(
        r"(?<=[.!;])\s+|\n+|;\s*"
        r"|\s+[—–-]+\s+(?=(?:and\s+|but\s+|also\s+)?(?:please\s+)?(?:don'?t|do\s+not|never|always|stop|only)\b)"
        r"|,?\s+(?:and|but|also|plus)\s+(?=(?:please\s+)?(?:don'?t|do\s+not|never|always|stop|only)\b)",
        rx.I)
    lead = rx.compile(rf"^{_FILLER}(?:you\s+(?:should|must)\s+(?=never|always|only))?", rx.I)
    style = rx.compile(
        r"\b(?:format\w*|indent\w*|tabs?|spaces|quotes?|semicolons?|naming|camel\s*case|snake_case|"
        r"comments?|docstrings?|type\s+hints?|line\s+length|style|emojis?|capitali[sz]\w*|trailing|"
        r"whitespace|imports?\s+order|sorted\s+imports)\b",
        rx.I,
    )
    # A sentence about the moment ("… this session", "for now") or about things named just before
    # ("don't check anything yet", "make sure you put them in the doc") is no standing rule: read in
    # a later session's digest it says nothing, or the wrong thing. `yet` and the pronouns only
    # outside a clause of the rule's own ("never commit code that is not tested yet", "always
    # update the docs when you change them" are rules).
    moment = rx.compile(
        r"\b(?:for\s+now|right\s+now|at\s+the\s+moment|for\s+the\s+moment|this\s+time|this\s+session|"
        r"today|tonight)\b(?!')"
        r"|^(?!.*\b(?:that|which|who|when|whenever|until|unless|if|before|after|once|while)\b)"
        r".*\b(?:yet|them|those|these)\b", rx.I)
    return never, stop, always, instead, split, style, lead, moment


def find_corrections(prompt: str) -> list[Correction]:
    """The corrections a prompt states, in order, at most one per sentence."""
    if not isinstance(prompt, str) or not prompt.strip():
        return []
    never, stop, always, instead, split, style, lead, moment = _patterns()
    found: list[Correction] = []
    seen: set[str] = set()
    for raw in split.split(prompt[:8000])[:MAX_SENTENCES]:
        sentence = " ".join(raw.split()).strip(" \"'`*-•>")
        if not sentence or sentence.endswith("?") or len(sentence) < 8 or moment.search(sentence):
            continue
        polarity = _polarity(sentence, never, stop, always, instead)
        if polarity is None:
            continue
        text = _as_rule(lead.sub("", sentence) or sentence)
        if text.lower() in seen:
            continue
        seen.add(text.lower())
        found.append(Correction(text, polarity, "style" if style.search(sentence) else "tooling"))
    return found


def _polarity(sentence: str, never, stop, always, instead) -> str | None:
    if never.search(sentence) or stop.search(sentence):
        return "never"
    if always.search(sentence):
        return "always"
    if instead.search(sentence):
        return "instead"
    return None


def _as_rule(sentence: str) -> str:
    """The sentence as a rule: capitalised, ending with a full stop, capped."""
    text = sentence.rstrip(" .!;,")
    if len(text) > MAX_RULE - 1:
        text = text[: MAX_RULE - 2].rstrip() + "…"
    return text[:1].upper() + text[1:] + ("" if text.endswith("…") else ".")
