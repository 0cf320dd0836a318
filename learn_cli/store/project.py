"""Project identity (SPEC §1.1): git top level, id from the origin URL, never the basename."""

from __future__ import annotations

import os

from learn_cli.text.hashes import sha256_hex
from learn_cli.text.lite import namedtuple


# Not a dataclass nor a typing.NamedTuple: importing either costs milliseconds per hook call.
class Project(namedtuple("Project", "id name root remote", module=__name__)):
    __slots__ = ()

    def as_json(self) -> dict:
        return {"id": self.id, "name": self.name, "root": self.root, "remote": self.remote}


def identify(path: str | os.PathLike | None = None) -> Project:
    """The project a folder belongs to. Strings and os.path only: every hook call starts here,
    and pathlib (with urllib.parse and ipaddress) costs more than the rest of this module."""
    start = os.path.expanduser(os.fspath(path or os.getcwd()))
    try:
        start = os.path.realpath(start)
    except OSError:
        start = os.path.abspath(start)
    root, git_dir = find_git_root(start)
    remote = origin_url(git_dir) if git_dir else None
    material = normalize_remote(remote) if remote else main_checkout(root, git_dir)
    pid = sha256_hex(material.encode("utf-8", "replace"))[:12]
    return Project(id=pid, name=os.path.basename(root) or root, root=root, remote=without_userinfo(remote))


def main_checkout(root: str, git_dir: str | None) -> str:
    """The folder that names a repository without a remote: its main checkout, whose `.git` a
    worktree shares (`git worktree add .worktrees/feature`: one project, not one per branch, as
    with a remote). A bare repository's worktrees, and a folder outside git, name themselves."""
    if git_dir and os.path.basename(git_dir) == ".git":
        return os.path.dirname(git_dir)
    return root


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


def find_git_root(start: str) -> tuple[str, str | None]:
    """Walk up from an absolute folder to the one holding `.git` (a folder, or a file for
    worktrees/submodules): (that folder, its git dir), or (`start`'s folder, None)."""
    here = start if os.path.isdir(start) else os.path.dirname(start)
    folder = here
    while True:
        dot_git = os.path.join(folder, ".git")
        if os.path.isdir(dot_git):
            return folder, dot_git
        if os.path.isfile(dot_git):
            return folder, _gitdir_from_file(dot_git, folder)
        parent = os.path.dirname(folder)
        if parent == folder:
            return here, None
        folder = parent


def _read_text(path: str) -> str:
    with open(path, encoding="utf-8", errors="replace") as fh:
        return fh.read()


def _gitdir_from_file(dot_git: str, folder: str) -> str | None:
    try:
        text = _read_text(dot_git).strip()
    except OSError:
        return None
    if not text.startswith("gitdir:"):
        return None
    git_dir = os.path.join(folder, text[len("gitdir:"):].strip())  # an absolute gitdir stays as it is
    common = os.path.join(git_dir, "commondir")  # a worktree shares the main repository's config
    if os.path.isfile(common):
        try:
            git_dir = os.path.realpath(os.path.join(git_dir, _read_text(common).strip()))
        except OSError:
            pass
    return git_dir


def origin_url(git_dir: str) -> str | None:
    """The `origin` remote (else the first remote) from .git/config, read without git."""
    try:
        text = _read_text(os.path.join(git_dir, "config"))
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
