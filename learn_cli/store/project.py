"""Project identity (SPEC §1.1): git top level, id from the origin URL, never the basename."""

from __future__ import annotations

import os
from collections import namedtuple
from pathlib import Path

from learn_cli.text.hashes import sha256_hex


# Not a dataclass nor a typing.NamedTuple: importing either costs milliseconds per hook call.
class Project(namedtuple("Project", "id name root remote")):
    __slots__ = ()

    def as_json(self) -> dict:
        return {"id": self.id, "name": self.name, "root": self.root, "remote": self.remote}


def identify(path: str | os.PathLike | None = None) -> Project:
    start = Path(path or os.getcwd()).expanduser()
    try:
        start = start.resolve()
    except OSError:
        start = start.absolute()
    root, git_dir = find_git_root(start)
    remote = origin_url(git_dir) if git_dir else None
    material = normalize_remote(remote) if remote else str(root)
    pid = sha256_hex(material.encode("utf-8", "replace"))[:12]
    return Project(id=pid, name=root.name or str(root), root=str(root), remote=without_userinfo(remote))


def without_userinfo(url: str | None) -> str | None:
    """The remote without `user:token@` (`https://x-access-token:<token>@github.com/o/r`):
    credentials in a remote are never needed to name a project, so they are never kept."""
    if not url or "@" not in url:
        return url
    scheme, sep, rest = url.partition("://")
    if not sep:
        return url  # scp-like `git@host:path`: a user name, no secret
    authority, slash, path = rest.partition("/")
    if "@" in authority:
        authority = authority.rsplit("@", 1)[1]
    return f"{scheme}://{authority}{slash}{path}"


def in_repository(project: Project) -> bool:
    """True when the project's root is a git repository (its root holds `.git`)."""
    return os.path.exists(os.path.join(project.root, ".git"))


def find_git_root(start: Path) -> tuple[Path, Path | None]:
    """Walk up to the folder holding `.git` (a folder, or a file for worktrees/submodules)."""
    here = start if start.is_dir() else start.parent
    for folder in (here, *here.parents):
        dot_git = folder / ".git"
        if dot_git.is_dir():
            return folder, dot_git
        if dot_git.is_file():
            return folder, _gitdir_from_file(dot_git, folder)
    return here, None


def _gitdir_from_file(dot_git: Path, folder: Path) -> Path | None:
    try:
        text = dot_git.read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return None
    if not text.startswith("gitdir:"):
        return None
    git_dir = Path(text[len("gitdir:"):].strip())
    if not git_dir.is_absolute():
        git_dir = folder / git_dir
    common = git_dir / "commondir"  # a worktree shares the main repository's config
    if common.is_file():
        try:
            git_dir = (git_dir / common.read_text().strip()).resolve()
        except OSError:
            pass
    return git_dir


def origin_url(git_dir: Path) -> str | None:
    """The `origin` remote (else the first remote) from .git/config, read without git."""
    try:
        text = (git_dir / "config").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    remotes: dict[str, str] = {}
    section = None
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("["):
            section = line.strip("[]").strip()
            continue
        if section and section.startswith("remote ") and "=" in line:
            name, value = (part.strip() for part in line.split("=", 1))
            if name == "url":
                remotes.setdefault(section[len("remote "):].strip().strip('"'), value)
    return remotes.get("origin") or next(iter(remotes.values()), None)


def normalize_remote(url: str) -> str:
    """`git@github.com:Me/App.git` and `https://github.com/me/app` are the same project."""
    u = url.strip()
    for scheme in ("https://", "http://", "ssh://", "git://", "git+ssh://"):
        if u.lower().startswith(scheme):
            u = u[len(scheme):]
            break
    else:
        if "@" in u and ":" in u.split("@", 1)[1]:  # scp-like git@host:path
            host, path = u.split("@", 1)[1].split(":", 1)
            u = f"{host}/{path}"
    if "@" in u.split("/", 1)[0]:
        u = u.split("@", 1)[1]  # drop user (and any password) before the host
    host, _, path = u.partition("/")
    host = host.split(":", 1)[0] if host.count(":") == 1 and host.split(":")[1].isdigit() else host
    path = path.rstrip("/")
    if path.endswith(".git"):
        path = path[:-4]
    return f"{host.lower()}/{path.lower()}"
