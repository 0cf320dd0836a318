"""The learning record (SPEC §1.2): plain dicts, so unknown fields survive every rewrite."""

from __future__ import annotations

import os
import time

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~2 ms of every hook)
if TYPE_CHECKING:
    from datetime import datetime

SCHEMA = 1
TYPES = ("error", "pattern", "preference", "workflow")
# A type in a count: `learn graph`'s tree says TYPE_PLURAL, the narrow stats table TYPE_PLURAL_SHORT.
TYPE_PLURAL = {"error": "errors", "pattern": "patterns", "preference": "preferences", "workflow": "workflows"}
TYPE_PLURAL_SHORT = {**TYPE_PLURAL, "preference": "prefs"}
STATUSES = ("pending", "active", "global", "archived", "conflicted")
LIVE_STATUSES = ("pending", "active", "global", "conflicted")  # not archived: the ones that count
SHOWN_STATUSES = ("active", "global")  # earned: shown at session start, trusted to guard a command
# A workflow fact about one project ("This project builds with `cd app && cargo check`"): true
# there only, so never promoted to global, whatever other projects' facts of the same goal say.
PROJECT_FACT_TAG = "works-here"
# The categories of an error are `text.failure.CATEGORIES` (the classifier decides them).
DEFAULT_CATEGORY = {"error": "runtime", "pattern": "workflow", "preference": "tooling", "workflow": "testing"}

# Caps on untrusted text (imports, transcripts, payloads).
MAX_CLEAN = 20_000  # text handed to `clean` before capping (caps are at most 2,000)
FIELD_CAPS = {"context": 500, "error": 2000, "fix": 1000, "command": 1000, "fix_command": 1000, "project": 200}


def is_project_fact(rec: dict) -> bool:
    """A fact of the project that learned it (PROJECT_FACT_TAG among its tags)."""
    tags = rec.get("tags")
    return isinstance(tags, list) and PROJECT_FACT_TAG in tags


def now_iso(ts: float | None = None) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() if ts is None else ts))


def parse_iso(text) -> datetime | None:
    if not isinstance(text, str) or not text:
        return None
    from learn_cli.store.score import UTC, datetime  # here: ~1 ms that most hook calls never need

    try:
        dt = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return dt if dt.tzinfo else dt.replace(tzinfo=UTC)


def is_time(value) -> bool:
    """`parse_iso(value) is not None`, answered without parsing for a time in the form learn
    writes (`2026-11-29T17:55:00Z`: its day checked once per day met): an import checks two
    times an entry, ~5 µs each parsed."""
    if type(value) is str and len(value) == 20:
        shape = _canonical_time()(value)
        if shape is not None:
            return _valid_day(shape.group(1))
    return parse_iso(value) is not None


_TIME_SHAPE: list = []  # the compiled form of learn's times, once needed
_DAYS: dict[str, bool] = {}  # day -> whether it is a real one


def _canonical_time():
    if not _TIME_SHAPE:
        from learn_cli.text import rx

        _TIME_SHAPE.append(rx.compile(r"(\d{4}-\d\d-\d\d)T(?:[01]\d|2[0-3]):[0-5]\d:[0-5]\dZ", rx.ASCII).fullmatch)
    return _TIME_SHAPE[0]


def _valid_day(day: str) -> bool:
    known = _DAYS.get(day)
    if known is None:
        from datetime import date

        if len(_DAYS) >= 4096:
            _DAYS.clear()
        try:
            known = _DAYS[day] = date.fromisoformat(day) is not None
        except ValueError:
            known = _DAYS[day] = False
    return known


_sequence = [int.from_bytes(os.urandom(3), "big")]


def new_id(ts: float | None = None) -> str:
    """Random start, then a per-process sequence: ids made by one process never collide, and
    two processes collide only if their random 24-bit ranges meet within the same second."""
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(time.time() if ts is None else ts))
    _sequence[0] = (_sequence[0] + 1) % 0x1000000
    return f"learn-{stamp}-{_sequence[0]:06x}"


def make_record(**fields) -> dict:
    """A new record with every required field; caller's fields win."""
    now = fields.pop("now", None) or now_iso()
    rtype = fields.get("type") or "error"
    rec = {
        "id": new_id(),
        "type": rtype,
        "category": DEFAULT_CATEGORY.get(rtype, "runtime"),
        "context": "",
        "error": "",
        "fix": "",
        "project": "",
        "projects": [],
        "frequency": 1,
        "impact": 0.5,
        "created": now,
        "last_used": now,
        "status": "active",
        "source": "manual",
        "key": "",
        "schema": SCHEMA,
    }
    rec.update({k: v for k, v in fields.items() if v is not None})
    return rec


def utf8_safe(rec: dict) -> dict:
    """`rec`, or a copy of it whose lone surrogates are U+FFFD, so that it can be written as
    UTF-8 to the files and the index (`learn add` with bytes in argv that are not UTF-8)."""
    from learn_cli.text import jsonlite

    try:
        jsonlite.dumps(rec, ensure_ascii=False).encode("utf-8")
        return rec
    except UnicodeEncodeError:
        return _scrub(rec)


def _scrub(value):
    if isinstance(value, str):
        return "".join("\ufffd" if "\ud800" <= c <= "\udfff" else c for c in value)
    if isinstance(value, list):
        return [_scrub(v) for v in value]
    if isinstance(value, dict):
        return {_scrub(k): _scrub(v) for k, v in value.items()}
    return value


def store_file_kind(rec: dict) -> str:
    """Which global file a promoted copy of this record belongs to."""
    rtype = rec.get("type")
    if rtype == "preference":
        return "preferences"
    if rtype in ("pattern", "workflow"):
        return "patterns"
    return "errors"


def coerce_record(obj, clean=None) -> tuple[dict | None, str | None]:
    """Validate an untrusted record (import files). Returns (record, None) or (None, reason).

    Field types are checked and coerced, text capped, unknown fields kept (after capping
    strings), so a hostile file cannot smuggle huge or mistyped values into the store.
    `clean(text) -> text` (redaction) is applied to every string before it is capped: a cap
    that cuts through a secret can leave a piece that redaction no longer recognises.
    """
    if not isinstance(obj, dict):
        return None, f"not an object ({type(obj).__name__})"
    if clean is not None:
        obj = _cleaned(obj, clean)
    text_of = {k: obj.get(k) for k in ("context", "error", "fix")}
    for field, value in text_of.items():
        if value is not None and not isinstance(value, str):
            return None, f"field {field!r} must be text, got {type(value).__name__}"
    if not any(isinstance(v, str) and v.strip() for v in text_of.values()):
        return None, "no text: context, error and fix are all missing or empty"
    rec: dict = {}
    fields_only = obj.keys() <= _FIELDS  # the usual: every name is one of ours (short text)
    names = _NAMES
    for key, value in obj.items():
        if not fields_only and (not isinstance(key, str) or len(key) > 64):
            continue
        # One string object per field name for every record (the parser makes new ones for
        # each entry): ~1.2 KB less a record an import holds, ~30 % of it.
        key = names.get(key, key)
        # Most values are numbers, short text and flat lists of them, which the caps leave as
        # they are: only odd shapes get `_cap_value`'s walk and copy (an import has 100,000).
        kind = type(value)
        if kind is str:
            rec[key] = value if len(value) <= _MAX_TEXT else _cap_value(value)
        elif kind in _SCALARS or _within_caps(value):
            rec[key] = value
        else:
            rec[key] = _cap_value(value)
    rtype = obj.get("type", "error")
    if rtype not in TYPES:
        return None, f"unknown type {str(rtype)[:30]!r}"
    rec["type"] = rtype
    cat = obj.get("category")
    rec["category"] = cat.lower()[:40] if isinstance(cat, str) and cat.strip() else DEFAULT_CATEGORY[rtype]
    for field, cap in FIELD_CAPS.items():
        value = obj.get(field, "")
        if value is None:
            value = ""
        if not isinstance(value, str):
            return None, f"field {field!r} must be text, got {type(value).__name__}"
        rec[field] = value if len(value) <= cap else cap_text(value, cap)
    rec["frequency"] = _int(obj.get("frequency"), 1, 1, 1_000_000)
    rec["impact"] = _float(obj.get("impact"), 0.5, 0.0, 1.0)
    for field in ("created", "last_used"):
        if not is_time(obj.get(field)):
            rec[field] = now_iso()
    projects = obj.get("projects")
    rec["projects"] = [p[:64] for p in projects if isinstance(p, str)][:1000] if isinstance(projects, list) else []
    status = obj.get("status", "active")
    rec["status"] = status if status in STATUSES else "active"
    ident = obj.get("id")
    if not (isinstance(ident, str) and 0 < len(ident) <= 80 and ident.isprintable()):
        rec["id"] = new_id()
    rec.setdefault("schema", SCHEMA)
    return rec, None


def _cleaned(value, clean, depth: int = 0):
    if isinstance(value, str):
        return clean(value[:MAX_CLEAN])
    if depth > 4:
        return value
    if isinstance(value, list):
        return [_cleaned(v, clean, depth + 1) for v in value[:200]]
    if isinstance(value, dict):
        out = {k: _cleaned(v, clean, depth + 1) for k, v in list(value.items())[:100]}
        if depth == 0 and out.get("id") != value.get("id"):
            out.pop("id")  # an id with a secret in it is no id of ours: the record gets a new one
        return out
    return value


def cap_text(text: str, cap: int) -> str:
    """At most `cap` characters, cut at a word boundary when there is one: a cut through the
    middle of a token can leave half a secret that redaction no longer recognises."""
    if len(text) <= cap:
        return text
    cut = text[:cap]
    if not text[cap].isspace():
        boundary = max(cut.rfind(" "), cut.rfind("\n"), cut.rfind("\t"))
        if boundary > 0:
            cut = cut[:boundary]
    return cut


_MAX_TEXT = 2000  # characters of any other text field
# The fields of a record (docs/ARCHITECTURE.md), and those import and promotion add.
_FIELDS = frozenset((
    "id", "type", "category", "context", "error", "fix", "project", "projects", "frequency", "impact",
    "created", "last_used", "status", "source", "key", "tool", "command", "fix_command", "exit_code", "env",
    "evidence", "low_since", "schema", "tags", "updated", "helped", "not_helped", "conflict_with",
    "pre_conflict_status", "merged_from", "archived_from", "deleted", "helped_by"))
_NAMES = {name: name for name in _FIELDS}
_SCALARS = (int, float, bool, type(None))


def _within_caps(value) -> bool:
    """A list or object that `_cap_value` returns unchanged, of the usual shapes (tags,
    projects, env, evidence): at most 200 items (100 keys of up to 64 characters), each short
    text, a number, or an object of those."""
    kind = type(value)
    if kind is list:
        items = value
        if len(items) > 200:
            return False
    elif kind is dict:
        items = value.values()
        if not _short_keys(value):
            return False
    else:
        return False
    for item in items:
        kind = type(item)
        if kind is str:
            if len(item) > _MAX_TEXT:
                return False
        elif kind is dict:
            if not (_short_keys(item) and all(type(v) in _SCALARS or type(v) is str and len(v) <= _MAX_TEXT
                                              for v in item.values())):
                return False
        elif kind not in _SCALARS:
            return False
    return True


def _short_keys(obj: dict) -> bool:
    return len(obj) <= 100 and all(type(k) is str and len(k) <= 64 for k in obj)


def _cap_value(value, depth: int = 0):
    if isinstance(value, str):
        return cap_text(value, _MAX_TEXT)
    if isinstance(value, (int, float, bool)) or value is None:
        return value
    if depth > 3:
        return None
    if isinstance(value, list):
        return [_cap_value(v, depth + 1) for v in value[:200]]
    if isinstance(value, dict):
        return {str(k)[:64]: _cap_value(v, depth + 1) for k, v in list(value.items())[:100]}
    return None


def _int(value, default: int, lo: int, hi: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return default
    return max(lo, min(hi, int(value)))


def _float(value, default: float, lo: float, hi: float) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
        return default
    return max(lo, min(hi, float(value)))


def fix_text(rec: dict) -> str:
    """The fix a record states, as text: its `fix`, else its `fix_command` (what copies of a
    key are compared by: engine.knowledge.same_learning, engine.conflicts, engine.merge)."""
    for field in ("fix", "fix_command"):
        value = rec.get(field)
        if isinstance(value, str) and value.strip():
            return value
    return ""


def fix_steps(fix: str) -> list[str]:
    """The commands of a stored fix (`a && b` is two steps); `engine.wording.steps`."""
    return [s.strip() for s in (fix or "").split(" && ") if s.strip()]
