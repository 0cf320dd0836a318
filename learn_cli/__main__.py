"""Entry point. Hook calls (`learn capture`, `learn context --hook`) take a fast path that
never imports typer or rich: they run on every tool call of the agent."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args[:1] == ["capture"]:
        from learn_cli.capture.hook import main as capture_main

        return capture_main(args[1:])
    if args[:1] == ["context"] and "--hook" in args and "--help" not in args:
        from learn_cli.capture.hook import context_main

        return context_main(args[1:])
    from learn_cli.cli import run

    return run(args)


if __name__ == "__main__":
    sys.exit(main())
