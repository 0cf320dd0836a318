"""The real coding agents, installed from npm and run headless against tests/agents/fake_model.py.

The versions tested are pinned here (one place); each is installed once into a cache folder
outside the repository (`$LEARN_AGENTS_CACHE`, default `~/.cache/learn-agent-tests/<name>-<version>`)
and reused by later runs. Without npm the tests skip with one line saying so; an install that
fails because the registry cannot be reached skips too (CI must not fail for a network outage),
any other install failure fails.

Each agent class knows how to point its agent at the fake model, where its settings live, and
how to run one headless session (`run(prompt, cwd)`), with the agent's own hooks firing into
the installed `learn` (registered by `learn hooks install --agent …` in the temporary HOME).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import ClassVar

import pytest

# package, version, executable: the versions these tests were written against.
PINNED = {
    "claude-code": ("@anthropic-ai/claude-code", "2.1.197", "claude"),
    "codex": ("@openai/codex", "0.171.0", "codex"),
    "gemini": ("@google/gemini-cli", "0.61.0", "gemini"),
}
RUN_TIMEOUT = 600  # seconds for one headless session (1-6 s on an idle machine; 40 s seen on a crowded one)
INSTALL_TIMEOUT = 900
NETWORK_ERRORS = ("ENOTFOUND", "EAI_AGAIN", "ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "ENETUNREACH",
                  "EHOSTUNREACH", "network", "socket hang up", "getaddrinfo", "proxy", "certificate")


def cache_root() -> Path:
    explicit = os.environ.get("LEARN_AGENTS_CACHE")
    return Path(explicit).expanduser() if explicit else Path.home() / ".cache" / "learn-agent-tests"


def installed_bin(name: str) -> str:
    """The agent's executable, installed from npm into the cache on first use (or a skip)."""
    package, version, exe = PINNED[name]
    npm = shutil.which("npm")
    if npm is None or shutil.which("node") is None:
        pytest.skip("npm/node not found: the real-agent tests need Node.js and npm")
    folder = cache_root() / f"{name}-{version}"
    binary = folder / "node_modules" / ".bin" / exe
    if binary.exists():
        return str(binary)
    staging = folder.with_name(folder.name + f".tmp-{os.getpid()}")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    (staging / "package.json").write_text('{"private": true}\n')
    proc = subprocess.run([npm, "install", "--no-audit", "--no-fund", "--loglevel=error", f"{package}@{version}"],
                          cwd=staging, capture_output=True, text=True, timeout=INSTALL_TIMEOUT, check=False)
    if proc.returncode != 0:
        shutil.rmtree(staging, ignore_errors=True)
        text = proc.stdout + proc.stderr
        if any(word.lower() in text.lower() for word in NETWORK_ERRORS):
            first = next((line for line in text.splitlines() if line.strip()), "")
            pytest.skip(f"npm could not reach the registry to install {package}@{version}: {first[:160]}")
        pytest.fail(f"npm install {package}@{version} failed:\n{text[-3000:]}")
    try:
        staging.rename(folder)
    except OSError:  # another run installed it meanwhile
        shutil.rmtree(staging, ignore_errors=True)
    return str(binary)


class Agent:
    """One agent in one temporary HOME, talking to `fake`, its hooks going to `learn`."""

    name = ""
    settings: tuple[str, ...] = ()
    default_settings: ClassVar[dict] = {}

    def __init__(self, learn, fake, tool_path: str):
        self.learn, self.fake, self.path = learn, fake, tool_path
        self.exe = installed_bin(self.name)
        self.home = Path(learn.env["HOME"])
        self.last: subprocess.CompletedProcess | None = None

    @property
    def settings_file(self) -> Path:
        return self.home.joinpath(*self.settings)

    def write_user_settings(self) -> bytes:
        """The settings a user had before installing `learn` (kept to compare after uninstall)."""
        self.settings_file.parent.mkdir(parents=True, exist_ok=True)
        data = (json.dumps(self.default_settings, indent=2) + "\n").encode()
        self.settings_file.write_bytes(data)
        return data

    def env(self) -> dict:
        keep = {
            k: v for k, v in self.learn.env.items() if k in ("SELF_LEARNING_HOME", "HOME", "LANG", "LC_ALL", "TMPDIR")
        }
        return dict(keep, PATH=self.path, NO_COLOR="1", TERM="dumb", CI="1")

    def command(self, prompt: str) -> list[str]:
        raise NotImplementedError

    def run(self, prompt: str, cwd: Path, script: list) -> subprocess.CompletedProcess:
        """One headless session playing `script`; fails the test when the agent errs.

        A hook that `learn` itself cut short at its deadline (a machine too busy to start a
        process in time: `capture_errors` in the store's stats) is not a behaviour to judge;
        the session is played once more, then judged whatever happens."""
        for attempt in (1, 2):
            cut_before = self.capture_errors()
            self.fake.reset(script)
            proc = subprocess.run(self.command(prompt), cwd=str(cwd), env=self.env(), capture_output=True, text=True,
                                  timeout=RUN_TIMEOUT, stdin=subprocess.DEVNULL, check=False)
            self.last = proc
            assert proc.returncode == 0, (
                f"{self.name} exited {proc.returncode}:\n{proc.stdout[-2000:]}\n{proc.stderr[-3000:]}"
            )
            assert self.fake.agent_requests(), f"{self.name} never asked the model:\n{proc.stderr[-3000:]}"
            if self.capture_errors() == cut_before:
                break
            print(f"{self.name}: a hook of session {prompt!r} hit its deadline (attempt {attempt})")
        return proc

    def capture_errors(self) -> int:
        from learn_cli.store import analytics

        stats = analytics.read(Path(self.learn.home) / "analytics" / "stats.json")  # with the notes still pending
        return int(stats.get("totals", {}).get("capture_errors", 0))

    def transcripts(self) -> Path:
        """Where the agent keeps its session logs (for `learn ingest`)."""
        raise NotImplementedError


class ClaudeCode(Agent):
    name = "claude-code"
    settings = (".claude", "settings.json")
    default_settings: ClassVar[dict] = {"permissions": {"allow": ["Bash(ls:*)"]},
                        "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "true"}]}]}}

    def env(self) -> dict:
        env = dict(super().env(), ANTHROPIC_BASE_URL=self.fake.url, ANTHROPIC_API_KEY="sk-ant-fake",
                   CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1", DISABLE_AUTOUPDATER="1")
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            env["IS_SANDBOX"] = "1"  # as root, --dangerously-skip-permissions needs it
        return env

    def command(self, prompt: str) -> list[str]:
        return [self.exe, "-p", prompt, "--output-format", "stream-json", "--verbose", "--dangerously-skip-permissions"]

    def transcripts(self) -> Path:
        return self.home / ".claude" / "projects"


class Codex(Agent):
    name = "codex"
    settings = (".codex", "hooks.json")
    default_settings: ClassVar[dict] = {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "true"}]}]}}

    def write_user_settings(self) -> bytes:
        config = self.home / ".codex" / "config.toml"
        config.parent.mkdir(parents=True, exist_ok=True)
        # allow_login_shell = false: `bash -lc` would reset PATH from /etc/profile (python3 without pytest)
        config.write_text('model = "gpt-5.1-codex"\nmodel_provider = "fake"\nallow_login_shell = false\n'
                          'check_for_update_on_startup = false\n\n[model_providers.fake]\nname = "fake"\n'
                          f'base_url = "{self.fake.url}/v1"\nwire_api = "responses"\nenv_key = "FAKE_MODEL_KEY"\n')
        return super().write_user_settings()

    def env(self) -> dict:
        return dict(super().env(), FAKE_MODEL_KEY="fake")

    def command(self, prompt: str) -> list[str]:
        # Without --dangerously-bypass-hook-trust `codex exec` runs no untrusted hook, silently.
        return [self.exe, "exec", "--json", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox",
                "--dangerously-bypass-hook-trust", prompt]

    def transcripts(self) -> Path:
        return self.home / ".codex" / "sessions"


class Gemini(Agent):
    name = "gemini"
    settings = (".gemini", "settings.json")
    # No update check and no usage statistics: nothing but the fake model to reach (CI has no network).
    default_settings: ClassVar[dict] = {"security": {"auth": {"selectedType": "gemini-api-key"}},
                                        "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
                                        "privacy": {"usageStatisticsEnabled": False}, "ui": {"theme": "Default"}}

    def env(self) -> dict:
        return dict(super().env(), GEMINI_API_KEY="fake", GOOGLE_GEMINI_BASE_URL=self.fake.url)

    def command(self, prompt: str) -> list[str]:
        return [self.exe, "-p", prompt, "--output-format", "stream-json", "--yolo", "--skip-trust"]

    def transcripts(self) -> Path:
        return self.home / ".gemini" / "tmp"


AGENT_CLASSES = {cls.name: cls for cls in (ClaudeCode, Codex, Gemini)}


def tool_path(tmp: Path) -> str:
    """PATH for the agent: `python3` is this test run's interpreter (it has pytest as a module),
    node for the agents, the system's tools; never a `pytest` executable (the scenario needs
    `pytest -q` to fail as "command not found")."""
    bin_dir = tmp / "bin"
    bin_dir.mkdir(exist_ok=True)
    wrapper = bin_dir / "python3"
    wrapper.write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    wrapper.chmod(0o755)
    node = os.path.dirname(shutil.which("node") or "/usr/bin/node")
    dirs = [str(bin_dir), node, "/usr/local/bin", "/usr/bin", "/bin"]
    path = os.pathsep.join(dict.fromkeys(dirs))
    if shutil.which("pytest", path=path):
        pytest.skip(f"a `pytest` executable is on the system PATH ({shutil.which('pytest', path=path)}): "
                    "the scenario needs `pytest -q` to fail")
    return path


def git_project(root: Path) -> Path:
    """A small git repository whose tests pass with `python3 -m pytest -q`."""
    root.mkdir(parents=True, exist_ok=True)
    (root / ".git").mkdir(exist_ok=True)
    (root / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (root / ".git" / "config").write_text("[core]\n\trepositoryformatversion = 0\n\tbare = false\n")
    for sub in ("objects", "refs/heads"):
        (root / ".git" / sub).mkdir(parents=True, exist_ok=True)
    (root / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    (root / "test_calc.py").write_text("from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n")
    return root


def count(text: str, needle: str) -> int:
    return len(re.findall(re.escape(needle), text))
