"""The README a newcomer reads: generated (make readme), short, its first screen enough to
start, and every link and command in it real."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()


def test_readme_is_what_the_generator_writes():
    proc = subprocess.run([sys.executable, str(ROOT / "tools" / "build_readme.py"), "--check"],
                          capture_output=True, text=True, check=False, timeout=60)
    assert proc.returncode == 0, proc.stderr


def test_the_first_screen_says_what_how_and_connect():
    first_screen = "\n".join(README.splitlines()[:45])
    for needed in ("make demo", "make test", "PREFIX", "make uninstall", "learn hooks install"):
        assert needed in first_screen, needed
    assert len(README.splitlines()) < 150
    assert "## A day with it" in README


def test_links_and_make_targets_exist():
    for target in re.findall(r"\]\(([^)#]+)\)", README):
        assert (ROOT / target).exists(), target
    makefile = (ROOT / "Makefile").read_text()
    for target in re.findall(r"`make (\w+)", README):
        assert re.search(rf"^{target}:", makefile, re.M), target


def test_the_day_is_what_make_demo_records():
    """The recorded session's lines come from the tour `make demo` runs (tools/demo.sh)."""
    import json

    from conftest import learn_executable

    proc = subprocess.run(["bash", str(ROOT / "tools" / "demo.sh"), learn_executable()], capture_output=True,
                          text=True, check=False, timeout=120)
    assert proc.returncode == 0, proc.stderr
    answers = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith('{"hookSpecificOutput"')]
    day = README.split("## A day with it")[1].split("## ")[0]
    assert len(answers) == 2  # the next session in web-api, then ml-pipeline
    for hook in answers:
        said = hook["hookSpecificOutput"]["additionalContext"].splitlines()[0]
        assert said in day.splitlines()
    for line in ('    "`pytest tests` fails (dependency): use `python -m pytest tests` instead."',
                 "    Error: bash: pytest: command not found", "    Same fix: 1 more learning (ml-pipeline)",
                 "- `pytest tests` fails (dependency): use `python -m pytest tests` instead."):
        assert line in proc.stdout and line in day
