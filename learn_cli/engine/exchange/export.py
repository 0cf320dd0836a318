"""`learn export`: the portable file written a record at a time (one ordered query per section
and per project), secrets checked again on the way out."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import BinaryIO

from learn_cli.store.index import credential_mark
from learn_cli.text.redact import may_hold_secret, redact

from .common import _SEP, FORMAT, TEXT_FIELDS, VERSION, _redact, redact_record

# ---------------------------------------------------------------- export


@dataclass
class ExportResult:
    global_count: int = 0
    archived_count: int = 0
    project_counts: dict = field(default_factory=dict)  # pid -> live learnings
    names: dict = field(default_factory=dict)  # pid -> the name written for it
    nbytes: int = 0

    @property
    def total(self) -> int:
        return self.global_count + self.archived_count + sum(self.project_counts.values())


def write_export(store, out: BinaryIO, loads: Callable, now: str | None = None) -> ExportResult:
    """Write the whole store to `out` as one export document, a record at a time (one ordered
    query per section and per project, one orjson.dumps per record): memory stays flat
    whatever the store's size. The bytes are those of orjson.dumps(document, OPT_INDENT_2)."""
    from learn_cli.store.record import now_iso

    store.refresh(loads=loads)
    store.index.use_export_order(_created_order)
    known = store.projects()
    result = ExportResult()
    verdicts: dict[str, bool] = {}  # text -> whether redaction changes it (_recheck_secrets)
    doc = _IndentedWriter(out)
    doc.write(b"{")
    for n, (name, value) in enumerate((("format", FORMAT), ("version", VERSION), ("exported", now or now_iso()))):
        doc.key(1, name, first=n == 0)
        doc.value(value)
    doc.key(1, "global")
    result.global_count = doc.records(1, _exported(store, "global", "", loads, verdicts))
    doc.key(1, "projects")
    pids = store.index.exported_projects()
    doc.write(b"{" if pids else b"{}")
    for n, pid in enumerate(pids):
        info = known.get(pid) or {}
        result.names[pid] = info.get("name") or pid
        doc.key(2, pid, first=n == 0)
        _write_project(doc, result, pid, info, _exported(store, "project", pid, loads, verdicts))
    if pids:
        doc.end(1, b"}")
    doc.key(1, "archived")
    result.archived_count = doc.records(1, _exported(store, "archived", "", loads, verdicts, archived=True))
    doc.write(b"\n}\n")
    result.nbytes = doc.nbytes
    return result


def _write_project(doc: _IndentedWriter, result: ExportResult, pid: str, info: dict, records: Iterator) -> None:
    doc.write(b"{")
    fields = (("name", result.names[pid]), ("root", info.get("root") or ""),
              ("remote", _redact(info.get("remote")) if info.get("remote") else None))
    for n, (name, value) in enumerate(fields):
        doc.key(3, name, first=n == 0)
        doc.value(value)
    doc.key(3, "learnings")
    result.project_counts[pid] = doc.records(3, records)
    doc.end(2, b"}")


def _exported(store, section: str, project: str, loads: Callable, verdicts: dict[str, bool],
              archived: bool = False) -> Iterator[dict]:
    """The records of one section or project as they are exported, in order (`verdicts`:
    _recheck_secrets's, for the whole export)."""
    from learn_cli.store.index import BODY_LIMIT

    rows = store.index.exported_rows(section, project)
    for scope, pid, data, as_is, body in rows:
        rec = loads(data)
        rec.pop("updated", None)
        if archived:
            rec["archived_from"] = pid if scope == "archive" else "global"
        # The row's searchable text holds every text field and tag (cut only past BODY_LIMIT):
        # no mark there, none in the record, and its fields need not be gathered. The index
        # decided it when it wrote the row (`as_is`: index.export_columns); a row of an older
        # index brings its text.
        if not as_is and (not isinstance(body, str) or len(body) >= BODY_LIMIT or credential_mark(body)):
            _recheck_secrets(rec, verdicts)
        yield rec


def _created_order(kind, value) -> str:
    """str(rec.get("created") or "") for a `created` that is not text (hand edits only)."""
    if kind in ("array", "object"):
        value = json.loads(value)
    elif kind == "true":
        value = True
    return str(value or "")


def _recheck_secrets(rec: dict, verdicts: dict[str, bool] | None = None) -> dict:
    """Defence in depth on the way out, at a fraction of the cost of a full redaction. Every
    way into the store redacts (capture, `learn add`, import), so a stored record holds no
    secret that this redactor finds. Only a record whose text shows the mark of a credential
    (`store.index.credential_mark`) is redacted again: that covers the usual ones in records written by
    an older redactor or edited by hand. `verdicts`: which texts redaction changes, kept
    across the records of one export (`_dirty`)."""
    fields = [rec[f] for f in TEXT_FIELDS if isinstance(rec.get(f), str) and rec[f]]
    tags = rec.get("tags")
    if isinstance(tags, list):
        fields.extend(t for t in tags if isinstance(t, str))
    if not (fields and credential_mark(_SEP.join(fields))):
        return rec
    # redact_record redacts field by field: when redaction changes none of them it changes
    # nothing, whatever it makes of their joined text. Asked text by text, each distinct text
    # once: a marked record's texts recur in others (its fix, its tags), 4x fewer to check.
    known = {} if verdicts is None else verdicts
    if any(_dirty(text, known) for text in fields):
        redact_record(rec)
    return rec


VERDICTS_KEPT = 10_000  # texts whose verdict an export keeps (bounded memory)


def _dirty(text: str, verdicts: dict[str, bool]) -> bool:
    """Whether redaction changes `text`: the redactor's prefilter first (it answers "nothing
    to redact" for most at about half the redactor's cost), the redactor when it may."""
    verdict = verdicts.get(text)
    if verdict is None:
        if len(verdicts) >= VERDICTS_KEPT:
            verdicts.clear()
        verdict = verdicts[text] = may_hold_secret(text) and redact(text) != text
    return verdict


def _nested(items: list, depth: int) -> list:
    """`items` as a list nested `depth` lists deep (`[[items]]` for 2): where orjson indents
    them as a document indents its records at that depth."""
    for _ in range(depth):
        items = [items]
    return items


class _IndentedWriter:
    """Writes a document piece by piece exactly as orjson.dumps(doc, OPT_INDENT_2) would."""

    CHUNK = 1 << 16  # bytes of records written at once (a write per record cost ~0.1 s of 100,000)
    BATCH = 64  # records dumped by one orjson.dumps

    def __init__(self, out: BinaryIO):
        import orjson

        self.out = out
        self.dumps = orjson.dumps
        self.indent = orjson.OPT_INDENT_2
        self.nbytes = 0
        self.frames: dict[int, tuple[int, int]] = {}  # depth -> _frame(depth)

    def write(self, data: bytes) -> None:
        self.out.write(data)
        self.nbytes += len(data)

    def key(self, depth: int, name: str, first: bool = False) -> None:
        self.write((b"\n" if first else b",\n") + b"  " * depth + self.dumps(name) + b": ")

    def value(self, value) -> None:
        self.write(self.dumps(value))

    def end(self, depth: int, bracket: bytes) -> None:
        """Close a non-empty object or array that opened at `depth`."""
        self.write(b"\n" + b"  " * depth + bracket)

    def records(self, depth: int, records: Iterable[dict]) -> int:
        """A list of records as the value at `depth`; returns how many. The records are dumped
        BATCH at a time, as the items of a list nested at `depth` (`_items`): orjson indents
        them as the document does, where a dump per record re-indented (`bytes.replace`) cost
        ~0.3 s of an export of 100,000."""
        pad = b"\n" + b"  " * (depth + 1)
        count, pieces, held, batch = 0, [], 0, []
        for rec in records:
            batch.append(rec)
            if len(batch) < self.BATCH:
                continue
            piece = (b",", b"[")[count == 0] + pad + self._items(batch, depth, pad)
            count += len(batch)
            batch = []
            pieces.append(piece)
            held += len(piece)
            if held >= self.CHUNK:
                self.write(b"".join(pieces))
                pieces, held = [], 0
        if batch:
            pieces.append((b",", b"[")[count == 0] + pad + self._items(batch, depth, pad))
            count += len(batch)
        if pieces:
            self.write(b"".join(pieces))
        if count:
            self.end(depth, b"]")
        else:
            self.write(b"[]")
        return count

    def _items(self, batch: list[dict], depth: int, pad: bytes) -> bytes:
        """The records of `batch` as the items of a list at `depth`, without its brackets:
        `rec, rec, ...` joined by `,` and `pad`, each indented as orjson indents it there."""
        try:
            text = self.dumps(_nested(batch, depth), option=self.indent)
        except TypeError:  # a record orjson cannot write: each one on its own
            return (b"," + pad).join(self._dumps(rec).replace(b"\n", pad) for rec in batch)
        head, tail = self._frame(depth)
        return text[head:len(text) - tail]

    def _frame(self, depth: int) -> tuple[int, int]:
        """How many bytes come before the first item and after the last one in a list nested
        `depth` lists deep (the brackets and their indents, as orjson writes them)."""
        frame = self.frames.get(depth)
        if frame is None:
            text = self.dumps(_nested([0], depth), option=self.indent)
            head = text.index(b"0")
            frame = self.frames[depth] = (head, len(text) - head - 1)
        return frame

    def _dumps(self, rec: dict) -> bytes:
        try:
            return self.dumps(rec, option=self.indent)
        except TypeError:  # orjson.JSONEncodeError: an integer past 64 bits (a hand edit)
            return json.dumps(rec, indent=2, ensure_ascii=False).encode("utf-8", "surrogatepass")
