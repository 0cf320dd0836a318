"""Captured text made safe and short for an agent to read: `sanitize` (one inert line),
`estimate_tokens` (a conservative token count), `shorten_paths` (project-relative, others
cut to their last two parts) and `cut` (at a word near the limit, ending in "…").

Stdlib only, cheap to import: patterns are built on first use.
"""

from __future__ import annotations

import os

from learn_cli.text import rx
from learn_cli.text.lite import cache

INSTRUCTION_PLACEHOLDER = "[instruction-like text removed]"
FRAME_PLACEHOLDER = "[frame-like text removed]"

# ---------------------------------------------------------------- token estimate

_WHITESPACE = b" \t\n\r\x0b\x0c"
_DIGITS = b"0123456789"
_UPPER = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ"
_PUNCTUATION = b"!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"


def estimate_tokens(text: str) -> int:
    """A conservative token count: it should not fall below what a BPE tokenizer gives.

    0.27 per ASCII letter (≈ 3.7 letters a token) + 0.3 more per capital (camelCase and
    random ids split there) + 1 per digit + 1.2 per ASCII punctuation mark (paths, code
    and flags split at each) + 2.5 per non-ASCII character (CJK, emoji, accents cost 1–4
    tokens), + 1; and at least one token per whitespace-separated word.

    Calibrated against Anthropic's published Claude tokenizer and OpenAI's cl100k/o200k on
    ~3,000 samples (the corpora's errors and commands, SPEC prose, Python and JS code, 160-
    character lines, hex, digits, CJK, emoji): it never came out below the largest of the
    three, and is about 1.35× it in the median. Known under-estimates: base64 blobs and
    minified JS (down to 0.8×), which the digest never contains in bulk. Whitespace is free
    (tokenizers fold it into the next word), so the estimate of lines joined by newlines is
    at most the sum of the lines' estimates.
    """
    if not text:
        return 0
    raw = text.encode("ascii", "ignore")
    ascii_chars = len(raw)
    spaces = ascii_chars - len(raw.translate(None, _WHITESPACE))
    digits = ascii_chars - len(raw.translate(None, _DIGITS))
    marks = ascii_chars - len(raw.translate(None, _PUNCTUATION))
    capitals = ascii_chars - len(raw.translate(None, _UPPER))
    letters = ascii_chars - spaces - digits - marks
    other = len(text) - ascii_chars
    weighted = 0.27 * letters + 0.3 * capitals + digits + 1.2 * marks + 2.5 * other
    return max(_ceil(weighted) + 1, spaces + 1)


def _ceil(number: float) -> int:
    """math.ceil of a finite number, without `math`: a shared library whose loading is ~1 M
    instructions of every hook that imports this module (a failure, a success)."""
    return int(-(-number // 1))


# ---------------------------------------------------------------- sanitize


@cache
def _sanitizer():
    """Translation table and patterns, built on first use (import stays cheap)."""
    table = {code: " " for code in range(0x20)}
    table.update({0x7F: " ", 0x85: " ", 0x2028: " ", 0x2029: " "})
    table.update({code: " " for code in range(0x80, 0xA0)})
    # Invisible characters that can hide or reorder text (zero-width, bidi overrides).
    for code in (*range(0x200B, 0x2010), *range(0x202A, 0x202F), *range(0x2060, 0x2070), 0xFEFF, 0xAD):
        table[code] = None
    # CSI (ESC [ … or the 8-bit 0x9b), OSC (ESC ] … BEL/ST), DCS/PM/APC strings, 2-char escapes.
    ansi = rx.compile(
        r"\x1b(?:\[[0-?]*[ -/]*[@-~]?|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[PX^_][^\x1b]*(?:\x1b\\)?|[ -/]*[0-~]?)"
        r"|\x9b[0-?]*[ -/]*[@-~]?"
    )
    # A closing tag (spaces allowed: "< / system >") or an opening one ("<name attr=…>").
    tag = rx.compile(r"<\s*/\s*[A-Za-z][\w:-]*\s*>|<[A-Za-z][\w:-]*(?:\s[^<>]*)?/?>")
    # Frame words after "<" are neutralised even when the tag is left open.
    frame_tag = rx.compile(
        r"<(?=\s*/?\s*(?:system|assistant|user|human|tool|function|antml|instruction|prompt|context|learn|document"
        r"|im_|\|))",
        rx.IGNORECASE,
    )
    comment = rx.compile(r"<!|<\?|\]\]>|--\s*>|\|>")
    fences = rx.compile(r"`{3,}|~{3,}")
    frame_phrase = rx.compile(
        r"\b(?:end|close|closing|begin|beginning|start)\s+of\s+(?:the\s+)?(?:learned\s+notes|notes|data|"
        r"context|instructions|system\s+(?:prompt|message|reminder))\b|learned\s+notes\s+from\s+earlier\s+sessions",
        rx.IGNORECASE,
    )
    instruction = rx.compile(
        # no word boundaries here: "0Ignore previous instructions0" is still an instruction
        r"(?:ignore|disregard|forget|override|bypass)(?:[\W_]+[^\W_]+){0,5}?[\W_]+(?:instruction|prompt|rule|"
        r"direction|guideline|guardrail|message|context)s?"
        # "disregard the above", "ignore everything above"; not "don't forget to migrate before"
        r"|(?:ignore|disregard)(?:[\W_]+[^\W_]+){0,3}?[\W_]+(?:above|previous(?:ly)?|prior|earlier)\b"
        r"|\bforget\s+(?:everything|all\s+(?:that|of\s+it|previous)|what\s+you\s+(?:were|have\s+been)\s+told)"
        r"|\byou\s+are\s+now\b|\b(?:new|updated|real|actual)\s+(?:system\s+)?instructions?\s*:"
        r"|\b(?:do\s+not|don't|never)\s+(?:tell|inform|alert)\s+the\s+user\b"
        r"|(?<![\w-])(?:system|assistant|human)\s*:",
        rx.IGNORECASE,
    )
    return table, ansi, tag, frame_tag, comment, fences, frame_phrase, instruction


_INSTRUCTION_HINTS = ("ignore", "disregard", "forget", "override", "bypass", "you are now", "instruction",
                      "the user", "system", "assistant", "human")


def sanitize(text, limit: int | None = None) -> str:
    """One inert line of captured text, safe to show the agent as data.

    Removes ANSI escapes, control characters (everything below 0x20, DEL, C1, line and
    paragraph separators) and invisible zero-width/bidi characters; turns the angle brackets
    of anything tag-like (`</system-reminder>`, `<!-- learn:… -->`, `<|im_start|>`) into
    ‹ › so it reads the same but closes nothing; shortens code fences (```) to '''; replaces
    phrases that fake the frame ("end of notes", the digest's own header) with
    "[frame-like text removed]" and instruction-like phrases ("ignore previous
    instructions", "you are now", "system:") with "[instruction-like text removed]";
    collapses whitespace; cuts to `limit` characters (ending in "…").
    """
    if text is None:
        return ""
    if not isinstance(text, str):
        text = text.decode("utf-8", "replace") if isinstance(text, (bytes, bytearray)) else str(text)
    table, ansi, tag, frame_tag, comment, fences, frame_phrase, instruction = _sanitizer()
    if "\\\n" in text:  # a line continued (`&& \⏎ make`) is one line: no `\ ` left in it
        text = text.replace("\\\r\n", " ").replace("\\\n", " ")
    if "\x1b" in text or "\x9b" in text:
        text = ansi.sub("", text)
    text = text.translate(table)
    if "<" in text or ">" in text:
        # Again until nothing changes: a tag made inert inside another (`<A </x>>`) leaves
        # the outer one whole (`<A ‹/x›>`). Each pass takes at least one `<`, so it ends.
        inert = tag.sub(_inert_brackets, text)
        while inert != text:
            text, inert = inert, tag.sub(_inert_brackets, inert)
        text = frame_tag.sub("‹", text)
        text = comment.sub(_inert_brackets, text)
    if "``" in text or "~~" in text:
        text = fences.sub("'''", text)
    lowered = text.lower()
    if "notes" in lowered or " of " in lowered:
        text = frame_phrase.sub(FRAME_PLACEHOLDER, text)
    if any(hint in lowered for hint in _INSTRUCTION_HINTS):
        text = instruction.sub(INSTRUCTION_PLACEHOLDER, text)
    text = " ".join(text.split())
    if limit is not None and len(text) > limit:
        text = cut(text, limit)
    return text


def _inert_brackets(match: rx.Match) -> str:
    return match.group(0).replace("<", "‹").replace(">", "›")


def cut(text: str, limit: int, keep: int = 0, reach: int = 20) -> str:
    """text in at most limit characters, ending in "…" (on a word when one ends within `reach`
    of it and at least `keep` characters are left: `bash test/r…`, not `bash…`)."""
    if limit <= 1:
        return "…"[:max(limit, 0)]
    head = text[: limit - 1]
    space = head.rfind(" ")
    if space >= max(limit - reach, keep):  # end on a word when one ends close to the limit
        head = head[:space]
    return head.rstrip() + "…"


@cache
def _any_path_re() -> rx.Pattern[str]:
    return rx.compile(r"(?<![\w.:/~-])(?:~|[A-Za-z]:)?[/\\](?:[^\s'\"`:,;()\[\]<>|*?]+)")


def shorten_paths(text: str | None, root: str | None = None) -> str:
    """Paths in text made short: under root relative to it, others `…/last/two`.

    Paths of at most two components (`/tmp/x`, `~/notes`) and URLs are left alone.
    """
    if not text:
        return ""
    if "/" not in text and "\\" not in text:
        return text
    base = (root or "").rstrip("/\\")
    home = os.path.expanduser("~")

    def shorten(match: rx.Match[str]) -> str:
        path = match.group(0).rstrip(".")
        trailing = match.group(0)[len(path) :]
        full = home + path[1:] if path.startswith("~") else path
        if base and (full == base or full.startswith((base + "/", base + "\\"))):
            return (full[len(base) + 1 :] or ".") + trailing
        parts = [p for p in rx.split(r"[\\/]+", path) if p]
        if parts and (parts[0] == "~" or parts[0].endswith(":")):
            parts = parts[1:]  # the home or drive prefix is not a component
        if len(parts) <= 2:
            return match.group(0)
        sep = "\\" if "\\" in path and "/" not in path else "/"
        return "…" + sep + sep.join(parts[-2:]) + trailing

    return _any_path_re().sub(shorten, text)


def normalize_path(path: str, root: str | None = None) -> str:
    """A path as learnings store it: project-relative under root, else `<abs>/basename`.
    (Here, beside `shorten_paths`, not in text.keys: every capture of a shell command
    stores its folder this way, and text.keys costs ~2 ms to import.)"""
    if not path:
        return path
    if root:
        base = root.rstrip("/\\")
        if path == base:
            return "."
        if base and path.startswith(base) and path[len(base)] in "/\\":
            return path[len(base) + 1 :]
    if path.startswith(("/", "~")) or rx.match(r"[A-Za-z]:[\\/]", path):
        return "<abs>/" + rx.split(r"[\\/]", path.rstrip("/\\"))[-1]
    return path


@cache
def word_re():
    return rx.compile(r"\w+")


def normalize_text(text) -> str:
    """Lower-case words joined by single spaces (punctuation and spacing ignored): what two
    learnings' texts are compared by (engine.merge, engine.conflicts, engine.knowledge)."""
    if not isinstance(text, str):
        return ""
    return " ".join(word_re().findall(text.casefold()))
