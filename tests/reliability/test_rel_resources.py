"""Resource faults (SPEC §3, §6 "capture failure (disk full, permissions)"): a full disk (a
file size limit, and a small tmpfs where the machine allows mounting one), a read-only home,
a missing or uncreatable home. Capture exits 0 with nothing on stdout and one warning line,
never interrupting the agent; commands fail with one clear line; nothing is half-written."""

from __future__ import annotations

import json
import os
import resource
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

import reliability_kit as kit

EXE = str(Path(sys.executable).with_name("learn"))


def run(home: Path, cwd: Path, *args, input=None, preexec=None, user=None, timeout=60):
    env = kit.learn_env(home, cwd.parent / "userhome")
    (cwd.parent / "userhome").mkdir(exist_ok=True)
    cmd = [EXE, *map(str, args)]
    if user is not None:
        cmd = [*kit.as_user(user), *cmd]
    if isinstance(input, (dict, list)):
        input = json.dumps(input)
    return subprocess.run(cmd, input=input, capture_output=True, text=True, cwd=cwd, env=env, timeout=timeout,
                          preexec_fn=preexec)


def file_size_limit(limit: int):
    def apply():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # writes past the limit fail with EFBIG
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return apply


def one_line(stderr: str) -> bool:
    lines = [line for line in stderr.splitlines() if line.strip()]
    return len(lines) == 1 and "Traceback" not in stderr


def nothing_half_written(home: Path) -> None:
    kit.every_file_parses(home)
    leftovers = [p for p in home.rglob("*.tmp")]
    assert not leftovers, leftovers


def seeded(tmp_path: Path) -> tuple[Path, Path]:
    """A home with a learning and a session buffer, made in this process (not the subject)."""
    home, cwd = tmp_path / "home", kit.project_dir(tmp_path / "work", "app")
    assert kit.learn_here(home, cwd, "add", "the glorp cache needs a warm-up", "--fix", "glorp warm").returncode == 0
    sid = "s-seed"
    assert kit.learn_here(home, cwd, "capture", input=kit.failure(cwd, sid, "t1", "zorp build",
                                                                  "Error: zorp lost its way")).returncode == 0
    return home, cwd


def pair(cwd: Path, n: int) -> list[dict]:
    sid = f"s-full-{n}"
    return [kit.failure(cwd, sid, f"f{n}", f"blorp make target{'abcdefghij'[n % 10]}",
                        f"Error: blorp cannot find the {'abcdefghij'[n % 10]}frob"),
            kit.success(cwd, sid, f"s{n}", f"blorp make target{'abcdefghij'[n % 10]} --frob")]


# ---------------------------------------------------------------------------------------------
# A full disk: RLIMIT_FSIZE


def _limits(home: Path) -> list[int]:
    """File size limits from nothing at all to just past the store's data files, so writes fail
    at every point: before the first byte, in the middle of an appended line, at the index."""
    sizes = sorted({p.stat().st_size for p in home.rglob("*") if p.is_file() and p.stat().st_size})
    limits = {0, 1, 64, 512}
    for size in sizes:
        limits.update({size, size + 1, size + 40, size + 200, size + 700})
    return sorted(limits)


@pytest.mark.slow
def test_capture_with_a_file_size_limit(tmp_path):
    home, cwd = seeded(tmp_path)
    limits = _limits(home)
    for n, limit in enumerate(limits):
        for payload in pair(cwd, n):
            proc = run(home, cwd, "capture", input=payload, preexec=file_size_limit(limit))
            assert proc.returncode == 0 and proc.stdout == "", (limit, proc.stdout, proc.stderr)
            assert proc.stderr == "" or one_line(proc.stderr), (limit, proc.stderr)
        nothing_half_written(home)
    log = (home / "learn.log").read_text().splitlines() if (home / "learn.log").exists() else []
    assert len(log) <= 3, log  # warned once (per kind), not once per tool call
    # Space again: everything works and the store is whole (in this process: no limit to apply).
    for payload in pair(cwd, 99):
        assert kit.learn_here(home, cwd, "capture", input=payload).returncode == 0
    doctor = kit.learn_here(home, cwd, "doctor", "--json")
    checks = {c["name"]: c for c in json.loads(doctor.stdout)["checks"]}
    assert checks["data"]["status"] == "ok", checks["data"]
    print(f"\nfile size limits tried: {len(limits)} ({limits[0]}..{limits[-1]} bytes), 2 captures each")


@pytest.mark.parametrize("args", [("add", "lesson: the snarf daemon needs a reload", "--fix", "snarf reload"),
                                  ("promote",), ("prune",), ("import", "EXPORT"), ("export", "-o", "OUT")])
def test_commands_with_a_full_disk_give_one_line(tmp_path, args):
    home, cwd = seeded(tmp_path)
    export = tmp_path / "export.json"
    assert kit.learn_here(home, cwd, "export", "-o", export).returncode == 0
    args = [str(export) if a == "EXPORT" else str(tmp_path / "out.json") if a == "OUT" else a for a in args]
    if args[0] == "import":  # a learning that is new to this store, so the import must write
        doc = json.loads(export.read_text())
        doc["global"].append(dict(next(iter(doc["projects"].values()))["learnings"][0],
                                  id="learn-20260101T000000Z-abcdef", context="imported: flurbs", key=""))
        export.write_text(json.dumps(doc))
    before = kit.tree_bytes(home)
    proc = run(home, cwd, *args, preexec=file_size_limit(0))
    assert "Traceback" not in proc.stderr
    if proc.returncode != 0:
        assert proc.returncode == 1 and one_line(proc.stderr) and proc.stderr.startswith("learn: error:"), proc.stderr
    nothing_half_written(home)
    if args[0] == "export":
        assert proc.returncode == 1 and not Path(args[-1]).exists()  # no half-written export either
    if proc.returncode == 1:
        changed = {k for k in kit.tree_bytes(home) if kit.tree_bytes(home).get(k) != before.get(k)}
        assert changed <= {"learn.log"}, changed


# ---------------------------------------------------------------------------------------------
# A full disk: a small tmpfs, filled up


@pytest.fixture
def small_disk(tmp_path):
    mount = tmp_path / "disk"
    mount.mkdir()
    try:
        subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m,mode=0700", "tmpfs", str(mount)], check=True,
                       capture_output=True, timeout=10)
    except (OSError, subprocess.SubprocessError) as exc:
        pytest.skip(f"cannot mount a tmpfs here ({exc}); the file size limit tests cover a full disk")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], capture_output=True, timeout=10)


def _fill(mount: Path, leave: int) -> None:
    filler = mount / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        while True:
            os.write(fd, b"\0" * 4096)
    except OSError:
        pass
    finally:
        os.close(fd)
    free = shutil.disk_usage(mount).free
    os.truncate(filler, max(0, filler.stat().st_size - leave + free))


@pytest.mark.slow
def test_capture_and_commands_on_a_full_tmpfs(tmp_path, small_disk):
    home, cwd = small_disk / "home", kit.project_dir(tmp_path / "work", "app")
    assert run(home, cwd, "add", "the glorp cache needs a warm-up", "--fix", "glorp warm").returncode == 0
    for leave in (0, 1024, 8192, 0):
        _fill(small_disk, leave)
        for n in range(3):
            for payload in pair(cwd, n + leave):
                proc = run(home, cwd, "capture", input=payload)
                assert proc.returncode == 0 and proc.stdout == "", proc.stderr
                assert proc.stderr == "" or one_line(proc.stderr), proc.stderr
        proc = run(home, cwd, "add", f"lesson {leave}: the snarf daemon needs a reload", "--fix", "snarf reload")
        assert proc.returncode in (0, 1) and "Traceback" not in proc.stderr
        if proc.returncode:
            assert one_line(proc.stderr), proc.stderr
        for args in (("context",), ("recall", "glorp"), ("stats",)):
            proc = run(home, cwd, *args)
            assert proc.returncode == 0 and "Traceback" not in proc.stderr, (args, proc.stderr)
        nothing_half_written(home)
        (small_disk / "filler").unlink()
    assert "glorp" in run(home, cwd, "recall", "glorp").stdout


# ---------------------------------------------------------------------------------------------
# A read-only home


@pytest.fixture
def read_only(tmp_path):
    """(home, cwd, how to run as someone who cannot write it): see reliability_kit.read_only."""
    home, cwd = seeded(tmp_path)
    with kit.read_only(home, tmp_path) as user:
        yield home, cwd, user


def test_read_only_home(read_only):
    home, cwd, user = read_only
    before = kit.tree_bytes(home)
    for n in range(3):
        for payload in pair(cwd, n):
            proc = run(home, cwd, "capture", input=payload, user=user)
            assert proc.returncode == 0 and proc.stdout == "", proc.stderr
            assert proc.stderr == "" or one_line(proc.stderr), proc.stderr
    ctx = run(home, cwd, "context", "--hook", input=kit.session_end(cwd, "s") | {"hook_event_name": "SessionStart"},
              user=user)
    assert ctx.returncode == 0 and "Traceback" not in ctx.stderr
    kit.check_hook_stdout(ctx.stdout)
    recall = run(home, cwd, "recall", "glorp", user=user)
    assert recall.returncode == 0 and "glorp" in recall.stdout, recall.stderr
    for args in (("add", "a lesson that cannot be stored"), ("prune",), ("promote",)):
        proc = run(home, cwd, *args, user=user)
        assert proc.returncode == 1 and one_line(proc.stderr) and proc.stderr.startswith("learn: error:"), \
            (args, proc.returncode, proc.stderr)
    doctor = run(home, cwd, "doctor", user=user)
    assert doctor.returncode == 1 and "read-only" in doctor.stdout and "Traceback" not in doctor.stderr
    assert kit.tree_bytes(home) == before


# ---------------------------------------------------------------------------------------------
# A missing home


def test_missing_home_is_created_on_first_use(tmp_path):
    home, cwd = tmp_path / "not" / "yet" / "home", kit.project_dir(tmp_path / "work", "app")
    proc = run(home, cwd, "capture", input=kit.failure(cwd, "s1", "t1", "zorp build", "Error: zorp broke"))
    assert proc.returncode == 0 and proc.stdout == ""
    assert (home / "config.json").exists()
    shutil.rmtree(home)  # deleted between two tool calls
    for payload in pair(cwd, 1):
        assert run(home, cwd, "capture", input=payload).returncode == 0
    assert (home / "config.json").exists()
    nothing_half_written(home)


def test_home_that_cannot_be_created(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    home, cwd = blocker / "home", kit.project_dir(tmp_path / "work", "app")
    for payload in pair(cwd, 1) + [kit.prompt(cwd, "s", "don't use npm, use pnpm")]:
        proc = run(home, cwd, "capture", input=payload)
        assert proc.returncode == 0 and proc.stdout == "" and one_line(proc.stderr), proc.stderr
    ctx = run(home, cwd, "context", "--hook")
    assert (ctx.returncode, ctx.stdout, ctx.stderr) == (0, "", "")  # no store: nothing to load, nothing made
    for args in (("add", "x y z"), ("recall", "x"), ("context",), ("stats",), ("prune",), ("promote",),
                 ("export", "-o", "-"), ("doctor",)):
        proc = run(home, cwd, *args)
        assert proc.returncode == 1 and "Traceback" not in proc.stderr, (args, proc.stderr)
        assert one_line(proc.stderr) or args == ("doctor",), (args, proc.stderr)
    assert blocker.read_text() == "not a folder"
