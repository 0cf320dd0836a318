"""`learn completion bash|zsh|fish`: print the shell's completion script (as `gh completion`).

Install it once, e.g. `learn completion bash > ~/.local/share/bash-completion/completions/learn`
(`make install` does it for bash, zsh and fish under PREFIX); see `learn help completion`."""

from __future__ import annotations

import typer

from learn_cli.commands._common import EXIT_USAGE, fail
from learn_cli.help import SHELLS, completion_script


def command(
    shell: str = typer.Argument(..., metavar="SHELL", help="bash, zsh or fish.", show_default=False),
) -> None:
    if shell not in SHELLS:
        fail(f"no completion for {shell!r}: choose one of {', '.join(SHELLS)}", EXIT_USAGE)
    print(completion_script(shell))
