"""File modes (SPEC §1.3): after a workload that touches every kind of file the store has
(captures, pairs, session buffers, pending notes, the index and its WAL, the log and its old
generation, corrupt-line sidecars, archives, imports, promotion, pruning), every folder under
the home is 0700 and every file 0600, whatever the umask (0000 and 0022), and so is the file
`learn export` writes."""

from __future__ import annotations

import json
import os
import stat
import subprocess
from pathlib import Path

import pytest

import reliability_kit as kit


def run(home: Path, cwd: Path, umask: int, *args, input=None) -> subprocess.CompletedProcess:
    """`learn ARGS` in this process under `umask` (the modes come from the code, which sets
    them whatever the umask: this process's umask is as good as a new one's)."""
    previous = os.umask(umask)
    try:
        proc = kit.learn_here(home, cwd, *args, input=input)
    finally:
        os.umask(previous)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


def wrong_modes(root: Path) -> list[str]:
    wrong = []
    for path in [root, *root.rglob("*")]:
        if path.is_symlink():
            continue
        mode = stat.S_IMODE(path.lstat().st_mode)
        want = 0o700 if path.is_dir() else 0o600
        if mode != want:
            wrong.append(f"{path.relative_to(root)}: {mode:04o}")
    return wrong


@pytest.mark.parametrize("umask", [0o000, 0o022])
def test_everything_under_the_home_is_private(tmp_path, umask):
    from learn_cli.store.api import Store

    home = tmp_path / "home"
    cwds = [kit.project_dir(tmp_path / "work", f"app-{n}") for n in range(3)]
    (tmp_path / "work" / "userhome").mkdir()
    for n, cwd in enumerate(cwds):
        for s in range(2):
            sid = f"s{n}{s}"
            run(home, cwd, umask, "capture", input=kit.failure(cwd, sid, f"f{n}{s}", "zorp build --all",
                                                                 "Error: zorp needs the frob module"))
            run(home, cwd, umask, "capture", input=kit.success(cwd, sid, f"s{n}{s}", "zorp build --all --frob"))
            run(home, cwd, umask, "capture", input=kit.prompt(cwd, sid, "Don't use npm here, use pnpm."))
            run(home, cwd, umask, "capture", input=kit.session_end(cwd, sid))
        run(home, cwd, umask, "add", f"lesson {n}: the glorp cache needs a warm-up", "--fix", "glorp warm")
    cwd = cwds[0]
    run(home, cwd, umask, "add", "a global lesson", "--global", "--fix", "x")
    run(home, cwd, umask, "promote")
    export = tmp_path / "out" / "export.json"
    export.parent.mkdir()
    assert run(home, cwd, umask, "export", "-o", export).returncode == 0
    assert stat.S_IMODE(export.stat().st_mode) == 0o600  # it holds every learning
    doc = json.loads(export.read_text())
    doc["global"].append({"id": "learn-20260101T000000Z-000abc", "type": "pattern", "context": "imported",
                          "fix": "y"})
    export.write_text(json.dumps(doc))
    run(home, cwd, umask, "import", export)
    learnings = next((home / "projects").glob("*/learnings.jsonl"))
    with open(learnings, "ab") as fh:
        fh.write(b"{corrupt line\n")
    (home / "learn.log").write_bytes(b"x" * (1 << 20) + b"\n")  # the next warning rotates it
    os.chmod(home / "learn.log", 0o600)
    run(home, cwd, umask, "recall", "zorp")
    run(home, cwd, umask, "doctor")  # sets the corrupt line aside in learnings.jsonl.corrupt
    run(home, cwd, umask, "prune", "--hard")
    some_id = next(iter(doc["projects"].values()))["learnings"][0]["id"]
    assert run(home, cwd, umask, "forget", some_id).returncode == 0  # archive.jsonl gets a line
    assert (home / "learn.log.1").exists() and learnings.with_name("learnings.jsonl.corrupt").exists()

    store = Store(home, warn_stderr=False)  # an open index: its -wal and -shm files exist now
    try:
        store.refresh()
        assert (home / "global" / "index.db-wal").exists()
        wrong = wrong_modes(home)
    finally:
        store.close()
    assert wrong == [], wrong
    assert wrong_modes(home) == []
    kinds = {p.suffix or p.name for p in home.rglob("*") if p.is_file()}
    print(f"\nmodes (umask {umask:04o}): {sum(1 for _ in home.rglob('*'))} paths checked, kinds {sorted(kinds)}")
