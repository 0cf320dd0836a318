"""What every part of the exchange shares: the format's constants, its error, redaction of a
record's text and small text helpers."""

from __future__ import annotations

import os
import re
from functools import cache
from pathlib import Path

from learn_cli.store.record import LIVE_STATUSES

FORMAT = "self-learning-agent"
VERSION = "1.0.0"
MAX_IMPORT_BYTES = 256 * 1024 * 1024
NEAR_DUPLICATE = 0.85
MAX_MERGED_FROM = 200
REASONS_KEPT = 20
TEXT_FIELDS = ("context", "error", "fix", "command", "fix_command", "project")
SECTIONS = ("global", "projects", "archived")
_SEP = "\n\x00\n"
_LIVE = LIVE_STATUSES


class ExchangeError(Exception):
    """The file cannot be imported at all; the message says why in one line."""


def _dumps(rec: dict) -> tuple[bytes, bool]:
    """A record as one line of JSON, and whether the standard library wrote it (orjson cannot
    write a lone surrogate, repaired here, or an integer past 64 bits, which it would also
    read back as a float)."""
    import orjson

    try:
        return orjson.dumps(rec), False
    except TypeError:  # orjson.JSONEncodeError
        from learn_cli.store.jsonl import dumps, utf8
        from learn_cli.store.record import utf8_safe

        return utf8(dumps(utf8_safe(rec))), True


def _has_data(path: Path) -> bool:
    try:
        return os.stat(path).st_size > 0
    except FileNotFoundError:
        return False


# ---------------------------------------------------------------- helpers


def redact_record(rec: dict) -> dict:
    """Redact the record's free text in place: one pass over all of it joined (the common
    case, nothing secret, costs one call); field by field only when something was found. (The
    export asks the redactor's prefilter first: `export._recheck_secrets`.)"""
    from learn_cli.text.redact import redact

    fields = [f for f in TEXT_FIELDS if isinstance(rec.get(f), str) and rec[f]]
    tags = rec.get("tags") if isinstance(rec.get("tags"), list) else []
    joined = _SEP.join([*(rec[f] for f in fields), *(t for t in tags if isinstance(t, str))])
    if not joined or redact(joined) == joined:
        return rec
    for f in fields:
        rec[f] = redact(rec[f])
    if tags:
        rec["tags"] = [redact(t) if isinstance(t, str) else t for t in tags]
    return rec


def _redact(text):
    from learn_cli.text.redact import redact

    return redact(text) if isinstance(text, str) else text


@cache
def _key_re():
    return re.compile(r"[a-z]{2,8}:[0-9a-zA-Z:._-]{1,100}")


def _is_pid(value) -> bool:
    return isinstance(value, str) and re.fullmatch(r"[0-9a-f]{12}", value) is not None


def _json_list(text, loads) -> list:
    try:
        value = loads(text) if isinstance(text, (str, bytes)) else None
    except ValueError:
        return []
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def _text(value, limit: int) -> str:
    return "".join(c for c in str(value) if c.isprintable())[:limit]


def _short(value, limit: int = 40) -> str:
    text = repr(value) if not isinstance(value, str) else f'"{_text(value, limit)}"'
    return text if len(text) <= limit + 2 else text[:limit] + "…"


def _kind(value) -> str:
    return {dict: "object", list: "array", str: "string", int: "number", float: "number",
            bool: "boolean", type(None): "null"}.get(type(value), type(value).__name__)


def _mb(size: int) -> str:
    return f"{size / (1024 * 1024):.0f} MB"
