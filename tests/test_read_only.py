"""Commands that only read never write: a mistyped home, or a folder that is not a project, is
one line and exit 1 (an empty answer for the session-start hook), and no store, project or
file appears."""

from __future__ import annotations

from pathlib import Path

import pytest

READERS = [("recall", "docker"), ("stats",), ("context",), ("show", "learn-x"), ("graph",),
           ("export", "-o", "out.json"), ("recall", "docker", "--json")]


def tree(home: Path) -> dict[str, int]:
    """Every file of the store and its size. The derived index may refresh itself, and taking
    a file's lock leaves its empty `.lock` beside it: neither is data."""
    return {str(p.relative_to(home)): p.stat().st_size for p in sorted(home.rglob("*"))
            if p.is_file() and "index.db" not in p.name and not p.name.endswith(".lock")}


def one_error_line(proc) -> str:
    assert proc.returncode == 1 and proc.stdout == "", (proc.stdout, proc.stderr)
    [line] = proc.stderr.splitlines()
    assert line.startswith("learn: error: ")
    return line


@pytest.mark.parametrize("args", READERS)
def test_a_mistyped_home_creates_nothing(learn, args):
    typo = learn.tmp / "typo" / "x"
    line = one_error_line(learn("--home", typo, *args))
    assert f"no store at {typo} (check --home; nothing was created)" in line
    assert not typo.exists() and not typo.parent.exists()
    assert not (learn.cwd / "out.json").exists()


def test_no_store_yet_is_said_plainly_and_stays_absent(learn):
    line = one_error_line(learn("stats"))
    assert "no store at" in line and "SELF_LEARNING_HOME" in line
    assert not learn.home.exists()
    hook = learn("context", "--hook", input="", check=0)
    assert hook.stdout == "" and not learn.home.exists()
    status = learn("hooks", "status", check=0)
    assert "not installed" in status.stdout and not learn.home.exists()


def test_a_folder_that_is_not_a_project_is_refused_and_not_registered(learn):
    """`context` answers for a project; `recall` and `stats` answer for the whole store from a
    folder that is no project (`learn recall docker` from ~), but not for a --project that
    is none."""
    learn("add", "Docker needs --platform on M1", check=0)  # a store, and web-api in it
    before = tree(learn.home)
    stray = learn.tmp / "scratch"
    stray.mkdir()
    for args in (("context",), ("--project", stray, "recall", "docker"), ("--project", stray, "stats")):
        line = one_error_line(learn(*args, cwd=stray))
        assert f"{stray} is not a project" in line and "--project DIR" in line
    found = learn.json("recall", "docker", cwd=stray)
    assert [hit["project"] for hit in found["results"]] == ["web-api"]
    assert "Docker needs --platform on M1" in learn("recall", "docker", cwd=stray).stdout
    stats = learn.json("stats", cwd=stray)
    assert stats["total"] == 1 and stats["context"]["budget"] == 0
    assert "Context budget" not in learn("stats", cwd=stray).stdout
    hook = learn("context", "--hook", input={"session_id": "s1", "cwd": str(stray),
                                              "hook_event_name": "SessionStart", "source": "startup"}, check=0)
    assert hook.stdout == ""
    assert tree(learn.home) == before


def test_a_new_git_project_is_read_but_not_registered(learn):
    learn("add", "Docker needs --platform on M1", "--global", check=0)
    before = tree(learn.home)
    repo = learn.project("fresh", remote="git@github.com:me/fresh.git")
    assert "Docker" in learn("recall", "docker", cwd=repo, check=0).stdout
    assert learn.json("stats", cwd=repo)["total"] >= 1
    learn("context", cwd=repo, check=0)
    assert tree(learn.home) == before
    learn("add", "fresh needs make", cwd=repo, check=0)  # a write registers it
    assert len(tree(learn.home)) > len(before)
