"""The entry point's fast paths: answers that need neither typer nor rich (issue 14: importing
them is ~100 ms of CPU, more than ten times the interpreter's start)."""

from __future__ import annotations

import subprocess
import sys

from learn_cli import __version__


def test_version_is_printed_without_importing_typer_or_rich():
    probe = ("import sys; from learn_cli.__main__ import main; code = main(['--version']); "
             "print(code, 'typer' in sys.modules, 'rich' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert out.splitlines() == [f"learn {__version__}", "0 False False"]


def test_version_after_a_global_option_still_answers(tmp_path, capsys):
    from learn_cli.__main__ import main

    assert main(["--home", str(tmp_path), "--version"]) == 0
    assert capsys.readouterr().out.strip() == f"learn {__version__}"
