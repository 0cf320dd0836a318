"""What an import reads (`Incoming`: an entry and where it goes) and what it reports."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from .common import REASONS_KEPT

# ---------------------------------------------------------------- placing entries


@dataclass
class Incoming:
    """One entry of the file on its way into the store."""

    rec: dict
    target: Path
    scope: str  # project | archive | global | global-archive
    pid: str


@dataclass
class ImportReport:
    source: str
    version: str
    entries: int = 0  # entries in the file
    new: int = 0
    merged: int = 0
    duplicates: int = 0
    conflicts: int = 0
    skipped: int = 0
    reasons: list = field(default_factory=list)  # first REASONS_KEPT skip reasons
    warnings: list = field(default_factory=list)  # section-level problems
    conflict_pairs: list = field(default_factory=list)  # {incoming, existing, reason, incoming_text, existing_text}
    projects_created: list = field(default_factory=list)
    dry_run: bool = False

    @property
    def processed(self) -> int:
        return self.new + self.merged

    def skip(self, where: str, reason: str) -> None:
        self.skipped += 1
        if len(self.reasons) < REASONS_KEPT:
            self.reasons.append(f"{where}: {reason}")

    def as_json(self) -> dict:
        return {"source": self.source, "version": self.version, "entries": self.entries, "new": self.new,
                "merged": self.merged, "duplicates": self.duplicates, "conflicts": self.conflicts,
                "skipped": self.skipped, "processed": self.processed, "skipped_reasons": self.reasons,
                "warnings": self.warnings, "conflict_pairs": self.conflict_pairs[:100],
                "projects_created": self.projects_created, "dry_run": self.dry_run}
