"""The one list of commands (learn_cli.commands.COMMANDS): a typo in it stops `learn` loudly,
every command module is in it, `learn` registers exactly its commands, and the README and the
man page follow its order.
In process: no CLI call."""

from __future__ import annotations

import pathlib

import pytest
import typer

from learn_cli import cli
from learn_cli.commands import COMMANDS, HELPERS
from learn_cli.help import build

ROOT = pathlib.Path(__file__).resolve().parents[1]


def test_a_typo_in_the_registry_fails_loudly():
    with pytest.raises(cli.RegistryError, match="no module learn_cli/commands/recal.py"):
        cli.register(typer.Typer(), [("recall", "recal", "Search.")])
    with pytest.raises(cli.RegistryError, match="defines neither"):
        cli.register(typer.Typer(), [("common", "_common", "Not a command.")])


def test_every_command_module_is_listed_once():
    modules = {p.stem for p in (ROOT / "learn_cli" / "commands").glob("*.py")} - {"__init__"}
    listed = [module for _name, module, _help in COMMANDS]
    assert len(listed) == len(set(listed))
    assert modules == set(listed) | set(HELPERS)


def test_help_readme_and_man_page_follow_the_list():
    names = [name for name, _module, _help in COMMANDS]
    assert set(build(cli.app).commands) == set(names)
    readme = (ROOT / "README.md").read_text()
    assert [n for n in names if f"[`learn {n}`]" in readme] == names
    assert sorted(names, key=lambda n: readme.index(f"[`learn {n}`]")) == names
    man = (ROOT / "man" / "learn.1").read_text()
    shown = [line.split()[2] for line in man.splitlines() if line.startswith(".SS learn ")]
    assert list(dict.fromkeys(shown)) == names
