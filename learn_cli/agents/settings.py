"""An agent's JSON settings file, read and written the way its owner wrote it.

- only what changed is rewritten (json_patch): every other byte of the file stays, so install
  then uninstall gives back the file as it was;
- one backup `<file>.learn-backup`: the file before learn first changed it, removed again when
  an uninstall brings the file back to exactly that;
- a symlinked settings file stays a link: its target is written;
- a file that is not valid JSON is refused with one line (`SettingsError`), and left untouched.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

BACKUP_SUFFIX = ".learn-backup"  # beside the settings file: its text before learn first changed it


class SettingsError(Exception):
    pass


class SettingsFile:
    """A JSON settings file read and written the way its owner wrote it."""

    def __init__(self, path: Path):
        self.path = path
        self.exists = path.exists()
        try:
            self.text = _read_exact(path) if self.exists else ""
        except (OSError, UnicodeDecodeError) as exc:
            raise SettingsError(f"cannot read {path}: {getattr(exc, 'strerror', None) or exc}") from None
        try:
            doc = json.loads(self.text) if self.text.strip() else {}
        except ValueError as exc:
            where = f" (line {exc.lineno}, column {exc.colno})" if hasattr(exc, "lineno") else ""
            raise SettingsError(f"{path} is not valid JSON{where}; fix it first: nothing was changed") from None
        if not isinstance(doc, dict):
            raise SettingsError(f"{path} does not hold a JSON object; nothing was changed")
        self.doc = doc

    def render(self, doc: dict) -> str:
        """The file's text holding `doc`: only what changed is rewritten (json_patch), so the
        owner's spacing, key order and escapes stay; a new file is written with two spaces."""
        if not self.text.strip():
            return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
        from learn_cli.agents.json_patch import patch

        return patch(self.text, doc)

    @property
    def backup_path(self) -> Path:
        return self.path.with_name(self.path.name + BACKUP_SUFFIX)

    def save(self, text: str) -> Path | None:
        """Write `text` atomically, through a symbolic link (a linked settings file stays a link
        and its target is written). One backup: the file as it was before learn first changed
        it, kept until learn's entries are gone and the file is that again."""
        target = Path(os.path.realpath(self.path))
        target.parent.mkdir(parents=True, exist_ok=True)
        backup = self._keep_backup(text)
        mode = (target.stat().st_mode & 0o777) if self.exists else 0o644
        tmp = target.with_name(f".{target.name}.learn-{os.getpid()}.tmp")
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
            with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
                fh.write(text)
                fh.flush()
                os.fsync(fh.fileno())
            os.chmod(tmp, mode)
            os.replace(tmp, target)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise
        return backup

    def created_by_learn(self, doc: dict) -> bool:
        """Left empty by an uninstall, never backed up (so learn created it), a plain file."""
        return doc == {} and not self.backup_path.exists() and not self.path.is_symlink()

    def remove(self) -> None:
        """Delete a settings file learn created, and its folder when that is then empty."""
        self.path.unlink()
        try:
            self.path.parent.rmdir()
        except OSError:
            pass  # not empty: the agent's other files live there

    def _keep_backup(self, text: str) -> Path | None:
        """The one backup: made before the first change; dropped once `text` is what it holds."""
        backup = self.backup_path
        try:
            held = _read_exact(backup)
        except FileNotFoundError:
            held = None
        if held is not None and held == text:
            backup.unlink()
            return None
        if held is None and self.exists:
            fd = os.open(backup, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
                fh.write(self.text)
        return backup if backup.exists() else None


def _read_exact(path: Path) -> str:
    """A file's text as it is on disk: line endings untranslated."""
    with open(path, encoding="utf-8", newline="") as fh:
        return fh.read()


def hooks_table(doc: dict, path: Path) -> dict:
    hooks = doc.get("hooks", {})
    if not isinstance(hooks, dict):
        raise SettingsError(f"{path}: \"hooks\" is not a JSON object; nothing was changed")
    for event, groups in hooks.items():
        if not isinstance(groups, list):
            raise SettingsError(f"{path}: hooks.{event} is not a list; nothing was changed")
    return hooks
