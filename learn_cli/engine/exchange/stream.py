"""Reading an import file one value at a time (`_JsonStream`): the whole file is never held,
whatever its size (up to MAX_IMPORT_BYTES); the header's format and version checked."""

from __future__ import annotations

import codecs
import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from .common import (
    FORMAT,
    MAX_IMPORT_BYTES,
    SECTIONS,
    VERSION,
    ExchangeError,
    _kind,
    _mb,
    _short,
)

# ---------------------------------------------------------------- reading an import


class _JsonStream:
    """A JSON document read a value at a time from a file read in chunks, so that a large
    export is never whole in memory: `members` and `items` walk an object or an array, `value`
    parses one whole value (an entry) with the standard library's C scanner. A value cut by the
    end of a chunk is parsed again once more of the file is read.

    Chunks of 32 KB: the text held (the rest of one chunk and the next, two bytes a character
    past Latin-1) stays under glibc's mmap threshold (128 KB), so it never raises it. With
    1 MB chunks each text was mmapped, freeing one raised the threshold past it, and the next
    ones came from the heap among the entries' small objects, which kept it from shrinking:
    importing the realistic 100,000 file again peaked at 166 MB, 65 MB with 32 KB chunks (and
    no slower)."""

    CHUNK = 1 << 15

    def __init__(self, fh: BinaryIO, name: str, limit: int = MAX_IMPORT_BYTES):
        self.fh = fh
        self.name = name
        self.limit = limit
        self.scan = json.JSONDecoder(parse_constant=_no_constant).scan_once
        self.seek(0)

    # -- position ------------------------------------------------------------------------
    def seek(self, offset: int) -> None:
        self.fh.seek(offset)
        self.fed = offset  # bytes of the file handed to the decoder
        self.text, self.at, self.eof = "", 0, False
        self.decoder = codecs.getincrementaldecoder("utf-8")()

    def offset(self, at: int | None = None) -> int:
        """Where in the file (bytes) the next value, or text[at], starts."""
        if at is None:
            self.peek()
            at = self.at
        return self.fed - len(self.decoder.getstate()[0]) - _utf8_len(self.text[at:])

    def _more(self, least: int = 0) -> bool:
        """Read at least `least` (and at least a chunk) more of the file; False at its end."""
        if self.eof:
            return False
        data = self.fh.read(max(least, self.CHUNK))
        self.fed += len(data)
        if self.fed > self.limit:
            raise ExchangeError(f"{self.name} is over the import limit of {_mb(self.limit)}")
        try:
            self.text = self.text[self.at:] + self.decoder.decode(data, final=not data)
        except UnicodeDecodeError:
            raise ExchangeError(f"{self.name} is not JSON (invalid UTF-8 near byte {self.fed - len(data)})") from None
        self.at = 0
        self.eof = not data
        return True

    # -- structure -------------------------------------------------------------------------
    def peek(self) -> str:
        """The next character that is not blank ('' at the end of the file)."""
        while True:
            self.at = _BLANKS.match(self.text, self.at).end()
            if self.at < len(self.text):
                return self.text[self.at]
            if not self._more():
                return ""

    def take(self, allowed: str, expected: str) -> str:
        char = self.peek()
        if not char or char not in allowed:
            raise self._not_json(f"Expecting {expected}")
        self.at += 1
        return char

    def members(self) -> Iterator[str]:
        """The names of an object's members; the caller reads each value before the next."""
        self.take("{", "an object")
        if self.peek() == "}":
            self.at += 1
            return
        while True:
            if self.peek() != '"':
                raise self._not_json("Expecting property name enclosed in double quotes")
            name = self.value()
            self.take(":", "':' delimiter")
            yield name
            if self.take(",}", "',' delimiter") == "}":
                return

    def items(self) -> Iterator:
        """An array's values, one at a time."""
        self.take("[", "an array")
        if self.peek() == "]":
            self.at += 1
            return
        while True:
            yield self.value()
            if self.take(",]", "',' delimiter") == "]":
                return

    def value(self):
        """The next whole value."""
        self.peek()
        while True:
            try:
                value, end = self.scan(self.text, self.at)
            except StopIteration as stop:  # no value starts at stop.value (a nested one, maybe cut)
                if stop.value >= len(self.text) - _CUT and self._more(len(self.text) - self.at):
                    continue
                raise self._not_json("Expecting value", stop.value) from None
            except RecursionError:
                raise ExchangeError(f"{self.name}: nested too deeply to be an export") from None
            except ValueError as exc:
                if _maybe_cut(exc, len(self.text)) and self._more(len(self.text) - self.at):
                    continue  # the value runs on past what is read: read as much again, retry
                raise self._not_json(getattr(exc, "msg", str(exc)), getattr(exc, "pos", self.at)) from None
            if end >= len(self.text) - _CUT and self._more():
                continue  # a number cut at the end of what is read (`2.` of `2.5`) may go on
            self.at = end
            return value

    def skip(self, depth: int = 3) -> None:
        """Read past the next value without keeping it (entries one by one)."""
        char = self.peek()
        if depth and char == "[":
            for _ in self.items():
                pass
        elif depth and char == "{":
            for _ in self.members():
                self.skip(depth - 1)
        else:
            self.value()

    def document(self):
        """The whole document as one value (only for files that are not exports)."""
        value = self.value()
        self.end()
        return value

    def end(self) -> None:
        if self.peek():
            raise self._not_json("Extra data after the document")

    def _not_json(self, what: str, at: int | None = None) -> ExchangeError:
        where = self.offset(self.at if at is None else at)
        return ExchangeError(f"{self.name} is not JSON ({what.removesuffix(' at')} at byte {where})")


_BLANKS = re.compile(r"[ \t\n\r]*")
_CUT = 16  # a parse error this close to the end of what is read may be a value cut there


def _maybe_cut(exc: ValueError, read: int) -> bool:
    """Whether a parse error may only mean that the value goes on past what is read."""
    msg, pos = getattr(exc, "msg", ""), getattr(exc, "pos", None)
    return pos is not None and (msg.startswith("Unterminated string") or pos >= read - _CUT)


def _no_constant(name: str):
    raise ValueError(f"{name} is not JSON")


def _utf8_len(text: str) -> int:
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))


def check_format(doc, name: str) -> str:
    """The export's version, or ExchangeError naming what makes it no export of ours."""
    if not isinstance(doc, dict):
        raise ExchangeError(f"{name} is not a learn export: the top level is a JSON {_kind(doc)}, not an object")
    fmt = doc.get("format")
    if fmt is None:
        raise ExchangeError(f'{name} is not a learn export: no "format" field (expected "{FORMAT}")')
    if fmt != FORMAT:
        raise ExchangeError(f'{name} is not a learn export: format {_short(fmt)} (expected "{FORMAT}")')
    version = doc.get("version")
    if not isinstance(version, str) or not re.fullmatch(r"\d+(\.\d+){0,2}", version):
        raise ExchangeError(f"{name}: missing or malformed version {_short(version)} (expected 1.x)")
    if version.split(".")[0] != VERSION.split(".")[0]:
        raise ExchangeError(f"{name}: unsupported export version {version} (this learn reads 1.x)")
    sections = [k for k in SECTIONS if k in doc]
    if not sections:
        raise ExchangeError(f'{name}: no "global", "projects" or "archived" section')
    return version


def check_export(path: Path) -> None:
    """ExchangeError unless `path` is an export file this store could read (missing, not a
    file, too big): asked before the store is opened, so that a mistyped name creates nothing."""
    _open_export(path).close()


def _open_export(path: Path):
    """The export file opened for reading, or ExchangeError (missing, not a file, too big)."""
    name = Path(path).name
    try:
        size = os.stat(path).st_size
    except FileNotFoundError:
        raise ExchangeError(f"{path}: no such file") from None
    except OSError as exc:
        raise ExchangeError(f"{path}: {exc.strerror or exc}") from None
    if not os.path.isfile(path):
        raise ExchangeError(f"{path}: not a regular file")
    if size > MAX_IMPORT_BYTES:
        raise ExchangeError(f"{name} is {_mb(size)}: over the import limit of {_mb(MAX_IMPORT_BYTES)}")
    try:
        return open(path, "rb")
    except OSError as exc:
        raise ExchangeError(f"{path}: {exc.strerror or exc}") from None


def _header_ready(header: dict, key: str, name: str) -> bool:
    """True once the format and version read so far are ours (ExchangeError when they are not)."""
    if "format" in header and ("version" in header or header["format"] != FORMAT):
        check_format({**header, key: None}, name)  # raises unless both are right
        return True
    return False
