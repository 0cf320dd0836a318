"""`learn doctor`'s checks, one module per part of the system (commands/doctor.py runs them).

Each check ends ok, repaired, warn or problem (`Check`); this module holds what they share.
- files.py    the store's folders and files: layout, permissions, temp files, disk, archive
- data.py     corrupt lines and documents, set aside into `<file>.corrupt`
- index.py    the SQLite index, the record logs it measures, and the keys a prune has yet to redo
- capture.py  the agents' hooks, capture health, the spool
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

OK, REPAIRED, WARN, PROBLEM = "ok", "repaired", "warn", "problem"
MAX_DETAILS = 20


@dataclass
class Check:
    name: str
    status: str
    summary: str
    details: list[str] = field(default_factory=list)

    def as_json(self) -> dict:
        return {"name": self.name, "status": self.status, "summary": self.summary, "details": self.details}


def capped(details: list[str]) -> list[str]:
    if len(details) <= MAX_DETAILS:
        return details
    return details[:MAX_DETAILS] + [f"… and {len(details) - MAX_DETAILS:,} more"]


def plural(n: int, word: str) -> str:
    return f"{n:,} {word}" if n == 1 else f"{n:,} {word}s"


def size_text(n: int) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} TB"


def home_path(path: Path) -> str:
    from learn_cli.render.learning import display_path

    return display_path(path)
