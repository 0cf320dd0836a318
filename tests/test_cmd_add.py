"""`learn add`, the interactive `learn` (through a pseudo-terminal) and `learn --auto`."""

from __future__ import annotations

import json
import os
import select
import subprocess
import time

import pytest

from learn_cli.store.project import identify


def stored(learn, pid=None) -> list[dict]:
    pid = pid or identify(learn.cwd).id
    path = learn.home / "projects" / pid / "learnings.jsonl"
    latest: dict = {}
    for line in path.read_text().splitlines():
        rec = json.loads(line)
        latest[rec["id"]] = rec
    return [r for r in latest.values() if not r.get("deleted")]


# -- learn add -----------------------------------------------------------------------------

def test_error_message_becomes_the_error_of_an_error_learning(learn):
    doc = learn.json(
        "add", "ModuleNotFoundError: No module named 'jose'", "--fix", "pip install python-jose[cryptography]"
    )
    rec = doc["record"]
    assert rec["type"] == "error" and rec["category"] == "dependency"
    assert rec["error"] == "ModuleNotFoundError: No module named 'jose'" and rec["context"] == ""
    assert rec["key"].startswith("err:") and rec["status"] == "active" and rec["source"] == "manual"
    assert rec["impact"] == 0.7 and rec["frequency"] == 1 and rec["project"] == "web-api"
    assert doc["merged"] is False and doc["global_merge"] is None
    assert doc["file"] == f"projects/{identify(learn.cwd).id}/learnings.jsonl"
    assert [r["id"] for r in stored(learn)] == [doc["id"]]


def test_plain_text_becomes_the_context_with_a_guessed_type(learn):
    doc = learn.json("add", "Always use --platform linux/amd64 with Docker build on M1 Mac",
                     "--fix", "Add --platform linux/amd64 to docker build commands")
    rec = doc["record"]
    assert (rec["type"], rec["category"]) == ("error", "config")
    assert rec["context"].startswith("Always use --platform") and rec["error"] == ""
    assert rec["key"].startswith("txt:")
    assert learn.json("add", "Prefer pnpm instead of npm")["record"]["type"] == "preference"
    assert learn.json("add", "Run the unit tests before pushing")["record"]["category"] == "testing"


def test_category_decides_the_type_and_options_fill_their_fields(learn):
    rec = learn.json("add", "ImportError: cannot import name 'jwt' from 'jose'", "--context", "Running pytest on auth",
                     "--category", "Runtime", "--impact", "0.8",
                     "--tag", "JWT", "--tag", "jwt", "--tag", "auth")["record"]
    assert rec["type"] == "error" and rec["category"] == "runtime" and rec["impact"] == 0.8
    assert rec["context"] == "Running pytest on auth" and rec["error"].startswith("ImportError")
    assert rec["tags"] == ["jwt", "auth"]
    rec = learn.json("add", "Use Vitest", "--category", "testing")["record"]
    assert rec["type"] == "workflow"
    rec = learn.json("add", "tabs", "--type", "preference", "--category", "style", "--fix", "spaces")["record"]
    assert (rec["type"], rec["category"], rec["context"], rec["fix"]) == ("preference", "style", "tabs", "spaces")


def test_plain_output_says_what_was_stored(learn):
    proc = learn("add", "npm ERR! code ERESOLVE", "--fix", "npm install --legacy-peer-deps", check=0)
    pid = identify(learn.cwd).id
    assert proc.stdout.splitlines()[:3] == ["Learning captured:", "  Type: error", "  Category: dependency"]
    assert "  Fix: npm install --legacy-peer-deps" in proc.stdout and "  Impact: 0.7" in proc.stdout
    assert f"Stored in web-api (projects/{pid}/learnings.jsonl)" in proc.stdout
    assert "📝" not in proc.stdout and "✅" not in proc.stdout


def test_the_same_learning_merges(learn):
    learn("add", "ModuleNotFoundError: No module named 'jose'", "--fix", "pip install python-jose", check=0)
    proc = learn("add", "ModuleNotFoundError: No module named 'jose' (from /srv/other/app.py)",
                 "--fix", "pip install python-jose", check=0)
    assert "Same learning already known here - merged (frequency: 1 -> 2)" in proc.stdout
    [rec] = stored(learn)
    assert rec["frequency"] == 2


def test_a_global_learning_with_the_same_key_is_bumped(learn):
    text = "Docker builds fail on Apple Silicon without explicit platform"
    other = learn.project("ml-pipeline")
    learn("add", text, "--fix", "add --platform linux/amd64", "--global", cwd=other, check=0)
    for cwd in (learn.project("mobile-app"), learn.cwd):
        proc = learn("add", text, "--fix", "add --platform linux/amd64", cwd=cwd, check=0)
    assert "Similar global learning found - merged (frequency: 2 -> 3)" in proc.stdout
    [glob] = [json.loads(line) for line in (learn.home / "global" / "errors.jsonl").read_text().splitlines()][-1:]
    assert glob["frequency"] == 3 and glob["status"] == "global" and len(glob["projects"]) == 3
    doc = learn.json("add", text, "--fix", "add --platform linux/amd64", cwd=learn.project("cli"))
    assert doc["global_merge"] == {"before": 3, "after": 4}


def test_secrets_are_redacted_before_storage(learn):
    learn("add", "export OPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD breaks the build",
          "--fix", "use ghp_abcdefghijklmnopqrstuvwxyz0123456789 from the keychain",
          "--tag", "sk-ant-api03-" + "a1B2c3D4e5" * 4,
          check=0)
    raw = (learn.home / "projects" / identify(learn.cwd).id / "learnings.jsonl").read_text()
    assert "sk-proj-abc" not in raw and "ghp_abc" not in raw and "sk-ant-api03" not in raw
    assert "[REDACTED:" in raw


def test_long_text_is_capped(learn):
    rec = learn.json("add", "x" * 5000, "--fix", "y" * 5000)["record"]
    assert len(rec["context"]) == 500 and len(rec["fix"]) == 1000


@pytest.mark.parametrize("args, message", [
    (["--impact", "1.5"], "--impact must be between 0.0 and 1.0 (got 1.5)"),
    (["--impact", "-0.1"], "--impact must be between 0.0 and 1.0 (got -0.1)"),
    (["--type", "bug"], "--type must be one of error, pattern, preference, workflow (got 'bug')"),
    (["--category", "two words"], "--category must be one lower-case word such as config or ci-cd (got 'two words')"),
    (["--type", "pattern", "--error", "boom"], "--error is for error learnings; this one is a pattern"),
    (["--context", "c", "--error", "e"], "TEXT has no place: --context and --error are both given (drop one, or TEXT)"),
])
def test_bad_option_values_are_usage_errors(learn, args, message):
    proc = learn("add", "some text", *args, check=2)
    assert proc.stderr == f"learn: error: {message}\n"
    assert not (learn.home / "projects").exists() or not any((learn.home / "projects").rglob("learnings.jsonl"))


def test_empty_text_and_missing_text(learn):
    assert learn("add", "   ", check=2).stderr == "learn: error: nothing to store: TEXT is empty\n"
    proc = learn("add", check=2)
    assert "Traceback" not in proc.stderr and "TEXT" in proc.stderr


# -- the interactive `learn` -----------------------------------------------------------------

def run_tty(learn, answers: list[tuple[str, str]], *args, timeout: float = 30) -> tuple[int, str]:
    """Run `learn` on a pseudo-terminal, answering each prompt when it appears."""
    import pty

    master, slave = pty.openpty()
    proc = subprocess.Popen([learn.exe, *args], stdin=slave, stdout=slave, stderr=slave, cwd=str(learn.cwd),
                            env=learn.env, close_fds=True)
    os.close(slave)
    out = b""
    deadline = time.monotonic() + timeout

    def read_until(marker: bytes | None) -> None:
        nonlocal out
        while marker is None or marker not in out:
            assert time.monotonic() < deadline, out.decode(errors="replace")
            ready, _, _ = select.select([master], [], [], 0.2)
            if ready:
                try:
                    chunk = os.read(master, 4096)
                except OSError:  # the child closed the terminal
                    return
                if not chunk:
                    return
                out += chunk
            elif proc.poll() is not None and marker is not None:
                raise AssertionError(out.decode(errors="replace"))

    try:
        for prompt, answer in answers:
            read_until(prompt.encode())
            out_len = len(out)
            os.write(master, answer.encode() + b"\n")
            read_until(answer.encode()[:10] or None) if answer else None
            assert len(out) >= out_len
        read_until(None)
        code = proc.wait(timeout=timeout)
    finally:
        os.close(master)
        if proc.poll() is None:
            proc.kill()
    return code, out.decode(errors="replace").replace("\r\n", "\n")


def test_interactive_learn_asks_and_stores_like_the_seed(learn):
    text = "Docker builds fail on Apple Silicon without explicit platform"
    fix = "Add --platform linux/amd64 to docker build commands"
    learn("add", text, "--fix", fix, "--global", "--impact", "0.7", check=0)
    for project in ("a", "b"):
        learn("add", text, "--fix", fix, cwd=learn.project(project), check=0)
    code, out = run_tty(learn, [
        ("What did you learn?", text),
        ("Category: [config]", ""),
        ("Fix (what to do; Enter to skip):", fix),
        ("Impact, 0.0 to 1.0: [0.7]", ""),
    ])
    assert code == 0, out
    assert "🧠 What did you learn?" in out and "📝 Learning captured:" in out
    assert "  Category: config\n" in out and "  Impact: 0.7\n" in out and "  Project: web-api\n" in out
    assert "✅ Stored in web-api" in out
    assert "🔍 Similar global learning found — merged (frequency: 3 → 4)" in out
    [rec] = stored(learn)
    assert rec["context"] == text and rec["fix"] == "Add --platform linux/amd64 to docker build commands"
    assert rec["category"] == "config" and rec["impact"] == 0.7


def test_interactive_learn_asks_again_on_bad_answers(learn):
    code, out = run_tty(learn, [
        ("What did you learn?", ""),
        ("type what you learned", "ModuleNotFoundError: No module named 'requests'"),
        ("Category: [dependency]", "Not One Word"),
        ("Category: [dependency]", ""),
        ("Fix (what to do; Enter to skip):", "pip install requests"),
        ("Impact, 0.0 to 1.0: [0.7]", "7"),
        ("a number between 0.0 and 1.0", "0.9"),
    ])
    assert code == 0, out
    [rec] = stored(learn)
    assert (rec["type"], rec["category"], rec["impact"]) == ("error", "dependency", 0.9)
    assert rec["error"] == "ModuleNotFoundError: No module named 'requests'"


def test_interactive_learn_stops_on_ctrl_d_without_storing(learn):
    code, out = run_tty(learn, [("What did you learn?", "\x04")])
    assert code == 130 and "nothing stored" in out and "Traceback" not in out
    assert not any((learn.home / "projects").rglob("learnings.jsonl")) or stored(learn) == []


def test_bare_learn_without_a_terminal_prints_usage_and_exits_2(learn):
    proc = learn(input="", check=2)
    assert proc.stderr.startswith("usage: learn ")
    assert proc.stderr.splitlines()[-1] == ("learn: error: `learn` asks questions and needs a terminal; "
                                           "use `learn add TEXT` in scripts")
    assert proc.stdout == ""


# -- learn --auto --------------------------------------------------------------------------

def test_auto_toggles_this_project(learn):
    pid = identify(learn.cwd).id
    proc = learn("--auto", check=0)
    assert proc.stdout.splitlines()[0] == "Auto-learning mode (project web-api): ON -> OFF"
    assert "  Previous state: Capturing errors and corrections automatically" in proc.stdout
    assert "  New state: Manual logging only (use `learn` to log manually)" in proc.stdout
    assert "overrides.json" in proc.stdout and "  To re-enable: run `learn --auto` again" in proc.stdout
    overrides = learn.home / "projects" / pid / "overrides.json"
    assert json.loads(overrides.read_text()) == {"auto_capture": False}
    assert oct(overrides.stat().st_mode & 0o777) == "0o600"
    assert json.loads((learn.home / "config.json").read_text())["auto_capture"] is True
    proc = learn("--auto", check=0)
    assert proc.stdout.splitlines()[0] == "Auto-learning mode (project web-api): OFF -> ON"
    assert "To turn it off: run `learn --auto` again" in proc.stdout
    assert json.loads(overrides.read_text()) == {}  # back on the default: nothing pinned
    assert learn.json("auto")["project_setting"] == "default"
    proc = learn("--auto", "--global", check=0)
    assert "own setting" not in proc.stdout  # two flips did not pin the project (issue 15, item 8)


def test_auto_global_flips_the_default_and_projects_follow_it(learn):
    proc = learn("--auto", "--global", check=0)
    assert proc.stdout.splitlines()[0] == "Auto-learning mode (the default for all projects): ON -> OFF"
    assert json.loads((learn.home / "config.json").read_text())["auto_capture"] is False
    assert "overrides" not in proc.stdout
    # the project follows the default (no override): its effective state is OFF now
    assert learn("--auto", check=0).stdout.splitlines()[0] == "Auto-learning mode (project web-api): OFF -> ON"
    proc = learn("--auto", "--global", check=0)
    assert "This project (web-api) has its own setting: auto-learning stays ON here" in proc.stdout


def test_auto_is_three_states_and_says_which_applies(learn):
    learn("add", "x", check=0)
    doc = learn.json("auto")
    assert (doc["project_setting"], doc["default"], doc["effective"]) == ("default", True, True)
    assert learn("auto", "off", check=0).stdout.startswith("Auto-learning in web-api: OFF, set for this project")
    learn("auto", "off", "--global", check=0)
    learn("auto", "on", "--global", check=0)
    assert learn.json("auto")["effective"] is False  # pinned OFF: the default's changes pass it by
    learn("auto", "default", check=0)
    doc = learn.json("auto")
    assert (doc["project_setting"], doc["effective"]) == ("default", True)
    assert learn("auto", "maybe", check=2).stderr == "learn: error: learn auto takes on, off or default (got 'maybe')\n"
    assert learn("auto", "default", "--global", check=2).stderr.startswith("learn: error: `default` is for a project")


def test_auto_usage_errors(learn):
    assert learn("--global", check=2).stderr == "learn: error: --global goes with --auto: `learn --auto --global`\n"
    proc = learn("--auto", "add", "x", check=2)
    assert proc.stderr.startswith("learn: error: --auto and --global go before no command")
