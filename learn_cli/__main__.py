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
            _quiet_collector(argv)
            from learn_cli.capture import hook

            hook.HARD_EXIT = argv is None  # the `learn` process itself: its hard stop ends it
            return _hook_end(hook.main(globals_ + rest[1:]), argv)
        if rest[:1] == ["context"] and "--hook" in rest:
            _quiet_collector(argv)
            from learn_cli.capture import hook

            hook.HARD_EXIT = argv is None
            return _hook_end(hook.context_main(globals_ + rest[1:]), argv)
        if rest[:1] == ["recall"]:
            _quiet_collector(argv)
            from learn_cli.commands.recall_fast import main as recall_main

            code = recall_main(globals_, rest[1:])
            if code is not None:
                return _fast_end(code, argv)
        if rest[:1] in (["stats"], ["show"], ["graph"]):
            _quiet_collector(argv)
            from learn_cli.commands.read_fast import main as read_main

            code = read_main(rest[0], globals_, rest[1:])
            if code is not None:
                return _fast_end(code, argv)
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


def _quiet_collector(argv: list[str] | None) -> None:
    """The `learn` process itself (a hook, or a fast read path: recall, stats, show, graph) runs
    without the cyclic garbage collector, as commands do (cli.run): its imports alone allocate
    enough objects for a few full collections (~6 M instructions of a failure's ~127 M, ~7 M of
    a piped recall's ~103 M), and the process ends within a second, freeing everything. A call
    in process (tests, `argv` given) leaves it as it was."""
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
    return _end_now(code, argv, closed_pipe_ends=True)


def _fast_end(code: int, argv: list[str] | None) -> int:
    """A fast read path's own process (recall, stats, show, graph) ends as a hook's does: its
    work has closed the store and written the regex cache by then, and finalisation is ~12 M
    instructions of a piped recall's ~103 M. Unless its output cannot be flushed (a closed
    pipe, `learn recall x | head -1`): then the interpreter ends as it always did, and says so
    as it always did."""
    return _end_now(code, argv, closed_pipe_ends=False)


def _end_now(code: int, argv: list[str] | None, closed_pipe_ends: bool) -> int:
    """os._exit(code) once stdout and stderr are flushed; the code returned in process (`argv`
    given), or when a stream cannot be flushed and `closed_pipe_ends` is false."""
    if argv is not None:
        return code
    import os

    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):
            if not closed_pipe_ends:
                return code
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
