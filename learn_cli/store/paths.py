"""Where the store lives and what its layout is (SPEC §1).

`pathlib` is imported where a `Path` is built (`resolve_home`, `Layout`, `make_dir`), not at
the top: with `urllib.parse` and `ipaddress` it costs ~4 ms, and the hook's SessionStart and
its regex cache need only the home as a string (`home_dir`) and a few file names."""

from __future__ import annotations

import os

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~2 ms of every hook)
if TYPE_CHECKING:
    from pathlib import Path

DIR_MODE = 0o700
FILE_MODE = 0o600
LEARNINGS_FILE = "learnings.jsonl"  # in every project folder
ARCHIVE_FILE = "archive.jsonl"  # in every project folder and in global/
CONFIG_FILE = "config.json"
GLOBAL_DIR = "global"
PROJECTS_DIR = "projects"
PROJECT_FILE = "project.json"  # in every project folder
OVERRIDES_FILE = "overrides.json"  # in a project folder, when it has its own settings
# The global record files, in the order Layout.global_files gives them.
GLOBAL_FILES = ("errors.jsonl", "patterns.jsonl", "preferences.json")
ANALYTICS_DIR = "analytics"
SESSIONS_DIR = "sessions"
STATS_FILE = "stats.json"  # in ANALYTICS_DIR
LOG_FILE = "learn.log"

DEFAULT_CONFIG = {
    "schema": 1,
    "auto_capture": True,
    "budget": 2000,
    "min_evidence": 2,
    "promote_min_projects": 2,
    "archive_days": 30,
    "hard_delete_days": 90,
    "session_max_events": 50,
    "session_max_age_days": 14,
    "lookback": 5,
    "search_timeout_s": 5.0,
}


# The numeric settings, each with its type and the least value it takes: counts and days are
# whole numbers from 1 (a fraction is cut), the search timeout is seconds from 0.
NUMBERS = {
    "budget": (int, 1),
    "min_evidence": (int, 1),
    "promote_min_projects": (int, 1),
    "archive_days": (int, 1),
    "hard_delete_days": (int, 1),
    "session_max_events": (int, 1),
    "session_max_age_days": (int, 1),
    "lookback": (int, 1),
    "search_timeout_s": (float, 0),
}


def number(value, name: str):
    """A numeric setting as it is used: `value` as the setting's type when it is a number (not a
    bool) of at least the setting's least value, else the setting's default (DEFAULT_CONFIG)."""
    kind, least = NUMBERS[name]
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < least:
        return DEFAULT_CONFIG[name]
    return kind(value)


def setting_in(name: str, overrides: dict, config: dict):
    """The one lookup of a setting: the project's override, else config.json's value, else the
    default (Store.setting, and setting_from_files for the hook's paths without a Store)."""
    if name in overrides:
        return overrides[name]
    return config.get(name, DEFAULT_CONFIG.get(name))


def setting_from_files(home: str, pid: str | None, name: str):
    """`Store.setting(name, pid)` read straight from the files, for the hook's fast paths that
    open no Store. Raises OSError or ValueError for a file that is there but unreadable: the
    caller then goes the Store's way, which says so."""
    overrides = _json_file(os.path.join(home, PROJECTS_DIR, pid, OVERRIDES_FILE)) if pid else {}
    return setting_in(name, overrides, _json_file(os.path.join(home, CONFIG_FILE)))


def _json_file(path: str) -> dict:
    """A settings file's object ({} when missing or not an object)."""
    from learn_cli.text import jsonlite

    try:
        with open(path, "rb") as fh:
            doc = jsonlite.loads(fh.read() or b"{}")
    except FileNotFoundError:
        return {}
    return doc if isinstance(doc, dict) else {}


class HomeError(ValueError):
    """The home given is unusable (a relative path); the message is one line for the user."""


def resolve_home(explicit: str | os.PathLike | None = None) -> Path:
    """`--home` beats `$SELF_LEARNING_HOME`, which beats `~/.openclaw/self-learning`.

    A relative home is refused: the hook runs in whatever folder the agent is in, so a relative
    path would put a store of private learnings inside each repository it runs in."""
    from pathlib import Path

    return Path(home_dir(explicit))


def home_dir(explicit: str | os.PathLike | None = None) -> str:
    """The home `resolve_home` names, as a string (no pathlib: the hook's fast paths)."""
    for value, name in ((explicit, "--home"), (os.environ.get("SELF_LEARNING_HOME"), "SELF_LEARNING_HOME")):
        if value:
            path = os.path.expanduser(os.fspath(value))
            if not os.path.isabs(path):
                raise HomeError(f"{name} must be an absolute path, got {str(value)[:200]!r}")
            return path
    return os.path.join(os.path.expanduser("~"), ".openclaw", "self-learning")


class Layout:
    """Every path of the store, in one place: `pathlib.Path`s, or strings with `plain=True`.

    The hook's processes use strings (`Store(home, plain=True)`): `pathlib`, with the
    `urllib.parse` and `ipaddress` it imports, costs ~0.46x a bare interpreter's start, more
    than a tool event's own work. So the code a hook runs (store/, capture/, the engine's
    knowledge and merge) takes either kind: `os.path` and `os.fspath`, never a `Path` method,
    on the paths it is given; commands keep `Path`s."""

    def __init__(self, home: Path | str, plain: bool = False):
        if plain:
            kind = str
            home = os.path.normpath(os.fspath(home))
        else:
            from pathlib import Path as kind
        self.kind = kind  # str or Path: what every path of this layout is
        self.home = kind(home)
        base = os.fspath(self.home)
        join = os.path.join
        self.config = kind(join(base, CONFIG_FILE))
        self.global_dir = kind(join(base, GLOBAL_DIR))
        self.global_errors, self.global_patterns, self.global_preferences = (
            kind(join(base, GLOBAL_DIR, name)) for name in GLOBAL_FILES)
        self.global_archive = kind(join(base, GLOBAL_DIR, ARCHIVE_FILE))
        self.index_json = kind(join(base, GLOBAL_DIR, "index.json"))
        self.index_db = kind(join(base, GLOBAL_DIR, "index.db"))
        self._projects = join(base, PROJECTS_DIR)
        self.projects_dir = kind(self._projects)
        self.sessions_dir = kind(join(base, SESSIONS_DIR))
        self.analytics = kind(join(base, ANALYTICS_DIR))
        self.stats = kind(join(base, ANALYTICS_DIR, STATS_FILE))
        self.log = kind(join(base, LOG_FILE))

    def path(self, rel: str) -> Path | str:
        """A path of the home from its relative name (the index's `file` column)."""
        return self.kind(os.path.join(os.fspath(self.home), rel))

    def project_dir(self, pid: str) -> Path | str:
        return self.kind(os.path.join(self._projects, pid))

    def learnings(self, pid: str) -> Path | str:
        return self.kind(os.path.join(self._projects, pid, LEARNINGS_FILE))

    def archive(self, pid: str) -> Path | str:
        return self.kind(os.path.join(self._projects, pid, ARCHIVE_FILE))

    def overrides(self, pid: str) -> Path | str:
        return self.kind(os.path.join(self._projects, pid, OVERRIDES_FILE))

    def project_json(self, pid: str) -> Path | str:
        return self.kind(os.path.join(self._projects, pid, PROJECT_FILE))

    def session(self, sid: str) -> Path | str:
        return self.kind(os.path.join(os.fspath(self.sessions_dir), f"{session_file_stem(sid)}.jsonl"))

    def global_files(self) -> list[Path | str]:
        return [self.global_errors, self.global_patterns, self.global_preferences]

    def record_files(self, archives: bool = True) -> list[str]:
        """Every file that holds records: the global ones, then each project's learnings and
        archive (in folder name order; `archives=False`: the live files alone). Strings, not
        `Path`s: the index checks thousands of them on every command, and building a `Path`
        costs ~10x the `os.stat`."""
        files = [str(p) for p in (*self.global_files(), *([self.global_archive] if archives else []))]
        projects = str(self.projects_dir)
        try:
            pids = sorted(entry.name for entry in os.scandir(projects) if entry.is_dir())
        except FileNotFoundError:
            pids = []
        for pid in pids:
            folder = f"{projects}{os.sep}{pid}{os.sep}"
            files.append(folder + LEARNINGS_FILE)
            if archives:
                files.append(folder + ARCHIVE_FILE)
        return files

    def ensure(self) -> bool:
        """Create the whole layout; True when this was the first run."""
        first = not os.path.exists(self.config)
        for d in (self.home, self.global_dir, self.projects_dir, self.sessions_dir, self.analytics):
            make_dir(d)
        for f in (self.global_errors, self.global_patterns, self.global_archive):
            touch(f)
        if not os.path.exists(self.global_preferences):
            write_new(self.global_preferences, '{"schema": 1, "learnings": []}\n')
        if not os.path.exists(self.stats):
            write_new(self.stats, '{"schema": 1}\n')
        if not os.path.exists(self.config):
            import json

            write_new(self.config, json.dumps(DEFAULT_CONFIG, indent=2) + "\n")
        return first

    def ensure_project(self, pid: str, logs: list | None = None) -> None:
        """The project's folder, and its logs (or only `logs`) empty when missing."""
        make_dir(self.project_dir(pid))
        for path in (self.learnings(pid), self.archive(pid)) if logs is None else logs:
            touch(path)


_PLAIN_SID = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-")
_RESERVED_STEMS = frozenset(("deferred",))  # sessions/pending/deferred.json is not a session's


def session_file_stem(sid: str) -> str:
    """The file name (without extension) of a session id, one name per id.

    Ids made only of letters, digits and `-` (UUIDs: every real agent's) are used as they are;
    any other id becomes a cleaned prefix, `_` and 16 hex of its sha256. A plain name never
    holds `_`, an encoded one always does, so two ids never share a file (`a/b`, `a_b` and
    `a\\0b` are three sessions)."""
    sid = str(sid)
    if 0 < len(sid) <= 100 and _PLAIN_SID.issuperset(sid) and sid not in _RESERVED_STEMS:
        return sid
    from learn_cli.text.hashes import sha256_hex  # not `hashlib`: OpenSSL is ~0.3x a bare start

    prefix = "".join(c if c in _PLAIN_SID else "-" for c in sid[:40]).strip("-") or "session"
    return f"{prefix}_{sha256_hex(sid.encode('utf-8', 'surrogatepass'))[:16]}"


# O_NOFOLLOW on every file the store opens for writing: a symlink planted in the home (to
# ~/.bashrc, say) must make the write fail, not append our lines to the file it points at.
NOFOLLOW = getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


def open_private(path, flags: int, mode: int = FILE_MODE) -> int:
    """os.open for a file of the home: never through a symlink, created 0600."""
    return os.open(path, flags | NOFOLLOW, mode)


def make_dir(path: Path | str) -> None:
    """Create `path` and any missing parent 0700, whatever the umask (`~/.openclaw` too)."""
    folder = os.path.abspath(os.fspath(path))
    if os.path.isdir(folder):
        return
    missing = []
    while not os.path.isdir(folder):
        missing.append(folder)
        parent = os.path.dirname(folder)
        if parent == folder:
            break
        folder = parent
    for folder in reversed(missing):
        try:
            os.mkdir(folder, DIR_MODE)
        except FileExistsError:
            if not os.path.isdir(folder):
                raise
            continue
        os.chmod(folder, DIR_MODE)  # mkdir's mode passes through the umask; 0700 is meant


def touch(path: Path | str) -> None:
    if not os.path.exists(path):
        fd = open_private(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
        os.close(fd)


def write_new(path: Path | str, text: str) -> None:
    """Create a file that does not exist yet; lose no race with another creator."""
    try:
        fd = open_private(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL)
    except FileExistsError:
        return
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(text)
