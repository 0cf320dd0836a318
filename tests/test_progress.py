"""Long commands say they are working, on a terminal only: import and export show a spinner
with the time spent (and the bytes written) once they last a moment; piped, `--json` or `-q`
they print no progress at all."""

from __future__ import annotations

import re

from conftest import run_with_terminal


def stderr_on_a_terminal(learn, *args, env=None) -> tuple[str, str]:
    """(what went to the terminal on stderr, stdout) of `learn ARGS`."""
    shown, out, code = run_with_terminal([learn.exe, *args], {**learn.env, "LEARN_PROGRESS_AFTER": "0", **(env or {})},
                                         cwd=learn.cwd, stream="stderr")
    assert code == 0, out
    return shown, out


def test_import_and_export_show_progress_on_a_terminal_only(learn):
    for i in range(5):
        learn("add", f"lesson {i}: run make first", "--fix", "make", check=0)
    export = learn.tmp / "team.json"
    shown, out = stderr_on_a_terminal(learn, "export", "-o", export)
    # the bytes written so far, in whatever unit they have reached when the spinner draws
    assert "Exporting to team.json" in shown and re.search(r" \d+(?:\.\d+)? (?:B|KB|MB) ", shown)
    assert "Exported to" in out
    shown, out = stderr_on_a_terminal(learn, "import", export)
    assert "Importing team.json" in shown
    for quiet in (("import", export, "-q"), ("export", "-o", export, "-q")):
        shown, out = stderr_on_a_terminal(learn, *quiet)
        assert (shown, out) == ("", "")
    shown, out = stderr_on_a_terminal(learn, "import", export, "--json")
    assert "Importing" not in shown and out.startswith("{")
    piped = learn("import", export, env={"LEARN_PROGRESS_AFTER": "0"}, check=0)
    assert piped.stderr == "" and "Importing team.json" not in piped.stdout


def test_quick_work_stays_silent(learn):
    learn("add", "lesson: run make first", check=0)
    shown, _out = stderr_on_a_terminal(learn, "export", "-o", learn.tmp / "e.json", env={"LEARN_PROGRESS_AFTER": "30"})
    assert "Exporting to" not in shown
