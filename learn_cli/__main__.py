"""Entry point. Hook calls (`learn capture`, `learn context --hook`) take a fast path that
never imports typer or rich: they run on every tool call of the agent. So does `learn recall`
when piped or with `--json` (agents and scripts call it), and so do `stats`, `show` and
`graph` (commands/read_fast.py), unless typer must parse them."""

from __future__ import annotations

import sys

GLOBAL_VALUE_OPTIONS = ("--home", "--project")


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    globals_, rest = split_global_options(args)
    if rest == ["--version"]:  # typer and rich cost ~100 ms to import: not for one line
        from learn_cli import __version__

        print(f"learn {__version__}")
        return 0
    if rest in (["--help"], ["-h"]) and not globals_ and sys.stdout is not None:
        from learn_cli.help import packaged_top_help

        text = packaged_top_help()
        if text:
            return _print_help(text)
    if "--help" not in rest and "-h" not in rest:
        if rest[:1] == ["capture"]:
            _hook_process(argv)
            from learn_cli.capture import hook

            hook.HARD_EXIT = argv is None  # the `learn` process itself: its hard stop ends it
            return _hook_end(hook.main(globals_ + rest[1:]), argv)
        if rest[:1] == ["context"] and "--hook" in rest:
            _hook_process(argv)
            from learn_cli.capture import hook

            hook.HARD_EXIT = argv is None
            return _hook_end(hook.context_main(globals_ + rest[1:]), argv)
        if rest[:1] == ["recall"]:
            from learn_cli.commands.recall_fast import main as recall_main

            code = recall_main(globals_, rest[1:])
            if code is not None:
                return code
        if rest[:1] in (["stats"], ["show"], ["graph"]):
            from learn_cli.commands.read_fast import main as read_main

            code = read_main(rest[0], globals_, rest[1:])
            if code is not None:
                return code
    from learn_cli.cli import run

    return run(args)


def _print_help(text: str) -> int:
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:  # `learn --help | head -3`
        from learn_cli.commands._common import quiet_broken_pipe

        quiet_broken_pipe()
    return 0


def _hook_process(argv: list[str] | None) -> None:
    """A hook's own process (not a test's, which passes `argv`) runs without the cyclic garbage
    collector, as commands do (cli.run): its imports alone allocate enough objects for a few
    full collections, ~6 M instructions of a failure's ~127 M (0.16x a bare interpreter), and
    the process ends within seconds, freeing everything."""
    if argv is None:
        import gc

        gc.disable()


def _hook_end(code: int, argv: list[str] | None) -> int:
    """A hook's own process ends here, its answer written, with os._exit: the interpreter's
    finalisation (three full collections of the garbage collector over every object the
    imports made, then each module torn down) is ~12 M instructions of a failure's ~95 M,
    0.3x a bare interpreter, for memory the system frees anyway. Nothing is left to do by
    then: files and the index are closed by the work itself (the store survives a kill -9
    anywhere, and the hard stop ends a process the same way), nothing registers `atexit`,
    and the streams are flushed here (a closed pipe is the agent's business: the hook
    still exits 0). In process (tests, `argv` given) it returns the code."""
    if argv is not None:
        return code
    import os

    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)


def split_global_options(args: list[str]) -> tuple[list[str], list[str]]:
    """Leading `--home X` / `--project X` (or `--home=X`), and what follows them."""
    i = 0
    while i < len(args):
        arg = args[i]
        if arg in GLOBAL_VALUE_OPTIONS and i + 1 < len(args):
            i += 2
        elif arg.split("=", 1)[0] in GLOBAL_VALUE_OPTIONS and "=" in arg:
            i += 1
        else:
            break
    return args[:i], args[i:]


if __name__ == "__main__":
    sys.exit(main())
